//! The error-result shape: a tool result that tells the client its call
//! failed (MCP's `isError`), the form every failure a server reports takes
//! on the wire. The mutant reports the failure as a success:
//!
//! - TypeScript/JavaScript: an `isError: true` property becomes
//!   `isError: false`;
//! - Python: an `isError=True` (or `is_error=True`) keyword argument
//!   (`CallToolResult(isError=True, …)`) becomes `False`, a `"isError": True`
//!   dict entry likewise;
//! - Go: mcp-go's `mcp.NewToolResultError(msg)` becomes
//!   `mcp.NewToolResultText(msg)` (same signature, no error flag), a keyed
//!   `IsError: true` becomes `false`.
//!
//! A test that calls the tool with a failing upstream or a refused input and
//! checks `isError` kills it; one that only reads the text does not.

use std::ops::Range;

use ast_grep_core::Node;

use super::super::grammar::Grammar;
use super::super::matcher::Doc;
use super::setting::go_keyed;

/// The control an error result is a site of.
pub(crate) const CONTROL: &str = "transport-error-is-error";

/// One error result found in a file.
#[derive(Debug, Clone)]
pub(crate) struct ErrorResult {
    /// What the mutant replaces.
    pub range: Range<usize>,
    /// The success it reports instead.
    pub replacement: String,
    /// The result as written (evidence).
    pub text: String,
}

fn is_error_key(key: &str) -> bool {
    matches!(
        key.trim_matches(['"', '\'']),
        "isError" | "is_error" | "IsError"
    )
}

/// Every error result in a parsed file.
pub(crate) fn error_results(g: Grammar, root: &Node<'_, Doc>) -> Vec<ErrorResult> {
    let mut out = Vec::new();
    for n in root.dfs() {
        let kind = n.kind();
        let (key, value) = match (g, kind.as_ref()) {
            (Grammar::TypeScript | Grammar::Tsx, "pair") | (Grammar::Python, "pair") => {
                (n.field("key"), n.field("value"))
            }
            (Grammar::Python, "keyword_argument") => (n.field("name"), n.field("value")),
            (Grammar::Go, "keyed_element") => match go_keyed(&n) {
                Some((k, v)) => (Some(k), Some(v)),
                None => continue,
            },
            (Grammar::Go, "call_expression") => {
                let Some(f) = n.field("function") else {
                    continue;
                };
                let ft = f.text();
                let single = n
                    .field("arguments")
                    .is_some_and(|a| a.named_children().count() == 1);
                // mcp-go's own constructor only: a package's look-alike may
                // have no `NewToolResultText` beside it.
                if single && ft == "mcp.NewToolResultError" {
                    let text = ft.replace("NewToolResultError", "NewToolResultText");
                    out.push(ErrorResult {
                        range: f.range(),
                        replacement: text,
                        text: n.text().to_string(),
                    });
                }
                continue;
            }
            _ => continue,
        };
        let (Some(key), Some(value)) = (key, value) else {
            continue;
        };
        if !is_error_key(&key.text()) {
            continue;
        }
        let replacement = match value.text().as_ref() {
            "true" => "false",
            "True" => "False",
            _ => continue,
        };
        out.push(ErrorResult {
            range: value.range(),
            replacement: replacement.to_string(),
            text: n.text().to_string(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    fn mutated(file: &str, code: &str) -> Vec<String> {
        testing::found(file, code, error_results)
            .into_iter()
            .map(|r| testing::edited(code, &r.range, &r.replacement))
            .collect()
    }

    #[test]
    fn an_error_result_reports_success_in_every_language() {
        let ts = "function f(e: Error) {\n  if (!e) return { content: [] };\n  return { content: [{ type: 'text', text: e.message }], isError: true };\n}\nconst ok = { isError: false };\n";
        let m = mutated("t.ts", ts);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(
            m[0].contains("text: e.message }], isError: false };"),
            "{}",
            m[0]
        );
        let py = "def f(e):\n    return CallToolResult(content=[], isError=True)\n\ndef g():\n    return {\"isError\": True, \"content\": []}\n\ndef h():\n    return run(strict=True)\n";
        let m = mutated("t.py", py);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m[0].contains("isError=False)"), "{}", m[0]);
        assert!(m[1].contains("{\"isError\": False,"), "{}", m[1]);
        let go = "package p\n\nfunc f(err error) (*mcp.CallToolResult, error) {\n\tif err != nil {\n\t\treturn mcp.NewToolResultError(err.Error()), nil\n\t}\n\treturn &mcp.CallToolResult{IsError: true}, nil\n}\n\nvar r = mcp.NewToolResultErrorFromErr(\"x\", nil)\nvar u = NewToolResultError(\"x\")\n";
        let m = mutated("t.go", go);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(
            m[0].contains("return mcp.NewToolResultText(err.Error()), nil"),
            "{}",
            m[0]
        );
        assert!(m[1].contains("CallToolResult{IsError: false}"), "{}", m[1]);
    }
}
