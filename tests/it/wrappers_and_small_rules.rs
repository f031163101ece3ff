//! Small rules a real wrapper meets (issue 50, item 3): a command that runs
//! pytest twice has both reports read; a wrapper that owns its exit code
//! (`pytest … || exit 3`) is judged by its own structure, not the word
//! pytest; a baseline that hangs once is run again as it was (a hang is no
//! evidence against unguard's additions); a replace that changes only
//! whitespace is `no-op`, never `survived`.

use crate::common::*;

const GUARD: &str =
    "LIMIT = 10\n\n\ndef allowed(n):\n    if n > LIMIT:\n        return False\n    return True\n";

fn spec(command: &str, extra: &str, find: &str, replace: &str) -> String {
    format!(
        "version: 1\ntest:\n  command: \"{command}\"\n{extra}mutations:\n  - id: limit\n    control: \"c\"\n    file: app/guard.py\n    find: '{find}'\n    replace: '{replace}'\n"
    )
}

fn fixture(spec: &str) -> Fixture {
    Fixture::git(&[
        ("app/__init__.py", ""),
        ("app/guard.py", GUARD),
        ("tests/__init__.py", ""),
        ("tests/unit/__init__.py", ""),
        (
            "tests/unit/test_guard.py",
            "from app import guard\n\n\ndef test_small():\n    assert guard.allowed(3)\n\n\ndef test_edge():\n    assert guard.allowed(10)\n",
        ),
        ("tests/integration/__init__.py", ""),
        (
            "tests/integration/test_refusal.py",
            "from app import guard\n\n\ndef test_big_is_refused():\n    assert not guard.allowed(11)\n",
        ),
        ("unguard.yaml", spec),
    ])
}

const TWICE: &str = "python3 -m pytest -q -p no:cacheprovider tests/unit && python3 -m pytest -q -p no:cacheprovider tests/integration";

/// Both pytest processes write the report unguard asked for: the second
/// would overwrite the first's tests. Every version is read.
#[test]
fn a_command_that_runs_pytest_twice_has_both_reports_read() {
    let fx = fixture(&spec(TWICE, "  timeout: 60s\n", "n > LIMIT", "False"));
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    let o = fx.outcomes("out");
    assert_eq!(o["baselines"][0]["tests_total"], 3, "{said}");
    let m = mutant(&o, "limit");
    assert_eq!(m["outcome"], "killed", "{m:#}: {said}");
    assert_eq!(
        m["red_tests"],
        serde_json::json!(["tests.integration.test_refusal::test_big_is_refused"]),
        "{m:#}"
    );
}

/// `pytest … || exit 3` owns its exit code: a red suite exits 3, and that
/// is a kill (the generic preset), not pytest's "not a test failure".
#[test]
fn a_wrapper_that_owns_its_exit_code_kills_with_its_own_code() {
    let command = "python3 -m pytest -q -p no:cacheprovider --junitxml={junit} || exit 3";
    let fx = fixture(&spec(
        command,
        "  junit: \"{junit}\"\n  timeout: 60s\n",
        "n > LIMIT",
        "False",
    ));
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    let m = mutant(&fx.outcomes("out"), "limit").clone();
    assert_eq!(m["outcome"], "killed", "{m:#}: {said}");
    assert_eq!(m["exit"], "exit code 3", "{m:#}");
    assert_eq!(code, 0, "{said}");
}

/// A replace equal to its find under the find's whitespace tolerance
/// changes nothing: `no-op` (a spec error), never a survivor.
#[test]
fn a_replace_that_changes_only_whitespace_is_no_op() {
    let fx = fixture(&spec(
        "python3 -m pytest -q -p no:cacheprovider",
        "  timeout: 60s\n",
        "n > LIMIT",
        "n  >  LIMIT",
    ));
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    assert!(
        err.contains("no-op: mutation `limit` on app/guard.py"),
        "{said}"
    );
    assert!(err.contains("only in whitespace"), "{said}");
    assert_ne!(code, 0, "{said}");
    assert!(!err.contains("survived"), "{said}");
}

/// The first baseline run hangs (a slow first start), the second is quick:
/// the hang is run again as it was, and unguard's request for a JUnit
/// report stays (a run without it proves nothing about a hang).
#[test]
fn a_baseline_that_times_out_once_is_run_again_as_it_was() {
    let mark = tempfile::tempdir().unwrap();
    let flag = mark.path().join("first-run-done");
    let fx = fixture(&spec(
        "python3 -m pytest -q -p no:cacheprovider",
        &format!(
            "  timeout: 8s\n  env: {{MARK: {:?}}}\n",
            flag.display().to_string()
        ),
        "n > LIMIT",
        "False",
    ));
    fx.write(
        "tests/test_slow_start.py",
        "import os, time\n\n\ndef test_starts():\n    mark = os.environ[\"MARK\"]\n    if not os.path.exists(mark):\n        open(mark, \"w\").close()\n        time.sleep(30)\n",
    );
    fx.git_cmd(&["add", "-A"]);
    fx.commit("slow start");
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    assert!(err.contains("run once more as it was"), "{said}");
    let o = fx.outcomes("out");
    let b = &o["baselines"][0];
    assert!(
        b.get("dropped")
            .is_none_or(|d| d.as_array().is_some_and(|a| a.is_empty())),
        "{b:#}: {said}"
    );
    assert_eq!(b["tests_total"], 4, "{b:#}");
    assert_eq!(mutant(&o, "limit")["outcome"], "killed", "{said}");
}
