//! The PR comment: Markdown rendered from `templates/pr-comment.md` (minijinja).

use anyhow::Result;

use super::{cell, finding_mutants, table};
use crate::results::Results;

pub fn render(results: &Results, _template: Option<&str>) -> Result<String> {
    Ok(markdown(results))
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
    let findings = finding_mutants(results);
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
