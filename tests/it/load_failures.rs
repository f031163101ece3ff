//! A test module that fails to load is not a failing test, whatever runner
//! reports it (issue 33 items 4 and 5): `python -m unittest` (its
//! `unittest.loader._FailedTest`), the demo's unittest runner with its
//! JUnit report, and `node --test`'s JUnit reporter (a file that failed as
//! a whole). Red test ids are relative to the target, never a scratch
//! path; a kill only a summary line counted shows that count (item 10).

use crate::common::*;
use crate::kill_first_adapters::have;

const GUARD_PY: &str = "import hmac\n\n\ndef host_ok(host):\n    return host != \"evil\"\n\n\ndef same(a, b):\n    return hmac.compare_digest(a, b)\n";

const TEST_GUARD_PY: &str = "import unittest\n\nimport guard\n\n\nclass GuardTests(unittest.TestCase):\n    def test_evil_host_refused(self):\n        self.assertFalse(guard.host_ok(\"evil\"))\n\n    def test_good_host_accepted(self):\n        self.assertTrue(guard.host_ok(\"good\"))\n\n    def test_same(self):\n        self.assertTrue(guard.same(\"a\", \"a\"))\n";

/// The import mutant (its module fails to import: no test runs) and a real
/// loosening (one test fails).
fn guard_mutations() -> [Mutation; 2] {
    [
        mutation("import-broken", "guard.py", "import hmac", "import hmacx"),
        mutation(
            "host-check",
            "guard.py",
            "return host != \"evil\"",
            "return True",
        ),
    ]
}

fn unittest_fixture(test: SpecBuilder, extra: &[(&str, &str)]) -> Fixture {
    let spec = test.timeout("60s").mutations(guard_mutations()).build();
    let mut files = vec![
        ("guard.py", GUARD_PY),
        ("tests/__init__.py", ""),
        ("tests/test_guard.py", TEST_GUARD_PY),
        ("unguard.yaml", spec.as_str()),
    ];
    files.extend_from_slice(extra);
    Fixture::git(&files)
}

fn detail<'a>(o: &'a serde_json::Value, id: &str) -> &'a str {
    mutant(o, id)["detail"].as_str().unwrap_or_default()
}

#[test]
fn python_m_unittest_a_module_that_fails_to_import_is_wrong_reason() {
    for preset in [None, Some("generic")] {
        let mut spec = SpecBuilder::new("python3 -m unittest");
        if let Some(p) = preset {
            spec = spec.preset(p);
        }
        let fx = unittest_fixture(spec, &[]);
        let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
        let what = format!("preset {preset:?}: {}", ctx(code, &out, &err));
        let v = fx.verdicts("out");
        assert_eq!(v["import-broken"], "wrong-reason", "{what}");
        assert_eq!(v["host-check"], "killed", "{what}");
        let o = fx.outcomes("out");
        assert_eq!(reason(&o, "import-broken"), "load-error", "{what}");
        assert_eq!(reason(&o, "host-check"), "tests-failed", "{what}");
        // The detail names the runner and the line that showed it.
        let why = detail(&o, "import-broken");
        assert!(
            why.contains("unittest could not load or collect")
                && why.contains("unittest.loader._FailedTest"),
            "{why}"
        );
    }
}

