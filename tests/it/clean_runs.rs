//! Every run starts clean: what a suite leaves behind in its scratch copy
//! (a lock file, a SQLite database, a moved or deleted file, a changed mode,
//! a retargeted symlink) or in its temp dir is gone before the next run, so
//! no mutant is "killed" by another run's leftovers, at -j 1 and -j 2 alike;
//! and a second Ctrl-C during the copy leaves no partial copy behind.
//!
//! The fixtures share one shape: a `hang` mutant makes the suite hang after
//! it set something up and before it cleans up, so its timeout kills it with
//! the debris in place; an `equivalent` mutant changes nothing the tests can
//! see, so it must survive; a `real` mutant must be killed.

use crate::common::*;

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The module under test: `HANG` and `VALUE` are what the mutants change.
const APP: &str = "HANG = False\nVALUE = 1\n\n\ndef check(x):\n    return x == VALUE\n";

/// A pytest test of `app` that hangs (after the set-up) under the `hang` mutant.
const TEST_APP: &str = "\
import time
import app


def test_check():
    if app.HANG:
        time.sleep(300)
    assert app.check(1)
    assert not app.check(2)
";

/// The spec: pytest (no `test.junit`: unguard asks for a report itself, and
/// pytest's cache stays on), the three mutants, no canaries.
fn spec(command: &str, file: &str) -> String {
    format!(
        "version: 1
test:
  command: '{command}'
  timeout: 60s
mutations:
  - id: hang
    control: c
    file: {file}
    find: 'HANG = False'
    replace: 'HANG = True'
    # Long enough for pytest to reach its set-up (and leave its debris) on
    # a loaded 2-core machine: the reset, not the timeout, is under test.
    timeout: 15s
    canary: false
  - id: equivalent
    control: c
    file: {file}
    find: 'VALUE = 1'
    replace: 'VALUE = 1  # the same value'
    canary: false
  - id: real
    control: c
    file: {file}
    find: 'return x == VALUE'
    replace: 'return True'
    canary: false
"
    )
}

fn pytest_spec() -> String {
    spec("python3 -m pytest -q tests", "app.py")
}

/// `unguard run -j <jobs>` into `out-j<jobs>`: (exit code, stderr, outcomes).
fn run_j(fx: &Fixture, jobs: usize) -> (i32, String, serde_json::Value) {
    let out = format!("out-j{jobs}");
    let j = jobs.to_string();
    let (code, stdout, err) = fx.run(&["run", "--out", &out, "-j", &j]);
    assert!(
        fx.path().join(&out).join("outcomes.json").exists(),
        "{}",
        ctx(code, &stdout, &err)
    );
    (code, err, fx.outcomes(&out))
}

/// `id -> reset_paths` of a run's outcomes (`None`: the field is missing).
fn resets(v: &serde_json::Value) -> BTreeMap<String, Option<u64>> {
    v["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_string(),
                m["reset_paths"].as_u64(),
            )
        })
        .collect()
}

fn expected_table() -> BTreeMap<String, String> {
    [
        ("equivalent", "survived"),
        ("hang", "timeout"),
        ("real", "killed"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect()
}

/// How many lines of `stderr` are the debris warning.
fn debris_warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("warning: the suite left"))
        .collect()
}

/// Run the fixture at -j 1 and -j 2: the equivalent mutant survives both
/// times (the verdict a leftover turns into a false kill), the tables are
/// identical, the hang mutant's debris is counted (`hang_resets` paths; the
/// real one's, whose failing test may skip its clean-up, `real_resets`, its
/// re-check included) and named once on stderr, and nothing is left in the
/// fixture's TMPDIR. `hang_resets` is per run of the hang mutant: it runs
/// twice (its confirmation hangs again).
fn assert_clean_runs(fx: &Fixture, hang_resets: u64, real_resets: u64, named: &str) {
    let mut tables = Vec::new();
    for jobs in [1, 2] {
        let (code, err, v) = run_j(fx, jobs);
        let table = fx.verdicts(&format!("out-j{jobs}"));
        assert_eq!(
            table.get("equivalent").map(String::as_str),
            Some("survived"),
            "-j {jobs}: the equivalent mutant was judged by another run's leftovers (exit {code})\n{err}"
        );
        assert_eq!(table, expected_table(), "-j {jobs}\n{err}");
        let r = resets(&v);
        // The hang and its confirmation run (a hang is confirmed like a
        // kill) each leave the debris, and each is put back.
        assert_eq!(r["hang"], Some(2 * hang_resets), "-j {jobs}: {r:?}\n{err}");
        assert_eq!(r["equivalent"], Some(0), "-j {jobs}: {r:?}");
        assert_eq!(r["real"], Some(real_resets), "-j {jobs}: {r:?}");
        let warned = debris_warnings(&err);
        assert_eq!(warned.len(), 1, "-j {jobs}: one warning per run\n{err}");
        assert!(warned[0].contains(named), "{}", warned[0]);
        let log = fx.read(&format!("out-j{jobs}/hang.log"));
        assert!(
            log.contains(&format!("# unguard: put back {hang_resets} path(s)")),
            "{log}"
        );
        assert!(fx.leftover_tmp().is_empty(), "{:?}", fx.leftover_tmp());
        tables.push(table);
    }
    assert_eq!(tables[0], tables[1], "-j 1 and -j 2 differ");
}

