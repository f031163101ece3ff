//! A coverage gate is not a kill: a suite whose tests all pass but whose
//! coverage threshold fails (pytest-cov's `--cov-fail-under`, jest's
//! `coverageThreshold`, vitest's `thresholds`) is `wrong-reason`, also with
//! no `test.junit` configured and behind a `sh run_tests.sh` wrapper. unguard
//! reads what ran from the log and has pytest write a JUnit report of its own
//! (through `PYTEST_ADDOPTS`); a mutant that does fail a test is still killed,
//! with its red tests named.

use crate::common::*;

const APP: &str = r#"def check(token):
    if token is None:
        return False
    return token == "secret"
"#;

const TEST_APP: &str = r#"from app import check


def test_missing_token_rejected():
    assert check(None) is False


def test_right_token_accepted():
    assert check("secret") is True


def test_wrong_token_rejected():
    assert check("guess") is False
"#;

const PYTEST_COV: &str = "python3 -m pytest -q -p no:cacheprovider --cov=. --cov-fail-under=100";

/// Leaves every test green (`check(None)` is still False) but never runs
/// the `return False` line: coverage drops under 100 %.
const EQUIVALENT: (&str, &str, &str) = (
    "none-check-equivalent",
    "if token is None:",
    "if token is None and token:",
);
/// Accepts every token: `test_wrong_token_rejected` fails.
const KILLING: (&str, &str, &str) = (
    "token-compared",
    "return token == \"secret\"",
    "return True",
);
/// A syntax error: pytest cannot import the test module (exit 2).
const BREAKS_IMPORT: (&str, &str, &str) = (
    "collection-error",
    "def check(token):",
    "def check(token) oops:",
);

fn spec(command: &str, preset: &str, m: (&str, &str, &str)) -> String {
    let (id, find, replace) = m;
    SpecBuilder::new(command)
        .preset(preset)
        .timeout("120s")
        .mutation(mutation(id, "app.py", find, replace).control("the token check"))
        .build()
}

/// A target whose suite is `command` under `preset`, with no `test.junit`.
fn fixture(command: &str, preset: &str, m: (&str, &str, &str)) -> Fixture {
    Fixture::git(&[
        (".gitignore", "out/\n.coverage\n"),
        ("app.py", APP),
        ("test_app.py", TEST_APP),
        (
            "run_tests.sh",
            &format!("set -u\necho running the unit tests\n{PYTEST_COV}\n"),
        ),
        ("unguard.yaml", &spec(command, preset, m)),
    ])
}

fn mutant(fx: &Fixture, out: &str) -> serde_json::Value {
    fx.outcomes(out)["mutants"][0].clone()
}

/// Run unguard on `fx`; return the one mutant's row and the run's context.
fn run(fx: &Fixture) -> (i32, serde_json::Value, String) {
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let what = ctx(code, &out, &err);
    assert!(
        fx.path().join("out/outcomes.json").exists(),
        "no outcomes: {what}"
    );
    (code, mutant(fx, "out"), what)
}

fn detail(m: &serde_json::Value) -> &str {
    m["detail"].as_str().unwrap_or_default()
}

#[test]
fn a_pytest_coverage_gate_is_wrong_reason_without_junit() {
    let fx = fixture(PYTEST_COV, "pytest", EQUIVALENT);
    let (code, m, what) = run(&fx);
    assert_eq!(m["outcome"], "wrong-reason", "{m:#}\n{what}");
    assert_eq!(m["exit"], "exit code 1", "{m:#}");
    assert_eq!(m["reason"], "no-failed-test", "{m:#}");
    assert_eq!(m["red_tests"], serde_json::json!([]), "{m:#}");
    assert_eq!(m["tests_total"], 3, "{m:#}");
    assert_eq!(code, 2, "{what}");
    // The baseline counted its tests through the report unguard injected.
    let o = fx.outcomes("out");
    assert_eq!(o["baselines"][0]["tests_total"], 3, "{:#}", o["baselines"]);
    assert!(
        !what.contains("no `test.junit` configured"),
        "the tests were counted: {what}"
    );
}

#[test]
fn a_coverage_gate_behind_a_wrapper_script_is_wrong_reason_under_generic() {
    let fx = fixture("sh run_tests.sh", "generic", EQUIVALENT);
    let (code, m, what) = run(&fx);
    assert_eq!(m["outcome"], "wrong-reason", "{m:#}\n{what}");
    assert_eq!(m["reason"], "no-failed-test", "{m:#}");
    assert_eq!(m["tests_total"], 3, "{m:#}");
    assert_eq!(code, 2, "{what}");
}

#[test]
fn a_pytest_collection_error_under_generic_is_wrong_reason() {
    let fx = fixture("sh run_tests.sh", "generic", BREAKS_IMPORT);
    let (code, m, what) = run(&fx);
    assert_eq!(m["outcome"], "wrong-reason", "{m:#}\n{what}");
    assert_eq!(m["exit"], "exit code 2", "{m:#}");
    // The report pytest wrote for unguard shows the module that failed to
    // collect: a broken import behind a wrapper, never a kill.
    assert_eq!(m["reason"], "load-error", "{m:#}");
    assert!(detail(&m).contains("(test_app)"), "names the module: {m:#}");
    assert_eq!(code, 2, "{what}");
}

#[test]
fn a_real_kill_is_still_killed_and_names_its_red_tests() {
    for (command, preset) in [(PYTEST_COV, "pytest"), ("sh run_tests.sh", "generic")] {
        let fx = fixture(command, preset, KILLING);
        let (code, m, what) = run(&fx);
        assert_eq!(m["outcome"], "killed", "{command}: {m:#}\n{what}");
        assert_eq!(
            m["red_tests"],
            serde_json::json!(["test_app::test_wrong_token_rejected"]),
            "{command}: {m:#}"
        );
        assert_eq!(m["tests_total"], 3, "{command}: {m:#}");
        assert_eq!(code, 0, "{command}: {what}");
    }
}

