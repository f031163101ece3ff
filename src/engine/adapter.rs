//! Runner adapters: how one test config runs a *subset* of its suite by
//! test id (kill-first, see [`super::kill_first`]). Ids are JUnit ids
//! (`classname::name`), as every report unguard reads names them; each
//! adapter turns them into what its runner selects by, and the subset run's
//! JUnit report (read as for the full suite) gives the per-test results.
//!
//! - pytest (the command names it, or the baseline's log shows pytest
//!   alone): the [`super::select`] plugin in its strict mode, whatever the
//!   command (`pytest`, `python -m pytest`, a wrapper script);
//! - `python -m unittest` / `python -m xmlrunner`: the command with its
//!   discovery arguments replaced by dotted ids (`pkg.mod.Class.test`);
//! - `go test -json` (its per-test events are what unguard reads): the
//!   command with `-run '^(TestA|TestB)$'` appended, the top-level test
//!   names of the ids (a subtest runs with its parent);
//! - `jest` with the `jest-junit` reporter: the command with
//!   `--testNamePattern` (the anchored, escaped full names, which
//!   jest-junit's default templates make both classname and name);
//! - `cargo test` (libtest's lines are what unguard reads): the targets
//!   that hold the ids (`--lib`, `--test it`, …), then `--`, the user's
//!   libtest options, `--exact` and the names;
//! - `test.select`: a template with `{tests}` (the JUnit ids) and/or
//!   `{files}` (the test files that hold them, found in the copy), for any
//!   other runner; the strict plugin is set up for it too, so a pytest
//!   behind a template given `{files}` runs just the selected tests of
//!   those files, and collects no other module.
//!
//! A config without one of these (or with `test.select: off`) runs the full
//! suite for every mutant.

use std::path::Path;

use crate::coverage::collector::Collector;
use crate::run::shell::quote;
use crate::spec::{Command, Select, TestConfig};

/// How a test config runs a subset of its tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Adapter {
    /// The suite's own command, with the strict select plugin.
    Pytest,
    /// `python -m unittest` (or xmlrunner): the command up to the module,
    /// the options kept, then the ids.
    Unittest { prefix: Vec<String>, shell: bool },
    /// `go test -json …`: the command, then `-run` with the top-level
    /// test names.
    GoTest { command: Command },
    /// `node --test` with a JUnit reporter: the command with
    /// `--test-name-pattern` inserted after `--test`.
    NodeTest {
        words: Vec<String>,
        at: usize,
        shell: bool,
    },
    /// `vitest run` with a JUnit reporter: the command with the test files
    /// and `-t` (the full names) appended.
    Vitest { command: Command },
    /// `jest` with `jest-junit`: the command with `--testNamePattern`
    /// (the full names) appended.
    Jest { command: Command },
    /// `cargo test`: target flags after `test`, then the libtest names
    /// after `--` (see [`CargoTest`]).
    CargoTest(CargoTest),
    /// `test.select`.
    Template(Command),
}

/// A `cargo test` command, split where a subset run edits it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CargoTest {
    /// The command's words, without `--` and what follows it.
    cargo: Vec<String>,
    /// The index of `test` in `cargo`.
    test_at: usize,
    /// The libtest options after `--` (the user's).
    libtest: Vec<String>,
    shell: bool,
    /// The command picks its targets itself (`--lib`, `--test x`, …):
    /// unguard adds none.
    targets_chosen: bool,
}

impl Adapter {
    /// The adapter of `cfg`; `pytest_seen`: its baseline's log shows that
    /// pytest (and no other runner) ran.
    pub fn for_config(cfg: &TestConfig, pytest_seen: bool) -> Option<Adapter> {
        match &cfg.select {
            Select::Off => None,
            Select::Template(t) => Some(Adapter::Template(t.clone())),
            Select::Auto if pytest_seen || names_pytest(&cfg.command) => Some(Adapter::Pytest),
            Select::Auto => unittest(&cfg.command)
                .or_else(|| go_test(&cfg.command))
                .or_else(|| node_test(&cfg.command))
                .or_else(|| vitest(&cfg.command))
                .or_else(|| jest(cfg))
                .or_else(|| cargo_test(&cfg.command)),
        }
    }

