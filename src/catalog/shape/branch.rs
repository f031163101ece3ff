//! The protective-branch shape: an `if` on a protective setting alone
//! (`if readOnly {`, `if settings.read_only:`, `if (!config.readOnly)`,
//! `if m.config.IsRequireOAuth() {`), whatever its body does (refuse, filter
//! tools out, add a middleware). The mutant acts as if the protection were
//! off: a plain test is never taken (`if False:`, `if (false)`, Go
//! `if false && (cond)`), a negated one always (`if True:`, `if (true)`, Go
//! `if true || (cond)`), so every variable stays used.
//!
//! The setting's name must switch a protection on (the protective-setting
//! shape's rule: `read_only`, `strict`, `require*`, `enforce*`, …) and be
//! named by the vocabulary's `settings` terms; a refusal guard on the same
//! `if` wins.

use std::ops::Range;

use ast_grep_core::Node;

use super::super::grammar::Grammar;
use super::super::matcher::Doc;
use super::setting::protects_when_true;
use super::vocab::words;

/// One protective branch found in a file.
#[derive(Debug, Clone)]
pub(crate) struct Branch {
    /// The condition's byte range.
    pub range: Range<usize>,
    /// The condition with the protection off.
    pub replacement: String,
    /// Words of the setting's name.
    pub name: Vec<String>,
    /// 1-based first and last line of the `if`.
    pub lines: (usize, usize),
}

/// The setting a condition tests alone, and whether it is negated: a name,
/// a field (`cfg.ReadOnly`), or a getter call without arguments
/// (`cfg.IsRequireOAuth()`).
fn tested(cond: &str) -> Option<(String, bool)> {
    let mut t = cond.trim();
    while let Some(inner) = t.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
        t = inner.trim();
    }
    let (negated, rest) = if let Some(r) = t.strip_prefix("not ") {
        (true, r.trim())
    } else if let Some(r) = t.strip_prefix('!') {
        (true, r.trim())
    } else {
        (false, t)
    };
    let rest = rest.strip_suffix("()").unwrap_or(rest);
    let ok = !rest.is_empty()
        && rest
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        && !rest.starts_with('.');
    ok.then(|| (rest.rsplit('.').next().unwrap_or(rest).to_string(), negated))
}

/// Every protective branch in a parsed file.
pub(crate) fn branches(g: Grammar, root: &Node<'_, Doc>) -> Vec<Branch> {
    let mut out = Vec::new();
    for n in root.dfs() {
        if !matches!(n.kind().as_ref(), "if_statement" | "elif_clause") {
            continue;
        }
        let Some(cond) = n.field("condition") else {
            continue;
        };
        let ctext = cond.text().to_string();
        let Some((name, negated)) = tested(&ctext) else {
            continue;
        };
        // `IsRequireOAuth` reads as `require oauth`: the getter's `is` goes.
        let mut w = words(&name);
        if w.len() > 1 && matches!(w[0].as_str(), "is" | "get" | "should") {
            w.remove(0);
        }
        if !protects_when_true(&w) {
            continue;
        }
        let replacement = match (g, negated) {
            (Grammar::Python, false) => "False".to_string(),
            (Grammar::Python, true) => "True".to_string(),
            (Grammar::Go, false) => format!("false && ({ctext})"),
            (Grammar::Go, true) => format!("true || ({ctext})"),
            (_, false) => "(false)".to_string(),
            (_, true) => "(true)".to_string(),
        };
        out.push(Branch {
            range: cond.range(),
            replacement,
            name: w,
            lines: (n.start_pos().line() + 1, n.end_pos().line() + 1),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ast_grep_core::AstGrep;

    fn found(file: &str, code: &str) -> Vec<String> {
        let g = Grammar::for_path(file).unwrap();
        let tree: AstGrep<Doc> = AstGrep::try_new(code, g).unwrap();
        branches(g, &tree.root())
            .into_iter()
            .map(|b| {
                let mut s = code.to_string();
                s.replace_range(b.range.clone(), &b.replacement);
                s.lines().nth(b.lines.0 - 1).unwrap().trim().to_string()
            })
            .collect()
    }

    #[test]
    fn branches_on_a_protection_act_as_if_it_were_off() {
        let go = "package p\n\nfunc f(cfg *C) {\n\tif cfg.ReadOnly {\n\t\ttools = readTools\n\t}\n\tif !m.config.IsRequireOAuth() {\n\t\treturn\n\t}\n\tif cfg.Debug {\n\t\tlog()\n\t}\n\tif allowWrites {\n\t\tw()\n\t}\n}\n";
        assert_eq!(
            found("a.go", go),
            [
                "if false && (cfg.ReadOnly) {",
                "if true || (!m.config.IsRequireOAuth()) {",
            ]
        );
        let py = "def f(s):\n    if s.read_only:\n        return read_tools\n    if x.strict and y:\n        pass\n";
        assert_eq!(found("a.py", py), ["if False:"]);
        let ts = "if (!config.readOnly) registerWriteTools();\n";
        assert_eq!(found("a.ts", ts), ["if (true) registerWriteTools();"]);
    }
}
