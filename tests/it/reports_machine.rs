//! The machine-readable reports (`unguard report --format json|junit|sarif|stryker`)
//! of the fixed model `tests/fixtures/report-model/outcomes.json`, checked against
//! the official schemas they claim to follow, plus the outcomes.json schema itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;
use serde_json::{json, Value};
use unguard::results::{Results, Summary, TimeoutPolicy};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture_dir() -> PathBuf {
    root().join("tests/fixtures/report-model")
}

fn fixture() -> Value {
    let text = std::fs::read_to_string(fixture_dir().join("outcomes.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `unguard <args>` from the repo root: (exit code, stdout, stderr).
fn unguard(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("unguard")
        .unwrap()
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Render `dir/outcomes.json` in `format`; the render must succeed.
fn render(dir: &Path, format: &str) -> String {
    let (code, out, err) = unguard(&["report", dir.to_str().unwrap(), "--format", format]);
    assert_eq!(code, 0, "unguard report --format {format} failed:\n{err}");
    assert!(err.is_empty(), "stderr: {err}");
    out
}

fn render_fixture(format: &str) -> String {
    render(Path::new("tests/fixtures/report-model"), format)
}

/// A temp dir holding `model` as outcomes.json.
fn model_dir(model: &Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("outcomes.json"),
        serde_json::to_string_pretty(model).unwrap(),
    )
    .unwrap();
    dir
}

/// The fixture under another timeout policy, with its summary recomputed the way
/// `unguard run` computes it.
fn with_policy(policy: TimeoutPolicy) -> Value {
    let mut r: Results = serde_json::from_value(fixture()).unwrap();
    r.timeout_policy = policy;
    r.summary = Summary::compute(&r.mutants, policy);
    serde_json::to_value(&r).unwrap()
}

fn mutant<'a>(model: &'a Value, id: &str) -> &'a Value {
    model["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no mutant {id}"))
}