#[test]
fn the_users_own_junitxml_still_lets_pytests_summary_decide() {
    // The command passes --junitxml itself, so pytest writes only that one
    // (command-line options come after PYTEST_ADDOPTS); without `test.junit`
    // unguard reads pytest's summary line instead.
    let command = format!("{PYTEST_COV} --junitxml=mine.xml");
    let fx = fixture(&command, "pytest", EQUIVALENT);
    let (code, m, what) = run(&fx);
    assert_eq!(m["outcome"], "wrong-reason", "{m:#}\n{what}");
    assert_eq!(m["reason"], "no-failed-test", "{m:#}");
    assert_eq!(m["tests_total"], 3, "{m:#}");
    assert_eq!(code, 2, "{what}");
}

#[test]
fn a_wrapper_whose_pytest_ran_no_tests_is_a_red_baseline() {
    // The usual CI idiom that lets pytest's "no tests" (exit 5) pass.
    let fx = fixture("sh run_tests.sh", "generic", EQUIVALENT);
    fx.write(
        "run_tests.sh",
        "python3 -m pytest -q -p no:cacheprovider no_tests_here || [ $? -eq 5 ]\n",
    );
    std::fs::create_dir_all(fx.path().join("no_tests_here")).unwrap();
    fx.write("no_tests_here/README", "nothing to collect\n");
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 4, "{}", ctx(code, &out, &err));
    assert!(err.contains("ran 0 tests"), "{}", ctx(code, &out, &err));
}

/// A stand-in for a JavaScript runner: prints real captured output of jest
/// or vitest (`pass`, or `mutated` when app.js was mutated) with its exit code.
fn js_fixture(pass: &str, mutated: &str, id: &str) -> Fixture {
    let suite = "if grep -q MUTATED app.js; then cat mutated.txt; exit 1; fi\ncat pass.txt\n";
    let spec = format!(
        "version: 1\ntest:\n  command: \"sh run.sh\"\n  timeout: 60s\nmutations:\n  - id: {id}\n    control: \"the guard\"\n    file: app.js\n    find: 'GUARD'\n    replace: 'MUTATED'\n    canary: false\n"
    );
    Fixture::git(&[
        ("app.js", "// GUARD\n"),
        ("run.sh", suite),
        ("pass.txt", pass),
        ("mutated.txt", mutated),
        ("unguard.yaml", &spec),
    ])
}

#[test]
fn a_jest_or_vitest_coverage_threshold_is_wrong_reason() {
    let jest_pass = include_str!("../fixtures/suite_logs/jest_passed.txt");
    let vitest_pass = include_str!("../fixtures/suite_logs/vitest_passed.txt");
    for (runner, pass, red) in [
        (
            "jest",
            jest_pass,
            include_str!("../fixtures/suite_logs/jest_cov_fail.txt"),
        ),
        (
            "vitest",
            vitest_pass,
            include_str!("../fixtures/suite_logs/vitest_color_cov_fail.txt"),
        ),
    ] {
        let fx = js_fixture(pass, red, "threshold");
        let (code, m, what) = run(&fx);
        assert_eq!(m["outcome"], "wrong-reason", "{runner}: {m:#}\n{what}");
        assert_eq!(m["reason"], "no-failed-test", "{runner}: {m:#}");
        assert_eq!(m["tests_total"], 5, "{runner}: {m:#}");
        assert_eq!(code, 2, "{runner}: {what}");
    }
    for (runner, pass, red) in [
        (
            "jest",
            jest_pass,
            include_str!("../fixtures/suite_logs/jest_killed.txt"),
        ),
        (
            "vitest",
            vitest_pass,
            include_str!("../fixtures/suite_logs/vitest_killed.txt"),
        ),
    ] {
        let fx = js_fixture(pass, red, "kill");
        let (code, m, what) = run(&fx);
        assert_eq!(m["outcome"], "killed", "{runner}: {m:#}\n{what}");
        assert_eq!(m["reason"], "tests-failed", "{runner}: {m:#}");
        assert_eq!(
            (&m["red_counted"], &m["tests_total"]),
            (&1.into(), &5.into()),
            "{runner}: {m:#}"
        );
        assert_eq!(code, 0, "{runner}: {what}");
    }
}

#[test]
fn a_collection_error_behind_a_wrapper_with_a_configured_report_is_wrong_reason() {
    // The wrapper passes the report path through: `test.junit` is set, and
    // pytest's collection error still writes a report with an errored case.
    let fx = fixture(
        "sh run_tests.sh --junitxml={junit}",
        "generic",
        BREAKS_IMPORT,
    );
    fx.write(
        "run_tests.sh",
        "set -u\necho running the unit tests\npython3 -m pytest -q -p no:cacheprovider \"$@\"\n",
    );
    fx.write(
        "unguard.yaml",
        &fx.read("unguard.yaml").replace(
            "  preset: generic\n",
            "  preset: generic\n  junit: \"{junit}\"\n",
        ),
    );
    fx.git_cmd(&["add", "-A"]);
    fx.commit("a configured report");
    let (code, m, what) = run(&fx);
    assert_eq!(m["outcome"], "wrong-reason", "{m:#}\n{what}");
    assert_eq!(m["exit"], "exit code 2", "{m:#}");
    assert_eq!(m["reason"], "load-error", "{m:#}");
    assert!(detail(&m).contains("(test_app)"), "names the module: {m:#}");
    assert_eq!(code, 2, "{what}");
}
