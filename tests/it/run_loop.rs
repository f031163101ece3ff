//! Integration tests of `unguard run`: the mutation loop end to end on tiny
//! real fixtures (plain Python scripts where speed matters, real pytest where
//! JUnit reports and pytest exit codes matter).
//!
//! Every test that runs the loop checks that unguard left nothing behind in
//! its TMPDIR, and most check that the user's tree (including `.git`) is
//! byte-identical afterwards.

use crate::common::*;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

// ------------------------------------------------------------------ helpers

/// pytest with a JUnit report and without the cache provider (it would write
/// `.pytest_cache` into the copy; harmless, but noise).
const PYTEST: &str = "python3 -m pytest -q -p no:cacheprovider --junitxml={junit}";

/// YAML single-quoted scalar.
fn sq(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// One `mutations:` entry; `extra` lines are added verbatim (indented).
fn mutation(id: &str, file: &str, find: &str, replace: &str, extra: &[&str]) -> String {
    let mut s = format!(
        "  - id: {id}\n    control: \"control {id}\"\n    file: {file}\n    find: {}\n    replace: {}\n",
        sq(find),
        sq(replace)
    );
    for e in extra {
        s.push_str("    ");
        s.push_str(e);
        s.push('\n');
    }
    s
}

/// A whole spec: `test` lines (indented under `test:`) and mutation entries.
fn spec(test: &[&str], mutations: &[String]) -> String {
    let mut s = String::from("version: 1\ntest:\n");
    for t in test {
        s.push_str("  ");
        s.push_str(t);
        s.push('\n');
    }
    s.push_str("mutations:\n");
    for m in mutations {
        s.push_str(m);
    }
    s
}

fn cmd(c: &str) -> String {
    format!("command: {}", sq(c))
}

/// Snapshot of the user's tree, minus the output dir(s).
fn snapshot(fx: &Fixture) -> BTreeMap<PathBuf, String> {
    tree_state(fx.path(), &["out", "out1", "out2"])
}

fn assert_untouched(fx: &Fixture, before: &BTreeMap<PathBuf, String>, what: &str) {
    let after = snapshot(fx);
    if &after != before {
        let mut diffs = Vec::new();
        for (k, v) in before {
            match after.get(k) {
                None => diffs.push(format!("removed {}", k.display())),
                Some(a) if a != v => diffs.push(format!("changed {} ({v} -> {a})", k.display())),
                _ => {}
            }
        }
        for k in after.keys() {
            if !before.contains_key(k) {
                diffs.push(format!("added {}", k.display()));
            }
        }
        panic!("{what}: the user's tree changed: {diffs:#?}");
    }
    assert_no_leftovers(fx, what);
}

fn assert_no_leftovers(fx: &Fixture, what: &str) {
    let left = fx.leftover_tmp();
    assert!(
        left.is_empty(),
        "{what}: unguard left scratch files behind: {left:?}"
    );
}

fn verdict(fx: &Fixture, out: &str, id: &str) -> String {
    fx.verdicts(out)
        .get(id)
        .cloned()
        .unwrap_or_else(|| panic!("no verdict for {id} in {out}/outcomes.json"))
}

fn mutant_json(fx: &Fixture, out: &str, id: &str) -> serde_json::Value {
    let v = fx.outcomes(out);
    v["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no mutant {id} in {out}/outcomes.json"))
}

/// Run unguard in the fixture. `PYTHONDONTWRITEBYTECODE` is removed from its
/// environment: with it set (as in some dev shells) Python writes no bytecode
/// at all, and the stale-bytecode and tree-untouched checks would prove nothing.
fn ug(fx: &Fixture, args: &[&str]) -> (i32, String, String) {
    let out = fx
        .unguard(args)
        .env_remove("PYTHONDONTWRITEBYTECODE")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The Markdown table rows of unguard's stdout, split into trimmed cells,
/// without the `time` column (the last one).
fn table_rows(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            let mut cells: Vec<String> = l
                .trim()
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect();
            cells.pop();
            cells
        })
        .filter(|cells| {
            !cells
                .iter()
                .all(|c| c.chars().all(|ch| ch == '-' || ch == ':'))
        })
        .collect()
}

// ---------------------------------------------- 1. what the copy contains

const COPY_RUN_PY: &str = r#"import os, sys, time
sys.path.insert(0, "src")
import m       # tracked, with an uncommitted edit
import extra   # untracked, not ignored
assert not os.path.exists("secret.txt"), "ignored file was copied"
assert not os.path.exists("build"), "ignored directory was copied"
assert not os.path.exists("gone.txt"), "a file deleted in the working tree was copied"
with open("newdir/deep/data.txt") as f:
    assert f.read() == "hello from an untracked dir\n"
if m.HANG:
    time.sleep(300)
sys.exit(0 if (m.VALUE == 7 and extra.EXTRA == 3) else 1)
"#;

