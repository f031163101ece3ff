//! SARIF 2.1.0 for code scanning (GitHub, GitLab, Azure DevOps, VS Code's SARIF viewer).
//!
//! One `result` per *undetected* mutant, at the code the mutation replaced:
//!
//! | outcome                              | SARIF                                   |
//! |--------------------------------------|-----------------------------------------|
//! | survived                             | result, level `error`                   |
//! | no-coverage                          | result, level `error` (no test executes the mutated lines) |
//! | wrong-reason, flaky                  | result, level `warning`                 |
//! | timeout, `--timeout-is survived`     | result, level `error`                   |
//! | timeout, `--timeout-is error`        | result, level `warning`                 |
//! | timeout, `--timeout-is killed`       | nothing (detected)                      |
//! | killed                               | nothing                                 |
//! | any of the above with `gate.allow`   | the result, plus `suppressions: [{kind: external, status: accepted, justification: <reason>}]` |
//! | unreached, no-op, ambiguous          | `invocations[0].toolConfigurationNotifications`, level `error` (spec or setup is wrong; not a code finding) |
//! | unviable                             | `invocations[0].toolConfigurationNotifications`, level `note` |
//!
//! Wrong-reason is a `warning`, not an `error`: the suite *did* go red, so the control
//! may well be tested; the declared test just was not the one that failed.
//!
//! `ruleId` is the mutation id: ids are unique and stable (they name the `.diff` and
//! `.log` files), while control texts get reworded. Each rule carries the control as
//! `shortDescription`, the control plus the spec's `rule:` reference as
//! `fullDescription`, and how to fix it plus the mutation's diff as `help`.
//! `partialFingerprints` hold the mutation id too, so code scanning keeps one alert
//! per mutant across runs even when the code around it moves.
//!
//! Paths: a mutant's `file` is relative to the target root (`results.root`, as given
//! on the command line). The artifact URI is `root/file` relative to the directory
//! unguard ran in, with `uriBaseId: %SRCROOT%`. Run unguard from the repository root
//! (`unguard run path/to/server`) and the URIs are what GitHub expects. An absolute
//! root yields absolute `file://` URIs without a base id.
//!
//! Columns count characters, so `run.columnKind` is `unicodeCodePoints`.
//!
//! Typed structs with serde instead of the `serde-sarif` crate: unguard writes a
//! small, fixed subset of SARIF; a few structs keep the field order and the omitted
//! fields under our control without a builder-generated type tree, and a test
//! validates the output against the official OASIS schema.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::{Context, Result};
use crate::results::{Location, MutantResult, Outcome, Results, TimeoutPolicy};

/// The `$schema` URI every SARIF log names: the OASIS SARIF 2.1.0 schema.
pub const SARIF_SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
const SRCROOT: &str = "%SRCROOT%";
/// Key of the fingerprint that identifies a mutant's alert across runs.
pub const FINGERPRINT_KEY: &str = "unguardMutantId/v1";

#[derive(Serialize)]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    invocations: Vec<Invocation>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    original_uri_base_ids: BTreeMap<&'static str, ArtifactLocation>,
    column_kind: &'static str,
    results: Vec<SarifResult>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    semantic_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    information_uri: Option<String>,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: String,
    short_description: Message,
    full_description: Message,
    help: MultiformatMessage,
    default_configuration: Configuration,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RuleProperties {
    tags: Vec<&'static str>,
    control: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<String>,
    spec_position: String,
}

#[derive(Serialize)]
struct Message {
    text: String,
}

