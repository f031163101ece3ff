//! Incremental runs (`--incremental FILE`): a survivor of an earlier run
//! is reused only when nothing it depends on changed; a kill is never
//! reused, its earlier red tests run first on the mutant and must go red
//! again. Each change below re-runs exactly the survivors whose recorded
//! inputs it touches (asserted per mutant), and the verdicts equal a full
//! run of the same tree.
//!
//! The fixture: three guarded modules, each killed by its own test module;
//! `b` calls a helper its killing test executes; `c-eq` survives (an
//! equivalent mutant for whole numbers), so it depends on every file a
//! test executes, on every file no test executes as code (data, docs), and
//! on the list of test files; `d` is imported and never called.

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
const TEST_C: &str = "import pytest\nfrom app import c, d\n\n\ndef test_big_raises():\n    with pytest.raises(ValueError):\n        c.limit(11)\n";
const D: &str = "def never():\n    return 1\n";

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
        ("app/d.py", D),
        ("tests/__init__.py", ""),
        ("tests/test_a.py", TEST_A),
        ("tests/test_b.py", TEST_B),
        ("tests/test_c.py", TEST_C),
        ("unguard.yaml", &spec(PYTEST)),
    ])
}

const ALL: [&str; 4] = ["a-gone", "b-gone", "c-gone", "c-eq"];
const KILLS: [&str; 3] = ["a-gone", "b-gone", "c-gone"];