#[test]
fn copy_has_uncommitted_and_untracked_files_not_ignored_ones_and_user_tree_is_untouched() {
    let yaml = spec(
        // An executable tracked script: its mode must survive the copy.
        &[&cmd("./run.sh"), "timeout: 20s"],
        &[
            mutation("kill", "src/m.py", "VALUE = 7", "VALUE = 8", &[]),
            mutation("survive", "src/extra.py", "UNUSED = 0", "UNUSED = 1", &[]),
            mutation(
                "hang",
                "src/m.py",
                "HANG = False",
                "HANG = True",
                &["timeout: 2s"],
            ),
        ],
    );
    let fx = Fixture::git(&[
        (".gitignore", "secret.txt\nbuild/\n__pycache__/\n"),
        ("src/m.py", "VALUE = 1\nHANG = False\n"),
        ("run.py", COPY_RUN_PY),
        ("run.sh", "#!/bin/sh\nexec python3 run.py\n"),
        ("gone.txt", "tracked, deleted in the working tree\n"),
        ("unguard.yaml", &yaml),
    ]);
    {
        use std::os::unix::fs::PermissionsExt;
        let p = fx.path().join("run.sh");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        fx.git_cmd(&["add", "run.sh"]);
        fx.commit("x");
    }
    // Working tree != HEAD: an uncommitted edit, an uncommitted deletion,
    // untracked files, ignored files.
    std::fs::remove_file(fx.path().join("gone.txt")).unwrap();
    fx.write("src/m.py", "VALUE = 7\nHANG = False\n");
    fx.write("src/extra.py", "EXTRA = 3\nUNUSED = 0\n");
    fx.write("newdir/deep/data.txt", "hello from an untracked dir\n");
    fx.write("secret.txt", "ignored: must not be copied\n");
    fx.write("build/artifact.txt", "ignored dir: must not be copied\n");
    let before = snapshot(&fx);

    // Green gate.
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1", "--only", "kill"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "kill"), "killed");
    assert_untouched(&fx, &before, "after a passing run");

    // Failed gate: the mutant in the untracked file survives.
    let (code, out, err) = ug(
        &fx,
        &[
            "run", "--out", "out", "-j", "1", "--only", "kill", "survive",
        ],
    );
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "kill"), "killed");
    assert_eq!(verdict(&fx, "out", "survive"), "survived");
    assert_untouched(&fx, &before, "after a failed gate");

    // Timeout.
    let (code, out, err) = ug(
        &fx,
        &[
            "run",
            "--out",
            "out",
            "-j",
            "1",
            "--only",
            "hang",
            "--timeout-is",
            "error",
        ],
    );
    assert_eq!(code, 3, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "hang"), "timeout");
    assert_untouched(&fx, &before, "after a timeout");
}

// ------------------------------------------------------------- 2. Ctrl-C

/// Start `unguard run`, wait until a process carrying `mk` runs and `log`
/// exists in the out dir, send `signal` to unguard; return its result.
fn interrupt_run(
    fx: &Fixture,
    mk: &str,
    log: &str,
    signal: &str,
) -> (i32, String, String, Duration) {
    let mut c = fx.unguard(&["run", "--out", "out", "-j", "1"]);
    c.stdin(Stdio::null());
    let sp = spawn(c);
    let pid = sp.child.id();
    let started = eventually(Duration::from_secs(30), || {
        !processes_matching(mk).is_empty() && fx.path().join("out").join(log).exists()
    });
    if !started {
        let (code, out, err, _) = sp.wait(Duration::from_secs(1));
        panic!("the slow run never started: {}", ctx(code, &out, &err));
    }
    let st = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    sp.wait(Duration::from_secs(20))
}

#[test]
fn ctrl_c_stops_the_run_kills_the_suite_and_cleans_up() {
    let mk = marker("sigint");
    let run_py = format!(
        r#"import subprocess, sys
sys.path.insert(0, "src")
import m
if m.SLOW:
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "{mk}"])
    p.wait()
sys.exit(0 if m.OK and m.VALUE == 1 else 1)
"#
    );
    let yaml = spec(
        &[&cmd("python3 run.py"), "timeout: 120s"],
        &[
            mutation("first", "src/m.py", "VALUE = 1", "VALUE = 2", &[]),
            mutation("slow", "src/m.py", "SLOW = False", "SLOW = True", &[]),
            mutation("later", "src/m.py", "OK = True", "OK = False", &[]),
        ],
    );
    let fx = Fixture::git(&[
        ("src/m.py", "OK = True\nSLOW = False\nVALUE = 1\n"),
        ("run.py", &run_py),
        ("unguard.yaml", &yaml),
    ]);
    let before = snapshot(&fx);

    let (code, out, err, took) = interrupt_run(&fx, &mk, "slow.log", "-INT");
    assert_eq!(code, 130, "{}", ctx(code, &out, &err));
    assert!(took < Duration::from_secs(10), "interrupt took {took:?}");
    assert_no_processes(&mk, "after SIGINT");
    assert_untouched(&fx, &before, "after SIGINT");

    // The rows that finished are reported; the interrupted and the unstarted
    // mutants get no verdict.
    assert!(
        out.lines()
            .any(|l| l.starts_with("| first") && l.contains("killed")),
        "finished row not printed: {}",
        ctx(code, &out, &err)
    );
    let o = fx.outcomes("out");
    assert_eq!(o["interrupted"], true, "{o:#}");
    assert_eq!(o["gate"]["exit_code"], 130, "{o:#}");
    let v = fx.verdicts("out");
    assert_eq!(v.get("first").map(String::as_str), Some("killed"), "{v:?}");
    assert!(
        !v.contains_key("slow"),
        "interrupted mutant got a verdict: {v:?}"
    );
    assert!(
        !v.contains_key("later"),
        "a mutant ran after the interrupt: {v:?}"
    );
    assert!(!fx.path().join("out/later.log").exists());
}

#[test]
fn sigterm_during_the_baseline_exits_130_and_cleans_up() {
    let mk = marker("sigterm");
    let run_py = format!(
        r#"import os, subprocess, sys
import m
if os.environ.get("UNGUARD_MUTANT") == "baseline":
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "{mk}"]).wait()
sys.exit(0 if m.VALUE == 1 else 1)
"#
    );
    let yaml = spec(
        &[&cmd("python3 run.py"), "timeout: 120s"],
        &[mutation("kill", "m.py", "VALUE = 1", "VALUE = 2", &[])],
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", &run_py),
        ("unguard.yaml", &yaml),
    ]);
    let before = snapshot(&fx);
    let (code, out, err, took) = interrupt_run(&fx, &mk, "@baseline.log", "-TERM");
    assert_eq!(code, 130, "{}", ctx(code, &out, &err));
    assert!(took < Duration::from_secs(10), "interrupt took {took:?}");
    assert_no_processes(&mk, "after SIGTERM");
    assert_untouched(&fx, &before, "after SIGTERM");
    assert!(
        !fx.path().join("out/kill.log").exists(),
        "a mutant ran after SIGTERM"
    );
}

