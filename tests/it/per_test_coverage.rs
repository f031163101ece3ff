//! Per-test coverage: after a green baseline, one coverage run of unguard's
//! own records which tests execute which lines. A mutant without
//! `expect.killed_by` runs the tests that execute its changed lines first
//! (stage `covering`), and a mutant whose lines no test executes is
//! `no-coverage` without a run. Verdicts equal `--full` but for survivors
//! that become `no-coverage`; a covering set that is red on its own never
//! kills.

use crate::common::*;

const PYTEST: &str = "python3 -m pytest -q -p no:cacheprovider --junitxml={junit}";

/// A test module that appends one byte to `$COUNTER` each time it runs.
const COUNTED_TEST: &str = r#"import os, time


def test_counted_and_slow():
    time.sleep(1)
    with open(os.environ["COUNTER"], "a") as f:
        f.write("x")
"#;

const GUARD: &str = r#"LIMIT = 10


def allowed(n):
    if n > LIMIT:
        return False
    return True


def admin_only(user):
    if user != "admin":
        raise PermissionError(user)
    return "ok"
"#;

fn spec(extra_env: &str, mutations: &[(&str, &str, &str)]) -> String {
    let mut s = format!(
        "version: 1\ntest:\n  command: \"{PYTEST}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\n  env: {{{extra_env}}}\nmutations:\n"
    );
    for (id, find, replace) in mutations {
        s.push_str(&format!(
            "  - id: {id}\n    control: \"c\"\n    file: app/guard.py\n    find: '{find}'\n    replace: '{replace}'\n"
        ));
    }
    s
}

fn guard_fixture(counter: &str) -> Fixture {
    Fixture::git(&[
        ("app/__init__.py", ""),
        ("app/guard.py", GUARD),
        ("tests/__init__.py", ""),
        (
            "tests/test_guard.py",
            "from app import guard\n\n\ndef test_big_is_refused():\n    assert not guard.allowed(11)\n\n\ndef test_small_is_allowed():\n    assert guard.allowed(3)\n",
        ),
        ("tests/test_slow.py", COUNTED_TEST),
        (
            "unguard.yaml",
            &spec(
                &format!("COUNTER: {counter:?}"),
                &[
                    ("limit", "n > LIMIT", "False"),
                    ("admin", "user != \"admin\"", "False"),
                ],
            ),
        ),
    ])
}

fn counter() -> (tempfile::NamedTempFile, String) {
    let f = tempfile::NamedTempFile::new().unwrap();
    let p = f.path().display().to_string();
    (f, p)
}

#[test]
fn covering_tests_run_first_and_an_uncovered_mutant_runs_nothing() {
    let (_keep, count) = counter();
    let fx = guard_fixture(&count);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    let o = fx.outcomes("out");
    let cov = &o["baselines"][0]["coverage"];
    assert_eq!(cov["used"], true, "{cov:#}: {said}");
    assert_eq!(cov["collector"], "coverage.py");
    // Both tests red under the canary executed the file under their own
    // names: the map decides for it.
    assert_eq!(
        o["coverage_files"],
        serde_json::json!([{"file": "app/guard.py", "command": PYTEST, "used": true}]),
        "{said}"
    );
    assert_eq!(cov["tests"], 3, "{cov:#}");
    assert!(err.contains("coverage: 3 tests measured"), "{said}");

    let kill = mutant(&o, "limit");
    assert_eq!(kill["outcome"], "killed", "{kill:#}");
    assert_eq!(kill["full_suite"], false, "{kill:#}");
    let stage = &kill["subset_runs"][0];
    assert_eq!(stage["stage"], "covering", "{kill:#}");
    assert_eq!(
        stage["tests"],
        serde_json::json!([
            "tests.test_guard::test_big_is_refused",
            "tests.test_guard::test_small_is_allowed"
        ])
    );

    let uncovered = mutant(&o, "admin");
    assert_eq!(uncovered["outcome"], "no-coverage", "{uncovered:#}");
    assert_eq!(reason(&o, "admin"), "no-test-executes");
    assert!(
        uncovered["detail"]
            .as_str()
            .unwrap()
            .contains("line 11 of app/guard.py"),
        "{uncovered:#}"
    );
    assert_eq!(uncovered["full_suite"], false);
    assert_eq!(uncovered["subset_runs"], serde_json::json!([]));
    // The slow test ran in the baseline (and its runs forked to check warm
    // runs: tests/it/warm_runs.rs), the coverage run and the canary only:
    // never for a mutant.
    assert_eq!(
        std::fs::read_to_string(&count).unwrap().len(),
        3 + fx.warm_checks("out"),
        "{said}"
    );
    // A no-coverage mutant fails the gate like a survivor.
    assert_eq!(code, 2, "{said}");
}

