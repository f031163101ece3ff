//! A verdict's reason: which rule decided it (its [`ReasonKind`]) and the
//! facts it names, rendered to the one or two sentences of a mutant's
//! `detail` here and nowhere else.

use std::fmt;

use super::kinds::{ReasonKind, SubsetStage};
use crate::mutate::ApplyProblem;
use crate::spec::Preset;

/// Why a verdict is what it is, with the facts its sentence names.
/// (Its `Display` is the sentence.)
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    /// The suite was still running after `timeout_s` seconds.
    Hang {
        /// The mutant's timeout, in seconds.
        timeout_s: f64,
    },
    /// Stopped by Ctrl-C before the suite finished.
    Interrupted,
    /// The test command could not start (the error).
    CouldNotRun(String),
    /// The test command died from this signal.
    Signal(i32),
    /// The test command exited with this code, a shell's 128+N for a death
    /// by signal N.
    ShellSignal(i32),
    /// This exit code is no test failure under `preset`.
    NotATestFailure {
        /// The test command's exit code.
        code: i32,
        /// The spec's preset, whose exit-code table says so.
        preset: Preset,
    },
    /// Red, and the JUnit report could not be read (the error).
    NoJunitReport {
        /// The test command's exit code.
        code: i32,
        /// Why the report could not be read (missing, malformed).
        error: String,
    },
    /// The JUnit report shows this module failing to load or collect.
    LoadErrorInReport {
        /// The test command's exit code.
        code: i32,
        /// The report's id of the module (or collector) that broke.
        module: String,
    },
    /// The log shows `runner` failing to load the suite (its `line`).
    LoadErrorInLog {
        /// The test command's exit code.
        code: i32,
        /// The runner the log line belongs to (`pytest`, `unittest`).
        runner: String,
        /// The log's line that shows the load or collection error.
        line: String,
    },
    /// The JUnit report counts `total` tests, none red.
    NoFailedTestInReport {
        /// The test command's exit code.
        code: i32,
        /// Entries in the report ([`crate::outcome::reading::model::Report::total`]).
        total: usize,
    },
    /// `source` (a report or a summary line) counts `total` tests, none red.
    NoFailedTestCounted {
        /// The test command's exit code.
        code: i32,
        /// What counted the tests, as the sentence names it (`pytest's
        /// JUnit report`, `jest's summary line`).
        source: String,
        /// Tests that `source` counts as run.
        total: usize,
    },
    /// Tests failed (`red`, ids), none of them an `expected` killer.
    OtherTestsFailed {
        /// The mutant's `killed_by` patterns, as the spec writes them.
        expected: Vec<String>,
        /// Report ids of the tests that failed or errored.
        red: Vec<String>,
    },
    /// These expected killers failed.
    KilledBy(Vec<String>),
    /// `red` of `total` tests in the JUnit report failed.
    TestsFailed {
        /// Tests that failed or errored.
        red: usize,
        /// Entries in the report ([`crate::outcome::reading::model::Report::total`]).
        total: usize,
    },
    /// `red` of `total` tests failed, as `source` counts them.
    TestsCounted {
        /// Tests that failed or errored.
        red: usize,
        /// Tests that `source` counts as run.
        total: usize,
        /// What counted the tests, as the sentence names it (`pytest's
        /// JUnit report`, `jest's summary line`).
        source: String,
    },
    /// Red with a test-failure code; no JUnit report configured.
    SuiteFailedNoReport {
        /// The test command's exit code.
        code: i32,
    },
    /// Red with a test-failure code; `runners` left no summary or report.
    SuiteFailedNoSummary {
        /// The test command's exit code.
        code: i32,
        /// The runners the log names (`pytest`, `pytest and jest`).
        runners: String,
    },
    /// The suite stayed green.
    SuiteGreen,
    /// A tightening mutant's suite stayed green.
    NoPositiveTwin,
    /// The per-test coverage run shows no test executing `lines` of `file`;
    /// the suite was not run.
    NoTestExecutes {
        /// The mutated file, relative to the project root.
        file: String,
        /// The mutated lines (1-based), as the mutant changes them.
        lines: Vec<usize>,
        /// Tests the coverage run measured.
        tests_measured: usize,
    },
    /// A verdict another run (a re-check, a confirmation) or a subset
    /// made of a first one.
    Derived(Box<Derived>),
    /// Emptying `file` left the suite green.
    CanaryGreen {
        /// The mutated file the canary emptied, relative to the project root.
        file: String,
    },
    /// Emptying `file` turned the suite red, but of the expected `killers`
    /// those that `ran` stayed green (none ran, when empty).
    KillersNotReached {
        /// The mutated file the canary emptied, relative to the project root.
        file: String,
        /// The mutant's `killed_by` patterns, as the spec writes them.
        killers: Vec<String>,
        /// Report ids of the expected killers that ran and stayed green.
        ran: Vec<String>,
    },
    /// The mutant fails `test.check`, ending so.
    CheckFailed {
        /// How `test.check` ended, as [`crate::run::Exit::describe`] says it.
        exit: String,
    },
    /// The mutation was written, but the file on disk did not change.
    UnchangedOnDisk,
    /// The mutation never applied.
    Rejected(ApplyProblem),
    /// unguard failed on this mutant (why).
    InternalError(String),
}

