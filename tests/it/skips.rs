//! Visible skips ([`crate::common::skip`]): a test that cannot run for want
//! of a tool says so in `cargo test`'s own output, without `--nocapture`,
//! and appends itself to the skips file `.ci/run` lists after the tests;
//! under `CI` the same test fails. Checked by running this very test binary
//! on one Go test with no `go` on PATH.

use std::path::Path;
use std::process::Command;

use crate::common::skip::SKIPS_FILE;

/// A test that skips when `go` is missing (it probes first thing).
const GO_TEST: &str = "go_test_json::go_test_json_in_the_log_gives_per_test_verdicts";

/// Run this test binary on exactly `test`, with no `go` on PATH, libtest's
/// capture on and the skips recorded in `skips`: (success, stdout + stderr).
fn run_self(test: &str, ci: bool, skips: &Path) -> (bool, String) {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.arg("--exact")
        .arg(test)
        .env("PATH", "/nonexistent")
        .env(SKIPS_FILE, skips)
        .env_remove("CI")
        .env_remove("RUST_TEST_NOCAPTURE");
    if ci {
        c.env("CI", "1");
    }
    let out = c.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn a_missing_tool_is_a_visible_skip_and_a_failure_under_ci() {
    let dir = tempfile::tempdir().unwrap();
    let skips = dir.path().join("skips.txt");
    let (ok, out) = run_self(GO_TEST, false, &skips);
    assert!(ok, "a skip is not a failure outside CI:\n{out}");
    assert!(
        out.contains(&format!("SKIPPED {GO_TEST}: go is not installed")),
        "the skip is said as it happens, with the test's name:\n{out}"
    );
    let listed = std::fs::read_to_string(&skips).unwrap_or_default();
    assert!(
        listed.lines().count() == 1
            && listed.starts_with(&format!("{GO_TEST}: go is not installed")),
        "the skips file lists it, one line:\n{listed}\n{out}"
    );

    let ci_skips = dir.path().join("ci-skips.txt");
    let (ok, out) = run_self(GO_TEST, true, &ci_skips);
    assert!(!ok, "under CI a missing tool fails the test:\n{out}");
    assert!(
        out.contains("go is not installed") && out.contains("1 failed"),
        "{out}"
    );
    assert!(!ci_skips.exists(), "a failure is not listed as a skip");
}
