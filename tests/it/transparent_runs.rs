//! A suite that is green outside unguard is green inside it (issue 31):
//! nothing unguard adds for its own convenience may change the outcome of
//! the user's unmutated command. A fixture matrix, each row at `-j 1` and
//! `-j 2`, asserting that the baseline is green, that kill-first subsets
//! are usable where an adapter applies, and the verdicts:
//!
//! - strict pytest set-ups (`filterwarnings = error`, `--strict-config`,
//!   `-p no:cacheprovider`, `-p no:junitxml`, addopts with its own
//!   `--junitxml`, a user `PYTEST_ADDOPTS`, xdist's `-n 2`);
//! - a red baseline re-checked against the bare command (unguard's
//!   `--junitxml` request dropped for the run, said and recorded);
//! - wrappers that own their exit codes (`make`, a script doing
//!   `pytest || exit 3`, tox, nox, `npm test` around jest with
//!   jest-junit): the per-test report decides, a broken import stays
//!   `wrong-reason`;
//! - kill-first on a `PYTHONPATH=src` Makefile with a coverage gate, and
//!   on jest with a `coverageThreshold` (off in subsets only).

use crate::common::*;
use crate::kill_first_adapters::{have, skip};

use std::process::Command;

/// Extra files of a fixture: (path, content).
type Files = Vec<(&'static str, &'static str)>;

const APP: &str =
    "def allowed(host):\n    if host == \"evil\":\n        return False\n    return True\n";

const TESTS: &str = "from app import allowed\n\n\ndef test_refuses_evil():\n    assert allowed(\"evil\") is False\n\n\ndef test_accepts_good():\n    assert allowed(\"good\") is True\n";

/// The three mutants every row runs, and the verdict each must get.
fn mutations(file: &str) -> Vec<Mutation> {
    vec![
        mutation("evil-refused", file, "return False", "return True").control("evil is refused"),
        mutation(
            "equivalent",
            file,
            "if host == \"evil\":",
            "if \"evil\" == host:",
        )
        .control("an equivalent rewrite"),
        mutation(
            "import-broken",
            file,
            "def allowed(host):",
            "def allowed(host) oops:",
        )
        .control("a syntax error: the tests cannot import the module"),
    ]
}

const VERDICTS: [(&str, &str); 3] = [
    ("evil-refused", "killed"),
    ("equivalent", "survived"),
    ("import-broken", "wrong-reason"),
];

/// A fixture: the app at `app` (`app.py` or `src/app.py`), its tests, the
/// spec (`spec` given the mutations) and `extra` files.
fn fixture(app: &str, spec: SpecBuilder, extra: &[(&str, &str)]) -> Fixture {
    let spec = spec.mutations(mutations(app)).build();
    let mut files: Vec<(&str, &str)> = vec![
        (app, APP),
        ("tests/test_app.py", TESTS),
        // A test that imports nothing of the app: the canary leaves it
        // green, so the canary's red tests are a strict subset.
        (
            "tests/test_other.py",
            "def test_arithmetic():\n    assert 1 + 1 == 2\n",
        ),
        ("unguard.yaml", &spec),
        (
            ".gitignore",
            ".pytest_cache/\n.tox/\n.nox/\nnode_modules/\n",
        ),
    ];
    files.extend_from_slice(extra);
    Fixture::git(&files)
}

/// What one run showed.
struct Ran {
    code: i32,
    err: String,
    outcomes: serde_json::Value,
}

/// Run the fixture at `-j jobs`, and assert its baseline was green and
/// every verdict is the row's. `subsets`: the kill was decided by a
/// kill-first subset (usable on the unmutated copy), not the full suite.
fn check(fx: &Fixture, row: &str, jobs: usize, subsets: bool) -> Ran {
    let out = format!("out-j{jobs}");
    let (code, stdout, err) = fx.run(&["run", "--out", &out, "-j", &jobs.to_string()]);
    let what = format!("{row} at -j {jobs}: {}", ctx(code, &stdout, &err));
    assert_ne!(code, 4, "the baseline must be green: {what}");
    assert!(err.contains("baseline: green"), "{what}");
    assert!(
        !err.contains("Unknown config option"),
        "pytest warned about an option unguard added: {what}"
    );
    let verdicts = fx.verdicts(&out);
    for (id, want) in VERDICTS {
        assert_eq!(
            verdicts.get(id).map(String::as_str),
            Some(want),
            "{id}: {what}\n{:#}",
            fx.outcomes(&out)
        );
    }
    let outcomes = fx.outcomes(&out);
    let kill = mutant(&outcomes, "evil-refused");
    if subsets {
        assert!(!err.contains("not usable"), "{what}");
        assert_eq!(kill["full_suite"], false, "{what}\n{kill:#}");
    }
    // A kill names its red tests, or says it was read from a summary line
    // (no per-test report: `-p no:junitxml`).
    assert!(
        kill["red_tests"] != serde_json::json!([])
            || kill["detail"].as_str().unwrap().contains("summary line"),
        "{what}\n{kill:#}"
    );
    assert!(!fx.path().join(".pytest_cache").exists());
    Ran {
        code,
        err,
        outcomes,
    }
}

