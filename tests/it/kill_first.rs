//! Kill-first: a mutant runs the tests that can kill it (its expected
//! killers; else the tests its file's canary turned red, then the tests
//! that killed its siblings) before the full suite, which runs only to
//! decide a mutant none of them killed. A subset kills only after it ran
//! green on the unmutated copy; a hang in a subset is a timeout; `--full`
//! turns selection off, and the verdicts are the same (except where README
//! says why not: a hang outside the subset).

use crate::common::*;

/// pytest with a JUnit report, so `killed_by` and the adapter work.
const PYTEST: &str = "python3 -m pytest -q -p no:cacheprovider --junitxml={junit}";

/// A test module that appends one byte to `$COUNTER` each time it runs: how
/// many times the suite ran beyond the selected tests.
const COUNTED_TEST: &str = r#"import os


def test_counted():
    with open(os.environ["COUNTER"], "a") as f:
        f.write("x")
"#;

fn counter() -> (tempfile::NamedTempFile, String) {
    let f = tempfile::NamedTempFile::new().unwrap();
    let p = f.path().display().to_string();
    (f, p)
}

fn runs_counted(path: &str) -> usize {
    std::fs::read_to_string(path).unwrap().len()
}

fn guard_fixture(counter: &str) -> Fixture {
    Fixture::git(&[
        ("m.py", "LIMIT = 10\n\n\ndef allowed(n):\n    return n <= LIMIT\n"),
        ("tests/__init__.py", ""),
        (
            "tests/test_guard.py",
            "import m\n\n\ndef test_rejects_big():\n    assert not m.allowed(11)\n\n\ndef test_accepts_small():\n    assert m.allowed(3)\n",
        ),
        ("tests/test_other.py", COUNTED_TEST),
        (
            "unguard.yaml",
            &format!(
                "version: 1\ntest:\n  command: \"{PYTEST}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\n  env: {{COUNTER: {counter:?}}}\nmutations:\n  - id: limit-checked\n    control: \"big values are refused\"\n    file: m.py\n    find: 'n <= LIMIT'\n    replace: 'True'\n    expect: {{killed_by: [\"tests/test_guard.py::test_rejects_big\"]}}\n  - id: equivalent\n    control: \"an equivalent rewrite\"\n    file: m.py\n    find: 'n <= LIMIT'\n    replace: 'n < LIMIT + 1'\n    expect: {{killed_by: [\"tests/test_guard.py::test_rejects_big\"]}}\n"
            ),
        ),
    ])
}

