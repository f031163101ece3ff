//! What a finished suite run's log says about itself: which test runner ran
//! (pytest, jest, vitest) and what its summary line counts, read from the
//! captured output alone, whatever command (or wrapper script) started it.
//!
//! A red run is only a kill when a test failed, and a run without
//! `test.junit` gives unguard no report to ask. The runner's own summary line
//! (`== 1 failed, 4 passed in 0.12s ==`, `Tests:       5 passed, 5 total`,
//! ` Tests  5 passed (5)`) says whether one did, so a coverage threshold that
//! turns an all-green suite red is seen for what it is. The functions here are
//! pure; the engine adds the JUnit report it had pytest write (through
//! `PYTEST_ADDOPTS`), and [`crate::outcome`] decides what it all means.

use std::path::PathBuf;
use std::sync::LazyLock;

use regex::Regex;

use crate::outcome::reading::model::{Report, Status, TestCase};
use crate::outcome::reading::strip_ansi;

/// A test runner unguard recognises in a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    /// pytest: its `== … in 0.12s ==` summary line, or the JUnit report it
    /// wrote.
    Pytest,
    /// jest: its `Tests: … total` summary line.
    Jest,
    /// vitest: its ` Tests  5 passed (5)` summary line.
    Vitest,
    /// `go test`: its `-json` event stream, or its plain result lines.
    GoTest,
    /// `cargo test`: libtest's text.
    CargoTest,
    /// Python's `unittest` (`python -m unittest`, or a runner script built
    /// on its `TextTestRunner`).
    Unittest,
}

impl Runner {
    /// The runner's name in a verdict's detail (`pytest`, `go test`).
    pub fn name(self) -> &'static str {
        match self {
            Runner::Pytest => "pytest",
            Runner::Jest => "jest",
            Runner::Vitest => "vitest",
            Runner::GoTest => "go test",
            Runner::CargoTest => "cargo test",
            Runner::Unittest => "unittest",
        }
    }
}

/// Test counts from summary lines (added up when a log has several, e.g. a
/// wrapper that runs pytest twice).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Tests that passed.
    pub passed: usize,
    /// Tests that failed an assertion.
    pub failed: usize,
    /// Tests that errored (pytest: an error in a test's setup or teardown,
    /// or a module that failed to collect).
    pub errors: usize,
    /// Every test the summary counts as run, skipped ones included
    /// (pytest's deselected tests and warnings are not tests that ran).
    pub total: usize,
}

impl Counts {
    /// Failed and errored tests: the red ones.
    pub fn red(&self) -> usize {
        self.failed + self.errors
    }

    fn add(&mut self, other: Counts) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.errors += other.errors;
        self.total += other.total;
    }
}

/// What a log shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogReading {
    /// Every runner the log shows, in order of first appearance.
    pub runners: Vec<Runner>,
    /// The summary lines' counts, added up; `None` without a summary line.
    pub counts: Option<Counts>,
    /// The JUnit report pytest says it wrote (`generated xml file: PATH`),
    /// when the command passes `--junitxml` itself.
    pub pytest_report: Option<PathBuf>,
    /// The tests `go test -json` reported in the log, when it ran.
    pub go_report: Option<Report>,
    /// The tests `cargo test` reported in the log (libtest's lines), when
    /// it ran.
    pub libtest_report: Option<Report>,
    /// The first line showing that the runner could not load or collect
    /// the suite (pytest: a conftest or test module that failed to import,
    /// a usage or internal error; unittest: a test module that failed to
    /// import, its `unittest.loader._FailedTest`): not a failing test.
    pub load_error: Option<String>,
}

impl LogReading {
    fn saw(&mut self, runner: Runner) {
        if !self.runners.contains(&runner) {
            self.runners.push(runner);
        }
    }

    fn count(&mut self, runner: Runner, counts: Counts) {
        self.saw(runner);
        self.counts.get_or_insert_with(Counts::default).add(counts);
    }
}

/// The suite's own output in a log unguard wrote: without unguard's header
/// (`# unguard: …`, `# cwd: …`, `# timeout: …`, `$ command`, a blank line),
/// so that the command line is never read as output.
pub fn suite_output(log: &str) -> &str {
    if !log.starts_with("# unguard:") {
        return log;
    }
    let Some(command) = log.find("\n$ ") else {
        return log;
    };
    match log[command..].find("\n\n") {
        Some(end) => &log[command + end + 2..],
        None => "",
    }
}