// ------------------------------------------- 3. no process outlives a run

#[test]
fn hanging_suite_with_grandchildren_is_a_timeout_and_leaves_no_process() {
    let mk = marker("hang");
    let run_py = format!(
        r#"import subprocess, sys, time
sys.path.insert(0, "src")
import m
if m.HANG:
    sleeper = [sys.executable, "-c", "import time; time.sleep(300)", "{mk}"]
    subprocess.Popen(sleeper)
    subprocess.Popen(["sh", "-c", '"$0" -c "import time; time.sleep(300)" {mk} & "$0" -c "import time; time.sleep(300)" {mk} & wait', sys.executable])
    # One that shrugs off SIGTERM: only SIGKILL ends it.
    deaf = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)"
    subprocess.Popen([sys.executable, "-c", deaf, "{mk}"])
    print("SPAWNED grandchildren", flush=True)
    time.sleep(300)
sys.exit(0 if m.OK else 1)
"#
    );
    let yaml = spec(
        &[&cmd("python3 run.py"), "timeout: 30s"],
        &[
            mutation(
                "hang",
                "src/m.py",
                "HANG = False",
                "HANG = True",
                &["timeout: 3s"],
            ),
            mutation("kill", "src/m.py", "OK = True", "OK = False", &[]),
        ],
    );
    let fx = Fixture::git(&[
        ("src/m.py", "OK = True\nHANG = False\n"),
        ("run.py", &run_py),
        ("unguard.yaml", &yaml),
    ]);
    let before = snapshot(&fx);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "hang"), "timeout");
    assert_eq!(verdict(&fx, "out", "kill"), "killed");
    let log = fx.read("out/hang.log");
    assert!(
        log.contains("SPAWNED grandchildren"),
        "the hang never spawned: {log}"
    );
    assert_no_processes(&mk, "after a timed-out mutant");
    assert_untouched(&fx, &before, "after a timed-out mutant");
}

#[test]
fn background_process_left_by_a_finished_suite_is_killed() {
    let mk = marker("bg");
    let run_py = format!(
        r#"import subprocess, sys
sys.path.insert(0, "src")
import m
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "{mk}"])
print("LEFT RUNNING", p.pid, flush=True)
sys.exit(0 if m.OK else 1)
"#
    );
    let yaml = spec(
        &[&cmd("python3 run.py"), "timeout: 30s"],
        &[
            mutation("kill", "src/m.py", "OK = True", "OK = False", &[]),
            mutation("survive", "src/m.py", "UNUSED = 0", "UNUSED = 1", &[]),
        ],
    );
    let fx = Fixture::git(&[
        ("src/m.py", "OK = True\nUNUSED = 0\n"),
        ("run.py", &run_py),
        ("unguard.yaml", &yaml),
    ]);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "kill"), "killed");
    assert_eq!(verdict(&fx, "out", "survive"), "survived");
    for log in ["@baseline.log", "kill.log", "survive.log"] {
        let text = fx.read(&format!("out/{log}"));
        assert!(text.contains("LEFT RUNNING"), "{log}: {text}");
    }
    assert_no_processes(&mk, "after suites that left a background process");
    assert_no_leftovers(&fx, "background process");
}

/// A process the suite started in a new session (`start_new_session=True`,
/// `setsid`: the usual way a test fixture starts a server it wants to kill as
/// a group in teardown) is outside the process group unguard kills. When the
/// mutant hangs and is killed at the timeout, the fixture's teardown never runs
/// and the server stays up for good (holding its port: the next mutant on the
/// same worker then fails to bind, a red suite for the wrong reason).
#[test]
fn server_started_in_a_new_session_does_not_outlive_a_timed_out_mutant() {
    let mk = marker("session");
    let run_py = format!(
        r#"import subprocess, sys, time
import m
server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "{mk}"], start_new_session=True)
try:
    if m.HANG:
        time.sleep(300)
finally:
    server.kill()   # teardown: never reached when the suite is killed
sys.exit(0 if m.OK else 1)
"#
    );
    let yaml = spec(
        &[&cmd("python3 run.py"), "timeout: 30s"],
        &[mutation(
            "hang",
            "m.py",
            "HANG = False",
            "HANG = True",
            &["timeout: 2s"],
        )],
    );
    let fx = Fixture::git(&[
        ("m.py", "OK = True\nHANG = False\n"),
        ("run.py", &run_py),
        ("unguard.yaml", &yaml),
    ]);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "hang"), "timeout");
    assert_no_processes(
        &mk,
        "after a timed-out mutant whose server runs in its own session",
    );
    assert_no_leftovers(&fx, "new-session server");
}

// ------------------------------------------------------------ 4. canary

/// A git fixture with `src/m.py` and a suite (`python3 run.py`) that runs
/// `before`, imports `m` from the user's checkout (never the copy), then
/// runs `after`.
fn imports_the_checkout(m_py: &str, before: &str, after: &str, mutations: &[String]) -> Fixture {
    let fx = Fixture::git(&[("src/m.py", m_py)]);
    let src = fx.path().canonicalize().unwrap().join("src");
    let run_py = format!(
        "import sys, time\n{before}\nsys.path.insert(0, {:?})   # the user's checkout, not the copy\nimport m\n{after}\n",
        src.display().to_string()
    );
    fx.write("run.py", &run_py);
    fx.write("unguard.yaml", &spec(&[&cmd("python3 run.py")], mutations));
    fx
}

#[test]
fn canary_catches_a_suite_that_imports_the_original_checkout() {
    let fx = imports_the_checkout(
        "VALUE = 1\n",
        "",
        "sys.exit(0 if m.VALUE == 1 else 1)",
        &[mutation("value", "src/m.py", "VALUE = 1", "VALUE = 2", &[])],
    );
    let before = snapshot(&fx);

    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 5, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "value"), "unreached");
    let o = fx.outcomes("out");
    assert_eq!(o["canaries"][0]["file"], "src/m.py", "{o:#}");
    assert_eq!(o["canaries"][0]["reached"], false, "{o:#}");
    // Importing the original must not have littered it with bytecode either.
    assert_untouched(&fx, &before, "canary run");

    // Without the canary the same mutant looks like a surviving one: the reason it exists.
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1", "--no-canary"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "value"), "survived");
    assert_untouched(&fx, &before, "--no-canary run");
}

