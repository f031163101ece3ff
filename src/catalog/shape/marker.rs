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
//!   out: `argument-injection-refused`.

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
}

impl Kind {
    /// The catalog control it is a site of.
    pub fn control(self) -> &'static str {
        match self {
            Kind::FileMode => "secret-redacted",
            Kind::EndOfOptions => "argument-injection-refused",
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

/// Every protective literal in a parsed file.
pub(crate) fn markers(g: Grammar, root: &Node<'_, Doc>) -> Vec<Marker> {
    let mut out = Vec::new();
    for n in root.dfs() {
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
        testing::found(file, code, markers)
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
