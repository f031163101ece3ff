//! A red baseline that looks like the network: when every red test of the
//! unmutated suite carries a marker or a name that says network (`live`,
//! `network`, `integration`, `e2e`, `online`), or failed with a connection
//! error, the baseline's error says so, names the flag that deselects them
//! and the command with it; `unguard audit` proposes that command (the
//! error carries it: [`NetworkNote::command`]).
//!
//! Only read: the JUnit report of the run, its log, and the test files of
//! the user's tree (for `@pytest.mark.<word>` and `pytestmark`).

use std::path::Path;

use crate::error::NetworkNote;
use crate::outcome::reading::model::TestCase;
use crate::outcome::reading::Reading;

/// Words that name tests needing the network or a deployment (audit's
/// detection skips a call that selects only these).
pub const NETWORK_WORDS: &[&str] = &["live", "network", "integration", "e2e", "online"];

/// Why a red test looks like the network.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Why {
    /// `@pytest.mark.<word>` on the test, its class or its module.
    Marker(String),
    /// A network word in its id.
    Name(String),
    /// The log shows a connection error for it.
    Connection,
}

/// Lines of a log that say a connection failed.
const CONNECTION_ERRORS: &[&str] = &[
    "ConnectionError",
    "ConnectError",
    "ConnectionRefused",
    "Connection refused",
    "ConnectTimeout",
    "Name or service not known",
    "Temporary failure in name resolution",
    "nodename nor servname",
    "getaddrinfo",
    "gaierror",
    "Network is unreachable",
    "No route to host",
    "Max retries exceeded",
    "urlopen error",
    "ECONNREFUSED",
    "ENOTFOUND",
    "EAI_AGAIN",
    "dial tcp",
];

/// Errors a process in a network namespace of its own gets where the
/// machine's network would have let it through: no route out, no name
/// resolution (loopback is there: a refused connection is the same on
/// both sides). Matched without regard to case.
const OUTSIDE_NETWORK_ERRORS: &[&str] = &[
    "network is unreachable",
    "no route to host",
    "enetunreach",
    "ehostunreach",
    "temporary failure in name resolution",
    "name or service not known",
    "nodename nor servname",
    "gaierror",
    "getaddrinfo",
    "eai_again",
    "enotfound",
    "dial tcp: lookup",
];

/// The first line of `log` that shows a try to reach beyond loopback that
/// a network namespace of its own refused (see [`OUTSIDE_NETWORK_ERRORS`]):
/// a kill in a namespace with such a line is no evidence until the machine's
/// network confirms it. `None`: none, or the log cannot be read.
pub fn outside_network_error(log: &Path) -> Option<String> {
    let text = std::fs::read(log).ok()?;
    String::from_utf8_lossy(&text)
        .lines()
        .find(|l| {
            let l = l.to_ascii_lowercase();
            OUTSIDE_NETWORK_ERRORS.iter().any(|e| l.contains(e))
        })
        .map(|l| l.trim().chars().take(200).collect())
}

/// The prefix of the line of a baseline error that proposes a command.
const PROPOSE: &str = "  = run without them: ";

/// The note for a red baseline (appended to its error), when every red
/// test of `junit` looks like the network. `root` is the user's tree,
/// `log` the run's log, `command` the test command as configured.
pub fn note(junit: &Reading, log: &Path, root: &Path, command: &str) -> Option<NetworkNote> {
    let red: Vec<&TestCase> = junit.report()?.red();
    if red.is_empty() {
        return None;
    }
    let log = std::fs::read_to_string(log).unwrap_or_default();
    let whys: Vec<(&TestCase, Why)> = red
        .iter()
        .map(|c| why(c, root, &log).map(|w| (*c, w)))
        .collect::<Option<_>>()?;
    let (flag, proposed) = if command.contains("pytest") {
        let parts = pytest_flag(&whys, root);
        (render(&parts), with_pytest_flag(command, &parts))
    } else if command.contains("go test") {
        let names: Vec<String> = whys
            .iter()
            .map(|(c, _)| c.name.split('/').next().unwrap_or(&c.name).to_string())
            .collect();
        let flag = format!("-skip '^({})$'", names.join("|"));
        let proposed = with_flag(command, &flag);
        (flag, proposed)
    } else {
        return None;
    };
    let listed: Vec<String> = whys
        .iter()
        .take(5)
        .map(|(c, w)| {
            let w = match w {
                Why::Marker(m) => format!("marked `{m}`"),
                Why::Name(n) => format!("`{n}` in its name"),
                Why::Connection => "a connection error".to_string(),
            };
            format!("{} ({w})", c.id())
        })
        .collect();
    let more = whys
        .len()
        .checked_sub(5)
        .filter(|n| *n > 0)
        .map(|n| format!(" and {n} more"))
        .unwrap_or_default();
    Some(NetworkNote {
        text: format!(
            "  = every red test looks like it needs the network or a live service: {}{more}; \
             deselect them with `{flag}`\n{PROPOSE}`{proposed}`",
            listed.join(", "),
        ),
        command: proposed,
    })
}

