//! Ctrl-C at every phase leaves no temp dir and no child, and no kind of run
//! (green, failing, timing out, interrupted, panicking) changes one byte,
//! mode bit or symlink of the user's tree.

use crate::common::*;

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn spec(command: &str, mutations: &[(&str, &str, &str)]) -> String {
    SpecBuilder::new(command)
        .preset("generic")
        .timeout("120s")
        .mutations(
            mutations
                .iter()
                .map(|(id, f, r)| mutation(id, "m.py", f, r)),
        )
        .build()
}

/// Start `unguard run` (more args appended), wait until `ready()` holds,
/// send SIGINT, and return what unguard did.
fn interrupt_when(fx: &Fixture, args: &[&str], ready: impl Fn() -> bool) -> (i32, String, String) {
    signal_when(fx, args, "-INT", ready)
}

/// Start `unguard run`, wait until `ready`, send it `sig` (`-INT`, `-HUP`).
/// `c` started with `sig`'s disposition at its default, whatever this
/// test process inherited (under `nohup`, or a CI runner that ignores
/// SIGHUP, an ignored signal stays ignored across exec): a small Python
/// shim resets it and execs `c` in its place (same pid).
fn default_disposition(c: std::process::Command, sig: &str) -> std::process::Command {
    let name = format!("SIG{}", sig.trim_start_matches('-'));
    let mut s = std::process::Command::new("python3");
    s.args([
        "-c",
        "import os, signal, sys; signal.signal(getattr(signal, sys.argv[1]), signal.SIG_DFL); os.execv(sys.argv[2], sys.argv[2:])",
        &name,
    ]);
    s.arg(c.get_program()).args(c.get_args());
    for (k, v) in c.get_envs() {
        match v {
            Some(v) => s.env(k, v),
            None => s.env_remove(k),
        };
    }
    if let Some(d) = c.get_current_dir() {
        s.current_dir(d);
    }
    s
}

fn signal_when(
    fx: &Fixture,
    args: &[&str],
    sig: &str,
    ready: impl Fn() -> bool,
) -> (i32, String, String) {
    let mut all = vec!["run", "--out", "out"];
    all.extend_from_slice(args);
    let mut c = default_disposition(fx.unguard(&all), sig);
    c.stdin(Stdio::null());
    let sp = spawn(c);
    let pid = sp.child.id().to_string();
    let start = Instant::now();
    while !ready() {
        if start.elapsed() > Duration::from_secs(60) {
            let (code, out, err, _) = sp.wait(Duration::from_secs(5));
            panic!("the phase never started: {}", ctx(code, &out, &err));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let st = std::process::Command::new("kill")
        .args([sig, &pid])
        .status()
        .unwrap();
    assert!(st.success());
    let (code, out, err, _) = sp.wait(Duration::from_secs(30));
    (code, out, err)
}

fn scratch_dirs(fx: &Fixture) -> usize {
    fx.leftover_tmp()
        .iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("unguard-w"))
        })
        .count()
}

#[test]
fn ctrl_c_while_copying_the_tree() {
    let mut files: Vec<(String, String)> = Vec::new();
    for d in 0..100 {
        for f in 0..300 {
            files.push((format!("data/d{d}/f{f}.txt"), "x".repeat(100)));
        }
    }
    let yaml = spec("python3 run.py", &[("v", "VALUE = 1", "VALUE = 2")]);
    files.push(("m.py".into(), "VALUE = 1\n".into()));
    files.push((
        "run.py".into(),
        "import m, sys\nsys.exit(0 if m.VALUE == 1 else 1)\n".into(),
    ));
    files.push(("unguard.yaml".into(), yaml));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let fx = Fixture::git(&refs);
    let before = tree_state(fx.path(), &["out"]);
    let (code, out, err) = interrupt_when(&fx, &["-j", "2"], || scratch_dirs(&fx) > 0);
    assert_eq!(code, 130, "{}", ctx(code, &out, &err));
    assert!(
        !fx.path().join("out/@baseline.log").exists(),
        "the interrupt was meant to land in the copy phase: {}",
        ctx(code, &out, &err)
    );
    assert!(fx.leftover_tmp().is_empty(), "{:?}", fx.leftover_tmp());
    assert_eq!(tree_state(fx.path(), &["out"]), before);
}

/// Send `sig` while the canary's suite hangs: the run stops like at Ctrl-C
/// (exit 130, no process and no scratch dir left, the tree untouched).
fn signal_during_the_canary(sig: &str) {
    let mk = marker(&format!("canary{sig}"));
    // Emptying m.py (the canary) makes the suite hang in a child process.
    let run_py = format!(
        r#"import subprocess, sys
import m
if not hasattr(m, "VALUE"):
    subprocess.run([sys.executable, "-c", "import time; time.sleep(300)", "{mk}"])
sys.exit(0 if m.VALUE == 1 else 1)
"#
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", &run_py),
        (
            "unguard.yaml",
            &spec("python3 run.py", &[("v", "VALUE = 1", "VALUE = 2")]),
        ),
    ]);
    let before = tree_state(fx.path(), &["out"]);
    let (code, out, err) = signal_when(&fx, &["-j", "1"], sig, || {
        !processes_matching(&mk).is_empty()
    });
    assert_eq!(code, 130, "{}", ctx(code, &out, &err));
    assert!(fx.path().join("out/@canary-m.py.log").exists());
    assert!(
        !fx.path().join("out/v.log").exists(),
        "a mutant ran after the interrupt"
    );
    assert_no_processes(&mk, &format!("after {sig} in the canary"));
    assert!(fx.leftover_tmp().is_empty(), "{:?}", fx.leftover_tmp());
    assert_eq!(tree_state(fx.path(), &["out"]), before);
}

