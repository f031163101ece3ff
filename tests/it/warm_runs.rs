//! Warm Python runs (issue 53, item 1): pytest runs forked from a worker's
//! interpreter that imported the suite's third-party modules first; the
//! same verdicts as cold runs; never the project's own modules; turned off
//! (with a reason) where the baseline forked differs or an import is not
//! safe to fork; and every forked run's processes end with the run.

use crate::common::*;

const PYTEST: &str = "python3 -m pytest -q -p no:cacheprovider --junitxml={junit}";

/// A directory outside the repository on `PYTHONPATH`: the suite's
/// "third-party" modules (not the project's: no file of the checkout).
struct Libs(tempfile::TempDir);

impl Libs {
    fn new(files: &[(&str, &str)]) -> Libs {
        let d = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(d.path().join(name), text).unwrap();
        }
        Libs(d)
    }
    fn path(&self) -> String {
        self.0.path().display().to_string()
    }
}

/// A slow third-party import, and a project module (`app.py`) the tests
/// import through `conftest.py` at collection.
const SLOWLIB: &str = "import time\ntime.sleep(0.3)\nANSWER = 42\n";
const APP: &str = "import slowlib\n\n\ndef check(token):\n    # a note\n    if token != \"secret\":\n        return False\n    return slowlib.ANSWER == 42\n";
const TESTS: &str = "from app import check\n\n\ndef test_wrong_token_is_refused():\n    assert not check(\"x\")\n\n\ndef test_right_token_passes():\n    assert check(\"secret\")\n";

fn spec(libs: &Libs) -> SpecBuilder {
    spec_timing_out(libs, "20s")
}

fn spec_timing_out(libs: &Libs, timeout: &str) -> SpecBuilder {
    SpecBuilder::new(PYTEST)
        .timeout(timeout)
        .env("PYTHONPATH", &libs.path())
        .mutation(mutation(
            "guard",
            "app.py",
            "if token != \"secret\":",
            "if False:",
        ))
        .mutation(mutation("note", "app.py", "# a note", "# another note"))
}

/// `app.py` and its tests, with [`spec`]'s mutants.
fn guarded_app(libs: &Libs) -> Fixture {
    Fixture::git(&[
        ("app.py", APP),
        ("tests/test_app.py", TESTS),
        ("unguard.yaml", &spec(libs).build()),
    ])
}

fn logs_with(out: &std::path::Path, line: &str) -> usize {
    std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_to_string(e.path())
                .unwrap_or_default()
                .lines()
                .any(|l| l.starts_with(line))
        })
        .count()
}

/// The mutants' runs are forked (their logs say so, the baseline says
/// `warm`), the mutant in the project's module is killed (it is imported
/// fresh in every fork: never by the warm interpreter), and the table is
/// the one `--cold` gives.
#[test]
fn forked_runs_give_the_cold_table_and_never_hold_the_projects_modules() {
    let libs = Libs::new(&[("slowlib.py", SLOWLIB)]);
    let fx = guarded_app(&libs);
    let (code, out, err) = fx.run(&["run", "--out", "warm", "-j", "2"]);
    let warm = fx.verdicts("warm");
    assert_eq!(
        warm["guard"],
        "killed",
        "{warm:?}\n{}",
        ctx(code, &out, &err)
    );
    assert_eq!(warm["note"], "survived", "{warm:?}");
    let o = fx.outcomes("warm");
    assert_eq!(o["baselines"][0]["warm"], true, "{}", o["baselines"][0]);
    let dir = fx.path().join("warm");
    assert!(
        logs_with(&dir, "# warm: forked from the worker's warm interpreter") >= 3,
        "the mutants' runs were not forked\n{}",
        ctx(code, &out, &err)
    );
    let mutant_log = std::fs::read_to_string(dir.join("guard.log")).unwrap();
    assert!(mutant_log.contains("# warm: forked"), "{mutant_log}");

    let (code2, out2, err2) = fx.run(&["run", "--out", "cold", "-j", "2", "--cold"]);
    assert_eq!(fx.verdicts("cold"), warm, "{}", ctx(code2, &out2, &err2));
    assert_eq!(code2, code);
    let o = fx.outcomes("cold");
    assert!(
        o["baselines"][0].get("warm").is_none(),
        "{}",
        o["baselines"][0]
    );
    assert_eq!(
        logs_with(&fx.path().join("cold"), "# warm:"),
        0,
        "--cold forks nothing"
    );
}

/// A third-party import that starts a thread cannot be forked safely: the
/// runs start as written, one note says which import, the verdicts stand.
#[test]
fn an_import_that_starts_a_thread_keeps_the_runs_cold() {
    let libs = Libs::new(&[
        ("slowlib.py", "import threading, time\nthreading.Thread(target=time.sleep, args=(600,), daemon=True).start()\nANSWER = 42\n"),
    ]);
    let fx = guarded_app(&libs);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let v = fx.verdicts("out");
    assert_eq!(v["guard"], "killed", "{v:?}\n{}", ctx(code, &out, &err));
    let o = fx.outcomes("out");
    let b = &o["baselines"][0];
    assert!(b.get("warm").is_none(), "{b}");
    let note = b["warm_note"].as_str().unwrap_or_default();
    assert!(
        note.contains("importing `slowlib` started a thread"),
        "{note}"
    );
    assert!(
        err.contains("note:") && err.contains("started a thread"),
        "{err}"
    );
    let mutant_log = std::fs::read_to_string(fx.path().join("out/guard.log")).unwrap();
    assert!(!mutant_log.contains("# warm: forked"), "{mutant_log}");
}