/// A compiled JSON Schema (boon: drafts 4, 7 and 2020-12, as these schemas
/// declare), with `format` asserted.
struct Validator {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

impl Validator {
    fn is_valid(&self, instance: &Value) -> bool {
        self.schemas.validate(instance, self.index).is_ok()
    }
}

fn validator(schema_rel: &str) -> Validator {
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.enable_format_assertions();
    let path = root().join(schema_rel);
    let index = compiler
        .compile(path.to_str().unwrap(), &mut schemas)
        .unwrap_or_else(|e| panic!("{schema_rel}: {e:#}"));
    Validator { schemas, index }
}

/// Every failed check: `{what failed} at {instance path}`, one per leaf of
/// boon's error tree.
fn schema_errors(v: &Validator, instance: &Value) -> Vec<String> {
    fn leaves(e: &boon::ValidationError, out: &mut Vec<String>) {
        if e.causes.is_empty() {
            out.push(format!("{} at {}", e.kind, e.instance_location));
        }
        for c in &e.causes {
            leaves(c, out);
        }
    }
    let mut out = Vec::new();
    if let Err(e) = v.schemas.validate(instance, v.index) {
        leaves(&e, &mut out);
    }
    out
}

const SARIF_SCHEMA: &str = "tests/schemas/sarif/sarif-schema-2.1.0.json";
const STRYKER_SCHEMA: &str = "tests/schemas/stryker/mutation-testing-report-schema.json";
const OUTCOMES_SCHEMA: &str = "schemas/outcomes.schema.json";

// ---------------------------------------------------------------- snapshots

#[test]
fn snapshot_json() {
    let out = render_fixture("json");
    let parsed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(parsed, fixture(), "--format json is outcomes.json itself");
    insta::assert_snapshot!("report_json", out);
}

#[test]
fn snapshot_junit() {
    insta::assert_snapshot!("report_junit", render_fixture("junit"));
}

#[test]
fn snapshot_sarif() {
    insta::assert_snapshot!("report_sarif", render_fixture("sarif"));
}

#[test]
fn snapshot_stryker() {
    insta::assert_snapshot!("report_stryker", render_fixture("stryker"));
}

#[test]
fn reports_render_the_same_twice() {
    for format in ["junit", "sarif", "stryker", "json"] {
        assert_eq!(render_fixture(format), render_fixture(format), "{format}");
    }
}

// ---------------------------------------------------------------- JUnit

fn xml_char_ok(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// An element's name and attributes.
type Element = (String, BTreeMap<String, String>);

/// Check that `xml` is one well-formed XML 1.0 document (balanced, matching tags,
/// known entities, only legal characters) and return its elements with their
/// attributes, in document order.
fn parse_xml(xml: &str) -> Result<Vec<Element>, String> {
    use quick_xml::events::Event;
    if let Some(c) = xml.chars().find(|c| !xml_char_ok(*c)) {
        return Err(format!("character {c:?} is not allowed in XML 1.0"));
    }
    let mut reader = quick_xml::Reader::from_str(xml);
    reader.config_mut().check_end_names = true;
    let mut elements = Vec::new();
    let (mut depth, mut roots) = (0usize, 0usize);
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("{e} at byte {}", reader.buffer_position()))?;
        match event {
            Event::Eof => break,
            Event::Start(ref e) | Event::Empty(ref e) => {
                if depth == 0 {
                    roots += 1;
                }
                if matches!(event, Event::Start(_)) {
                    depth += 1;
                }
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                let mut attrs = BTreeMap::new();
                for a in e.attributes() {
                    let a = a.map_err(|e| e.to_string())?;
                    let value = a
                        .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .map_err(|e| e.to_string())?;
                    attrs.insert(
                        String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                        value.into_owned(),
                    );
                }
                elements.push((name, attrs));
            }
            Event::End(_) => depth = depth.checked_sub(1).ok_or("unbalanced end tag")?,
            Event::GeneralRef(r) => {
                if r.is_char_ref() {
                    match r.resolve_char_ref() {
                        Ok(Some(c)) if xml_char_ok(c) => {}
                        other => return Err(format!("bad character reference: {other:?}")),
                    }
                } else {
                    let name = r.decode().map_err(|e| e.to_string())?;
                    if !["lt", "gt", "amp", "apos", "quot"].contains(&name.as_ref()) {
                        return Err(format!("undefined entity &{name};"));
                    }
                }
            }
            Event::Text(t) if depth == 0 && !t.decode().unwrap().trim().is_empty() => {
                return Err("text outside the root element".into());
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("{depth} unclosed element(s)"));
    }
    if roots != 1 {
        return Err(format!("{roots} root elements"));
    }
    Ok(elements)
}

#[test]
fn xml_checker_rejects_broken_documents() {
    assert!(parse_xml("<a><b/></a>\n").is_ok());
    assert!(parse_xml("<a><b></a>").is_err());
    assert!(parse_xml("<a>").is_err());
    assert!(parse_xml("<a/><b/>").is_err());
    assert!(parse_xml("<a>&nbsp;</a>").is_err());
    assert!(parse_xml("<a>\u{1}</a>").is_err());
    assert!(parse_xml("<a>&#1;</a>").is_err());
    assert!(parse_xml("<a x=\"1\" x=\"2\"/>").is_err());
}

fn attr<'a>(el: &'a Element, name: &str) -> &'a str {
    el.1.get(name)
        .map(String::as_str)
        .unwrap_or_else(|| panic!("<{}> has no {name}", el.0))
}

/// (tests, failures, errors, skipped) the fixture's summary says JUnit must show.
fn expected_junit_counts(model: &Value) -> [usize; 4] {
    let s = &model["summary"];
    let n = |k: &str| s[k].as_u64().unwrap() as usize;
    let timeouts_fail = model["timeout_policy"] != "killed";
    [
        n("mutants"),
        n("survived") + n("wrong_reason") + if timeouts_fail { n("timeout") } else { 0 },
        n("unreached") + n("no_op") + n("ambiguous"),
        n("unviable") + n("allowed"),
    ]
}

fn junit_counts(xml: &str) -> Vec<[usize; 4]> {
    let elements = parse_xml(xml).unwrap_or_else(|e| panic!("not well-formed XML: {e}\n{xml}"));
    elements
        .iter()
        .filter(|e| e.0 == "testsuites" || e.0 == "testsuite")
        .map(|e| ["tests", "failures", "errors", "skipped"].map(|k| attr(e, k).parse().unwrap()))
        .collect()
}

