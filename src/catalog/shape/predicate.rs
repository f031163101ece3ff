//! The security-predicate shape: a function named like a check
//! (`is_allowed`, `validate_*`, `verify*`, `check*`, `*Allowed`) that
//! returns a boolean (Go: also `error`), whose result some refusal guard
//! tests. The mutant makes it always accept: it returns the accepting value
//! before its first statement. Which value accepts is read from the guards
//! that call it: `if not is_allowed(x): raise` refuses on `False`, so `True`
//! accepts; `if is_blocked(x): raise` refuses on `True`, so `False` accepts.
//! A function called both ways is left alone.
//!
//! The early return keeps every language compiling: Python `return True`,
//! TypeScript `if (true) return true;` (no unreachable-code error), Go
//! `if true { return true }` (no unreachable code for `go vet`, parameters
//! may stay unused).

use std::ops::Range;

use ast_grep_core::Node;

use super::super::grammar::Grammar;
use super::super::matcher::Doc;
use super::refusal::check_name;
use super::vocab::{words, Evidence};

/// What a predicate returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Returns {
    /// A boolean.
    Bool,
    /// Go `(bool, error)`.
    BoolError,
    /// Go `error` (nil accepts).
    Error,
}

/// One check function found in a file.
#[derive(Debug, Clone)]
pub(crate) struct Predicate {
    /// Its name as callers write it.
    pub name: String,
    /// The first statement of its body (where the early return goes).
    pub range: Range<usize>,
    /// The indentation of that statement.
    pub indent: String,
    /// What it returns.
    pub returns: Returns,
    /// The words that name its control (its name and body).
    pub evidence: Evidence,
}

impl Predicate {
    /// The text replacing the first statement (`original`): an early return
    /// of the accepting value, then the statement.
    pub fn mutant(&self, g: Grammar, accept: bool, original: &str) -> String {
        let ind = &self.indent;
        match (g, self.returns) {
            (Grammar::Python, _) => {
                let v = if accept { "True" } else { "False" };
                format!("return {v}\n{ind}{original}")
            }
            (Grammar::TypeScript | Grammar::Tsx, _) => {
                format!("if (true) return {accept};\n{ind}{original}")
            }
            (Grammar::Go, r) => {
                let v = match r {
                    Returns::Bool => accept.to_string(),
                    Returns::BoolError => format!("{accept}, nil"),
                    Returns::Error => "nil".to_string(),
                };
                format!("if true {{\n{ind}\treturn {v}\n{ind}}}\n{ind}{original}")
            }
        }
    }
}

/// What a function returns, when it is a predicate's type.
fn returns(g: Grammar, f: &Node<'_, Doc>, body: &Node<'_, Doc>) -> Option<Returns> {
    let declared = match g {
        Grammar::Go => f.field("result"),
        _ => f.field("return_type"),
    }
    .map(|t| t.text().replace(' ', ""));
    match (g, declared.as_deref()) {
        (Grammar::Go, Some("bool")) => Some(Returns::Bool),
        (Grammar::Go, Some("(bool,error)")) => Some(Returns::BoolError),
        (Grammar::Go, Some("error")) => Some(Returns::Error),
        (Grammar::Go, _) => None,
        (Grammar::Python, Some("bool")) => Some(Returns::Bool),
        (_, Some(":boolean" | ":Promise<boolean>")) => Some(Returns::Bool),
        (_, Some(_)) => None,
        (Grammar::Python, None) => {
            let t = body.text();
            (t.contains("return True") || t.contains("return False")).then_some(Returns::Bool)
        }
        (_, None) => {
            let t = body.text();
            (t.contains("return true") || t.contains("return false")).then_some(Returns::Bool)
        }
    }
}

/// Every function in a parsed file that reads like a check and returns a
/// verdict; whether something calls it from a guard is decided later.
pub(crate) fn predicates(g: Grammar, root: &Node<'_, Doc>, source: &str) -> Vec<Predicate> {
    let mut out = Vec::new();
    for f in root.dfs() {
        if !matches!(
            f.kind().as_ref(),
            "function_definition"
                | "function_declaration"
                | "method_declaration"
                | "method_definition"
        ) {
            continue;
        }
        let Some(name) = f.field("name").map(|n| n.text().to_string()) else {
            continue;
        };
        let Some(body) = f.field("body") else {
            continue;
        };
        if !check_name(&name) {
            continue;
        }
        let Some(ret) = returns(g, &f, &body) else {
            continue;
        };
        // Python: the early return goes after the docstring.
        let is_doc = |n: &Node<'_, Doc>| {
            g == Grammar::Python
                && n.kind() == "expression_statement"
                && n.child(0).is_some_and(|c| c.kind() == "string")
        };
        let Some(first) = super::refusal::statements(&body)
            .into_iter()
            .find(|n| !is_doc(n))
        else {
            continue;
        };
        // The statement must start its line (a one-line body has no indent).
        let start = first.range().start;
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let indent = &source[line_start..start];
        if !indent.chars().all(|c| c == ' ' || c == '\t') {
            continue;
        }
        // Python: a function that yields is a generator, not a verdict.
        if g == Grammar::Python && body.dfs().any(|n| n.kind() == "yield") {
            continue;
        }
        let body_text: String = body.text().lines().take(40).collect::<Vec<_>>().join("\n");
        out.push(Predicate {
            name: name.clone(),
            range: first.range(),
            indent: indent.to_string(),
            returns: ret,
            evidence: Evidence {
                site: words(&name),
                refusal: words(&body_text),
                ..Default::default()
            },
        });
    }
    out
}