#[test]
fn expected_killers_run_alone_and_the_full_suite_only_for_a_survivor() {
    let (_keep, count) = counter();
    let fx = guard_fixture(&count);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let verdicts = fx.verdicts("out");
    assert_eq!(
        verdicts["limit-checked"],
        "killed",
        "{}",
        ctx(code, &out, &err)
    );
    assert_eq!(verdicts["equivalent"], "survived");
    // The counted test ran in the baseline (and its warm checks), the
    // canary (m.py emptied breaks no import) and the survivor's full suite:
    // never for the kill (old: once more, its full suite).
    let checks = fx.warm_checks("out");
    assert_eq!(
        runs_counted(&count),
        3 + checks,
        "{}",
        ctx(code, &out, &err)
    );
    let o = fx.outcomes("out");
    let kill = mutant(&o, "limit-checked");
    assert_eq!(kill["full_suite"], false, "{kill:#}");
    let run = &kill["subset_runs"][0];
    assert_eq!(run["stage"], "expected-killers");
    assert_eq!(
        run["tests"],
        serde_json::json!(["tests.test_guard::test_rejects_big"])
    );
    assert_eq!(run["result"], "killed");
    // A kill by a subset keeps the reason of the run that decided it; the
    // detail says no full suite ran.
    assert_eq!(reason(&o, "limit-checked"), "killed-by-expected");
    assert!(kill["detail"]
        .as_str()
        .unwrap()
        .contains("the full suite did not run"));
    assert_eq!(reason(&o, "equivalent"), "suite-green");
    let survivor = mutant(&o, "equivalent");
    assert_eq!(survivor["full_suite"], true);
    assert_eq!(survivor["subset_runs"][0]["result"], "passed-on");
    // Its duration is the sum of its runs: the subset's and the full suite's.
    let d = survivor["duration_s"].as_f64().unwrap();
    assert!(d >= survivor["subset_runs"][0]["duration_s"].as_f64().unwrap());
    // The subset ran once on the unmutated copy, green, for both mutants.
    let checks = o["subset_checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "{checks:?}");
    assert_eq!(checks[0]["green"], true);
    // The reports say which tests ran.
    let html = fx.read("out/report.html");
    assert!(
        html.contains("1 selected test (expected-killers): killed; full suite not run"),
        "{html}"
    );
    let md = fx.read("out/report.md");
    assert!(
        md.contains("1 selected test (expected-killers): passed-on; the full suite"),
        "{md}"
    );

    // --full: the same verdicts, every mutant on the full suite.
    let (code, out, err) = fx.run(&["run", "--out", "full", "-j", "1", "--full"]);
    assert_eq!(fx.verdicts("full"), verdicts, "{}", ctx(code, &out, &err));
    let o = fx.outcomes("full");
    assert_eq!(mutant(&o, "limit-checked")["full_suite"], true);
    assert_eq!(
        mutant(&o, "limit-checked")["subset_runs"],
        serde_json::json!([])
    );
    // And -j 2 gives the same table.
    fx.run(&["run", "--out", "j2", "-j", "2"]);
    assert_eq!(fx.verdicts("j2"), verdicts);
}

/// The canary's red tests, then the tests that killed the file's other
/// mutants, for mutants without `killed_by`.
fn two_checks_fixture(counter: &str) -> Fixture {
    Fixture::git(&[
        (
            "m.py",
            "def check_a(x):\n    return x > 0\n\n\ndef check_b(x):\n    return x < 100\n",
        ),
        ("tests/__init__.py", ""),
        (
            "tests/test_m.py",
            "from m import check_a, check_b\n\n\ndef test_a_rejects_negative():\n    assert not check_a(-1)\n\n\ndef test_b_rejects_big():\n    assert not check_b(200)\n",
        ),
        ("tests/test_other.py", COUNTED_TEST),
        (
            "unguard.yaml",
            &format!(
                "version: 1\ntest:\n  command: \"{PYTEST}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\n  env: {{COUNTER: {counter:?}}}\nmutations:\n  - id: a\n    control: \"negatives refused\"\n    file: m.py\n    find: 'x > 0'\n    replace: 'True'\n  - id: b\n    control: \"big refused\"\n    file: m.py\n    find: 'x < 100'\n    replace: 'True'\n  - id: c\n    control: \"negatives refused, again\"\n    file: m.py\n    find: 'x > 0'\n    replace: 'x > -5'\n"
            ),
        ),
    ])
}

#[test]
fn without_killed_by_the_canarys_red_tests_then_the_siblings_killers_run_first() {
    let (_keep, count) = counter();
    let fx = two_checks_fixture(&count);
    // Without per-test coverage (its covering stage would come first: see
    // tests/it/per_test_coverage.rs): the canary's and the siblings' stages.
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1", "--no-coverage"]);
    let verdicts = fx.verdicts("out");
    for id in ["a", "b", "c"] {
        assert_eq!(verdicts[id], "killed", "{id}: {}", ctx(code, &out, &err));
    }
    let o = fx.outcomes("out");
    for id in ["a", "b", "c"] {
        let m = mutant(&o, id);
        assert_eq!(m["full_suite"], false, "{m:#}");
        assert_eq!(m["subset_runs"][0]["stage"], "canary", "{m:#}");
    }
    // The counted test (which the canary left green: it does not import
    // m.py) ran in the baseline alone (and its warm checks; old: once per
    // mutant too).
    let checks = fx.warm_checks("out");
    assert_eq!(
        runs_counted(&count),
        1 + checks,
        "{}",
        ctx(code, &out, &err)
    );

    // Without a canary, the first kill's red test goes first on its siblings.
    let (code, out, err) = fx.run(&[
        "run",
        "--out",
        "nc",
        "-j",
        "1",
        "--no-canary",
        "--no-coverage",
    ]);
    assert_eq!(fx.verdicts("nc"), verdicts, "{}", ctx(code, &out, &err));
    let o = fx.outcomes("nc");
    assert_eq!(mutant(&o, "a")["full_suite"], true);
    let c = mutant(&o, "c");
    assert_eq!(c["subset_runs"][0]["stage"], "siblings", "{c:#}");
    assert_eq!(c["subset_runs"][0]["result"], "killed", "{c:#}");
    assert_eq!(c["full_suite"], false, "{c:#}");

    // At -j 2 the first mutant is taken while the canary runs on the other
    // worker: it waits for the canary, so it too starts with the canary's tests.
    let (code, out, err) = fx.run(&["run", "--out", "j2", "-j", "2", "--no-coverage"]);
    assert_eq!(fx.verdicts("j2"), verdicts, "{}", ctx(code, &out, &err));
    let o = fx.outcomes("j2");
    for id in ["a", "b", "c"] {
        let m = mutant(&o, id);
        assert_eq!(m["subset_runs"][0]["stage"], "canary", "-j 2: {m:#}");
    }
    // With per-test coverage (the default): the covering tests first, and
    // the same verdicts; the counted test never runs for a mutant.
    let (code, out, err) = fx.run(&["run", "--out", "cov", "-j", "1"]);
    assert_eq!(fx.verdicts("cov"), verdicts, "{}", ctx(code, &out, &err));
    let o = fx.outcomes("cov");
    for id in ["a", "b", "c"] {
        let m = mutant(&o, id);
        assert_eq!(m["subset_runs"][0]["stage"], "covering", "{m:#}");
        assert_eq!(m["full_suite"], false, "{m:#}");
    }
    for args in [&["-j", "1", "--full"][..], &["-j", "2", "--no-canary"]] {
        let mut a = vec!["run", "--out", "again"];
        a.extend_from_slice(args);
        let (code, out, err) = fx.run(&a);
        assert_eq!(
            fx.verdicts("again"),
            verdicts,
            "{args:?}: {}",
            ctx(code, &out, &err)
        );
    }
}

#[test]
fn a_subset_red_on_its_own_never_kills() {
    // test_needs_setup passes only after test_a_setup ran (it sets a flag):
    // alone, it is red. The canary (m.py emptied) breaks test_m.py's import,
    // so its two tests are the mutant's subset, and the mutant is an
    // equivalent one: only a subset red on its own could "kill" it. The
    // check of the two is red because test_needs_setup is: it is left out,
    // and test_f alone, green, is the subset the mutant runs.
    let fx = Fixture::git(&[
        ("m.py", "UNUSED = 1\n\n\ndef f(x):\n    return x + 1\n"),
        ("tests/__init__.py", ""),
        ("tests/state.py", "READY = False\n"),
        (
            "tests/test_a_setup.py",
            "import tests.state as s\n\n\ndef test_setup():\n    s.READY = True\n",
        ),
        (
            "tests/test_m.py",
            "from m import f\nimport tests.state as s\n\n\ndef test_f():\n    assert f(1) == 2\n\n\ndef test_needs_setup():\n    assert s.READY\n",
        ),
        (
            "unguard.yaml",
            &format!("version: 1\ntest:\n  command: \"{PYTEST}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\nmutations:\n  - id: equivalent\n    control: \"nothing\"\n    file: m.py\n    find: 'UNUSED = 1'\n    replace: 'UNUSED = 2'\n"),
        ),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let o = fx.outcomes("out");
    let checks = o["subset_checks"].as_array().cloned().unwrap_or_default();
    assert_eq!(checks.len(), 2, "{}", ctx(code, &out, &err));
    // Sorted by their tests: test_f alone first.
    let both = &checks[1];
    assert_eq!(both["green"], false, "{both:#}");
    assert!(
        both["detail"]
            .as_str()
            .unwrap()
            .contains("test_needs_setup"),
        "{both:#}"
    );
    let setup = "tests.test_m::test_needs_setup";
    assert_eq!(both["left_out"], serde_json::json!([setup]), "{both:#}");
    assert_eq!(
        checks[0]["tests"],
        serde_json::json!(["tests.test_m::test_f"])
    );
    assert_eq!(checks[0]["green"], true, "{:#}", checks[0]);
    assert_eq!(fx.verdicts("out")["equivalent"], "survived");
    let m = mutant(&o, "equivalent");
    assert_eq!(m["full_suite"], true);
    let runs = m["subset_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{m:#}");
    assert_eq!(
        runs[0]["tests"],
        serde_json::json!(["tests.test_m::test_f"])
    );
    assert_eq!(runs[0]["result"], "passed-on", "{m:#}");
}

#[test]
fn a_hang_in_a_subset_is_a_timeout() {
    // Without the check, the expected killer loops forever.
    let fx = Fixture::git(&[
        (
            "m.py",
            "import time\n\n\ndef wait_closed(state):\n    while state != 'closed':\n        time.sleep(0.05)\n    return True\n\n\ndef close():\n    return 'closed'\n",
        ),
        ("tests/__init__.py", ""),
        (
            "tests/test_m.py",
            "import m\n\n\ndef test_close_ends_the_wait():\n    assert m.wait_closed(m.close())\n",
        ),
        ("tests/test_other.py", "def test_other():\n    assert True\n"),
        (
            "unguard.yaml",
            &format!("version: 1\ntest:\n  command: \"{PYTEST}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\nmutations:\n  - id: close-returns-closed\n    control: \"close closes\"\n    file: m.py\n    find: \"return 'closed'\"\n    replace: \"return 'open'\"\n    timeout: 6s\n    expect: {{killed_by: [\"tests/test_m.py::test_close_ends_the_wait\"]}}\n"),
        ),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(
        fx.verdicts("out")["close-returns-closed"],
        "timeout",
        "{}",
        ctx(code, &out, &err)
    );
    let o = fx.outcomes("out");
    let m = mutant(&o, "close-returns-closed");
    assert_eq!(m["subset_runs"][0]["result"], "timeout", "{m:#}");
    assert_eq!(m["full_suite"], false, "{m:#}");
    assert_no_processes("wait_closed", "a hung subset");
}

/// README case: a test outside the subset hangs under the mutant while an
/// expected killer fails. Selection stops at the kill (`killed`); the full
/// suite never finishes (`timeout`, as under `--full`).
#[test]
fn readme_case_a_hang_outside_the_subset_is_not_seen() {
    let fx = Fixture::git(&[
        (
            "m.py",
            "import time\n\nLIMIT = 10\n\n\ndef allowed(n):\n    return n <= LIMIT\n\n\ndef drain():\n    while LIMIT > 10:\n        time.sleep(0.05)\n",
        ),
        ("tests/__init__.py", ""),
        (
            "tests/test_guard.py",
            "import m\n\n\ndef test_rejects_big():\n    assert not m.allowed(11)\n",
        ),
        ("tests/test_later.py", "import m\n\n\ndef test_drain():\n    m.drain()\n"),
        (
            "unguard.yaml",
            &format!("version: 1\ntest:\n  command: \"{PYTEST}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\nmutations:\n  - id: limit\n    control: \"the limit\"\n    file: m.py\n    find: 'LIMIT = 10'\n    replace: 'LIMIT = 11'\n    timeout: 6s\n    expect: {{killed_by: [\"tests/test_guard.py::test_rejects_big\"]}}\n"),
        ),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "sel", "-j", "1"]);
    assert_eq!(
        fx.verdicts("sel")["limit"],
        "killed",
        "{}",
        ctx(code, &out, &err)
    );
    let (code, out, err) = fx.run(&["run", "--out", "full", "-j", "1", "--full"]);
    assert_eq!(
        fx.verdicts("full")["limit"],
        "timeout",
        "{}",
        ctx(code, &out, &err)
    );
}

/// README case: the mutant breaks the import of a test module outside the
/// subset. pytest collects every module for a subset too: the collection
/// error makes the subset run no kill (exit 2), and the full suite decides
/// (`wrong-reason`, as under `--full`). A runner that loads only the named
/// tests (the demo's, through `test.select`) does not see the broken
/// module: the expected killer's failure is the kill, as in its full run.
#[test]
fn readme_case_a_collection_error_outside_the_subset() {
    const M: &str = "def helper():\n    return 1\n\n\ndef guard(x):\n    return x > 0\n";
    let mutation = "    find: \"def helper():\\n    return 1\\n\\n\\ndef guard(x):\\n    return x > 0\"\n    replace: \"def helper_gone():\\n    return 1\\n\\n\\ndef guard(x):\\n    return True\"\n";
    // pytest.
    let fx = Fixture::git(&[
        ("m.py", M),
        ("tests/__init__.py", ""),
        // Both modules import from m.py: its canary breaks both, so the
        // expected killer counts as reached.
        ("tests/test_guard.py", "from m import guard\n\n\ndef test_guard():\n    assert not guard(-1)\n"),
        ("tests/test_helper.py", "from m import helper\n\n\ndef test_helper():\n    assert helper() == 1\n"),
        (
            "unguard.yaml",
            &format!("version: 1\ntest:\n  command: \"{PYTEST}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\nmutations:\n  - id: guard\n    control: \"the guard\"\n    file: m.py\n{mutation}    expect: {{killed_by: [\"tests/test_guard.py::test_guard\"]}}\n"),
        ),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "sel", "-j", "1"]);
    assert_eq!(
        fx.verdicts("sel")["guard"],
        "wrong-reason",
        "{}",
        ctx(code, &out, &err)
    );
    let o = fx.outcomes("sel");
    let m = mutant(&o, "guard");
    assert_eq!(m["subset_runs"][0]["result"], "passed-on", "{m:#}");
    assert_eq!(m["full_suite"], true, "{m:#}");
    fx.run(&["run", "--out", "full", "-j", "1", "--full"]);
    assert_eq!(fx.verdicts("full")["guard"], "wrong-reason");

    // The demo's runner through `test.select`: only the named tests load.
    let runner = include_str!("../../examples/demo-server/tests/run_tests.py");
    let fx = Fixture::git(&[
        ("m.py", M),
        ("tests/__init__.py", ""),
        ("tests/run_tests.py", runner),
        ("tests/test_guard.py", "import unittest\n\nimport m\n\n\nclass GuardTests(unittest.TestCase):\n    def test_guard(self):\n        self.assertFalse(m.guard(-1))\n"),
        ("tests/test_helper.py", "import unittest\n\nfrom m import helper\n\n\nclass HelperTests(unittest.TestCase):\n    def test_helper(self):\n        self.assertEqual(helper(), 1)\n"),
        (
            "unguard.yaml",
            &format!("version: 1\ntest:\n  command: \"python3 tests/run_tests.py --junit {{junit}}\"\n  junit: \"{{junit}}\"\n  fail_codes: [1]\n  timeout: 60s\n  select: \"python3 tests/run_tests.py --junit {{junit}} {{tests}}\"\nmutations:\n  - id: guard\n    control: \"the guard\"\n    file: m.py\n{mutation}    expect: {{killed_by: [\"tests.test_guard.GuardTests::test_guard\"]}}\n"),
        ),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "sel", "-j", "1"]);
    assert_eq!(
        fx.verdicts("sel")["guard"],
        "killed",
        "{}",
        ctx(code, &out, &err)
    );
    let o = fx.outcomes("sel");
    let m = mutant(&o, "guard");
    assert_eq!(m["full_suite"], false, "{m:#}");
    assert_eq!(
        m["red_tests"],
        serde_json::json!(["tests.test_guard.GuardTests::test_guard"])
    );
    fx.run(&["run", "--out", "full", "-j", "1", "--full"]);
    assert_eq!(fx.verdicts("full")["guard"], "killed");
}

#[test]
fn a_select_template_without_tests_is_a_spec_error() {
    let fx = Fixture::git(&[
        ("m.py", "X = 1\n"),
        (
            "unguard.yaml",
            "version: 1\ntest:\n  command: \"python3 run.py\"\n  select: \"python3 run.py --only\"\nmutations:\n  - id: x\n    control: \"x\"\n    file: m.py\n    find: 'X = 1'\n    replace: 'X = 2'\n",
        ),
    ]);
    let (code, out, err) = fx.run(&["check"]);
    assert_ne!(code, 0, "{}", ctx(code, &out, &err));
    assert!(
        err.contains("`test.select` must contain `{tests}` or `{files}`")
            && err.contains("unguard.yaml:4"),
        "{}",
        ctx(code, &out, &err)
    );
}

/// The bundled demo: the same verdicts with kill-first as with `--full`,
/// and its kills (10: six loosening, four tightening) come from its expected
/// killers alone.
#[test]
fn the_demo_gives_the_same_verdicts_with_and_without_selection() {
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo-server");
    let fx = Fixture::new();
    let run = |out: &str, extra: &[&str]| {
        let dir = fx.path().join(out);
        let mut args = vec![
            "run".to_string(),
            demo.display().to_string(),
            "--out".into(),
        ];
        args.push(dir.display().to_string());
        args.extend(["-j", "2"].iter().map(|s| s.to_string()));
        args.extend(extra.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = fx.run(&refs);
        (dir, ctx(code, &out, &err))
    };
    let (sel, said) = run("sel", &[]);
    let o: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sel.join("outcomes.json")).unwrap()).unwrap();
    let kills: Vec<&serde_json::Value> = o["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["outcome"] == "killed")
        .collect();
    assert_eq!(kills.len(), 10, "{said}");
    for k in kills {
        assert_eq!(k["full_suite"], false, "{k:#}");
    }
    let (full, said_full) = run("full", &["--full"]);
    assert_eq!(verdicts_in(&sel), verdicts_in(&full), "{said}\n{said_full}");
}

/// Issue 53, item 3: one test that is green in the full suite but red in
/// every subset (here it needs another test to run first, as a
/// timing-sensitive test needs a warm process) is left out of subsets and
/// kill proofs; the other tests still kill by subset. Without that, every
/// subset that held it was "not usable to kill" and every mutant paid the
/// full suite.
fn one_red_test_fixture() -> Fixture {
    Fixture::git(&[
        ("app/__init__.py", ""),
        (
            "app/guard.py",
            "def check_a(x):\n    return x > 0\n\n\ndef check_b(x):\n    return x < 100\n",
        ),
        ("tests/__init__.py", ""),
        ("tests/state.py", "WARM = False\n"),
        // Runs first in the full suite; executes no line of app/guard.py,
        // so no covering set, canary or kill ever selects it.
        (
            "tests/test_a_warm.py",
            "import tests.state as s\n\n\ndef test_warm_up():\n    s.WARM = True\n",
        ),
        (
            "tests/test_checks.py",
            "from app import guard\n\n\ndef test_a_refuses_zero():\n    assert not guard.check_a(0)\n\n\ndef test_a_allows_one():\n    assert guard.check_a(1)\n\n\ndef test_b_refuses_big():\n    assert not guard.check_b(200)\n\n\ndef test_b_allows_small():\n    assert guard.check_b(3)\n",
        ),
        // Executes every guard and goes red whenever it runs without the
        // warm-up before it: in every subset, never in the full suite.
        (
            "tests/test_timing.py",
            "from app import guard\nimport tests.state as s\n\n\ndef test_within_budget():\n    assert guard.check_a(1) and guard.check_b(3)\n    assert s.WARM\n",
        ),
        (
            "unguard.yaml",
            &format!(
                "version: 1\ntest:\n  command: \"{PYTEST}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\nmutations:\n  - id: eq\n    control: \"an equivalent rewrite\"\n    file: app/guard.py\n    find: 'x > 0'\n    replace: 'x >= 1'\n  - id: a\n    control: \"zero refused\"\n    file: app/guard.py\n    find: 'x > 0'\n    replace: 'True'\n  - id: b\n    control: \"big refused\"\n    file: app/guard.py\n    find: 'x < 100'\n    replace: 'True'\n"
            ),
        ),
    ])
}

const TIMING: &str = "tests.test_timing::test_within_budget";

#[test]
fn one_test_red_on_the_unmutated_copy_does_not_cost_every_subset() {
    let fx = one_red_test_fixture();
    let (code, out, err) = fx.run(&["run", "--out", "full", "-j", "1", "--full"]);
    let full = fx.verdicts("full");
    let want: std::collections::BTreeMap<String, String> =
        [("a", "killed"), ("b", "killed"), ("eq", "survived")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    assert_eq!(full, want, "{}", ctx(code, &out, &err));
    for (dir, args) in [
        ("cov1", &["-j", "1"][..]),
        ("cov2", &["-j", "2"]),
        ("nocov1", &["-j", "1", "--no-coverage"]),
        ("nocov2", &["-j", "2", "--no-coverage"]),
    ] {
        let mut a = vec!["run", "--out", dir];
        a.extend_from_slice(args);
        let (code, out, err) = fx.run(&a);
        let said = format!("{args:?}: {}", ctx(code, &out, &err));
        assert_eq!(fx.verdicts(dir), full, "{said}");
        let o = fx.outcomes(dir);
        // The other tests still kill by subset: no kill paid the full suite.
        for id in ["a", "b"] {
            let m = mutant(&o, id);
            assert_eq!(m["full_suite"], false, "{id}: {m:#}\n{said}");
        }
        // The red test is never a mutant's only red test, nor a kill's proof.
        for m in o["mutants"].as_array().unwrap() {
            let red: Vec<&str> = m["red_tests"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|t| t.as_str())
                .collect();
            assert!(red.iter().any(|t| *t != TIMING) || red.is_empty(), "{m:#}");
        }
        // Said once, and recorded in the subset check that found it.
        let line = format!("subset check: {TIMING} is red on the unmutated copy: left out of subsets and kill proofs;");
        assert_eq!(format!("{out}{err}").matches(&line).count(), 1, "{said}");
        let checks = o["subset_checks"].as_array().unwrap();
        let left: Vec<&serde_json::Value> = checks
            .iter()
            .filter(|c| c["left_out"] == serde_json::json!([TIMING]))
            .collect();
        assert!(!left.is_empty(), "{checks:#?}");
        assert!(left.iter().all(|c| c["green"] == false), "{checks:#?}");
        let holds = |v: &serde_json::Value| {
            v["tests"]
                .as_array()
                .unwrap()
                .contains(&serde_json::json!(TIMING))
        };
        for c in checks.iter().filter(|c| c["green"] == true) {
            assert!(!holds(c), "{c:#}");
        }
        if args[1] == "1" {
            // One worker: found by the first check that holds it, it is in
            // no later check or subset. The first mutant (eq) runs before
            // it is found; its only red test there is it, and that is no
            // kill.
            let with_it = checks.iter().filter(|c| holds(c)).count();
            assert_eq!(with_it, 1, "{checks:#?}");
            let runs: Vec<&serde_json::Value> = o["mutants"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|m| m["subset_runs"].as_array().unwrap())
                .filter(|r| holds(r))
                .collect();
            assert!(runs.len() <= 1, "{runs:#?}");
        }
    }
}
