//! The commands a project's task files run, each with its `file:line`:
//! a `Makefile`/`justfile` target's recipe, a tox environment's
//! `commands`, a nox session's `session.run(...)` calls, the commands of a
//! test script of the repository (`script/test`).

use std::path::Path;

use crate::run::shell;
use crate::run::shell_line::{self, Word};

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap_or_default()
}

/// Simple `VAR = value` assignments of a Makefile (`=`, `:=`, `?=`, `::=`).
fn make_vars(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('\t'))
        .filter_map(|l| {
            let (k, v) = l.split_once('=')?;
            let k = k.trim_end_matches([':', '?', '+', ' ']).trim();
            (!k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                .then(|| (k.to_string(), v.trim().to_string()))
        })
        .collect()
}

/// The commands of the repository's script `rel` (a regular file inside
/// `root`, at most 64 KiB of text), as `(file:line, words)`; `None` when
/// there is no such file or it is not shell text.
pub fn script_lines(root: &Path, rel: &str) -> Option<Vec<(String, Vec<Word>)>> {
    let path = root.join(rel);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > 64 * 1024 {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let commands = shell_line::commands(&text)?;
    Some(
        commands
            .into_iter()
            .filter(|c| !goes_to_the_repo_root(&c.words))
            .map(|c| (format!("{rel}:{}", c.line + 1), c.words))
            .collect(),
    )
}

/// `cd "$(dirname "$0")/.."`, `cd "$(git rev-parse --show-toplevel)"`: a
/// script going to the repository's root, where unguard runs it anyway.
fn goes_to_the_repo_root(words: &[Word]) -> bool {
    words.first().is_some_and(|w| w.value == "cd")
        && words.get(1).is_some_and(|w| {
            ["$0", "BASH_SOURCE", "dirname", "rev-parse"]
                .iter()
                .any(|k| w.value.contains(k))
        })
}

/// The recipe lines of `target` in the repo's Makefile or justfile, as
/// `(file:line, words)`, with simple variables expanded.
pub fn recipe(root: &Path, tool: &str, target: &str) -> Option<Vec<(String, Vec<Word>)>> {
    let names: &[&str] = if tool == "just" {
        &["justfile", "Justfile"]
    } else {
        &["GNUmakefile", "makefile", "Makefile"]
    };
    let file = names.iter().find(|n| root.join(n).is_file())?;
    let text = read(root, file);
    let lines: Vec<&str> = text.lines().collect();
    let vars = make_vars(&text);
    let head = lines.iter().position(|l| {
        let Some((name, rest)) = l.split_once(':') else {
            return false;
        };
        // `test:` / `test *ARGS:` (just) / `test: deps`, never `X := y`.
        !rest.starts_with('=')
            && !l.starts_with([' ', '\t', '#', '.'])
            && name.split_whitespace().next() == Some(target)
    })?;
    let mut out = Vec::new();
    for (k, l) in lines.iter().enumerate().skip(head + 1) {
        if l.trim().is_empty() {
            continue;
        }
        if !l.starts_with(['\t', ' ']) {
            break;
        }
        let mut s = l.trim().trim_start_matches(['@', '-', '+']).to_string();
        if tool == "make" {
            s = s.replace("$$", "\u{0}");
            for (name, value) in &vars {
                s = s
                    .replace(&format!("$({name})"), value)
                    .replace(&format!("${{{name}}}"), value);
            }
            s = s.replace("$(MAKE)", "make").replace('\u{0}', "$");
            if s.contains("$(") {
                continue;
            }
        } else if s.contains("{{") {
            continue;
        }
        for simple in shell_line::commands(&s).unwrap_or_default() {
            out.push((format!("{file}:{}", k + 1), simple.words));
        }
    }
    Some(out)
}

/// An INI file's `[section]` → `key` value (continuation lines joined with
/// newlines) and the line it starts on.
fn ini_value(text: &str, section: &str, key: &str) -> Option<(String, usize)> {
    let mut in_section = false;
    let mut value: Option<(String, usize)> = None;
    for (k, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.starts_with('[') {
            if value.is_some() {
                break;
            }
            in_section = t == format!("[{section}]");
            continue;
        }
        if !in_section {
            continue;
        }
        if let Some((v, _)) = &mut value {
            if l.starts_with([' ', '\t']) || t.is_empty() {
                v.push('\n');
                v.push_str(t);
                continue;
            }
            break;
        }
        if let Some((name, v)) = t.split_once('=') {
            if name.trim() == key {
                value = Some((v.trim().to_string(), k + 1));
            }
        }
    }
    value
}

/// Whether the repo configures tox: `tox.ini`, `tox.toml`, or
/// pyproject.toml's `[tool.tox]` (native or `legacy_tox_ini`).
pub fn has_tox(root: &Path) -> bool {
    root.join("tox.ini").is_file()
        || root.join("tox.toml").is_file()
        || pyproject_tox(root).is_some()
}

/// The item at `path` under `item`, if there is one (indexing a TOML item
/// panics on a missing key).
fn toml_at<'a>(item: &'a toml_edit::Item, path: &[&str]) -> Option<&'a toml_edit::Item> {
    path.iter().try_fold(item, |i, k| i.get(k))
}