#[test]
fn ctrl_c_during_the_canary() {
    signal_during_the_canary("-INT");
}

#[test]
fn a_closed_terminal_sighup_ends_the_run_like_ctrl_c() {
    signal_during_the_canary("-HUP");
}

#[test]
fn under_nohup_sighup_stays_ignored() {
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        (
            "run.py",
            "import sys, time\nimport m\ntime.sleep(1)\nsys.exit(0 if m.VALUE == 1 else 1)\n",
        ),
        (
            "unguard.yaml",
            &spec("python3 run.py", &[("v", "VALUE = 1", "VALUE = 2")]),
        ),
    ]);
    // `trap "" HUP` ignores SIGHUP, as nohup does, and exec keeps it ignored.
    let exe = env!("CARGO_BIN_EXE_unguard");
    let mut c = std::process::Command::new("sh");
    c.args([
        "-c",
        &format!("trap '' HUP; exec {exe} run --out out -j 1 --no-canary"),
    ])
    .current_dir(fx.path())
    .stdin(Stdio::null());
    let sp = spawn(c);
    let pid = sp.child.id().to_string();
    let start = Instant::now();
    while !fx.path().join("out/@baseline.log").exists() && start.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    let st = std::process::Command::new("kill")
        .args(["-HUP", &pid])
        .status()
        .unwrap();
    assert!(st.success());
    let (code, out, err, _) = sp.wait(Duration::from_secs(60));
    assert_eq!(code, 0, "the run went on: {}", ctx(code, &out, &err));
    assert_eq!(fx.verdicts("out")["v"], "killed");
}

/// A tree with an executable, a read-only file, a symlink to a file, a
/// symlink to a directory, a dangling symlink, an empty dir, untracked and
/// ignored files, and uncommitted edits.
fn rich_fixture(run_py: &str, mutations: &[(&str, &str, &str)]) -> Fixture {
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\nOTHER = 1\nSLOW = 0\n"),
        ("run.py", run_py),
        ("unguard.yaml", &spec("python3 run.py", mutations)),
        ("bin/tool.sh", "#!/bin/sh\necho tool\n"),
        ("docs/readme.txt", "docs\n"),
        ("ro.txt", "read only\n"),
        (".gitignore", "ignored.txt\nout/\n"),
    ]);
    let p = fx.path();
    std::fs::set_permissions(
        p.join("bin/tool.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(p.join("ro.txt"), std::fs::Permissions::from_mode(0o444)).unwrap();
    std::os::unix::fs::symlink("docs/readme.txt", p.join("link-file")).unwrap();
    std::os::unix::fs::symlink("docs", p.join("link-dir")).unwrap();
    std::os::unix::fs::symlink("nowhere", p.join("link-dangling")).unwrap();
    std::fs::create_dir(p.join("empty")).unwrap();
    fx.write("ignored.txt", "ignored\n");
    fx.write("untracked.txt", "untracked\n");
    fx.write("docs/readme.txt", "docs, edited\n");
    fx
}

#[test]
fn no_kind_of_run_changes_the_user_tree() {
    let mk = marker("tree");
    let run_py = format!(
        r#"import subprocess, sys, time
import m
if m.SLOW == 1:
    time.sleep(300)
if m.SLOW == 2:
    subprocess.run([sys.executable, "-c", "import time; time.sleep(300)", "{mk}"])
sys.exit(0 if m.VALUE == 1 else 1)
"#
    );
    let muts: &[(&str, &str, &str)] = &[
        ("kill", "VALUE = 1", "VALUE = 2"),
        ("survive", "OTHER = 1", "OTHER = 2"),
        ("hang", "SLOW = 0", "SLOW = 1"),
        ("interrupt", "SLOW = 0", "SLOW = 2"),
    ];
    let fx = rich_fixture(&run_py, muts);
    let before = tree_state(fx.path(), &["out"]);
    let check = |what: &str| {
        let after = tree_state(fx.path(), &["out"]);
        assert_eq!(after, before, "{what} changed the user's tree");
        assert!(
            fx.leftover_tmp().is_empty(),
            "{what}: {:?}",
            fx.leftover_tmp()
        );
    };

    let (code, out, err) = fx.run(&["run", "--out", "out", "--only", "kill"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    check("a green run");

    let (code, out, err) = fx.run(&["run", "--out", "out", "--only", "kill", "survive"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    check("a failing run");

    let (code, out, err) = fx.run(&["run", "--out", "out", "--only", "hang", "--timeout", "5s"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(fx.verdicts("out")["hang"], "timeout");
    check("a run that timed out");

    let (code, out, err) = interrupt_when(&fx, &["--only", "interrupt", "--no-canary"], || {
        !processes_matching(&mk).is_empty()
    });
    assert_eq!(code, 130, "{}", ctx(code, &out, &err));
    assert_no_processes(&mk, "after the interrupt");
    check("an interrupted run");

    let o = fx
        .unguard(&["run", "--out", "out", "--only", "kill", "survive"])
        .env("UNGUARD_TEST_PANIC_IN", "kill")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(fx.verdicts("out")["kill"], "internal-error");
    check("a run with a panic");
}
