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
//! `if` wins. A risky feature's switch (`if allow_writes:`, `if
//! p.skipTLSVerify {`) acts as if the feature were on.
//!
//! A check called alone in the condition gates what is done the same way
//! (`if r.isToolEnabled(ctx, t) { add(t) }`, `if is_path_excluded(p): continue`):
//! its name says which answer lets a request through (allow-list words:
//! `allow*`, `enabled`, `permit*`, `safe`, `valid`…; block-list words:
//! `block*`, `deny`, `exclud*`, `forbid*`…), and the mutant's check lets
//! everything through. It is named by the vocabulary's `calls` terms. So
//! is a verdict kept in a variable (`if isSafeContent {`, `if not
//! is_allowed:`), read from whole-word adjectives only (not a list:
//! `allowed_clients`).
//!
//! A tool registered only when a condition holds (`if shouldAddTool(…) {
//! s.AddTool(…) }`) is gated too: the mutant registers it always, named
//! like a tool check.

use std::ops::Range;

use ast_grep_core::Node;

use super::super::grammar::Grammar;
use super::super::matcher::Doc;
use super::setting::{protects_when_true, risky_when_true};
use super::vocab::{polarity, words};

/// One protective branch found in a file.
#[derive(Debug, Clone)]
pub(crate) struct Branch {
    /// The condition's byte range.
    pub range: Range<usize>,
    /// The condition with the protection off.
    pub replacement: String,
    /// Words of the setting's (or the check's) name.
    pub name: Vec<String>,
    /// A check's call (named by `calls` terms), not a setting.
    pub check: bool,
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

/// The answer of a check that lets a request through, read from its name:
/// `true` for an allow-list check (`isToolEnabled`, `host_allowed`,
/// `is_safe_content`), `false` for a block-list one (`is_path_excluded`,
/// `isBlockedHost`); `None` when the name says neither or both.
fn accepting_by_name(w: &[String]) -> Option<bool> {
    let has = |p: &[&str]| w.iter().any(|x| p.iter().any(|q| x.starts_with(q)));
    let deny = has(&[
        "block", "deni", "deny", "exclud", "forbid", "disallow", "unsafe", "untrust", "reject",
    ]);
    let allow = has(&[
        "allow",
        "enabled",
        "permit",
        "safe",
        "trusted",
        "authori",
        "authentic",
        "valid",
    ]);
    match (allow, deny) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ => None,
    }
}

/// Whole-word adjectives of a verdict that lets a request through.
const VERDICT_ACCEPT: &[&str] = &[
    "allowed",
    "enabled",
    "permitted",
    "safe",
    "trusted",
    "valid",
    "authorized",
    "authorised",
    "authenticated",
    "approved",
];

/// Whole-word adjectives of a verdict that refuses.
const VERDICT_REFUSE: &[&str] = &[
    "blocked",
    "denied",
    "excluded",
    "forbidden",
    "disallowed",
    "unsafe",
    "untrusted",
    "rejected",
];

/// The answer of a verdict kept in a variable that lets a request through,
/// read from its name as [`accepting_by_name`] does, but stricter: the
/// polarity word is a whole adjective (`is_safe_content`, `allowed`,
/// `isAuthorized`; not `authentication`, a config object), and a name ending
/// in a plural (`allowed_clients`, `safe_args`) is a list, not a verdict.
fn verdict_by_name(w: &[String]) -> Option<bool> {
    let last = w.last()?;
    if last.len() > 3 && last.ends_with('s') && !last.ends_with("ss") {
        return None;
    }
    polarity(w, VERDICT_ACCEPT, VERDICT_REFUSE)
}

/// The check a condition calls alone (`r.isToolEnabled(ctx, t)`,
/// `not is_path_excluded(p, ex)`), with whether it is negated.
fn checked_call(cond: &Node<'_, Doc>) -> Option<(String, bool)> {
    let mut n = cond.clone();
    let mut negated = false;
    loop {
        match n.kind().as_ref() {
            "parenthesized_expression" | "await" | "await_expression" => {
                let inner = n.named_children().next()?;
                n = inner;
            }
            "not_operator" => {
                negated = !negated;
                let inner = n.field("argument")?;
                n = inner;
            }
            "unary_expression" if n.text().starts_with('!') => {
                negated = !negated;
                let inner = n.field("argument").or_else(|| n.field("operand"))?;
                n = inner;
            }
            "call" | "call_expression" => break,
            _ => return None,
        }
    }
    let f = n.field("function")?.text().to_string();
    let name = f.rsplit('.').next()?.to_string();
    super::refusal::check_name(&name).then_some((name, negated))
}