/// pyproject.toml and its `[tool.tox]` table, when it has one.
fn pyproject_tox(root: &Path) -> Option<toml_edit::Document<String>> {
    let doc = toml_edit::Document::parse(read(root, "pyproject.toml")).ok()?;
    toml_at(doc.as_item(), &["tool", "tox"])
        .is_some_and(|t| t.is_table())
        .then_some(doc)
}

/// The tox environment to read: `env` as called (its first when a list),
/// else the first of the default list, else `py`.
fn tox_env(env: Option<&str>, default: Option<String>) -> String {
    match env {
        Some(e) => e.split(',').next().unwrap_or(e).trim().to_string(),
        None => default.unwrap_or_else(|| "py".into()),
    }
}

/// A tox command line with tox's substitutions resolved (`{posargs}` to
/// its default), `None` when one is left that unguard cannot resolve.
fn tox_line(line: &str) -> Option<String> {
    let mut s = line.to_string();
    while let Some(start) = s.find("{posargs") {
        let end = s[start..].find('}')? + start;
        let default = s[start + "{posargs".len()..end]
            .strip_prefix(':')
            .unwrap_or("")
            .to_string();
        s.replace_range(start..=end, &default);
    }
    let s = s
        .replace("{toxinidir}", ".")
        .replace("{tox_root}", ".")
        .replace("{envpython}", "python")
        .replace("{env_python}", "python")
        .replace("{envbindir}/", "")
        .replace("{env_bin_dir}/", "");
    (!s.contains('{')).then_some(s)
}

/// The commands of tox environment `env` (else the first of `envlist`),
/// with tox's substitutions resolved: from `tox.ini`, else `tox.toml`,
/// else pyproject.toml's `[tool.tox]` (tox 4's native TOML, or the INI
/// text of its `legacy_tox_ini`).
pub fn tox_commands(root: &Path, env: Option<&str>) -> Option<Vec<(String, Vec<Word>)>> {
    if root.join("tox.ini").is_file() {
        return Some(ini_tox(&read(root, "tox.ini"), "tox.ini", 0, env));
    }
    if root.join("tox.toml").is_file() {
        let text = read(root, "tox.toml");
        let doc = toml_edit::Document::parse(text.clone()).ok()?;
        return toml_tox(&text, "tox.toml", doc.as_item(), env);
    }
    let doc = pyproject_tox(root)?;
    let tox = toml_at(doc.as_item(), &["tool", "tox"])?;
    let text = doc.raw();
    if let Some(ini) = toml_at(tox, &["legacy_tox_ini"]).and_then(|i| i.as_str()) {
        // The INI text starts on the line after `legacy_tox_ini = """`.
        let offset = text
            .lines()
            .position(|l| l.trim_start().starts_with("legacy_tox_ini"))
            .map_or(0, |k| k + 1);
        return Some(ini_tox(ini, "pyproject.toml", offset, env));
    }
    toml_tox(text, "pyproject.toml", tox, env)
}

/// tox's INI configuration `text` (of `file`, its first line at `offset`).
fn ini_tox(text: &str, file: &str, offset: usize, env: Option<&str>) -> Vec<(String, Vec<Word>)> {
    let default = ini_value(text, "tox", "envlist")
        .or_else(|| ini_value(text, "tox", "env_list"))
        .and_then(|(v, _)| {
            v.split([',', '\n'])
                .map(str::trim)
                .find(|e| !e.is_empty() && !e.contains('{'))
                .map(str::to_string)
        });
    let env = tox_env(env, default);
    let Some((value, line)) = ini_value(text, &format!("testenv:{env}"), "commands")
        .or_else(|| ini_value(text, "testenv", "commands"))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, l) in value.lines().enumerate() {
        let Some(s) = tox_line(l) else { continue };
        for simple in shell_line::commands(&s).unwrap_or_default() {
            out.push((format!("{file}:{}", offset + line + k), simple.words));
        }
    }
    out
}

