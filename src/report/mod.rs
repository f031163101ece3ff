//! Rendering the results model. Every format reads only [`Results`] (the
//! content of `outcomes.json`), so any report can be re-rendered later with
//! `unguard report DIR --format …` without re-running tests.
//!
//! This module holds the [`Format`]s, the terminal table and the dispatch;
//! one submodule per format.

mod context;
pub mod html;
pub mod junit_xml;
pub mod markdown;
pub mod publish;
pub mod sarif;
pub mod stryker;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use tabled::builder::Builder;
use tabled::settings::Style;

use crate::error::{Context, Error, Result};
use crate::results::{MutantResult, Outcome, Results};

/// Report formats of `unguard report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The PR comment (Markdown, from templates/pr-comment.md or --template).
    Md,
    /// outcomes.json itself (`"schema": "unguard/1"`).
    Json,
    /// Self-contained HTML page: summary, filterable table, diffs.
    Html,
    /// JUnit XML: one testcase per mutant, survived/wrong-reason as failures.
    Junit,
    /// SARIF 2.1.0: one result per undetected mutant (survived, wrong-reason), at the mutated region.
    Sarif,
    /// Stryker mutation-testing-report-schema JSON (HTML viewer, dashboard).
    Stryker,
}

/// Make a string safe inside a Markdown table cell.
pub fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

fn short_test_name(id: &str) -> &str {
    id.rsplit("::").next().unwrap_or(id)
}

/// `N/M` plus the first red tests' short names; `N/M (summary)` when only
/// the runner's summary line counted them.
pub fn red_tests_cell(m: &MutantResult) -> String {
    let n = m.red_tests.len();
    let count = match m.tests_total {
        Some(_) => m.red_of_total(),
        None if m.red_count().1 => m.red_of_total(),
        None if matches!(m.outcome, Outcome::Killed | Outcome::WrongReason) => {
            "red (not counted)".into()
        }
        None => "–".into(),
    };
    if n == 0 {
        return count;
    }
    let first = short_test_name(&m.red_tests[0]);
    if n > 1 {
        format!("{count} {first}, +{}", n - 1)
    } else {
        format!("{count} {first}")
    }
}

/// Which tests a mutant ran, in one phrase: the subsets tried first
/// (kill-first) and whether the full suite ran.
pub fn runs_cell(m: &MutantResult) -> String {
    let mut parts: Vec<String> = m
        .subset_runs
        .iter()
        .map(|r| {
            let n = r.tests.len();
            format!(
                "{n} selected test{} ({}): {}",
                if n == 1 { "" } else { "s" },
                r.stage,
                r.result
            )
        })
        .collect();
    match (m.full_suite, parts.is_empty()) {
        (true, _) => parts.push("the full suite".into()),
        (false, false) => parts.push("full suite not run".into()),
        (false, true) => return "no test run".into(),
    }
    parts.join("; ")
}

fn site(m: &MutantResult) -> String {
    if m.line > 0 {
        format!("{}:{}", m.file, m.line)
    } else {
        m.file.clone()
    }
}

/// The killed/survived table in Markdown, for the terminal: a `control`
/// longer than 80 characters (a catalog's controls may be prose) is cut
/// there with `…`; every report keeps the full text.
pub fn table(results: &Results) -> String {
    /// The widest `control` cell, in characters.
    const CONTROL_WIDTH: usize = 80;
    let short = |c: &str| match c.char_indices().nth(CONTROL_WIDTH - 1) {
        Some((at, _)) if c.chars().count() > CONTROL_WIDTH => format!("{}…", c[..at].trim_end()),
        _ => c.to_string(),
    };
    let mut b = Builder::default();
    b.push_record([
        "mutant",
        "control",
        "file:line",
        "outcome",
        "red tests",
        "time",
    ]);
    for m in &results.mutants {
        b.push_record([
            cell(&m.id),
            cell(&short(&m.control)),
            cell(&site(m)),
            match &m.reused {
                Some(_) => format!("{} (reused)", m.outcome.as_str()),
                None => m.outcome.as_str().to_string(),
            },
            cell(&red_tests_cell(m)),
            format!("{:.1}s", m.duration_s),
        ]);
    }
    let mut t = b.build();
    t.with(Style::markdown());
    t.to_string()
}

/// Everything that is not a clean kill, survivors first (they are the
/// findings), then the other outcomes in a fixed order; spec order within each.
pub fn finding_mutants(results: &Results) -> Vec<&MutantResult> {
    const ORDER: [Outcome; 10] = [
        Outcome::Survived,
        Outcome::NoCoverage,
        Outcome::Flaky,
        Outcome::WrongReason,
        Outcome::Timeout,
        Outcome::Unreached,
        Outcome::Unviable,
        Outcome::NoOp,
        Outcome::Ambiguous,
        Outcome::InternalError,
    ];
    ORDER
        .iter()
        .flat_map(|o| results.mutants.iter().filter(move |m| m.outcome == *o))
        .collect()
}