/// The flags every run here shares (a flag that decides verdicts is part
/// of each mutant's fingerprint).
fn run(fx: &Fixture, out: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["run", "--out", out, "-j", "2"];
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
            if m["outcome"] == "killed" && KILLS.contains(&id) {
                assert_eq!(
                    m["subset_runs"][0]["stage"], "earlier-kill",
                    "{m:#}: {said}"
                );
            }
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
fn nothing_changed_reuses_the_survivor_and_proves_every_kill_again() {
    let fx = fixture();
    let b = base(&fx);
    let (code, out, err) = run(&fx, "again", &["--incremental", "base/outcomes.json"]);
    let said = ctx(code, &out, &err);
    let o = fx.outcomes("again");
    let m = mutant(&o, "c-eq");
    let r = &m["reused"];
    assert_eq!(r["file"], "base/outcomes.json", "{m:#}: {said}");
    assert_eq!(r["fingerprint"], b["fingerprint"], "{m:#}");
    assert_eq!(r["started_at"], b["started_at"], "{m:#}");
    assert_eq!(m["outcome"], "survived");
    assert_eq!(m["inputs"], mutant(&b, "c-eq")["inputs"]);
    assert!(m.get("log_file").is_none_or(|l| l.is_null()), "{m:#}");
    assert!(fx.path().join("again/c-eq.diff").is_file());
    // Every kill ran its earlier red tests on the mutant, alone.
    for id in KILLS {
        let m = mutant(&o, id);
        assert!(m.get("reused").is_none(), "{m:#}");
        assert_eq!(m["outcome"], "killed", "{m:#}: {said}");
        assert_eq!(m["subset_runs"][0]["stage"], "earlier-kill", "{m:#}");
        assert_eq!(
            m["subset_runs"][0]["tests"],
            mutant(&b, id)["red_tests"],
            "{m:#}"
        );
        assert_eq!(m["full_suite"], false, "{m:#}");
        assert!(m["inputs"].as_array().is_none_or(|i| i.is_empty()), "{m:#}");
    }
    assert_eq!(o["summary"]["reused"], 1);
    assert!(out.contains("4 mutants (1 reused)"), "{said}");
    assert!(err.contains("1 verdict(s) reused"), "{said}");
    assert!(err.contains("a kill is never reused"), "{said}");
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
fn a_change_reruns_exactly_the_survivors_whose_inputs_it_touches() {
    let fx = fixture();
    base(&fx);
    let with_kills = |ids: &[&str]| {
        let mut s = set(&KILLS);
        s.extend(ids.iter().map(|i| i.to_string()));
        s
    };
    // The body of a function no test executes (imported only): its
    // import-time code is the same, so the survivor stands.
    fx.write("app/d.py", &D.replace("return 1", "return 2"));
    assert_eq!(rerun(&fx, "never-run", &[]), with_kills(&[]));
    restore(&fx);
    // A file a test executes.
    fx.write(
        "app/a.py",
        &A.replace("return True", "ok = True\n    return ok"),
    );
    assert_eq!(rerun(&fx, "mutated", &[]), with_kills(&["c-eq"]));
    restore(&fx);
    // Import-time code any test may read.
    fx.write("app/c.py", &format!("{C}\n\nMAX = 3\n"));
    assert_eq!(rerun(&fx, "module-level", &[]), with_kills(&["c-eq"]));
    restore(&fx);
    // A new test file (a new test may kill a survivor).
    fx.write("tests/test_more.py", "def test_more():\n    pass\n");
    assert_eq!(rerun(&fx, "new-test", &[]), with_kills(&["c-eq"]));
    restore(&fx);
    // A file no test runs as code, that a test may read (data, docs):
    // nothing proves it irrelevant.
    fx.write("README.md", "changed\n");
    assert_eq!(rerun(&fx, "unrelated", &[]), with_kills(&["c-eq"]));
    restore(&fx);
    fx.write("tests/cases.json", "[11]\n");
    assert_eq!(rerun(&fx, "data", &[]), with_kills(&["c-eq"]));
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
    assert_eq!(ran, set(&ALL));
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

/// A guard checked against a test-data file read at run time.
fn data_fixture(cases: &str) -> Fixture {
    Fixture::git(&[
        ("app/__init__.py", ""),
        ("app/guard.py", A),
        ("tests/__init__.py", ""),
        ("tests/cases.json", cases),
        (
            "tests/test_cases.py",
            "import json, os\nfrom app import a as _unused  # noqa: F401\nfrom app import guard\n\nHERE = os.path.dirname(__file__)\n\n\ndef test_cases():\n    with open(os.path.join(HERE, \"cases.json\")) as f:\n        for n, want in json.load(f):\n            assert guard.allowed(n) is want, n\n\n\ndef test_small():\n    assert guard.allowed(1)\n",
        ),
        ("app/a.py", ""),
        (
            "unguard.yaml",
            &format!(
                "version: 1\ntest:\n  command: \"{PYTEST}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\nmutations:\n  - id: limit\n    control: \"c\"\n    file: app/guard.py\n    find: 'n > LIMIT'\n    replace: 'False'\n"
            ),
        ),
    ])
}

/// The pull request takes the refused case out of the test data: a fresh
/// run says `survived` and fails the gate, and so must an incremental run
/// that starts from the kill (it proves the kill again, and it fails).
#[test]
fn a_kill_that_no_longer_holds_is_not_reused_and_the_gate_fails() {
    let fx = data_fixture("[[11, false], [3, true]]\n");
    let (code, out, err) = run(&fx, "base", &[]);
    assert_eq!(
        fx.verdicts("base")["limit"],
        "killed",
        "{}",
        ctx(code, &out, &err)
    );
    fx.write("tests/cases.json", "[[3, true]]\n");
    fx.git_cmd(&["add", "-A"]);
    fx.commit("weaker data");
    let (code, out, err) = run(&fx, "inc", &["--incremental", "base/outcomes.json"]);
    let said = ctx(code, &out, &err);
    let m = mutant(&fx.outcomes("inc"), "limit").clone();
    assert_eq!(m["outcome"], "survived", "{m:#}: {said}");
    assert!(m.get("reused").is_none(), "{m:#}");
    assert_eq!(m["subset_runs"][0]["stage"], "earlier-kill", "{m:#}");
    assert_eq!(m["full_suite"], true, "{m:#}");
    assert_eq!(code, 2, "{said}");
}

/// The other way round: a survivor is not reused once the test data gains
/// the case that kills it.
#[test]
fn a_survivor_is_run_again_when_test_data_changes() {
    let fx = data_fixture("[[3, true]]\n");
    let (code, out, err) = run(&fx, "base", &[]);
    let said = ctx(code, &out, &err);
    assert_eq!(fx.verdicts("base")["limit"], "survived", "{said}");
    let inputs = mutant(&fx.outcomes("base"), "limit")["inputs"].clone();
    assert!(
        inputs
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i == "tests/cases.json"),
        "{inputs:#}"
    );
    fx.write("tests/cases.json", "[[11, false], [3, true]]\n");
    fx.git_cmd(&["add", "-A"]);
    fx.commit("stronger data");
    let (code, out, err) = run(&fx, "inc", &["--incremental", "base/outcomes.json"]);
    let said = ctx(code, &out, &err);
    let m = mutant(&fx.outcomes("inc"), "limit").clone();
    assert_eq!(m["outcome"], "killed", "{m:#}: {said}");
    assert!(m.get("reused").is_none(), "{m:#}");
    assert!(err.contains("tests/cases.json changed"), "{said}");
    assert_eq!(code, 0, "{said}");
}