/// With two workers a file's mutants start while its canary still runs on
/// the other worker. When the canary then stays green, their verdicts are
/// `unreached` after all, no line says otherwise, and their diffs and logs
/// are gone from the out dir.
#[test]
fn mutants_that_ran_beside_a_green_canary_end_unreached_and_leave_no_files() {
    // Green whatever unguard does. The sleep keeps the canary running while
    // the other worker takes a mutant.
    let fx = imports_the_checkout(
        "A = 1\nB = 1\nC = 1\n",
        "time.sleep(1.0)",
        "sys.exit(0)",
        &[
            mutation("a", "src/m.py", "A = 1", "A = 2", &[]),
            mutation("b", "src/m.py", "B = 1", "B = 2", &[]),
            mutation("c", "src/m.py", "C = 1", "C = 2", &[]),
        ],
    );
    let before = snapshot(&fx);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "2"]);
    assert_eq!(code, 5, "{}", ctx(code, &out, &err));
    for id in ["a", "b", "c"] {
        assert_eq!(
            verdict(&fx, "out", id),
            "unreached",
            "{}",
            ctx(code, &out, &err)
        );
        for ext in ["log", "diff"] {
            let f = fx.path().join("out").join(format!("{id}.{ext}"));
            assert!(
                !f.exists(),
                "{} left behind\n{}",
                f.display(),
                ctx(code, &out, &err)
            );
        }
    }
    assert!(!err.contains("survived"), "{}", ctx(code, &out, &err));
    assert_untouched(&fx, &before, "speculative mutants beside a green canary");
    assert_no_leftovers(&fx, "speculative mutants beside a green canary");
}

/// A mutant that finishes before its file's canary waits for it: its verdict
/// line comes after the canary's, and it keeps its own verdict when the
/// canary goes red.
#[test]
fn a_verdict_that_beats_its_canary_waits_for_it_and_stands_when_reached() {
    // Emptied file: slow and red; otherwise fast, red only without the guard.
    let run_py = "import sys, time\nsrc = open('m.py').read()\nif not src.strip():\n    time.sleep(1.5)\n    sys.exit(1)\nsys.exit(0 if 'GUARD = True' in src else 1)\n";
    let fx = Fixture::git(&[
        ("m.py", "GUARD = True\nOTHER = 1\n"),
        ("run.py", run_py),
        (
            "unguard.yaml",
            &spec(
                &[&cmd("python3 run.py")],
                &[
                    mutation("guard", "m.py", "GUARD = True", "GUARD = False", &[]),
                    mutation("other", "m.py", "OTHER = 1", "OTHER = 2", &[]),
                ],
            ),
        ),
    ]);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "2"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "guard"), "killed");
    assert_eq!(verdict(&fx, "out", "other"), "survived");
    let canary = err
        .find("canary m.py: reached")
        .unwrap_or_else(|| panic!("{}", ctx(code, &out, &err)));
    for line in ["killed        guard", "survived      other"] {
        let at = err
            .find(line)
            .unwrap_or_else(|| panic!("no {line:?}\n{}", ctx(code, &out, &err)));
        assert!(
            at > canary,
            "{line:?} printed before the canary finished\n{}",
            ctx(code, &out, &err)
        );
    }
    assert!(fx.path().join("out/guard.log").exists());
    assert_no_leftovers(&fx, "verdicts held for their canary");
}

// --------------------------------------------------------- 5. killed_by

const KB_TEST: &str = r#"import m

def test_value():
    assert m.VALUE == 1

def test_other():
    assert m.OTHER == 1
"#;

#[test]
fn killed_by_decides_between_killed_and_wrong_reason() {
    let yaml = spec(
        &[&cmd(PYTEST), "junit: \"{junit}\""],
        &[
            mutation(
                "right",
                "m.py",
                "VALUE = 1",
                "VALUE = 2",
                &["expect:", "  killed_by: [\"tests/test_m.py::test_value\"]"],
            ),
            mutation(
                "wrong",
                "m.py",
                "OTHER = 1",
                "OTHER = 2",
                &["expect:", "  killed_by: [\"tests/test_m.py::test_value\"]"],
            ),
            mutation(
                "junit-form",
                "m.py",
                "OTHER = 1",
                "OTHER = 3",
                &["expect:", "  killed_by: [\"tests.test_m::test_other\"]"],
            ),
        ],
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\nOTHER = 1\n"),
        ("conftest.py", ""),
        ("tests/test_m.py", KB_TEST),
        ("unguard.yaml", &yaml),
    ]);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "right"), "killed");
    assert_eq!(verdict(&fx, "out", "junit-form"), "killed");
    assert_eq!(verdict(&fx, "out", "wrong"), "wrong-reason");
    let w = mutant_json(&fx, "out", "wrong");
    assert_eq!(
        w["red_tests"],
        serde_json::json!(["tests.test_m::test_other"]),
        "{w:#}"
    );
    assert!(out.contains("wrong-reason"), "{out}");
    assert_no_leftovers(&fx, "killed_by");
}