#[test]
fn a_lock_file_left_in_the_copy_by_a_killed_suite_kills_no_later_mutant() {
    // The session refuses to start while run.lock exists and removes it at
    // teardown, which a SIGKILL at the timeout never reaches.
    let conftest = r#"import os
import pytest


@pytest.fixture(scope="session", autouse=True)
def single_session():
    if os.path.exists("run.lock"):
        raise RuntimeError("run.lock exists: another session is running")
    with open("run.lock", "w") as f:
        f.write(str(os.getpid()))
    yield
    os.remove("run.lock")
"#;
    let fx = Fixture::git(&[
        ("app.py", APP),
        ("tests/conftest.py", conftest),
        ("tests/test_app.py", TEST_APP),
        ("unguard.yaml", &pytest_spec()),
    ]);
    assert_clean_runs(&fx, 1, 0, "run.lock");
}

#[test]
fn a_table_left_in_a_sqlite_file_of_the_copy_kills_no_later_mutant() {
    let test = r#"import os
import sqlite3
import time
import app


def test_users_table():
    db = sqlite3.connect("test.db")
    db.execute("CREATE TABLE users (name TEXT)")
    db.execute("INSERT INTO users VALUES ('alice')")
    db.commit()
    if app.HANG:
        time.sleep(300)
    assert app.check(1)
    assert not app.check(2)
    db.close()
    os.remove("test.db")
"#;
    let fx = Fixture::git(&[
        ("app.py", APP),
        ("tests/test_db.py", test),
        ("unguard.yaml", &pytest_spec()),
    ]);
    assert_clean_runs(&fx, 1, 2, "test.db");
}

#[test]
fn a_lock_file_left_in_tmpdir_kills_no_later_mutant() {
    let conftest = r#"import os
import tempfile
import pytest

LOCK = os.path.join(tempfile.gettempdir(), "app-tests.lock")


@pytest.fixture(scope="session", autouse=True)
def single_session():
    if os.path.exists(LOCK):
        raise RuntimeError(LOCK + " exists: another session is running")
    with open(LOCK, "w") as f:
        f.write(str(os.getpid()))
    yield
    os.remove(LOCK)
"#;
    let fx = Fixture::git(&[
        ("app.py", APP),
        ("tests/conftest.py", conftest),
        ("tests/test_app.py", TEST_APP),
        ("unguard.yaml", &pytest_spec()),
    ]);
    let (_, err, v) = run_j(&fx, 1);
    assert_eq!(
        fx.verdicts("out-j1").get("equivalent").map(String::as_str),
        Some("survived"),
        "the equivalent mutant saw the lock a killed run left in $TMPDIR\n{err}"
    );
    // Outside the copy: nothing to put back there, and nothing to warn about.
    assert_eq!(resets(&v)["hang"], Some(0));
    assert!(debris_warnings(&err).is_empty(), "{err}");
    assert!(fx.leftover_tmp().is_empty(), "{:?}", fx.leftover_tmp());
    let (_, _, _) = run_j(&fx, 2);
    assert_eq!(fx.verdicts("out-j1"), fx.verdicts("out-j2"));
    assert_eq!(fx.verdicts("out-j2"), expected_table());
    assert!(fx.leftover_tmp().is_empty(), "{:?}", fx.leftover_tmp());
}

