//! Visible skips ([`crate::common::skip`]): a test that cannot run for want
//! of a tool says so in `cargo test`'s own output and in the summary at the
//! end, without `--nocapture`; under `CI` the same test fails. Checked by
//! running this very test binary on one Go test with no `go` on PATH.

use std::process::Command;

/// A test that skips when `go` is missing (it probes first thing).
const GO_TEST: &str = "go_test_json::go_test_json_in_the_log_gives_per_test_verdicts";

/// Run this test binary on exactly `tests`, with no `go` on PATH and
/// libtest's capture on: (success, stdout + stderr).
fn run_self(tests: &[&str], ci: bool) -> (bool, String) {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.arg("--exact")
        .args(tests)
        .env("PATH", "/nonexistent")
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
    let (ok, out) = run_self(&[GO_TEST, "zz_skipped_tests_summary"], false);
    assert!(ok, "a skip is not a failure outside CI:\n{out}");
    assert!(
        out.contains(&format!("SKIPPED {GO_TEST}: go is not installed")),
        "the skip is said as it happens, with the test's name:\n{out}"
    );
    assert!(
        out.contains("SKIPPED 1 test(s) that cannot run on this machine")
            && out.contains(&format!("    {GO_TEST}: go is not installed")),
        "the summary lists it:\n{out}"
    );

    let (ok, out) = run_self(&[GO_TEST], true);
    assert!(!ok, "under CI a missing tool fails the test:\n{out}");
    assert!(
        out.contains("go is not installed") && out.contains("1 failed"),
        "{out}"
    );
}