/// Findings below the terminal table, one line each: a line break in a
/// reason (which may quote a test name or a log line, both the pull
/// request's text) becomes a space, so nothing in it starts a line of its own
/// (on GitHub's runners a line starting with `::` is a workflow command).
pub fn findings(results: &Results) -> Vec<String> {
    finding_mutants(results)
        .into_iter()
        .map(|m| {
            format!(
                "{} {}: {} ({})",
                m.outcome.as_str(),
                m.id,
                m.detail,
                m.spec_pos
            )
            .replace("\r\n", " ")
            .replace(['\r', '\n'], " ")
        })
        .collect()
}

/// Render `results` in `format`. `template` is a user's minijinja template
/// for the Markdown report (`--template`); other formats ignore it.
///
/// A template that fails is an [`Error::Template`]; a model that does not
/// serialize (a bug), an [`Error::Json`] or [`Error::Internal`].
pub fn render(
    results: &Arc<Results>,
    format: Format,
    template: Option<&markdown::Template>,
) -> Result<String> {
    match format {
        Format::Md => markdown::render(results, template),
        Format::Json => {
            let text =
                serde_json::to_string_pretty(&**results).context("serializing outcomes.json")?;
            Ok(text + "\n")
        }
        Format::Html => html::render(results),
        Format::Junit => junit_xml::render(results),
        Format::Sarif => sarif::render(results),
        Format::Stryker => stryker::render(results),
    }
}

/// [`render`] into `w`: the JSON and the HTML as they are made, not held in
/// memory first. A failed write to `w` is an [`Error::Io`] (its `source` is
/// the writer's error), and only that is: any other error is [`render`]'s.
pub fn render_to(
    results: &Arc<Results>,
    format: Format,
    template: Option<&markdown::Template>,
    w: &mut dyn Write,
) -> Result<()> {
    let written = match format {
        Format::Json => serde_json::to_writer_pretty(&mut *w, &**results)
            .map_err(std::io::Error::from)
            .and_then(|()| w.write_all(b"\n")),
        Format::Html => return html::render_to(results, w),
        _ => w.write_all(render(results, format, template)?.as_bytes()),
    };
    written.context("writing the report")
}

/// Read `DIR/outcomes.json`, checking its schema version.
pub fn read_outcomes(dir: &Path) -> Result<Results> {
    let path = dir.join("outcomes.json");
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "reading {} (is {} the --out dir of an `unguard run`?)",
            path.display(),
            dir.display()
        )
    })?;
    // The schema version first (without building the whole document as a
    // `Value`: 10,000 mutants make that ~100 MB), then the model itself.
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(default)]
        schema: Option<serde_json::Value>,
    }
    let head: Head = serde_json::from_str(&text)
        .with_context(|| format!("{}: not valid JSON", path.display()))?;
    let schema = head.schema.as_ref().and_then(|s| s.as_str());
    if schema != Some(crate::results::SCHEMA) {
        let why = match schema {
            Some(other) => format!(
                "schema `{other}` is not `{}`; render it with the unguard version that wrote it",
                crate::results::SCHEMA
            ),
            None => "no `schema` field; not an unguard outcomes.json".to_string(),
        };
        return Err(Error::Usage(format!("{}: {why}", path.display())));
    }
    serde_json::from_str(&text)
        .with_context(|| format!("{}: does not match the unguard/1 model", path.display()))
}

