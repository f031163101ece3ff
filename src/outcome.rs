//! Turning a finished run into a verdict. A verdict is only as good as the
//! signal behind it, so every shortcut to "killed" or "survived" is refused
//! here: exit codes that are not test failures, red suites with no red test,
//! kills by tests other than the expected ones.

use crate::junit::{Report, TestPattern};
use crate::results::Outcome;
use crate::run::{Exit, RunResult};
use crate::spec::TestConfig;

#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub outcome: Outcome,
    pub detail: String,
    pub red_tests: Vec<String>,
    pub tests_total: Option<usize>,
}

fn exit_code_meaning(preset: &str, code: i32) -> &'static str {
    if preset == "pytest" {
        match code {
            2 => " (pytest: interrupted, e.g. a collection error)",
            3 => " (pytest: internal error)",
            4 => " (pytest: usage error, e.g. an unknown option or node id)",
            5 => " (pytest: no tests collected)",
            _ => "",
        }
    } else {
        ""
    }
}

/// Classify a mutant's test run. `junit` is `None` when the test config has no
/// JUnit source, `Some(Err)` when it has one but no readable report appeared.
pub fn classify(
    run: &RunResult,
    cfg: &TestConfig,
    junit: Option<Result<Report, String>>,
    killed_by: &[TestPattern],
    timeout_s: f64,
) -> Verdict {
    let (red_tests, tests_total, report_err) = match &junit {
        Some(Ok(r)) => (
            r.red().iter().map(|c| c.id()).collect::<Vec<_>>(),
            Some(r.total()),
            None,
        ),
        Some(Err(e)) => (Vec::new(), None, Some(e.clone())),
        None => (Vec::new(), None, None),
    };
    let v = |outcome, detail: String| Verdict {
        outcome,
        detail,
        red_tests: red_tests.clone(),
        tests_total,
    };
    match &run.exit {
        Exit::Timeout => v(
            Outcome::Timeout,
            format!(
                "the suite was still running after {timeout_s:.1}s; its process group was killed"
            ),
        ),
        Exit::Interrupted => v(
            Outcome::WrongReason,
            "interrupted before the suite finished".into(),
        ),
        Exit::SpawnFailed(e) => v(
            Outcome::WrongReason,
            format!("the test command could not run: {e}"),
        ),
        Exit::Signal(sig) => v(
            Outcome::WrongReason,
            format!("the test command died from signal {sig} (a crash, not a failing test)"),
        ),
        Exit::Code(0) => v(
            Outcome::Survived,
            "the suite stayed green with the control removed".into(),
        ),
        Exit::Code(code) if !cfg.fail_codes.is_test_failure(*code) => v(
            Outcome::WrongReason,
            format!(
                "exit code {code}{} is not a test failure under the `{}` preset",
                exit_code_meaning(&cfg.preset, *code),
                cfg.preset
            ),
        ),
        Exit::Code(code) => {
            if let Some(e) = report_err {
                return v(
                    Outcome::WrongReason,
                    format!("exit code {code} but no JUnit report was written ({e}): the suite broke before reporting"),
                );
            }
            if junit.is_some() && red_tests.is_empty() {
                return v(
                    Outcome::WrongReason,
                    format!(
                        "exit code {code} but the JUnit report shows 0 failed of {} tests: something other than a test turned it red (coverage gate, collection error, plugin)",
                        tests_total.unwrap_or(0)
                    ),
                );
            }
            if killed_by.is_empty() {
                let detail = if junit.is_some() {
                    format!(
                        "{} of {} tests failed",
                        red_tests.len(),
                        tests_total.unwrap_or(0)
                    )
                } else {
                    format!(
                        "the suite failed (exit code {code}; no JUnit report, tests not counted)"
                    )
                };
                return v(Outcome::Killed, detail);
            }
            let report = junit.and_then(Result::ok).unwrap_or_default();
            let hits: Vec<String> = report
                .red()
                .iter()
                .filter(|c| killed_by.iter().any(|p| p.matches(c)))
                .map(|c| c.id())
                .collect();
            if hits.is_empty() {
                v(
                    Outcome::WrongReason,
                    format!(
                        "red, but none of the expected killers failed (expected: {}); failed instead: {}{}",
                        killed_by.iter().map(|p| p.raw()).collect::<Vec<_>>().join(", "),
                        red_tests.iter().take(3).cloned().collect::<Vec<_>>().join(", "),
                        if red_tests.len() > 3 { format!(" (+{} more)", red_tests.len() - 3) } else { String::new() }
                    ),
                )
            } else {
                v(Outcome::Killed, format!("killed by {}", hits.join(", ")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::junit::parse;
    use crate::spec::{Command, FailCodes, TimeoutSetting};
    use std::time::Duration;

    fn cfg(preset: &str, codes: FailCodes) -> TestConfig {
        TestConfig {
            command: Command::Shell("x".into()),
            junit: Some("{junit}".into()),
            timeout: TimeoutSetting::Auto,
            env: Default::default(),
            fail_codes: codes,
            preset: preset.into(),
            check: None,
        }
    }
    fn run(exit: Exit) -> RunResult {
        RunResult {
            exit,
            duration: Duration::from_millis(10),
        }
    }
    const ONE_RED: &str = r#"<testsuite><testcase classname="t.m" name="a"><failure/></testcase><testcase classname="t.m" name="b"/></testsuite>"#;
    const NONE_RED: &str = r#"<testsuite><testcase classname="t.m" name="a"/></testsuite>"#;

    #[test]
    fn pytest_exit_codes_other_than_1_are_wrong_reason() {
        let c = cfg("pytest", FailCodes::Only(vec![1]));
        for code in [2, 3, 4, 5] {
            let v = classify(&run(Exit::Code(code)), &c, Some(parse(ONE_RED)), &[], 1.0);
            assert_eq!(v.outcome, Outcome::WrongReason, "exit {code}");
        }
        let v = classify(&run(Exit::Code(1)), &c, Some(parse(ONE_RED)), &[], 1.0);
        assert_eq!(v.outcome, Outcome::Killed);
        assert_eq!(v.red_tests, vec!["t.m::a"]);
        assert_eq!(v.tests_total, Some(2));
    }

    #[test]
    fn red_exit_with_no_red_test_is_wrong_reason() {
        let c = cfg("generic", FailCodes::AnyNonZero);
        let v = classify(&run(Exit::Code(1)), &c, Some(parse(NONE_RED)), &[], 1.0);
        assert_eq!(v.outcome, Outcome::WrongReason);
        assert!(v.detail.contains("0 failed of 1"), "{}", v.detail);
    }

    #[test]
    fn missing_report_is_wrong_reason() {
        let c = cfg("generic", FailCodes::AnyNonZero);
        let v = classify(&run(Exit::Code(1)), &c, Some(Err("gone".into())), &[], 1.0);
        assert_eq!(v.outcome, Outcome::WrongReason);
    }

    #[test]
    fn killed_by_decides() {
        let c = cfg("generic", FailCodes::AnyNonZero);
        let yes = [TestPattern::new("t.m::a")];
        let no = [TestPattern::new("t.m::b")];
        assert_eq!(
            classify(&run(Exit::Code(1)), &c, Some(parse(ONE_RED)), &yes, 1.0).outcome,
            Outcome::Killed
        );
        assert_eq!(
            classify(&run(Exit::Code(1)), &c, Some(parse(ONE_RED)), &no, 1.0).outcome,
            Outcome::WrongReason
        );
    }

    #[test]
    fn green_timeout_signal() {
        let c = cfg("generic", FailCodes::AnyNonZero);
        assert_eq!(
            classify(&run(Exit::Code(0)), &c, Some(parse(NONE_RED)), &[], 1.0).outcome,
            Outcome::Survived
        );
        assert_eq!(
            classify(&run(Exit::Timeout), &c, None, &[], 1.0).outcome,
            Outcome::Timeout
        );
        assert_eq!(
            classify(&run(Exit::Signal(11)), &c, None, &[], 1.0).outcome,
            Outcome::WrongReason
        );
    }

    #[test]
    fn without_junit_exit_code_decides() {
        let mut c = cfg("generic", FailCodes::AnyNonZero);
        c.junit = None;
        assert_eq!(
            classify(&run(Exit::Code(1)), &c, None, &[], 1.0).outcome,
            Outcome::Killed
        );
    }
}
