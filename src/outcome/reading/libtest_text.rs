//! Reading `cargo test` output (libtest's text) into the per-test
//! [`Report`] every other runner's results become.
//!
//! cargo builds the test targets, then runs one test binary after another,
//! each introduced by a line of its own (`Running unittests src/lib.rs
//! (target/debug/deps/x-hash)`, `Running tests/it.rs (…)`, `Doc-tests x`);
//! libtest then prints `running N tests`, one `test a::b ... ok` line per
//! test (`FAILED`, `ignored`, `ignored, reason`), a `failures:` list and
//! `test result: …`. unguard reads those lines wherever they appear: in the
//! suite's log, or in the file `test.junit` names when the command writes
//! its output there.
//!
//! What counts, and why:
//! - a test's classname is the target its binary was built from, as the
//!   `Running` line names it (`src/lib.rs`, `tests/it.rs`, `Doc-tests x`):
//!   two binaries' tests of the same name stay two tests; its name is the
//!   libtest path (`tests::refuses_a_foreign_host`, without ` - should
//!   panic`), the name `cargo test -- --exact` selects it by;
//! - a binary that printed `running N tests` and never `test result:`
//!   crashed (a segfault, an abort, `process::exit` in a test): the test it
//!   was running (`test x ... ` with no result, as libtest prints with one
//!   thread) is an error, red; with several threads libtest names a test
//!   only when it ends, so the tests it never reported become one error of
//!   the binary (`<N tests unreported: the test binary crashed>`);
//! - a build failure (`error[E…]`, `error: could not compile`) runs no test
//!   and adds no red test, so a red exit with only that is never a kill:
//!   the mutant broke the build, it did not fail a test.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use crate::outcome::reading::model::{Report, Status, TestCase};

/// What libtest's lines in one text show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LibtestRun {
    /// Every test, in order of appearance.
    pub report: Report,
    /// cargo said a target could not be compiled (no test of it ran).
    pub build_failed: bool,
}

/// A test binary being read.
#[derive(Debug, Default)]
struct Binary {
    classname: String,
    /// `running N tests`.
    expected: usize,
    /// Tests it reported with a result.
    reported: usize,
    /// Indices (into the cases) of tests it started without a result yet.
    pending: Vec<usize>,
    /// Names in its `failures:` list.
    failures: HashSet<String>,
    in_failures: bool,
}

/// Whether `line` (trimmed) is one only cargo or libtest prints: a test
/// binary's start, its summary, or cargo's build failure.
pub fn is_marker(line: &str) -> bool {
    running_count(line).is_some()
        || line.starts_with("test result: ")
        || line.starts_with("error: could not compile `")
}

/// `running 3 tests` / `running 1 test`: the count.
fn running_count(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("running ")?;
    let n = rest
        .strip_suffix(" tests")
        .or_else(|| rest.strip_suffix(" test"))?;
    n.parse().ok()
}

/// The classname of a binary's `Running …` / `Doc-tests …` line (trimmed).
fn binary_classname(line: &str) -> Option<String> {
    if let Some(krate) = line.strip_prefix("Doc-tests ") {
        return Some(format!("Doc-tests {}", krate.trim()));
    }
    let rest = line.strip_prefix("Running ")?;
    let rest = rest.strip_prefix("unittests ").unwrap_or(rest);
    match rest.rsplit_once(" (") {
        // `src/lib.rs (target/debug/deps/x-hash)`
        Some((path, bin)) if bin.ends_with(')') => Some(path.to_string()),
        // cargo before 1.54: `Running target/debug/deps/x-hash`, the
        // binary's name without its hash.
        _ => {
            let file = rest.rsplit('/').next().unwrap_or(rest);
            let stem = file.rsplit_once('-').map_or(file, |(s, _)| s);
            Some(stem.to_string())
        }
    }
}

/// `test a::b ... ok`: the name (without ` - should panic`) and what
/// follows the dots.
fn test_line(line: &str) -> Option<(&str, &str)> {
    static TEST: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^test (.+?) \.\.\. ?(.*)$").expect("valid regex"));
    let caps = TEST.captures(line)?;
    let name = caps.get(1)?.as_str();
    let name = name.strip_suffix(" - should panic").unwrap_or(name);
    Some((name, caps.get(2)?.as_str()))
}

/// The status libtest printed after the dots; `None` when it is not one
/// (the test's own output under `--nocapture`, or cargo's error after a
/// crash, on the same line).
fn result_of(rest: &str) -> Option<Status> {
    match rest.trim_end() {
        "ok" => Some(Status::Passed),
        "FAILED" => Some(Status::Failed),
        r if r == "ignored" || r.starts_with("ignored, ") => Some(Status::Skipped),
        r if r.starts_with("bench:") => Some(Status::Passed),
        _ => None,
    }
}

