//! Incremental runs (`--incremental FILE`): a verdict of an earlier run is
//! reused only when nothing it depends on changed. Each change below
//! re-runs exactly the mutants whose recorded inputs it touches (asserted
//! per mutant), and the verdicts equal a full run of the same tree.
//!
//! The fixture: three guarded modules, each killed by its own test module;
//! `b` calls a helper its killing test executes; `c-eq` survives (an
//! equivalent mutant for whole numbers), so it depends on every file a
//! test executes and on the list of test files.

use std::collections::BTreeSet;

use crate::common::*;

const PYTEST: &str = "python3 -m pytest -q -p no:cacheprovider --junitxml={junit}";

fn spec(command: &str) -> String {
    let mut s = format!(
        "version: 1\ntest:\n  command: \"{command}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\nmutations:\n"
    );
    for (id, file, find, replace) in [
        ("a-gone", "app/a.py", "n > LIMIT", "False"),
        ("b-gone", "app/b.py", "not helper.is_admin(user)", "False"),
        ("c-gone", "app/c.py", "n > 10", "False"),
        ("c-eq", "app/c.py", "n > 10", "n >= 11"),
    ] {
        s.push_str(&format!(
            "  - id: {id}\n    control: \"c\"\n    file: {file}\n    find: '{find}'\n    replace: '{replace}'\n"
        ));
    }
    s
}

const A: &str =
    "LIMIT = 10\n\n\ndef allowed(n):\n    if n > LIMIT:\n        return False\n    return True\n";
const B: &str = "from app import helper\n\n\ndef admin(user):\n    if not helper.is_admin(user):\n        raise PermissionError(user)\n    return \"ok\"\n";
const HELPER: &str = "def is_admin(user):\n    return user == \"admin\"\n";
const C: &str = "def limit(n):\n    if n > 10:\n        raise ValueError(n)\n    return n\n";
const TEST_A: &str = "from app import a\n\n\ndef test_big_is_refused():\n    assert not a.allowed(11)\n\n\ndef test_small_is_allowed():\n    assert a.allowed(3)\n";
const TEST_B: &str = "import pytest\nfrom app import b\n\n\ndef test_guest_is_refused():\n    with pytest.raises(PermissionError):\n        b.admin(\"guest\")\n";
const TEST_C: &str = "import pytest\nfrom app import c\n\n\ndef test_big_raises():\n    with pytest.raises(ValueError):\n        c.limit(11)\n";

fn fixture() -> Fixture {
    Fixture::git(&[
        (
            "pyproject.toml",
            "[project]\nname = \"inc\"\nversion = \"0\"\n",
        ),
        ("README.md", "incremental fixture\n"),
        ("app/__init__.py", ""),
        ("app/a.py", A),
        ("app/b.py", B),
        ("app/helper.py", HELPER),
        ("app/c.py", C),
        ("tests/__init__.py", ""),
        ("tests/test_a.py", TEST_A),
        ("tests/test_b.py", TEST_B),
        ("tests/test_c.py", TEST_C),
        ("unguard.yaml", &spec(PYTEST)),
    ])
}

const ALL: [&str; 4] = ["a-gone", "b-gone", "c-gone", "c-eq"];

/// The flags every run here shares (a flag that decides verdicts is part
/// of each mutant's fingerprint).
fn run(fx: &Fixture, out: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["run", "--out", out, "-j", "2", "--no-canary"];
    args.extend_from_slice(extra);
    fx.run(&args)
}

/// The full run every incremental run below starts from.
fn base(fx: &Fixture) -> serde_json::Value {
    let (code, out, err) = run(fx, "base", &[]);
    let said = ctx(code, &out, &err);
    let o = fx.outcomes("base");
    assert_eq!(o["baselines"][0]["coverage"]["used"], true, "{said}");
    let v = fx.verdicts("base");
    for (id, want) in [
        ("a-gone", "killed"),
        ("b-gone", "killed"),
        ("c-gone", "killed"),
        ("c-eq", "survived"),
    ] {
        assert_eq!(v[id], want, "{id}: {said}");
    }
    o
}

