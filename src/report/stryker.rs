//! Stryker's mutation-testing-report-schema JSON (schema version 2, as written by
//! `mutation-testing-report-schema` 3.x), for the Stryker dashboard and the
//! `mutation-testing-elements` HTML viewer.
//!
//! Status mapping, chosen so that Stryker's score, detected ÷ valid =
//! (Killed + Timeout) ÷ (Killed + Timeout + Survived + NoCoverage), equals
//! unguard's score, detected ÷ scored, with allowed mutants left out:
//!
//! | outcome                           | status       | why                                            |
//! |-----------------------------------|--------------|------------------------------------------------|
//! | killed                            | Killed       | detected                                       |
//! | survived                          | Survived     | undetected                                     |
//! | no-coverage                       | NoCoverage   | undetected: no test executes the mutated lines (Stryker's own meaning) |
//! | wrong-reason                      | Survived     | scored but not detected; `statusReason` starts with `wrong reason:` |
//! | timeout, `--timeout-is killed`    | Timeout      | detected                                       |
//! | timeout, `--timeout-is survived`  | Survived     | undetected; `statusReason` says it hung        |
//! | timeout, `--timeout-is error`     | Survived     | unguard scores it as not detected; Stryker's Timeout would count it detected |
//! | unviable                          | CompileError | left out of both scores                        |
//! | unreached                         | RuntimeError | left out of both scores (NoCoverage would fit the meaning but counts as undetected in Stryker; unguard keeps it for no-coverage) |
//! | no-op, ambiguous                  | RuntimeError | spec errors, left out of both scores; never applied, so shown at 1:1 with an empty range |
//! | allowed (survived, no-coverage, wrong-reason, flaky, timeout under `gate.allow`) | Ignored | left out of both scores; `statusReason` is the allow reason |
//!
//! `mutatorName` is the mutation id (short, stable, what `--only` takes);
//! `description` is the control and its rule. `duration` is in milliseconds, as
//! the schema wants. `coveredBy` lists the tests that ran (for findings) plus the
//! red tests; `killedBy` the red tests of a kill. `testFiles` lists every test id
//! the report mentions, keyed by its class part (the schema allows a class name).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::error::{Context, Result};
use crate::results::{MutantResult, Outcome, Position, Results, TimeoutPolicy};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    schema_version: &'static str,
    thresholds: Thresholds,
    project_root: String,
    files: BTreeMap<String, FileResult>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    test_files: BTreeMap<String, TestFile>,
    framework: Framework,
    config: serde_json::Value,
}

#[derive(Serialize)]
struct Thresholds {
    high: u8,
    low: u8,
}

