//! Reading `go test -json` output (the `test2json` event stream) into the
//! per-test [`Report`] every other runner's results become.
//!
//! Go's test runner writes one JSON object per line
//! (`{"Action":"fail","Package":"example.com/srv","Test":"TestHost"}`), with
//! the build's own messages (a compile error, `FAIL pkg [build failed]`) as
//! plain text between them on the same streams. unguard reads the events
//! wherever they appear: in the suite's log when the command prints them,
//! or in the file `test.junit` names when the command writes them there.
//!
//! What counts, and why:
//! - a test's last `pass`, `fail` or `skip` is its status; subtests
//!   (`TestA/case`) are tests of their own, as `go test` counts them;
//! - a test that started (`run`) and never finished was cut short (the test
//!   binary crashed or was killed): it is an error, red;
//! - a package that failed with no failed test in it (a build failure, a
//!   panic in `TestMain` or `init`, `go vet` refusing the package) adds no
//!   red test, so a red exit with only that is never a kill: the mutant
//!   broke the build, it did not fail a test.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::outcome::reading::model::{Report, Status, TestCase};

/// One `test2json` event; only the fields unguard reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Event {
    action: String,
    #[serde(default)]
    package: String,
    #[serde(default)]
    test: Option<String>,
    #[serde(default)]
    output: Option<String>,
}

/// What the events of one stream show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GoTestRun {
    /// Every test, in order of first appearance.
    pub report: Report,
    /// Packages that failed without a failed test in them, with why when
    /// the output says (`[build failed]`, `[setup failed]`).
    pub broken_packages: Vec<String>,
}

/// A test's state while reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Running,
    Done(Status),
}

/// Whether `line` is a `test2json` event.
pub fn is_event(line: &str) -> bool {
    let line = line.trim();
    line.starts_with('{') && line.contains("\"Action\"") && parse_event(line).is_some()
}

fn parse_event(line: &str) -> Option<Event> {
    serde_json::from_str::<Event>(line.trim()).ok()
}