/// id -> (status element or "passed", its type attribute)
fn junit_statuses(xml: &str) -> BTreeMap<String, (String, String)> {
    let report = quick_junit::Report::deserialize_from_str(xml).unwrap();
    let mut out = BTreeMap::new();
    for suite in &report.test_suites {
        for case in &suite.test_cases {
            let status = match &case.status {
                quick_junit::TestCaseStatus::Success { .. } => ("passed".into(), String::new()),
                quick_junit::TestCaseStatus::NonSuccess { kind, ty, .. } => (
                    match kind {
                        quick_junit::NonSuccessKind::Failure => "failure".to_string(),
                        quick_junit::NonSuccessKind::Error => "error".to_string(),
                    },
                    ty.as_deref().unwrap_or("").to_string(),
                ),
                quick_junit::TestCaseStatus::Skipped { ty, .. } => {
                    ("skipped".into(), ty.as_deref().unwrap_or("").to_string())
                }
            };
            out.insert(case.name.to_string(), status);
        }
    }
    out
}

#[test]
fn junit_is_well_formed_and_counts_match_the_outcomes() {
    let model = fixture();
    let xml = render_fixture("junit");
    let counts = junit_counts(&xml);
    assert_eq!(counts.len(), 2, "one <testsuites> and one <testsuite>");
    let expected = expected_junit_counts(&model);
    assert_eq!(expected, [13, 2, 2, 2], "the fixture changed");
    for c in counts {
        assert_eq!(c, expected, "tests, failures, errors, skipped");
    }
    let elements = parse_xml(&xml).unwrap();
    let suites: Vec<_> = elements.iter().filter(|e| e.0 == "testsuite").collect();
    assert_eq!(attr(suites[0], "name"), "unguard");
    assert_eq!(
        attr(suites[0], "timestamp"),
        "2026-11-30T12:00:00.000+00:00"
    );
}

#[test]
fn junit_maps_every_outcome() {
    let xml = render_fixture("junit");
    let got = junit_statuses(&xml);
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    let expected = BTreeMap::from([
        ("host-allowlist-port-exact".to_string(), s("passed", "")),
        ("host-allowlist-enforced".into(), s("passed", "")),
        (
            "localhost-allowlist-any-port".into(),
            s("failure", "wrong-reason"),
        ),
        ("origin-allowlist-enforced".into(), s("passed", "")), // timeout, policy killed
        ("bearer-token-compared".into(), s("passed", "")),
        ("mcp-headers-match-body".into(), s("passed", "")),
        ("mcp-header-missing-rejected".into(), s("passed", "")),
        ("handle-signature-verified".into(), s("passed", "")),
        ("handle-expiry-checked".into(), s("failure", "survived")),
        ("handle-expiry-skew".into(), s("skipped", "allowed")),
        ("token-compare-typo".into(), s("skipped", "unviable")),
        ("legacy-origin-check".into(), s("error", "unreached")),
        ("stale-cors-merge".into(), s("error", "no-op")),
    ]);
    assert_eq!(got, expected);

    // Names, classnames, file and line; the allow reason; diffs for findings only.
    let report = quick_junit::Report::deserialize_from_str(&xml).unwrap();
    let cases = &report.test_suites[0].test_cases;
    let case = |id: &str| cases.iter().find(|c| c.name.as_str() == id).unwrap();
    let skew = case("handle-expiry-skew");
    assert_eq!(
        skew.classname.as_deref(),
        Some("Handle expiry allows no clock skew")
    );
    match &skew.status {
        quick_junit::TestCaseStatus::Skipped { message, .. } => assert_eq!(
            message.as_deref(),
            Some("allowed: clock skew is covered by the integration suite (#42)")
        ),
        other => panic!("{other:?}"),
    }
    let survived = case("handle-expiry-checked");
    assert_eq!(
        survived.extra.get("file").map(|v| v.as_str()),
        Some("examples/demo-server/demo_server/server.py")
    );
    assert_eq!(survived.extra.get("line").map(|v| v.as_str()), Some("98"));
    let out = survived.system_out.as_deref().unwrap();
    for needle in [
        "control: An expired paging handle is rejected",
        "rule:    002/6",
        "site:    examples/demo-server/demo_server/server.py:98:9",
        "outcome: survived",
        "detail:  the suite stayed green with the control removed",
        "+        if False:",
    ] {
        assert!(out.contains(needle), "{needle:?} missing from\n{out}");
    }
    let killed = case("host-allowlist-port-exact");
    assert_eq!(killed.time.map(|t| t.as_millis()), Some(700));
    let out = killed.system_out.as_deref().unwrap();
    assert!(out.contains("outcome: killed"), "{out}");
    assert!(!out.contains("--- a/"), "no diff for a kill:\n{out}");
}