/// Run `--incremental base/outcomes.json` into `out`; the ids that ran
/// again (the others were reused), checked against the row's `reused`.
fn rerun(fx: &Fixture, out: &str, extra: &[&str]) -> BTreeSet<String> {
    let mut args = vec!["--incremental", "base/outcomes.json"];
    args.extend_from_slice(extra);
    let (code, stdout, err) = run(fx, out, &args);
    let said = ctx(code, &stdout, &err);
    let o = fx.outcomes(out);
    let mut ran = BTreeSet::new();
    for id in ALL {
        let m = mutant(&o, id);
        if m.get("reused").is_none() {
            ran.insert(id.to_string());
        } else {
            assert!(
                stdout.contains(&format!("{} (reused)", m["outcome"].as_str().unwrap())),
                "{said}"
            );
        }
    }
    assert_eq!(
        o["summary"]["reused"].as_u64().unwrap_or(0) as usize,
        ALL.len() - ran.len(),
        "{said}"
    );
    ran
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| s.to_string()).collect()
}

/// Put the committed tree back (every edit of the step before undone).
fn restore(fx: &Fixture) {
    fx.git_cmd(&["checkout", "-q", "--", "."]);
    fx.git_cmd(&["clean", "-q", "-f", "-e", "base", "--", "."]);
}