/// Read the output of a finished suite run (see [`suite_output`]).
pub fn read(output: &str) -> LogReading {
    let mut seen = LogReading::default();
    let mut go_lines = Vec::new();
    // unittest's `Ran N tests in …`, until its result line (`OK`,
    // `FAILED (failures=1, errors=2)`) says how many went red.
    let mut unittest: Option<Counts> = None;
    for raw in output.lines() {
        // A terminal redraws a line after `\r`: what stays is the last part.
        let raw = raw.rsplit('\r').next().unwrap_or(raw);
        let line = strip_ansi(raw);
        let line = line.trim();
        if seen.load_error.is_none() && pytest_load_error(line) {
            seen.saw(Runner::Pytest);
            seen.load_error = Some(line.to_string());
        }
        if seen.load_error.is_none() && unittest_load_error(line) {
            seen.saw(Runner::Unittest);
            seen.load_error = Some(line.to_string());
        }
        if let Some(ran) = unittest_ran(line) {
            if let Some(c) = unittest.replace(ran) {
                seen.count(Runner::Unittest, c);
            }
        } else if let (Some(c), Some(red)) = (unittest.as_mut(), unittest_failed(line)) {
            c.failed += red.failed;
            c.errors += red.errors;
            c.passed = c.passed.saturating_sub(red.failed + red.errors + red.total);
            seen.count(Runner::Unittest, *c);
            unittest = None;
        } else if let Some(c) = pytest_summary(line) {
            seen.count(Runner::Pytest, c);
        } else if let Some(c) = jest_summary(line) {
            seen.count(Runner::Jest, c);
        } else if let Some(c) = vitest_summary(line) {
            seen.count(Runner::Vitest, c);
        } else if let Some(c) = libtest_summary(line) {
            seen.count(Runner::CargoTest, c);
        } else if let Some(path) = pytest_report(line) {
            seen.saw(Runner::Pytest);
            seen.pytest_report = Some(path);
        } else if let Some(runner) = marker(line) {
            seen.saw(runner);
        } else if let Some(plain) = go_plain(line) {
            seen.saw(Runner::GoTest);
            go_lines.push(plain);
        } else if !seen.runners.contains(&Runner::GoTest)
            && crate::outcome::reading::go_test_json::is_event(line)
        {
            seen.saw(Runner::GoTest);
        } else if crate::outcome::reading::libtest_text::is_marker(line) {
            seen.saw(Runner::CargoTest);
        }
    }
    if let Some(c) = unittest {
        seen.count(Runner::Unittest, c);
    }
    if seen.runners.contains(&Runner::CargoTest) {
        seen.libtest_report =
            crate::outcome::reading::libtest_text::parse(output).map(|run| run.report);
    }
    if seen.runners.contains(&Runner::GoTest) {
        seen.go_report = crate::outcome::reading::go_test_json::parse(output)
            .map(|run| run.report)
            .or_else(|| go_plain_report(&go_lines));
    }
    seen
}

/// A line plain `go test` prints (also under `-json`, for a package that
/// failed to build): a test's result, or a package's.
#[derive(Debug, Clone, PartialEq, Eq)]
enum GoPlain {
    /// `--- FAIL: TestX/sub (0.00s)`
    Case(String, Status),
    /// `ok  \tpkg\t0.01s`, `FAIL\tpkg\t0.01s`, `?   \tpkg\t[no test files]`
    Package,
    /// `FAIL\tpkg [build failed]` / `[setup failed]`: no test ran there.
    Broken,
}

fn go_plain(line: &str) -> Option<GoPlain> {
    static CASE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^--- (FAIL|PASS|SKIP): (\S+) \([0-9.]+s\)$").expect("valid regex")
    });
    static PACKAGE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:ok  |FAIL|\?   )\t\S+\t(?:[0-9.]+s|\(cached\)|\[no test files\])")
            .expect("valid regex")
    });
    static BROKEN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^FAIL\t\S+ \[(?:build|setup) failed\]$").expect("valid regex")
    });
    if let Some(c) = CASE.captures(line) {
        let status = match &c[1] {
            "FAIL" => Status::Failed,
            "PASS" => Status::Passed,
            _ => Status::Skipped,
        };
        Some(GoPlain::Case(c[2].to_string(), status))
    } else if BROKEN.is_match(line) {
        Some(GoPlain::Broken)
    } else if PACKAGE.is_match(line) {
        Some(GoPlain::Package)
    } else {
        None
    }
}