#[test]
fn junit_timeouts_follow_the_timeout_policy() {
    for (policy, status) in [
        (TimeoutPolicy::Killed, "passed"),
        (TimeoutPolicy::Survived, "failure"),
        (TimeoutPolicy::Error, "failure"),
    ] {
        let model = with_policy(policy);
        let dir = model_dir(&model);
        let xml = render(dir.path(), "junit");
        assert_eq!(
            junit_statuses(&xml)["origin-allowlist-enforced"].0,
            status,
            "{policy:?}"
        );
        for c in junit_counts(&xml) {
            assert_eq!(c, expected_junit_counts(&model), "{policy:?}");
        }
    }
}

// ---------------------------------------------------------------- SARIF

fn sarif_results(sarif: &Value) -> &Vec<Value> {
    sarif["runs"][0]["results"].as_array().unwrap()
}

#[test]
fn sarif_is_valid_against_the_official_schema() {
    let v = validator(SARIF_SCHEMA);
    let sarif: Value = serde_json::from_str(&render_fixture("sarif")).unwrap();
    let errors = schema_errors(&v, &sarif);
    assert!(errors.is_empty(), "{errors:#?}");

    // The check can fail: a level SARIF does not know, a 0 line, a bad URI.
    for (pointer, bad) in [
        ("/runs/0/results/0/level", json!("fatal")),
        (
            "/runs/0/results/0/locations/0/physicalLocation/region/startLine",
            json!(0),
        ),
        ("/runs/0/results/2/suppressions/0/kind", json!("hidden")),
        ("/version", json!("2.0.0")),
    ] {
        let mut broken = sarif.clone();
        *broken
            .pointer_mut(pointer)
            .unwrap_or_else(|| panic!("{pointer}")) = bad;
        assert!(!v.is_valid(&broken), "{pointer} should break the schema");
    }
}

#[test]
fn sarif_reports_undetected_mutants_at_the_mutated_region() {
    let model = fixture();
    let sarif: Value = serde_json::from_str(&render_fixture("sarif")).unwrap();
    let run = &sarif["runs"][0];
    assert_eq!(sarif["version"], "2.1.0");
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "unguard");
    assert_eq!(driver["version"], model["unguard_version"]);
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    assert!(run["originalUriBaseIds"]["%SRCROOT%"].is_object());

    let got: Vec<(String, String, bool)> = sarif_results(&sarif)
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap().to_string(),
                r["level"].as_str().unwrap().to_string(),
                r.get("suppressions").is_some(),
            )
        })
        .collect();
    let want = |id: &str, level: &str, sup: bool| (id.to_string(), level.to_string(), sup);
    assert_eq!(
        got,
        vec![
            want("localhost-allowlist-any-port", "warning", false),
            want("handle-expiry-checked", "error", false),
            want("handle-expiry-skew", "error", true),
        ]
    );

    let rules = driver["rules"].as_array().unwrap();
    for r in sarif_results(&sarif) {
        let id = r["ruleId"].as_str().unwrap();
        let m = mutant(&model, id);
        // The rule the result points at describes the control and its rule ref.
        let rule = &rules[r["ruleIndex"].as_u64().unwrap() as usize];
        assert_eq!(rule["id"], id);
        assert_eq!(rule["shortDescription"]["text"], m["control"]);
        let full = rule["fullDescription"]["text"].as_str().unwrap();
        assert!(
            full.contains(&format!("(rule {})", m["rule"].as_str().unwrap())),
            "{full}"
        );
        assert!(rule["help"]["markdown"]
            .as_str()
            .unwrap()
            .contains("```diff\n--- a/"));
        // The region is the mutated text, relative to the repo root.
        let loc = &r["locations"][0]["physicalLocation"];
        assert_eq!(
            loc["artifactLocation"]["uri"],
            format!("examples/demo-server/{}", m["file"].as_str().unwrap())
        );
        assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        let region = &loc["region"];
        assert_eq!(region["startLine"], m["location"]["start"]["line"]);
        assert_eq!(region["startColumn"], m["location"]["start"]["column"]);
        assert_eq!(region["endLine"], m["location"]["end"]["line"]);
        assert_eq!(region["endColumn"], m["location"]["end"]["column"]);
        assert_eq!(r["partialFingerprints"]["unguardMutantId/v1"], id);
    }
    // The snippet is the original text the mutation replaced.
    let first = &sarif_results(&sarif)[0];
    assert_eq!(
        first["locations"][0]["physicalLocation"]["region"]["snippet"]["text"],
        "f\"localhost:{port}\""
    );
    // The allowed survivor is suppressed with its written reason.
    let skew = &sarif_results(&sarif)[2];
    assert_eq!(
        skew["suppressions"],
        json!([{
            "kind": "external",
            "status": "accepted",
            "justification": "clock skew is covered by the integration suite (#42)"
        }])
    );
    // Spec and setup errors are notifications, not alerts.
    let notes: Vec<&str> = run["invocations"][0]["toolConfigurationNotifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["descriptor"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(notes, vec!["unviable", "unreached", "no-op"]);
    assert_eq!(run["invocations"][0]["startTimeUtc"], model["started_at"]);
}