#[test]
fn killed_by_naming_no_baseline_test_is_a_spec_error_with_position() {
    let yaml = spec(
        &[&cmd(PYTEST), "junit: \"{junit}\""],
        &[
            mutation("fine", "m.py", "VALUE = 1", "VALUE = 2", &[]),
            mutation(
                "ghost",
                "m.py",
                "OTHER = 1",
                "OTHER = 2",
                &[
                    "expect:",
                    "  killed_by: [\"tests/test_m.py::test_does_not_exist\"]",
                ],
            ),
        ],
    );
    let line = yaml.lines().position(|l| l.contains("id: ghost")).unwrap() + 1;
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\nOTHER = 1\n"),
        ("conftest.py", ""),
        ("tests/test_m.py", KB_TEST),
        ("unguard.yaml", &yaml),
    ]);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 1, "{}", ctx(code, &out, &err));
    assert!(
        err.contains(&format!("unguard.yaml:{line}:")),
        "no spec position (line {line}): {err}"
    );
    assert!(err.contains("test_does_not_exist"), "{err}");
    assert!(err.contains("ghost"), "{err}");
    assert_no_leftovers(&fx, "killed_by spec error");
}

/// `test.junit` may name a fixed path (README: "where the command writes JUnit
/// XML"); a relative one is inside the copy. It must be read from there, and a
/// report left by an earlier run must never count for the next one.
#[test]
fn fixed_junit_path_is_read_and_never_reused_across_runs() {
    let pre_py = "import sys\nimport m\nsys.exit(1 if m.CRASH else 0)\n";
    let yaml = spec(
        &[
            &cmd("python3 pre.py && python3 -m pytest -q -p no:cacheprovider --junitxml=build/junit.xml"),
            "junit: build/junit.xml",
        ],
        &[
            mutation(
                "kill",
                "m.py",
                "VALUE = 1",
                "VALUE = 2",
                &["expect:", "  killed_by: [\"test_m.py::test_value\"]"],
            ),
            // Red before pytest runs: no report is written. The previous run's
            // report (with test_value red) is still at build/junit.xml in the copy
            // unless unguard removed it.
            mutation(
                "crash",
                "m.py",
                "CRASH = False",
                "CRASH = True",
                &["expect:", "  killed_by: [\"test_m.py::test_value\"]"],
            ),
        ],
    );
    let fx = Fixture::git(&[
        (".gitignore", "build/\n"),
        ("m.py", "VALUE = 1\nCRASH = False\n"),
        ("pre.py", pre_py),
        ("conftest.py", ""),
        (
            "test_m.py",
            "import m\n\ndef test_value():\n    assert m.VALUE == 1\n",
        ),
        ("unguard.yaml", &yaml),
    ]);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    let k = mutant_json(&fx, "out", "kill");
    assert_eq!(k["outcome"], "killed", "{k:#}");
    assert_eq!(
        k["red_tests"],
        serde_json::json!(["test_m::test_value"]),
        "{k:#}"
    );
    let c = mutant_json(&fx, "out", "crash");
    assert_eq!(
        c["outcome"], "wrong-reason",
        "a stale JUnit report was read: {c:#}"
    );
    assert_eq!(c["red_tests"], serde_json::json!([]), "{c:#}");
    assert!(
        !fx.path().join("build").exists(),
        "the report was written into the user's tree"
    );
    assert_no_leftovers(&fx, "fixed junit path");
}

// -------------------------------------------------- 6. stale bytecode

#[test]
fn same_length_mutation_restored_within_a_second_never_runs_stale_bytecode() {
    // Sensitivity, checked by hand: with the suite's bytecode in a prefix
    // unguard does not purge (`PYTHONPYCACHEPREFIX=$PWD/.pyc python3 run.py`),
    // every b<i> comes out `killed`. `ug` removes PYTHONDONTWRITEBYTECODE from
    // the environment, or no bytecode would be written and nothing proven.
    const PAIRS: usize = 5;
    let mut files: Vec<(String, String)> = vec![("m.py".into(), "VALUE = 1\n".into())];
    let mut imports = String::from("import m\n");
    let mut checks = String::from("ok = m.VALUE == 1\n");
    let mut muts = Vec::new();
    for i in 1..=PAIRS {
        files.push((format!("b{i}.py"), "OK = True\nUNUSED = 1\n".into()));
        imports.push_str(&format!("import b{i}\n"));
        checks.push_str(&format!("ok = ok and b{i}.OK\n"));
        // A: same length, killed. B (right after, same worker): benign, must survive.
        muts.push(mutation(
            &format!("a{i}"),
            "m.py",
            "VALUE = 1",
            "VALUE = 2",
            &[],
        ));
        muts.push(mutation(
            &format!("b{i}"),
            &format!("b{i}.py"),
            "UNUSED = 1",
            "UNUSED = 2",
            &[],
        ));
    }
    let run_py = format!("import sys\n{imports}{checks}sys.exit(0 if ok else 1)\n");
    files.push(("run.py".into(), run_py));
    files.push((
        "unguard.yaml".into(),
        spec(&[&cmd("python3 run.py"), "timeout: 30s"], &muts),
    ));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let fx = Fixture::git(&refs);

    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    let v = fx.verdicts("out");
    for i in 1..=PAIRS {
        assert_eq!(v[&format!("a{i}")], "killed", "{v:?}");
        assert_eq!(
            v[&format!("b{i}")],
            "survived",
            "b{i} was judged on stale bytecode of the previous mutant: {v:?}"
        );
    }
    assert_no_leftovers(&fx, "stale bytecode");
}

// ------------------------------------------- 7. pytest exit codes, baseline

const PT_CONFTEST: &str = r#"import pytest
import m

@pytest.fixture
def value():
    return m.VALUE
"#;
const PT_TEST: &str = "def test_value(value):\n    assert value == 1\n";

