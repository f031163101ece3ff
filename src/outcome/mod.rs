//! Every verdict rule, in one place: why a mutant is killed, survived,
//! no-coverage, timeout, wrong-reason, flaky, unviable, no-op, ambiguous,
//! unreached or an internal error, and when a baseline or canary counts as
//! green or red.
//! A verdict is only as good as the signal behind it, so every shortcut to
//! "killed" or "survived" is refused here: exit codes that are not test
//! failures, red suites with no red test, kills by tests other than the
//! expected ones. The functions are pure: the engine runs things and hands
//! over what happened; this module decides what it means.

pub mod kinds;
pub mod network_hint;
pub mod reading;
pub mod reason;

pub use kinds::{Outcome, ReasonKind, SubsetStage};
pub use reason::{Derived, Reason};

use crate::mutate::ApplyProblem;
use crate::outcome::reading::model::{Report, TestPattern};
use crate::outcome::reading::suite_log::Observed;
use crate::outcome::reading::Reading;
use crate::run::{Exit, RunResult};
use crate::spec::{FailCodes, Preset, TestConfig};

/// A verdict and what backs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Always its reason's outcome ([`ReasonKind::outcome`]).
    pub outcome: Outcome,
    /// Why: the rule and the facts it names ([`Verdict::detail`] says it).
    pub reason: Reason,
    /// JUnit ids of the tests that failed or errored.
    pub red_tests: Vec<String>,
    /// Tests in the run's JUnit report, when there is one.
    pub tests_total: Option<usize>,
    /// A kill's red tests as only the runner's summary line counted them
    /// (no per-test report names them).
    pub red_counted: Option<usize>,
    /// For findings (not killed): every test in the report, i.e. the tests
    /// that ran and did not catch the mutant.
    pub tests_ran: Vec<String>,
}

impl Verdict {
    /// A verdict with no test run behind it.
    pub fn bare(reason: Reason) -> Verdict {
        Verdict {
            outcome: reason.kind().outcome(),
            reason,
            red_tests: Vec::new(),
            tests_total: None,
            red_counted: None,
            tests_ran: Vec::new(),
        }
    }

    /// Why, in one or two sentences: a mutant's `detail`.
    pub fn detail(&self) -> String {
        self.reason.to_string()
    }

    /// This verdict with another reason (and its outcome); the facts of
    /// the run stay.
    fn because(self, reason: Reason) -> Verdict {
        Verdict {
            outcome: reason.kind().outcome(),
            reason,
            ..self
        }
    }
}

/// Classify a mutant's test run from how it ended and what its JUnit source
/// gave. The exit code's table is the spec's preset's (pytest's only when
/// the command names pytest itself: a wrapper such as `make test` owns its
/// exit codes); a per-test report, when there is one, decides which tests
/// went red.
pub fn classify(
    run: &RunResult,
    cfg: &TestConfig,
    junit: &Reading,
    killed_by: &[TestPattern],
    timeout_s: f64,
) -> Verdict {
    let mut v = classify_exit(run, cfg, junit, killed_by, timeout_s);
    if let Some(r) = junit.report() {
        v.red_tests = r.red_ids();
        if v.outcome != Outcome::Killed {
            v.tests_ran = junit.test_ids();
        }
    }
    v.tests_total = junit.tests_total();
    if v.outcome == Outcome::Killed && v.red_tests.is_empty() {
        v.red_counted = junit.summary_red().filter(|n| *n > 0);
    }
    v
}

fn classify_exit(
    run: &RunResult,
    cfg: &TestConfig,
    junit: &Reading,
    killed_by: &[TestPattern],
    timeout_s: f64,
) -> Verdict {
    let v = Verdict::bare;
    match &run.exit {
        Exit::Timeout => v(Reason::Hang { timeout_s }),
        Exit::Interrupted => v(Reason::Interrupted),
        Exit::SpawnFailed(e) => v(Reason::CouldNotRun(e.clone())),
        Exit::Signal(sig) => v(Reason::Signal(*sig)),
        Exit::Code(0) => v(Reason::SuiteGreen),
        Exit::Code(code) if crash_signal(cfg, *code).is_some() => v(Reason::ShellSignal(*code)),
        Exit::Code(code) if !cfg.fail_codes.is_test_failure(*code) => v(Reason::NotATestFailure {
            code: *code,
            preset: cfg.preset,
        }),
        Exit::Code(code) => classify_red(*code, junit, killed_by),
    }
}

/// The signal behind exit code `code` when it is a shell's report of a
/// death by signal (128 + N, N a signal number): a suite run through
/// `sh -c` (or a wrapper script) that crashes exits 137 or 139 where the
/// same suite as an argv command dies of the signal itself, and both are the
/// same crash. `None` when the spec lists the code in `fail_codes` itself.
pub fn crash_signal(cfg: &TestConfig, code: i32) -> Option<i32> {
    const SIGRTMAX: i32 = 64;
    let listed = matches!(&cfg.fail_codes, FailCodes::Only(codes) if codes.contains(&code));
    (code > 128 && code <= 128 + SIGRTMAX && !listed).then_some(code - 128)
}

/// A red run whose exit code is a test failure: killed only when the JUnit
/// report (if any) shows red tests, and the expected ones among them.
fn classify_red(code: i32, junit: &Reading, killed_by: &[TestPattern]) -> Verdict {
    let v = Verdict::bare;
    let report = match junit {
        Reading::Unreadable(e) => {
            return v(Reason::NoJunitReport {
                code,
                error: e.to_string(),
            })
        }
        Reading::Read(r) => Some(r),
        Reading::NotConfigured => None,
        Reading::Observed(o) => match observed_red(code, o, killed_by) {
            Some(verdict) => return verdict,
            None => o.report.as_ref(),
        },
    };
    // A module that failed to load is no failing test: it decides the run
    // only when no real test failed beside it (unittest, the demo's runner
    // and `--continue-on-collection-errors` run the other modules' tests).
    let real_red = report.map_or(0, |r| r.red().len() - r.load_errors().len());
    if let Some(broken) = report
        .filter(|_| real_red == 0)
        .and_then(|r| r.load_errors().first().copied())
    {
        return v(Reason::LoadErrorInReport {
            code,
            module: broken.id(),
        });
    }
    let red_tests = report.map(Report::red_ids).unwrap_or_default();
    let total = report.map_or(0, Report::total);
    if report.is_some() && red_tests.is_empty() {
        return v(Reason::NoFailedTestInReport { code, total });
    }
    if killed_by.is_empty() {
        return v(match report {
            Some(_) => Reason::TestsFailed {
                red: red_tests.len(),
                total,
            },
            None => Reason::SuiteFailedNoReport { code },
        });
    }
    let hits: Vec<String> = report
        .map(|r| {
            r.red()
                .iter()
                .filter(|c| killed_by.iter().any(|p| p.matches(c)))
                .map(|c| c.id())
                .collect()
        })
        .unwrap_or_default();
    if hits.is_empty() {
        v(Reason::OtherTestsFailed {
            expected: killed_by.iter().map(|p| p.raw().to_string()).collect(),
            red: red_tests,
        })
    } else {
        v(Reason::KilledBy(hits))
    }
}

