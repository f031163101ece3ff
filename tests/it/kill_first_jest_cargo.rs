//! Kill-first runner adapters for jest (with `jest-junit`) and `cargo
//! test` (issue 17). A fixture server's expected killer runs alone
//! through the runner's own selection and decides the verdict; a survivor
//! runs the full suite; the verdicts are those of `--full`, at `-j 1` and
//! `-j 2`.
//!
//! jest needs `node` and the npm registry (jest and jest-junit are
//! installed into the fixture); cargo test needs only cargo (the fixture
//! crate has no dependencies and builds offline). Without them the tests
//! say so and pass, except under `CI`, where they fail.

use crate::common::*;
use crate::kill_first_adapters::{assert_killer_alone, have, GUARD_JS};

use std::collections::BTreeMap;

/// The verdicts in `out_dir`, none when the run wrote no `outcomes.json`
/// (a spec it refused).
fn verdicts(fx: &Fixture, out_dir: &str) -> BTreeMap<String, String> {
    if fx.path().join(out_dir).join("outcomes.json").is_file() {
        fx.verdicts(out_dir)
    } else {
        BTreeMap::new()
    }
}

/// Run `fx` at -j 1 and -j 2 and with `--full`: the verdicts agree and are
/// `host-check` killed, `origin-check` survived. Returns the -j 1 outcomes
/// and the `--full` ones.
fn run_three_ways(fx: &Fixture) -> (serde_json::Value, serde_json::Value) {
    let expected: BTreeMap<String, String> =
        [("host-check", "killed"), ("origin-check", "survived")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
    let (code, out, err) = fx.run(&["run", "--out", "out1", "-j", "1"]);
    assert_eq!(verdicts(fx, "out1"), expected, "{}", ctx(code, &out, &err));
    let (code, out, err) = fx.run(&["run", "--out", "out2", "-j", "2"]);
    assert_eq!(verdicts(fx, "out2"), expected, "{}", ctx(code, &out, &err));
    let (code, out, err) = fx.run(&["run", "--out", "full", "-j", "1", "--full"]);
    assert_eq!(verdicts(fx, "full"), expected, "{}", ctx(code, &out, &err));
    (fx.outcomes("out1"), fx.outcomes("full"))
}

/// The mutations: one with an expected killer, one no test catches.
fn mutations(file: &str, host: (&str, &str), origin: (&str, &str), killer: &str) -> String {
    format!(
        r#"mutations:
  - id: host-check
    control: "A foreign Host header is refused"
    file: {file}
    find: {:?}
    replace: {:?}
    expect:
      killed_by: [{killer:?}]
  - id: origin-check
    control: "A foreign Origin is refused"
    file: {file}
    find: {:?}
    replace: {:?}
"#,
        host.0, host.1, origin.0, origin.1
    )
}

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
"#;

/// jest with jest-junit's default templates: a test's id is its full name
/// twice (`{classname} {title}` as classname and as name). The expected
/// killer runs alone through `--testNamePattern`.
#[test]
fn jest_runs_the_expected_killer_alone_by_its_full_name() {
    if !have("node") {
        return;
    }
    let full = "host allow-list refuses a foreign host";
    let killer = format!("{full}::{full}");
    let spec = format!(
        "version: 1\ntest:\n  command: \"JEST_JUNIT_OUTPUT_FILE={{junit}} node_modules/.bin/jest --ci --reporters=default --reporters=jest-junit\"\n  junit: \"{{junit}}\"\n  timeout: 60s\n{}",
        mutations(
            "src/guard.js",
            ("return ALLOWED_HOSTS.includes(name);", "return true;"),
            ("return origin.startsWith('http://127.0.0.1');", "return true;"),
            &killer
        )
    );
    let fx = Fixture::git(&[
        ("package.json", "{\"name\": \"fx\", \"private\": true}\n"),
        (".gitignore", "node_modules/\n"),
        ("src/guard.js", GUARD_JS),
        ("test/guard.test.js", JEST_TESTS),
        ("unguard.yaml", &spec),
    ]);
    if !crate::common::node_tools::link_into(fx.path()) {
        return;
    }
    let (o, _) = run_three_ways(&fx);
    assert_killer_alone(
        &fx,
        &o,
        &killer,
        "--reporters=jest-junit '--testNamePattern=^(host allow\\-list refuses a foreign host)$'",
    );
}

const CARGO_TOML: &str =
    "[package]\nname = \"fx-guard\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

const GUARD_RS: &str = r#"//! A host and origin guard, as an MCP server's HTTP layer has.

pub fn host_allowed(host: &str) -> bool {
    let name = host.split(':').next().unwrap_or("").to_lowercase();
    name == "127.0.0.1" || name == "localhost"
}

pub fn origin_allowed(origin: Option<&str>) -> bool {
    match origin {
        None => true,
        Some(o) => o.starts_with("http://127.0.0.1"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_a_foreign_host() {
        assert!(!host_allowed("evil.example:80"));
    }

    #[test]
    fn serves_localhost() {
        assert!(host_allowed("localhost:3000"));
    }
}
"#;

/// An integration test target with a test of the same libtest name as the
/// expected killer: it kills the host mutant too, but is not selected
/// (the subset runs only the killer's target, `--lib`).
const IT_RS: &str = r#"#[test]
fn serves_a_local_origin() {
    assert!(fx_guard::origin_allowed(Some("http://127.0.0.1:3000")));
}

mod tests {
    #[test]
    fn refuses_a_foreign_host() {
        assert!(!fx_guard::host_allowed("evil.example"));
    }
}
"#;

/// cargo test: per-test results from libtest's lines in the log (no JUnit
/// report); the expected killer runs alone in its own target, by exact name.
#[test]
fn cargo_test_runs_the_expected_killer_alone_in_its_target() {
    if !have("cargo") {
        return;
    }
    let killer = "src/lib.rs::tests::refuses_a_foreign_host";
    // The build goes to `target/` inside each copy (a relative value is
    // left as it is): workers never share a build directory.
    let spec = format!(
        "version: 1\ntest:\n  command: \"cargo test --offline\"\n  timeout: 180s\n  env: {{CARGO_TARGET_DIR: target}}\n{}",
        mutations(
            "src/lib.rs",
            (
                "name == \"127.0.0.1\" || name == \"localhost\"",
                "true"
            ),
            ("o.starts_with(\"http://127.0.0.1\")", "!o.is_empty()"),
            killer
        )
    );
    let fx = Fixture::git(&[
        ("Cargo.toml", CARGO_TOML),
        (".gitignore", "target/\nCargo.lock\n"),
        ("src/lib.rs", GUARD_RS),
        ("tests/it.rs", IT_RS),
        ("unguard.yaml", &spec),
    ]);
    let (o, full) = run_three_ways(&fx);
    assert_killer_alone(
        &fx,
        &o,
        killer,
        "$ cargo test --lib --offline -- --exact tests::refuses_a_foreign_host",
    );
    // The full suite's per-test results come from the log too: the
    // killed_by pattern is matched against them.
    let host = mutant(&full, "host-check");
    assert_eq!(host["full_suite"], true, "{host}");
    assert!(
        host["red_tests"]
            .as_array()
            .is_some_and(|r| r.contains(&serde_json::json!(killer))),
        "{host}"
    );
}

/// cargo test: a mutant that breaks the build fails no test, so its red
/// exit is not a kill (`wrong-reason`); a test whose binary aborts (one
/// test thread: libtest names a test as it starts) is red as an error,
/// and that is the kill.
#[test]
fn cargo_test_build_failure_is_no_kill_and_a_crash_is_red() {
    if !have("cargo") {
        return;
    }
    let spec = "version: 1\ntest:\n  command: \"cargo test --offline -- --test-threads 1\"\n  timeout: 180s\n  env: {CARGO_TARGET_DIR: target}\nmutations:\n  - id: breaks-build\n    control: \"hosts are checked\"\n    file: src/lib.rs\n    find: 'name == \"localhost\"'\n    replace: 'nope == \"localhost\"'\n  - id: aborts\n    control: \"hosts are checked\"\n    file: src/lib.rs\n    find: 'let name = host'\n    replace: 'if host.starts_with(\"evil\") { std::process::abort() } let name = host'\n";
    let fx = Fixture::git(&[
        ("Cargo.toml", CARGO_TOML),
        (".gitignore", "target/\nCargo.lock\n"),
        ("src/lib.rs", GUARD_RS),
        // Without a target that uses the library, the canary's empty
        // src/lib.rs builds, its inline tests are gone, and the suite stays
        // green: `unreached` (see the README's Rust note).
        ("tests/it.rs", IT_RS),
        ("unguard.yaml", spec),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1", "--full"]);
    let expected: BTreeMap<String, String> =
        [("aborts", "killed"), ("breaks-build", "wrong-reason")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
    assert_eq!(verdicts(&fx, "out"), expected, "{}", ctx(code, &out, &err));
    let o = fx.outcomes("out");
    let build = mutant(&o, "breaks-build");
    assert!(
        build["detail"]
            .as_str()
            .is_some_and(|d| d.contains("cargo test's output shows 0 failed")),
        "{build}"
    );
    let aborts = mutant(&o, "aborts");
    assert_eq!(
        aborts["red_tests"],
        serde_json::json!(["src/lib.rs::tests::refuses_a_foreign_host"]),
        "{aborts}"
    );
}

/// A case where a subset verdict differs from a full run: the mutant
/// breaks the build of a target the subset does not build. `cargo test
/// --lib` builds and runs the expected killer, which fails: `killed`. The
/// full suite builds every target first, `tests/it.rs` no longer compiles,
/// no test runs: `wrong-reason` under `--full`. unguard keeps the kill.
#[test]
fn cargo_subset_kills_where_the_full_build_breaks() {
    if !have("cargo") {
        return;
    }
    let killer = "src/lib.rs::tests::refuses_a_foreign_host";
    let spec = format!(
        "version: 1\ntest:\n  command: \"cargo test --offline\"\n  timeout: 180s\n  env: {{CARGO_TARGET_DIR: target}}\nmutations:\n  - id: private-and-open\n    control: \"A foreign Host header is refused\"\n    file: src/lib.rs\n    find: 'pub fn host_allowed(host: &str) -> bool {{'\n    replace: 'pub(crate) fn host_allowed(host: &str) -> bool {{ if host.contains(\"evil\") {{ return true; }}'\n    expect:\n      killed_by: [{killer:?}]\n"
    );
    let fx = Fixture::git(&[
        ("Cargo.toml", CARGO_TOML),
        (".gitignore", "target/\nCargo.lock\n"),
        ("src/lib.rs", GUARD_RS),
        ("tests/it.rs", IT_RS),
        ("unguard.yaml", &spec),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let (fcode, fout, ferr) = fx.run(&["run", "--out", "full", "-j", "1", "--full"]);
    let both = (
        verdicts(&fx, "out").get("private-and-open").cloned(),
        verdicts(&fx, "full").get("private-and-open").cloned(),
    );
    assert_eq!(
        both,
        (Some("killed".into()), Some("wrong-reason".into())),
        "{}\n{}",
        ctx(code, &out, &err),
        ctx(fcode, &fout, &ferr)
    );
    let m = mutant(&fx.outcomes("out"), "private-and-open").clone();
    assert_eq!(
        (m["full_suite"].as_bool(), m["red_tests"].clone()),
        (Some(false), serde_json::json!([killer])),
        "{m}"
    );
}