#[test]
fn pytest_usage_error_and_no_tests_under_a_mutant_are_wrong_reason() {
    let yaml = spec(
        &[
            &cmd("python3 -m pytest -p no:cacheprovider --junitxml={junit}"),
            "junit: \"{junit}\"",
        ],
        &[
            mutation("kill", "m.py", "VALUE = 1", "VALUE = 2", &[]),
            // Exit 4: an unknown option (pytest.ini has no reach to prove: no canary).
            mutation(
                "usage",
                "pytest.ini",
                "addopts = -q",
                "addopts = -q --ug-no-such-option",
                &["canary: false"],
            ),
            // Exit 5: the only test is no longer collected.
            mutation(
                "nocollect",
                "test_m.py",
                "def test_value",
                "def helper_value",
                &[],
            ),
        ],
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("conftest.py", PT_CONFTEST),
        ("test_m.py", PT_TEST),
        ("pytest.ini", "[pytest]\naddopts = -q\n"),
        ("unguard.yaml", &yaml),
    ]);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "kill"), "killed");
    let usage = mutant_json(&fx, "out", "usage");
    assert_eq!(usage["outcome"], "wrong-reason", "{usage:#}");
    assert_eq!(usage["exit"], "exit code 4", "{usage:#}");
    let nc = mutant_json(&fx, "out", "nocollect");
    assert_eq!(nc["outcome"], "wrong-reason", "{nc:#}");
    assert_eq!(nc["exit"], "exit code 5", "{nc:#}");
    assert_no_leftovers(&fx, "pytest exit codes");
}

#[test]
fn baseline_that_runs_no_tests_exits_4() {
    let yaml = spec(
        &[&cmd(PYTEST), "junit: \"{junit}\""],
        &[mutation("kill", "m.py", "VALUE = 1", "VALUE = 2", &[])],
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        (
            "test_m.py",
            "import m\n\ndef helper():\n    return m.VALUE\n",
        ),
        ("unguard.yaml", &yaml),
    ]);
    let before = snapshot(&fx);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 4, "{}", ctx(code, &out, &err));
    assert!(err.contains("no tests"), "{err}");
    // unguard's own diagnosis, not just pytest's line in the log tail.
    assert!(err.contains("pytest exit 5"), "{err}");
    assert!(
        !fx.path().join("out/outcomes.json").exists(),
        "verdicts from an empty baseline"
    );
    assert_untouched(&fx, &before, "empty baseline");
}

#[test]
fn baseline_that_runs_no_tests_without_pytest_exit_5_exits_4() {
    // A generic runner that exits 0 but reports zero tests.
    let run_py = r#"import sys
with open(sys.argv[1], "w") as f:
    f.write('<?xml version="1.0"?><testsuite name="s" tests="0"></testsuite>')
"#;
    let yaml = spec(
        &[&cmd("python3 run.py {junit}"), "junit: \"{junit}\""],
        &[mutation("kill", "m.py", "VALUE = 1", "VALUE = 2", &[])],
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", run_py),
        ("unguard.yaml", &yaml),
    ]);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 4, "{}", ctx(code, &out, &err));
    assert!(err.contains("0 tests"), "{err}");
    assert_no_leftovers(&fx, "zero-test baseline");
}

#[test]
fn red_baseline_exits_4_with_the_log_tail() {
    let yaml = spec(
        &[&cmd(PYTEST), "junit: \"{junit}\""],
        &[mutation("kill", "m.py", "VALUE = 1", "VALUE = 2", &[])],
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("conftest.py", ""),
        (
            "test_m.py",
            "import m\n\ndef test_value():\n    assert m.VALUE == 99, 'UG_RED_BASELINE_MARKER'\n",
        ),
        ("unguard.yaml", &yaml),
    ]);
    let before = snapshot(&fx);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 4, "{}", ctx(code, &out, &err));
    assert!(
        err.contains("UG_RED_BASELINE_MARKER"),
        "log tail missing: {err}"
    );
    assert!(err.contains("@baseline.log"), "log path missing: {err}");
    assert!(fx
        .read("out/@baseline.log")
        .contains("UG_RED_BASELINE_MARKER"));
    assert!(
        !fx.path().join("out/outcomes.json").exists(),
        "verdicts from a red baseline"
    );
    assert_untouched(&fx, &before, "red baseline");
}

// -------------------------------- 8. red exit with no failed test in JUnit

#[test]
fn red_exit_with_zero_failed_tests_in_junit_is_wrong_reason() {
    let conftest = r#"import pytest
import m

FORCE_RED = False

def pytest_sessionfinish(session, exitstatus):
    if FORCE_RED:
        session.exitstatus = 1   # e.g. a coverage gate: red, but no test failed

@pytest.fixture
def value():
    return m.VALUE
"#;
    let yaml = spec(
        &[&cmd(PYTEST), "junit: \"{junit}\""],
        &[
            mutation("kill", "m.py", "VALUE = 1", "VALUE = 2", &[]),
            mutation(
                "gate",
                "conftest.py",
                "FORCE_RED = False",
                "FORCE_RED = True",
                &[],
            ),
        ],
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("conftest.py", conftest),
        ("test_m.py", PT_TEST),
        ("unguard.yaml", &yaml),
    ]);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "kill"), "killed");
    let g = mutant_json(&fx, "out", "gate");
    assert_eq!(g["outcome"], "wrong-reason", "{g:#}");
    assert_eq!(g["exit"], "exit code 1", "{g:#}");
    assert_eq!(g["red_tests"], serde_json::json!([]), "{g:#}");
    assert_eq!(g["tests_total"], 1, "{g:#}");
    assert_no_leftovers(&fx, "sessionfinish");
}

// ------------------------------------------------------- 9. test.check

#[test]
fn failing_check_is_unviable_and_not_scored() {
    let yaml = spec(
        &[
            &cmd("python3 run.py"),
            &format!("check: {}", sq("python3 -m py_compile {file}")),
        ],
        &[
            mutation("broken", "m.py", "VALUE = 1", "VALUE = = 1", &[]),
            mutation("kill", "m.py", "VALUE = 1", "VALUE = 2", &[]),
        ],
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        (
            "run.py",
            "import sys\nimport m\nsys.exit(0 if m.VALUE == 1 else 1)\n",
        ),
        ("unguard.yaml", &yaml),
    ]);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "broken"), "unviable");
    assert_eq!(verdict(&fx, "out", "kill"), "killed");
    let o = fx.outcomes("out");
    let s = &o["summary"];
    assert_eq!(s["unviable"], 1, "{s:#}");
    assert_eq!(s["scored"], 1, "{s:#}");
    assert_eq!(s["score"], 100.0, "{s:#}");
    assert!(fx.path().join("out/broken@check.log").exists());
    // The suite never ran on the unviable mutant.
    assert!(!fx.path().join("out/broken.log").exists());
    assert_no_leftovers(&fx, "check");
}

