//! One line per site: every output shows the first line a mutation changes,
//! not the first line its `find` (or the catalog's node) matches.

use crate::common::*;

/// Lines 4–6 are the multi-line `find` below: a comment (4), the changed
/// guard (5), unchanged context (6). Line 9 is a one-line site.
const GUARD_PY: &str = "ALLOWED = {\"http://a\"}\n\
\n\
def check(origin):\n    \
    # the origin must be on the allow-list\n    \
    if origin not in ALLOWED:\n        \
        raise ValueError(\"forbidden origin\")\n    \
    return origin\n\
\n\
LIMIT = 10\n";

/// The guard mutant survives (the suite never calls `check`); the limit
/// mutant is killed. `find` and `replace` start with the unchanged comment
/// and end with the unchanged `raise` line.
const SPEC: &str = "version: 1
test:
  command: [python3, t.py]
  preset: generic
  timeout: 20s
mutations:
  - id: origin-guard
    control: \"foreign origins are refused\"
    file: guard.py
    find: \"# the origin must be on the allow-list\\n    if origin not in ALLOWED:\\n        raise ValueError(\\\"forbidden origin\\\")\"
    replace: \"# the origin must be on the allow-list\\n    if False:\\n        raise ValueError(\\\"forbidden origin\\\")\"
    canary: false
  - id: limit
    control: \"the limit is 10\"
    file: guard.py
    find: \"LIMIT = 10\"
    replace: \"LIMIT = 11\"
    canary: false
";

const SUITE_PY: &str = "import sys\nimport guard\nsys.exit(0 if guard.LIMIT == 10 else 1)\n";

fn guard_fixture() -> Fixture {
    Fixture::git(&[
        ("guard.py", GUARD_PY),
        ("t.py", SUITE_PY),
        ("unguard.yaml", SPEC),
    ])
}

/// The row of the Markdown/terminal table for mutant `id`.
fn row<'a>(table: &'a str, id: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.starts_with(&format!("| {id} ")))
        .unwrap_or_else(|| panic!("no row for {id}:\n{table}"))
}

/// `unguard report OUT --format FORMAT` as parsed text.
fn report(fx: &Fixture, out: &str, format: &str) -> String {
    let (code, text, err) = fx.run(&["report", out, "--format", format]);
    assert_eq!(code, 0, "report --format {format}: {err}");
    text
}