    /// The runner's name, for logs and messages.
    pub fn name(&self) -> &'static str {
        match self {
            Adapter::Pytest => "pytest",
            Adapter::Unittest { .. } => "unittest",
            Adapter::GoTest { .. } => "go test",
            Adapter::NodeTest { .. } => "node --test",
            Adapter::Vitest { .. } => "vitest",
            Adapter::Jest { .. } => "jest",
            Adapter::CargoTest(_) => "cargo test",
            Adapter::Template(_) => "test.select",
        }
    }

    /// The command that runs only `ids` in the copy at `tree` (`None`: the
    /// config's own command, with the plugin's environment; see
    /// [`Adapter::plugin`]). `None` too when the runner cannot select one of
    /// these ids (the plugin still selects them under pytest; another
    /// runner then runs whole, which the subset check sees).
    pub fn command(&self, ids: &[String], tree: &Path) -> Option<Command> {
        match self {
            Adapter::Pytest => None,
            Adapter::Template(t) => {
                let files = if uses(t, "{files}") {
                    files_of(ids, tree)?
                } else {
                    Vec::new()
                };
                Some(expand(&expand(t, "{tests}", ids), "{files}", &files))
            }
            Adapter::GoTest { command } => {
                let pattern = go_run_pattern(ids)?;
                Some(append(command, vec!["-run".to_string(), pattern]))
            }
            Adapter::NodeTest { words, at, shell } => {
                let names: Vec<String> = ids.iter().map(|i| last_name(i).to_string()).collect();
                let option = format!("--test-name-pattern={}", exact_regex(&names));
                let mut argv = words.clone();
                argv.insert(*at + 1, option);
                Some(words_to_command(argv, *shell))
            }
            // A subset never collects coverage: its thresholds would fail
            // every subset on the unmutated copy (see `pytest_cov_gate`).
            Adapter::Vitest { command } => {
                let (files, names) = vitest_filters(ids)?;
                let mut extra = files;
                extra.extend([
                    "-t".to_string(),
                    exact_regex(&names),
                    "--coverage.enabled=false".to_string(),
                ]);
                Some(append(command, extra))
            }
            Adapter::Jest { command } => {
                let names = jest_full_names(ids)?;
                let option = format!("--testNamePattern={}", exact_regex(&names));
                Some(append(command, vec![option, "--coverage=false".into()]))
            }
            Adapter::CargoTest(c) => c.command(ids, tree),
            Adapter::Unittest { prefix, shell } => {
                let dotted: Vec<String> = ids.iter().map(|i| dotted(i)).collect::<Option<_>>()?;
                let mut argv = prefix.clone();
                if *shell {
                    argv.extend(dotted.iter().map(|d| quote(d)));
                    Some(Command::Shell(argv.join(" ")))
                } else {
                    argv.extend(dotted);
                    Some(Command::Argv(argv))
                }
            }
        }
    }

    /// The collector of per-test coverage for this runner; `None` where
    /// none measures it, or where the coverage run's options cannot be
    /// added (a `go test` command with its own `-exec` or `-args`).
    pub fn collector(&self) -> Option<Collector> {
        match self {
            Adapter::Pytest => Some(Collector::Python),
            Adapter::NodeTest { .. } | Adapter::Vitest { .. } | Adapter::Jest { .. } => {
                Some(Collector::Node)
            }
            Adapter::GoTest { command } => {
                let (words, _) = plain_words(command)?;
                let own = words.iter().any(|w| {
                    let flag = w.trim_start_matches('-');
                    w.starts_with('-') && (flag == "args" || flag.split('=').next() == Some("exec"))
                });
                (!own).then_some(Collector::Go)
            }
            _ => None,
        }
    }

    /// The coverage run's command: the config's with the collector's
    /// `options` after `node --test`'s `--test`, or at the end of `go
    /// test`. `None`: the config's own command (the collector needs only
    /// variables).
    pub fn coverage_command(&self, options: &[String]) -> Option<Command> {
        if options.is_empty() {
            return None;
        }
        match self {
            Adapter::NodeTest { words, at, shell } => {
                let mut argv = words.clone();
                for (k, o) in options.iter().enumerate() {
                    argv.insert(*at + 1 + k, o.clone());
                }
                Some(words_to_command(argv, *shell))
            }
            Adapter::GoTest { command } => Some(append(command, options.to_vec())),
            _ => None,
        }
    }

    /// Whether a subset run gets the strict pytest plugin (ignored by a
    /// runner that is not pytest).
    pub fn plugin(&self) -> bool {
        matches!(self, Adapter::Pytest | Adapter::Template(_))
    }
}

/// Whether a pytest-cov coverage gate may be on for `command` run in the
/// copy at `tree` with environment `env`: `--cov-fail-under` in the
/// command, in `PYTEST_ADDOPTS`, in a root config file, or in a file the
/// command names (a `Makefile`, a script), or coverage's own `fail_under`
/// in its config, and pytest-cov in use: a `--cov` option somewhere in
/// those same places. coverage's `fail_under` alone is `coverage report`'s
/// gate (`coverage run -m pytest`), not pytest's: there pytest has no
/// `--cov-fail-under` option and would stop with a usage error (exit 4) on
/// every subset. A subset run then gets `--cov-fail-under=0` (pytest-cov
/// reads it over both).
pub(super) fn pytest_cov_gate(command: &Command, env: &[(String, String)], tree: &Path) -> bool {
    const GATE: &str = "cov-fail-under";
    let text = command.display();
    let addopts = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PYTEST_ADDOPTS")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("PYTEST_ADDOPTS").ok())
        .unwrap_or_default();
    if text.contains(GATE) || addopts.contains(GATE) {
        return true;
    }
    // pytest-cov's options all start `--cov`.
    const COV: &str = "--cov";
    let mut cov = text.contains(COV) || addopts.contains(COV);
    let mut gate = false;
    let mut files: Vec<String> = [
        "pytest.ini",
        "pyproject.toml",
        "tox.ini",
        "setup.cfg",
        ".coveragerc",
        "Makefile",
        "makefile",
        "noxfile.py",
    ]
    .iter()
    .map(|f| f.to_string())
    .collect();
    files.extend(
        text.split(|c: char| c.is_whitespace() || c == '\'' || c == '"')
            .filter(|w| !w.is_empty() && !w.starts_with('-') && !w.contains(".."))
            .map(|w| w.trim_start_matches("./").to_string()),
    );
    for f in &files {
        let path = tree.join(f);
        if !path.starts_with(tree) || !path.is_file() {
            continue;
        }
        if let Ok(t) = std::fs::read_to_string(&path) {
            if t.contains(GATE) {
                return true;
            }
            gate |= t.contains("fail_under");
            cov |= t.contains(COV);
        }
    }
    gate && cov
}