/// Read every libtest line in `text` (other lines are skipped); `None`
/// when there is none (the text is not `cargo test` output).
pub fn parse(text: &str) -> Option<LibtestRun> {
    let mut cases: Vec<TestCase> = Vec::new();
    let mut run = LibtestRun::default();
    let mut seen = false;
    let mut classname = String::new();
    let mut binary: Option<Binary> = None;
    for raw in text.lines() {
        let raw = raw.rsplit('\r').next().unwrap_or(raw);
        let cleaned = crate::outcome::reading::strip_ansi(raw);
        let line = cleaned.trim();
        if let Some(name) = binary_classname(line) {
            if let Some(b) = binary.take() {
                crashed(b, &mut cases);
            }
            classname = name;
        } else if let Some(n) = running_count(line) {
            if let Some(b) = binary.take() {
                crashed(b, &mut cases);
            }
            seen = true;
            binary = Some(Binary {
                classname: classname.clone(),
                expected: n,
                ..Binary::default()
            });
        } else if line.starts_with("error: could not compile `") {
            seen = true;
            run.build_failed = true;
        } else if let Some(b) = binary.as_mut() {
            if line.starts_with("test result: ") {
                finished(binary.take().expect("a binary"), &mut cases);
            } else if let Some((name, rest)) = test_line(line) {
                b.in_failures = false;
                let status = result_of(rest);
                if status.is_some() {
                    b.reported += 1;
                }
                cases.push(TestCase {
                    classname: b.classname.clone(),
                    name: name.to_string(),
                    status: status.unwrap_or(Status::Error),
                });
                if status.is_none() {
                    b.pending.push(cases.len() - 1);
                }
            } else if line == "failures:" {
                b.in_failures = true;
            } else if b.in_failures && raw.starts_with("    ") && !line.contains(' ') {
                b.failures.insert(line.to_string());
            }
        }
    }
    if let Some(b) = binary.take() {
        crashed(b, &mut cases);
    }
    run.report = Report { cases };
    seen.then_some(run)
}

/// Binary `b` printed its `test result:`: its tests without a clear
/// result line ended (failed when its `failures:` list names them), and a
/// failed test it printed no line for (libtest's terse format) is added.
fn finished(b: Binary, cases: &mut Vec<TestCase>) {
    for &i in &b.pending {
        cases[i].status = if b.failures.contains(&cases[i].name) {
            Status::Failed
        } else {
            Status::Passed
        };
    }
    let mut listed: Vec<&String> = b.failures.iter().collect();
    listed.sort();
    for name in listed {
        let known = cases
            .iter()
            .any(|c| c.classname == b.classname && &c.name == name);
        if !known {
            cases.push(TestCase {
                classname: b.classname.clone(),
                name: name.clone(),
                status: Status::Failed,
            });
        }
    }
}