/// A red run without `test.junit` whose log shows the runner: killed only
/// when its report or summary line shows a failed (or errored) test; all
/// green with a red exit is a coverage threshold, a test file that failed to
/// load, a plugin. `None` leaves `killed_by` to [`classify_red`], against
/// the report pytest wrote (if any).
fn observed_red(code: i32, o: &Observed, killed_by: &[TestPattern]) -> Option<Verdict> {
    if let Some(r) = &o.report {
        // The per-test report decides (`total` and `red` are its counts):
        // text lines never add red tests to it. A module that failed to
        // load there is `classify_red`'s to say.
        if !r.load_errors().is_empty() {
            return None;
        }
    } else if let Some(line) = &o.load_error {
        return Some(Verdict::bare(Reason::LoadErrorInLog {
            code,
            runner: o.load_error_runner().to_string(),
            line: line.to_string(),
        }));
    }
    let (Some(total), Some(red)) = (o.total(), o.red()) else {
        return Some(Verdict::bare(Reason::SuiteFailedNoSummary {
            code,
            runners: o.runner_names().to_string(),
        }));
    };
    if red == 0 {
        return Some(Verdict::bare(Reason::NoFailedTestCounted {
            code,
            source: o.source().to_string(),
            total,
        }));
    }
    killed_by.is_empty().then(|| {
        Verdict::bare(Reason::TestsCounted {
            red,
            total,
            source: o.source().to_string(),
        })
    })
}

/// The mutation was written, but the file on disk did not change.
pub fn no_op_on_disk() -> Verdict {
    Verdict::bare(Reason::UnchangedOnDisk)
}

/// The mutant failed `test.check` with this exit: it proves nothing.
pub fn unviable(check: &Exit) -> Verdict {
    Verdict::bare(Reason::CheckFailed {
        exit: check.describe(),
    })
}

/// A survivor whose re-check `k` of `rechecks` (log `log`) went another
/// way: the suite is flaky for this mutant, so neither verdict is proof.
/// The first run's facts stay; the red tests are the re-check's.
pub fn flaky(first: Verdict, k: usize, rechecks: usize, again: Verdict, log: &str) -> Verdict {
    Verdict {
        red_tests: again.red_tests,
        ..first
    }
    .because(Reason::derived(Derived::SurvivorNotReproduced {
        k,
        rechecks,
        again: again.reason,
        log: log.to_string(),
    }))
}

/// Emptying `file` left the suite green: it does not run this copy.
pub fn unreached(file: &str) -> Verdict {
    Verdict::bare(Reason::CanaryGreen {
        file: file.to_string(),
    })
}

/// The per-test coverage run (`tests_measured` tests) shows no test
/// executing the mutated `lines` of `file`: no test can catch the mutant, so
/// the suite is not run for it. A finding, counted like a survivor.
pub fn no_coverage(file: &str, lines: &[usize], tests_measured: usize) -> Verdict {
    Verdict::bare(Reason::NoTestExecutes {
        file: file.to_string(),
        lines: lines.to_vec(),
        tests_measured,
    })
}

/// unguard failed on this mutant (a panic in its own code).
pub fn internal_error(why: &str) -> Verdict {
    Verdict::bare(Reason::InternalError(why.to_string()))
}

/// A mutation that never applied: ambiguous, or a no-op (nothing matched,
/// identical replacement, binary file).
pub fn rejected(problem: &ApplyProblem) -> Verdict {
    Verdict::bare(Reason::Rejected(problem.clone()))
}

/// What a finished canary (its file emptied) showed, for the mutants of
/// that file.
#[derive(Debug, Clone, Default)]
pub struct CanaryFinding {
    /// Red or hung: the suite runs this copy of the file.
    pub reached: bool,
    /// The canary's JUnit report, when one was read.
    pub report: Option<Report>,
    /// Whether a canary ran at all (not `--no-canary`, a mutation's
    /// `canary: false`, or a canary job that failed).
    pub ran: bool,
}

impl CanaryFinding {
    /// A (file, test) pair without a canary counts as reached.
    pub fn no_canary() -> CanaryFinding {
        CanaryFinding {
            reached: true,
            report: None,
            ran: false,
        }
    }
}

/// Whether the canary of `file` makes a mutant with these expected killers
/// `unreached`: the canary stayed green (the suite does not run this copy),
/// or its report shows that none of the mutant's `killed_by` tests went
/// red with the file emptied: they stayed green, or did not run at all
/// (`-x`, `--maxfail`). Those tests do not exercise this copy (e.g. an
/// editable install points them at the checkout while another test reads
/// the copy), so a green mutant run would prove nothing.
pub fn canary_unreached(
    file: &str,
    killed_by: &[TestPattern],
    canary: &CanaryFinding,
) -> Option<Verdict> {
    if !canary.reached {
        return Some(unreached(file));
    }
    let report = canary.report.as_ref()?;
    if killed_by.is_empty() {
        return None;
    }
    let expected =
        |c: &crate::outcome::reading::model::TestCase| killed_by.iter().any(|p| p.matches(c));
    if report.red().into_iter().any(expected) {
        return None;
    }
    let ran: Vec<String> = report
        .cases
        .iter()
        .filter(|c| expected(c))
        .map(|c| c.id())
        .collect();
    // Not run because their module failed to import or collect with the
    // file emptied, or because no test ran at all (the build broke: `cargo
    // test`, `go test`): that is reach.
    let broken = |p: &TestPattern| report.cases.iter().any(|c| p.contained_in_error(c));
    let nothing_ran = report
        .cases
        .iter()
        .all(crate::outcome::reading::model::TestCase::is_load_error);
    if ran.is_empty() && (nothing_ran || killed_by.iter().any(broken)) {
        return None;
    }
    Some(Verdict::bare(Reason::KillersNotReached {
        file: file.to_string(),
        killers: killed_by.iter().map(|p| p.raw().to_string()).collect(),
        ran,
    }))
}

/// A mutant's verdict once its file's canary is done: `None` when it
/// stands, else the `unreached` verdict that replaces it (see
/// [`canary_unreached`]). An internal error always stands (it is about
/// unguard, not the suite).
pub fn after_canary(
    outcome: Outcome,
    file: &str,
    killed_by: &[TestPattern],
    canary: &CanaryFinding,
) -> Option<Verdict> {
    if outcome == Outcome::InternalError {
        return None;
    }
    canary_unreached(file, killed_by, canary)
}