#[test]
fn sarif_fingerprints_are_stable_across_runs() {
    // A later run: the code moved down 3 lines and took longer.
    let mut later = fixture();
    for m in later["mutants"].as_array_mut().unwrap() {
        m["duration_s"] = json!(9.5);
        if let Some(line) = m["line"].as_u64().filter(|l| *l > 0) {
            m["line"] = json!(line + 3);
            for end in ["start", "end"] {
                let l = m["location"][end]["line"].as_u64().unwrap();
                m["location"][end]["line"] = json!(l + 3);
            }
        }
    }
    later["started_at"] = json!("2026-12-01T08:00:00Z");
    let dir = model_dir(&later);
    let fingerprints = |sarif: &str| -> Vec<(Value, Value, Value)> {
        let v: Value = serde_json::from_str(sarif).unwrap();
        sarif_results(&v)
            .iter()
            .map(|r| {
                (
                    r["ruleId"].clone(),
                    r["partialFingerprints"].clone(),
                    r["locations"][0]["physicalLocation"]["region"]["startLine"].clone(),
                )
            })
            .collect()
    };
    let (a, b) = (
        fingerprints(&render_fixture("sarif")),
        fingerprints(&render(dir.path(), "sarif")),
    );
    assert_eq!(a.len(), 3);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((&x.0, &x.1), (&y.0, &y.1), "same mutant, same fingerprint");
        assert_ne!(x.2, y.2, "the location did move");
    }
}

#[test]
fn sarif_timeouts_follow_the_timeout_policy() {
    for (policy, level) in [
        (TimeoutPolicy::Killed, None),
        (TimeoutPolicy::Survived, Some("error")),
        (TimeoutPolicy::Error, Some("warning")),
    ] {
        let dir = model_dir(&with_policy(policy));
        let sarif: Value = serde_json::from_str(&render(dir.path(), "sarif")).unwrap();
        let got = sarif_results(&sarif)
            .iter()
            .find(|r| r["ruleId"] == "origin-allowlist-enforced")
            .map(|r| r["level"].as_str().unwrap().to_string());
        assert_eq!(got.as_deref(), level, "{policy:?}");
        let errors = schema_errors(&validator(SARIF_SCHEMA), &sarif);
        assert!(errors.is_empty(), "{policy:?}: {errors:#?}");
    }
}

// ---------------------------------------------------------------- Stryker

/// Stryker's mutation score, computed the way mutation-testing-metrics does:
/// detected (Killed, Timeout) ÷ valid (detected + Survived + NoCoverage).
fn stryker_score(report: &Value) -> Option<f64> {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for file in report["files"].as_object().unwrap().values() {
        for m in file["mutants"].as_array().unwrap() {
            *count
                .entry(m["status"].as_str().unwrap().into())
                .or_default() += 1;
        }
    }
    let n = |s: &str| count.get(s).copied().unwrap_or(0);
    let detected = n("Killed") + n("Timeout");
    let valid = detected + n("Survived") + n("NoCoverage");
    (valid > 0).then(|| 100.0 * detected as f64 / valid as f64)
}

