//! Shell words of a test command, as the runners edit them: the words of
//! a command whose words can be edited safely, a command made of words,
//! arguments added at the end, placeholders expanded, and the exact-name
//! regular expressions JavaScript runners select tests by.

use std::path::Path;

use crate::run::shell::quote;
use crate::spec::Command;

/// The words of `command` and whether it is a shell string; `None` for a
/// shell string with operators, quoting or expansions (`&&`, `;`, `|`,
/// redirections, `$`, quotes), whose words an adapter cannot safely edit.
pub(crate) fn plain_words(command: &Command) -> Option<(Vec<String>, bool)> {
    match command {
        Command::Argv(v) => Some((v.clone(), false)),
        Command::Shell(s) => {
            if s.contains(['&', ';', '|', '<', '>', '`', '$', '(', '\'', '"', '\\']) {
                return None;
            }
            Some((s.split_whitespace().map(str::to_string).collect(), true))
        }
    }
}

/// Whether a config file of a JavaScript runner run in `dir` with the
/// words `rest` sets `reporters`: one of the `defaults` (file names in
/// `dir`), or the file its `--config`/`-c` names. A reporter on the command
/// line replaces the config's, so unguard adds none there.
pub(crate) fn configs_set_reporters(dir: &Path, defaults: &[String], rest: &[String]) -> bool {
    let mut files: Vec<std::path::PathBuf> = defaults.iter().map(|f| dir.join(f)).collect();
    for (k, w) in rest.iter().enumerate() {
        if w == "--config" || w == "-c" {
            files.extend(rest.get(k + 1).map(|f| dir.join(f)));
        } else if let Some(f) = w.strip_prefix("--config=") {
            files.push(dir.join(f));
        }
    }
    files
        .iter()
        .any(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("reporters")))
}

/// `argv` as a command: an argv list, or (`shell`) its words joined, each
/// shell-quoted as needed.
pub(crate) fn words_to_command(argv: Vec<String>, shell: bool) -> Command {
    if shell {
        Command::Shell(
            argv.iter()
                .map(|w| {
                    if w.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_./=:{}@%+,".contains(c))
                    {
                        w.clone()
                    } else {
                        quote(w)
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
        )
    } else {
        Command::Argv(argv)
    }
}

/// `command` with `extra` arguments at its end (shell-quoted in a shell string).
pub(crate) fn append(command: &Command, extra: Vec<String>) -> Command {
    match command {
        Command::Shell(s) => {
            let words: Vec<String> = extra.iter().map(|w| quote(w)).collect();
            Command::Shell(format!("{s} {}", words.join(" ")))
        }
        Command::Argv(v) => {
            let mut argv = v.clone();
            argv.extend(extra);
            Command::Argv(argv)
        }
    }
}

/// Whether `template` has the placeholder `key` (an argument of its own
/// in an argv list).
pub(crate) fn uses(template: &Command, key: &str) -> bool {
    match template {
        Command::Shell(s) => s.contains(key),
        Command::Argv(v) => v.iter().any(|a| a == key),
    }
}

/// `template` with `key` expanded to `values`: one shell-quoted word each
/// in a shell command, one argument each in an argv list.
pub(crate) fn expand(template: &Command, key: &str, values: &[String]) -> Command {
    match template {
        Command::Shell(s) => {
            let words: Vec<String> = values.iter().map(|i| quote(i)).collect();
            Command::Shell(s.replace(key, &words.join(" ")))
        }
        Command::Argv(v) => Command::Argv(
            v.iter()
                .flat_map(|a| {
                    if a == key {
                        values.to_vec()
                    } else {
                        vec![a.clone()]
                    }
                })
                .collect(),
        ),
    }
}

/// The test files (relative to `tree`, once each, in order) that hold the
/// tests `ids`: for `a.b.test_x.K::t`, the longest of `a/b/test_x/K.py`,
/// `a/b/test_x.py`, `a/b.py`, … that is a file. `None` when one has none.
pub(crate) fn files_of(ids: &[String], tree: &Path) -> Option<Vec<String>> {
    let mut files: Vec<String> = Vec::new();
    for id in ids {
        let (class, _) = id.split_once("::")?;
        let parts: Vec<&str> = class.split('.').collect();
        let file = (1..=parts.len())
            .rev()
            .map(|k| format!("{}.py", parts[..k].join("/")))
            .find(|f| tree.join(f).is_file())?;
        if !files.contains(&file) {
            files.push(file);
        }
    }
    Some(files)
}

/// The test's own name in a JUnit id (`classname::name` → `name`).
pub(crate) fn last_name(id: &str) -> &str {
    id.split_once("::").map_or(id, |(_, n)| n)
}

/// A JavaScript regular expression that matches exactly the `names`.
pub(crate) fn exact_regex(names: &[String]) -> String {
    let mut alts: Vec<String> = Vec::new();
    for n in names {
        let mut e = String::new();
        for c in n.chars() {
            if "\\^$.*+?()[]{}|/-".contains(c) {
                e.push('\\');
            }
            e.push(c);
        }
        if !alts.contains(&e) {
            alts.push(e);
        }
    }
    format!("^({})$", alts.join("|"))
}

/// Whether `args` (options, `valued` taking the next word) hold a word
/// that is no option: a test name filter.
pub(crate) fn has_filter(args: &[String], valued: &[&str]) -> bool {
    let mut it = args.iter();
    while let Some(w) = it.next() {
        if !w.starts_with('-') {
            return true;
        }
        if !w.contains('=') && valued.contains(&w.as_str()) {
            it.next();
        }
    }
    false
}