/// tox 4's native TOML configuration `tox` (the root of `tox.toml`, or
/// pyproject.toml's `[tool.tox]`): `env_list`, and the `commands` of
/// `env.<name>` or else of `env_run_base`, each command a list of words
/// (a `{ replace = "posargs", default = […] }` table gives its default).
fn toml_tox(
    text: &str,
    file: &str,
    tox: &toml_edit::Item,
    env: Option<&str>,
) -> Option<Vec<(String, Vec<Word>)>> {
    let default = toml_at(tox, &["env_list"])
        .and_then(|a| a.as_array())
        .and_then(|a| {
            a.iter()
                .filter_map(|v| v.as_str())
                .find(|e| !e.contains('{'))
                .map(str::to_string)
        });
    let env = tox_env(env, default);
    let commands = [
        toml_at(tox, &["env", env.as_str(), "commands"]),
        toml_at(tox, &["env_run_base", "commands"]),
    ]
    .into_iter()
    .flatten()
    .find_map(|c| c.as_array())?;
    let line_at = |span: Option<std::ops::Range<usize>>| {
        span.and_then(|r| text.get(..r.start))
            .map_or(1, |before| before.matches('\n').count() + 1)
    };
    let mut out = Vec::new();
    for command in commands.iter() {
        let Some(parts) = command.as_array() else {
            continue;
        };
        let mut words: Vec<String> = Vec::new();
        let mut known = true;
        for part in parts.iter() {
            if let Some(w) = part.as_str() {
                words.push(w.to_string());
            } else if let Some(t) = part.as_inline_table() {
                if t.get("replace").and_then(|r| r.as_str()) != Some("posargs") {
                    known = false;
                    break;
                }
                let default = t.get("default").and_then(|d| d.as_array());
                words.extend(
                    default
                        .into_iter()
                        .flatten()
                        .filter_map(|d| d.as_str().map(str::to_string)),
                );
            } else {
                known = false;
                break;
            }
        }
        let words: Option<Vec<Word>> = words
            .iter()
            .map(|w| {
                tox_line(w).map(|v| Word {
                    raw: shell::quote(&v),
                    value: v,
                })
            })
            .collect();
        if let (true, Some(words)) = (known, words) {
            if !words.is_empty() {
                // The line of the command's first word.
                let span = parts.get(0).and_then(|p| p.span()).or(command.span());
                out.push((format!("{file}:{}", line_at(span)), words));
            }
        }
    }
    Some(out)
}

/// The `session.run(...)` calls (string arguments only) of nox session
/// `session` (else the first of `nox.options.sessions`, else the first).
pub fn nox_commands(root: &Path, session: Option<&str>) -> Option<Vec<(String, Vec<Word>)>> {
    let text = read(root, "noxfile.py");
    let lines: Vec<&str> = text.lines().collect();
    let default = lines.iter().find_map(|l| {
        let rest = l.trim().strip_prefix("nox.options.sessions")?;
        let q = rest.find(['"', '\''])?;
        let quote = rest[q..].chars().next()?;
        let name = rest[q + 1..].split(quote).next()?;
        Some(name.to_string())
    });
    let wanted = session.map(str::to_string).or(default);
    // Every `def NAME(session…)` right under a `@nox.session` decorator.
    let mut sessions = Vec::new();
    for (k, l) in lines.iter().enumerate() {
        let Some(rest) = l.strip_prefix("def ") else {
            continue;
        };
        let decorated = lines[..k]
            .iter()
            .rev()
            .take_while(|p| p.starts_with('@') || p.starts_with(' ') || p.starts_with(')'))
            .any(|p| p.starts_with("@nox.session"));
        let name = rest.split('(').next().unwrap_or("").trim();
        if decorated {
            sessions.push((name.to_string(), k));
        }
    }
    let (_, def) = match &wanted {
        Some(w) => sessions.iter().find(|(n, _)| n == w)?,
        None => sessions.first()?,
    };
    let mut out = Vec::new();
    for (k, l) in lines.iter().enumerate().skip(def + 1) {
        if !l.trim().is_empty() && !l.starts_with([' ', '\t']) {
            break;
        }
        let Some(start) = l.find("session.run(") else {
            continue;
        };
        let args = &l[start + "session.run(".len()..];
        let mut words = Vec::new();
        for a in args.split(',') {
            let a = a.trim().trim_end_matches(')').trim();
            let Some(q) = a.chars().next().filter(|c| *c == '"' || *c == '\'') else {
                continue;
            };
            let Some(v) = a.strip_prefix(q).and_then(|a| a.strip_suffix(q)) else {
                continue;
            };
            words.push(Word {
                raw: shell::quote(v),
                value: v.to_string(),
            });
        }
        if !words.is_empty() {
            out.push((format!("noxfile.py:{}", k + 1), words));
        }
    }
    Some(out)
}