/// `command` with `flag` added at its end.
fn with_flag(command: &str, flag: &str) -> String {
    format!("{} {flag}", command.trim_end())
}

/// Why red test `c` looks like the network, if it does.
fn why(c: &TestCase, root: &Path, log: &str) -> Option<Why> {
    if let Some(m) = markers(c, root).into_iter().next() {
        return Some(Why::Marker(m));
    }
    let id = c.id().to_ascii_lowercase();
    if let Some(w) = id
        .split(|ch: char| !ch.is_ascii_alphanumeric())
        .find(|t| NETWORK_WORDS.contains(t))
    {
        return Some(Why::Name(w.to_string()));
    }
    let name = c.name.split('[').next().unwrap_or(&c.name);
    log.lines()
        .filter(|l| l.contains(name))
        .any(|l| CONNECTION_ERRORS.iter().any(|e| l.contains(e)))
        .then_some(Why::Connection)
}

/// The test file of a pytest test case (`tests.test_api.TestX` →
/// `tests/test_api.py`), repo-relative, and the classes after it.
fn test_file(c: &TestCase, root: &Path) -> Option<(String, Vec<String>)> {
    let parts: Vec<&str> = c.classname.split('.').collect();
    (1..=parts.len()).rev().find_map(|k| {
        let file = format!("{}.py", parts[..k].join("/"));
        root.join(&file).is_file().then(|| {
            (
                file,
                parts[k..].iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
        })
    })
}

/// The network markers (`@pytest.mark.live`, …) on test `c`: on its
/// function, its class, or its module (`pytestmark`).
fn markers(c: &TestCase, root: &Path) -> Vec<String> {
    let Some((file, classes)) = test_file(c, root) else {
        return Vec::new();
    };
    let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let marks_in = |l: &str| -> Vec<String> {
        l.split("pytest.mark.")
            .skip(1)
            .filter_map(|rest| {
                let word: String = rest
                    .chars()
                    .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_')
                    .collect();
                NETWORK_WORDS.contains(&word.as_str()).then_some(word)
            })
            .collect()
    };
    // The decorators right above `def name(` / `class Name`.
    let decorated = |head: &str| -> Vec<String> {
        let Some(k) = lines.iter().position(|l| l.trim_start().starts_with(head)) else {
            return Vec::new();
        };
        lines[..k]
            .iter()
            .rev()
            .take_while(|l| {
                let t = l.trim_start();
                t.starts_with('@') || t.starts_with(')') || t.starts_with('#')
            })
            .flat_map(|l| marks_in(l))
            .collect()
    };
    let name = c.name.split('[').next().unwrap_or(&c.name);
    let mut out = decorated(&format!("def {name}("));
    out.extend(decorated(&format!("async def {name}(")));
    for class in &classes {
        out.extend(decorated(&format!("class {class}")));
    }
    out.extend(
        lines
            .iter()
            .filter(|l| l.starts_with("pytestmark"))
            .flat_map(|l| marks_in(l)),
    );
    out
}

/// pytest's options as `(option, value)`: the flag of [`pytest_flag`].
type Options = Vec<(&'static str, String)>;

/// `options` as a flag: `-m "not live" -k "not e2e" --deselect a::b`.
fn render(options: &Options) -> String {
    options
        .iter()
        .map(|(o, v)| match *o {
            "--deselect" => format!("{o} {}", crate::run::shell::quote(v)),
            _ => format!("{o} {}", expression(v)),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A marker or keyword expression as one shell word (double quotes,
/// unless it holds what they would expand).
fn expression(v: &str) -> String {
    if v.contains(['"', '$', '`', '\\']) {
        crate::run::shell::quote(v)
    } else {
        format!("\"{v}\"")
    }
}

/// `command` with the pytest `options` added. pytest keeps only the last
/// `-m` (and `-k`): where the command already selects with one, the new
/// expression is joined to it (`-m "(unit) and not live"`) instead of
/// replacing the project's selection.
fn with_pytest_flag(command: &str, options: &Options) -> String {
    let words: Vec<crate::run::shell_line::Word> = crate::run::shell_line::commands(command)
        .unwrap_or_default()
        .into_iter()
        .flat_map(|c| c.words)
        .collect();
    // The words after pytest itself (`python -m pytest` has its own `-m`).
    let start = words
        .iter()
        .position(|w| w.value == "pytest" || w.value.ends_with("/pytest"))
        .map_or(words.len(), |k| k + 1);
    let after = command
        .rfind("pytest")
        .map_or(command.len(), |k| k + "pytest".len());
    let mut out = command.trim_end().to_string();
    let mut added = Vec::new();
    for (o, v) in options {
        let own = words[start.min(words.len())..]
            .windows(2)
            .rev()
            .find(|p| p[0].value == *o);
        let written = own.map(|p| format!("{o} {}", p[1].raw));
        match (own, written) {
            (Some(p), Some(written)) if out[after.min(out.len())..].contains(&written) => {
                let joined = format!("{o} {}", expression(&format!("({}) and {v}", p[1].value)));
                let at =
                    after.min(out.len()) + out[after.min(out.len())..].rfind(&written).unwrap_or(0);
                out.replace_range(at..at + written.len(), &joined);
            }
            _ => added.push((*o, v.clone())),
        }
    }
    if added.is_empty() {
        out
    } else {
        format!("{out} {}", render(&added))
    }
}

/// The pytest options that deselect `whys`: `-m "not live"` for markers,
/// `-k "not e2e"` for names, `--deselect` for the rest.
fn pytest_flag(whys: &[(&TestCase, Why)], root: &Path) -> Options {
    let mut marks: Vec<&str> = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    for (c, w) in whys {
        match w {
            Why::Marker(m) if !marks.contains(&m.as_str()) => marks.push(m),
            Why::Name(n) if !names.contains(&n.as_str()) => names.push(n),
            Why::Connection => ids.push(match test_file(c, root) {
                Some((file, classes)) => {
                    let mut id = file;
                    for class in classes {
                        id.push_str("::");
                        id.push_str(&class);
                    }
                    format!("{id}::{}", c.name)
                }
                None => c.id(),
            }),
            _ => {}
        }
    }
    let not = |words: &[&str]| {
        words
            .iter()
            .map(|w| format!("not {w}"))
            .collect::<Vec<_>>()
            .join(" and ")
    };
    let mut parts: Options = Vec::new();
    if !marks.is_empty() {
        parts.push(("-m", not(&marks)));
    }
    if !names.is_empty() {
        parts.push(("-k", not(&names)));
    }
    for id in ids {
        parts.push(("--deselect", id));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(cases: &[(&str, &str, bool)]) -> Reading {
        let xml: String = cases
            .iter()
            .map(|(cls, name, red)| {
                format!(
                    "<testcase classname=\"{cls}\" name=\"{name}\">{}</testcase>",
                    if *red { "<failure/>" } else { "" }
                )
            })
            .collect();
        Reading::Read(
            crate::outcome::reading::junit::parse(&format!("<testsuite>{xml}</testsuite>"))
                .unwrap(),
        )
    }

    #[test]
    fn markers_names_and_connection_errors_give_the_flag() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("tests")).unwrap();
        std::fs::write(
            d.path().join("tests/test_api.py"),
            "import pytest\n\n@pytest.mark.live\n@pytest.mark.parametrize('x', [1])\ndef test_fetch(x):\n    pass\n\ndef test_offline():\n    pass\n\ndef test_remote():\n    pass\n",
        )
        .unwrap();
        let log = d.path().join("log");
        std::fs::write(
            &log,
            "FAILED tests/test_api.py::test_remote - requests.exceptions.ConnectionError: Max retries\n",
        )
        .unwrap();
        let cmd = ".venv/bin/python -m pytest -q --junitxml={junit}";
        let r = reading(&[
            ("tests.test_api", "test_fetch[1]", true),
            ("tests.test_api", "test_offline", false),
            ("tests.test_e2e", "test_flow", true),
            ("tests.test_api", "test_remote", true),
        ]);
        let note_ = note(&r, &log, d.path(), cmd).unwrap();
        let n = &note_.text;
        assert!(
            n.contains("tests.test_api::test_fetch[1] (marked `live`)"),
            "{n}"
        );
        assert!(n.contains("`e2e` in its name"), "{n}");
        let flag = "-m \"not live\" -k \"not e2e\" --deselect tests/test_api.py::test_remote";
        assert!(n.contains(&format!("deselect them with `{flag}`")), "{n}");
        assert_eq!(note_.command, format!("{cmd} {flag}"));
        assert!(n.ends_with(&format!("\n{PROPOSE}`{cmd} {flag}`")), "{n}");
        // One red test with no network sign: no note.
        let r = reading(&[
            ("tests.test_api", "test_fetch[1]", true),
            ("tests.test_api", "test_offline", true),
        ]);
        assert_eq!(note(&r, &log, d.path(), cmd), None);
    }
}
