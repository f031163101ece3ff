//! Package scripts seen through (issue 52): a test command `npm test` /
//! `npm run X` whose script is one vitest or jest invocation, with no
//! JUnit reporter of the user's, gets unguard's own report beside the
//! user's reporters and kill-first through the script (the script's
//! variables and working directory as npm gives them); its verdicts are
//! those of `--full`. A script that is not one runner invocation runs
//! whole, with the same verdicts.
//!
//! Needs `node`, npm and the pinned node tools (jest, vitest).

use crate::common::*;
use crate::kill_first_adapters::{have, GUARD_JS};

use std::collections::BTreeMap;

/// The mutations: one a test kills, one no test catches.
const MUTATIONS: &str = r#"
mutations:
  - id: host-check
    control: "A foreign Host header is refused"
    file: src/guard.js
    find: "return ALLOWED_HOSTS.includes(name);"
    replace: "return true;"
  - id: origin-check
    control: "A foreign Origin is refused"
    file: src/guard.js
    find: "return origin.startsWith('http://127.0.0.1');"
    replace: "return true;"
"#;

/// vitest tests that also check the script's variable reached them (a
/// suite run without the script's `NODE_ENV=test` is red).
const VITEST_TESTS: &str = r#"import { describe, it, expect, test } from 'vitest';
import guard from '../src/guard.js';

describe('host allow-list', () => {
  it('refuses a foreign host', () => {
    expect(guard.hostAllowed('evil.example:80')).toBe(false);
  });
  it('serves localhost', () => {
    expect(guard.hostAllowed('localhost:3000')).toBe(true);
  });
});

test('serves a local origin', () => {
  expect(guard.originAllowed('http://127.0.0.1:3000')).toBe(true);
});

test('runs under the script variable', () => {
  expect(process.env.NODE_ENV).toBe('test');
  expect(process.env.npm_lifecycle_event).toBe('test');
});
"#;

/// jest tests, the same checks.
const JEST_TESTS: &str = r#"const { hostAllowed, originAllowed } = require('../src/guard.js');

describe('host allow-list', () => {
  it('refuses a foreign host', () => {
    expect(hostAllowed('evil.example:80')).toBe(false);
  });
  it('serves localhost', () => {
    expect(hostAllowed('localhost:3000')).toBe(true);
  });
});

test('serves a local origin', () => {
  expect(originAllowed('http://127.0.0.1:3000')).toBe(true);
});

test('runs under the script variable', () => {
  expect(process.env.GUARD_MODE).toBe('strict');
});
"#;

/// A test file of another module, which no mutant's line runs (so the
/// tests that cover the guard are a subset of the suite).
const OTHER_VITEST: &str =
    "import { test, expect } from 'vitest';\ntest('adds', () => { expect(1 + 1).toBe(2); });\n";
const OTHER_JEST: &str = "test('adds', () => { expect(1 + 1).toBe(2); });\n";

/// A fixture with `scripts` in its package.json, the test files `tests`,
/// and the spec's command `command` (no `test.junit`: `expect.killed_by`
/// needs one); `None` when the node tools are missing (skipped).
fn fixture(scripts: &str, tests: [(&str, &str); 2], command: &str) -> Option<Fixture> {
    if !have("node") || !have("npm") {
        return None;
    }
    let spec = format!(
        "version: 1\ntest:\n  command: {command:?}\n  timeout: 60s\n{}",
        MUTATIONS
    );
    let fx = Fixture::git(&[
        (
            "package.json",
            &format!("{{\"name\": \"fx\", \"private\": true, \"scripts\": {scripts}}}\n"),
        ),
        (".gitignore", "node_modules/\n"),
        ("src/guard.js", GUARD_JS),
        tests[0],
        tests[1],
        ("unguard.yaml", &spec),
    ]);
    crate::common::node_tools::link_into(fx.path()).then_some(fx)
}

