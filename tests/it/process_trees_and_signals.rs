//! Reliability of the runner: no process of a suite outlives unguard (even
//! one that double-forked out of its group and cleared its environment), a
//! suite's output is capped in its log, and a second Ctrl-C exits at once.

use crate::common::*;

use std::process::Stdio;
use std::time::Duration;

fn spec(command: &str, timeout: &str, mutations: &[(&str, &str, &str)]) -> String {
    let mut s = format!(
        "version: 1\ntest:\n  command: '{command}'\n  preset: generic\n  timeout: {timeout}\nmutations:\n"
    );
    for (id, find, replace) in mutations {
        s.push_str(&format!(
            "  - id: {id}\n    control: \"control {id}\"\n    file: m.py\n    find: '{find}'\n    replace: '{replace}'\n"
        ));
    }
    s
}

/// A suite that leaves a daemon behind which escaped every per-run net: it
/// double-forks (the middle process exits, so the daemon is orphaned), calls
/// setsid (leaves the process group) and execs with an empty environment
/// (drops the run token). Only the subreaper still sees it.
fn daemonizing_run_py(mk: &str) -> String {
    format!(
        r#"import os, sys
import m
if m.DAEMON:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", "{mk}"], {{}})
        os._exit(0)
    os.wait()
sys.exit(0 if m.VALUE == 1 else 1)
"#
    )
}