/// The tests plain `go test` lines show (without `-v` only the failed
/// ones); an empty report when a package failed to build and no test
/// result was printed (nothing ran: not a failed test), `None` when the
/// lines show no test at all (a green run without `-v`).
fn go_plain_report(lines: &[GoPlain]) -> Option<Report> {
    let cases: Vec<TestCase> = lines
        .iter()
        .filter_map(|l| match l {
            GoPlain::Case(name, status) => Some(TestCase {
                classname: String::new(),
                name: name.clone(),
                status: *status,
            }),
            _ => None,
        })
        .collect();
    let broken = lines.contains(&GoPlain::Broken);
    (!cases.is_empty() || broken).then_some(Report { cases })
}

/// pytest's summary line: `==== 1 failed, 4 passed, 1 warning in 0.12s ====`
/// (without the `=` under `-q`), or `no tests ran in 0.01s`.
fn pytest_summary(line: &str) -> Option<Counts> {
    static SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:=+ )?(.+?) in [0-9]+(?:\.[0-9]+)?s(?: \([0-9:.]+\))?(?: =+)?$")
            .expect("valid regex")
    });
    static PART: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^([0-9]+) ([a-z]+(?: [a-z]+)?)$").expect("valid regex"));
    let parts = SUMMARY.captures(line)?.get(1)?.as_str();
    if parts == "no tests ran" {
        return Some(Counts::default());
    }
    let parts: Vec<&str> = parts.split(", ").collect();
    if !parts.iter().any(|p| is_core_part(p)) {
        return None;
    }
    let mut c = Counts::default();
    for part in parts {
        let caps = PART.captures(part)?;
        let n: usize = caps[1].parse().ok()?;
        match &caps[2] {
            "passed" | "xpassed" => c.passed += n,
            "failed" => c.failed += n,
            "error" | "errors" => c.errors += n,
            "skipped" | "xfailed" => {}
            // Deselected tests and warnings did not run; plugins' categories
            // (`rerun`, `subtests passed`) are not tests of their own.
            _ => continue,
        }
        c.total += n;
    }
    Some(c)
}

/// A part of pytest's summary line that every pytest prints (not a plugin's).
fn is_core_part(part: &str) -> bool {
    matches!(
        part.split_once(' ').map(|(_, word)| word),
        Some(
            "passed"
                | "failed"
                | "error"
                | "errors"
                | "skipped"
                | "xfailed"
                | "xpassed"
                | "deselected"
                | "warning"
                | "warnings"
        )
    )
}

/// jest's `Tests:       1 failed, 4 passed, 5 total` (`3 of 10 total` when
/// filtered; `Tests:       0 total` when none ran).
fn jest_summary(line: &str) -> Option<Counts> {
    static TESTS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^Tests:\s+(?:(.*?),\s+)?(?:([0-9]+) of )?([0-9]+) total$")
            .expect("valid regex")
    });
    let caps = TESTS.captures(line)?;
    let ran = caps.get(2).or(caps.get(3))?;
    let mut c = Counts {
        total: ran.as_str().parse().ok()?,
        ..Counts::default()
    };
    for part in caps.get(1).map_or("", |m| m.as_str()).split(", ") {
        match part.split_once(' ') {
            Some((n, "failed")) => c.failed += n.parse::<usize>().ok()?,
            Some((n, "passed")) => c.passed += n.parse::<usize>().ok()?,
            _ => {}
        }
    }
    Some(c)
}

/// vitest's `Tests  1 failed | 4 passed (5)`, or `Tests  no tests`.
fn vitest_summary(line: &str) -> Option<Counts> {
    static TESTS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^Tests\s+(?:no tests|(.+?)\s+\(([0-9]+)\))$").expect("valid regex")
    });
    let caps = TESTS.captures(line)?;
    let (Some(parts), Some(total)) = (caps.get(1), caps.get(2)) else {
        return Some(Counts::default());
    };
    let mut c = Counts {
        total: total.as_str().parse().ok()?,
        ..Counts::default()
    };
    for part in parts.as_str().split(" | ") {
        match part.trim().split_once(' ') {
            Some((n, "failed")) => c.failed += n.parse::<usize>().ok()?,
            Some((n, "passed")) => c.passed += n.parse::<usize>().ok()?,
            Some((n, _)) => {
                n.parse::<usize>().ok()?;
            }
            None => return None,
        }
    }
    Some(c)
}