/// Whether the command names pytest (as the spec's preset detection does).
fn names_pytest(c: &Command) -> bool {
    c.display()
        .split(|ch: char| ch.is_whitespace() || ch == '/' || ch == '\'' || ch == '"')
        .any(|w| w == "pytest" || w == "py.test")
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
fn expand(template: &Command, key: &str, values: &[String]) -> Command {
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
fn files_of(ids: &[String], tree: &Path) -> Option<Vec<String>> {
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

/// A JUnit id as unittest names the test: `pkg.mod.Class::test` →
/// `pkg.mod.Class.test`. `None` for what unittest cannot select (a
/// parametrized id, a module-level error entry).
fn dotted(id: &str) -> Option<String> {
    let (class, name) = id.split_once("::")?;
    if class.is_empty() || name.contains(['[', ' ', '(']) || name.contains("::") {
        return None;
    }
    Some(format!("{class}.{name}"))
}

/// The words of `command` and whether it is a shell string; `None` for a
/// shell string with operators, quoting or expansions (`&&`, `;`, `|`,
/// redirections, `$`, quotes), whose words an adapter cannot safely edit.
fn plain_words(command: &Command) -> Option<(Vec<String>, bool)> {
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

/// `argv` as a command: an argv list, or (`shell`) its words joined, each
/// shell-quoted as needed.
fn words_to_command(argv: Vec<String>, shell: bool) -> Command {
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
fn append(command: &Command, extra: Vec<String>) -> Command {
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

/// The test's own name in a JUnit id (`classname::name` → `name`).
fn last_name(id: &str) -> &str {
    id.split_once("::").map_or(id, |(_, n)| n)
}

/// A JavaScript regular expression that matches exactly the `names`.
fn exact_regex(names: &[String]) -> String {
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

/// The `node --test` adapter of `command`: `node` then `--test` among its
/// options, with a JUnit reporter (what unguard reads per test), no name
/// pattern of the user's, and, as a shell string, no shell operators.
fn node_test(command: &Command) -> Option<Adapter> {
    let (words, shell) = plain_words(command)?;
    let node = words
        .iter()
        .position(|w| w == "node" || w.ends_with("/node"))?;
    let at = node + 1 + words[node + 1..].iter().position(|w| w == "--test")?;
    let opts = &words[node + 1..];
    let junit = opts.iter().any(|w| w == "--test-reporter=junit")
        || opts
            .windows(2)
            .any(|w| w[0] == "--test-reporter" && w[1] == "junit");
    let named = opts.iter().any(|w| w.starts_with("--test-name-pattern"));
    (junit && !named).then_some(Adapter::NodeTest { words, at, shell })
}

/// The vitest adapter of `command`: `vitest run` (or `vitest --run`) with
/// its JUnit reporter, no test name filter of the user's, and, as a shell
/// string, no shell operators.
fn vitest(command: &Command) -> Option<Adapter> {
    let (words, _) = plain_words(command)?;
    let v = words
        .iter()
        .position(|w| w == "vitest" || w.ends_with("/vitest") || w.ends_with("/vitest.mjs"))?;
    let rest = &words[v + 1..];
    let once = rest.first().is_some_and(|w| w == "run") || rest.iter().any(|w| w == "--run");
    let junit = rest.iter().any(|w| w == "--reporter=junit")
        || rest
            .windows(2)
            .any(|w| w[0] == "--reporter" && w[1] == "junit");
    let named = rest
        .iter()
        .any(|w| w == "-t" || w.starts_with("--testNamePattern") || w.starts_with("-t="));
    (once && junit && !named).then(|| Adapter::Vitest {
        command: command.clone(),
    })
}

/// The test files and full test names (as `-t` matches them: the
/// describe blocks and the test joined by spaces) of vitest JUnit ids
/// (`test/a.test.ts::block > test`). `None` for an id without its file.
fn vitest_filters(ids: &[String]) -> Option<(Vec<String>, Vec<String>)> {
    let mut files: Vec<String> = Vec::new();
    let mut names = Vec::new();
    for id in ids {
        let (file, name) = id.split_once("::")?;
        if file.is_empty() || name.is_empty() {
            return None;
        }
        if !files.iter().any(|f| f == file) {
            files.push(file.to_string());
        }
        names.push(name.replace(" > ", " "));
    }
    Some((files, names))
}

/// The go test adapter of `command`: `go test` with `-json` (per-test
/// events in the log), and, as a shell string, no shell operators (a
/// redirection to `{junit}` would take the appended `-run` with it: such a
/// command opts in with `test.select`).
fn go_test(command: &Command) -> Option<Adapter> {
    let (words, _) = plain_words(command)?;
    let go = words
        .windows(2)
        .position(|w| w[0] == "go" && w[1] == "test")?;
    let json = words[go + 2..]
        .iter()
        .any(|w| w == "-json" || w == "--json");
    let runs = words[go + 2..]
        .iter()
        .any(|w| w == "-run" || w.starts_with("-run="));
    (json && !runs).then(|| Adapter::GoTest {
        command: command.clone(),
    })
}

/// `^(TestA|TestB)$` for the ids' top-level test names (`pkg::TestA/case`
/// selects `TestA`, whose run includes its subtests). `None` for a name Go
/// could not have given a test.
fn go_run_pattern(ids: &[String]) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    for id in ids {
        let name = id.rsplit_once("::").map_or(id.as_str(), |(_, n)| n);
        let top = name.split('/').next().unwrap_or(name);
        if top.is_empty() || !top.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        if !names.contains(&top) {
            names.push(top);
        }
    }
    (!names.is_empty()).then(|| format!("^({})$", names.join("|")))
}

/// The jest adapter of `cfg`: `jest` (or a path to it) whose JUnit report
/// (`test.junit`) jest-junit writes: it is among the command's
/// `--reporters`, or the command names none (the config's then run). No
/// name or file filter of the user's (`-t`, `--onlyChanged`, `--watch`,
/// …), and, as a shell string, no shell operators.
fn jest(cfg: &TestConfig) -> Option<Adapter> {
    let (words, _) = plain_words(&cfg.command)?;
    let j = words
        .iter()
        .position(|w| w == "jest" || w.ends_with("/jest") || w.ends_with("/jest.js"))?;
    let rest = &words[j + 1..];
    let mut reporters = Vec::new();
    for (k, w) in rest.iter().enumerate() {
        if let Some(r) = w.strip_prefix("--reporters=") {
            reporters.push(r);
        } else if w == "--reporters" {
            reporters.extend(rest.get(k + 1).map(String::as_str));
        }
    }
    let junit = cfg.junit.is_some()
        && (reporters.is_empty()
            || reporters
                .iter()
                .any(|r| *r == "jest-junit" || r.ends_with("/jest-junit")));
    const FILTERS: [&str; 16] = [
        "-t",
        "--testNamePattern",
        "--test-name-pattern",
        "-o",
        "--onlyChanged",
        "--only-changed",
        "--changedSince",
        "--lastCommit",
        "--findRelatedTests",
        "-f",
        "--onlyFailures",
        "--watch",
        "--watchAll",
        "--listTests",
        "--shard",
        "--selectProjects",
    ];
    let named = rest
        .iter()
        .any(|w| FILTERS.contains(&w.split('=').next().unwrap_or(w)));
    (junit && !named).then(|| Adapter::Jest {
        command: cfg.command.clone(),
    })
}

/// The full names (the describe blocks and the test, joined by spaces:
/// what `--testNamePattern` matches) of jest-junit ids. jest-junit's
/// default templates give a test the same classname and name, `{classname}
/// {title}`, its full name (with a leading space at the top level); `None`
/// for an id of other templates, whose full name unguard cannot know.
fn jest_full_names(ids: &[String]) -> Option<Vec<String>> {
    ids.iter()
        .map(|id| {
            let half = id.len().checked_sub(2)? / 2;
            let (class, name) = (id.get(..half)?, id.get(half + 2..)?);
            let name = name.trim();
            (class.trim() == name && id.get(half..half + 2) == Some("::") && !name.is_empty())
                .then(|| name.to_string())
        })
        .collect()
}

/// cargo's options that select test targets (unguard adds none then).
const CARGO_TARGET_FLAGS: [&str; 11] = [
    "--lib",
    "--bin",
    "--bins",
    "--test",
    "--tests",
    "--example",
    "--examples",
    "--bench",
    "--benches",
    "--all-targets",
    "--doc",
];

/// cargo test's options that take a value as the next word.
const CARGO_VALUED: [&str; 20] = [
    "-p",
    "--package",
    "--exclude",
    "-F",
    "--features",
    "--target",
    "--target-dir",
    "--manifest-path",
    "-j",
    "--jobs",
    "--profile",
    "--bin",
    "--test",
    "--example",
    "--bench",
    "--color",
    "--message-format",
    "--config",
    "-Z",
    "--lockfile-path",
];

/// libtest's options that take a value as the next word.
const LIBTEST_VALUED: [&str; 7] = [
    "--test-threads",
    "--skip",
    "--format",
    "--color",
    "--logfile",
    "-Z",
    "--shuffle-seed",
];

/// Whether `args` (options, `valued` taking the next word) hold a word
/// that is no option: a test name filter.
fn has_filter(args: &[String], valued: &[&str]) -> bool {
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

/// The cargo test adapter of `command`: `cargo [+toolchain] test`, with
/// no test name filter of the user's (before or after `--`), not
/// `--no-run` or `--list`, and, as a shell string, no shell operators.
fn cargo_test(command: &Command) -> Option<Adapter> {
    let (words, shell) = plain_words(command)?;
    let c = words
        .iter()
        .position(|w| w == "cargo" || w.ends_with("/cargo"))?;
    let mut test_at = c + 1;
    if words.get(test_at).is_some_and(|w| w.starts_with('+')) {
        test_at += 1;
    }
    if words.get(test_at)? != "test" {
        return None;
    }
    let dd = words[test_at + 1..]
        .iter()
        .position(|w| w == "--")
        .map(|p| p + test_at + 1);
    let (cargo, libtest) = match dd {
        Some(d) => (words[..d].to_vec(), words[d + 1..].to_vec()),
        None => (words.clone(), Vec::new()),
    };
    let own = &cargo[test_at + 1..];
    let stops = own.iter().any(|w| w == "--no-run") || libtest.iter().any(|w| w == "--list");
    if stops || has_filter(own, &CARGO_VALUED) || has_filter(&libtest, &LIBTEST_VALUED) {
        return None;
    }
    let targets_chosen = own
        .iter()
        .any(|w| CARGO_TARGET_FLAGS.contains(&w.split('=').next().unwrap_or(w)));
    Some(Adapter::CargoTest(CargoTest {
        cargo,
        test_at,
        libtest,
        shell,
        targets_chosen,
    }))
}

impl CargoTest {
    /// `cargo test <targets> <the user's options> -- <the user's libtest
    /// options> --exact <names>`. `None` for an id that names no libtest
    /// test (a binary's crash).
    fn command(&self, ids: &[String], tree: &Path) -> Option<Command> {
        let mut classes: Vec<&str> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        for id in ids {
            let (class, name) = id.split_once("::")?;
            if name.is_empty() || name.starts_with('<') {
                return None;
            }
            if !classes.contains(&class) {
                classes.push(class);
            }
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
        let targets = if self.targets_chosen {
            Vec::new()
        } else {
            cargo_targets(&classes, tree)
        };
        let mut argv = self.cargo[..=self.test_at].to_vec();
        argv.extend(targets);
        argv.extend(self.cargo[self.test_at + 1..].iter().cloned());
        argv.push("--".into());
        argv.extend(self.libtest.iter().cloned());
        if !self.libtest.iter().any(|w| w == "--exact") {
            argv.push("--exact".into());
        }
        argv.extend(names);
        Some(words_to_command(argv, self.shell))
    }
}

/// The cargo options that run just the test targets `classes` (as
/// [`crate::outcome::reading::libtest_text`] names them: `src/lib.rs`, `tests/it.rs`,
/// `Doc-tests x`): `--lib`, `--bins`, `--bin x`, `--test x`, `--tests`,
/// `--doc`. A target the manifest (`tree/Cargo.toml`) may have renamed
/// (`[[bin]]`, `[[test]]`) gets its whole kind. Empty (every target runs)
/// for a path that is none of these, or doc tests with other targets
/// (cargo cannot mix `--doc` with them).
fn cargo_targets(classes: &[&str], tree: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(tree.join("Cargo.toml")).unwrap_or_default();
    let mut flags: Vec<Vec<String>> = Vec::new();
    for class in classes {
        let named = |dir: &str, table: &str, one: &str, all: &str| -> Option<Vec<String>> {
            let rest = class.strip_prefix(dir)?;
            let name = rest
                .strip_suffix("/main.rs")
                .or_else(|| rest.strip_suffix(".rs"))?;
            if name.is_empty() || name.contains('/') {
                return None;
            }
            Some(if manifest.contains(table) {
                vec![all.to_string()]
            } else {
                vec![one.to_string(), name.to_string()]
            })
        };
        let flag = match *class {
            "src/lib.rs" => Some(vec!["--lib".to_string()]),
            "src/main.rs" => Some(vec!["--bins".to_string()]),
            c if c.starts_with("Doc-tests ") => Some(vec!["--doc".to_string()]),
            _ => named("src/bin/", "[[bin]]", "--bin", "--bins")
                .or_else(|| named("tests/", "[[test]]", "--test", "--tests")),
        };
        let Some(flag) = flag else {
            return Vec::new();
        };
        if !flags.contains(&flag) {
            flags.push(flag);
        }
    }
    if flags.len() > 1 && flags.iter().any(|f| f[0] == "--doc") {
        return Vec::new();
    }
    flags.concat()
}

/// Options of `python -m unittest` (and xmlrunner) kept in a subset run;
/// the second list takes a value.
const UNITTEST_FLAGS: [&str; 9] = [
    "-v",
    "-q",
    "-b",
    "-c",
    "-f",
    "--locals",
    "--buffer",
    "--catch",
    "--failfast",
];
const UNITTEST_VALUED: [&str; 3] = ["-o", "--output", "--output-file"];

/// The unittest adapter of `command`: it runs `python -m unittest` or
/// `python -m xmlrunner` (after optional `VAR=value` words), with nothing
/// after it but discovery and the options above. A shell command with
/// operators (`&&`, `;`, `|`, redirections) has none.
fn unittest(command: &Command) -> Option<Adapter> {
    let (words, shell) = plain_words(command)?;
    let m = words
        .windows(2)
        .position(|w| w[0] == "-m" && (w[1] == "unittest" || w[1] == "xmlrunner"))?;
    let mut prefix = words[..m + 2].to_vec();
    let mut rest = words[m + 2..].iter();
    while let Some(w) = rest.next() {
        if UNITTEST_FLAGS.contains(&w.as_str()) {
            prefix.push(w.clone());
        } else if UNITTEST_VALUED.contains(&w.as_str()) {
            prefix.push(w.clone());
            prefix.push(rest.next()?.clone());
        } else if w == "discover" || w.starts_with('-') {
            // discovery and its options (-s, -t, -p with values) go.
            if matches!(w.as_str(), "-s" | "-t" | "-p" | "-k") {
                rest.next();
            }
        }
        // a start dir, pattern or test name of the full run: dropped.
    }
    Some(Adapter::Unittest { prefix, shell })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(v: &[&str]) -> Command {
        Command::Argv(v.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn a_template_gets_one_word_per_id() {
        let t = Adapter::Template(Command::Shell("run --junit {junit} {tests}".into()));
        let ids = vec!["a.B::t one".to_string(), "a.B::t2".to_string()];
        let nowhere = Path::new("/nonexistent");
        assert_eq!(
            t.command(&ids, nowhere),
            Some(Command::Shell(
                "run --junit {junit} 'a.B::t one' a.B::t2".into()
            ))
        );
        let t = Adapter::Template(argv(&["run", "{tests}", "-q"]));
        assert_eq!(
            t.command(&ids, nowhere),
            Some(argv(&["run", "a.B::t one", "a.B::t2", "-q"]))
        );
    }

    #[test]
    fn files_are_the_test_modules_found_in_the_copy() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("tests/unit")).unwrap();
        std::fs::write(d.path().join("tests/unit/test_a.py"), "").unwrap();
        std::fs::write(d.path().join("tests/test_b.py"), "").unwrap();
        let ids: Vec<String> = [
            "tests.unit.test_a.K::t1",
            "tests.test_b::t2[x.y]",
            "tests.unit.test_a::t3",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let t = Adapter::Template(Command::Shell("pytest -q {files}".into()));
        assert_eq!(
            t.command(&ids, d.path()),
            Some(Command::Shell(
                "pytest -q tests/unit/test_a.py tests/test_b.py".into()
            ))
        );
        assert_eq!(
            t.command(&["nowhere.test_c::t".to_string()], d.path()),
            None
        );
    }

    #[test]
    fn go_test_json_gets_a_run_pattern_of_top_level_names() {
        let cfg = Command::Shell("go test -json ./...".into());
        let a = go_test(&cfg).expect("go test -json has an adapter");
        let ids = [
            "example.com/srv::TestHost/localhost".to_string(),
            "example.com/srv::TestHost/ip".to_string(),
            "example.com/srv::TestOrigin".to_string(),
        ];
        assert_eq!(
            a.command(&ids, Path::new("/nonexistent")),
            Some(Command::Shell(
                "go test -json ./... -run '^(TestHost|TestOrigin)$'".into()
            ))
        );
        let argv = go_test(&argv(&["go", "test", "-json", "./..."])).unwrap();
        assert_eq!(
            argv.command(&ids[2..], Path::new("/")),
            Some(argv_cmd(&[
                "go",
                "test",
                "-json",
                "./...",
                "-run",
                "^(TestOrigin)$"
            ]))
        );
        // Without -json there are no per-test results to read; a
        // redirection would swallow the appended flag; -run is the user's.
        assert!(go_test(&Command::Shell("go test ./...".into())).is_none());
        assert!(go_test(&Command::Shell("go test -json ./... > {junit}".into())).is_none());
        assert!(go_test(&Command::Shell("go test -json -run TestX ./...".into())).is_none());
        assert!(go_run_pattern(&["p::Test(x)".to_string()]).is_none());
    }

    #[test]
    fn node_test_gets_a_name_pattern_after_dash_dash_test() {
        let a = node_test(&Command::Shell(
            "node --test --test-reporter=junit --test-reporter-destination={junit} test/".into(),
        ))
        .expect("node --test with junit has an adapter");
        let ids = ["test::refuses a.b (x)".to_string(), "test::t2".to_string()];
        assert_eq!(
            a.command(&ids, Path::new("/")),
            Some(Command::Shell(
                "node --test '--test-name-pattern=^(refuses a\\.b \\(x\\)|t2)$' --test-reporter=junit --test-reporter-destination={junit} test/".into()
            ))
        );
        // No per-test report, or a pattern of the user's: no adapter.
        assert!(node_test(&Command::Shell("node --test test/".into())).is_none());
        assert!(node_test(&Command::Shell(
            "node --test --test-reporter=junit --test-name-pattern=x".into()
        ))
        .is_none());
    }

    #[test]
    fn vitest_gets_files_and_full_names() {
        let a = vitest(&argv_cmd(&[
            "npx",
            "vitest",
            "run",
            "--reporter=junit",
            "--outputFile={junit}",
        ]))
        .expect("vitest run with junit has an adapter");
        let ids = [
            "test/a.test.ts::block > inner > t1".to_string(),
            "test/b.test.ts::t2".to_string(),
        ];
        assert_eq!(
            a.command(&ids, Path::new("/")),
            Some(argv_cmd(&[
                "npx",
                "vitest",
                "run",
                "--reporter=junit",
                "--outputFile={junit}",
                "test/a.test.ts",
                "test/b.test.ts",
                "-t",
                "^(block inner t1|t2)$",
                "--coverage.enabled=false"
            ]))
        );
        // Watch mode, no JUnit, or the user's own -t: no adapter.
        assert!(vitest(&Command::Shell("vitest --reporter=junit".into())).is_none());
        assert!(vitest(&Command::Shell("vitest run".into())).is_none());
        assert!(vitest(&Command::Shell("vitest run --reporter=junit -t x".into())).is_none());
    }

    #[test]
    fn a_pytest_cov_gate_is_found_where_it_is_set() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path();
        let sh = |s: &str| Command::Shell(s.into());
        assert!(!pytest_cov_gate(&sh("python3 -m pytest -q"), &[], t));
        assert!(pytest_cov_gate(
            &sh("pytest --cov=src --cov-fail-under=90"),
            &[],
            t
        ));
        let addopts = [(
            "PYTEST_ADDOPTS".to_string(),
            "--cov-fail-under=90".to_string(),
        )];
        assert!(pytest_cov_gate(&sh("pytest"), &addopts, t));
        std::fs::write(
            t.join("run-tests.sh"),
            "pytest --cov=app --cov-fail-under=100\n",
        )
        .unwrap();
        assert!(pytest_cov_gate(&sh("./run-tests.sh"), &[], t));
        assert!(!pytest_cov_gate(&sh("../run-tests.sh"), &[], t));
        std::fs::remove_file(t.join("run-tests.sh")).unwrap();
        std::fs::write(
            t.join("pyproject.toml"),
            "[tool.coverage.report]\nfail_under = 100\n",
        )
        .unwrap();
        // coverage's `fail_under` alone is `coverage report`'s gate (`coverage
        // run -m pytest`): pytest has no `--cov-fail-under` option there.
        assert!(!pytest_cov_gate(&sh("make test"), &[], t));
        assert!(!pytest_cov_gate(
            &sh("coverage run -m pytest -n auto"),
            &[],
            t
        ));
        // With pytest-cov in use (a `--cov` option in the Makefile, in
        // `PYTEST_ADDOPTS`, or in the config's addopts), it is pytest-cov's.
        std::fs::write(t.join("Makefile"), "test:\n\tpytest --cov=src\n").unwrap();
        assert!(pytest_cov_gate(&sh("make test"), &[], t));
        std::fs::remove_file(t.join("Makefile")).unwrap();
        let addopts = [("PYTEST_ADDOPTS".to_string(), "--cov=src".to_string())];
        assert!(pytest_cov_gate(&sh("make test"), &addopts, t));
        std::fs::write(
            t.join("pyproject.toml"),
            "[tool.pytest.ini_options]\naddopts = \"--cov=src\"\n\n[tool.coverage.report]\nfail_under = 100\n",
        )
        .unwrap();
        assert!(pytest_cov_gate(&sh("make test"), &[], t));
    }

    fn argv_cmd(v: &[&str]) -> Command {
        Command::Argv(v.iter().map(|s| s.to_string()).collect())
    }

    fn config(command: Command, junit: Option<&str>) -> TestConfig {
        TestConfig {
            command,
            junit: junit.map(str::to_string),
            timeout: crate::spec::TimeoutSetting::Auto,
            env: Default::default(),
            fail_codes: crate::spec::FailCodes::AnyNonZero,
            preset: crate::spec::Preset::Generic,
            check: None,
            git: Default::default(),
            select: Select::Auto,
        }
    }

    #[test]
    fn jest_gets_the_full_names_of_jest_junits_default_ids() {
        let cmd = Command::Shell(
            "JEST_JUNIT_OUTPUT_FILE={junit} npx jest --ci --reporters=default --reporters=jest-junit"
                .into(),
        );
        let a = jest(&config(cmd, Some("{junit}"))).expect("jest with jest-junit has an adapter");
        // jest-junit's defaults: classname and name are both `{classname}
        // {title}` (a top-level test's starts with a space).
        let ids = [
            "host allow-list inner (x.y) refuses a foreign host::host allow-list inner (x.y) refuses a foreign host".to_string(),
            " serves a local origin:: serves a local origin".to_string(),
        ];
        assert_eq!(
            a.command(&ids, Path::new("/")),
            Some(Command::Shell(
                "JEST_JUNIT_OUTPUT_FILE={junit} npx jest --ci --reporters=default --reporters=jest-junit '--testNamePattern=^(host allow\\-list inner \\(x\\.y\\) refuses a foreign host|serves a local origin)$' --coverage=false".into()
            ))
        );
        // Other templates (the file as classname): unknown full names.
        assert_eq!(
            a.command(&["test/a.test.js::t".to_string()], Path::new("/")),
            None
        );
        // No report, another reporter only, the user's filter, operators: none.
        let none =
            |c: &str, junit: Option<&str>| jest(&config(Command::Shell(c.into()), junit)).is_none();
        assert!(none("jest --reporters=jest-junit", None));
        assert!(none("jest --reporters default", Some("junit.xml")));
        assert!(none(
            "jest --reporters=jest-junit -t host",
            Some("junit.xml")
        ));
        assert!(none(
            "jest --reporters=jest-junit --onlyChanged",
            Some("junit.xml")
        ));
        assert!(none(
            "jest --reporters=jest-junit && echo",
            Some("junit.xml")
        ));
        // Reporters from the config: the report is what `test.junit` names.
        assert!(!none("node_modules/.bin/jest --ci", Some("junit.xml")));
    }

    #[test]
    fn cargo_test_gets_targets_and_exact_names_after_dash_dash() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        let a = cargo_test(&Command::Shell("cargo test --offline".into())).unwrap();
        let ids = [
            "src/lib.rs::tests::refuses_a_foreign_host".to_string(),
            "tests/it.rs::serves_localhost".to_string(),
        ];
        assert_eq!(
            a.command(&ids, d.path()),
            Some(Command::Shell(
                "cargo test --lib --test it --offline -- --exact tests::refuses_a_foreign_host serves_localhost".into()
            ))
        );
        // The user's libtest options stay; a renamed test target gets its
        // whole kind; doc tests cannot be mixed with other targets.
        let a = cargo_test(&argv(&[
            "cargo",
            "+stable",
            "test",
            "--",
            "--test-threads",
            "1",
        ]))
        .unwrap();
        std::fs::write(
            d.path().join("Cargo.toml"),
            "[[test]]\nname = \"y\"\npath = \"tests/it.rs\"\n",
        )
        .unwrap();
        assert_eq!(
            a.command(&ids[1..], d.path()),
            Some(argv(&[
                "cargo",
                "+stable",
                "test",
                "--tests",
                "--",
                "--test-threads",
                "1",
                "--exact",
                "serves_localhost"
            ]))
        );
        let doc = "Doc-tests x::src/lib.rs - f (line 3)".to_string();
        assert_eq!(
            a.command(&[doc, ids[0].clone()], d.path()),
            Some(argv(&[
                "cargo",
                "+stable",
                "test",
                "--",
                "--test-threads",
                "1",
                "--exact",
                "src/lib.rs - f (line 3)",
                "tests::refuses_a_foreign_host"
            ]))
        );
        // The user's own targets and --exact are kept as they are.
        let a = cargo_test(&Command::Shell("cargo test --test it -- --exact".into())).unwrap();
        assert_eq!(
            a.command(&ids[1..], d.path()),
            Some(Command::Shell(
                "cargo test --test it -- --exact serves_localhost".into()
            ))
        );
        // A crashed binary names no test to select.
        assert_eq!(
            a.command(
                &["tests/it.rs::<2 tests unreported: the test binary crashed>".to_string()],
                d.path()
            ),
            None
        );
        // A filter of the user's (before or after --), --no-run, operators: none.
        for c in [
            "cargo test guard",
            "cargo test -- guard",
            "cargo test -p a guard",
            "cargo test --no-run",
            "cargo test && true",
            "cargo build",
        ] {
            assert!(cargo_test(&Command::Shell(c.into())).is_none(), "{c}");
        }
        assert!(cargo_test(&Command::Shell(
            "cargo test -p a --features x -- --skip slow --test-threads 1".into()
        ))
        .is_some());
    }

    #[test]
    fn unittest_discovery_is_replaced_by_dotted_ids() {
        let a = unittest(&Command::Shell(
            "PYTHONPATH=src python3 -m unittest discover -s tests -t . -v".into(),
        ))
        .unwrap();
        let ids = vec!["tests.test_a.A::test_x".to_string()];
        let tree = Path::new("/nonexistent");
        assert_eq!(
            a.command(&ids, tree),
            Some(Command::Shell(
                "PYTHONPATH=src python3 -m unittest -v tests.test_a.A.test_x".into()
            ))
        );
        let x = unittest(&argv(&[
            "python",
            "-m",
            "xmlrunner",
            "-o",
            "out",
            "discover",
        ]))
        .unwrap();
        assert_eq!(
            x.command(&ids, tree),
            Some(argv(&[
                "python",
                "-m",
                "xmlrunner",
                "-o",
                "out",
                "tests.test_a.A.test_x"
            ]))
        );
        // A parametrized id cannot be selected by unittest.
        assert_eq!(a.command(&["m.C::t[1]".to_string()], tree), None);
        assert!(unittest(&Command::Shell("cd x && python -m unittest".into())).is_none());
        assert!(unittest(&Command::Shell("make test".into())).is_none());
    }
}