/// Binary `b` never printed its `test result:`: it died. The tests it was
/// running stay errors; when it named none, its unreported tests become
/// one error of the binary.
fn crashed(b: Binary, cases: &mut Vec<TestCase>) {
    if b.pending.is_empty() && b.reported < b.expected {
        cases.push(TestCase {
            classname: b.classname,
            name: format!(
                "<{} tests unreported: the test binary crashed>",
                b.expected - b.reported
            ),
            status: Status::Error,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real `cargo test --no-fail-fast` output (backtrace shortened): a
    /// pass, a fail, two ignored, a `should_panic`, two binaries with a
    /// test of the same name, doc tests.
    const FULL: &str = "   Compiling fx-guard v0.1.0 (/tmp/cx17)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 1.08s
     Running unittests src/lib.rs (target/debug/deps/fx_guard-5195afa6e3dcf3e8)

running 6 tests
test tests::ignored_plain ... ignored
test tests::ignored_reason ... ignored, slow
test tests::fails ... FAILED
test tests::panics - should panic ... ok
test tests::refuses_a_foreign_host ... ok
test tests::serves_localhost ... ok

failures:

---- tests::fails stdout ----

thread 'tests::fails' (2781) panicked at src/lib.rs:19:18:
assertion `left == right` failed
  left: 1
 right: 2
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::fails

test result: FAILED. 3 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out; finished in 0.11s

error: test failed, to rerun pass `--lib`
     Running tests/it.rs (target/debug/deps/it-3eed6c839f139ced)

running 2 tests
test crash ... ok
test tests::serves_localhost ... ok

test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests fx_guard

running 1 test
test src/lib.rs - host_allowed (line 3) ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s

error: 1 target failed:
    `--lib`
";

    fn statuses(run: &LibtestRun) -> Vec<(String, Status)> {
        run.report
            .cases
            .iter()
            .map(|c| (c.id(), c.status))
            .collect()
    }

    fn s(id: &str, status: Status) -> (String, Status) {
        (id.to_string(), status)
    }

    #[test]
    fn every_result_line_is_a_test_of_its_binary() {
        let run = parse(FULL).expect("libtest output");
        assert_eq!(
            statuses(&run),
            vec![
                s("src/lib.rs::tests::ignored_plain", Status::Skipped),
                s("src/lib.rs::tests::ignored_reason", Status::Skipped),
                s("src/lib.rs::tests::fails", Status::Failed),
                s("src/lib.rs::tests::panics", Status::Passed),
                s("src/lib.rs::tests::refuses_a_foreign_host", Status::Passed),
                s("src/lib.rs::tests::serves_localhost", Status::Passed),
                s("tests/it.rs::crash", Status::Passed),
                s("tests/it.rs::tests::serves_localhost", Status::Passed),
                s(
                    "Doc-tests fx_guard::src/lib.rs - host_allowed (line 3)",
                    Status::Passed
                ),
            ]
        );
        assert!(!run.build_failed);
        assert_eq!(run.report.red_ids(), vec!["src/lib.rs::tests::fails"]);
    }

    #[test]
    fn a_test_running_when_its_binary_crashed_is_an_error() {
        // One thread: libtest names the test as it starts; cargo's error
        // lands on the same line.
        let one = "     Running tests/it.rs (target/debug/deps/it-3eed6c839f139ced)

running 2 tests
test crash ... error: test failed, to rerun pass `--test it`

Caused by:
  process didn't exit successfully: `/tmp/cx17/target/debug/deps/it-3eed6c839f139ced --test-threads 1` (signal: 6, SIGABRT: process abort signal)
";
        let run = parse(one).unwrap();
        assert_eq!(statuses(&run), vec![s("tests/it.rs::crash", Status::Error)]);
        // Several threads: no test is named; the binary's unreported tests
        // are one error.
        let many = "     Running tests/it.rs (target/debug/deps/it-3eed6c839f139ced)

running 2 tests
error: test failed, to rerun pass `--test it`

Caused by:
  process didn't exit successfully: `/tmp/cx17/target/debug/deps/it-3eed6c839f139ced` (signal: 6, SIGABRT: process abort signal)
     Running unittests src/lib.rs (target/debug/deps/fx_guard-5195afa6e3dcf3e8)

running 1 test
test tests::serves_localhost ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 5 filtered out; finished in 0.08s
";
        let run = parse(many).unwrap();
        assert_eq!(
            statuses(&run),
            vec![
                s(
                    "tests/it.rs::<2 tests unreported: the test binary crashed>",
                    Status::Error
                ),
                s("src/lib.rs::tests::serves_localhost", Status::Passed),
            ]
        );
    }

    #[test]
    fn a_build_failure_adds_no_red_test() {
        let log = "   Compiling fx-guard v0.1.0 (/tmp/cx17)
error[E0425]: cannot find value `nope` in this scope
 --> src/lib.rs:8:28
  |
8 |     name == \"127.0.0.1\" || nope == \"localhost\"
  |                            ^^^^ not found in this scope

For more information about this error, try `rustc --explain E0425`.
error: could not compile `fx-guard` (lib) due to 1 previous error
warning: build failed, waiting for other jobs to finish...
error: could not compile `fx-guard` (lib test) due to 1 previous error
";
        let run = parse(log).expect("cargo's build failure");
        assert!(run.build_failed);
        assert!(run.report.cases.is_empty());
    }

    #[test]
    fn output_between_a_name_and_its_result_is_read_by_the_failures_list() {
        // --nocapture with one thread: a test's output follows its name.
        let log = "running 2 tests
test a ... hello
ok
test b ... printing
thread 'b' panicked at src/lib.rs:1:1:
FAILED

failures:

failures:
    b

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        let run = parse(log).unwrap();
        assert_eq!(
            statuses(&run),
            vec![s("a", Status::Passed), s("b", Status::Failed)]
        );
        // The terse format (`cargo test -q`) names only the failed tests.
        let terse = "running 3 tests\n.F.\nfailures:\n\n---- t::x stdout ----\nboom\n\nfailures:\n    t::x\n\ntest result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        assert_eq!(
            statuses(&parse(terse).unwrap()),
            vec![s("t::x", Status::Failed)]
        );
    }

    #[test]
    fn other_text_is_not_libtest_output() {
        assert!(parse("== 3 passed in 0.1s ==\nRan 3 tests in 0.001s\n").is_none());
        assert!(is_marker("running 3 tests"));
        assert!(is_marker("test result: ok. 1 passed; 0 failed"));
        assert!(!is_marker("test_a (tests.K.test_a) ... ok"));
    }
}