/// libtest's `test result: FAILED. 3 passed; 1 failed; 2 ignored; 0
/// measured; 0 filtered out; finished in 0.11s` (one per test binary;
/// ignored tests count as pytest's skipped ones do).
fn libtest_summary(line: &str) -> Option<Counts> {
    static RESULT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^test result: (?:ok|FAILED)\. ([0-9]+) passed; ([0-9]+) failed; ([0-9]+) ignored;",
        )
        .expect("valid regex")
    });
    let caps = RESULT.captures(line)?;
    let n = |i: usize| caps[i].parse::<usize>().ok();
    let (passed, failed, ignored) = (n(1)?, n(2)?, n(3)?);
    Some(Counts {
        passed,
        failed,
        errors: 0,
        total: passed + failed + ignored,
    })
}

/// unittest's `Ran 3 tests in 0.001s`: every test counted as passed until
/// its result line says otherwise (see [`unittest_failed`]).
fn unittest_ran(line: &str) -> Option<Counts> {
    static RAN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^Ran ([0-9]+) tests? in [0-9]+(?:\.[0-9]+)?s$").expect("valid regex")
    });
    let n: usize = RAN.captures(line)?[1].parse().ok()?;
    Some(Counts {
        passed: n,
        total: n,
        ..Counts::default()
    })
}

/// unittest's result line after a red run, `FAILED (failures=1, errors=2,
/// skipped=1, expected failures=1, unexpected successes=1)`: its failed
/// tests (an unexpected success fails the run too) and errored ones; the
/// `total` field carries the tests that neither passed nor went red
/// (skipped, expected failures).
fn unittest_failed(line: &str) -> Option<Counts> {
    let parts = line.strip_prefix("FAILED (")?.strip_suffix(')')?;
    let mut c = Counts::default();
    for part in parts.split(", ") {
        let (kind, n) = part.split_once('=')?;
        let n: usize = n.parse().ok()?;
        match kind {
            "failures" | "unexpected successes" => c.failed += n,
            "errors" => c.errors += n,
            "skipped" | "expected failures" => c.total += n,
            _ => return None,
        }
    }
    Some(c)
}

/// unittest's report of a test module it could not import (discovery, or
/// a name on the command line): `ERROR: tests.test_x
/// (unittest.loader._FailedTest.tests.test_x)` (`(unittest.loader._FailedTest)`
/// before Python 3.11), followed by `ImportError: Failed to import test
/// module: tests.test_x`.
fn unittest_load_error(line: &str) -> bool {
    static LOAD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"^(?:ERROR: \S+ \(unittest\.loader\._FailedTest(?:\.\S+)?\)",
            r"|ImportError: Failed to import test module: \S+)$"
        ))
        .expect("valid regex")
    });
    LOAD.is_match(line)
}

/// pytest's `---- generated xml file: /abs/path.xml ----`.
fn pytest_report(line: &str) -> Option<PathBuf> {
    let rest = line.strip_prefix('-')?.trim_start_matches('-').trim_start();
    let path = rest.strip_prefix("generated xml file: ")?;
    let path = path.trim_end_matches('-').trim_end();
    (!path.is_empty()).then(|| PathBuf::from(path))
}

/// A line pytest prints when it could not load or collect the suite: a
/// conftest or test module that failed to import, a plugin that could not
/// be imported, a usage or internal error.
fn pytest_load_error(line: &str) -> bool {
    static LOAD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"^(?:ImportError while loading conftest .*",
            r"|!+ Interrupted: [0-9]+ errors? during collection !+",
            r"|INTERNALERROR> .*",
            r"|ERROR: usage: .*\bpy\.?test\b.*",
            r"|ERROR: file or directory not found: .*",
            r"|(?:[A-Za-z_.]+: )?Error importing plugin .*)$"
        ))
        .expect("valid regex")
    });
    LOAD.is_match(line)
}

/// A line only one runner prints, besides its summary: pytest's header,
/// usage error, internal error and collection interrupt; jest's and
/// vitest's per-file summary.
fn marker(line: &str) -> Option<Runner> {
    static PYTEST: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"^(?:=+ test session starts =+",
            r"|(?:ERROR: )?usage: .*\bpy\.?test\b.* \[options\] \[file_or_dir\].*",
            r"|INTERNALERROR> .*",
            r"|!+ Interrupted: [0-9]+ errors? during collection !+)$"
        ))
        .expect("valid regex")
    });
    static JEST: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^Test Suites:\s+(?:.*,\s+)?(?:[0-9]+ of )?[0-9]+ total$").expect("valid regex")
    });
    static VITEST: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^Test Files\s+(?:no tests|.+\s+\([0-9]+\))$").expect("valid regex")
    });
    if PYTEST.is_match(line) {
        Some(Runner::Pytest)
    } else if JEST.is_match(line) {
        Some(Runner::Jest)
    } else if VITEST.is_match(line) {
        Some(Runner::Vitest)
    } else {
        None
    }
}