/// Read every `test2json` event in `text` (other lines are skipped); `None`
/// when there is none (the text is not `go test -json` output).
pub fn parse(text: &str) -> Option<GoTestRun> {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut tests: BTreeMap<(String, String), State> = BTreeMap::new();
    let mut packages: BTreeMap<String, (Option<&'static str>, Option<String>)> = BTreeMap::new();
    let mut seen = false;
    for line in text.lines() {
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        let Some(e) = parse_event(line) else { continue };
        seen = true;
        let Some(test) = e.test.filter(|t| !t.is_empty()) else {
            let pkg = packages.entry(e.package.clone()).or_default();
            match e.action.as_str() {
                "fail" => pkg.0 = Some("fail"),
                "pass" | "skip" => pkg.0 = Some("ok"),
                "output" => {
                    if let Some(why) = e.output.as_deref().and_then(broken_reason) {
                        pkg.1 = Some(why);
                    }
                }
                _ => {}
            }
            continue;
        };
        let key = (e.package, test);
        let state = match e.action.as_str() {
            "run" | "cont" | "pause" | "start" => State::Running,
            "pass" => State::Done(Status::Passed),
            "fail" => State::Done(Status::Failed),
            "skip" => State::Done(Status::Skipped),
            _ => continue,
        };
        match tests.get_mut(&key) {
            Some(s) => {
                // A finished test stays finished (`cont` after the end
                // of a parallel test's parent is not a restart).
                if state != State::Running || *s == State::Running {
                    *s = state;
                }
            }
            None => {
                order.push(key.clone());
                tests.insert(key, state);
            }
        }
    }
    if !seen {
        return None;
    }
    let cases: Vec<TestCase> = order
        .into_iter()
        .map(|key| {
            let status = match tests[&key] {
                State::Done(s) => s,
                State::Running => Status::Error,
            };
            TestCase {
                classname: key.0,
                name: key.1,
                status,
            }
        })
        .collect();
    let broken_packages = packages
        .into_iter()
        .filter(|(name, (result, _))| {
            *result == Some("fail") && !cases.iter().any(|c| &c.classname == name && c.is_red())
        })
        .map(|(name, (_, why))| match why {
            Some(why) => format!("{name} {why}"),
            None => name,
        })
        .collect();
    Some(GoTestRun {
        report: Report { cases },
        broken_packages,
    })
}

/// `[build failed]` / `[setup failed]` from a package's `FAIL pkg [...]`
/// line.
fn broken_reason(output: &str) -> Option<String> {
    let line = output.trim();
    if !line.starts_with("FAIL") {
        return None;
    }
    let start = line.rfind('[')?;
    line[start..]
        .ends_with(']')
        .then(|| line[start..].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(action: &str, pkg: &str, test: &str) -> String {
        if test.is_empty() {
            format!(r#"{{"Time":"2026-01-01T00:00:00Z","Action":"{action}","Package":"{pkg}"}}"#)
        } else {
            format!(
                r#"{{"Time":"2026-01-01T00:00:00Z","Action":"{action}","Package":"{pkg}","Test":"{test}","Elapsed":0.01}}"#
            )
        }
    }

    #[test]
    fn tests_take_their_last_status_and_subtests_count() {
        let text = [
            ev("run", "ex/srv", "TestHost"),
            ev("run", "ex/srv", "TestHost/loopback"),
            ev("pass", "ex/srv", "TestHost/loopback"),
            ev("run", "ex/srv", "TestHost/public"),
            ev("fail", "ex/srv", "TestHost/public"),
            ev("fail", "ex/srv", "TestHost"),
            ev("run", "ex/srv", "TestSkip"),
            ev("skip", "ex/srv", "TestSkip"),
            "# ex/srv: some plain text between events".into(),
            ev("fail", "ex/srv", ""),
        ]
        .join("\n");
        let run = parse(&text).expect("events");
        let ids: Vec<(String, Status)> = run
            .report
            .cases
            .iter()
            .map(|c| (c.id(), c.status))
            .collect();
        assert_eq!(
            ids,
            vec![
                ("ex/srv::TestHost".into(), Status::Failed),
                ("ex/srv::TestHost/loopback".into(), Status::Passed),
                ("ex/srv::TestHost/public".into(), Status::Failed),
                ("ex/srv::TestSkip".into(), Status::Skipped),
            ]
        );
        assert!(run.broken_packages.is_empty());
    }

    #[test]
    fn a_test_cut_short_is_an_error() {
        let text = [ev("run", "p", "TestA"), ev("fail", "p", "")].join("\n");
        let run = parse(&text).unwrap();
        assert_eq!(run.report.cases[0].status, Status::Error);
    }

    #[test]
    fn a_package_that_failed_to_build_adds_no_red_test() {
        let text = [
            "# ex/srv [ex/srv.test]".to_string(),
            "./main.go:3:1: syntax error".to_string(),
            r#"{"Action":"output","Package":"ex/srv","Output":"FAIL\tex/srv [build failed]\n"}"#
                .to_string(),
            ev("fail", "ex/srv", ""),
            ev("run", "ex/other", "TestB"),
            ev("pass", "ex/other", "TestB"),
            ev("pass", "ex/other", ""),
        ]
        .join("\n");
        let run = parse(&text).unwrap();
        assert!(run.report.red().is_empty());
        assert_eq!(run.broken_packages, vec!["ex/srv [build failed]"]);
    }

    #[test]
    fn text_without_events_is_not_go_output() {
        assert!(parse("ok  \tex/srv\t0.01s\n").is_none());
        assert!(parse(r#"{"json": "but not an event"}"#).is_none());
        assert!(is_event(&ev("pass", "p", "T")));
        assert!(!is_event("{not json"));
    }
}