/// Every row at -j 1 and -j 2.
fn both(fx: &Fixture, row: &str, subsets: bool) -> Vec<Ran> {
    [1, 2]
        .into_iter()
        .map(|j| check(fx, row, j, subsets))
        .collect()
}

const STRICT_PYPROJECT: &str =
    "[tool.pytest.ini_options]\nfilterwarnings = [\"error\"]\naddopts = \"--strict-config --strict-markers\"\n";

#[test]
fn strict_pytest_setups_stay_green() {
    // A large public Python MCP SDK runs pytest exactly so: warnings are
    // errors and the command turns the cache provider off. unguard's old
    // `-o cache_dir=` made pytest raise "Unknown config option: cache_dir"
    // (INTERNALERROR, exit 4): a red baseline for a green suite.
    let rows = [
        (
            "no cacheprovider",
            "python3 -m pytest -q -p no:cacheprovider tests",
            vec![],
        ),
        (
            "no junitxml",
            "python3 -m pytest -q -p no:cacheprovider -p no:junitxml tests",
            vec![],
        ),
        ("cacheprovider on", "python3 -m pytest -q tests", vec![]),
        (
            "user PYTEST_ADDOPTS",
            "python3 -m pytest -q tests",
            vec![("PYTEST_ADDOPTS", "-p no:cacheprovider -r fE")],
        ),
    ];
    for (row, command, env) in rows {
        let mut spec = SpecBuilder::new(command).timeout("120s");
        for (k, v) in &env {
            spec = spec.env(k, v);
        }
        let fx = fixture("app.py", spec, &[("pyproject.toml", STRICT_PYPROJECT)]);
        // The report unguard asks for is there, except where the command
        // turns pytest's junitxml off: subsets need it.
        both(&fx, row, row != "no junitxml");
    }
}

#[test]
fn addopts_with_their_own_junitxml_stay_green() {
    let pyproject = "[tool.pytest.ini_options]\nfilterwarnings = [\"error\"]\naddopts = \"--strict-config -p no:cacheprovider --junitxml=reports/mine.xml\"\n";
    let spec = SpecBuilder::new("python3 -m pytest -q tests").timeout("120s");
    let fx = fixture("app.py", spec, &[("pyproject.toml", pyproject)]);
    both(&fx, "addopts --junitxml", true);
}

