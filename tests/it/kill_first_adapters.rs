//! Kill-first runner adapters for JavaScript runners (issue 17): `node
//! --test` with its JUnit reporter and `vitest run` with its own. A
//! fixture server's expected killer runs alone through the runner's name
//! filter and decides the verdict; a survivor runs the full suite; the
//! verdicts are those of `--full`, at `-j 1` and `-j 2`.
//!
//! Needs `node` (and, for vitest, the npm registry: vitest is installed
//! into the fixture). Without them the tests say so and pass, except under
//! `CI`, where they fail.

use crate::common::*;

use std::collections::BTreeMap;
use std::process::Command;

/// Skip (or, under `CI`, fail) with `why`.
pub(crate) fn skip(why: &str) -> bool {
    skip::missing(why);
    false
}

/// Whether `tool --version` runs here.
pub(crate) fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    ok || skip(&format!("{tool} is not installed"))
}

/// Whether `node` runs here.
fn have_node() -> bool {
    have("node")
}

/// A host and origin guard, as an MCP server's HTTP layer has.
pub(crate) const GUARD_JS: &str = r#"'use strict';
const ALLOWED_HOSTS = ['127.0.0.1', 'localhost'];

function hostAllowed(host) {
  const name = host.split(':')[0].toLowerCase();
  return ALLOWED_HOSTS.includes(name);
}

function originAllowed(origin) {
  if (!origin) return true;
  return origin.startsWith('http://127.0.0.1');
}

module.exports = { hostAllowed, originAllowed };
"#;

/// The mutations: one with an expected killer, one no test catches.
const MUTATIONS: &str = r#"
mutations:
  - id: host-check
    control: "A foreign Host header is refused"
    file: src/guard.js
    find: "return ALLOWED_HOSTS.includes(name);"
    replace: "return true;"
    expect:
      killed_by: ["KILLER"]
  - id: origin-check
    control: "A foreign Origin is refused"
    file: src/guard.js
    find: "return origin.startsWith('http://127.0.0.1');"
    replace: "return true;"
"#;

/// The spec: `command` (a YAML scalar), JUnit at `{junit}`, the host
/// mutant's expected killer `killer`.
fn spec(command: &str, killer: &str) -> String {
    format!(
        "version: 1\ntest:\n  command: {command}\n  junit: \"{{junit}}\"\n  timeout: 60s\n{}",
        MUTATIONS.replace("KILLER", killer)
    )
}

/// Run `fx` at -j 1 and -j 2 and with `--full`: the verdicts agree and are
/// `host-check` killed, `origin-check` survived. Returns the -j 1 outcomes.
fn run_three_ways(fx: &Fixture) -> serde_json::Value {
    let (code, out, err) = fx.run(&["run", "--out", "out1", "-j", "1"]);
    let expected: BTreeMap<String, String> =
        [("host-check", "killed"), ("origin-check", "survived")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
    assert_eq!(fx.verdicts("out1"), expected, "{}", ctx(code, &out, &err));
    let (code, out, err) = fx.run(&["run", "--out", "out2", "-j", "2"]);
    assert_eq!(fx.verdicts("out2"), expected, "{}", ctx(code, &out, &err));
    let (code, out, err) = fx.run(&["run", "--out", "full", "-j", "1", "--full"]);
    assert_eq!(fx.verdicts("full"), expected, "{}", ctx(code, &out, &err));
    fx.outcomes("out1")
}

/// The killed mutant's first subset: its expected killer alone, killed,
/// final; the log names the selecting command. The survivor ran the full
/// suite.
pub(crate) fn assert_killer_alone(fx: &Fixture, o: &serde_json::Value, killer: &str, in_log: &str) {
    let host = mutant(o, "host-check");
    let first = &host["subset_runs"][0];
    assert_eq!(
        (
            first["stage"].as_str(),
            first["result"].as_str(),
            first["tests"].clone()
        ),
        (
            Some("expected-killers"),
            Some("killed"),
            serde_json::json!([killer])
        ),
        "{host}"
    );
    assert_eq!(host["full_suite"], false, "{host}");
    assert_eq!(host["red_tests"], serde_json::json!([killer]), "{host}");
    let log = fx.read(&format!("out1/{}", first["log_file"].as_str().unwrap()));
    assert!(log.contains(in_log), "{log}");
    assert_eq!(mutant(o, "origin-check")["full_suite"], true, "{o}");
}

const NODE_TESTS: &str = r#"'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { hostAllowed, originAllowed } = require('../src/guard.js');

test.describe('host allow-list', () => {
  test.it('refuses a foreign host', () => {
    assert.strictEqual(hostAllowed('evil.example:80'), false);
  });
  test.it('serves localhost', () => {
    assert.strictEqual(hostAllowed('localhost:3000'), true);
  });
});

test('serves a local origin', () => {
  assert.strictEqual(originAllowed('http://127.0.0.1:3000'), true);
});
"#;

#[test]
fn node_test_runs_the_expected_killer_alone_by_name_pattern() {
    if !have_node() {
        return;
    }
    let command = "\"node --test --test-reporter=junit --test-reporter-destination={junit} test/\"";
    let killer = "test::refuses a foreign host";
    let fx = Fixture::git(&[
        ("src/guard.js", GUARD_JS),
        ("test/guard.test.js", NODE_TESTS),
        ("unguard.yaml", &spec(command, killer)),
    ]);
    let o = run_three_ways(&fx);
    assert_killer_alone(
        &fx,
        &o,
        killer,
        "$ node --test '--test-name-pattern=^(refuses a foreign host)$' --test-reporter=junit",
    );
}

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
"#;

#[test]
fn vitest_runs_the_expected_killer_alone_by_file_and_full_name() {
    if !have_node() {
        return;
    }
    let command = "\"node_modules/.bin/vitest run --reporter=junit --outputFile={junit}\"";
    let killer = "test/guard.test.js::host allow-list > refuses a foreign host";
    let fx = Fixture::git(&[
        ("package.json", "{\"name\": \"fx\", \"private\": true}\n"),
        (".gitignore", "node_modules/\n"),
        ("src/guard.js", GUARD_JS),
        ("test/guard.test.js", VITEST_TESTS),
        ("unguard.yaml", &spec(command, killer)),
    ]);
    if !crate::common::node_tools::link_into(fx.path()) {
        return;
    }
    let o = run_three_ways(&fx);
    assert_killer_alone(
        &fx,
        &o,
        killer,
        "test/guard.test.js -t '^(host allow\\-list refuses a foreign host)$'",
    );
}