#[test]
fn a_daemon_that_left_group_session_and_environment_is_killed() {
    let mk = marker("orphan");
    let fx = Fixture::git(&[
        ("m.py", "DAEMON = False\nVALUE = 1\n"),
        ("run.py", &daemonizing_run_py(&mk)),
        (
            "unguard.yaml",
            &spec(
                "python3 run.py",
                "30s",
                &[
                    ("daemon-survives", "DAEMON = False", "DAEMON = True"),
                    ("daemon-killed", "VALUE = 1", "VALUE = 2\nDAEMON = True"),
                ],
            ),
        ),
    ]);
    let (code, out, err) = fx.run(&["run", "-j", "1", "--out", "out", "--no-canary"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_no_processes(&mk, "after a run whose suite daemonized");
    // The sweep is logged where it happened.
    let log = fx.read("out/daemon-survives.log");
    assert!(
        log.contains("left running outside its process group"),
        "{log}"
    );
    assert!(fx.leftover_tmp().is_empty());
}

#[test]
fn orphans_are_swept_after_each_run_not_only_at_the_end() {
    // With -j 1, the daemon of the first mutant must be gone before the
    // second mutant's suite starts: that suite fails if it sees one.
    let mk = marker("between");
    let run_py = format!(
        r#"import os, sys
import m
def leftover(pid):
    # Processes come and go while we scan: a vanished one is no leftover.
    try:
        cmd = open(f"/proc/{{pid}}/cmdline", "rb").read().decode(errors="replace")
        state = open(f"/proc/{{pid}}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return "{mk}" in cmd and state != "Z"
alive = [p for p in os.listdir("/proc") if p.isdigit() and leftover(p)]
if alive:
    print("daemon of an earlier run still alive:", alive)
    sys.exit(3)
if m.DAEMON:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", "{mk}"], {{}})
        os._exit(0)
    os.wait()
sys.exit(0 if m.VALUE == 1 else 1)
"#
    );
    let fx = Fixture::git(&[
        ("m.py", "DAEMON = False\nVALUE = 1\n"),
        ("run.py", &run_py),
        (
            "unguard.yaml",
            &spec(
                "python3 run.py",
                "30s",
                &[
                    ("first", "DAEMON = False", "DAEMON = True"),
                    ("second", "VALUE = 1", "VALUE = 2"),
                ],
            ),
        ),
    ]);
    let (code, out, err) = fx.run(&["run", "-j", "1", "--out", "out", "--no-canary"]);
    // first survives (exit 0 with a daemon), second is killed by exit 1; a
    // leftover daemon would make second's suite exit 3 instead.
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    let second = fx.read("out/second.log");
    assert!(!second.contains("still alive"), "{second}");
    let v = fx.verdicts("out");
    assert_eq!(v["first"], "survived");
    assert_eq!(v["second"], "killed");
    assert_no_processes(&mk, "after the run");
}

#[test]
fn huge_output_is_capped_in_the_log_with_a_marker_and_the_tail() {
    // 24 MiB of output, then a last line: the log keeps 8 MiB + 1 MiB.
    let run_py = r#"import sys
import m
chunk = ("x" * 1023 + "\n") * 1024
for i in range(24):
    sys.stdout.write(chunk)
sys.stdout.write("LAST LINE OF THE SUITE\n")
sys.stdout.flush()
sys.exit(0 if m.VALUE == 1 else 1)
"#;
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", run_py),
        (
            "unguard.yaml",
            &spec(
                "python3 run.py",
                "60s",
                &[("loud", "VALUE = 1", "VALUE = 2")],
            ),
        ),
    ]);
    let (code, out, err) = fx.run(&["run", "-j", "1", "--out", "out", "--no-canary"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    for log in ["@baseline.log", "loud.log"] {
        let bytes = std::fs::read(fx.path().join("out").join(log)).unwrap();
        assert!(
            bytes.len() < 9 * 1024 * 1024 + 64 * 1024,
            "{log}: {} bytes",
            bytes.len()
        );
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            text.contains("# unguard: output truncated: 15728663 of 25165847 bytes left out"),
            "{log}: no truncation marker"
        );
        assert!(
            text.contains("LAST LINE OF THE SUITE\n"),
            "{log}: tail lost"
        );
        assert!(text.starts_with("# unguard:"), "{log}: header lost");
    }
}

#[test]
fn stdout_and_stderr_interleave_in_one_log() {
    let run_py = r#"import sys
import m
print("one", flush=True)
print("two", file=sys.stderr, flush=True)
print("three", flush=True)
sys.exit(0 if m.VALUE == 1 else 1)
"#;
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", run_py),
        (
            "unguard.yaml",
            &spec("python3 run.py", "60s", &[("m", "VALUE = 1", "VALUE = 2")]),
        ),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "--no-canary"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    let log = fx.read("out/m.log");
    assert!(log.contains("one\ntwo\nthree\n"), "{log}");
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_still_cleans_up() {
    let mk = marker("second-int");
    // The suite ignores SIGTERM, so the first Ctrl-C waits out the kill grace
    // (set to a minute here); the second must not.
    let run_py = format!(
        r#"import signal, subprocess, sys
import m
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if m.SLOW:
    subprocess.run(["sh", "-c", "trap '' TERM; sleep 300; : {mk}"])
sys.exit(0 if m.VALUE == 1 else 1)
"#
    );
    let fx = Fixture::git(&[
        ("m.py", "SLOW = False\nVALUE = 1\n"),
        ("run.py", &run_py),
        (
            "unguard.yaml",
            // `exec`: the group leader is Python itself (which ignores SIGTERM),
            // not an `sh` that would die of it at once.
            &spec(
                "exec python3 run.py",
                "300s",
                &[("slow", "SLOW = False", "SLOW = True")],
            ),
        ),
    ]);
    let mut c = fx.unguard(&["run", "--out", "out", "-j", "1", "--no-canary"]);
    c.env("UNGUARD_KILL_GRACE", "60").stdin(Stdio::null());
    let sp = spawn(c);
    let pid = sp.child.id().to_string();
    assert!(
        eventually(Duration::from_secs(30), || !processes_matching(&mk)
            .is_empty()),
        "the slow mutant never started"
    );
    let kill = |sig: &str| {
        std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
    };
    assert!(kill("-INT").success());
    std::thread::sleep(Duration::from_millis(500));
    assert!(kill("-INT").success());
    // Far less than the 60 s grace the first Ctrl-C is waiting out.
    let (code, out, err, _) = sp.wait(Duration::from_secs(30));
    assert_eq!(code, 130, "{}", ctx(code, &out, &err));
    assert!(err.contains("second interrupt"), "{err}");
    assert_no_processes(&mk, "after the second Ctrl-C");
    assert!(
        fx.leftover_tmp().is_empty(),
        "scratch dirs left: {:?}",
        fx.leftover_tmp()
    );
}