/// A verdict (killed or timeout) that a run of a subset of the suite
/// decided (kill-first): said so in its detail. The full suite did not
/// run; the subset ran green on the unmutated copy before.
pub fn by_subset(v: Verdict, stage: SubsetStage, n: usize) -> Verdict {
    let verdict = v.reason.clone();
    v.because(Reason::derived(Derived::BySubset {
        verdict,
        stage,
        tests: n,
    }))
}

/// A kill that did not reproduce: re-check `k` of `rechecks` (log `log`)
/// was not red for the right reason, so the kill is no proof. The first
/// run's facts stay; the red tests are the first run's.
pub fn unconfirmed_kill(
    first: Verdict,
    k: usize,
    rechecks: usize,
    again: Verdict,
    log: &str,
) -> Verdict {
    let reason = Reason::derived(Derived::KillNotReproduced {
        first: first.reason.clone(),
        k,
        rechecks,
        again: again.reason,
        log: log.to_string(),
    });
    first.because(reason)
}

/// A hang (`first`, a timeout) and its confirmation run (`again`, the same
/// tests, alone on the machine): a second hang confirms it, with the
/// confirmation named; anything else makes it `flaky`, as a kill that does
/// not reproduce is.
pub fn confirmed_hang(first: Verdict, again: Verdict, log: &str) -> Verdict {
    let first_reason = first.reason.clone();
    let log = log.to_string();
    let reason = Reason::derived(if again.outcome == Outcome::Timeout {
        Derived::HangConfirmed {
            first: first_reason,
            log,
        }
    } else {
        Derived::HangNotReproduced {
            first: first_reason,
            again: again.reason,
            log,
        }
    });
    first.because(reason)
}

/// What a canary run (the file emptied) shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CanaryVerdict {
    /// Red or hung: the suite runs this file.
    Reached,
    /// Green with the file emptied: the suite does not run this copy.
    Unreached,
    /// Stopped by Ctrl-C: no verdict.
    Interrupted,
    /// The command could not start: an error of the run, not a verdict.
    CouldNotRun(String),
}

/// What a canary run that ended so shows: red or hung is reach, green is
/// not; Ctrl-C and a command that could not start give no verdict.
pub fn canary(exit: &Exit) -> CanaryVerdict {
    match exit {
        Exit::Interrupted => CanaryVerdict::Interrupted,
        Exit::SpawnFailed(e) => CanaryVerdict::CouldNotRun(e.clone()),
        Exit::Code(0) => CanaryVerdict::Unreached,
        _ => CanaryVerdict::Reached,
    }
}

/// What an unmutated run of the suite shows.
#[derive(Debug)]
pub enum BaselineVerdict {
    /// Green; the JUnit report when one is configured (`None`: tests are
    /// not counted).
    Green(Option<Report>),
    /// Stopped by Ctrl-C.
    Interrupted,
    /// Not usable: every verdict would be meaningless. `tail` says whether
    /// the end of the log helps explain it.
    Red {
        /// Why the baseline is unusable: the error's sentence.
        reason: String,
        /// Whether the end of the log helps explain it (the error then
        /// shows its last lines).
        tail: bool,
    },
}

/// Judge a baseline run: green only when the exit is 0 and the JUnit report
/// (when configured) is readable, counts at least one test and none red.
/// Without `test.junit`, a run whose log (or the report pytest wrote for
/// unguard) counts zero tests is red too.
pub fn baseline(exit: &Exit, cfg: &TestConfig, junit: Reading) -> BaselineVerdict {
    let red = |reason: String, tail: bool| BaselineVerdict::Red { reason, tail };
    match exit {
        Exit::Interrupted => return BaselineVerdict::Interrupted,
        Exit::Code(0) => {}
        Exit::Code(5) if cfg.preset == Preset::Pytest => {
            return red(
                "the baseline ran no tests (pytest exit 5: no tests collected); every mutant would survive.".into(),
                true,
            )
        }
        other => {
            return red(
                format!(
                    "the unmutated suite is not green ({}): fix the suite first, a red baseline makes every verdict meaningless.",
                    other.describe()
                ),
                true,
            )
        }
    }
    match junit {
        Reading::NotConfigured => BaselineVerdict::Green(None),
        Reading::Observed(o) if o.total() == Some(0) => red(
            format!(
                "the baseline ran 0 tests ({} counts none): every mutant would survive.",
                o.source()
            ),
            true,
        ),
        // Green stays green: only a run of zero tests is refused here (a
        // wrapper may well ignore a red pytest on purpose).
        Reading::Observed(o) => BaselineVerdict::Green(o.report),
        Reading::Unreadable(e) => red(
            format!(
                "the baseline wrote no readable JUnit report ({e}); pass {{junit}} to the test command, e.g. `pytest --junitxml={{junit}}`."
            ),
            false,
        ),
        Reading::Read(r) if r.total() == 0 => red(
            "the baseline ran 0 tests (JUnit report is empty): every mutant would survive.".into(),
            false,
        ),
        Reading::Read(r) if !r.red().is_empty() => {
            let red_ids = r.red_ids();
            red(
                format!(
                    "the baseline exited 0 but its JUnit report has {} red test(s): {}",
                    red_ids.len(),
                    red_ids.join(", ")
                ),
                false,
            )
        }
        Reading::Read(r) => BaselineVerdict::Green(Some(r)),
    }
}