/// Write `outcomes.json` into the output dir (as it is serialized: 10,000
/// mutants make ~20 MB of JSON).
pub fn write_outcomes(out: &Path, results: &Results) -> Result<()> {
    let path = out.join("outcomes.json");
    let write = || -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&path)?);
        serde_json::to_writer_pretty(&mut w, results)?;
        w.write_all(b"\n")?;
        w.flush()
    };
    write().with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    use crate::results::{GateResult, Summary, TimeoutPolicy};

    pub(crate) fn mutant(id: &str, outcome: Outcome) -> MutantResult {
        MutantResult {
            id: id.into(),
            control: format!("control | of {id}"),
            rule: None,
            file: "f.py".into(),
            line: 3,
            outcome,
            red_tests: vec![],
            tests_total: Some(4),
            red_counted: None,
            duration_s: 0.5,
            detail: "d".into(),
            reason: None,
            killed_by: vec![],
            exit: None,
            diff_file: None,
            log_file: None,
            spec_pos: "u.yaml:1:1".into(),
            location: None,
            replacement: None,
            sites: 1,
            command: None,
            diff: None,
            tests_ran: vec![],
            allowed: None,
            reset_paths: 0,
            subset_runs: vec![],
            full_suite: true,
            direction: None,
            twin_reported: false,
            fingerprint: None,
            inputs: vec![],
            reused: None,
            network: crate::results::Network::Shared,
        }
    }

    pub(crate) fn results(mutants: Vec<MutantResult>) -> Results {
        Results {
            schema: crate::results::SCHEMA.into(),
            unguard_version: "0".into(),
            fingerprint: None,
            root: ".".into(),
            spec: "u.yaml".into(),
            timeout_policy: TimeoutPolicy::Killed,
            jobs: 1,
            interrupted: false,
            duration_s: 1.0,
            baselines: vec![],
            canaries: vec![],
            subset_checks: vec![],
            coverage_files: vec![],
            summary: Summary::compute(&mutants, TimeoutPolicy::Killed),
            mutants,
            gate: GateResult {
                passed: false,
                exit_code: 2,
                reasons: vec![],
                notes: vec![],
            },
            gate_config: Default::default(),
            thresholds: Default::default(),
            selection: Default::default(),
            sources: Default::default(),
            started_at: None,
            hashes: Default::default(),
        }
    }

    #[test]
    fn findings_put_survivors_first_and_skip_kills() {
        let r = results(vec![
            mutant("a", Outcome::Timeout),
            mutant("b", Outcome::Killed),
            mutant("c", Outcome::Survived),
            mutant("d", Outcome::WrongReason),
            mutant("e", Outcome::NoCoverage),
        ]);
        let ids: Vec<&str> = finding_mutants(&r).iter().map(|m| m.id.as_str()).collect();
        // No-coverage right after the survivors: a finding of the same kind.
        assert_eq!(ids, vec!["c", "e", "d", "a"]);
        let md = markdown::render(&Arc::new(r.clone()), None).unwrap();
        let at = |s: &str| md.find(s).unwrap_or_else(|| panic!("{s}: {md}"));
        let (c, e, d, a) = (
            at("<code>c</code>:"),
            at("<code>e</code>:"),
            at("<code>d</code>:"),
            at("<code>a</code>:"),
        );
        assert!(c < e && e < d && d < a, "{md}");
        assert!(md.contains("🕳️ <b>no-coverage</b> <code>e</code>"), "{md}");
    }

    #[test]
    fn a_finding_is_one_line_whatever_its_reason_quotes() {
        let mut m = mutant("a", Outcome::Survived);
        m.detail = "red test `x\n::error::pwned`\r\nend".into();
        let lines = findings(&results(vec![m]));
        assert_eq!(lines.len(), 1);
        assert!(!lines[0].contains(['\n', '\r']), "{:?}", lines[0]);
        assert!(
            lines[0].contains("`x ::error::pwned` end"),
            "{:?}",
            lines[0]
        );
    }

    #[test]
    fn table_escapes_pipes_in_cells() {
        let t = table(&results(vec![mutant("a", Outcome::Killed)]));
        assert!(t.contains("control \\| of a"), "{t}");
        // Every row has exactly the 7 unescaped separators of 6 columns.
        for line in t.lines() {
            let bars = line.replace("\\|", "").matches('|').count();
            assert_eq!(bars, 7, "{line}");
        }
    }

    /// A writer whose every write fails.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_is_an_io_error_and_a_failed_render_a_template_error() {
        let r = Arc::new(results(vec![mutant("a", Outcome::Survived)]));
        for format in [Format::Md, Format::Json, Format::Html, Format::Sarif] {
            match render_to(&r, format, None, &mut Closed) {
                Err(Error::Io { source, .. }) => {
                    assert_eq!(source.kind(), std::io::ErrorKind::BrokenPipe, "{format:?}")
                }
                other => panic!("{format:?}: {other:?}"),
            }
        }
        let bad = markdown::Template {
            name: "mine.md".into(),
            text: "ok\n{{ nope }}\n".into(),
        };
        let e = render_to(&r, Format::Md, Some(&bad), &mut Vec::new()).unwrap_err();
        assert!(matches!(e, Error::Template { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "mine.md, line 2: undefined value: `nope` is undefined\n    2 | {{ nope }}\n      |    ^^^^"
        );
    }

    #[test]
    fn cells_escape_pipes_and_newlines() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
        assert_eq!(cell(r"x\|"), r"x\\\|");
    }

    #[test]
    fn a_kill_counted_by_a_summary_line_shows_its_count() {
        let mut m = mutant("m", Outcome::Killed);
        m.tests_total = Some(1218);
        m.red_counted = Some(28);
        assert_eq!(red_tests_cell(&m), "28/1218 (summary)");
        m.tests_total = None;
        assert_eq!(red_tests_cell(&m), "28 (summary)");
        // Named red tests win over a count.
        m.tests_total = Some(4);
        m.red_tests = vec!["t::a".into()];
        assert_eq!(red_tests_cell(&m), "1/4 a");
    }
}
