//! The copy never leads back to the user's checkout and never leaks its
//! secrets: scratch dirs are private, symlinks into the tree point into the
//! copy, links that leave the root resolve to their original target, a repo
//! git cannot read stops the run, and nested ignored env dirs reach the copy.

mod common;
use common::*;

use std::path::Path;

/// A generic spec: `sh check.sh` is the suite, one mutant of `m.sh` that it
/// kills (`FLAG=1` becomes `FLAG=2`).
fn spec(file: &str) -> String {
    format!(
        "version: 1\ntest:\n  command: 'sh check.sh'\n  preset: generic\n  timeout: 60s\nmutations:\n  - id: flag\n    control: \"the flag\"\n    file: {file}\n    find: 'FLAG=1'\n    replace: 'FLAG=2'\n"
    )
}

/// `check.sh`: `probe` (shell lines), then green only while `m.sh` sets FLAG=1.
fn check(probe: &str) -> String {
    format!("set -e\n{probe}\n. ./m.sh\ntest \"$FLAG\" = 1\n")
}

/// Make `fx` a git repo with everything in it committed.
fn commit_all(fx: &Fixture) {
    fx.git_cmd(&["init", "-q", "-b", "main"]);
    fx.git_cmd(&["add", "-A"]);
    fx.commit("init");
}

fn run(fx: &Fixture, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["run", "--out", "out", "--timeout", "20s"];
    all.extend_from_slice(args);
    fx.run(&all)
}

/// Every scratch dir unguard makes in the shared temp dir is 0700 at its
/// top, while the run goes on: the suite itself lists them.
#[test]
fn scratch_dirs_are_private_while_the_suite_runs() {
    let seen = tempfile::tempdir().unwrap();
    let modes = seen.path().join("modes.txt");
    let fx = Fixture::new();
    let probe = format!(
        "stat -c '%a %n' {}/unguard-* >> {}",
        fx.tmp.path().display(),
        modes.display()
    );
    fx.write_all(&[
        ("unguard.yaml", &spec("m.sh")),
        ("m.sh", "FLAG=1\n"),
        ("secret.env", "TOKEN=hunter2\n"),
        ("check.sh", &check(&probe)),
    ]);
    commit_all(&fx);
    let (code, out, err) = run(&fx, &[]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(fx.verdicts("out")["flag"], "killed");
    let text = std::fs::read_to_string(&modes).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.iter().any(|l| l.contains("/unguard-w0-")),
        "the suite saw no scratch dir: {text}"
    );
    let open: Vec<&&str> = lines.iter().filter(|l| !l.starts_with("700 ")).collect();
    assert!(open.is_empty(), "scratch dirs other users can enter: {open:?}");
    // The pristine copy (the checkout's copy for the whole run) too.
    assert!(lines.iter().any(|l| l.contains("/unguard-pristine-")), "{text}");
}