/// Run `fx` at -j 1, -j 2 and with `--full`: the verdicts agree (host-check
/// killed, origin-check survived). Returns the -j 1 outcomes.
fn run_three_ways(fx: &Fixture) -> serde_json::Value {
    let expected: BTreeMap<String, String> =
        [("host-check", "killed"), ("origin-check", "survived")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
    for (dir, extra) in [("out1", "1"), ("out2", "2")] {
        let (code, out, err) = fx.run(&["run", "--out", dir, "-j", extra]);
        assert_eq!(fx.verdicts(dir), expected, "{}", ctx(code, &out, &err));
    }
    let (code, out, err) = fx.run(&["run", "--out", "full", "-j", "1", "--full"]);
    assert_eq!(fx.verdicts("full"), expected, "{}", ctx(code, &out, &err));
    fx.outcomes("out1")
}

/// The killed mutant was killed by a subset run through the script (its
/// log shows `in_log`), its red test `killer` alone; the survivor ran the
/// full suite after its subset passed.
fn assert_killed_by_a_subset(fx: &Fixture, o: &serde_json::Value, killer: &str, in_log: &str) {
    let host = mutant(o, "host-check");
    assert_eq!(host["full_suite"], false, "{host}");
    assert_eq!(host["red_tests"], serde_json::json!([killer]), "{host}");
    let runs = host["subset_runs"].as_array().expect("subset runs");
    let last = runs.last().expect("a subset run");
    assert_eq!(last["result"], "killed", "{host}");
    let log = fx.read(&format!("out1/{}", last["log_file"].as_str().unwrap()));
    assert!(log.contains(in_log), "{log}");
    assert_eq!(mutant(o, "origin-check")["full_suite"], true, "{o}");
}

/// The baseline counted the suite's tests from unguard's report, and its
/// log still shows the runner's own output (its default reporter).
fn assert_counted_with_the_users_output(fx: &Fixture, o: &serde_json::Value, output: &str) {
    let b = &o["baselines"][0];
    assert_eq!(b["tests_total"], 5, "{b}");
    let log = plain(&fx.read(&format!("out1/{}", b["log_file"].as_str().unwrap())));
    assert!(log.contains(output), "{log}");
}

/// `text` without ANSI colour sequences (vitest colours its output when
/// `CI` is set, as on a CI runner).
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn vitest_behind_npm_test_runs_the_killer_alone_through_the_script() {
    let killer = "test/guard.test.js::host allow-list > refuses a foreign host";
    let Some(fx) = fixture(
        r#"{"test": "NODE_ENV=test vitest run"}"#,
        [
            ("test/guard.test.js", VITEST_TESTS),
            ("test/other.test.js", OTHER_VITEST),
        ],
        "npm test",
    ) else {
        return;
    };
    let o = run_three_ways(&fx);
    assert_killed_by_a_subset(&fx, &o, killer, "exec vitest run test/guard.test.js -t '^(");
    assert_counted_with_the_users_output(&fx, &o, "Tests  5 passed");
    // The report is unguard's, outside the copy: nothing was put back.
    assert_eq!(mutant(&o, "origin-check")["reset_paths"], 0, "{o}");
}

#[test]
fn jest_behind_a_named_npm_script_gets_unguards_reporter_and_selects_through_the_script() {
    let killer = "test/guard.test.js::host allow-list refuses a foreign host";
    let Some(fx) = fixture(
        r#"{"unit": "GUARD_MODE=strict jest --ci"}"#,
        [
            ("test/guard.test.js", JEST_TESTS),
            ("test/other.test.js", OTHER_JEST),
        ],
        "npm run unit",
    ) else {
        return;
    };
    let o = run_three_ways(&fx);
    // jest runs these two files in one process: V8's coverage credits
    // every test with the guard, so the mutants run the whole suite; the
    // canary's red test was selected alone through the script (the subset
    // check: green, that one test ran).
    let check = &o["subset_checks"][0];
    assert_eq!(
        (&check["green"], &check["tests"]),
        (&serde_json::json!(true), &serde_json::json!([killer])),
        "{o}"
    );
    let log = fx.read(&format!("out1/{}", check["log_file"].as_str().unwrap()));
    assert!(
        log.contains("GUARD_MODE=strict exec jest --ci '--testNamePattern=^(host allow\\-list refuses a foreign host)$' --coverage=false --reporters=default --reporters="),
        "{log}"
    );
    assert_eq!(
        mutant(&o, "host-check")["red_tests"],
        serde_json::json!([killer]),
        "{o}"
    );
    assert_counted_with_the_users_output(&fx, &o, "Tests:       5 passed, 5 total");
}

#[test]
fn a_script_that_is_not_one_runner_invocation_runs_whole_with_the_same_verdicts() {
    let Some(fx) = fixture(
        r#"{"test": "NODE_ENV=test vitest run && node -e 0"}"#,
        [
            ("test/guard.test.js", VITEST_TESTS),
            ("test/other.test.js", OTHER_VITEST),
        ],
        "npm test",
    ) else {
        return;
    };
    let (code, out, err) = fx.run(&["run", "--out", "out1", "-j", "1"]);
    let v = fx.verdicts("out1");
    assert_eq!(
        (v["host-check"].as_str(), v["origin-check"].as_str()),
        ("killed", "survived"),
        "{}",
        ctx(code, &out, &err)
    );
    let o = fx.outcomes("out1");
    for id in ["host-check", "origin-check"] {
        assert_eq!(mutant(&o, id)["full_suite"], true, "{o}");
        assert!(
            mutant(&o, id)["subset_runs"]
                .as_array()
                .is_none_or(|a| a.is_empty()),
            "{o}"
        );
    }
}

/// A runner that refuses unguard's reporter options (an older vitest, say):
/// the baseline with them is red, the same command without them green, so
/// they are dropped from every run of it (said, and in `outcomes.json`),
/// and the verdicts come from the exit code as for any other command.
#[test]
fn a_runner_that_refuses_unguards_reporter_runs_bare_with_the_same_verdicts() {
    if !have("npm") {
        return;
    }
    // `vitest` here is a shell script: it runs the guard's check with node
    // and exits 2 on a `--reporter` option it does not know.
    let vitest = "#!/bin/sh\ncase \"$*\" in *--reporter*) echo \"unknown option --reporter\" >&2; exit 2;; esac\nexec node test/check.js\n";
    let check = "const g = require('../src/guard.js');\nif (g.hostAllowed('evil.example:80')) { console.error('host check failed'); process.exit(1); }\nconsole.log(' Tests  1 passed (1)');\n";
    let fx = Fixture::git(&[
        (
            "package.json",
            "{\"name\": \"fx\", \"private\": true, \"scripts\": {\"test\": \"vitest run\"}}\n",
        ),
        (".gitignore", "node_modules/\n"),
        ("src/guard.js", GUARD_JS),
        ("test/check.js", check),
        (
            "unguard.yaml",
            &format!("version: 1\ntest:\n  command: \"npm test\"\n  timeout: 60s\n{MUTATIONS}"),
        ),
    ]);
    let bin = fx.path().join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("vitest"), vitest).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("vitest"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, out, err) = fx.run(&["run", "--out", "out1", "-j", "1"]);
    let v = fx.verdicts("out1");
    assert_eq!(
        (v["host-check"].as_str(), v["origin-check"].as_str()),
        ("killed", "survived"),
        "{}",
        ctx(code, &out, &err)
    );
    assert!(
        err.contains("is red with vitest --reporter=junit") && err.contains("green without it"),
        "{err}"
    );
    let o = fx.outcomes("out1");
    let dropped = o["baselines"][0]["dropped"].to_string();
    assert!(dropped.contains("vitest --reporter=junit"), "{o}");
}

/// A script with a `pretest` runs through npm (which runs `pretest` before
/// it every time); unguard's arguments are passed on after `--`.
#[test]
fn a_script_with_a_pre_script_runs_through_npm_with_the_arguments_passed_on() {
    let killer = "test/guard.test.js::host allow-list > refuses a foreign host";
    let Some(fx) = fixture(
        r#"{"pretest": "node -e 0", "test": "NODE_ENV=test vitest run"}"#,
        [
            ("test/guard.test.js", VITEST_TESTS),
            ("test/other.test.js", OTHER_VITEST),
        ],
        "npm test",
    ) else {
        return;
    };
    let o = run_three_ways(&fx);
    assert_killed_by_a_subset(&fx, &o, killer, "$ npm test -- test/guard.test.js -t '^(");
}
