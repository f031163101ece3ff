//! JUnit XML: one testsuite `unguard`, one testcase per mutant, for the test
//! tabs of GitLab, Jenkins, Azure DevOps and the GitHub JUnit report actions.
//!
//! | outcome                                     | testcase                                  |
//! |---------------------------------------------|-------------------------------------------|
//! | killed                                      | passed, with its time                     |
//! | survived, wrong-reason, flaky               | `<failure type="survived|wrong-reason|flaky">` |
//! | no-coverage                                 | `<failure type="no-coverage">`: no test executes the mutated lines |
//! | timeout, `--timeout-is survived` or `error` | `<failure type="timeout">`                |
//! | timeout, `--timeout-is killed`              | passed (detected)                         |
//! | unreached, no-op, ambiguous                 | `<error type="…">`: the spec or the setup is wrong |
//! | unviable                                    | `<skipped type="unviable">`               |
//! | allowed by `gate.allow`                     | `<skipped type="allowed" message="allowed: <reason>">` |
//!
//! `name` is the mutation id, `classname` the control (GitLab shows it as the
//! suite column, Jenkins as the class), plus `file` (relative to the directory
//! unguard ran in, like SARIF) and `line` attributes. `system-out` holds the
//! control, rule, site, outcome and detail; for everything but a kill also the
//! diff and the tests that ran. Timestamps come from
//! `started_at`, never from the clock, so the report renders the same twice.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use crate::error::{Error, Result};
use crate::results::{MutantResult, Outcome, Results, TimeoutPolicy};

use super::sarif::repo_path;

/// What a mutant becomes in JUnit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A passed testcase: the mutant was detected.
    Pass,
    /// `<failure>`: an undetected mutant (survived, no-coverage,
    /// wrong-reason, flaky, or a timeout not counted as killed).
    Failure,
    /// `<error>`: the spec or the setup is wrong (unreached, no-op, ambiguous,
    /// internal error).
    Error,
    /// `<skipped>`: unviable, or excused by `gate.allow`.
    Skipped,
}

/// The testcase kind of mutant `m` under timeout policy `policy` (the table
/// in the module doc).
pub fn kind(m: &MutantResult, policy: TimeoutPolicy) -> Kind {
    if m.is_allowed() {
        return Kind::Skipped;
    }
    match m.outcome {
        Outcome::Killed => Kind::Pass,
        Outcome::Survived | Outcome::NoCoverage | Outcome::WrongReason | Outcome::Flaky => {
            Kind::Failure
        }
        Outcome::Timeout if policy == TimeoutPolicy::Killed => Kind::Pass,
        Outcome::Timeout => Kind::Failure,
        Outcome::Unreached | Outcome::NoOp | Outcome::Ambiguous | Outcome::InternalError => {
            Kind::Error
        }
        Outcome::Unviable => Kind::Skipped,
    }
}

/// Characters XML 1.0 cannot carry at all (quick-junit already drops the C0
/// controls).
fn xml_safe(s: &str) -> String {
    s.replace(['\u{FFFE}', '\u{FFFF}'], "")
}

fn seconds(s: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(s).ok()
}

fn site(results: &Results, m: &MutantResult) -> String {
    let path = repo_path(&results.root, &m.file);
    match m.location {
        Some(loc) => format!("{path}:{}:{}", loc.start.line, loc.start.column),
        None if m.line > 0 => format!("{path}:{}", m.line),
        None => path,
    }
}

/// `1/26 red: a, b`; `None` when there is nothing to say (no JUnit report and
/// no red test, e.g. a timeout or a mutant that never ran).
fn tests_line(m: &MutantResult) -> Option<String> {
    let (red, _) = m.red_count();
    let count = match m.tests_total {
        Some(_) => format!("{} red", m.red_of_total()),
        None if red == 0 => return None,
        None => format!("{} red", m.red_of_total()),
    };
    Some(if m.red_tests.is_empty() {
        count
    } else {
        format!("{count}: {}", m.red_tests.join(", "))
    })
}

fn info(results: &Results, m: &MutantResult) -> String {
    let mut rows: Vec<(&str, String)> =
        vec![("mutant", m.id.clone()), ("control", m.control.clone())];
    if let Some(rule) = &m.rule {
        rows.push(("rule", rule.clone()));
    }
    rows.push(("site", site(results, m)));
    rows.push(("outcome", m.outcome.as_str().to_string()));
    if let Some(reason) = m.allowed.as_deref().filter(|_| m.is_allowed()) {
        rows.push(("allowed", reason.to_string()));
    }
    rows.push(("detail", m.detail.clone()));
    if let Some(tests) = tests_line(m) {
        rows.push(("tests", tests));
    }
    if let Some(exit) = &m.exit {
        rows.push(("exit", exit.clone()));
    }
    if let Some(command) = &m.command {
        rows.push(("command", command.clone()));
    }
    rows.push(("spec", m.spec_pos.clone()));
    rows.iter()
        .map(|(k, v)| format!("{:<9}{v}\n", format!("{k}:")))
        .collect()
}