/// A suite whose conftest sets a variable that a third-party module reads
/// when it is imported is green cold and red when that module was imported
/// before the conftest ran: the baseline run both ways differs, so the runs
/// start as written (one note says what differed).
#[test]
fn a_suite_that_differs_forked_runs_cold() {
    let libs = Libs::new(&[(
        "flagged.py",
        "import os\nMODE = os.environ.get(\"FLAG_MODE\", \"off\")\n",
    )]);
    let fx = Fixture::git(&[
        ("app.py", "def check(token):\n    # a note\n    if token != \"secret\":\n        return False\n    return True\n"),
        ("conftest.py", "import os\nos.environ[\"FLAG_MODE\"] = \"on\"\nimport flagged  # noqa: E402\n"),
        (
            "tests/test_app.py",
            "import flagged\nfrom app import check\n\n\ndef test_mode_is_on():\n    assert flagged.MODE == \"on\"\n\n\ndef test_wrong_token_is_refused():\n    assert not check(\"x\")\n",
        ),
        ("unguard.yaml", &spec(&libs).build()),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let v = fx.verdicts("out");
    assert_eq!(v["guard"], "killed", "{v:?}\n{}", ctx(code, &out, &err));
    assert_eq!(v["note"], "survived", "{v:?}");
    let o = fx.outcomes("out");
    let b = &o["baselines"][0];
    assert!(b.get("warm").is_none(), "{b}");
    let note = b["warm_note"].as_str().unwrap_or_default();
    assert!(
        note.contains("1 test(s) red forked, green as written"),
        "the note says what differed: {note}"
    );
}

/// Everything a forked run starts ends with it: a detached process a test
/// leaves behind (its own session, its own group) and a hung mutant's
/// whole run; the hang is a timeout as cold.
#[test]
fn a_forked_runs_processes_end_with_it() {
    let mark = marker("warm");
    let libs = Libs::new(&[("slowlib.py", SLOWLIB)]);
    let app = format!(
        "import subprocess, sys, time\nimport slowlib\n\n\ndef check(token):\n    # a note\n    subprocess.Popen([sys.executable, \"-c\", \"import time; time.sleep(300)\", \"{mark}\"], start_new_session=True, env={{}})\n    # hang here\n    if token != \"secret\":\n        return False\n    return True\n"
    );
    let s = spec_timing_out(&libs, "10s").mutation(mutation(
        "hang",
        "app.py",
        "# hang here",
        "time.sleep(60)",
    ));
    let fx = Fixture::git(&[
        ("app.py", &app),
        ("tests/test_app.py", TESTS),
        ("unguard.yaml", &s.build()),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let v = fx.verdicts("out");
    assert_eq!(v["guard"], "killed", "{v:?}\n{}", ctx(code, &out, &err));
    assert_eq!(v["hang"], "timeout", "{v:?}");
    assert_eq!(fx.outcomes("out")["baselines"][0]["warm"], true);
    let hang_log = std::fs::read_to_string(fx.path().join("out/hang.log")).unwrap();
    assert!(hang_log.contains("# warm: forked"), "{hang_log}");
    // The detached process (no run token: its environment is empty) was
    // killed when its run ended, not when unguard did.
    let guard_log = std::fs::read_to_string(fx.path().join("out/guard.log")).unwrap();
    assert!(
        guard_log
            .lines()
            .any(|l| l.starts_with("# unguard: killed ")
                && l.ends_with(
                    "process(es) the run left running (the warm interpreter adopts them)"
                )),
        "{guard_log}"
    );
    assert_no_processes(&mark, "forked runs");
}

/// A third-party module that reads a data file of the project when it is
/// imported would keep the unmutated contents in a warm interpreter, so a
/// mutant of that file would survive forked and be killed cold: such an
/// import makes the runs start as written, and the mutant is killed.
#[test]
fn an_import_that_reads_a_file_of_the_project_keeps_the_runs_cold() {
    let libs = Libs::new(&[(
        "limits.py",
        "with open(\"limits.txt\") as f:\n    MAX = int(f.read())\n",
    )]);
    let spec = SpecBuilder::new(PYTEST)
        .timeout("20s")
        .env("PYTHONPATH", &libs.path())
        .mutation(mutation("limit", "limits.txt", "10", "1000"));
    let fx = Fixture::git(&[
        ("limits.txt", "10\n"),
        (
            "app.py",
            "import limits\n\n\ndef allowed(n):\n    return n <= limits.MAX\n",
        ),
        (
            "tests/test_app.py",
            "from app import allowed\n\n\ndef test_big_is_refused():\n    assert not allowed(11)\n",
        ),
        ("unguard.yaml", &spec.build()),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let v = fx.verdicts("out");
    assert_eq!(v["limit"], "killed", "{v:?}\n{}", ctx(code, &out, &err));
    let b = &fx.outcomes("out")["baselines"][0];
    assert!(b.get("warm").is_none(), "{b}");
    let note = b["warm_note"].as_str().unwrap_or_default();
    assert!(
        note.contains("importing `limits` read the project's `limits.txt`"),
        "{note}"
    );
}
