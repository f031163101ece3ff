//! Two protective literals, each a control on its own whatever the code
//! around it is called:
//!
//! - a **private file mode**: an octal permission that gives the group and
//!   others nothing (`0o600`, `0o700`, Go `0600`), where a token cache, a
//!   key or a temporary file with secrets is written
//!   (`fs.writeFileSync(p, token, { mode: 0o600 })`, `path.chmod(0o600)`,
//!   `os.WriteFile(p, b, 0600)`). The mutant gives them the owner's bits
//!   (`0o666`, `0o777`): `secret-redacted`, the secret readable by every
//!   local user;
//! - an **end-of-options marker**: `"--"` in an argument vector
//!   (`args.push("--", ...input.command)`, `["git", "log", "--", path]`,
//!   `exec.Command("git", "checkout", "--", ref, ".")`), after which a
//!   value starting with `-` is not read as an option. The mutant leaves it
//!   out: `argument-injection-refused`;
//! - a **redaction marker**: a placeholder put where a secret would go
//!   (`"***"`, `"[REDACTED]"`, `"***redacted***"`, a constant named
//!   `REDACTED_…`), chosen by a condition (`"***" if k in REDACT_ARGS else
//!   v`, `p.client_secret ? REDACTED_SECRET : null`) or written over a
//!   field (`settings["dbt_token"] = "***redacted***"`). The mutant lets the
//!   value through: the condition's other branch (or, when that is empty,
//!   the value the condition tested), the overwrite not done:
//!   `secret-redacted`.

use std::ops::Range;

use ast_grep_core::Node;

use super::super::grammar::Grammar;
use super::super::matcher::Doc;

/// Which literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A private file mode.
    FileMode,
    /// An end-of-options marker.
    EndOfOptions,
    /// A redaction marker put in place of a value.
    Redaction,
}

impl Kind {
    /// The catalog control it is a site of.
    pub fn control(self) -> &'static str {
        match self {
            Kind::FileMode => "secret-redacted",
            Kind::EndOfOptions => "argument-injection-refused",
            Kind::Redaction => "secret-redacted",
        }
    }
}

/// One protective literal found in a file.
#[derive(Debug, Clone)]
pub(crate) struct Marker {
    /// What the mutant replaces.
    pub range: Range<usize>,
    /// Its replacement.
    pub replacement: String,
    /// Which literal.
    pub kind: Kind,
    /// The literal as written (evidence).
    pub text: String,
}

/// The mode with the group's and others' bits set to the owner's, if `text`
/// is an octal permission that gives them nothing (`0o600` → `0o666`).
fn opened_mode(g: Grammar, text: &str) -> Option<String> {
    let (prefix, digits) = if let Some(d) = text.strip_prefix("0o").or(text.strip_prefix("0O")) {
        (&text[..2], d)
    } else if g == Grammar::Go && text.len() == 4 && text.starts_with('0') {
        ("0", &text[1..])
    } else {
        return None;
    };
    if digits.len() != 3 || !digits.chars().all(|c| ('0'..='7').contains(&c)) {
        return None;
    }
    let owner = digits.chars().next()?;
    if !matches!(owner, '4' | '5' | '6' | '7') || &digits[1..] != "00" {
        return None;
    }
    Some(format!("{prefix}{owner}{owner}{owner}"))
}

fn is_number(kind: &str) -> bool {
    matches!(kind, "integer" | "number" | "int_literal")
}

fn is_argument_vector(kind: &str) -> bool {
    matches!(
        kind,
        "arguments" | "argument_list" | "array" | "list" | "literal_value"
    )
}

/// The string a literal node holds, without its quotes.
fn string_value(n: &Node<'_, Doc>) -> Option<String> {
    let k = n.kind();
    if !matches!(
        k.as_ref(),
        "string" | "interpreted_string_literal" | "raw_string_literal"
    ) {
        return None;
    }
    let t = n.text();
    Some(t.trim_matches(['"', '\'', '`']).to_string())
}