#[derive(Serialize)]
struct FileResult {
    language: &'static str,
    source: String,
    mutants: Vec<Mutant>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Mutant {
    id: String,
    mutator_name: String,
    description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    replacement: Option<String>,
    location: StrykerLocation,
    status: &'static str,
    status_reason: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    killed_by: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    covered_by: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tests_completed: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration: Option<u64>,
}

#[derive(Serialize)]
struct StrykerLocation {
    start: StrykerPosition,
    end: StrykerPosition,
}

#[derive(Serialize)]
struct StrykerPosition {
    line: usize,
    column: usize,
}

#[derive(Serialize)]
struct TestFile {
    tests: Vec<TestDefinition>,
}

#[derive(Serialize)]
struct TestDefinition {
    id: String,
    name: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Framework {
    name: &'static str,
    version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    branding: Option<Branding>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Branding {
    homepage_url: String,
}

/// Stryker's status for a mutant under `policy`.
pub fn status(m: &MutantResult, policy: TimeoutPolicy) -> &'static str {
    if m.is_allowed() {
        return "Ignored";
    }
    match m.outcome {
        Outcome::Killed => "Killed",
        Outcome::Survived | Outcome::WrongReason | Outcome::Flaky => "Survived",
        Outcome::NoCoverage => "NoCoverage",
        Outcome::Timeout if policy == TimeoutPolicy::Killed => "Timeout",
        Outcome::Timeout => "Survived",
        Outcome::Unviable => "CompileError",
        Outcome::Unreached | Outcome::NoOp | Outcome::Ambiguous | Outcome::InternalError => {
            "RuntimeError"
        }
    }
}

fn status_reason(m: &MutantResult, policy: TimeoutPolicy) -> String {
    let detail = &m.detail;
    if let Some(reason) = m.allowed.as_deref().filter(|_| m.is_allowed()) {
        return format!(
            "allowed: {reason} (outcome {}: {detail})",
            m.outcome.as_str()
        );
    }
    match (m.outcome, policy) {
        (Outcome::WrongReason, _) => format!("wrong reason: {detail}"),
        (Outcome::Flaky, _) => format!("flaky: {detail}"),
        (Outcome::InternalError, _) => format!("internal error: {detail}"),
        (Outcome::Timeout, TimeoutPolicy::Survived) => {
            format!("timeout, counted as survived (--timeout-is survived): {detail}")
        }
        (Outcome::Timeout, TimeoutPolicy::Error) => {
            format!("timeout, counted as not detected (--timeout-is error): {detail}")
        }
        (Outcome::Unreached, _) => format!("unreached: {detail}"),
        (Outcome::NoOp | Outcome::Ambiguous, _) if m.location.is_none() => format!(
            "{}: {detail} (never applied, so no location: shown at line 1, column 1)",
            m.outcome.as_str()
        ),
        (Outcome::NoOp | Outcome::Ambiguous, _) => format!("{}: {detail}", m.outcome.as_str()),
        _ => detail.clone(),
    }
}

fn position(p: Position) -> StrykerPosition {
    StrykerPosition {
        line: p.line.max(1),
        column: p.column.max(1),
    }
}

fn location(m: &MutantResult) -> StrykerLocation {
    match m.location {
        Some(loc) => {
            let start = position(loc.start);
            let mut end = position(loc.end);
            if (end.line, end.column) < (start.line, start.column) {
                end = StrykerPosition {
                    line: start.line,
                    column: start.column,
                };
            }
            StrykerLocation { start, end }
        }
        None => {
            let line = m.line.max(1);
            StrykerLocation {
                start: StrykerPosition { line, column: 1 },
                end: StrykerPosition { line, column: 1 },
            }
        }
    }
}

/// The language name for a file, from its extension (Prism's names, which the
/// Stryker viewer uses for highlighting).
pub fn language(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    };
    match ext.as_str() {
        "py" | "pyi" => "python",
        "ts" | "tsx" | "mts" | "cts" => "typescript",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "rs" => "rust",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "scala" | "sc" => "scala",
        "cs" => "cs",
        "php" => "php",
        "rb" => "ruby",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "cpp",
        "swift" => "swift",
        "sh" | "bash" => "bash",
        "json" => "json",
        "yaml" | "yml" => "yaml",
        "toml" => "toml",
        _ => "plaintext",
    }
}

fn percent(v: f64, default: f64) -> u8 {
    let v = if v.is_finite() { v } else { default };
    v.round().clamp(0.0, 100.0) as u8
}

fn millis(s: f64) -> Option<u64> {
    (s.is_finite() && s >= 0.0).then(|| (s * 1000.0).round() as u64)
}

fn mutant(m: &MutantResult, policy: TimeoutPolicy) -> Mutant {
    let status = status(m, policy);
    let mut covered_by: Vec<String> = m.tests_ran.clone();
    for t in &m.red_tests {
        if !covered_by.contains(t) {
            covered_by.push(t.clone());
        }
    }
    let description = match m.rule.as_deref() {
        Some(rule) => format!("{} (rule {rule})", m.control),
        None => m.control.clone(),
    };
    Mutant {
        id: m.id.clone(),
        mutator_name: m.id.clone(),
        description,
        replacement: m.replacement.clone(),
        location: location(m),
        status,
        status_reason: status_reason(m, policy),
        killed_by: if status == "Killed" {
            m.red_tests.clone()
        } else {
            vec![]
        },
        covered_by,
        tests_completed: m.tests_total,
        duration: millis(m.duration_s),
    }
}

fn test_files(results: &Results) -> BTreeMap<String, TestFile> {
    let ids: BTreeSet<&String> = results
        .mutants
        .iter()
        .flat_map(|m| m.red_tests.iter().chain(&m.tests_ran))
        .collect();
    let mut files: BTreeMap<String, TestFile> = BTreeMap::new();
    for id in ids {
        let (class, name) = id.rsplit_once("::").unwrap_or(("", id.as_str()));
        files
            .entry(class.to_string())
            .or_insert_with(|| TestFile { tests: vec![] })
            .tests
            .push(TestDefinition {
                id: id.clone(),
                name: name.to_string(),
            });
    }
    files
}

/// The Stryker mutation-testing-report JSON of a run: one file entry per
/// mutated file, one mutant per mutation.
pub fn render(results: &Results) -> Result<String> {
    let policy = results.timeout_policy;
    let mut files: BTreeMap<String, FileResult> = BTreeMap::new();
    for m in &results.mutants {
        files
            .entry(m.file.clone())
            .or_insert_with(|| FileResult {
                language: language(&m.file),
                source: results.sources.get(&m.file).cloned().unwrap_or_default(),
                mutants: vec![],
            })
            .mutants
            .push(mutant(m, policy));
    }
    let defaults = crate::results::Thresholds::default();
    let report = Report {
        schema_version: "2",
        thresholds: Thresholds {
            high: percent(results.thresholds.high, defaults.high),
            low: percent(results.thresholds.low, defaults.low),
        },
        project_root: results.root.clone(),
        files,
        test_files: test_files(results),
        framework: Framework {
            name: "unguard",
            version: results.unguard_version.clone(),
            branding: super::sarif::information_uri().map(|homepage_url| Branding { homepage_url }),
        },
        config: serde_json::json!({
            "spec": results.spec,
            "timeoutPolicy": results.timeout_policy,
            "gate": results.gate_config,
            "verdict": results.gate,
            "selection": results.selection,
        }),
    };
    let text = serde_json::to_string_pretty(&report).context("serializing the Stryker report")?;
    Ok(text + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_coverage_is_strykers_no_coverage_and_undetected() {
        use crate::report::tests::{mutant, results};
        let mut m = mutant("c", Outcome::NoCoverage);
        for policy in [
            TimeoutPolicy::Killed,
            TimeoutPolicy::Survived,
            TimeoutPolicy::Error,
        ] {
            assert_eq!(status(&m, policy), "NoCoverage", "{policy:?}");
        }
        let json: serde_json::Value = serde_json::from_str(
            &render(&results(vec![mutant("k", Outcome::Killed), m.clone()])).unwrap(),
        )
        .unwrap();
        let statuses: Vec<&str> = json["files"]["f.py"]["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["status"].as_str().unwrap())
            .collect();
        assert_eq!(statuses, ["Killed", "NoCoverage"], "{json}");
        // Allowed, it is ignored like an allowed survivor.
        m.allowed = Some("e2e only".into());
        assert_eq!(status(&m, TimeoutPolicy::Killed), "Ignored");
    }

    #[test]
    fn languages_come_from_the_extension() {
        assert_eq!(language("a/b/server.py"), "python");
        assert_eq!(language("x.TSX"), "typescript");
        assert_eq!(language("lib.rs"), "rust");
        assert_eq!(language("Makefile"), "plaintext");
        assert_eq!(language(".py"), "plaintext");
        assert_eq!(language("dir.d/file"), "plaintext");
    }

    #[test]
    fn thresholds_and_durations_never_panic() {
        assert_eq!(percent(80.4, 80.0), 80);
        assert_eq!(percent(f64::NAN, 60.0), 60);
        assert_eq!(percent(250.0, 60.0), 100);
        assert_eq!(percent(-3.0, 60.0), 0);
        assert_eq!(millis(0.7), Some(700));
        assert_eq!(millis(-1.0), None);
        assert_eq!(millis(f64::INFINITY), None);
    }
}