#[test]
fn verdicts_equal_full_runs_but_survivors_that_no_test_executes() {
    let (_keep, count) = counter();
    let fx = guard_fixture(&count);
    let (code, out, err) = fx.run(&["run", "--out", "cov", "-j", "2"]);
    let with = fx.verdicts("cov");
    let (_, _, _) = fx.run(&["run", "--out", "full", "-j", "2", "--full"]);
    let full = fx.verdicts("full");
    assert_eq!(full["limit"], "killed");
    assert_eq!(full["admin"], "survived");
    assert_eq!(with["limit"], "killed", "{}", ctx(code, &out, &err));
    assert_eq!(with["admin"], "no-coverage");
    // --no-coverage: no coverage run, the table of a run without it.
    fx.run(&["run", "--out", "off", "-j", "2", "--no-coverage"]);
    assert_eq!(fx.verdicts("off"), full);
    assert!(fx.outcomes("off")["baselines"][0].get("coverage").is_none());
}

/// test_b needs test_a to have run first; only test_b executes the guard.
/// Alone, test_b is red on the unmutated copy: its red run proves nothing,
/// so the first mutant goes on to the full suite (killed there), and test_b
/// is left out of subsets from then on: the equivalent mutant's covering
/// set is empty, it runs the full suite alone and survives.
#[test]
fn a_covering_set_red_on_its_own_never_kills() {
    let fx = Fixture::git(&[
        ("app/__init__.py", ""),
        (
            "app/guard.py",
            "READY = []\n\n\ndef ready():\n    READY.append(1)\n\n\ndef limit(n):\n    if n > 10:\n        raise ValueError(n)\n    return n\n",
        ),
        ("tests/__init__.py", ""),
        (
            "tests/test_order.py",
            "import pytest\nfrom app import guard\n\n\ndef test_a_prepares():\n    guard.ready()\n\n\ndef test_b_needs_a():\n    assert guard.READY\n    with pytest.raises(ValueError):\n        guard.limit(11)\n",
        ),
        (
            "unguard.yaml",
            &spec(
                "",
                &[
                    ("gone", "n > 10", "False"),
                    ("equivalent", "n > 10", "n >= 11"),
                ],
            ),
        ),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    let o = fx.outcomes("out");
    assert_eq!(o["baselines"][0]["coverage"]["used"], true, "{said}");
    let eq = mutant(&o, "equivalent");
    assert_eq!(eq["outcome"], "survived", "{eq:#}: {said}");
    assert_eq!(eq["subset_runs"], serde_json::json!([]), "{eq:#}");
    assert_eq!(eq["full_suite"], true);
    let gone = mutant(&o, "gone");
    assert_eq!(gone["outcome"], "killed", "{gone:#}");
    assert_eq!(gone["subset_runs"][0]["stage"], "covering", "{gone:#}");
    assert_eq!(gone["subset_runs"][0]["result"], "passed-on", "{gone:#}");
    assert_eq!(gone["full_suite"], true, "{gone:#}");
    let checks = o["subset_checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "{checks:#?}");
    assert_eq!(
        checks[0]["left_out"],
        serde_json::json!(["tests.test_order::test_b_needs_a"]),
        "{checks:#?}"
    );
}

/// A server a test starts as a process of its own (stdio, as MCP servers
/// are tested) runs lines no in-process test executes: they are covered by
/// that test, so their mutant is killed, never `no-coverage`.
#[test]
fn lines_run_in_a_process_a_test_starts_are_covered_by_that_test() {
    let fx = Fixture::git(&[
        ("app/__init__.py", ""),
        (
            "app/server.py",
            "import sys\n\n\ndef main(argv):\n    if argv and argv[0] == \"--admin\":\n        print(\"refused\")\n        return 3\n    return 0\n\n\nif __name__ == \"__main__\":\n    sys.exit(main(sys.argv[1:]))\n",
        ),
        ("tests/__init__.py", ""),
        (
            "tests/test_stdio.py",
            "import subprocess, sys\nimport app.server\n\n\ndef test_admin_is_refused():\n    r = subprocess.run([sys.executable, \"-m\", \"app.server\", \"--admin\"])\n    assert r.returncode == 3\n",
        ),
        ("tests/test_other.py", "def test_other():\n    pass\n"),
        (
            "unguard.yaml",
            &spec("", &[("refuse", "argv and argv[0] == \"--admin\"", "False")])
                .replace("app/guard.py", "app/server.py"),
        ),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    let o = fx.outcomes("out");
    assert_eq!(o["baselines"][0]["coverage"]["used"], true, "{said}");
    let m = mutant(&o, "refuse");
    assert_eq!(m["outcome"], "killed", "{m:#}: {said}");
    assert_eq!(m["subset_runs"][0]["stage"], "covering", "{m:#}");
}

/// coverage.py not importable where the suite runs: one line says what to
/// install, and the run goes on as without coverage.
#[test]
fn without_coverage_py_the_run_goes_on_without_selection_and_says_what_to_install() {
    let (_keep, count) = counter();
    let fx = guard_fixture(&count);
    // The suite's own PYTHONPATH hides coverage.py behind a package that
    // cannot be imported.
    fx.write(
        "shadow/coverage/__init__.py",
        "raise ImportError('not here')\n",
    );
    let spec = fx
        .read("unguard.yaml")
        .replace("env: {", "env: {PYTHONPATH: shadow, ");
    fx.write("unguard.yaml", &spec);
    fx.git_cmd(&["add", "-A"]);
    fx.commit("shadow");
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1", "--no-canary"]);
    let said = ctx(code, &out, &err);
    assert!(err.contains("pip install coverage"), "{said}");
    let o = fx.outcomes("out");
    let cov = &o["baselines"][0]["coverage"];
    assert_eq!(cov["used"], false, "{cov:#}");
    assert_eq!(fx.verdicts("out")["admin"], "survived", "{said}");
    assert_eq!(fx.verdicts("out")["limit"], "killed", "{said}");
}

/// pytest-xdist: the tests run in worker processes; each worker measures
/// its own tests, and the map is the same as without workers.
#[test]
fn a_suite_run_by_xdist_workers_is_measured_in_each_worker() {
    let (_keep, count) = counter();
    let fx = guard_fixture(&count);
    let spec = fx
        .read("unguard.yaml")
        .replace("-p no:cacheprovider", "-p no:cacheprovider -n 2");
    fx.write("unguard.yaml", &spec);
    fx.git_cmd(&["add", "-A"]);
    fx.commit("xdist");
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    let o = fx.outcomes("out");
    let cov = &o["baselines"][0]["coverage"];
    assert_eq!(cov["used"], true, "{cov:#}: {said}");
    assert_eq!(cov["tests"], 3, "{cov:#}");
    assert_eq!(mutant(&o, "limit")["outcome"], "killed", "{said}");
    assert_eq!(mutant(&o, "limit")["subset_runs"][0]["stage"], "covering");
    assert_eq!(mutant(&o, "admin")["outcome"], "no-coverage", "{said}");
}