/// What a run without `test.junit` showed about itself: the runners its log
/// names, their summary counts, and the JUnit report pytest wrote (the one
/// unguard asked for through `PYTEST_ADDOPTS`, or the command's own when the
/// log names it).
#[derive(Debug, Clone)]
pub struct Observed {
    /// Every runner seen, in order of first appearance (pytest first when
    /// only its report shows it ran).
    pub runners: Vec<Runner>,
    /// The summary lines' counts, added up; `None` without a summary line.
    pub counts: Option<Counts>,
    /// The per-test report: pytest's JUnit file, else `go test -json`'s or
    /// libtest's lines in the log; `None` when there is none.
    pub report: Option<Report>,
    /// The log's line showing pytest could not load or collect the suite.
    pub load_error: Option<String>,
    /// The runner that wrote `report` (unguard asked it for the report, or
    /// its lines in the log are the report).
    pub report_by: Runner,
}

impl Observed {
    /// What `log` and `report` show together; `None` when no runner is seen
    /// (a report pytest wrote for unguard means pytest ran, even when its
    /// output says nothing, as under `-qq` or behind a quiet wrapper).
    pub fn new(log: LogReading, report: Option<Report>) -> Option<Observed> {
        Observed::written_by(log, report, Runner::Pytest)
    }

    /// As [`Observed::new`], for a `report` unguard asked runner `by` for
    /// (pytest through `PYTEST_ADDOPTS`, vitest's or jest's reporter in the
    /// command): its runner ran when the report is there.
    pub fn written_by(log: LogReading, report: Option<Report>, by: Runner) -> Option<Observed> {
        // The requested report first: a wrapper running both leaves its file.
        let report_by = match (&report, &log.go_report) {
            (Some(_), _) => by,
            (None, Some(_)) => Runner::GoTest,
            (None, None) if log.libtest_report.is_some() => Runner::CargoTest,
            (None, None) => by,
        };
        let report = report.or(log.go_report).or(log.libtest_report);
        let mut runners = log.runners;
        if report.is_some()
            && !runners.contains(&by)
            && !runners.contains(&Runner::GoTest)
            && !runners.contains(&Runner::CargoTest)
        {
            runners.insert(0, by);
        }
        (!runners.is_empty()).then_some(Observed {
            runners,
            counts: log.counts,
            report,
            load_error: log.load_error,
            report_by,
        })
    }

    /// pytest ran, and no other runner did: pytest's exit codes are the run's.
    pub fn pytest_alone(&self) -> bool {
        self.runners == [Runner::Pytest]
    }

    /// Tests that ran: the per-test report's count when there is one (the
    /// summary lines are text, and any step of a wrapper may print one),
    /// else the summary lines' counts. `None` when neither is there.
    pub fn total(&self) -> Option<usize> {
        match &self.report {
            Some(r) => Some(r.total()),
            None => self.counts.map(|c| c.total),
        }
    }

    /// Red (failed or errored) tests, as in [`Observed::total`]: a per-test
    /// report decides alone; a summary line never adds red tests to it.
    /// `None` when neither is there.
    pub fn red(&self) -> Option<usize> {
        match &self.report {
            Some(r) => Some(r.red().len() - r.load_errors().len()),
            None => self.counts.map(|c| c.red()),
        }
    }

    /// Where the counts come from, for a verdict's detail.
    pub fn source(&self) -> String {
        if self.report.is_some() {
            if self.runners.contains(&Runner::GoTest) && !self.runners.contains(&Runner::Pytest) {
                return "go test's output".into();
            }
            if self.runners.contains(&Runner::CargoTest) && !self.runners.contains(&Runner::Pytest)
            {
                return "cargo test's output".into();
            }
            return format!("{}'s JUnit report", self.report_by.name());
        }
        let names: Vec<&str> = self.runners.iter().map(|r| r.name()).collect();
        format!("{}'s summary line", names.join(" and "))
    }