// ------------------------------------------------ 10. -j 1 == -j 2

#[test]
fn parallel_and_serial_runs_give_the_same_table() {
    let test_py = r#"import a, b

def test_a_value():
    assert a.VALUE == 1

def test_a_name():
    assert a.NAME == "x"

def test_b_flag():
    assert b.FLAG is True
"#;
    let kb = |t: &str| format!("  killed_by: [\"test_ab.py::{t}\"]");
    let yaml = spec(
        &[&cmd(PYTEST), "junit: \"{junit}\""],
        &[
            mutation(
                "a-value",
                "a.py",
                "VALUE = 1",
                "VALUE = 2",
                &["expect:", &kb("test_a_value")],
            ),
            mutation("a-name", "a.py", "NAME = \"x\"", "NAME = \"y\"", &[]),
            mutation("a-unused", "a.py", "UNUSED = 0", "UNUSED = 1", &[]),
            mutation(
                "b-flag",
                "b.py",
                "FLAG = True",
                "FLAG = False",
                &["expect:", &kb("test_a_value")],
            ),
            mutation("b-unused", "b.py", "SPARE = 0", "SPARE = 5", &[]),
            mutation(
                "b-both",
                "b.py",
                "FLAG = True",
                "FLAG = None",
                &["expect:", &kb("test_b_flag")],
            ),
        ],
    );
    let fx = Fixture::git(&[
        ("a.py", "VALUE = 1\nNAME = \"x\"\nUNUSED = 0\n"),
        ("b.py", "FLAG = True\nSPARE = 0\n"),
        ("conftest.py", ""),
        ("test_ab.py", test_py),
        ("unguard.yaml", &yaml),
    ]);
    let (c1, out1, err1) = ug(&fx, &["run", "--out", "out1", "-j", "1"]);
    let (c2, out2, err2) = ug(&fx, &["run", "--out", "out2", "-j", "2"]);
    // b-flag names a killer that stays green when b.py is emptied: unreached (exit 5).
    assert_eq!(c1, 5, "{}", ctx(c1, &out1, &err1));
    assert_eq!(c2, 5, "{}", ctx(c2, &out2, &err2));
    let (t1, t2) = (table_rows(&out1), table_rows(&out2));
    assert_eq!(t1.len(), 7, "header + 6 rows expected: {out1}");
    assert_eq!(t1, t2, "tables differ\n-j 1:\n{out1}\n-j 2:\n{out2}");
    let list = |o: serde_json::Value| -> Vec<(String, String, String)> {
        o["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["id"].to_string(),
                    m["outcome"].to_string(),
                    m["red_tests"].to_string(),
                )
            })
            .collect()
    };
    let (l1, l2) = (list(fx.outcomes("out1")), list(fx.outcomes("out2")));
    assert_eq!(l1, l2);
    let v = fx.verdicts("out1");
    let expect: BTreeMap<String, String> = [
        ("a-value", "killed"),
        ("a-name", "killed"),
        ("a-unused", "survived"),
        ("b-flag", "unreached"),
        ("b-unused", "survived"),
        ("b-both", "killed"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(v, expect);
    assert_eq!(fx.outcomes("out2")["jobs"], 2);
    assert_no_leftovers(&fx, "-j 1 / -j 2");
}

// ------------------------------------------------ 11. timeout policies

#[test]
fn timeout_policy_decides_the_exit_code() {
    let yaml = spec(
        &[&cmd("python3 run.py"), "timeout: 30s"],
        &[
            mutation("kill", "m.py", "VALUE = 1", "VALUE = 2", &[]),
            mutation(
                "hang",
                "m.py",
                "HANG = False",
                "HANG = True",
                &["timeout: 1s"],
            ),
        ],
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\nHANG = False\n"),
        (
            "run.py",
            "import sys, time\nimport m\nif m.HANG:\n    time.sleep(300)\nsys.exit(0 if m.VALUE == 1 else 1)\n",
        ),
        ("unguard.yaml", &yaml),
    ]);
    for (policy, want, score) in [
        ("killed", 0, 100.0),
        ("survived", 2, 50.0),
        ("error", 3, 50.0),
    ] {
        let (code, out, err) = ug(
            &fx,
            &["run", "--out", "out", "-j", "1", "--timeout-is", policy],
        );
        assert_eq!(
            code,
            want,
            "--timeout-is {policy}: {}",
            ctx(code, &out, &err)
        );
        assert_eq!(
            verdict(&fx, "out", "hang"),
            "timeout",
            "--timeout-is {policy}"
        );
        assert_eq!(
            verdict(&fx, "out", "kill"),
            "killed",
            "--timeout-is {policy}"
        );
        let o = fx.outcomes("out");
        assert_eq!(o["timeout_policy"], policy);
        assert_eq!(o["gate"]["exit_code"], want);
        assert_eq!(
            o["summary"]["score"], score,
            "--timeout-is {policy}: {:#}",
            o["summary"]
        );
    }
    assert_no_leftovers(&fx, "timeout policies");
}

// --------------------------------------------------- 12. output dir