/// A kill that only the runner's summary line counted (unittest's, as
/// jest's `28 of 1218 tests failed`) never shows `0/N` red tests.
#[test]
fn a_kill_read_from_a_summary_line_shows_the_count_it_gave() {
    let spec = SpecBuilder::new("python3 -m unittest")
        .timeout("60s")
        .mutation(guard_mutations()[1].clone());
    let fx = Fixture::git(&[
        ("guard.py", GUARD_PY),
        ("tests/__init__.py", ""),
        ("tests/test_guard.py", TEST_GUARD_PY),
        ("unguard.yaml", &spec.build()),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(
        fx.verdicts("out")["host-check"],
        "killed",
        "{}",
        ctx(code, &out, &err)
    );
    let o = fx.outcomes("out");
    let killed = mutant(&o, "host-check");
    assert_eq!(reason(&o, "host-check"), "tests-failed");
    assert_eq!(killed["red_counted"], 1, "{killed}");
    assert_eq!(killed["tests_total"], 3, "{killed}");
    let md = std::fs::read_to_string(fx.path().join("out/report.md")).unwrap();
    assert!(md.contains("1/3 (summary)"), "{md}");
    assert!(!md.contains("0/3"), "{md}");
}

#[test]
fn the_demo_runner_reports_an_import_failure_that_is_not_a_kill() {
    let runner = std::fs::read_to_string(
        packaging::repo_root().join("examples/demo-server/tests/run_tests.py"),
    )
    .unwrap();
    let spec = SpecBuilder::new("python3 tests/run_tests.py --junit {junit}")
        .junit("{junit}")
        .test_key("fail_codes", "[1]");
    let fx = unittest_fixture(spec, &[("tests/run_tests.py", runner.as_str())]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let v = fx.verdicts("out");
    assert_eq!(
        v["import-broken"],
        "wrong-reason",
        "{}",
        ctx(code, &out, &err)
    );
    assert_eq!(v["host-check"], "killed", "{}", ctx(code, &out, &err));
    let o = fx.outcomes("out");
    assert_eq!(reason(&o, "import-broken"), "load-error");
    assert_eq!(
        mutant(&o, "host-check")["red_tests"],
        serde_json::json!(["tests.test_guard.GuardTests::test_evil_host_refused"])
    );
}

const GUARD_JS: &str = "'use strict';\nexports.hostOk = (host) => host !== 'evil';\nexports.same = (a, b) => a === b;\n";

const GUARD_TEST_JS: &str = "const { test } = require('node:test');\nconst assert = require('node:assert');\nconst guard = require('../guard.js');\ntest('evil host refused', () => assert.ok(!guard.hostOk('evil')));\ntest('good host accepted', () => assert.ok(guard.hostOk('good')));\ntest('same', () => assert.ok(guard.same('a', 'a')));\n";

#[test]
fn node_test_a_file_that_fails_to_load_is_wrong_reason_with_a_relative_id() {
    if !have("node") {
        return;
    }
    let spec = SpecBuilder::new(
        "node --test --test-reporter=junit --test-reporter-destination={junit} test/",
    )
    .junit("{junit}")
    .timeout("60s")
    .mutations([
        mutation(
            "load-broken",
            "guard.js",
            "exports.same = (a, b) => a === b;",
            "exports.same = (a, b) => a === b; syntax error",
        ),
        mutation("host-check", "guard.js", "host !== 'evil'", "true"),
    ])
    .build();
    let fx = Fixture::git(&[
        ("guard.js", GUARD_JS),
        ("test/guard.test.js", GUARD_TEST_JS),
        ("unguard.yaml", &spec),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let v = fx.verdicts("out");
    assert_eq!(
        v["load-broken"],
        "wrong-reason",
        "{}",
        ctx(code, &out, &err)
    );
    assert_eq!(v["host-check"], "killed", "{}", ctx(code, &out, &err));
    let o = fx.outcomes("out");
    let broken = mutant(&o, "load-broken");
    assert_eq!(
        broken["red_tests"],
        serde_json::json!(["test/guard.test.js"]),
        "{broken}"
    );
    assert_eq!(reason(&o, "load-broken"), "load-error");
    assert!(
        detail(&o, "load-broken").contains("(test/guard.test.js)"),
        "the detail names the file: {}",
        detail(&o, "load-broken")
    );
    // No scratch path anywhere in what the run wrote.
    for f in ["outcomes.json", "report.md"] {
        let text = std::fs::read_to_string(fx.path().join("out").join(f)).unwrap();
        assert!(!text.contains("unguard-w0-"), "{f}: {text}");
    }
}