    /// The runner whose line is [`Observed::load_error`], for a verdict's
    /// detail.
    pub fn load_error_runner(&self) -> &'static str {
        match &self.load_error {
            Some(line) if unittest_load_error(line) => Runner::Unittest.name(),
            _ => Runner::Pytest.name(),
        }
    }

    /// The runners, for a verdict's detail (`pytest`, `pytest and jest`).
    pub fn runner_names(&self) -> String {
        let names: Vec<&str> = self.runners.iter().map(|r| r.name()).collect();
        names.join(" and ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A captured log from `tests/fixtures/suite_logs/` (real runner output).
    macro_rules! captured {
        ($name:literal) => {
            include_str!(concat!(
                "../../../tests/fixtures/suite_logs/",
                $name,
                ".txt"
            ))
        };
    }

    fn counts(passed: usize, failed: usize, errors: usize, total: usize) -> Option<Counts> {
        Some(Counts {
            passed,
            failed,
            errors,
            total,
        })
    }

    #[test]
    fn plain_go_test_lines_show_go_and_its_failed_tests() {
        let log = "--- FAIL: TestHost (0.00s)\n    --- FAIL: TestHost/public (0.00s)\n        srv_test.go:9: got 200\nFAIL\nFAIL\texample.com/srv\t0.004s\nok  \texample.com/other\t(cached)\n";
        let r = read(log);
        assert_eq!(r.runners, vec![Runner::GoTest]);
        let report = r.go_report.expect("the failed tests");
        assert_eq!(report.red_ids(), vec!["TestHost", "TestHost/public"]);
        // A green run without -v names no test: nothing is counted.
        let r = read("ok  \texample.com/srv\t0.004s\n?   \texample.com/cmd\t[no test files]\n");
        assert_eq!((r.runners, r.go_report), (vec![Runner::GoTest], None));
        // A package that failed to build ran no test: counted as 0, so a
        // red exit is not a kill.
        let r = read("# example.com/srv\n./server.go:25:9: undefined: nope\nFAIL\texample.com/srv [build failed]\nFAIL\n");
        assert_eq!(r.go_report.map(|g| g.total()), Some(0));
        // vitest's per-file FAIL line is not Go's.
        assert!(read(" FAIL  tests/a.test.ts > host > refuses\n")
            .go_report
            .is_none());
    }

    #[test]
    fn cargo_test_lines_show_cargo_and_every_test() {
        let log = "     Running unittests src/lib.rs (target/debug/deps/x-0a1b)\n\nrunning 2 tests\ntest tests::a ... ok\ntest tests::b ... FAILED\n\nfailures:\n    tests::b\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\nerror: test failed, to rerun pass `--lib`\n";
        let r = read(log);
        assert_eq!(r.runners, vec![Runner::CargoTest]);
        assert_eq!(r.counts, counts(1, 1, 0, 2));
        let o = Observed::new(r, None).unwrap();
        assert_eq!(o.source(), "cargo test's output");
        assert_eq!(
            o.report.as_ref().map(Report::red_ids),
            Some(vec!["src/lib.rs::tests::b".to_string()])
        );
        // A build failure ran no test: counted as 0, so a red exit is not
        // a kill.
        let r = read("error[E0425]: cannot find value `nope` in this scope\nerror: could not compile `x` (lib test) due to 1 previous error\n");
        let o = Observed::new(r, None).unwrap();
        assert_eq!((o.total(), o.red()), (Some(0), Some(0)));
    }

    #[test]
    fn a_pytest_cov_gate_shows_pytest_with_no_failed_test() {
        for log in [captured!("pytest_cov_fail"), captured!("pytest_q_cov_fail")] {
            let r = read(log);
            assert_eq!(r.runners, vec![Runner::Pytest], "{log}");
            assert_eq!(r.counts, counts(2, 0, 0, 2), "{log}");
        }
        let r = read(captured!("pytest_cov_killed"));
        assert_eq!(r.counts, counts(1, 1, 0, 2));
    }

    #[test]
    fn pytest_summaries_count_every_kind_of_test() {
        // 1 failed, 2 passed, 1 skipped, 1 deselected, 1 xfailed, 1 xpassed, 1 warning, 1 error
        let r = read(captured!("pytest_mixed"));
        assert_eq!(r.runners, vec![Runner::Pytest]);
        assert_eq!(r.counts, counts(3, 1, 1, 7));
        // The same under -q, without the `=` rule.
        let r = read(captured!("pytest_q_mixed"));
        assert_eq!(r.counts, counts(2, 1, 1, 6));
        let r = read(captured!("pytest_no_tests"));
        assert_eq!(r.counts, counts(0, 0, 0, 0));
        assert_eq!(
            pytest_summary("==== 3 passed, 2 subtests passed in 65.43s (0:01:05) ===="),
            counts(3, 0, 0, 3)
        );
        assert_eq!(pytest_summary("1 rerun in 0.1s"), None);
    }

    #[test]
    fn pytest_is_seen_without_a_summary_line() {
        let r = read(captured!("pytest_collection_error"));
        assert_eq!(r.runners, vec![Runner::Pytest]);
        assert_eq!(r.counts, counts(0, 0, 1, 1));
        // -qq prints no summary line, but the collection interrupt.
        let r = read(captured!("pytest_qq_collection_error"));
        assert_eq!((r.runners, r.counts), (vec![Runner::Pytest], None));
        let r = read(captured!("pytest_usage_error"));
        assert_eq!((r.runners, r.counts), (vec![Runner::Pytest], None));
        let r = read("INTERNALERROR> Traceback (most recent call last):\n");
        assert_eq!(r.runners, vec![Runner::Pytest]);
    }

    #[test]
    fn the_report_pytest_names_is_found() {
        let r = read(captured!("pytest_user_junitxml"));
        assert_eq!(r.pytest_report, Some(PathBuf::from("/tmp/cap/user.xml")));
        assert_eq!(r.counts, counts(2, 0, 0, 2));
    }

    #[test]
    fn jest_coverage_threshold_and_kill() {
        for log in [captured!("jest_cov_fail"), captured!("jest_color_cov_fail")] {
            let r = read(log);
            assert_eq!(r.runners, vec![Runner::Jest], "{log}");
            assert_eq!(r.counts, counts(5, 0, 0, 5), "{log}");
        }
        assert_eq!(read(captured!("jest_killed")).counts, counts(4, 1, 0, 5));
        // A test file that failed to load is not a failed test.
        assert_eq!(
            read(captured!("jest_suite_failed")).counts,
            counts(5, 0, 0, 5)
        );
        assert_eq!(
            jest_summary("Tests:       1 skipped, 2 passed, 3 of 10 total"),
            counts(2, 0, 0, 3)
        );
        assert_eq!(jest_summary("Tests:       0 total"), counts(0, 0, 0, 0));
        // The message of older jest versions changes nothing.
        let old = "Jest: \"global\" coverage threshold for lines (80%) not met: 50%\nTest Suites: 1 passed, 1 total\nTests:       5 passed, 5 total\n";
        assert_eq!(read(old).counts, counts(5, 0, 0, 5));
    }

    #[test]
    fn vitest_coverage_threshold_and_kill() {
        for log in [
            captured!("vitest_cov_fail"),
            captured!("vitest_color_cov_fail"),
        ] {
            let r = read(log);
            assert_eq!(r.runners, vec![Runner::Vitest], "{log}");
            assert_eq!(r.counts, counts(5, 0, 0, 5), "{log}");
        }
        assert_eq!(read(captured!("vitest_killed")).counts, counts(4, 1, 0, 5));
        assert_eq!(
            read(captured!("vitest_suite_failed")).counts,
            counts(5, 0, 0, 5)
        );
        // An unhandled error is not attributed to a test.
        assert_eq!(
            read(captured!("vitest_unhandled_error")).counts,
            counts(7, 0, 0, 7)
        );
        assert_eq!(vitest_summary("Tests  no tests"), counts(0, 0, 0, 0));
    }

    #[test]
    fn unrelated_output_shows_no_runner() {
        let r = read("building...\n3 files in 0.2s\nTests: fine\nok\n");
        assert_eq!(r, LogReading::default());
    }

    #[test]
    fn summaries_add_up_across_sessions() {
        let log = "== 3 passed in 0.1s ==\n== 1 failed, 1 passed in 0.2s ==\n";
        assert_eq!(read(log).counts, counts(4, 1, 0, 5));
    }

    #[test]
    fn unguards_header_is_not_output() {
        let log = "# unguard: mutant m (a.py:1)\n# cwd: /tmp/x\n# timeout: 5.0s\n$ echo '5 passed in 1s'\n\nreal output\n\n# unguard: exit code 1 after 0.10s\n";
        assert_eq!(
            suite_output(log),
            "real output\n\n# unguard: exit code 1 after 0.10s\n"
        );
        assert_eq!(read(suite_output(log)), LogReading::default());
        assert_eq!(suite_output("plain"), "plain");
    }

    #[test]
    fn observed_lets_the_report_decide() {
        let log = read(captured!("pytest_cov_fail"));
        let report = crate::outcome::reading::junit::parse(
            r#"<testsuite><testcase classname="t" name="a"/><testcase classname="t" name="b"><failure/></testcase></testsuite>"#,
        )
        .unwrap();
        let o = Observed::new(log.clone(), Some(report.clone())).unwrap();
        assert_eq!((o.total(), o.red()), (Some(2), Some(1)));
        assert!(o.pytest_alone());
        assert_eq!(o.source(), "pytest's JUnit report");
        let o = Observed::new(log, None).unwrap();
        assert_eq!((o.total(), o.red()), (Some(2), Some(0)));
        assert_eq!(o.source(), "pytest's summary line");
        // A report alone (pytest -qq) is enough to know pytest ran.
        let o = Observed::new(LogReading::default(), Some(report)).unwrap();
        assert_eq!(o.runners, vec![Runner::Pytest]);
        assert!(Observed::new(LogReading::default(), None).is_none());
        let both = read("Tests:       5 passed, 5 total\n== 2 passed in 0.1s ==\n");
        let o = Observed::new(both, None).unwrap();
        assert!(!o.pytest_alone());
        assert_eq!(o.runner_names(), "jest and pytest");
        // A summary-looking line (a lint step's, a second session's) never
        // adds red tests to the per-test report.
        let two = read("== 1 failed, 1 passed in 0.1s ==\n== 2 passed in 0.1s ==\n");
        let last = crate::outcome::reading::junit::parse(
            r#"<testsuite><testcase classname="t" name="a"/><testcase classname="t" name="b"/></testsuite>"#,
        )
        .unwrap();
        let o = Observed::new(two, Some(last)).unwrap();
        assert_eq!((o.total(), o.red()), (Some(2), Some(0)));
        // A collection failure in the report is not a red test.
        let broken = crate::outcome::reading::junit::parse(
            r#"<testsuite><testcase classname="" name="tests.test_x"><error message="collection failure"/></testcase></testsuite>"#,
        )
        .unwrap();
        let o = Observed::new(LogReading::default(), Some(broken)).unwrap();
        assert_eq!((o.total(), o.red()), (Some(1), Some(0)));
    }

    #[test]
    fn pytest_load_errors_are_seen_in_the_log() {
        for line in [
            "ImportError while loading conftest '/t/tests/conftest.py'.",
            "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!",
            "INTERNALERROR> pytest.PytestConfigWarning: Unknown config option: cache_dir",
            "ERROR: usage: pytest [options] [file_or_dir] [file_or_dir] [...]",
            "ERROR: file or directory not found: tests/nope.py",
            "ImportError: Error importing plugin \"unguard_select\": No module named 'unguard_select'",
        ] {
            let r = read(&format!("make: entering\n{line}\nmake: *** [Makefile:2: test] Error 4\n"));
            assert_eq!(r.load_error.as_deref(), Some(line), "{line}");
            assert_eq!(r.runners, vec![Runner::Pytest], "{line}");
        }
        let r = read("tests/test_a.py F.\n== 1 failed, 1 passed in 0.1s ==\n");
        assert_eq!(r.load_error, None);
    }

    #[test]
    fn unittest_summaries_and_import_failures_are_read() {
        let broken = "E\n======================================================================\nERROR: tests.test_guard (unittest.loader._FailedTest.tests.test_guard)\n----------------------------------------------------------------------\nImportError: Failed to import test module: tests.test_guard\nTraceback (most recent call last):\nModuleNotFoundError: No module named 'hmacx'\n\n\n----------------------------------------------------------------------\nRan 1 test in 0.000s\n\nFAILED (errors=1)\n";
        let r = read(broken);
        assert_eq!(r.runners, vec![Runner::Unittest]);
        assert_eq!(r.counts, counts(0, 0, 1, 1));
        assert_eq!(
            r.load_error.as_deref(),
            Some("ERROR: tests.test_guard (unittest.loader._FailedTest.tests.test_guard)")
        );
        // Before Python 3.11 the placeholder's name had no suffix.
        let old = read("ERROR: test_guard (unittest.loader._FailedTest)\n");
        assert!(old.load_error.is_some());
        let o = Observed::new(r, None).unwrap();
        assert_eq!(o.load_error_runner(), "unittest");
        let mixed = read("Ran 6 tests in 0.010s\n\nFAILED (failures=1, errors=2, skipped=1, expected failures=1)\n");
        assert_eq!(mixed.counts, counts(1, 1, 2, 6));
        assert_eq!(mixed.load_error, None);
        let green = read("......\nRan 6 tests in 0.010s\n\nOK (skipped=1)\n");
        assert_eq!(green.counts, counts(6, 0, 0, 6));
        assert_eq!(green.runners, vec![Runner::Unittest]);
        // pytest's short summary is not unittest's result line.
        assert_eq!(
            unittest_failed("FAILED tests/t.py::test_x - assert 1"),
            None
        );
    }
}