/// Longest body (in lines) read as a gate around registering tools.
const MAX_REGISTRATION_LINES: usize = 30;

/// Whether the body of an `if` (not its `else`) registers an MCP tool: a
/// call of `AddTool`/`add_tool`/`registerTool` (and their plurals), a
/// server's `.tool(…)`, a `register…tools` function, or an item added to a
/// list named `tools` (`tools.append(t)`, `tools.push(t)`, Go `tools =
/// append(tools, t)`).
fn registers_tool(n: &Node<'_, Doc>) -> bool {
    let Some(body) = n.field("consequence") else {
        return false;
    };
    if body.end_pos().line() - body.start_pos().line() + 1 > MAX_REGISTRATION_LINES {
        return false;
    }
    // An error check (`if err == nil {`) or a choice between two
    // registrations (an `else`) is not a gate.
    // Nor is a condition that registers itself (`if (tool.register(this))`)
    // or only checks the item is there (`if tool != "" { tools =
    // append(tools, tool) }`: parsing a list).
    let cond = n
        .field("condition")
        .map(|c| c.text().to_string())
        .unwrap_or_default();
    if n.field("alternative").is_some()
        || words(&cond)
            .iter()
            .any(|w| matches!(w.as_str(), "err" | "error"))
        || registers_itself(&cond)
        || present(&cond)
    {
        return false;
    }
    let tools = |w: &[String]| w.last().is_some_and(|x| x == "tool" || x == "tools");
    // The registration is one of the body's own statements.
    let registers = super::refusal::statements(&body).iter().any(|st| {
        let c = if st.kind() == "assignment_statement" {
            // Go `tools = append(tools, t)`
            match st.field("right").and_then(|r| r.named_children().next()) {
                Some(e) if e.kind() == "call_expression" => e,
                _ => return false,
            }
        } else {
            match super::refusal::statement_call(st) {
                Some(e) => e,
                None => return false,
            }
        };
        let Some(f) = c.field("function") else {
            return false;
        };
        let text = f.text().to_string();
        let (receiver, name) = match text.rsplit_once('.') {
            Some((r, m)) => (Some(r.rsplit('.').next().unwrap_or(r)), m),
            None => (None, text.as_str()),
        };
        let w = words(name);
        let verb = w
            .first()
            .is_some_and(|x| matches!(x.as_str(), "add" | "register"));
        (verb && tools(&w))
            || (name == "tool" && receiver.is_some())
            || (matches!(name, "append" | "push") && receiver.is_some_and(|r| tools(&words(r))))
            || (name == "append"
                && receiver.is_none()
                && c.field("arguments")
                    .and_then(|a| a.named_children().next())
                    .is_some_and(|a| tools(&words(&a.text()))))
    });
    registers
}

/// Whether a condition calls a registration itself (`tool.register(this)`,
/// `registerTool(t)`; not `shouldRegisterTool(t)`, which asks).
fn registers_itself(cond: &str) -> bool {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| regex::Regex::new(r"(?:^|[^\w])register\w*\s*\(").expect("a valid regex"))
        .is_match(cond)
}

