//! Visible skips. libtest has no "skipped" result, so a test that cannot
//! run here (a tool this machine lacks) used to return early and show as
//! `ok`. Every such test calls one of these instead:
//!
//! - it writes `SKIPPED <test>: <reason>` straight to the process's stderr,
//!   past libtest's output capture, so `cargo test` shows it as it happens;
//! - it records the skip, and the crate's last test
//!   (`zz_skipped_tests_summary`) lists every recorded one before the
//!   `test result:` line;
//! - under `CI` (set and not empty; `.ci/run` installs every tool) a missing
//!   tool fails the test instead ([`missing`]).

use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

/// Every skip so far in this test process: `<test>: <reason>`.
static SKIPPED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Whether this is a CI run (`CI` set and not empty), where every tool the
/// tests need is installed and a missing one is a failure.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// The running test's name (libtest names each test's thread after it).
fn test_name() -> String {
    std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .unwrap_or("<test>")
        .to_string()
}

/// Write `line` to stderr itself, not through `eprintln!`, which libtest
/// captures and shows only for a failing test.
fn say(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
    let _ = err.flush();
}

fn record(reason: &str) {
    let entry = format!("{}: {reason}", test_name());
    say(&format!("SKIPPED {entry}"));
    SKIPPED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(entry);
}

/// The calling test cannot run because a tool is missing (`reason` says
/// which, and how to install it): fails the test under `CI`, else says so
/// and records it. The caller returns right after.
pub fn missing(reason: &str) {
    assert!(!in_ci(), "{reason} (CI is set: .ci/run installs it)");
    record(reason);
}

/// The calling test cannot run because of this machine, not a tool (not
/// root, no tmpfs mount): says so and records it, also under `CI`, whose
/// runners do not promise either.
pub fn not_here(reason: &str) {
    record(reason);
}

/// `Some(value)` when `found` holds one, else a [`missing`] skip with
/// `reason` and `None`.
pub fn require<T>(found: Option<T>, reason: &str) -> Option<T> {
    if found.is_none() {
        missing(reason);
    }
    found
}

/// List every recorded skip. Runs as the crate's last test: libtest starts
/// tests in name order, so every other test has started, and a skip comes
/// at a test's start (a probe); the short grace lets the last ones land.
pub fn summary() {
    std::thread::sleep(Duration::from_secs(3));
    let skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if skipped.is_empty() {
        return;
    }
    let mut text = format!(
        "\nSKIPPED {} test(s) that cannot run on this machine (with CI set, a missing tool fails them):\n",
        skipped.len()
    );
    for s in &skipped {
        text.push_str(&format!("    {s}\n"));
    }
    say(&text);
}
