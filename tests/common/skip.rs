//! Visible skips. libtest has no "skipped" result, so a test that cannot
//! run here (a tool this machine lacks) used to return early and show as
//! `ok`. Every such test calls one of these instead:
//!
//! - it writes `SKIPPED <test>: <reason>` straight to the process's stderr,
//!   past libtest's output capture, so `cargo test` shows it as it happens;
//! - when [`SKIPS_FILE`] names a file, it appends `<test>: <reason>` to it
//!   (`.ci/test` sets it and lists the file after the run: nextest shows a
//!   passing test's output only on failure, and a list made in the test
//!   process would need a test that runs last, which neither libtest nor
//!   nextest promises);
//! - under `CI` (set and not empty; `.ci/run` installs every tool) a missing
//!   tool fails the test instead ([`missing`]).

use std::io::Write;

/// The environment variable naming the file every skip is appended to,
/// one `<test>: <reason>` line each (unset: skips are only said).
pub const SKIPS_FILE: &str = "UNGUARD_TEST_SKIPS";

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

/// Say the skip, and append it to the [`SKIPS_FILE`] (one `write` of one
/// line in append mode: the tests of every thread and process land whole).
fn record(reason: &str) {
    let entry = format!("{}: {reason}", test_name());
    say(&format!("SKIPPED {entry}"));
    if let Some(path) = std::env::var_os(SKIPS_FILE).filter(|p| !p.is_empty()) {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(format!("{entry}\n").as_bytes()));
        if let Err(e) = appended {
            say(&format!("(could not record the skip in {path:?}: {e})"));
        }
    }
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

/// Whether `go` runs here (Debian's golang-go; `.ci/run` installs it); its
/// absence is a [`missing`] skip, so under `CI` it fails the test.
pub fn have_go() -> bool {
    let ok = std::process::Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        missing("go is not installed (apt-get install -y golang-go)");
    }
    ok
}