/// Whether an expression is a redaction marker: a string that holds only a
/// placeholder (`"***"`, `"[REDACTED]"`, `"***redacted***"`, `"<masked>"`,
/// `"XXXX"`), or a name whose words say it holds one (`REDACTED_SECRET`,
/// `self.REDACTED_VALUE`).
fn is_redaction(n: &Node<'_, Doc>) -> bool {
    if let Some(v) = string_value(n) {
        if v.contains('{') {
            return false;
        }
        let core = v
            .trim_matches(|c: char| "[]<>()*-_ ".contains(c))
            .to_ascii_lowercase();
        let stars = v.len() >= 3 && v.chars().all(|c| c == '*');
        let xs = v.len() >= 4 && v.chars().all(|c| c == 'x' || c == 'X');
        return stars
            || xs
            // Not `"hidden"` or `"removed"`: a CSS visibility, a status.
            || matches!(core.as_str(), "redacted" | "masked");
    }
    matches!(
        n.kind().as_ref(),
        "identifier" | "attribute" | "member_expression" | "selector_expression"
    ) && {
        let t = n.text();
        let last = t.rsplit('.').next().unwrap_or("");
        super::vocab::words(last)
            .iter()
            .any(|w| matches!(w.as_str(), "redacted" | "masked"))
    }
}

/// Whether an expression is an empty value (`None`, `null`, `undefined`,
/// `nil`, `""`).
fn is_empty_value(n: &Node<'_, Doc>) -> bool {
    matches!(
        n.text().trim(),
        "None" | "null" | "undefined" | "nil" | "\"\"" | "''"
    )
}

/// The redaction a node makes, as the range the mutant replaces and the
/// replacement that lets the value through (`typed`: TypeScript, where the
/// value is cast to the marker's type).
fn redaction(g: Grammar, typed: bool, n: &Node<'_, Doc>) -> Option<(Range<usize>, String)> {
    match (g, n.kind().as_ref()) {
        (Grammar::Python, "conditional_expression") | (_, "ternary_expression") => {
            let (a, cond, b) = if g == Grammar::Python {
                let k: Vec<Node<'_, Doc>> = n
                    .named_children()
                    .filter(|c| c.kind() != "comment")
                    .collect();
                if k.len() != 3 {
                    return None;
                }
                (k[0].clone(), k[1].clone(), k[2].clone())
            } else {
                (
                    n.field("consequence")?,
                    n.field("condition")?,
                    n.field("alternative")?,
                )
            };
            let other = match (is_redaction(&a), is_redaction(&b)) {
                (true, false) => b,
                (false, true) => a,
                _ => return None,
            };
            // Two masks (`v[:3] + "*" * n + v[-3:] if len(v) > 6 else
            // "****"`): nothing leaks either way.
            let masks = |d: &Node<'_, Doc>| {
                is_redaction(d)
                    || string_value(d).is_some_and(|v| !v.is_empty() && v.chars().all(|c| c == '*'))
            };
            if other.dfs().any(|d| masks(&d)) {
                return None;
            }
            // `x ? REDACTED : null`: what leaks is the value tested.
            let leak = if is_empty_value(&other) {
                let c = cond.text().to_string();
                let simple = c
                    .chars()
                    .all(|ch| ch.is_alphanumeric() || ch == '_' || ch == '.' || ch == '?');
                if !simple {
                    return None;
                }
                c
            } else {
                other.text().to_string()
            };
            let leak = if typed {
                format!("({leak} as unknown as never)")
            } else {
                format!("({leak})")
            };
            Some((n.range(), leak))
        }
        (Grammar::Python, "assignment")
        | (Grammar::TypeScript | Grammar::Tsx, "assignment_expression") => {
            // `settings["token"] = "***"`: a field overwritten (not a constant
            // defined). The mutant does not write it.
            let (fields, skip): (&[&str], &str) = match g {
                Grammar::Python => (&["subscript", "attribute"], "pass"),
                _ => (&["subscript_expression", "member_expression"], ";"),
            };
            let left = n.field("left")?;
            let right = n.field("right")?;
            if !fields.contains(&left.kind().as_ref()) || !is_redaction(&right) {
                return None;
            }
            let stmt = n.parent().filter(|p| p.kind() == "expression_statement")?;
            Some((stmt.range(), skip.to_string()))
        }
        (Grammar::Go, "assignment_statement") => {
            let left = n.field("left")?;
            let right = n.field("right")?;
            let one = |l: &Node<'_, Doc>| l.named_children().count() == 1;
            let target = left.named_children().next()?;
            if !one(&left)
                || !one(&right)
                || !matches!(
                    target.kind().as_ref(),
                    "selector_expression" | "index_expression"
                )
                || !is_redaction(&right.named_children().next()?)
            {
                return None;
            }
            // `x.Password = "***"` → `_ = x.Password`: every name stays used.
            Some((n.range(), format!("_ = {}", target.text())))
        }
        _ => None,
    }
}