/// A verdict made of a first verdict's reason and what a second run, or
/// the subset that ran, showed.
#[derive(Debug, Clone, PartialEq)]
pub enum Derived {
    /// Survived, then re-check `k` of `rechecks` (log `log`) gave `again`.
    SurvivorNotReproduced {
        /// Which re-check (from 1) went another way.
        k: usize,
        /// Re-checks a survivor gets (`--recheck-survivors`).
        rechecks: usize,
        /// The re-check's own reason.
        again: Reason,
        /// The re-check's log, a file name in the output directory.
        log: String,
    },
    /// Killed (`first`), then re-check `k` of `rechecks` gave `again`.
    KillNotReproduced {
        /// The first run's reason (the kill).
        first: Reason,
        /// Which re-check (from 1) went another way.
        k: usize,
        /// Re-checks a kill gets (`--recheck-kills`).
        rechecks: usize,
        /// The re-check's own reason.
        again: Reason,
        /// The re-check's log, a file name in the output directory.
        log: String,
    },
    /// Timed out (`first`), then the confirmation run gave `again`.
    HangNotReproduced {
        /// The first run's reason (the hang).
        first: Reason,
        /// The confirmation run's own reason.
        again: Reason,
        /// The confirmation run's log, a file name in the output directory.
        log: String,
    },
    /// Timed out (`first`), and hung again on its confirmation run.
    HangConfirmed {
        /// The first run's reason (the hang).
        first: Reason,
        /// The confirmation run's log, a file name in the output directory.
        log: String,
    },
    /// A verdict a run of `tests` tests of `stage` decided (kill-first).
    BySubset {
        /// The subset run's own reason (a kill or a hang).
        verdict: Reason,
        /// Which kill-first stage chose the subset.
        stage: SubsetStage,
        /// Tests in the subset.
        tests: usize,
    },
}

impl Reason {
    /// The reason `d` makes.
    pub fn derived(d: Derived) -> Reason {
        Reason::Derived(Box::new(d))
    }

    /// The rule behind this reason. A kill or hang decided by a subset, and
    /// a confirmed hang, keep the kind of the run that decided them.
    pub fn kind(&self) -> ReasonKind {
        use ReasonKind as K;
        match self {
            Reason::Hang { .. } => K::Hang,
            Reason::Interrupted => K::Interrupted,
            Reason::CouldNotRun(_) => K::CouldNotRun,
            Reason::Signal(_) | Reason::ShellSignal(_) => K::Crash,
            Reason::NotATestFailure { .. } => K::ExitCodeNotTestFailure,
            Reason::NoJunitReport { .. } => K::NoJunitReport,
            Reason::LoadErrorInReport { .. } | Reason::LoadErrorInLog { .. } => K::LoadError,
            Reason::NoFailedTestInReport { .. } | Reason::NoFailedTestCounted { .. } => {
                K::NoFailedTest
            }
            Reason::OtherTestsFailed { .. } => K::OtherTestsFailed,
            Reason::KilledBy(_) => K::KilledByExpected,
            Reason::TestsFailed { .. } | Reason::TestsCounted { .. } => K::TestsFailed,
            Reason::SuiteFailedNoReport { .. } | Reason::SuiteFailedNoSummary { .. } => {
                K::SuiteFailed
            }
            Reason::SuiteGreen => K::SuiteGreen,
            Reason::NoPositiveTwin => K::NoPositiveTwin,
            Reason::NoTestExecutes { .. } => K::NoTestExecutes,
            Reason::Derived(d) => match &**d {
                Derived::SurvivorNotReproduced { .. } => K::SurvivorNotReproduced,
                Derived::KillNotReproduced { .. } => K::KillNotReproduced,
                Derived::HangNotReproduced { .. } => K::HangNotReproduced,
                Derived::HangConfirmed { first, .. } => first.kind(),
                Derived::BySubset { verdict, .. } => verdict.kind(),
            },
            Reason::CanaryGreen { .. } => K::CanaryGreen,
            Reason::KillersNotReached { .. } => K::KillersNotReached,
            Reason::CheckFailed { .. } => K::CheckFailed,
            Reason::UnchangedOnDisk => K::UnchangedOnDisk,
            Reason::Rejected(p) => match p {
                ApplyProblem::NoOp(_) => K::NoMatch,
                ApplyProblem::Identical(_) => K::IdenticalReplacement,
                ApplyProblem::Ambiguous(_) => K::CountMismatch,
                ApplyProblem::Binary(_) => K::BinaryFile,
                ApplyProblem::Misindented(_) => K::Misindented,
            },
            Reason::InternalError(_) => K::InternalError,
        }
    }
}