/// Whether a condition only says a value is there (`x != ""`, `x is not
/// None`, `len(x) > 0`, `x !== undefined`).
fn present(cond: &str) -> bool {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(
            r#"^\(?\s*(?:[\w.]+\s*(?:!=|!==|is\s+not)\s*(?:""|''|nil|null|None|undefined)|len\([\w.]+\)\s*(?:>|!=)\s*0|[\w.]+\.length\s*(?:>|!==)\s*0)\s*\)?$"#,
        )
        .expect("a valid regex")
    })
    .is_match(cond.trim())
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
        // A tool registered only when the condition holds (`if
        // shouldAddTool(ToolX, enabled) { s.AddTool(…) }`, `if
        // os.getenv("X_ENABLED") == "true": register_x_tools(mcp)`): the
        // mutant registers it whatever the configuration says; named like a
        // tool check.
        let registration = || (vec!["tool".to_string(), "enabled".to_string()], true, true);
        // `taken`: whether the mutant always takes the branch (else never);
        // `check`: named by the `calls` terms (a check's verdict), not the
        // `settings` ones.
        let (w, taken, check) = if let Some((name, negated)) = tested(&ctext) {
            // `IsRequireOAuth` reads as `require oauth`: the getter's `is` goes.
            let mut w = words(&name);
            if w.len() > 1 && matches!(w[0].as_str(), "is" | "get" | "should") {
                w.remove(0);
            }
            if protects_when_true(&w) {
                (w, negated, false)
            } else if risky_when_true(&w) {
                // `if allow_writes:` acts as if the risky feature were on.
                (w, !negated, false)
            } else if let Some(accept) = verdict_by_name(&w) {
                // A verdict kept in a variable (`if isSafeContent {`,
                // `if not allowed:`) gates like the check that made it.
                (w, accept != negated, true)
            } else {
                // A bare configuration (`if config.lsp_config:` then its
                // tools) says a feature is set up, not which tools may run.
                continue;
            }
        } else if let Some((name, negated)) = checked_call(&cond) {
            // A check gating what is done (`if r.isToolEnabled(t) { add(t) }`):
            // the mutant's check lets everything through.
            let w = words(&name);
            match accepting_by_name(&w) {
                Some(accept) => (w, accept != negated, true),
                None if registers_tool(&n) => registration(),
                None => continue,
            }
        } else if registers_tool(&n) {
            registration()
        } else {
            continue;
        };
        let replacement = match (g, taken) {
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
            check,
            name: w,
            lines: (n.start_pos().line() + 1, n.end_pos().line() + 1),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    fn found(file: &str, code: &str) -> Vec<String> {
        testing::found(file, code, branches)
            .into_iter()
            .map(|b| testing::edited_line(code, &b.range, &b.replacement, b.lines.0))
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
                "if true || (allowWrites) {",
            ]
        );
        let py = "def f(s):\n    if s.read_only:\n        return read_tools\n    if x.strict and y:\n        pass\n";
        assert_eq!(found("a.py", py), ["if False:"]);
        let ts = "if (!config.readOnly) registerWriteTools();\n";
        assert_eq!(found("a.ts", ts), ["if (true) registerWriteTools();"]);
    }

    #[test]
    fn a_check_gating_what_is_done_lets_everything_through() {
        let go = "package p\n\nfunc f(r *R) {\n\tif r.isToolEnabled(ctx, t) {\n\t\tadd(t)\n\t}\n\tif isPathExcluded(p) {\n\t\tcontinue\n\t}\n\tif !isSafeContent(c) {\n\t\tskip()\n\t}\n\tif isReady(c) {\n\t\tgo1()\n\t}\n}\n";
        assert_eq!(
            found("a.go", go),
            [
                "if true || (r.isToolEnabled(ctx, t)) {",
                "if false && (isPathExcluded(p)) {",
                "if false && (!isSafeContent(c)) {",
            ]
        );
        let py = "def f(t):\n    if not is_tool_allowed(t):\n        continue\n";
        assert_eq!(found("a.py", py), ["if False:"]);
    }

    #[test]
    fn a_tool_registered_only_when_a_condition_holds_is_always_registered() {
        let go = "package p\n\nfunc f(s *S) {\n\tif shouldAddTool(ToolX, enabled, \"X_TOOL\") {\n\t\ts.AddTool(x, h)\n\t}\n\tif err == nil {\n\t\ts.AddTool(y, h)\n\t}\n\tif tool != \"\" {\n\t\ttools = append(tools, tool)\n\t}\n\tif cfg.Mode == \"beta\" {\n\t\ttools = append(tools, beta)\n\t} else {\n\t\ttools = append(tools, stable)\n\t}\n}\n";
        assert_eq!(
            found("a.go", go),
            ["if true || (shouldAddTool(ToolX, enabled, \"X_TOOL\")) {"]
        );
        let py = "def f(mcp, config):\n    if os.getenv('X_ENABLED', 'true').lower() == 'true':\n        register_x_tools(mcp)\n    if config.lsp_config:\n        register_lsp_tools(mcp)\n    if name not in _warned_tools:\n        _warned_tools.add(name)\n";
        assert_eq!(found("a.py", py), ["if True:"]);
        let ts = "if (process.env.ENABLE_X === 'true') {\n  server.tool('x', schema, h);\n}\nif (tool.register(this)) {\n  this.tools.push(tool);\n}\nif (shouldRegisterTool(t, cfg)) {\n  server.registerTool(t);\n}\n";
        assert_eq!(found("a.ts", ts), ["if (true) {", "if (true) {"]);
    }

    #[test]
    fn a_verdict_kept_in_a_variable_gates_like_its_check() {
        let go = "package p\n\nfunc f(c C) {\n\tisSafeContent := check(c)\n\tif isSafeContent {\n\t\tkeep(c)\n\t}\n\tif !blocked {\n\t\tsend()\n\t}\n\tif ready {\n\t\tgo1()\n\t}\n}\n";
        assert_eq!(
            found("a.go", go),
            ["if true || (isSafeContent) {", "if true || (!blocked) {"]
        );
        let py = "def f(t):\n    if not allowed:\n        return\n    if lockdown_mode:\n        t = filter(t)\n";
        assert_eq!(found("a.py", py), ["if False:", "if False:"]);
    }
}
