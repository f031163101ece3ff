//! `unguard init`: a starter unguard.yaml from what the catalog found. One
//! concrete single-site mutation per catalog site (the same mutations
//! `unguard audit` runs), the detected test command, and the semantic
//! controls no pattern can find as commented templates to anchor by hand.

use crate::audit::{applicable, rule_text, Survey};
use crate::catalog::OperatorKind;
use crate::spec::{Command, TestConfig};

/// A YAML double-quoted scalar (JSON string syntax is valid YAML).
fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The line of `source` at 1-based `line`, trimmed and shortened for a comment.
fn line_text(source: &str, line: usize) -> String {
    let t = source
        .lines()
        .nth(line.saturating_sub(1))
        .unwrap_or("")
        .trim();
    let mut out: String = t.chars().take(100).collect();
    if t.chars().count() > 100 {
        out.push('…');
    }
    out.replace(['\r', '\n'], " ")
}

/// The whole unguard.yaml text.
pub fn render(survey: &Survey, test: &TestConfig, test_reason: &str) -> String {
    let mut y = String::new();
    y.push_str("# unguard.yaml, written by `unguard init`.\n");
    y.push_str("# Each mutation removes one security control the built-in catalog found.\n");
    y.push_str("# Review them (drop the ones that are not controls), name the negative test\n");
    y.push_str("# that must fail under `expect.killed_by`, then commit this file:\n");
    y.push_str("# from then on `unguard run` is exact and stable. `unguard check` validates it.\n");
    y.push_str("version: 1\ntest:\n");
    let command = match &test.command {
        Command::Shell(s) => q(s),
        Command::Argv(v) => format!(
            "[{}]",
            v.iter().map(|a| q(a)).collect::<Vec<_>>().join(", ")
        ),
    };
    y.push_str(&format!("  command: {command}   # {test_reason}\n"));
    if let Some(j) = &test.junit {
        y.push_str(&format!("  junit: {}\n", q(j)));
    }
    y.push_str(&format!("  preset: {}\n", test.preset));
    y.push_str("  timeout: auto          # max(20s, 5 × the baseline's duration)\n");
    if survey.found.is_empty() {
        y.push_str(
            "mutations: []            # the catalog found no control: see the comments below\n",
        );
    } else {
        y.push_str("mutations:\n");
    }
    push_mutations(&mut y, survey);
    push_unproven(&mut y, survey);
    y
}

/// One commented entry per control site the catalog found, with the
/// source line it changes.
fn push_mutations(y: &mut String, survey: &Survey) {
    let mut sources = std::collections::BTreeMap::new();
    for f in &survey.found {
        let source: &String = sources.entry(f.site.file.clone()).or_insert_with(|| {
            String::from_utf8_lossy(
                &std::fs::read(survey.root.join(&f.site.file)).unwrap_or_default(),
            )
            .into_owned()
        });
        y.push_str(&format!(
            "  # {}:{}: {}\n",
            f.site.file,
            f.site.changed_line,
            line_text(source, f.site.changed_line)
        ));
        y.push_str(&format!("  - id: {}\n", f.id));
        y.push_str(&format!(
            "    control: {}\n",
            q(f.operator.mutant_control())
        ));
        y.push_str(&format!("    rule: {}\n", q(&rule_text(f.operator))));
        if let Some(d) = f.operator.direction {
            y.push_str(&format!("    direction: {}\n", d.as_str()));
        }
        y.push_str(&format!("    file: {}\n", q(&f.site.file)));
        y.push_str(&format!("    find: {}\n", q(&f.find)));
        y.push_str(&format!("    replace: {}\n", q(&f.replace)));
        y.push_str("    exact_whitespace: true\n");
        if f.operator.direction == Some(crate::results::Direction::Tighten) {
            // Seed 002 rule 5: a narrowing mutant is killed by the positive twin.
            y.push_str("    # expect: {killed_by: [\"tests/test_x.py::test_the_accepted_case\"]}   # the positive twin\n");
        } else {
            y.push_str(
                "    # expect: {killed_by: [\"tests/test_x.py::test_the_negative_case\"]}\n",
            );
        }
    }
}

/// The comments after the mutations: controls found by presence only,
/// expected controls not found, and the templates of semantic controls.
fn push_unproven(y: &mut String, survey: &Survey) {
    if !survey.present.is_empty() {
        y.push_str("\n# Found, and checked by presence only (no test can kill their mutant):\n");
        for (op, site) in &survey.present {
            y.push_str(&format!(
                "#   {} ({}) at {}:{}\n",
                op.id,
                rule_text(op),
                site.file,
                site.changed_line
            ));
        }
    }
    let missing: Vec<_> = survey
        .operators
        .iter()
        .filter(|op| {
            op.expected
                && !survey.found.iter().any(|f| f.operator.id == op.id)
                && !survey.present.iter().any(|(o, _)| o.id == op.id)
        })
        .collect();
    if !missing.is_empty() {
        y.push_str("\n# Controls an MCP server should have that the catalog did not find here\n");
        y.push_str("# (absent, or written in a way no pattern matches): check them by hand.\n");
        for op in missing {
            y.push_str(&format!(
                "#   {} ({}): {}\n",
                op.id,
                rule_text(op),
                op.control
            ));
        }
    }
    let templates = applicable(&survey.detected, OperatorKind::Template);
    if !templates.is_empty() {
        y.push_str("\n# Semantic controls no pattern can find. To prove one, copy its template\n");
        y.push_str("# into `mutations:` above, uncomment it and anchor `find` on your code.\n");
        for op in templates {
            y.push_str(&format!(
                "#\n# {} ({}): {}\n",
                op.id,
                rule_text(op),
                op.control
            ));
            if let Some(t) = &op.template {
                for line in t.lines() {
                    y.push_str(&format!("#   {line}\n"));
                }
            }
        }
    }
}
