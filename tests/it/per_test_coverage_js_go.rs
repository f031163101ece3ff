//! Per-test coverage for JavaScript (V8's coverage, per test file) and Go
//! (`go test -coverprofile`, per package): a mutant whose changed lines
//! the coverage run saw executed runs the tests of the test files (or
//! packages) that executed them first (stage `covering`); a line no test
//! executes is `no-coverage`; every other verdict is `--full`'s. A file
//! transformed before it ran (TypeScript) is never `no-coverage`, and a Go
//! test that starts processes leaves the map unused.
//!
//! Needs `node` and `go` (Debian's golang-go); without them the tests say
//! so and pass, except under `CI`, where they fail.

use crate::common::*;

use std::collections::BTreeMap;

use super::kill_first_adapters::have;

fn verdicts(rows: &[(&str, &str)]) -> BTreeMap<String, String> {
    rows.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// `rows` of (id, file, find, replace) as a spec's mutations.
fn mutations(rows: &[(&str, &str, &str, &str)]) -> String {
    let mut s = String::from("mutations:\n");
    for (id, file, find, replace) in rows {
        s.push_str(&format!(
            "  - id: {id}\n    control: \"c\"\n    file: {file}\n    find: {find:?}\n    replace: {replace:?}\n"
        ));
    }
    s
}

const NODE: &str = "node --test --test-reporter=junit --test-reporter-destination={junit} test/";

const GUARD_JS: &str = r#"'use strict';
const ALLOWED = ['127.0.0.1', 'localhost'];

function hostAllowed(host) {
  const name = host.split(':')[0].toLowerCase();
  return ALLOWED.includes(name);
}

function adminOnly(user) {
  if (user !== 'admin') {
    throw new Error('refused');
  }
  return 'ok';
}

module.exports = { hostAllowed, adminOnly };
"#;

/// A server a test starts over stdio, as an MCP client does: with an
/// environment of a few variables of its own.
const SERVER_JS: &str = r#"'use strict';
const args = process.argv.slice(2);
if (args[0] === '--admin') {
  process.stdout.write('refused\n');
  process.exitCode = 3;
}
"#;

const HOST_TEST: &str = r#"'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { hostAllowed } = require('../src/guard.js');

test('refuses a foreign host', () => {
  assert.strictEqual(hostAllowed('evil.example:80'), false);
});

test('serves localhost', () => {
  assert.strictEqual(hostAllowed('localhost:3000'), true);
});
"#;

const STDIO_TEST: &str = r#"'use strict';
const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { spawn } = require('node:child_process');

test('admin is refused over stdio', async () => {
  const server = path.join(__dirname, '..', 'src', 'server.js');
  const child = spawn(process.execPath, [server, '--admin'], {
    env: { PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.strictEqual(code, 3);
});
"#;

const OTHER_TEST: &str = r#"'use strict';
const test = require('node:test');
const assert = require('node:assert');

test('adds', () => {
  assert.strictEqual(1 + 1, 2);
});
"#;

fn node_fixture() -> Fixture {
    let spec = format!(
        "version: 1\ntest:\n  command: \"{NODE}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\n{}",
        mutations(&[
            (
                "host",
                "src/guard.js",
                "return ALLOWED.includes(name);",
                "return true;"
            ),
            (
                "admin",
                "src/guard.js",
                "if (user !== 'admin') {",
                "if (false) {"
            ),
            (
                "stdio",
                "src/server.js",
                "if (args[0] === '--admin') {",
                "if (false) {"
            ),
        ])
    );
    Fixture::git(&[
        ("src/guard.js", GUARD_JS),
        ("src/server.js", SERVER_JS),
        ("test/host.test.js", HOST_TEST),
        ("test/stdio.test.js", STDIO_TEST),
        ("test/other.test.js", OTHER_TEST),
        ("unguard.yaml", &spec),
    ])
}

#[test]
fn node_test_lines_map_to_the_tests_of_the_files_whose_process_ran_them() {
    if !have("node") {
        return;
    }
    let fx = node_fixture();
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    let o = fx.outcomes("out");
    let cov = &o["baselines"][0]["coverage"];
    assert_eq!(cov["used"], true, "{cov:#}: {said}");
    assert_eq!(cov["collector"], "V8 coverage (NODE_V8_COVERAGE)");
    assert_eq!(cov["tests"], 4, "{cov:#}");

    let host = mutant(&o, "host");
    assert_eq!(host["outcome"], "killed", "{host:#}: {said}");
    assert_eq!(host["full_suite"], false, "{host:#}");
    assert_eq!(host["subset_runs"][0]["stage"], "covering", "{host:#}");
    assert_eq!(
        host["subset_runs"][0]["tests"],
        serde_json::json!(["test::refuses a foreign host", "test::serves localhost"])
    );

    // The server's line ran only in the process the test started with an
    // environment of its own: covered by that test, killed.
    let stdio = mutant(&o, "stdio");
    assert_eq!(stdio["outcome"], "killed", "{stdio:#}: {said}");
    assert_eq!(stdio["subset_runs"][0]["stage"], "covering", "{stdio:#}");
    assert_eq!(
        stdio["subset_runs"][0]["tests"],
        serde_json::json!(["test::admin is refused over stdio"])
    );

    let admin = mutant(&o, "admin");
    assert_eq!(admin["outcome"], "no-coverage", "{admin:#}: {said}");
    assert!(
        admin["detail"]
            .as_str()
            .unwrap()
            .contains("line 10 of src/guard.js"),
        "{admin:#}"
    );
    assert_eq!(admin["subset_runs"], serde_json::json!([]));

    let (_, _, _) = fx.run(&["run", "--out", "full", "-j", "1", "--full"]);
    assert_eq!(
        fx.verdicts("full"),
        verdicts(&[
            ("host", "killed"),
            ("admin", "survived"),
            ("stdio", "killed")
        ])
    );
}

/// A process killed by `SIGKILL` writes no coverage: what it ran is
/// unknown, so the map is not used and the run says why.
#[test]
fn a_node_process_that_never_exits_leaves_the_map_unused() {
    if !have("node") {
        return;
    }
    let fx = node_fixture();
    fx.write(
        "test/stdio.test.js",
        &STDIO_TEST
            .replace("'--admin'], {", "'--admin', '--hang'], {")
            .replace(
                "const code = await",
                "setTimeout(() => child.kill('SIGKILL'), 300);\n  const code = await",
            )
            .replace(
                "assert.strictEqual(code, 3);",
                "assert.strictEqual(code, null);",
            ),
    );
    fx.write(
        "src/server.js",
        &format!("{SERVER_JS}if (args[1] === '--hang') setInterval(() => {{}}, 1000);\n"),
    );
    fx.git_cmd(&["add", "-A"]);
    fx.commit("a server killed");
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    let cov = &fx.outcomes("out")["baselines"][0]["coverage"];
    assert_eq!(cov["used"], false, "{cov:#}: {said}");
    assert!(
        cov["not_used"].as_str().unwrap().contains("did not exit"),
        "{cov:#}"
    );
    assert_eq!(fx.verdicts("out")["admin"], "survived", "{said}");
}

/// A server stopped by `SIGTERM` (as an MCP client closes a stdio
/// server) still writes its coverage: the map is used, and its line is
/// covered by the test that started it.
#[test]
fn a_node_process_stopped_by_sigterm_is_measured() {
    if !have("node") {
        return;
    }
    let fx = node_fixture();
    fx.write(
        "test/stdio.test.js",
        &STDIO_TEST
            .replace("'--admin'], {", "'--admin', '--hang'], {")
            .replace("    env: { PATH: process.env.PATH },\n", "")
            .replace(
                "const code = await",
                "let said = '';\n  child.stdout.on('data', (d) => { said += d; });\n  setTimeout(() => child.kill('SIGTERM'), 500);\n  const code = await",
            )
            .replace(
                "const code = await new Promise((resolve) => child.on('close', resolve));",
                "const code = await new Promise((resolve) => child.on('close', (c, sig) => resolve(sig)));",
            )
            .replace(
                "assert.strictEqual(code, 3);",
                "assert.strictEqual(code, 'SIGTERM');\n  assert.strictEqual(said, 'refused\\n');",
            ),
    );
    fx.write(
        "src/server.js",
        &format!("{SERVER_JS}if (args[1] === '--hang') setInterval(() => {{}}, 1000);\n"),
    );
    fx.git_cmd(&["add", "-A"]);
    fx.commit("a server stopped by SIGTERM");
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    let o = fx.outcomes("out");
    assert_eq!(o["baselines"][0]["coverage"]["used"], true, "{said}");
    let stdio = mutant(&o, "stdio");
    assert_eq!(stdio["outcome"], "killed", "{stdio:#}: {said}");
    assert_eq!(stdio["subset_runs"][0]["stage"], "covering", "{stdio:#}");
    assert_eq!(mutant(&o, "admin")["outcome"], "no-coverage", "{said}");
}

/// A file transformed before it ran (TypeScript, compiled by a require
/// hook here: no package is installed) is measured as a whole: a function
/// no test calls in it is never `no-coverage`.
#[test]
fn a_transformed_file_is_never_no_coverage() {
    if !have("node") {
        return;
    }
    let hook = r#"'use strict';
// A tiny TypeScript loader: drops `: type` annotations.
require.extensions['.ts'] = function (module, filename) {
  const source = require('fs').readFileSync(filename, 'utf8');
  module._compile(source.replace(/: (string|number|boolean)/g, ''), filename);
};
"#;
    let guard_ts = GUARD_JS
        .replace(
            "function hostAllowed(host)",
            "function hostAllowed(host: string)",
        )
        .replace(
            "function adminOnly(user)",
            "function adminOnly(user: string)",
        );
    let spec = format!(
        "version: 1\ntest:\n  command: \"node --require ./test/ts-hook.js --test --test-reporter=junit --test-reporter-destination={{junit}} test/\"\n  junit: \"{{junit}}\"\n  timeout: 60s\n{}",
        mutations(&[
            ("host", "src/guard.ts", "return ALLOWED.includes(name);", "return true;"),
            ("admin", "src/guard.ts", "if (user !== 'admin') {", "if (false) {"),
        ])
    );
    let fx = Fixture::git(&[
        ("src/guard.ts", &guard_ts),
        ("test/ts-hook.js", hook),
        (
            "test/host.test.js",
            &HOST_TEST.replace("../src/guard.js", "../src/guard.ts"),
        ),
        ("test/other.test.js", OTHER_TEST),
        ("unguard.yaml", &spec),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    let o = fx.outcomes("out");
    assert_eq!(o["baselines"][0]["coverage"]["used"], true, "{said}");
    let admin = mutant(&o, "admin");
    assert_eq!(admin["outcome"], "survived", "{admin:#}: {said}");
    // The file's tests are those of the process that ran it.
    assert_eq!(admin["subset_runs"][0]["stage"], "covering", "{admin:#}");
    let host = mutant(&o, "host");
    assert_eq!(host["outcome"], "killed", "{host:#}");
    assert_eq!(host["subset_runs"][0]["stage"], "covering", "{host:#}");
}

const VITEST_TESTS: &str = r#"import { it, expect } from 'vitest';
import { hostAllowed } from '../src/guard.ts';

it('refuses a foreign host', () => {
  expect(hostAllowed('evil.example:80')).toBe(false);
});
"#;

/// vitest transforms every file it runs (TypeScript here): the map is
/// file-level, so a function no test calls is never `no-coverage`, and
/// the verdicts are `--full`'s. Needs vitest from the npm registry.
#[test]
fn vitest_files_are_measured_whole_and_never_no_coverage() {
    if !have("node") {
        return;
    }
    let guard_ts = GUARD_JS
        .replace("'use strict';\n", "")
        .replace(
            "function hostAllowed(host)",
            "export function hostAllowed(host: string)",
        )
        .replace(
            "function adminOnly(user)",
            "export function adminOnly(user: string)",
        )
        .replace("module.exports = { hostAllowed, adminOnly };\n", "");
    let spec = format!(
        "version: 1\ntest:\n  command: \"node_modules/.bin/vitest run --reporter=junit --outputFile={{junit}}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\n{}",
        mutations(&[
            ("host", "src/guard.ts", "return ALLOWED.includes(name);", "return true;"),
            ("admin", "src/guard.ts", "if (user !== 'admin') {", "if (false) {"),
        ])
    );
    let fx = Fixture::git(&[
        ("package.json", "{\"name\": \"fx\", \"private\": true}\n"),
        (".gitignore", "node_modules/\n"),
        ("src/guard.ts", &guard_ts),
        ("test/host.test.ts", VITEST_TESTS),
        ("test/other.test.ts", "import { it, expect } from 'vitest';\n\nit('adds', () => {\n  expect(1 + 1).toBe(2);\n});\n"),
        ("unguard.yaml", &spec),
    ]);
    if !crate::common::node_tools::link_into(fx.path()) {
        return;
    }
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    let o = fx.outcomes("out");
    let cov = &o["baselines"][0]["coverage"];
    assert_eq!(cov["used"], true, "{cov:#}: {said}");
    let admin = mutant(&o, "admin");
    assert_eq!(admin["outcome"], "survived", "{admin:#}: {said}");
    assert_eq!(admin["subset_runs"][0]["stage"], "covering", "{admin:#}");
    assert_eq!(
        admin["subset_runs"][0]["tests"],
        serde_json::json!(["test/host.test.ts::refuses a foreign host"])
    );
    assert_eq!(mutant(&o, "host")["outcome"], "killed", "{said}");
    fx.run(&["run", "--out", "full", "-j", "1", "--full"]);
    assert_eq!(
        fx.verdicts("full"),
        verdicts(&[("host", "killed"), ("admin", "survived")])
    );
}

const GO_MOD: &str = "module example.com/srv\n\ngo 1.19\n";

const GUARD_GO: &str = r#"package guard

import "strings"

// HostAllowed reports whether a Host header names this machine.
func HostAllowed(host string) bool {
	name := strings.Split(host, ":")[0]
	if name == "127.0.0.1" || name == "localhost" {
		return true
	}
	return false
}

// AdminOnly refuses every user but the admin.
func AdminOnly(user string) error {
	if user != "admin" {
		return errRefused
	}
	return nil
}

var errRefused = &refused{}

type refused struct{}

func (*refused) Error() string { return "refused" }
"#;

const GUARD_TEST_GO: &str = r#"package guard

import "testing"

func TestForeignHostIsRefused(t *testing.T) {
	if HostAllowed("evil.example:80") {
		t.Fatal("evil.example was allowed")
	}
}

func TestLocalhostIsServed(t *testing.T) {
	if !HostAllowed("localhost:80") {
		t.Fatal("localhost was refused")
	}
}
"#;

const API_GO: &str = r#"package api

// Size caps a request body.
func Size(n int) int {
	if n > 1024 {
		return 1024
	}
	return n
}
"#;

const API_TEST_GO: &str = r#"package api

import "testing"

func TestSizeIsCapped(t *testing.T) {
	if Size(5000) != 1024 {
		t.Fatal("not capped")
	}
}
"#;

fn go_fixture() -> Fixture {
    let spec = format!(
        "version: 1\ntest:\n  command: \"go test -json ./...\"\n  timeout: 120s\n{}",
        mutations(&[
            (
                "host",
                "guard/guard.go",
                "name == \"127.0.0.1\" || name == \"localhost\"",
                "name != \"\""
            ),
            ("admin", "guard/guard.go", "user != \"admin\"", "false"),
            ("size", "api/api.go", "n > 1024", "n > 8192"),
        ])
    );
    Fixture::git(&[
        ("go.mod", GO_MOD),
        ("guard/guard.go", GUARD_GO),
        ("guard/guard_test.go", GUARD_TEST_GO),
        ("api/api.go", API_GO),
        ("api/api_test.go", API_TEST_GO),
        ("unguard.yaml", &spec),
    ])
}

#[test]
fn go_blocks_map_to_the_tests_of_the_packages_whose_binary_ran_them() {
    if !skip::have_go() {
        return;
    }
    let fx = go_fixture();
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    let o = fx.outcomes("out");
    let cov = &o["baselines"][0]["coverage"];
    assert_eq!(cov["used"], true, "{cov:#}: {said}");
    assert_eq!(cov["collector"], "go test -coverprofile");
    assert_eq!(cov["tests"], 3, "{cov:#}");

    let host = mutant(&o, "host");
    assert_eq!(host["outcome"], "killed", "{host:#}: {said}");
    assert_eq!(host["subset_runs"][0]["stage"], "covering", "{host:#}");
    assert_eq!(
        host["subset_runs"][0]["tests"],
        serde_json::json!([
            "example.com/srv/guard::TestForeignHostIsRefused",
            "example.com/srv/guard::TestLocalhostIsServed"
        ])
    );
    let size = mutant(&o, "size");
    assert_eq!(size["outcome"], "killed", "{size:#}");
    assert_eq!(
        size["subset_runs"][0]["tests"],
        serde_json::json!(["example.com/srv/api::TestSizeIsCapped"])
    );
    let admin = mutant(&o, "admin");
    assert_eq!(admin["outcome"], "no-coverage", "{admin:#}: {said}");
    assert!(
        admin["detail"]
            .as_str()
            .unwrap()
            .contains("line 16 of guard/guard.go"),
        "{admin:#}"
    );

    fx.run(&["run", "--out", "full", "-j", "1", "--full"]);
    assert_eq!(
        fx.verdicts("full"),
        verdicts(&[
            ("host", "killed"),
            ("admin", "survived"),
            ("size", "killed")
        ])
    );
}

/// A test that can start processes: the lines they run are in no profile,
/// so the map is not used (and the uncovered mutant survives, as under
/// `--full`).
#[test]
fn a_go_test_that_imports_os_exec_leaves_the_map_unused() {
    if !skip::have_go() {
        return;
    }
    let fx = go_fixture();
    fx.write(
        "api/exec_test.go",
        "package api\n\nimport (\n\t\"os/exec\"\n\t\"testing\"\n)\n\nfunc TestTrue(t *testing.T) {\n\t_ = exec.Command\n}\n",
    );
    fx.git_cmd(&["add", "-A"]);
    fx.commit("a test that could start processes");
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    let cov = &fx.outcomes("out")["baselines"][0]["coverage"];
    assert_eq!(cov["used"], false, "{cov:#}: {said}");
    assert!(
        cov["not_used"]
            .as_str()
            .unwrap()
            .contains("api/exec_test.go:4 imports os/exec"),
        "{cov:#}"
    );
    assert_eq!(fx.verdicts("out")["admin"], "survived", "{said}");
}