#[test]
fn a_file_a_killed_suite_moved_away_is_back_for_the_next_mutant() {
    // A test of the "no config" path moves the config away and back; killed
    // in between, it leaves the config missing and a stray backup.
    let app = "import json\n\nHANG = False\nVALUE = 1\n\n\ndef check(x):\n    return x == VALUE\n\n\ndef users():\n    with open(\"data/users.json\") as f:\n        return json.load(f)\n";
    let test = r#"import os
import time
import pytest
import app


def test_users():
    assert app.users() == ["alice"]


def test_missing_config_is_an_error():
    os.rename("data/users.json", "data/users.json.bak")
    try:
        if app.HANG:
            time.sleep(300)
        with pytest.raises(FileNotFoundError):
            app.users()
    finally:
        os.rename("data/users.json.bak", "data/users.json")


def test_check():
    assert app.check(1)
    assert not app.check(2)
"#;
    let fx = Fixture::git(&[
        ("app.py", app),
        ("data/users.json", "[\"alice\"]\n"),
        ("tests/test_app.py", test),
        ("unguard.yaml", &pytest_spec()),
    ]);
    assert_clean_runs(&fx, 2, 0, "data/users.json");
}

#[test]
fn a_mode_and_a_symlink_a_killed_suite_changed_are_back_for_the_next_mutant() {
    use std::os::unix::fs::PermissionsExt;
    let test = r#"import os
import time
import app


def test_tool_is_executable():
    assert os.stat("bin/tool.sh").st_mode & 0o111


def test_current_release_is_v1():
    assert os.readlink("releases/current") == "v1"


def test_switching_releases():
    os.chmod("bin/tool.sh", 0o644)
    os.remove("releases/current")
    os.symlink("v2", "releases/current")
    try:
        if app.HANG:
            time.sleep(300)
        assert open("releases/current/NAME").read() == "v2\n"
    finally:
        os.remove("releases/current")
        os.symlink("v1", "releases/current")
        os.chmod("bin/tool.sh", 0o755)


def test_check():
    assert app.check(1)
    assert not app.check(2)
"#;
    let fx = Fixture::git(&[
        ("app.py", APP),
        ("bin/tool.sh", "#!/bin/sh\necho tool\n"),
        ("releases/v1/NAME", "v1\n"),
        ("releases/v2/NAME", "v2\n"),
        ("tests/test_app.py", test),
        ("unguard.yaml", &pytest_spec()),
    ]);
    let tool = fx.path().join("bin/tool.sh");
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("v1", fx.path().join("releases/current")).unwrap();
    fx.git_cmd(&["add", "-A"]);
    fx.commit("a tool and a current release");
    assert_clean_runs(&fx, 2, 0, "bin/tool.sh");
    // The user's tree is as it was.
    assert_eq!(
        std::fs::metadata(&tool).unwrap().permissions().mode() & 0o777,
        0o755
    );
    assert_eq!(
        std::fs::read_link(fx.path().join("releases/current")).unwrap(),
        std::path::PathBuf::from("v1")
    );
}

#[test]
fn debris_is_counted_per_mutant_and_warned_about_once() {
    // Every run appends to a file of the copy: each run's debris is put
    // back and counted (a kill's re-check counts too), the warning comes
    // once, and the counter never grows from run to run (each run starts
    // from the copy as made).
    let suite = "#!/bin/sh\necho run >> runs.log\n[ \"$(wc -l < runs.log)\" -eq 1 ] || exit 3\ngrep -q ok m.txt\n";
    let spec = "version: 1
test:
  command: sh run.sh
  timeout: 60s
mutations:
  - id: survivor
    control: c
    file: m.txt
    find: 'other'
    replace: 'OTHER'
    canary: false
  - id: kill
    control: c
    file: m.txt
    find: 'ok'
    replace: 'KO'
    canary: false
";
    let fx = Fixture::git(&[
        ("run.sh", suite),
        ("m.txt", "ok\nother\n"),
        ("unguard.yaml", spec),
    ]);
    let mut tables = Vec::new();
    for jobs in [1, 2] {
        let (_, err, v) = run_j(&fx, jobs);
        let r = resets(&v);
        assert_eq!(r["survivor"], Some(1), "-j {jobs}: {r:?}\n{err}");
        assert_eq!(r["kill"], Some(2), "-j {jobs}: {r:?}\n{err}");
        let warned = debris_warnings(&err);
        assert_eq!(warned.len(), 1, "-j {jobs}\n{err}");
        assert!(warned[0].contains("runs.log"), "{}", warned[0]);
        let table = fx.verdicts(&format!("out-j{jobs}"));
        assert_eq!(table["survivor"], "survived", "{err}");
        assert_eq!(table["kill"], "killed", "{err}");
        tables.push(table);
    }
    assert_eq!(tables[0], tables[1]);
}