#[test]
fn output_dir_has_diff_log_outcomes_and_markdown() {
    let yaml = spec(
        &[&cmd(PYTEST), "junit: \"{junit}\""],
        &[
            mutation("kill", "src/m.py", "VALUE = 1", "VALUE = 2", &[]),
            mutation("survive", "src/m.py", "SPARE = 0", "SPARE = 1", &[]),
        ],
    );
    let fx = Fixture::git(&[
        ("src/m.py", "# module\n\nVALUE = 1\nSPARE = 0\n"),
        ("conftest.py", "import sys\nsys.path.insert(0, 'src')\n"),
        (
            "test_m.py",
            "import m\n\ndef test_value():\n    assert m.VALUE == 1\n",
        ),
        ("unguard.yaml", &yaml),
    ]);
    let (code, out, err) = ug(
        &fx,
        &["run", "--out", "out", "-j", "1", "--markdown", "report.md"],
    );
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));

    for id in ["kill", "survive"] {
        let diff = fx.read(&format!("out/{id}.diff"));
        assert!(
            diff.starts_with("--- a/src/m.py\n+++ b/src/m.py\n"),
            "{id}.diff: {diff}"
        );
        assert!(diff.contains("\n@@ "), "{id}.diff has no hunk: {diff}");
        let log = fx.read(&format!("out/{id}.log"));
        assert!(!log.is_empty(), "{id}.log is empty");
    }
    let kd = fx.read("out/kill.diff");
    assert!(kd.contains("\n-VALUE = 1\n+VALUE = 2\n"), "{kd}");
    assert!(fx.path().join("out/@baseline.log").exists());

    let o = fx.outcomes("out");
    assert_eq!(o["schema"], "unguard/1");
    let k = mutant_json(&fx, "out", "kill");
    assert_eq!(k["id"], "kill");
    assert_eq!(k["control"], "control kill");
    assert_eq!(k["file"], "src/m.py");
    assert_eq!(k["line"], 3);
    assert_eq!(k["outcome"], "killed");
    assert_eq!(k["red_tests"], serde_json::json!(["test_m::test_value"]));
    assert!(k["duration_s"].as_f64().unwrap() > 0.0, "{k:#}");
    let s = mutant_json(&fx, "out", "survive");
    assert_eq!(s["outcome"], "survived");
    assert_eq!(s["line"], 4);
    assert_eq!(s["red_tests"], serde_json::json!([]));

    let md = fx.read("report.md");
    assert!(md.contains("<!-- unguard -->"), "{md}");
    assert!(md.contains("| mutant"), "{md}");
    assert!(
        md.lines()
            .any(|l| l.starts_with("| <code>kill</code>") && l.contains("killed")),
        "{md}"
    );
    assert!(
        md.lines()
            .any(|l| l.starts_with("| <code>survive</code>") && l.contains("survived")),
        "{md}"
    );
    assert_no_leftovers(&fx, "output dir");
}

// ------------------------------------------------- 13. environment

#[test]
fn suite_sees_unguard_worker_and_mutant() {
    let run_py = r#"import os, sys
import m
w = os.environ["UNGUARD_WORKER"]      # KeyError: baseline red
mu = os.environ["UNGUARD_MUTANT"]
print(f"ENV worker={w} mutant={mu}", flush=True)
sys.exit(0 if m.VALUE == 1 else 1)
"#;
    let yaml = spec(
        &[&cmd("python3 run.py")],
        &[mutation("env-kill", "m.py", "VALUE = 1", "VALUE = 2", &[])],
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", run_py),
        ("unguard.yaml", &yaml),
    ]);
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "env-kill"), "killed");
    let b = fx.read("out/@baseline.log");
    assert!(b.contains("ENV worker=0 mutant=baseline"), "{b}");
    let m = fx.read("out/env-kill.log");
    assert!(m.contains("ENV worker=0 mutant=env-kill"), "{m}");
    assert_no_leftovers(&fx, "env");
}

// ---------------------------------------------------------- 14. stdin

#[test]
fn suite_stdin_is_dev_null() {
    let run_py = r#"import sys
import m
data = sys.stdin.read()     # blocks forever if stdin is an open pipe
sys.exit(0 if m.VALUE == 1 and data == "" else 1)
"#;
    let yaml = spec(
        &[&cmd("cat >/dev/null && python3 run.py"), "timeout: 15s"],
        &[mutation("kill", "m.py", "VALUE = 1", "VALUE = 2", &[])],
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", run_py),
        ("unguard.yaml", &yaml),
    ]);
    // Give unguard a stdin that never closes and never delivers data.
    let mut c = fx.unguard(&["run", "--out", "out", "-j", "1"]);
    c.stdin(Stdio::piped());
    let mut sp = spawn(c);
    let held_stdin = sp.child.stdin.take();
    let (code, out, err, took) = sp.wait(Duration::from_secs(60));
    drop(held_stdin);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(verdict(&fx, "out", "kill"), "killed");
    assert!(
        took < Duration::from_secs(12),
        "took {took:?}: the suite waited on stdin"
    );
    assert_no_leftovers(&fx, "stdin");
}

// ------------------------------------------- 15. missing test command

#[test]
fn missing_test_command_is_a_clear_baseline_failure() {
    let fx = Fixture::git(&[("m.py", "VALUE = 1\n")]);
    // Through the shell: sh says "not found" and exits 127.
    fx.write(
        "unguard.yaml",
        &spec(
            &[&cmd("ug-no-such-command-xyz --junitxml={junit}")],
            &[mutation("kill", "m.py", "VALUE = 1", "VALUE = 2", &[])],
        ),
    );
    let (code, out, err) = ug(&fx, &["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 4, "{}", ctx(code, &out, &err));
    assert!(err.contains("127"), "{err}");
    assert!(err.contains("not found"), "{err}");
    assert_no_leftovers(&fx, "missing shell command");

    // As an argv: the program cannot be started at all.
    fx.write(
        "argv.yaml",
        &spec(
            &["command: [\"ug-no-such-binary-xyz\", \"-q\"]"],
            &[mutation("kill", "m.py", "VALUE = 1", "VALUE = 2", &[])],
        ),
    );
    let (code, out, err) = ug(&fx, &["run", "-c", "argv.yaml", "--out", "out", "-j", "1"]);
    assert_eq!(code, 4, "{}", ctx(code, &out, &err));
    assert!(err.contains("ug-no-such-binary-xyz"), "{err}");
    assert!(err.contains("could not start"), "{err}");
    assert_no_leftovers(&fx, "missing argv program");
}
