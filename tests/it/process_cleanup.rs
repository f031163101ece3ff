//! How a run ends: SIGTERM with a grace period first, then SIGKILL for the
//! whole group, and no process of the suite left behind even when it hides
//! from the token sweep.

use crate::common::*;

#[test]
fn timeout_sends_sigterm_to_the_group_before_sigkill() {
    // The grandchild traps SIGTERM and says so: only a group SIGTERM reaches
    // it. Its handler takes a while, and the leader dies of SIGTERM at once:
    // the grace period must be the whole group's, not only the leader's.
    let suite = r#"#!/bin/sh
if grep -q HANG m.txt; then
  sh -c 'trap "sleep 0.5; echo GOT SIGTERM; exit 0" TERM; while true; do sleep 0.1; done' &
  wait
fi
exit 1
"#;
    let spec = r#"version: 1
test:
  command: "sh run.sh"
mutations:
  - id: hang
    control: c
    file: m.txt
    find: "ok"
    replace: "HANG"
    timeout: 1s
"#;
    let fx = Fixture::git(&[("run.sh", suite), ("m.txt", "ok\n"), ("unguard.yaml", spec)]);
    // The baseline must be green: flip the exit for the unmutated file.
    fx.write("run.sh", &suite.replace("exit 1\n", "exit 0\n"));
    fx.git_cmd(&["add", "-A"]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1", "--no-canary"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(fx.verdicts("out")["hang"], "timeout");
    let log = fx.read("out/hang.log");
    assert!(
        log.contains("GOT SIGTERM"),
        "the group got no SIGTERM:\n{log}"
    );
}

#[test]
fn background_process_without_the_run_token_is_killed_with_the_group() {
    // Stays in the process group but drops UNGUARD_RUN_TOKEN: only the final
    // group kill can catch it.
    let mk = marker("notoken");
    let suite = format!(
        "#!/bin/sh\nenv -u UNGUARD_RUN_TOKEN python3 -c 'import time; time.sleep(300)' {mk} &\nif grep -q BAD m.txt; then exit 1; fi\nexit 0\n"
    );
    let spec = &SpecBuilder::new("sh run.sh")
        .mutation(mutation("bad", "m.txt", "ok", "BAD").control("c"))
        .build();
    let fx = Fixture::git(&[
        ("run.sh", &suite),
        ("m.txt", "ok\n"),
        ("unguard.yaml", spec),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1", "--no-canary"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(fx.verdicts("out")["bad"], "killed");
    std::thread::sleep(std::time::Duration::from_millis(200));
    let left = processes_matching(&mk);
    assert!(left.is_empty(), "left running: {left:?}");
}

/// Root can write a 0444 file, so as root the read-only fallback would never
/// run: drop to `nobody` with setpriv to exercise it for real.
#[test]
fn read_only_target_is_mutated_when_not_running_as_root() {
    use std::os::unix::fs::PermissionsExt;
    let suite = "#!/bin/sh\nif grep -q BAD m.txt; then exit 1; fi\nexit 0\n";
    let spec = &SpecBuilder::new("sh run.sh")
        .mutation(mutation("bad", "m.txt", "ok", "BAD").control("c"))
        .build();
    let fx = Fixture::new();
    fx.write_all(&[("run.sh", suite), ("m.txt", "ok\n"), ("unguard.yaml", spec)]);
    let m = fx.path().join("m.txt");
    std::fs::set_permissions(&m, std::fs::Permissions::from_mode(0o444)).unwrap();
    let is_root = euid_is_root();
    let mut cmd = if is_root {
        for d in [fx.path(), fx.tmp.path()] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        // The build dir may sit below a directory `nobody` cannot enter: run a copy.
        let bin = fx.tmp.path().join("unguard-bin");
        std::fs::copy(assert_cmd::cargo::cargo_bin("unguard"), &bin).unwrap();
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin)
            .current_dir(fx.path())
            .env("TMPDIR", fx.tmp.path());
        c
    } else {
        fx.unguard(&[])
    };
    let out = cmd
        .args(["run", "--out", "out", "-j", "1", "--no-canary"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(fx.verdicts("out")["bad"], "killed", "{stderr}");
    let mode = std::fs::metadata(&m).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o444, "the user's file keeps its mode");
    assert_eq!(fx.read("m.txt"), "ok\n");
}