#[test]
fn pytest_cache_of_one_run_never_reaches_the_next() {
    // pytest keeps its cache (which tests failed last) in .pytest_cache at
    // its rootdir on every run; with `--lf` the next run only re-runs those.
    // unguard points the cache at the run's own dir: every run starts
    // without one (all tests run), and a clean suite leaves nothing in the
    // copy to put back.
    let app = "def a():\n    return 1\n\n\ndef b():\n    return 2\n";
    let test = "import app\n\n\ndef test_a():\n    assert app.a() == 1\n\n\ndef test_b():\n    assert app.b() == 2\n";
    let spec = "version: 1
test:
  command: python3 -m pytest -q --lf tests
  timeout: 60s
mutations:
  - id: break-a
    control: c
    file: app.py
    find: 'return 1'
    replace: 'return 0'
    canary: false
  - id: break-b
    control: c
    file: app.py
    find: 'return 2'
    replace: 'return 0'
    canary: false
";
    let fx = Fixture::git(&[
        ("app.py", app),
        ("tests/test_app.py", test),
        ("unguard.yaml", spec),
    ]);
    let mut tables = Vec::new();
    for jobs in [1, 2] {
        let (_, err, v) = run_j(&fx, jobs);
        let table = fx.verdicts(&format!("out-j{jobs}"));
        assert_eq!(
            table.get("break-b").map(String::as_str),
            Some("killed"),
            "-j {jobs}: break-b ran only the tests that failed under break-a\n{err}"
        );
        assert_eq!(table["break-a"], "killed", "{err}");
        let r = resets(&v);
        assert_eq!(r["break-a"], Some(0), "{r:?}\n{err}");
        assert_eq!(r["break-b"], Some(0), "{r:?}\n{err}");
        assert!(debris_warnings(&err).is_empty(), "{err}");
        tables.push(table);
    }
    assert_eq!(tables[0], tables[1]);
    assert!(!fx.path().join(".pytest_cache").exists());
}

/// Whether any scratch dir in the fixture's TMPDIR holds `rel` in its tree.
fn copied(fx: &Fixture, rel: &str) -> bool {
    fx.leftover_tmp().iter().any(|d| {
        std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                e.file_name().to_string_lossy().starts_with("tree-") && e.path().join(rel).exists()
            })
    })
}

#[test]
fn a_second_ctrl_c_while_the_tree_is_copied_leaves_no_partial_copy() {
    let mut files: Vec<(String, String)> = Vec::new();
    for d in 0..100 {
        for f in 0..300 {
            files.push((format!("data/d{d:02}/f{f:03}.txt"), "x".repeat(100)));
        }
    }
    files.push(("m.txt".into(), "ok\n".into()));
    files.push(("run.sh".into(), "grep -q ok m.txt\n".into()));
    files.push((
        "unguard.yaml".into(),
        "version: 1\ntest:\n  command: sh run.sh\nmutations:\n  - id: m\n    control: c\n    file: m.txt\n    find: ok\n    replace: KO\n".into(),
    ));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let fx = Fixture::git(&refs);
    let mut c = fx.unguard(&["run", "--out", "out", "-j", "1"]);
    c.stdin(Stdio::null());
    let sp = spawn(c);
    let pid = sp.child.id().to_string();
    let int = || {
        let st = std::process::Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap();
        assert!(st.success());
    };
    let wait_for = |what: &str, ready: &dyn Fn() -> bool| {
        let start = Instant::now();
        while !ready() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "never saw {what}"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    // The first Ctrl-C half-way through the copy; the second once the copy
    // that stopped is being removed.
    let early: Vec<String> = (0..40).map(|d| format!("data/d{d:02}/f000.txt")).collect();
    wait_for("the copy half-way", &|| copied(&fx, "data/d50/f000.txt"));
    int();
    wait_for("the stopped copy being removed", &|| {
        early.iter().any(|rel| !copied(&fx, rel))
    });
    int();
    let (code, out, err, _) = sp.wait(Duration::from_secs(60));
    assert_eq!(code, 130, "{}", ctx(code, &out, &err));
    assert!(err.contains("second interrupt"), "{err}");
    assert!(
        fx.leftover_tmp().is_empty(),
        "a partial copy was left: {:?}",
        fx.leftover_tmp()
    );
}