#[test]
fn xdist_with_strict_config_stays_green_and_selects() {
    let have_xdist = Command::new("python3")
        .args(["-c", "import xdist"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_xdist && !skip("pytest-xdist is not installed (pip install -r tests/requirements.txt)")
    {
        return;
    }
    let spec =
        SpecBuilder::new("python3 -m pytest -q -p no:cacheprovider -n 2 tests").timeout("120s");
    let fx = fixture("app.py", spec, &[("pyproject.toml", STRICT_PYPROJECT)]);
    both(&fx, "xdist -n 2", true);
}

#[test]
fn a_red_baseline_is_checked_against_the_bare_command() {
    // The Makefile turns pytest's junitxml plugin off where unguard cannot
    // see it: its `--junitxml` request is a usage error there. The bare
    // command is green, so unguard drops the request for the whole run,
    // says so once and records it.
    let makefile = "test:\n\tpython3 -m pytest -q -p no:cacheprovider -p no:junitxml tests\n";
    let spec = SpecBuilder::new("make -s test").timeout("120s");
    let fx = fixture("app.py", spec, &[("Makefile", makefile)]);
    for ran in both(&fx, "make with -p no:junitxml", false) {
        let warned: Vec<&str> = ran
            .err
            .lines()
            .filter(|l| l.contains("green without it"))
            .collect();
        assert_eq!(warned.len(), 1, "{}", ran.err);
        assert!(warned[0].contains("--junitxml"), "{}", warned[0]);
        let dropped = &ran.outcomes["baselines"][0]["dropped"];
        assert_eq!(dropped.as_array().map(Vec::len), Some(1), "{dropped:#}");
        assert!(dropped[0].as_str().unwrap().contains("--junitxml"));
        assert_eq!(ran.code, 2, "the survivor fails the gate");
    }
}

#[test]
fn wrappers_own_their_exit_codes() {
    // make exits 2 when its pytest fails a test; the script turns any red
    // pytest into 3. pytest's exit-code table is not theirs: the report
    // pytest wrote for unguard shows the red test, and a broken import is
    // still not a kill.
    let rows: [(&str, &str, Files); 2] = [
        (
            "make",
            "make -s test",
            vec![(
                "Makefile",
                "test:\n\tpython3 -m pytest -q -p no:cacheprovider tests\n",
            )],
        ),
        (
            "script || exit 3",
            "./run-tests.sh",
            vec![(
                "run-tests.sh",
                "#!/bin/sh\npython3 -m pytest -q -p no:cacheprovider tests || exit 3\n",
            )],
        ),
    ];
    for (row, command, extra) in rows {
        let fx = fixture("app.py", SpecBuilder::new(command).timeout("120s"), &extra);
        if row.starts_with("script") {
            let script = fx.path().join("run-tests.sh");
            let mut perms = std::fs::metadata(&script).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
            std::fs::set_permissions(&script, perms).unwrap();
            fx.git_cmd(&["add", "-A"]);
            fx.commit("executable");
        }
        for ran in both(&fx, row, true) {
            let kill = mutant(&ran.outcomes, "evil-refused");
            assert_eq!(
                kill["red_tests"],
                serde_json::json!(["tests.test_app::test_refuses_evil"]),
                "{row}: {kill:#}"
            );
            let broken = mutant(&ran.outcomes, "import-broken");
            assert!(
                broken["detail"]
                    .as_str()
                    .unwrap()
                    .contains("failed to load or collect"),
                "{row}: {broken:#}"
            );
        }
    }
}

#[test]
fn a_lint_steps_summary_looking_line_adds_no_red_test() {
    // Issue 33 item 1: pytest is green, then a lint step prints what looks
    // like pytest's summary and exits 1. The report pytest wrote for
    // unguard shows no failed test: not a kill.
    let script = "python3 -m pytest -q -p no:cacheprovider tests || exit 1\necho '1 failed in 0.01s'\nexit 1\n";
    let spec = SpecBuilder::new("sh run_tests.sh")
        .timeout("120s")
        .mutation(
            mutation("equivalent-2", "app.py", "return True", "return not False")
                .control("an equivalent rewrite"),
        );
    // The baseline is red by design here: only this one mutant matters, so
    // the wrapper is made green when nothing is mutated.
    let script = format!("if grep -q 'not False' app.py; then\n{script}else\npython3 -m pytest -q -p no:cacheprovider tests\nfi\n");
    let fx = Fixture::git(&[
        ("app.py", APP),
        ("tests/test_app.py", TESTS),
        ("run_tests.sh", &script),
        ("unguard.yaml", &spec.build()),
    ]);
    for jobs in ["1", "2"] {
        let out = format!("out-j{jobs}");
        let (code, stdout, err) = fx.run(&["run", "--out", &out, "-j", jobs]);
        let o = fx.outcomes(&out);
        let m = mutant(&o, "equivalent-2");
        assert_eq!(
            m["outcome"],
            "wrong-reason",
            "{m:#}\n{}",
            ctx(code, &stdout, &err)
        );
        assert_eq!(m["red_tests"], serde_json::json!([]), "{m:#}");
        assert!(
            m["detail"].as_str().unwrap().contains("0 failed of 2"),
            "{m:#}"
        );
    }
}

#[test]
fn tox_and_nox_own_their_exit_codes() {
    for tool in ["tox", "nox"] {
        if !have(tool) {
            continue;
        }
        let (command, file, text) = if tool == "tox" {
            (
                "tox -q -e py",
                "tox.ini",
                "[tox]\nenvlist = py\nskipsdist = true\n\n[testenv]\nskip_install = true\nsystem_site_packages = true\ncommands = python -m pytest -q -p no:cacheprovider tests\n",
            )
        } else {
            (
                "nox -s tests",
                "noxfile.py",
                "import nox\n\n\n@nox.session(venv_params=[\"--system-site-packages\"])\ndef tests(session):\n    session.run(\"python\", \"-m\", \"pytest\", \"-q\", \"-p\", \"no:cacheprovider\", \"tests\")\n",
            )
        };
        let fx = fixture(
            "app.py",
            SpecBuilder::new(command).timeout("300s"),
            &[(file, text)],
        );
        // Their environments are made in the copy on each run: no subset
        // assertion (the copy's `.tox` is rebuilt per run).
        check(&fx, tool, 1, false);
    }
}

#[test]
fn kill_first_works_with_pythonpath_set_by_the_command_and_a_coverage_gate() {
    // The Makefile sets PYTHONPATH itself (as many CI scripts do), which
    // hid a plugin loaded from unguard's PYTHONPATH entry; the coverage
    // gate in addopts failed every subset on the unmutated copy. Both made
    // every subset "not usable": every mutant ran the full suite.
    let have_cov = Command::new("python3")
        .args(["-c", "import pytest_cov"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_cov && !skip("pytest-cov is not installed (pip install -r tests/requirements.txt)") {
        return;
    }
    let pyproject = "[tool.pytest.ini_options]\naddopts = \"-p no:cacheprovider --cov=src --cov-report= --cov-fail-under=100\"\n";
    let makefile = "test:\n\tPYTHONPATH=src python3 -m pytest -q tests\n";
    let spec = SpecBuilder::new("make -s test").timeout("120s");
    let fx = fixture(
        "src/app.py",
        spec,
        &[("pyproject.toml", pyproject), ("Makefile", makefile)],
    );
    for ran in both(&fx, "PYTHONPATH=src + coverage gate", true) {
        assert!(!ran.err.contains("Error importing plugin"), "{}", ran.err);
    }
}

const GUARD_JS: &str = "function allowed(host) {\n  if (host === 'evil') {\n    return false;\n  }\n  return true;\n}\n\nmodule.exports = { allowed };\n";

const GUARD_TEST_JS: &str = "const { allowed } = require('../src/guard.js');\n\ndescribe('allowed', () => {\n  test('refuses evil', () => {\n    expect(allowed('evil')).toBe(false);\n  });\n  test('accepts good', () => {\n    expect(allowed('good')).toBe(true);\n  });\n});\n";

/// A package whose `npm test` runs jest with jest-junit among its
/// reporters (jest-junit writes where `JEST_JUNIT_OUTPUT_FILE` says), and
/// a coverage gate: every line of `src/` covered. The full suite meets
/// it; the guard's tests alone do not (`src/math.js` is covered by the
/// other test file only).
const JEST_PACKAGE: &str = r#"{
  "name": "fx",
  "private": true,
  "scripts": {"test": "jest --ci"},
  "jest": {
    "reporters": ["default", "jest-junit"],
    "collectCoverage": true,
    "collectCoverageFrom": ["src/**/*.js"],
    "coverageReporters": ["text-summary"],
    "coverageThreshold": {"global": {"lines": 100}}
  }
}
"#;

/// The same three mutants as the Python rows, in `src/guard.js`.
fn js_mutations() -> Vec<Mutation> {
    let file = "src/guard.js";
    vec![
        mutation("evil-refused", file, "return false;", "return true;").control("evil is refused"),
        mutation(
            "equivalent",
            file,
            "if (host === 'evil') {",
            "if ('evil' === host) {",
        )
        .control("an equivalent rewrite"),
        mutation(
            "import-broken",
            file,
            "function allowed(host) {",
            "function allowed(host) oops {",
        )
        .control("a syntax error: the test file cannot require the module"),
    ]
}

/// A jest package run by `command`, jest and jest-junit installed from
/// the registry; `None` when they cannot be (skipped, or failed under
/// `CI`).
fn jest_fixture(command: &str) -> Option<Fixture> {
    if !have("node") {
        return None;
    }
    let spec = SpecBuilder::new(command)
        .junit("{junit}")
        .timeout("120s")
        .mutations(js_mutations())
        .build();
    let fx = Fixture::git(&[
        ("package.json", JEST_PACKAGE),
        (".gitignore", "node_modules/\ncoverage/\n"),
        ("src/guard.js", GUARD_JS),
        (
            "src/math.js",
            "function add(a, b) {\n  return a + b;\n}\n\nmodule.exports = { add };\n",
        ),
        ("test/guard.test.js", GUARD_TEST_JS),
        (
            "test/other.test.js",
            "const { add } = require('../src/math.js');\n\ntest('arithmetic', () => {\n  expect(add(1, 1)).toBe(2);\n});\n",
        ),
        ("unguard.yaml", &spec),
    ]);
    crate::common::node_tools::link_into(fx.path()).then_some(fx)
}

/// The kill names the one red test, and the broken import, which jest
/// reports as a test file that failed to run (jest-junit leaves it out of
/// the report), is `wrong-reason` with no red test.
fn assert_js_verdicts(ran: &Ran, row: &str) {
    let kill = mutant(&ran.outcomes, "evil-refused");
    assert_eq!(
        kill["red_tests"],
        serde_json::json!(["allowed refuses evil::allowed refuses evil"]),
        "{row}: {kill:#}"
    );
    let broken = mutant(&ran.outcomes, "import-broken");
    assert_eq!(
        broken["red_tests"],
        serde_json::json!([]),
        "{row}: {broken:#}"
    );
    assert!(
        broken["detail"].as_str().unwrap().contains("0 failed of 1"),
        "{row}: {broken:#}"
    );
}

#[test]
fn npm_test_around_jest_owns_its_exit_code() {
    // npm exits 1 whatever jest's exit was: the report jest-junit wrote
    // decides. No adapter selects through `npm test`: every mutant runs
    // the full suite, coverage gate and all.
    let Some(fx) = jest_fixture("JEST_JUNIT_OUTPUT_FILE={junit} npm test --silent") else {
        return;
    };
    for ran in both(&fx, "npm test around jest", false) {
        assert_js_verdicts(&ran, "npm test");
        let kill = mutant(&ran.outcomes, "evil-refused");
        assert_eq!(kill["full_suite"], true, "{kill:#}");
    }
}

#[test]
fn a_jest_coverage_threshold_is_off_in_subsets_only() {
    // The guard's tests alone cover 80 % of `src/`: with the gate on, the
    // subset would be red on the unmutated copy and never kill. unguard's
    // subset turns coverage off; the full command keeps it.
    let Some(fx) = jest_fixture("JEST_JUNIT_OUTPUT_FILE={junit} node_modules/.bin/jest --ci")
    else {
        return;
    };
    for (ran, jobs) in both(&fx, "jest with coverageThreshold", true)
        .iter()
        .zip([1, 2])
    {
        assert_js_verdicts(ran, "jest");
        let kill = mutant(&ran.outcomes, "evil-refused");
        let subset = &kill["subset_runs"][0];
        let log = fx.read(&format!(
            "out-j{jobs}/{}",
            subset["log_file"].as_str().unwrap()
        ));
        assert!(log.contains("--coverage=false"), "{log}");
        // The full suite ran with the gate: a mutant that ran it prints
        // jest's coverage summary.
        let survivor = mutant(&ran.outcomes, "equivalent");
        assert_eq!(survivor["full_suite"], true, "{survivor:#}");
        let log = fx.read(&format!(
            "out-j{jobs}/{}",
            survivor["log_file"].as_str().unwrap()
        ));
        assert!(log.contains("Coverage summary"), "{log}");
        assert!(!log.contains("--coverage=false"), "{log}");
    }
}

#[test]
fn coverages_own_fail_under_does_not_touch_pytest_subsets() {
    // coverage's `fail_under` gates `coverage report` (a large public
    // Python MCP SDK runs `coverage run -m pytest`, no pytest-cov). unguard
    // took it for pytest-cov's gate and gave every subset
    // `--cov-fail-under=0`, an option pytest does not know there: "error:
    // unrecognized arguments", exit 4 on the unmutated copy, every subset
    // "not usable". `-p no:pytest_cov` stands for a machine without
    // pytest-cov, whatever this one has.
    let pyproject = "[tool.pytest.ini_options]\nfilterwarnings = [\"error\"]\n\n[tool.coverage.report]\nfail_under = 100\n";
    let spec = SpecBuilder::new("python3 -m pytest -q -p no:cacheprovider -p no:pytest_cov tests")
        .timeout("120s");
    let fx = fixture("app.py", spec, &[("pyproject.toml", pyproject)]);
    for ran in both(&fx, "coverage's fail_under without pytest-cov", true) {
        assert!(!ran.err.contains("unrecognized arguments"), "{}", ran.err);
    }
}