#[derive(Serialize)]
struct MultiformatMessage {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: String,
    rule_index: usize,
    level: &'static str,
    message: Message,
    locations: Vec<SarifLocation>,
    partial_fingerprints: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suppressions: Vec<Suppression>,
    properties: ResultProperties,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultProperties {
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    replacement: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    red_tests: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tests_total: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<String>,
}

#[derive(Serialize)]
struct Suppression {
    kind: &'static str,
    status: &'static str,
    justification: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifLocation {
    physical_location: PhysicalLocation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    #[serde(skip_serializing_if = "Option::is_none")]
    uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<Message>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    snippet: Option<Snippet>,
}

#[derive(Serialize)]
struct Snippet {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    exit_code: i32,
    exit_code_description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_time_utc: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_configuration_notifications: Vec<Notification>,
}

#[derive(Serialize)]
struct Notification {
    descriptor: Descriptor,
    level: &'static str,
    message: Message,
    locations: Vec<SarifLocation>,
}

#[derive(Serialize)]
struct Descriptor {
    id: &'static str,
}

/// The SARIF level of a mutant's result; `None`: no result (detected, or not a
/// code finding).
pub fn result_level(m: &MutantResult, policy: TimeoutPolicy) -> Option<&'static str> {
    match (m.outcome, policy) {
        (Outcome::Survived | Outcome::NoCoverage, _) => Some("error"),
        (Outcome::WrongReason, _) => Some("warning"),
        (Outcome::Flaky, _) => Some("warning"),
        (Outcome::Timeout, TimeoutPolicy::Survived) => Some("error"),
        (Outcome::Timeout, TimeoutPolicy::Error) => Some("warning"),
        _ => None,
    }
}

/// `root/file`, normalised (`.` components and duplicate slashes dropped), as
/// written relative to the directory unguard ran in.
pub fn repo_path(root: &str, file: &str) -> String {
    let absolute = root.starts_with('/');
    let parts: Vec<&str> = root
        .split('/')
        .chain(file.split('/'))
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// Percent-encode what may not stand in a URI path as it is.
fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'/' | b'-'
                    | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'@'
            );
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn artifact(root: &str, file: &str) -> ArtifactLocation {
    let path = repo_path(root, file);
    if path.starts_with('/') {
        ArtifactLocation {
            uri: Some(format!("file://{}", encode_path(&path))),
            ..Default::default()
        }
    } else {
        // A relative reference whose first segment holds a colon would read as a
        // scheme; `./` keeps it a path.
        let mut uri = encode_path(&path);
        if uri.split('/').next().is_some_and(|s| s.contains(':')) {
            uri = format!("./{uri}");
        }
        ArtifactLocation {
            uri: Some(uri),
            uri_base_id: Some(SRCROOT),
            description: None,
        }
    }
}

/// The original text of `loc` in `source` (columns count characters).
pub fn region_text(source: &str, loc: &Location) -> Option<String> {
    let (start, end) = (loc.start, loc.end);
    if (end.line, end.column) < (start.line, start.column) {
        return None;
    }
    let (mut line, mut col) = (1usize, 1usize);
    let mut out = String::new();
    let mut started = false;
    for c in source.chars() {
        if (line, col) == (start.line, start.column) {
            started = true;
        }
        if (line, col) == (end.line, end.column) {
            return started.then_some(out);
        }
        if started {
            out.push(c);
        }
        if c == '\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    // The region may end exactly at the end of the text.
    ((line, col) == (end.line, end.column)
        && (started || (line, col) == (start.line, start.column)))
        .then_some(out)
}

fn region(results: &Results, m: &MutantResult) -> Option<Region> {
    match m.location {
        Some(loc) if loc.start.line > 0 && loc.start.column > 0 => {
            let end_ok = (loc.end.line, loc.end.column) >= (loc.start.line, loc.start.column)
                && loc.end.column > 0;
            let snippet = results
                .sources
                .get(&m.file)
                .and_then(|s| region_text(s, &loc))
                .filter(|t| !t.is_empty())
                .map(|text| Snippet { text });
            Some(Region {
                start_line: loc.start.line,
                start_column: Some(loc.start.column),
                end_line: end_ok.then_some(loc.end.line),
                end_column: end_ok.then_some(loc.end.column),
                snippet: if end_ok { snippet } else { None },
            })
        }
        _ if m.line > 0 => Some(Region {
            start_line: m.line,
            start_column: None,
            end_line: None,
            end_column: None,
            snippet: None,
        }),
        _ => None,
    }
}

fn code_location(results: &Results, m: &MutantResult) -> SarifLocation {
    SarifLocation {
        physical_location: PhysicalLocation {
            artifact_location: artifact(&results.root, &m.file),
            region: region(results, m),
        },
    }
}

/// `path:line:col` of `spec_pos` as a location (the path is as given, i.e.
/// relative to the directory unguard ran in).
fn spec_location(spec_pos: &str) -> Option<SarifLocation> {
    let mut it = spec_pos.rsplitn(3, ':');
    let col: usize = it.next()?.parse().ok()?;
    let line: usize = it.next()?.parse().ok()?;
    let path = it.next().filter(|p| !p.is_empty())?;
    (line > 0 && col > 0).then(|| SarifLocation {
        physical_location: PhysicalLocation {
            artifact_location: artifact("", path),
            region: Some(Region {
                start_line: line,
                start_column: Some(col),
                end_line: None,
                end_column: None,
                snippet: None,
            }),
        },
    })
}

fn tests_sentence(m: &MutantResult) -> String {
    match (m.tests_total, m.red_tests.len()) {
        (Some(total), 0) if m.red_count().1 => format!(
            "{} of {total} tests turned red (counted by the runner's summary line).",
            m.red_count().0
        ),
        (Some(total), 0) => format!("{total} tests ran and none turned red."),
        (Some(total), red) => format!(
            "{red} of {total} tests turned red: {}.",
            m.red_tests.join(", ")
        ),
        (None, 0) => String::new(),
        (None, _) => format!("Red tests: {}.", m.red_tests.join(", ")),
    }
}

fn result_message(m: &MutantResult, policy: TimeoutPolicy) -> String {
    let what = match (m.outcome, policy) {
        (Outcome::Timeout, TimeoutPolicy::Survived) => "timeout, counted as survived".to_string(),
        (Outcome::Timeout, TimeoutPolicy::Error) => "timeout (--timeout-is error)".to_string(),
        (o, _) => o.as_str().to_string(),
    };
    let mut text = format!("{}: {what}: {}.", m.control, m.detail.trim_end_matches('.'));
    let tests = tests_sentence(m);
    if !tests.is_empty() {
        text.push(' ');
        text.push_str(&tests);
    }
    if let Some(reason) = m.allowed.as_deref().filter(|_| m.is_allowed()) {
        text.push_str(&format!(" Allowed by gate.allow: {reason}"));
    }
    text
}

/// `text` as a Markdown code span, whatever backticks it holds.
fn code_span(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if text.starts_with('`') || text.ends_with('`') {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}

fn rule_for(m: &MutantResult, level: &'static str) -> Rule {
    let rule_ref = m
        .rule
        .as_deref()
        .map(|r| format!(" (rule {r})"))
        .unwrap_or_default();
    let full = format!(
        "{}{rule_ref}. unguard mutation `{}` (declared at {}) removes this control and runs the test suite; \
         a test must turn red, or the control is unproven.",
        m.control, m.id, m.spec_pos
    );
    let fix = "Write (or fix) a test that fails when this control is removed (the diff below shows the removal), \
               name it in the mutation's `expect.killed_by`, and re-run unguard.";
    let replacement = m
        .replacement
        .as_deref()
        .map(|r| format!("Replacement: {}\n\n", code_span(r)))
        .unwrap_or_default();
    let diff = m.diff.as_deref().unwrap_or("");
    let mut markdown = format!(
        "**{}**{rule_ref}\n\nMutation `{}`, declared at `{}`.\n\n{fix}\n\n{replacement}",
        m.control, m.id, m.spec_pos
    );
    if !diff.is_empty() {
        let fence = if diff.contains("```") { "~~~~" } else { "```" };
        markdown.push_str(&format!(
            "{fence}diff\n{}\n{fence}\n",
            diff.trim_end_matches('\n')
        ));
    }
    let mut text = format!("{full}\n\n{fix}\n");
    if !diff.is_empty() {
        text.push('\n');
        text.push_str(diff);
    }
    Rule {
        id: m.id.clone(),
        short_description: Message {
            text: m.control.clone(),
        },
        full_description: Message { text: full },
        help: MultiformatMessage { text, markdown },
        default_configuration: Configuration { level },
        properties: RuleProperties {
            tags: vec!["security", "mutation-testing"],
            control: m.control.clone(),
            rule: m.rule.clone(),
            spec_position: m.spec_pos.clone(),
        },
    }
}

fn notification(results: &Results, m: &MutantResult) -> Option<Notification> {
    let (id, level) = match m.outcome {
        Outcome::Unreached => ("unreached", "error"),
        Outcome::NoOp => ("no-op", "error"),
        Outcome::Ambiguous => ("ambiguous", "error"),
        Outcome::Unviable => ("unviable", "note"),
        Outcome::InternalError => ("internal-error", "error"),
        _ => return None,
    };
    let mut locations: Vec<SarifLocation> = spec_location(&m.spec_pos).into_iter().collect();
    if m.location.is_some() || m.line > 0 {
        locations.push(code_location(results, m));
    }
    Some(Notification {
        descriptor: Descriptor { id },
        level,
        message: Message {
            text: format!("{id} `{}` ({}): {}", m.id, m.control, m.detail),
        },
        locations,
    })
}

/// `started_at` as SARIF wants it (UTC, RFC 3339); `None` when it does not parse.
fn utc(t: &str) -> Option<String> {
    let t = chrono::DateTime::parse_from_rfc3339(t).ok()?;
    Some(
        t.with_timezone(&chrono::Utc)
            .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
    )
}

/// unguard's repository (or homepage) URL from Cargo.toml, for the tool's
/// `informationUri`; `None` when neither is set.
pub fn information_uri() -> Option<String> {
    [env!("CARGO_PKG_REPOSITORY"), env!("CARGO_PKG_HOMEPAGE")]
        .into_iter()
        .find(|u| !u.is_empty())
        .map(str::to_string)
}

/// The SARIF 2.1.0 log of a run: one result per undetected mutant, spec and
/// setup errors as tool notifications.
pub fn render(results: &Results) -> Result<String> {
    let mut rules = Vec::new();
    let mut sarif_results = Vec::new();
    for m in &results.mutants {
        let Some(level) = result_level(m, results.timeout_policy) else {
            continue;
        };
        let suppressions = match m.allowed.as_deref() {
            Some(reason) if m.is_allowed() => vec![Suppression {
                kind: "external",
                status: "accepted",
                justification: reason.to_string(),
            }],
            _ => vec![],
        };
        let rule_index = rules.len();
        rules.push(rule_for(m, level));
        sarif_results.push(SarifResult {
            rule_id: m.id.clone(),
            rule_index,
            level,
            message: Message {
                text: result_message(m, results.timeout_policy),
            },
            locations: vec![code_location(results, m)],
            partial_fingerprints: BTreeMap::from([(FINGERPRINT_KEY, m.id.clone())]),
            suppressions,
            properties: ResultProperties {
                outcome: m.outcome.as_str(),
                replacement: m.replacement.clone(),
                red_tests: m.red_tests.clone(),
                tests_total: m.tests_total,
                command: m.command.clone(),
            },
        });
    }
    let notifications = results
        .mutants
        .iter()
        .filter_map(|m| notification(results, m))
        .collect();
    let exit_code_description = if results.gate.reasons.is_empty() {
        format!("gate passed; {}", results.summary.line())
    } else {
        format!(
            "{}; {}",
            results.gate.reasons.join("; "),
            results.summary.line()
        )
    };
    let version = results.unguard_version.clone();
    let semantic_version = version
        .split('.')
        .all(|p| !p.is_empty())
        .then(|| version.clone());
    let log = Log {
        schema: SARIF_SCHEMA,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: "unguard",
                    version,
                    semantic_version,
                    information_uri: information_uri(),
                    rules,
                },
            },
            invocations: vec![Invocation {
                execution_successful: !results.interrupted,
                exit_code: results.gate.exit_code,
                exit_code_description,
                start_time_utc: results.started_at.as_deref().and_then(utc),
                tool_configuration_notifications: notifications,
            }],
            original_uri_base_ids: BTreeMap::from([(
                SRCROOT,
                ArtifactLocation {
                    description: Some(Message {
                        text: "The directory unguard ran in: the repository root in CI.".into(),
                    }),
                    ..Default::default()
                },
            )]),
            column_kind: "unicodeCodePoints",
            results: sarif_results,
        }],
    };
    let text = serde_json::to_string_pretty(&log).context("serializing the SARIF report")?;
    Ok(text + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Position;

    fn loc(a: (usize, usize), b: (usize, usize)) -> Location {
        Location {
            start: Position {
                line: a.0,
                column: a.1,
            },
            end: Position {
                line: b.0,
                column: b.1,
            },
        }
    }

    #[test]
    fn no_coverage_is_an_error_result_like_a_survivor() {
        use crate::report::tests::{mutant, results};
        let mut m = mutant("c", Outcome::NoCoverage);
        m.detail = crate::outcome::no_coverage("f.py", &[3, 4], 4).detail();
        for policy in [
            TimeoutPolicy::Killed,
            TimeoutPolicy::Survived,
            TimeoutPolicy::Error,
        ] {
            assert_eq!(result_level(&m, policy), Some("error"), "{policy:?}");
        }
        let sarif: serde_json::Value =
            serde_json::from_str(&render(&results(vec![m])).unwrap()).unwrap();
        let r = &sarif["runs"][0]["results"][0];
        assert_eq!((&r["ruleId"], &r["level"]), (&"c".into(), &"error".into()));
        let text = r["message"]["text"].as_str().unwrap();
        assert!(
            text.contains("no-coverage: no test executes lines 3\u{2013}4 of f.py"),
            "{text}"
        );
    }

    #[test]
    fn repo_paths_join_root_and_file() {
        assert_eq!(repo_path("examples/demo", "a/b.py"), "examples/demo/a/b.py");
        assert_eq!(repo_path(".", "a.py"), "a.py");
        assert_eq!(repo_path("./x/", "./a.py"), "x/a.py");
        assert_eq!(repo_path("", "a.py"), "a.py");
        assert_eq!(repo_path("/abs/repo", "a.py"), "/abs/repo/a.py");
    }

    #[test]
    fn uris_are_encoded_and_never_read_as_a_scheme() {
        let a = artifact("my dir", "ü#1.py");
        assert_eq!(a.uri.as_deref(), Some("my%20dir/%C3%BC%231.py"));
        assert_eq!(a.uri_base_id, Some(SRCROOT));
        let a = artifact("", "c:x.py");
        assert_eq!(a.uri.as_deref(), Some("./c:x.py"));
        let a = artifact("/r", "a.py");
        assert_eq!(a.uri.as_deref(), Some("file:///r/a.py"));
        assert_eq!(a.uri_base_id, None);
    }

    #[test]
    fn region_text_counts_characters_and_lines() {
        let src = "ab\nçdef\nxy";
        assert_eq!(
            region_text(src, &loc((2, 2), (2, 4))).as_deref(),
            Some("de")
        );
        assert_eq!(
            region_text(src, &loc((1, 2), (2, 2))).as_deref(),
            Some("b\nç")
        );
        assert_eq!(
            region_text(src, &loc((3, 1), (3, 3))).as_deref(),
            Some("xy")
        );
        assert_eq!(region_text(src, &loc((3, 3), (3, 3))).as_deref(), Some(""));
        assert_eq!(region_text(src, &loc((9, 1), (9, 2))), None);
        assert_eq!(region_text(src, &loc((2, 3), (2, 1))), None);
        assert_eq!(region_text("", &loc((1, 1), (1, 1))).as_deref(), Some(""));
    }

    #[test]
    fn code_spans_survive_backticks() {
        assert_eq!(code_span("a"), "`a`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("``x"), "``` ``x ```");
    }

    #[test]
    fn spec_positions_parse_from_the_end() {
        let l = spec_location("dir:x/u.yaml:20:9").unwrap();
        let r = l.physical_location.region.unwrap();
        assert_eq!((r.start_line, r.start_column), (20, Some(9)));
        assert_eq!(
            l.physical_location.artifact_location.uri.as_deref(),
            Some("./dir:x/u.yaml")
        );
        assert!(spec_location("u.yaml").is_none());
        assert!(spec_location("u.yaml:0:1").is_none());
        assert!(spec_location(":3:4").is_none());
    }
}