#[test]
fn nothing_changed_reuses_every_verdict_and_runs_nothing() {
    let fx = fixture();
    let b = base(&fx);
    // An unrelated file (not imported, no test, no config) changes.
    fx.write("README.md", "changed\n");
    fx.write("notes/todo.txt", "new\n");
    let (code, out, err) = run(&fx, "again", &["--incremental", "base/outcomes.json"]);
    let said = ctx(code, &out, &err);
    let o = fx.outcomes("again");
    for id in ALL {
        let m = mutant(&o, id);
        let r = &m["reused"];
        assert_eq!(r["file"], "base/outcomes.json", "{m:#}: {said}");
        assert_eq!(r["fingerprint"], b["fingerprint"], "{m:#}");
        assert_eq!(r["started_at"], b["started_at"], "{m:#}");
        assert_eq!(m["outcome"], mutant(&b, id)["outcome"]);
        assert_eq!(m["inputs"], mutant(&b, id)["inputs"]);
        assert!(m.get("log_file").is_none_or(|l| l.is_null()), "{m:#}");
        assert!(fx.path().join("again").join(format!("{id}.diff")).is_file());
    }
    assert_eq!(o["summary"]["reused"], 4);
    assert!(out.contains("4 mutants (4 reused)"), "{said}");
    // Nothing ran: no baseline, no coverage run.
    assert_eq!(o["baselines"], serde_json::json!([]), "{said}");
    assert!(err.contains("4 verdict(s) reused"), "{said}");
    assert_eq!(code, 2, "the survivor still fails the gate: {said}");
    // Without --incremental everything runs again.
    let (_, _, _) = run(&fx, "full", &[]);
    let full = fx.outcomes("full");
    assert!(full["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m.get("reused").is_none()));
    assert!(full["summary"].get("reused").is_none());
}

#[test]
fn a_change_reruns_exactly_the_mutants_whose_inputs_it_touches() {
    let fx = fixture();
    base(&fx);
    // The mutated file (a function body: its import-time code is the same).
    fx.write(
        "app/a.py",
        &A.replace("return True", "ok = True\n    return ok"),
    );
    assert_eq!(rerun(&fx, "mutated", &[]), set(&["a-gone", "c-eq"]));
    restore(&fx);
    // A test that killed a mutant.
    fx.write(
        "tests/test_a.py",
        &TEST_A.replace(
            "assert not a.allowed(11)",
            "big = 11\n    assert not a.allowed(big)",
        ),
    );
    assert_eq!(rerun(&fx, "killer", &[]), set(&["a-gone", "c-eq"]));
    restore(&fx);
    // A helper module the killing test of b executed.
    fx.write(
        "app/helper.py",
        &HELPER
            .replace("return user", "admin = \"admin\"\n    return user")
            .replace("== \"admin\"", "== admin"),
    );
    assert_eq!(rerun(&fx, "helper", &[]), set(&["b-gone", "c-eq"]));
    restore(&fx);
    // Import-time code any test may read: every mutant.
    fx.write("app/c.py", &format!("{C}\n\nMAX = 3\n"));
    assert_eq!(rerun(&fx, "module-level", &[]), set(&ALL));
    restore(&fx);
    // A new test file: survivors only (a new test may kill them).
    fx.write("tests/test_more.py", "def test_more():\n    pass\n");
    assert_eq!(rerun(&fx, "new-test", &[]), set(&["c-eq"]));
    restore(&fx);
    // An unrelated file: nothing.
    fx.write("README.md", "changed\n");
    assert_eq!(rerun(&fx, "unrelated", &[]), set(&[]));
}

#[test]
fn config_locks_the_test_command_and_unguards_version_rerun_everything() {
    let fx = fixture();
    base(&fx);
    fx.write(
        "pyproject.toml",
        "[project]\nname = \"inc\"\nversion = \"1\"\n",
    );
    assert_eq!(rerun(&fx, "pyproject", &[]), set(&ALL));
    restore(&fx);
    fx.write("uv.lock", "version = 1\n");
    assert_eq!(rerun(&fx, "lock", &[]), set(&ALL));
    restore(&fx);
    fx.write("tests/conftest.py", "");
    assert_eq!(rerun(&fx, "conftest", &[]), set(&ALL));
    restore(&fx);
    fx.write("unguard.yaml", &spec(&PYTEST.replace("-q", "-q -rN")));
    assert_eq!(rerun(&fx, "command", &[]), set(&ALL));
    restore(&fx);
    // A flag that decides verdicts.
    assert_eq!(rerun(&fx, "flag", &["--recheck-survivors", "1"]), set(&ALL));
    // Results another version of unguard wrote.
    let path = fx.path().join("base/outcomes.json");
    let mut o: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    o["unguard_version"] = serde_json::json!("0.0.0-other");
    std::fs::write(&path, serde_json::to_string(&o).unwrap()).unwrap();
    let (code, out, err) = run(&fx, "version", &["--incremental", "base/outcomes.json"]);
    assert!(
        err.contains("written by unguard 0.0.0-other"),
        "{}",
        ctx(code, &out, &err)
    );
    let v = fx.outcomes("version");
    assert!(ALL.iter().all(|id| mutant(&v, id).get("reused").is_none()));
    assert!(v["summary"].get("reused").is_none());
}

/// A change that turns a survivor into a kill: the incremental run and a
/// full run of the changed tree agree on every verdict.
#[test]
fn an_incremental_run_gives_the_verdicts_of_a_full_run() {
    let fx = fixture();
    base(&fx);
    fx.write(
        "tests/test_c.py",
        &format!("{TEST_C}\n\ndef test_fraction_raises():\n    with pytest.raises(ValueError):\n        c.limit(10.5)\n"),
    );
    let ran = rerun(&fx, "inc", &[]);
    assert_eq!(ran, set(&["c-gone", "c-eq"]));
    let (_, _, _) = run(&fx, "full", &[]);
    let full = fx.verdicts("full");
    assert_eq!(full["c-eq"], "killed");
    assert_eq!(fx.verdicts("inc"), full);
}

#[test]
fn an_unreadable_earlier_file_is_refused_before_anything_runs() {
    let fx = fixture();
    fx.write("bad.json", "{\"schema\": \"unguard/1\"");
    for (file, says) in [
        ("missing.json", "cannot read it"),
        ("bad.json", "not an outcomes.json of unguard"),
    ] {
        let (code, out, err) = run(&fx, "out", &["--incremental", file]);
        let said = ctx(code, &out, &err);
        assert_eq!(code, 1, "{said}");
        assert!(
            err.contains(&format!("--incremental {file}: {says}")),
            "{said}"
        );
        assert!(!fx.path().join("out").exists(), "nothing ran: {said}");
        assert!(!err.contains("baseline"), "{said}");
    }
}