#[test]
fn a_multi_line_find_is_shown_at_the_line_it_changes_in_every_output() {
    let fx = guard_fixture();

    // `list` and `check`, before any run.
    let (code, out, err) = fx.run(&["list"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert!(
        out.lines()
            .any(|l| l.starts_with("origin-guard\tguard.py:5\t")),
        "list: {out}"
    );
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert!(
        out.contains("ok  origin-guard  guard.py:5  "),
        "check: {out}"
    );

    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 2, "the guard survives: {}", ctx(code, &out, &err));
    assert_eq!(fx.verdicts("out")["origin-guard"], "survived");
    assert_eq!(fx.verdicts("out")["limit"], "killed");

    // The terminal table.
    assert!(
        row(&out, "origin-guard").contains("| guard.py:5 "),
        "terminal: {out}"
    );
    assert!(row(&out, "limit").contains("| guard.py:9 "), "{out}");

    // report.md: the table and the finding.
    let md = fx.read("out/report.md");
    assert!(
        row(&md, "<code>origin-guard</code>").contains("| guard.py:5 "),
        "report.md: {md}"
    );
    assert!(md.contains("at `guard.py:5`"), "report.md: {md}");
    assert!(!md.contains("guard.py:4"), "report.md: {md}");

    // outcomes.json: `line` and the location both start at line 5, and the
    // region is the changed line only (no comment, no `raise` line).
    let o = fx.outcomes("out");
    let m = o["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "origin-guard")
        .unwrap()
        .clone();
    assert_eq!(m["line"], 5, "{m}");
    assert_eq!(m["location"]["start"]["line"], 5, "{m}");
    assert_eq!(m["location"]["start"]["column"], 1, "{m}");
    assert_eq!(m["location"]["end"]["line"], 5, "{m}");
    assert_eq!(m["replacement"], "    if False:", "{m}");

    // SARIF: the region starts (and ends) at line 5, its snippet the guard.
    let sarif: serde_json::Value = serde_json::from_str(&report(&fx, "out", "sarif")).unwrap();
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "origin-guard", "{sarif}");
    let region = &result["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 5, "{region}");
    assert_eq!(region["endLine"], 5, "{region}");
    assert_eq!(
        region["snippet"]["text"], "    if origin not in ALLOWED:",
        "{region}"
    );

    // JUnit and Stryker.
    let junit = report(&fx, "out", "junit");
    assert!(junit.contains("guard.py:5:1"), "junit: {junit}");
    assert!(junit.contains("line=\"5\""), "junit: {junit}");
    let stryker: serde_json::Value = serde_json::from_str(&report(&fx, "out", "stryker")).unwrap();
    let mutants = stryker["files"]["guard.py"]["mutants"].as_array().unwrap();
    let sm = mutants.iter().find(|m| m["id"] == "origin-guard").unwrap();
    assert_eq!(sm["location"]["start"]["line"], 5, "{sm}");
    assert_eq!(sm["replacement"], "    if False:", "{sm}");

    // The HTML report.
    let html = fx.read("out/report.html");
    assert!(html.contains("<code>guard.py:5</code>"), "html");
    assert!(!html.contains("guard.py:4"), "html");

    // -j 2: the same verdicts at the same lines.
    let (code, out, err) = fx.run(&["run", "--out", "out2", "-j", "2"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_eq!(fx.verdicts("out2"), fx.verdicts("out"));
    let lines = |dir: &str| -> Vec<(String, u64)> {
        fx.outcomes(dir)["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["id"].as_str().unwrap().into(),
                    m["line"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(lines("out2"), lines("out"));
    assert_eq!(
        lines("out"),
        [("origin-guard".into(), 5), ("limit".into(), 9)]
    );
}

/// A CORS merge whose list spans lines: the catalog's node (`[...] + cors`)
/// starts on line 4, which the mutant leaves as it is; it changes line 6.
const SERVER_PY: &str = "import os\n\
\n\
def build(settings):\n    \
    allowed_origins = [\n        \
        \"http://127.0.0.1:8000\",\n    \
    ] + settings.cors_origins\n    \
    return allowed_origins\n";

const TEST_SERVER_PY: &str = "import unittest\n\
import server\n\
\n\
class S:\n    \
    cors_origins = [\"https://app.example\"]\n\
\n\
class T(unittest.TestCase):\n    \
    def test_cors_origin_is_admitted(self):\n        \
        self.assertIn(\"https://app.example\", server.build(S()))\n";

fn cors_fixture() -> Fixture {
    Fixture::git(&[
        ("server.py", SERVER_PY),
        ("tests/__init__.py", ""),
        ("tests/test_server.py", TEST_SERVER_PY),
    ])
}

#[test]
fn a_catalog_node_starting_on_an_unchanged_line_is_shown_at_the_changed_line() {
    let fx = cors_fixture();

    // init: the comment above the mutation names line 6 and shows its text.
    let (code, yaml, err) = fx.run(&["init", ".", "--stdout"]);
    assert_eq!(code, 0, "{}", ctx(code, &yaml, &err));
    assert!(
        yaml.contains("  # server.py:6: ] + settings.cors_origins\n  - id: cors-origins-merged\n"),
        "init: {yaml}"
    );

    // audit: the grouped report and outcomes.json say line 6 too.
    let (code, out, err) = fx.run(&["audit", ".", "--out", "out", "--timeout", "20s"]);
    assert_eq!(
        fx.verdicts("out")
            .get("cors-origins-merged")
            .map(String::as_str),
        Some("killed"),
        "{}",
        ctx(code, &out, &err)
    );
    let audit = fx.read("out/audit.md");
    assert!(
        audit.contains("`cors-origins-merged` killed at server.py:6"),
        "audit.md: {audit}"
    );
    let o = fx.outcomes("out");
    let m = &o["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "cors-origins-merged")
        .unwrap()
        .clone();
    assert_eq!(m["line"], 6, "{m}");
    assert_eq!(m["location"]["start"]["line"], 6, "{m}");
    // The built-in catalog "declares" the mutation at its site.
    assert_eq!(m["spec_pos"], "server.py:6:1", "{m}");
    assert!(
        row(&out, "cors-origins-merged").contains("| server.py:6 "),
        "audit table: {out}"
    );
}