/// What pytest's own exit codes mean, under the pytest preset.
fn exit_code_meaning(preset: Preset, code: i32) -> &'static str {
    if preset == Preset::Pytest {
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

/// The outcome a reason's verdict has, as a word (`killed`, `survived`, …).
fn outcome_word(r: &Reason) -> &'static str {
    r.kind().outcome().as_str()
}

impl fmt::Display for Reason {
    /// The reason's sentence: a mutant's `detail`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Hang { timeout_s } => write!(
                f,
                "the suite was still running after {timeout_s:.1}s; its process group was killed"
            ),
            Reason::Interrupted => f.write_str("interrupted before the suite finished"),
            Reason::CouldNotRun(e) => write!(f, "the test command could not run: {e}"),
            Reason::Signal(sig) => write!(
                f,
                "the test command died from signal {sig} (a crash, not a failing test)"
            ),
            Reason::ShellSignal(code) => write!(
                f,
                "exit code {code}: the test command died from signal {} (a shell reports a death by signal N as 128+N): a crash, not a failing test",
                code - 128
            ),
            Reason::NotATestFailure { code, preset } => write!(
                f,
                "exit code {code}{} is not a test failure under the `{preset}` preset",
                exit_code_meaning(*preset, *code)
            ),
            Reason::NoJunitReport { code, error } => write!(
                f,
                "exit code {code} but no JUnit report was written ({error}): the suite broke before reporting"
            ),
            Reason::LoadErrorInReport { code, module } => write!(
                f,
                "exit code {code} but the JUnit report shows a test module that failed to load or collect ({module}): a broken import or collection error, not a failing test"
            ),
            Reason::LoadErrorInLog { code, runner, line } => write!(
                f,
                "exit code {code}: {runner} could not load or collect the suite (`{line}`): a broken import, plugin or option, not a failing test"
            ),
            Reason::NoFailedTestInReport { code, total } => write!(
                f,
                "exit code {code} but the JUnit report shows 0 failed of {total} tests: something other than a test turned it red (coverage gate, collection error, plugin)"
            ),
            Reason::NoFailedTestCounted {
                code,
                source,
                total,
            } => write!(
                f,
                "exit code {code} but {source} shows 0 failed of {total} tests: something other than a failing test turned it red (a coverage threshold, a test file that failed to load, a plugin)"
            ),
            Reason::OtherTestsFailed { expected, red } => other_tests_failed(f, expected, red),
            Reason::KilledBy(tests) => write!(f, "killed by {}", tests.join(", ")),
            Reason::TestsFailed { red, total } => write!(f, "{red} of {total} tests failed"),
            Reason::TestsCounted { red, total, source } => {
                write!(f, "{red} of {total} tests failed ({source})")
            }
            Reason::SuiteFailedNoReport { code } => write!(
                f,
                "the suite failed (exit code {code}; no JUnit report, tests not counted)"
            ),
            Reason::SuiteFailedNoSummary { code, runners } => write!(
                f,
                "the suite failed (exit code {code}; {runners} ran but left no summary line or report, tests not counted)"
            ),
            Reason::SuiteGreen => f.write_str("the suite stayed green with the control removed"),
            Reason::NoPositiveTwin => f.write_str(
                "the suite stayed green with one accepted class of the control dropped: no positive twin proves it is still accepted",
            ),
            Reason::NoTestExecutes {
                file,
                lines,
                tests_measured,
            } => write!(
                f,
                "no test executes {}{file} (coverage run: {tests_measured} {} measured); nothing ran",
                line_list(lines),
                if *tests_measured == 1 { "test" } else { "tests" }
            ),
            Reason::Derived(d) => d.fmt(f),
            Reason::CanaryGreen { file } => write!(
                f,
                "emptying {file} did not turn the suite red: the suite does not run this copy of the file (editable install? prebuilt dist/? set `test.env: {{PYTHONPATH: src}}`), so no verdict is possible"
            ),
            Reason::KillersNotReached { file, killers, ran } => {
                killers_not_reached(f, file, killers, ran)
            }
            Reason::CheckFailed { exit } => write!(
                f,
                "the mutant fails `test.check` ({exit}): it does not build, so it proves nothing"
            ),
            Reason::UnchangedOnDisk => f.write_str("the mutant did not change the file on disk"),
            Reason::Rejected(p) => f.write_str(p.detail()),
            Reason::InternalError(why) => write!(
                f,
                "unguard failed on this mutant ({why}); this is a bug in unguard, please report it. The other mutants ran normally."
            ),
        }
    }
}

