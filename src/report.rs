//! Rendering the results model: the Markdown table (terminal and PR comment)
//! and the files of the output directory.

use std::path::Path;

use anyhow::{Context, Result};
use tabled::builder::Builder;
use tabled::settings::Style;

use crate::gate::is_finding;
use crate::results::{MutantResult, Outcome, Results};

/// Make a string safe inside a Markdown table cell.
pub fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

fn short_test_name(id: &str) -> &str {
    id.rsplit("::").next().unwrap_or(id)
}

/// `N/M` plus the first red tests' short names.
pub fn red_tests_cell(m: &MutantResult) -> String {
    let n = m.red_tests.len();
    let count = match m.tests_total {
        Some(total) => format!("{n}/{total}"),
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

fn site(m: &MutantResult) -> String {
    if m.line > 0 {
        format!("{}:{}", m.file, m.line)
    } else {
        m.file.clone()
    }
}

/// The killed/survived table in Markdown.
pub fn table(results: &Results) -> String {
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
            cell(&m.control),
            cell(&site(m)),
            m.outcome.as_str().to_string(),
            cell(&red_tests_cell(m)),
            format!("{:.1}s", m.duration_s),
        ]);
    }
    let mut t = b.build();
    t.with(Style::markdown());
    t.to_string()
}

/// Findings below the table: everything that is not a clean kill.
pub fn findings(results: &Results) -> Vec<String> {
    let mut out = Vec::new();
    // Survivors first: they are the findings.
    let order = [
        Outcome::Survived,
        Outcome::WrongReason,
        Outcome::Timeout,
        Outcome::Unreached,
        Outcome::Unviable,
        Outcome::NoOp,
        Outcome::Ambiguous,
    ];
    for o in order {
        for m in results
            .mutants
            .iter()
            .filter(|m| m.outcome == o && is_finding(o))
        {
            out.push(format!(
                "{} {}: {} ({})",
                o.as_str(),
                m.id,
                m.detail,
                m.spec_pos
            ));
        }
    }
    out
}

/// The whole Markdown report (the PR comment).
pub fn markdown(results: &Results) -> String {
    let mut s = String::new();
    s.push_str("<!-- unguard -->\n");
    let verdict = if results.gate.passed {
        "passed"
    } else {
        "failed"
    };
    s.push_str(&format!(
        "## unguard: security-control mutation test {verdict}\n\n"
    ));
    s.push_str(&format!("{}\n\n", results.summary.line()));
    for r in &results.gate.reasons {
        s.push_str(&format!("- {}\n", cell(r)));
    }
    if !results.gate.reasons.is_empty() {
        s.push('\n');
    }
    s.push_str(&table(results));
    s.push('\n');
    let findings: Vec<&MutantResult> = results
        .mutants
        .iter()
        .filter(|m| m.outcome != Outcome::Killed)
        .collect();
    if !findings.is_empty() {
        s.push_str("\n### Findings\n");
        for m in findings {
            s.push_str(&format!(
                "\n**{}** `{}` — {}\n",
                m.outcome.as_str(),
                m.id.replace('`', "'"),
                cell(&m.detail)
            ));
        }
    }
    s
}

/// Write `outcomes.json` into the output dir.
pub fn write_outcomes(out: &Path, results: &Results) -> Result<()> {
    let json = serde_json::to_string_pretty(results)?;
    std::fs::write(out.join("outcomes.json"), json + "\n")
        .with_context(|| format!("writing {}", out.join("outcomes.json").display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_escape_pipes_and_newlines() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
        assert_eq!(cell(r"x\|"), r"x\\\|");
    }
}