fn system_out(results: &Results, m: &MutantResult) -> String {
    let mut out = info(results, m);
    if m.outcome != Outcome::Killed {
        if let Some(diff) = m.diff.as_deref().filter(|d| !d.is_empty()) {
            out.push('\n');
            out.push_str(diff);
            if !diff.ends_with('\n') {
                out.push('\n');
            }
        }
        if !m.tests_ran.is_empty() {
            out.push_str(&format!("\ntests that ran ({}):\n", m.tests_ran.len()));
            for t in &m.tests_ran {
                out.push_str(&format!("  {t}\n"));
            }
        }
    }
    out
}

fn status(results: &Results, m: &MutantResult) -> TestCaseStatus {
    let policy = results.timeout_policy;
    let outcome = m.outcome.as_str();
    let mut status = match kind(m, policy) {
        Kind::Pass => return TestCaseStatus::success(),
        Kind::Failure => TestCaseStatus::non_success(NonSuccessKind::Failure),
        Kind::Error => TestCaseStatus::non_success(NonSuccessKind::Error),
        Kind::Skipped => TestCaseStatus::skipped(),
    };
    match m.allowed.as_deref().filter(|_| m.is_allowed()) {
        Some(reason) => {
            status
                .set_type("allowed")
                .set_message(xml_safe(&format!("allowed: {reason}")))
                .set_description(xml_safe(&format!(
                    "{outcome}, excused by gate.allow: {reason}\n{}",
                    m.detail
                )));
        }
        None => {
            let message = match (m.outcome, policy) {
                (Outcome::Timeout, TimeoutPolicy::Survived) => {
                    format!("timeout (counted as survived): {}", m.detail)
                }
                (Outcome::Timeout, TimeoutPolicy::Error) => {
                    format!("timeout (--timeout-is error): {}", m.detail)
                }
                _ => format!("{outcome}: {}", m.detail),
            };
            status
                .set_type(outcome)
                .set_message(xml_safe(&message))
                .set_description(xml_safe(&match tests_line(m) {
                    Some(tests) => format!("{}\n{}\ntests: {tests}", m.control, m.detail),
                    None => format!("{}\n{}", m.control, m.detail),
                }));
        }
    }
    status
}

fn test_case(results: &Results, m: &MutantResult) -> TestCase {
    let mut tc = TestCase::new(xml_safe(&m.id), status(results, m));
    tc.set_classname(xml_safe(&m.control));
    if let Some(d) = seconds(m.duration_s) {
        tc.set_time(d);
    }
    tc.extra.insert(
        "file".into(),
        xml_safe(&repo_path(&results.root, &m.file)).into(),
    );
    if m.line > 0 {
        tc.extra.insert("line".into(), m.line.to_string().into());
    }
    tc.set_system_out(xml_safe(&system_out(results, m)));
    tc
}

/// The JUnit XML report of a run: one testsuite `unguard` with the run's
/// properties and one testcase per mutant.
pub fn render(results: &Results) -> Result<String> {
    let started = results
        .started_at
        .as_deref()
        .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok());
    let mut suite = TestSuite::new("unguard");
    if let Some(t) = started {
        suite.set_timestamp(t);
    }
    if let Some(d) = seconds(results.duration_s) {
        suite.set_time(d);
    }
    let policy = match results.timeout_policy {
        TimeoutPolicy::Killed => "killed",
        TimeoutPolicy::Survived => "survived",
        TimeoutPolicy::Error => "error",
    };
    let s = &results.summary;
    let score = s.score.map(|v| format!("{v:.1}")).unwrap_or_default();
    for (name, value) in [
        ("unguard.version", results.unguard_version.clone()),
        ("unguard.spec", results.spec.clone()),
        ("unguard.root", results.root.clone()),
        ("unguard.timeout_is", policy.to_string()),
        ("unguard.score", score),
        ("unguard.summary", s.line()),
        ("unguard.gate_exit_code", results.gate.exit_code.to_string()),
    ] {
        suite.add_property(Property::new(name, xml_safe(&value)));
    }
    for m in &results.mutants {
        suite.add_test_case(test_case(results, m));
    }
    let mut report = Report::new("unguard");
    if let Some(t) = started {
        report.set_timestamp(t);
    }
    if let Some(d) = seconds(results.duration_s) {
        report.set_time(d);
    }
    report.add_test_suite(suite);
    report
        .to_string()
        .map_err(|e| Error::Internal(format!("serializing the JUnit report: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::{mutant, results};

    #[test]
    fn no_coverage_is_a_failure_that_says_no_test_executes_it() {
        let mut m = mutant("c", Outcome::NoCoverage);
        m.detail = crate::outcome::no_coverage("f.py", &[3], 4).detail();
        for policy in [
            TimeoutPolicy::Killed,
            TimeoutPolicy::Survived,
            TimeoutPolicy::Error,
        ] {
            assert_eq!(kind(&m, policy), Kind::Failure, "{policy:?}");
        }
        let xml = render(&results(vec![m.clone()])).unwrap();
        assert!(xml.contains(r#"failures="1""#), "{xml}");
        assert!(
            xml.contains(r#"<failure message="no-coverage: no test executes line 3 of f.py (coverage run: 4 tests measured); nothing ran" type="no-coverage">"#),
            "{xml}"
        );
        // Allowed, it is skipped like an allowed survivor.
        m.allowed = Some("e2e only".into());
        assert_eq!(kind(&m, TimeoutPolicy::Killed), Kind::Skipped);
    }
}