/// `line 15 of `, `lines 15–17 of `, `lines 15, 19 of ` (runs of
/// consecutive lines as ranges, in order, each once); empty for no lines.
fn line_list(lines: &[usize]) -> String {
    let mut sorted = lines.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for n in sorted {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == n => *end = n,
            _ => runs.push((n, n)),
        }
    }
    let parts: Vec<String> = runs
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}\u{2013}{b}")
            }
        })
        .collect();
    match runs.as_slice() {
        [] => String::new(),
        [(a, b)] if a == b => format!("line {a} of "),
        _ => format!("lines {} of ", parts.join(", ")),
    }
}

/// Tests failed, none of them an expected killer: the first three named.
fn other_tests_failed(
    f: &mut fmt::Formatter<'_>,
    expected: &[String],
    red: &[String],
) -> fmt::Result {
    let shown: Vec<&str> = red.iter().take(3).map(String::as_str).collect();
    let more = if red.len() > 3 {
        format!(" (+{} more)", red.len() - 3)
    } else {
        String::new()
    };
    write!(
        f,
        "red, but none of the expected killers failed (expected: {}); failed instead: {}{more}",
        expected.join(", "),
        shown.join(", ")
    )
}

/// A first verdict (`head`) that a second run (`again`, its log) did not
/// reproduce, and what that makes of it (`tail`).
fn not_reproduced(
    f: &mut fmt::Formatter<'_>,
    head: fmt::Arguments<'_>,
    (again, log): (&Reason, &str),
    tail: &str,
) -> fmt::Result {
    write!(
        f,
        "{head} went {} ({again}): {tail} (log: {log})",
        outcome_word(again)
    )
}

/// The expected killers of `file`'s mutant stayed green (those that `ran`)
/// or did not run with the file emptied.
fn killers_not_reached(
    f: &mut fmt::Formatter<'_>,
    file: &str,
    killers: &[String],
    ran: &[String],
) -> fmt::Result {
    let how = if ran.is_empty() {
        "did not run under it (stopped early by `-x` or `--maxfail`, or deselected?)".to_string()
    } else {
        format!("stayed green under it ({})", ran.join(", "))
    };
    write!(
        f,
        "the canary emptied {file} and the suite went red, but the expected killers ({}) {how}: they do not exercise this copy of the file (a `killed_by` naming the wrong tests, or an editable install pointing them at the checkout), so no verdict is possible",
        killers.join(", ")
    )
}

impl fmt::Display for Derived {
    /// The sentence of the first verdict's reason and of what made another
    /// verdict of it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Derived::SurvivorNotReproduced {
                k,
                rechecks,
                again,
                log,
            } => not_reproduced(
                f,
                format_args!("survived, then re-check {k} of {rechecks}"),
                (again, log),
                "the suite is flaky for this mutant, so neither verdict is proof",
            ),
            Derived::KillNotReproduced {
                first,
                k,
                rechecks,
                again,
                log,
            } => not_reproduced(
                f,
                format_args!("killed ({first}), then re-check {k} of {rechecks}"),
                (again, log),
                "the kill does not reproduce, so it is no proof",
            ),
            Derived::HangNotReproduced { first, again, log } => not_reproduced(
                f,
                format_args!("timed out ({first}), then its confirmation run, alone,"),
                (again, log),
                "the hang does not reproduce, so it is no proof",
            ),
            Derived::HangConfirmed { first, log } => write!(
                f,
                "{first}; it hung again on its confirmation run, alone (log: {log})"
            ),
            Derived::BySubset {
                verdict,
                stage,
                tests,
            } => write!(
                f,
                "{verdict} (a run of {tests} selected {}: {}, green on the unmutated copy; the full suite did not run)",
                if *tests == 1 { "test" } else { "tests" },
                stage.source()
            ),
        }
    }
}