/// A tightening mutant's verdict: a survivor is a missing positive twin
/// (no test proves the dropped class is still accepted).
pub fn tightening(v: Verdict) -> Verdict {
    match v.reason {
        Reason::SuiteGreen => v.because(Reason::NoPositiveTwin),
        _ => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::reading::junit::parse;
    use crate::spec::{Command, TimeoutSetting};
    use std::time::Duration;

    fn cfg(preset: &str, codes: FailCodes) -> TestConfig {
        let preset = Preset::named(preset).unwrap();
        TestConfig {
            command: Command::Shell("x".into()),
            junit: Some("{junit}".into()),
            timeout: TimeoutSetting::Auto,
            env: Default::default(),
            fail_codes: codes,
            preset,
            check: None,
            git: Default::default(),
            select: Default::default(),
        }
    }
    fn run(exit: Exit) -> RunResult {
        RunResult {
            forked: false,
            exit,
            duration: Duration::from_millis(10),
        }
    }
    fn read(xml: &str) -> Reading {
        Reading::Read(parse(xml).unwrap())
    }
    const ONE_RED: &str = r#"<testsuite><testcase classname="t.m" name="a"><failure/></testcase><testcase classname="t.m" name="b"/></testsuite>"#;
    const NONE_RED: &str = r#"<testsuite><testcase classname="t.m" name="a"/></testsuite>"#;
    /// The rule behind a verdict.
    fn kind(v: &Verdict) -> ReasonKind {
        v.reason.kind()
    }

    #[test]
    fn pytest_exit_codes_other_than_1_are_wrong_reason() {
        let c = cfg("pytest", FailCodes::Only(vec![1]));
        for code in [2, 3, 4, 5] {
            let v = classify(&run(Exit::Code(code)), &c, &read(ONE_RED), &[], 1.0);
            assert_eq!(v.outcome, Outcome::WrongReason, "exit {code}");
            assert_eq!(kind(&v), ReasonKind::ExitCodeNotTestFailure, "exit {code}");
        }
        let v = classify(&run(Exit::Code(1)), &c, &read(ONE_RED), &[], 1.0);
        assert_eq!(v.outcome, Outcome::Killed);
        assert_eq!(v.reason, Reason::TestsFailed { red: 1, total: 2 });
        assert_eq!(v.red_tests, vec!["t.m::a"]);
        assert_eq!(v.tests_total, Some(2));
    }

    #[test]
    fn red_exit_with_no_red_test_is_wrong_reason() {
        let c = cfg("generic", FailCodes::AnyNonZero);
        let v = classify(&run(Exit::Code(1)), &c, &read(NONE_RED), &[], 1.0);
        assert_eq!(v.outcome, Outcome::WrongReason);
        assert_eq!(v.reason, Reason::NoFailedTestInReport { code: 1, total: 1 });
        assert_eq!(
            v.detail(),
            "exit code 1 but the JUnit report shows 0 failed of 1 tests: something other than a test turned it red (coverage gate, collection error, plugin)"
        );
    }

    #[test]
    fn missing_report_is_wrong_reason() {
        let c = cfg("generic", FailCodes::AnyNonZero);
        let v = classify(
            &run(Exit::Code(1)),
            &c,
            &Reading::Unreadable(crate::outcome::reading::model::ReportError::NotJunit),
            &[],
            1.0,
        );
        assert_eq!(v.outcome, Outcome::WrongReason);
        assert_eq!(kind(&v), ReasonKind::NoJunitReport);
    }

    #[test]
    fn killed_by_decides() {
        let c = cfg("generic", FailCodes::AnyNonZero);
        let yes = [TestPattern::new("t.m::a")];
        let no = [TestPattern::new("t.m::b")];
        let v = classify(&run(Exit::Code(1)), &c, &read(ONE_RED), &yes, 1.0);
        assert_eq!(v.outcome, Outcome::Killed);
        assert_eq!(v.reason, Reason::KilledBy(vec!["t.m::a".into()]));
        let v = classify(&run(Exit::Code(1)), &c, &read(ONE_RED), &no, 1.0);
        assert_eq!(v.outcome, Outcome::WrongReason);
        assert_eq!(
            v.reason,
            Reason::OtherTestsFailed {
                expected: vec!["t.m::b".into()],
                red: vec!["t.m::a".into()]
            }
        );
    }

    #[test]
    fn green_timeout_signal() {
        let c = cfg("generic", FailCodes::AnyNonZero);
        let of = |exit: Exit| classify(&run(exit), &c, &read(NONE_RED), &[], 1.0);
        for (exit, outcome, reason) in [
            (Exit::Code(0), Outcome::Survived, ReasonKind::SuiteGreen),
            (Exit::Timeout, Outcome::Timeout, ReasonKind::Hang),
            (Exit::Signal(11), Outcome::WrongReason, ReasonKind::Crash),
            (
                Exit::Interrupted,
                Outcome::WrongReason,
                ReasonKind::Interrupted,
            ),
            (
                Exit::SpawnFailed("no such file".into()),
                Outcome::WrongReason,
                ReasonKind::CouldNotRun,
            ),
        ] {
            let v = of(exit.clone());
            assert_eq!((v.outcome, kind(&v)), (outcome, reason), "{exit:?}");
        }
        assert_eq!(
            of(Exit::Timeout).detail(),
            "the suite was still running after 1.0s; its process group was killed"
        );
    }

    #[test]
    fn without_junit_exit_code_decides() {
        let mut c = cfg("generic", FailCodes::AnyNonZero);
        c.junit = None;
        let v = classify(&run(Exit::Code(1)), &c, &Reading::NotConfigured, &[], 1.0);
        assert_eq!(v.outcome, Outcome::Killed);
        assert_eq!(v.reason, Reason::SuiteFailedNoReport { code: 1 });
    }

    #[test]
    fn a_crash_is_never_a_kill_whoever_reports_it() {
        let generic = cfg("generic", FailCodes::AnyNonZero);
        for (exit, sig) in [
            (Exit::Code(137), 9),
            (Exit::Code(139), 11),
            (Exit::Signal(11), 11),
        ] {
            let v = classify(
                &run(exit.clone()),
                &generic,
                &Reading::NotConfigured,
                &[],
                1.0,
            );
            assert_eq!(v.outcome, Outcome::WrongReason, "{exit:?}");
            assert_eq!(kind(&v), ReasonKind::Crash, "{exit:?}");
            assert!(v.detail().contains(&format!("signal {sig}")), "{v:?}");
        }
        let pytest = cfg("pytest", FailCodes::Only(vec![1]));
        let v = classify(
            &run(Exit::Code(134)),
            &pytest,
            &Reading::NotConfigured,
            &[],
            1.0,
        );
        assert_eq!(v.reason, Reason::ShellSignal(134));
        assert!(v.detail().contains("signal 6"), "{v:?}");
        // Codes below 129 and above 128+64 are exits, not signals.
        assert_eq!(crash_signal(&generic, 128), None);
        assert_eq!(crash_signal(&generic, 200), None);
        assert_eq!(crash_signal(&generic, 101), None);
        // A code the spec lists itself is the spec's word.
        let custom = cfg("generic", FailCodes::Only(vec![137]));
        assert_eq!(crash_signal(&custom, 137), None);
        assert_eq!(
            classify(
                &run(Exit::Code(137)),
                &custom,
                &Reading::NotConfigured,
                &[],
                1.0
            )
            .outcome,
            Outcome::Killed
        );
    }

    #[test]
    fn findings_list_the_tests_that_ran_kills_do_not() {
        let c = cfg("generic", FailCodes::AnyNonZero);
        let survived = classify(&run(Exit::Code(0)), &c, &read(NONE_RED), &[], 1.0);
        assert_eq!(survived.tests_ran, vec!["t.m::a"]);
        let killed = classify(&run(Exit::Code(1)), &c, &read(ONE_RED), &[], 1.0);
        assert!(killed.tests_ran.is_empty());
    }

    #[test]
    fn a_hang_is_confirmed_only_by_a_second_hang() {
        let c = cfg("generic", FailCodes::AnyNonZero);
        let hung = || classify(&run(Exit::Timeout), &c, &Reading::NotConfigured, &[], 1.0);
        let v = confirmed_hang(hung(), hung(), "m@recheck-1.log");
        assert_eq!((v.outcome, kind(&v)), (Outcome::Timeout, ReasonKind::Hang));
        assert!(v.detail().contains("hung again"), "{v:?}");
        let green = classify(&run(Exit::Code(0)), &c, &read(NONE_RED), &[], 1.0);
        let v = confirmed_hang(hung(), green, "m@recheck-1.log");
        assert_eq!(v.outcome, Outcome::Flaky);
        assert_eq!(kind(&v), ReasonKind::HangNotReproduced);
        // The wording nests both runs' sentences and names the log.
        let detail = v.detail();
        assert!(
            detail.starts_with("timed out (")
                && detail.contains("went survived")
                && detail.ends_with("(log: m@recheck-1.log)"),
            "{detail}"
        );
    }

    #[test]
    fn flaky_keeps_the_first_run_and_names_the_recheck() {
        let c = cfg("generic", FailCodes::AnyNonZero);
        let first = classify(&run(Exit::Code(0)), &c, &read(NONE_RED), &[], 1.0);
        let again = classify(&run(Exit::Code(1)), &c, &read(ONE_RED), &[], 1.0);
        let v = flaky(first, 2, 3, again, "m.recheck-2.log");
        assert_eq!(v.outcome, Outcome::Flaky);
        assert_eq!(kind(&v), ReasonKind::SurvivorNotReproduced);
        assert_eq!(v.red_tests, vec!["t.m::a"]);
        assert_eq!(v.tests_total, Some(1), "the first run's count");
        assert_eq!(v.tests_ran, vec!["t.m::a"]);
        // The wording names the re-check, its outcome and its log.
        let detail = v.detail();
        assert!(
            detail.starts_with("survived, then re-check 2 of 3 went killed"),
            "{detail}"
        );
        assert!(detail.ends_with("(log: m.recheck-2.log)"), "{detail}");
    }

    #[test]
    fn held_verdicts_stand_only_behind_a_red_canary() {
        let red = CanaryFinding::no_canary();
        let green = CanaryFinding {
            reached: false,
            report: None,
            ran: true,
        };
        assert!(after_canary(Outcome::Killed, "a.py", &[], &red).is_none());
        let v = after_canary(Outcome::Killed, "a.py", &[], &green).unwrap();
        assert_eq!(v.outcome, Outcome::Unreached);
        assert_eq!(kind(&v), ReasonKind::CanaryGreen);
        assert!(after_canary(Outcome::Survived, "a.py", &[], &green).is_some());
        assert!(after_canary(Outcome::InternalError, "a.py", &[], &green).is_none());
    }

    #[test]
    fn expected_killers_must_go_red_under_the_canary() {
        const CANARY: &str = r#"<testsuite>
            <testcase classname="t.license" name="reads_source"><failure/></testcase>
            <testcase classname="t.behaviour" name="refuses_host"/>
        </testsuite>"#;
        let finding = CanaryFinding {
            reached: true,
            report: Some(parse(CANARY).unwrap()),
            ran: true,
        };
        let killer = [TestPattern::new("t.behaviour::refuses_host")];
        let v = canary_unreached("a.py", &killer, &finding).unwrap();
        assert_eq!(v.outcome, Outcome::Unreached);
        assert_eq!(
            v.reason,
            Reason::KillersNotReached {
                file: "a.py".into(),
                killers: vec!["t.behaviour::refuses_host".into()],
                ran: vec!["t.behaviour::refuses_host".into()],
            }
        );
        assert!(
            v.detail()
                .contains("stayed green under it (t.behaviour::refuses_host)"),
            "{v:?}"
        );
        let absent = [TestPattern::new("t.other::gone")];
        let v = canary_unreached("a.py", &absent, &finding).unwrap();
        assert!(
            matches!(&v.reason, Reason::KillersNotReached { ran, .. } if ran.is_empty()),
            "{v:?}"
        );
        assert!(v.detail().contains("did not run under it"), "{v:?}");
        // Not run because their module broke on import (unittest, pytest): reached.
        for broken in [
            r#"<testsuite><testcase classname="t.other" name="import"><error/></testcase></testsuite>"#,
            r#"<testsuite><testcase classname="" name="t.other"><error/></testcase></testsuite>"#,
        ] {
            let f = CanaryFinding {
                reached: true,
                report: Some(parse(broken).unwrap()),
                ran: true,
            };
            assert!(canary_unreached("a.py", &absent, &f).is_none(), "{broken}");
        }
        // A failing sibling test is no import error.
        let sibling = CanaryFinding {
            reached: true,
            report: Some(parse(r#"<testsuite><testcase classname="t.other" name="lic"><failure/></testcase></testsuite>"#).unwrap()),
            ran: true,
        };
        assert!(canary_unreached("a.py", &absent, &sibling).is_some());
        let red = [TestPattern::new("t.license::reads_source")];
        assert!(canary_unreached("a.py", &red, &finding).is_none());
        // Without expected killers, or without a report, a red canary is enough.
        assert!(canary_unreached("a.py", &[], &finding).is_none());
        assert!(canary_unreached("a.py", &killer, &CanaryFinding::no_canary()).is_none());
    }

    #[test]
    fn an_unconfirmed_kill_is_flaky() {
        let c = cfg("generic", FailCodes::AnyNonZero);
        let first = classify(&run(Exit::Code(1)), &c, &read(ONE_RED), &[], 1.0);
        let again = classify(&run(Exit::Code(0)), &c, &read(NONE_RED), &[], 1.0);
        let v = unconfirmed_kill(first, 1, 1, again, "m.recheck-1.log");
        assert_eq!(v.outcome, Outcome::Flaky);
        assert_eq!(kind(&v), ReasonKind::KillNotReproduced);
        assert_eq!(v.red_tests, vec!["t.m::a"], "the first run's red tests");
        // The wording nests the first run's sentence.
        assert!(
            v.detail()
                .starts_with("killed (1 of 2 tests failed), then re-check 1 of 1 went survived"),
            "{v:?}"
        );
    }

    #[test]
    fn canary_reach() {
        assert_eq!(canary(&Exit::Code(0)), CanaryVerdict::Unreached);
        assert_eq!(canary(&Exit::Code(1)), CanaryVerdict::Reached);
        assert_eq!(canary(&Exit::Timeout), CanaryVerdict::Reached);
        assert_eq!(canary(&Exit::Signal(9)), CanaryVerdict::Reached);
        assert_eq!(canary(&Exit::Interrupted), CanaryVerdict::Interrupted);
        assert_eq!(
            canary(&Exit::SpawnFailed("x".into())),
            CanaryVerdict::CouldNotRun("x".into())
        );
    }

    #[test]
    fn baseline_must_be_green_counted_and_clean() {
        let c = cfg("pytest", FailCodes::Only(vec![1]));
        let red = |v: BaselineVerdict| match v {
            BaselineVerdict::Red { reason, tail } => (reason, tail),
            other => panic!("expected red, got {other:?}"),
        };
        assert!(matches!(
            baseline(&Exit::Code(0), &c, read(NONE_RED)),
            BaselineVerdict::Green(Some(r)) if r.total() == 1
        ));
        assert!(matches!(
            baseline(&Exit::Code(0), &c, Reading::NotConfigured),
            BaselineVerdict::Green(None)
        ));
        assert!(matches!(
            baseline(&Exit::Interrupted, &c, Reading::NotConfigured),
            BaselineVerdict::Interrupted
        ));
        let (why, tail) = red(baseline(&Exit::Code(5), &c, Reading::NotConfigured));
        assert!(why.contains("pytest exit 5") && tail, "{why}");
        let (why, tail) = red(baseline(&Exit::Code(1), &c, read(ONE_RED)));
        assert!(why.contains("not green (exit code 1)") && tail, "{why}");
        let (why, tail) = red(baseline(&Exit::Code(0), &c, read(ONE_RED)));
        assert!(why.contains("1 red test(s): t.m::a") && !tail, "{why}");
        let (why, _) = red(baseline(&Exit::Code(0), &c, read("<testsuite/>")));
        assert!(why.contains("ran 0 tests"), "{why}");
        let none = Reading::Unreadable(crate::outcome::reading::model::ReportError::NotJunit);
        let (why, _) = red(baseline(&Exit::Code(0), &c, none));
        assert!(why.contains("no readable JUnit report"), "{why}");
    }

    /// A config without `test.junit`, and what a run of it showed.
    fn no_junit(preset: &str, codes: FailCodes) -> TestConfig {
        TestConfig {
            junit: None,
            ..cfg(preset, codes)
        }
    }
    fn seen(log: &str, report: Option<&str>) -> Reading {
        let log = crate::outcome::reading::suite_log::read(log);
        let report = report.map(|x| parse(x).unwrap());
        Reading::Observed(Observed::new(log, report).expect("a runner is seen"))
    }
    macro_rules! captured {
        ($name:literal) => {
            include_str!(concat!("../../tests/fixtures/suite_logs/", $name, ".txt"))
        };
    }
    const TWO_GREEN: &str = r#"<testsuite><testcase classname="t.m" name="a"/><testcase classname="t.m" name="b"/></testsuite>"#;

    #[test]
    fn a_coverage_gate_without_junit_is_wrong_reason() {
        let generic = no_junit("generic", FailCodes::AnyNonZero);
        let pytest = no_junit("pytest", FailCodes::Only(vec![1]));
        for (c, junit, total) in [
            (
                &pytest,
                seen(captured!("pytest_cov_fail"), Some(TWO_GREEN)),
                2,
            ),
            (&pytest, seen(captured!("pytest_q_cov_fail"), None), 2),
            // pytest -qq behind a quiet wrapper: the report alone tells.
            (&generic, seen("", Some(TWO_GREEN)), 2),
            (&generic, seen(captured!("jest_cov_fail"), None), 5),
            (&generic, seen(captured!("vitest_color_cov_fail"), None), 5),
            // A test file that failed to load is no failed test either.
            (&generic, seen(captured!("jest_suite_failed"), None), 5),
            (&generic, seen(captured!("vitest_suite_failed"), None), 5),
        ] {
            let v = classify(&run(Exit::Code(1)), c, &junit, &[], 1.0);
            assert_eq!(v.outcome, Outcome::WrongReason, "{junit:?}");
            assert_eq!(kind(&v), ReasonKind::NoFailedTest, "{junit:?}");
            assert!(
                v.detail().contains(&format!("0 failed of {total} tests")),
                "{v:?}"
            );
            assert_eq!(v.tests_total, Some(total));
            assert!(v.red_tests.is_empty());
        }
    }

    #[test]
    fn without_junit_a_failed_test_is_still_a_kill() {
        let generic = no_junit("generic", FailCodes::AnyNonZero);
        let v = classify(
            &run(Exit::Code(1)),
            &generic,
            &seen(captured!("pytest_cov_killed"), Some(ONE_RED)),
            &[],
            1.0,
        );
        assert_eq!(v.outcome, Outcome::Killed);
        assert_eq!(v.red_tests, vec!["t.m::a"]);
        assert_eq!(v.tests_total, Some(2));
        assert_eq!(kind(&v), ReasonKind::TestsFailed);
        assert!(v.detail().contains("1 of 2 tests failed"), "{v:?}");
        for log in [
            captured!("pytest_cov_killed"),
            captured!("jest_killed"),
            captured!("vitest_killed"),
        ] {
            let v = classify(&run(Exit::Code(1)), &generic, &seen(log, None), &[], 1.0);
            assert_eq!(v.outcome, Outcome::Killed, "{log}");
            assert!(
                matches!(v.reason, Reason::TestsCounted { red, .. } if red > 0),
                "{v:?}"
            );
        }
        // A summary-looking line never adds red tests to the report pytest
        // wrote for unguard (a lint step printing `1 failed in 0.01s`, or a
        // second session): the report shows none failed, so not a kill.
        let two = "== 2 passed in 0.1s ==\n1 failed in 0.01s\n";
        let v = classify(
            &run(Exit::Code(1)),
            &generic,
            &seen(two, Some(TWO_GREEN)),
            &[],
            1.0,
        );
        assert_eq!(v.outcome, Outcome::WrongReason, "{v:?}");
        assert!(v.red_tests.is_empty());
        assert!(
            matches!(v.reason, Reason::NoFailedTestCounted { total: 2, .. }),
            "{v:?}"
        );
        // pytest's header and nothing else (it died before its summary):
        // the exit code decides, as without any reading.
        let header = "=================== test session starts ===================\n";
        let v = classify(&run(Exit::Code(1)), &generic, &seen(header, None), &[], 1.0);
        assert_eq!(v.outcome, Outcome::Killed);
        assert_eq!(kind(&v), ReasonKind::SuiteFailed);
        assert!(v.detail().contains("tests not counted"), "{v:?}");
    }

    #[test]
    fn a_wrapper_owns_its_exit_codes_and_the_report_decides() {
        let generic = no_junit("generic", FailCodes::AnyNonZero);
        // `make test` around pytest with one failing test exits 2, a script
        // doing `pytest || exit 3` exits 3: the report shows the red test.
        for code in [2, 3] {
            let v = classify(
                &run(Exit::Code(code)),
                &generic,
                &seen("1 failed, 1 passed in 0.1s\n", Some(ONE_RED)),
                &[],
                1.0,
            );
            assert_eq!(v.outcome, Outcome::Killed, "exit {code}: {v:?}");
            assert_eq!(v.red_tests, vec!["t.m::a"]);
        }
        // A broken import behind a wrapper is still not a kill, whether the
        // report's collection failure or the log shows it.
        let collection = seen(captured!("pytest_collection_error"), None);
        let broken = r#"<testsuite><testcase classname="" name="coll.test_c"><error message="collection failure"/></testcase></testsuite>"#;
        let with_report = seen(captured!("pytest_collection_error"), Some(broken));
        for code in [1, 2, 3, 4] {
            let v = classify(&run(Exit::Code(code)), &generic, &collection, &[], 1.0);
            assert_eq!(v.outcome, Outcome::WrongReason, "exit {code}");
            assert!(
                matches!(v.reason, Reason::LoadErrorInLog { .. }),
                "exit {code}: {v:?}"
            );
            let v = classify(&run(Exit::Code(code)), &generic, &with_report, &[], 1.0);
            assert_eq!(v.outcome, Outcome::WrongReason, "exit {code}");
            assert_eq!(
                v.reason,
                Reason::LoadErrorInReport {
                    code,
                    module: "coll.test_c".into()
                }
            );
        }
        // A usage error prints no summary: its usage line shows it.
        let usage = seen(captured!("pytest_usage_error"), None);
        let v = classify(&run(Exit::Code(4)), &generic, &usage, &[], 1.0);
        assert_eq!(v.outcome, Outcome::WrongReason);
        assert_eq!(kind(&v), ReasonKind::LoadError);
        // pytest's table still applies when the spec's preset is pytest's.
        let pytest = no_junit("pytest", FailCodes::Only(vec![1]));
        let v = classify(
            &run(Exit::Code(2)),
            &pytest,
            &seen("1 failed, 1 passed in 0.1s\n", Some(ONE_RED)),
            &[],
            1.0,
        );
        assert_eq!(v.outcome, Outcome::WrongReason);
        assert_eq!(
            v.reason,
            Reason::NotATestFailure {
                code: 2,
                preset: Preset::Pytest
            }
        );
        // The wording says what pytest's exit code means.
        assert_eq!(
            v.detail(),
            "exit code 2 (pytest: interrupted, e.g. a collection error) is not a test failure under the `pytest` preset"
        );
        // Other runners keep the generic preset; a custom list is the spec's word.
        let jest = seen(captured!("jest_killed"), None);
        let v = classify(&run(Exit::Code(2)), &generic, &jest, &[], 1.0);
        assert_eq!(v.outcome, Outcome::Killed);
        let custom = no_junit("generic", FailCodes::Only(vec![1, 2]));
        let custom = TestConfig {
            preset: Preset::Custom,
            ..custom
        };
        let red = seen(captured!("pytest_mixed"), None);
        let v = classify(&run(Exit::Code(2)), &custom, &red, &[], 1.0);
        assert_eq!(v.outcome, Outcome::Killed);
    }

    #[test]
    fn a_baseline_without_junit_is_counted_and_must_run_tests() {
        let generic = no_junit("generic", FailCodes::AnyNonZero);
        let red = |v: BaselineVerdict| match v {
            BaselineVerdict::Red { reason, tail } => (reason, tail),
            other => panic!("expected red, got {other:?}"),
        };
        assert!(matches!(
            baseline(&Exit::Code(0), &generic, seen("", Some(TWO_GREEN))),
            BaselineVerdict::Green(Some(r)) if r.total() == 2
        ));
        assert!(matches!(
            baseline(
                &Exit::Code(0),
                &generic,
                seen(captured!("jest_passed"), None)
            ),
            BaselineVerdict::Green(None)
        ));
        // A wrapper that lets red tests pass stays green: only zero tests is refused.
        assert!(matches!(
            baseline(&Exit::Code(0), &generic, seen("", Some(ONE_RED))),
            BaselineVerdict::Green(Some(_))
        ));
        let (why, tail) = red(baseline(
            &Exit::Code(0),
            &generic,
            seen(captured!("pytest_no_tests"), None),
        ));
        assert!(why.contains("ran 0 tests") && tail, "{why}");
        let (why, _) = red(baseline(
            &Exit::Code(0),
            &generic,
            seen("", Some("<testsuite/>")),
        ));
        assert!(why.contains("ran 0 tests"), "{why}");
        let (why, _) = red(baseline(
            &Exit::Code(5),
            &generic,
            seen(captured!("pytest_no_tests"), None),
        ));
        assert!(why.contains("not green"), "{why}");
        let (why, _) = red(baseline(
            &Exit::Code(5),
            &no_junit("pytest", FailCodes::Only(vec![1])),
            seen(captured!("pytest_no_tests"), None),
        ));
        assert!(why.contains("pytest exit 5"), "{why}");
    }

    #[test]
    fn rejected_mutations_are_ambiguous_or_no_op() {
        use ApplyProblem as P;
        for (v, outcome, reason) in [
            (
                rejected(&P::Ambiguous("2 matches".into())),
                Outcome::Ambiguous,
                ReasonKind::CountMismatch,
            ),
            (
                rejected(&P::NoOp("no match".into())),
                Outcome::NoOp,
                ReasonKind::NoMatch,
            ),
            (
                rejected(&P::Identical("same".into())),
                Outcome::NoOp,
                ReasonKind::IdenticalReplacement,
            ),
            (
                rejected(&P::Binary("bin".into())),
                Outcome::NoOp,
                ReasonKind::BinaryFile,
            ),
            (
                rejected(&P::Misindented("tabs".into())),
                Outcome::NoOp,
                ReasonKind::Misindented,
            ),
            (
                unviable(&Exit::Code(2)),
                Outcome::Unviable,
                ReasonKind::CheckFailed,
            ),
            (
                unreached("a.py"),
                Outcome::Unreached,
                ReasonKind::CanaryGreen,
            ),
            (
                internal_error("boom"),
                Outcome::InternalError,
                ReasonKind::InternalError,
            ),
            (no_op_on_disk(), Outcome::NoOp, ReasonKind::UnchangedOnDisk),
        ] {
            assert_eq!((v.outcome, kind(&v)), (outcome, reason), "{v:?}");
        }
        // A rejected mutation's detail is the problem's own words.
        assert_eq!(rejected(&P::Binary("bin".into())).detail(), "bin");
    }

    #[test]
    fn no_coverage_names_the_lines_no_test_executes_and_runs_nothing() {
        let v = no_coverage("app/guard.py", &[15], 5);
        assert_eq!(
            (v.outcome, kind(&v)),
            (Outcome::NoCoverage, ReasonKind::NoTestExecutes)
        );
        assert_eq!(
            v.detail(),
            "no test executes line 15 of app/guard.py (coverage run: 5 tests measured); nothing ran"
        );
        // Nothing ran: no test is named or counted.
        assert!(v.red_tests.is_empty() && v.tests_ran.is_empty());
        assert_eq!((v.tests_total, v.red_counted), (None, None));
        // Several lines: runs of consecutive lines as ranges, in order, once each.
        for (lines, said) in [
            (&[15, 16, 17][..], "lines 15\u{2013}17 of a.py"),
            (&[19, 15][..], "lines 15, 19 of a.py"),
            (&[17, 15, 16, 19, 15][..], "lines 15\u{2013}17, 19 of a.py"),
            (&[][..], "no test executes a.py ("),
        ] {
            let d = no_coverage("a.py", lines, 2).detail();
            assert!(d.contains(said), "{lines:?}: {d}");
        }
        assert!(
            no_coverage("a.py", &[3], 1)
                .detail()
                .contains("(coverage run: 1 test measured)"),
            "singular"
        );
    }

    #[test]
    fn a_subset_verdict_keeps_its_kind_and_says_which_tests() {
        let c = cfg("generic", FailCodes::AnyNonZero);
        let yes = [TestPattern::new("t.m::a")];
        let killed = classify(&run(Exit::Code(1)), &c, &read(ONE_RED), &yes, 1.0);
        for (stage, n, from) in [
            (
                SubsetStage::ExpectedKillers,
                1,
                "1 selected test: its expected killers",
            ),
            (
                SubsetStage::CanaryNear,
                2,
                "2 selected tests: the tests its file's canary turned red that are named after it",
            ),
            (
                SubsetStage::Canary,
                2,
                "2 selected tests: the tests its file's canary turned red,",
            ),
            (
                SubsetStage::Siblings,
                3,
                "3 selected tests: the tests that killed other mutants of its file",
            ),
        ] {
            let v = by_subset(killed.clone(), stage, n);
            assert_eq!(
                (v.outcome, kind(&v)),
                (Outcome::Killed, ReasonKind::KilledByExpected)
            );
            assert_eq!(v.red_tests, killed.red_tests);
            // The wording names where the tests came from.
            let detail = v.detail();
            assert!(
                detail.starts_with("killed by t.m::a (a run of ") && detail.contains(from),
                "{detail}"
            );
        }
        let hung = classify(&run(Exit::Timeout), &c, &Reading::NotConfigured, &[], 1.0);
        let v = by_subset(hung, SubsetStage::Siblings, 1);
        assert_eq!((v.outcome, kind(&v)), (Outcome::Timeout, ReasonKind::Hang));
    }

    #[test]
    fn a_tightening_survivor_has_no_positive_twin() {
        let c = cfg("generic", FailCodes::AnyNonZero);
        let green = classify(&run(Exit::Code(0)), &c, &read(NONE_RED), &[], 1.0);
        assert_eq!(
            green.detail(),
            "the suite stayed green with the control removed"
        );
        let v = tightening(green);
        assert_eq!(
            (v.outcome, kind(&v)),
            (Outcome::Survived, ReasonKind::NoPositiveTwin)
        );
        assert_eq!(v.tests_ran, vec!["t.m::a"], "the run's facts stay");
        assert!(v.detail().contains("no positive twin"), "{v:?}");
        // Any other verdict stands.
        let killed = classify(&run(Exit::Code(1)), &c, &read(ONE_RED), &[], 1.0);
        assert_eq!(tightening(killed.clone()), killed);
    }

    #[test]
    fn unittest_load_errors_are_wrong_reason_and_its_failures_kills() {
        let generic = no_junit("generic", FailCodes::AnyNonZero);
        let broken = "E\n======\nERROR: tests.test_guard (unittest.loader._FailedTest.tests.test_guard)\n------\nImportError: Failed to import test module: tests.test_guard\n\n------\nRan 1 test in 0.000s\n\nFAILED (errors=1)\n";
        let v = classify(&run(Exit::Code(1)), &generic, &seen(broken, None), &[], 1.0);
        assert_eq!(v.outcome, Outcome::WrongReason, "{v:?}");
        assert!(
            matches!(&v.reason, Reason::LoadErrorInLog { runner, .. } if runner == "unittest"),
            "{v:?}"
        );
        assert_eq!(v.red_counted, None);
        let failed = "F.\n======\nFAIL: test_b (tests.test_guard.T.test_b)\n------\nRan 2 tests in 0.000s\n\nFAILED (failures=1)\n";
        let v = classify(&run(Exit::Code(1)), &generic, &seen(failed, None), &[], 1.0);
        assert_eq!(v.outcome, Outcome::Killed, "{v:?}");
        assert_eq!(kind(&v), ReasonKind::TestsFailed);
        assert_eq!((v.tests_total, v.red_counted), (Some(2), Some(1)));
        // The demo runner's report writes a module that failed to import
        // as `<module>` / `import`: not a failing test.
        let report = r#"<testsuite><testcase classname="tests.test_guard" name="import"><error message="ImportError: Failed to import test module: tests.test_guard"/></testcase></testsuite>"#;
        let v = classify(
            &run(Exit::Code(1)),
            &cfg("generic", FailCodes::Only(vec![1])),
            &read(report),
            &[],
            1.0,
        );
        assert_eq!(v.outcome, Outcome::WrongReason, "{v:?}");
        assert_eq!(
            v.reason,
            Reason::LoadErrorInReport {
                code: 1,
                module: "tests.test_guard::import".into()
            }
        );
    }

    #[test]
    fn a_kill_read_from_a_summary_line_counts_its_red_tests() {
        let generic = no_junit("generic", FailCodes::AnyNonZero);
        let jest = "Test Suites: 3 failed, 40 passed, 43 total\nTests:       28 failed, 1190 passed, 1218 total\n";
        let v = classify(&run(Exit::Code(1)), &generic, &seen(jest, None), &[], 1.0);
        assert_eq!(v.outcome, Outcome::Killed, "{v:?}");
        assert_eq!(kind(&v), ReasonKind::TestsFailed);
        assert!(v.red_tests.is_empty());
        assert_eq!((v.tests_total, v.red_counted), (Some(1218), Some(28)));
        // A per-test report names them: nothing counted beside it.
        let v = classify(
            &run(Exit::Code(1)),
            &generic,
            &seen("1 failed, 1 passed in 0.1s\n", Some(ONE_RED)),
            &[],
            1.0,
        );
        assert_eq!((v.red_tests.len(), v.red_counted), (1, None));
    }
}