/// Every protective literal in a parsed file (`typed`: a TypeScript file,
/// not JavaScript).
pub(crate) fn markers(g: Grammar, typed: bool, root: &Node<'_, Doc>) -> Vec<Marker> {
    let mut out = Vec::new();
    for n in root.dfs() {
        if let Some((range, replacement)) = redaction(g, typed, &n) {
            out.push(Marker {
                range,
                replacement,
                kind: Kind::Redaction,
                text: n.text().lines().next().unwrap_or("").trim().to_string(),
            });
            continue;
        }
        let kind = n.kind();
        if is_number(&kind) {
            if let Some(m) = opened_mode(g, &n.text()) {
                out.push(Marker {
                    range: n.range(),
                    replacement: m,
                    kind: Kind::FileMode,
                    text: n.text().to_string(),
                });
            }
            continue;
        }
        if string_value(&n).as_deref() != Some("--") {
            continue;
        }
        // A Go literal_element wraps its value; the vector is one up.
        let (item, parent) = match n.parent() {
            Some(p) if p.kind() == "literal_element" => {
                let gp = p.parent();
                (p, gp)
            }
            p => (n.clone(), p),
        };
        let Some(parent) = parent else {
            continue;
        };
        if !is_argument_vector(&parent.kind()) {
            continue;
        }
        // Cut the marker and the separator after it (or before it, when it
        // comes last), so the vector stays well formed.
        let items: Vec<Node<'_, Doc>> = parent
            .named_children()
            .filter(|c| c.kind() != "comment")
            .collect();
        let Some(i) = items.iter().position(|c| c.range() == item.range()) else {
            continue;
        };
        let range = if let Some(next) = items.get(i + 1) {
            item.range().start..next.range().start
        } else if i > 0 {
            // Go: `append(args, "--")` without values is flagged by vet.
            if g == Grammar::Go {
                continue;
            }
            items[i - 1].range().end..item.range().end
        } else {
            continue;
        };
        out.push(Marker {
            range,
            replacement: String::new(),
            kind: Kind::EndOfOptions,
            text: n.text().to_string(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    fn mutated(file: &str, code: &str) -> Vec<(Kind, String)> {
        let typed = file.ends_with(".ts");
        testing::found(file, code, |g, r| markers(g, typed, r))
            .into_iter()
            .map(|m| (m.kind, testing::edited(code, &m.range, &m.replacement)))
            .collect()
    }

    #[test]
    fn a_private_file_mode_is_opened_to_everyone() {
        let py = "p.chmod(0o600)\nd.mkdir(mode=0o700)\nos.chmod(p, 0o644)\nn = 600\n";
        let m = mutated("a.py", py);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m[0].1.starts_with("p.chmod(0o666)\n"));
        assert!(m[1].1.contains("d.mkdir(mode=0o777)"));
        let go = "package p\n\nfunc f(b []byte) error { return os.WriteFile(\"t\", b, 0600) }\n\nconst n = 0755\n";
        let m = mutated("a.go", go);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(m[0].1.contains("os.WriteFile(\"t\", b, 0666)"));
        let ts = "fs.writeFileSync(p, t, { mode: 0o600 });\n";
        assert!(mutated("a.ts", ts)[0].1.contains("{ mode: 0o666 }"));
    }

    #[test]
    fn a_redaction_marker_lets_the_value_through() {
        let py = "REDACTED = '***'\ndef f(args, settings, tok, v):\n    settings['dbt_token'] = '***redacted***'\n    safe = {k: '***' if k in REDACT_ARGS else v for k, v in args.items()}\n    s = f\"t={'[REDACTED]' if tok else None}\"\n    m = v[:3] + '*' * 4 if len(v) > 6 else '****'\n    auth_type = '<redacted>'\n    return v == REDACTED\n";
        let m: Vec<String> = mutated("a.py", py)
            .into_iter()
            .filter(|(k, _)| *k == Kind::Redaction)
            .map(|(_, code)| code)
            .collect();
        assert_eq!(m.len(), 3, "{m:?}");
        assert!(m[0].contains("    pass\n    safe"), "{}", m[0]);
        assert!(m[1].contains("{k: (v) for k, v"), "{}", m[1]);
        assert!(m[2].contains("f\"t={(tok)}\""), "{}", m[2]);
        let ts = "const o = { s: p.client_secret ? REDACTED_SECRET : null, n: x ? cfg.noRedaction : b, t: isSecret(k) ? '***' : null };\nbody.password = '[REDACTED]';\nconst REDACTED_VALUE = '[REDACTED]';\n";
        let m = mutated("a.ts", ts);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(
            m[0].1.contains("s: (p.client_secret as unknown as never),"),
            "{}",
            m[0].1
        );
        assert!(m[1].1.contains("\n;\nconst REDACTED_VALUE"), "{}", m[1].1);
        let js = "const o = { s: p.secret ? '***' : null, v: shown ? 'visible' : 'hidden' };\n";
        let m = mutated("a.js", js);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(m[0].1.contains("s: (p.secret), v:"), "{}", m[0].1);
        let go = "package p\n\nfunc f(c *C) {\n\tc.Password = \"[REDACTED]\"\n\tredacted := \"***\"\n\t_ = redacted\n}\n";
        let m = mutated("a.go", go);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(m[0].1.contains("\t_ = c.Password\n"), "{}", m[0].1);
    }

    #[test]
    fn an_end_of_options_marker_is_left_out() {
        let ts = "args.push(\"--\", ...input.command);\nconst a = [\"log\", \"--\"];\nif (x === \"--\") {}\n";
        let m = mutated("a.ts", ts);
        assert_eq!(m.len(), 2, "{m:?}");
        assert_eq!(m[0].0, Kind::EndOfOptions);
        assert!(
            m[0].1.starts_with("args.push(...input.command);"),
            "{}",
            m[0].1
        );
        assert!(m[1].1.contains("const a = [\"log\"];"), "{}", m[1].1);
        let py = "subprocess.run([\"git\", \"log\", \"--\", path])\n";
        assert!(mutated("a.py", py)[0]
            .1
            .contains("[\"git\", \"log\", path]"));
        let go = "package p\n\nfunc f(ref string) (string, error) { _ = exec.Command(\"git\", \"checkout\", \"--\", ref); _ = append([]string{}, \"--\"); return \"--\", nil }\n";
        let m = mutated("a.go", go);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(
            m[0].1.contains("exec.Command(\"git\", \"checkout\", ref)"),
            "{}",
            m[0].1
        );
    }
}