fn stryker_statuses(report: &Value) -> BTreeMap<String, String> {
    report["files"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|f| f["mutants"].as_array().unwrap())
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_string(),
                m["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn stryker_is_valid_against_the_official_schema() {
    let v = validator(STRYKER_SCHEMA);
    let report: Value = serde_json::from_str(&render_fixture("stryker")).unwrap();
    let errors = schema_errors(&v, &report);
    assert!(errors.is_empty(), "{errors:#?}");
    // The check can fail.
    for (pointer, bad) in [
        (
            "/files/demo_server~1server.py/mutants/0/status",
            json!("Dead"),
        ),
        (
            "/files/demo_server~1server.py/mutants/0/location/start/line",
            json!(0),
        ),
        ("/thresholds/high", json!(80.5)),
        ("/schemaVersion", json!("3")),
    ] {
        let mut broken = report.clone();
        *broken
            .pointer_mut(pointer)
            .unwrap_or_else(|| panic!("{pointer}")) = bad;
        assert!(!v.is_valid(&broken), "{pointer} should break the schema");
    }
}

#[test]
fn stryker_maps_every_outcome_and_keeps_the_score() {
    let model = fixture();
    let report: Value = serde_json::from_str(&render_fixture("stryker")).unwrap();
    let got = stryker_statuses(&report);
    let expected: BTreeMap<String, String> = [
        ("host-allowlist-port-exact", "Killed"),
        ("host-allowlist-enforced", "Killed"),
        ("localhost-allowlist-any-port", "Survived"),
        ("origin-allowlist-enforced", "Timeout"),
        ("bearer-token-compared", "Killed"),
        ("mcp-headers-match-body", "Killed"),
        ("mcp-header-missing-rejected", "Killed"),
        ("handle-signature-verified", "Killed"),
        ("handle-expiry-checked", "Survived"),
        ("handle-expiry-skew", "Ignored"),
        ("token-compare-typo", "CompileError"),
        ("legacy-origin-check", "RuntimeError"),
        ("stale-cors-merge", "RuntimeError"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, expected);

    let score = stryker_score(&report).unwrap();
    let want = model["summary"]["score"].as_f64().unwrap();
    assert!(
        (score - want).abs() < 1e-9,
        "stryker {score} vs unguard {want}"
    );

    assert_eq!(report["schemaVersion"], "2");
    assert_eq!(report["thresholds"], json!({"high": 80, "low": 60}));
    assert_eq!(report["projectRoot"], model["root"]);
    assert_eq!(report["framework"]["name"], "unguard");
    assert_eq!(report["framework"]["version"], model["unguard_version"]);
    for (path, file) in report["files"].as_object().unwrap() {
        assert_eq!(file["language"], "python");
        assert_eq!(file["source"], model["sources"][path], "{path}");
    }
    let server = &report["files"]["demo_server/server.py"]["mutants"];
    let find = |id: &str| {
        server
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .unwrap()
            .clone()
    };
    let killed = find("host-allowlist-port-exact");
    assert_eq!(killed["duration"], 700, "milliseconds");
    assert_eq!(
        killed["killedBy"],
        mutant(&model, "host-allowlist-port-exact")["red_tests"]
    );
    assert_eq!(
        killed["location"],
        mutant(&model, "host-allowlist-port-exact")["location"]
    );
    assert_eq!(killed["replacement"], "\"127.0.0.1:*\"");
    let skew = find("handle-expiry-skew");
    assert!(skew["statusReason"]
        .as_str()
        .unwrap()
        .starts_with("allowed: clock skew is covered by the integration suite (#42)"));
    assert!(find("localhost-allowlist-any-port")["statusReason"]
        .as_str()
        .unwrap()
        .starts_with("wrong reason: "));
    let noop = find("stale-cors-merge");
    assert_eq!(
        noop["location"],
        json!({"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": 1}})
    );
    assert!(noop["statusReason"]
        .as_str()
        .unwrap()
        .contains("line 1, column 1"));
    let survived = find("handle-expiry-checked");
    assert_eq!(survived["coveredBy"].as_array().unwrap().len(), 26);
    assert!(survived.get("killedBy").is_none());

    // Every test id a mutant names is defined in testFiles.
    let defined: Vec<&str> = report["testFiles"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|f| f["tests"].as_array().unwrap())
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    for m in server.as_array().unwrap() {
        for key in ["killedBy", "coveredBy"] {
            for t in m.get(key).and_then(Value::as_array).into_iter().flatten() {
                assert!(
                    defined.contains(&t.as_str().unwrap()),
                    "{t} not in testFiles"
                );
            }
        }
    }
}

#[test]
fn stryker_score_equals_unguard_score_under_every_timeout_policy() {
    let v = validator(STRYKER_SCHEMA);
    for (policy, timeout_status) in [
        (TimeoutPolicy::Killed, "Timeout"),
        (TimeoutPolicy::Survived, "Survived"),
        (TimeoutPolicy::Error, "Survived"),
    ] {
        let model = with_policy(policy);
        let dir = model_dir(&model);
        let report: Value = serde_json::from_str(&render(dir.path(), "stryker")).unwrap();
        assert!(schema_errors(&v, &report).is_empty(), "{policy:?}");
        assert_eq!(
            stryker_statuses(&report)["origin-allowlist-enforced"],
            timeout_status,
            "{policy:?}"
        );
        let ours = model["summary"]["score"].as_f64();
        let theirs = stryker_score(&report);
        assert_eq!(
            ours.map(|s| (s * 1e6).round()),
            theirs.map(|s| (s * 1e6).round()),
            "{policy:?}: unguard {ours:?} vs Stryker {theirs:?}"
        );
    }
}

// ---------------------------------------------------------------- hostile input

/// A model with everything odd a hand-edited or old outcomes.json can hold: every
/// format must render it (exit 0) into a valid document.
#[test]
fn odd_models_render_to_valid_documents() {
    let mut model = fixture();
    let ms = model["mutants"].as_array_mut().unwrap();
    ms[0]["control"] = json!("ctl \u{1}\u{1b}[31m <&>\"' \u{FFFE} ]]> \u{1F512}");
    ms[0]["id"] = json!("weird id <&>");
    ms[0]["outcome"] = json!("survived");
    ms[0]["location"] = Value::Null;
    ms[0]["diff"] = json!("``` fence ```\n\u{7}bell");
    ms[1]["outcome"] = json!("ambiguous");
    ms[1]["file"] = json!("dir with space/ü#?.py");
    ms[1]["duration_s"] = json!(-1.5);
    ms[2]["location"] = json!({"start": {"line": 5, "column": 9}, "end": {"line": 2, "column": 1}});
    ms[2]["line"] = json!(0);
    ms[3]["file"] = json!("c:\\odd\\path.py");
    ms[3]["outcome"] = json!("wrong-reason");
    ms[3]["allowed"] = json!("reason with <xml> & \"quotes\"");
    ms[4]["duration_s"] = json!(1e300);
    ms[4]["spec_pos"] = json!("no position");
    ms[5]["location"] = json!({"start": {"line": 0, "column": 0}, "end": {"line": 0, "column": 0}});
    model["root"] = json!("/abs/root dir");
    model["started_at"] = json!("not a date");
    model["thresholds"] = json!({"high": 1e9, "low": -5.0});
    model["duration_s"] = json!(-3.0);
    model["sources"] = json!({});
    model["unguard_version"] = json!("dev build");
    let dir = model_dir(&model);

    let xml = render(dir.path(), "junit");
    parse_xml(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    assert!(xml.contains("name=\"weird id &lt;&amp;&gt;\""), "{xml}");

    let sarif: Value = serde_json::from_str(&render(dir.path(), "sarif")).unwrap();
    let errors = schema_errors(&validator(SARIF_SCHEMA), &sarif);
    assert!(errors.is_empty(), "{errors:#?}");

    let stryker: Value = serde_json::from_str(&render(dir.path(), "stryker")).unwrap();
    let errors = schema_errors(&validator(STRYKER_SCHEMA), &stryker);
    assert!(errors.is_empty(), "{errors:#?}");

    // An empty run renders too.
    let mut empty = fixture();
    empty["mutants"] = json!([]);
    let r: Results = serde_json::from_value(empty).unwrap();
    let mut empty = serde_json::to_value(&r).unwrap();
    empty["summary"] = serde_json::to_value(Summary::compute(&[], r.timeout_policy)).unwrap();
    let dir = model_dir(&empty);
    assert_eq!(junit_counts(&render(dir.path(), "junit"))[0], [0, 0, 0, 0]);
    let sarif: Value = serde_json::from_str(&render(dir.path(), "sarif")).unwrap();
    assert!(schema_errors(&validator(SARIF_SCHEMA), &sarif).is_empty());
    let stryker: Value = serde_json::from_str(&render(dir.path(), "stryker")).unwrap();
    assert!(schema_errors(&validator(STRYKER_SCHEMA), &stryker).is_empty());
    assert_eq!(stryker_score(&stryker), None);
}

// ---------------------------------------------------------------- outcomes.json schema

#[test]
fn outcomes_schema_file_matches_unguard_schema() {
    let (code, printed, err) = unguard(&["schema"]);
    assert_eq!(code, 0, "{err}");
    let committed = std::fs::read_to_string(root().join(OUTCOMES_SCHEMA)).unwrap_or_default();
    assert!(
        printed == committed,
        "{OUTCOMES_SCHEMA} is out of date with the results model (src/results/mod.rs).\n\
         Regenerate it with:\n\n    cargo run -q -- schema > {OUTCOMES_SCHEMA}\n\n\
         and commit it (a changed model must stay compatible: add fields, never rename)."
    );
}

#[test]
fn fixture_is_valid_against_the_outcomes_schema() {
    let v = validator(OUTCOMES_SCHEMA);
    let model = fixture();
    let errors = schema_errors(&v, &model);
    assert!(errors.is_empty(), "{errors:#?}");

    let mut broken = model.clone();
    broken["mutants"][0]["outcome"] = json!("maybe");
    assert!(!v.is_valid(&broken), "outcome `maybe` must fail");
    let mut broken = model.clone();
    broken["mutants"][1].as_object_mut().unwrap().remove("id");
    assert!(!v.is_valid(&broken), "a mutant without id must fail");
    let mut broken = model;
    broken["timeout_policy"] = json!("sometimes");
    assert!(!v.is_valid(&broken), "an unknown timeout policy must fail");
}

// ---------------------------------------------------------------- error paths

fn report_error(dir: &Path) -> (i32, String) {
    let (code, out, err) = unguard(&["report", dir.to_str().unwrap(), "--format", "sarif"]);
    assert!(out.is_empty(), "nothing on stdout: {out}");
    (code, err)
}

#[test]
fn report_without_outcomes_json_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err) = report_error(dir.path());
    assert_eq!(code, 1, "{err}");
    let file = dir.path().join("outcomes.json");
    assert!(
        err.contains(&format!("reading {}", file.display())),
        "{err}"
    );
    assert!(err.contains("--out dir"), "{err}");
}

#[test]
fn report_of_another_schema_version_names_the_file_and_version() {
    let mut model = fixture();
    model["schema"] = json!("unguard/2");
    let dir = model_dir(&model);
    let (code, err) = report_error(dir.path());
    assert_eq!(code, 1, "{err}");
    let file = dir.path().join("outcomes.json");
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert!(err.contains("`unguard/2` is not `unguard/1`"), "{err}");

    let mut model = fixture();
    model.as_object_mut().unwrap().remove("schema");
    let dir = model_dir(&model);
    let (code, err) = report_error(dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no `schema` field"), "{err}");
}

#[test]
fn report_of_broken_json_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("outcomes.json");
    std::fs::write(&file, "{\"schema\": \"unguard/1\", \"mutants\": [").unwrap();
    let (code, err) = report_error(dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!("{}: not valid JSON", file.display())),
        "{err}"
    );

    // Valid JSON of the right version that is not the model.
    let mut model = fixture();
    model["mutants"][0]["outcome"] = json!("maybe");
    let dir = model_dir(&model);
    let (code, err) = report_error(dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("does not match the unguard/1 model"), "{err}");
    assert!(err.contains("maybe"), "{err}");
}
