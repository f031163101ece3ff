//! The refusal-guard shape: an `if` whose body refuses. Python
//! (`raise`, `return False`/`None` in a check function, an HTTP 4xx answer),
//! TypeScript/JavaScript (`throw`, `res.status(4xx)`, `isError: true`,
//! `process.exit`, `return false`/`null` in a check) and Go (a new error
//! value: `fmt.Errorf`, `errors.New`, `Err…` sentinels, `…Error(…)`
//! constructors; `http.Error`, `WriteHeader(4xx)`, `panic`, `log.Fatal`,
//! `os.Exit`; `return false` in a check). The mutant makes the branch never
//! taken, in a form that still compiles: `False` (Python), `(false)`
//! (TypeScript), `false && (cond)` (Go: every variable the condition reads
//! stays used).
//!
//! A Go `if err != nil { return …, err }` only passes an error on; it counts
//! as a guard only when the words of the call that produced `err` name a
//! control (`if err := verifyToken(r); err != nil`), never as a generic one.

use std::ops::Range;
use std::sync::OnceLock;

use ast_grep_core::Node;
use regex::Regex;

use super::super::grammar::Grammar;
use super::super::matcher::Doc;
use super::vocab::{words, Evidence};

/// One refusal guard found in a file.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    /// The condition's byte range (the text the mutant replaces).
    pub range: Range<usize>,
    /// The condition that is never true.
    pub replacement: String,
    /// 1-based first and last line of the whole `if` (for de-duplication).
    pub lines: (usize, usize),
    /// The words that name its control.
    pub evidence: Evidence,
    /// The refusing statement, first line, trimmed (listed for generic guards).
    pub refusal: String,
    /// Only passes an error on: reported only when named.
    pub propagation: bool,
    /// Names of the functions called in the condition (or the call that
    /// produced the checked error), with whether the call is negated.
    pub calls: Vec<(String, bool)>,
    /// The condition says the value is none of two or more literals (`op
    /// != "list" && op != "get"`, `fmt not in ("json", "csv")`): an inline
    /// allow-list of input values.
    pub value_set: bool,
}

/// Longest body (in lines) still read as a guard rather than a code path.
const MAX_BODY_LINES: usize = 14;

fn re(s: &str) -> Regex {
    Regex::new(s).expect("a valid regex")
}

fn lines_of(n: &Node<'_, Doc>) -> usize {
    n.end_pos().line() - n.start_pos().line() + 1
}

/// The statements directly in a body (a block's children, or the single
/// statement of a brace-less TypeScript `if`).
pub(crate) fn statements<'r>(body: &Node<'r, Doc>) -> Vec<Node<'r, Doc>> {
    match body.kind().as_ref() {
        // Go wraps a block's statements in a `statement_list`.
        "block" | "statement_block" | "statement_list" => body
            .named_children()
            .filter(|c| c.kind() != "comment")
            .flat_map(|c| {
                if c.kind() == "statement_list" {
                    statements(&c)
                } else {
                    vec![c]
                }
            })
            .collect(),
        _ => vec![body.clone()],
    }
}

/// The name of the function or method `n` sits in.
pub(crate) fn enclosing_name(n: &Node<'_, Doc>) -> String {
    for a in n.ancestors() {
        match a.kind().as_ref() {
            "function_definition"
            | "function_declaration"
            | "method_declaration"
            | "method_definition"
            | "func_literal"
            | "generator_function_declaration" => {
                return a
                    .field("name")
                    .map(|x| x.text().to_string())
                    .unwrap_or_default();
            }
            "arrow_function" | "function_expression" => {
                // `const isAllowed = (…) => …`: the declarator's name.
                if let Some(p) = a.parent().filter(|p| p.kind() == "variable_declarator") {
                    return p
                        .field("name")
                        .map(|x| x.text().to_string())
                        .unwrap_or_default();
                }
            }
            _ => {}
        }
    }
    String::new()
}

/// Does a function name read like a check (`is_allowed`, `validateX`,
/// `verifyToken`, `checkScope`, `hostAllowed`, `ensure_safe`)?
pub(crate) fn check_name(name: &str) -> bool {
    let w = words(name);
    let first = w.first().map(String::as_str).unwrap_or("");
    let last = w.last().map(String::as_str).unwrap_or("");
    matches!(
        first,
        "is" | "has" | "can" | "may" | "should" | "must" | "ensure" | "require"
    ) || [
        "valid", "verif", "check", "authori", "authenti", "allow", "permit", "safe",
    ]
    .iter()
    .any(|p| first.starts_with(p) || last.starts_with(p))
}

/// Which statements refuse, per language.
pub(crate) struct Refusals {
    status_4xx: Regex,
    error_call: Regex,
    go_error: Regex,
    /// Go: `err != nil`.
    err_check: Regex,
    /// Python/TypeScript: an error value a check handed back (`if
    /// error_response is not None:`, `if (authError)`).
    err_value: Regex,
    /// A condition on an upstream's answer (`resp.status_code == 403`).
    upstream_status: Regex,
    /// A presence test of one value: `not x`, `!x`, `x is None`, `x == nil`.
    presence: Regex,
    /// Python/TypeScript: one test of a caught error's kind or message
    /// (`error instanceof InvalidParamsError`, `isinstance(e, KeyError)`,
    /// `isQuotaError(err)`, `e.message.includes("…")`).
    caught_error: Regex,
}

impl Refusals {
    /// The patterns, compiled once for every file.
    pub(crate) fn get() -> &'static Refusals {
        static R: OnceLock<Refusals> = OnceLock::new();
        R.get_or_init(Refusals::new)
    }

    fn new() -> Refusals {
        Refusals {
            status_4xx: re(
                r"(?i)\b(status(_?code)?\s*[=:(]\s*|\.code\(\s*|sendStatus\(\s*|writeHead\(\s*|HTTP_|status\.HTTP_|http\.Status)(4\d\d|BadRequest|Unauthori[sz]ed|Forbidden|NotFound|MethodNotAllowed|Conflict|RequestEntityTooLarge|TooManyRequests|MisdirectedRequest|UnprocessableEntity)",
            ),
            error_call: re(r"(?i)(error|denied|deny|forbid|reject|refus|unauthori)\w*\s*\("),
            go_error: re(
                r"\bfmt\.Errorf\(|\berrors\.New\(|\b[A-Z]?\w*Err[A-Z]\w*|\b\w*\.?[A-Z]\w*Error\w*\(|\bstatus\.Error",
            ),
            err_check: re(r"^\s*(\w*[Ee]rr\w*)\s*!=\s*nil\s*$"),
            err_value: re(
                r"^[\s(]*(\w*(?:[Ee]rr|ERR)\w*)(?:\s+is\s+not\s+None|\s*!==?\s*(?:null|undefined))?[\s)]*$",
            ),
            upstream_status: re(
                r"(?i)status_?code\b[^\n]*\b[45]\d\d\b|\bstatus\b\s*(===?|!==?|in)\s*[\[(]?\s*[45]\d\d\b",
            ),
            presence: re(
                r#"^[\s(]*(not\s+[\w.\[\]'"]+|![\w.?]+|[\w.]+\s+is\s+None|[\w.]+\s*===?\s*(nil|None|null|undefined|""|'')|len\([\w.]+\)\s*==\s*0)[\s)]*$"#,
            ),
            caught_error: re(
                r"^(?:\w+\s+instanceof\s+[\w.]*(?:Error|Exception)\w*|isinstance\(\s*\w+\s*,[^)]*(?:Error|Exception)\w*[^)]*\)|is\w*(?:Error|Exception)\(\s*\w+\s*\)|(?:error|err|e|exc|ex)\.(?:message|code|name)\b.*)$",
            ),
        }
    }

    /// Whether every part of a condition (split at `and`/`or`/`&&`/`||`,
    /// negations and parentheses dropped) tests a caught error's kind or
    /// message.
    pub(crate) fn sorts_caught_error(&self, cond: &str) -> bool {
        let flat = cond.split_whitespace().collect::<Vec<_>>().join(" ");
        let parts: Vec<&str> = flat
            .split(" && ")
            .flat_map(|p| p.split(" || "))
            .flat_map(|p| p.split(" and "))
            .flat_map(|p| p.split(" or "))
            .collect();
        parts.iter().all(|p| {
            let mut t = p.trim();
            loop {
                let before = t;
                t = t.trim_start_matches(['(', '!', ' ']);
                t = t.strip_prefix("not ").unwrap_or(t);
                if t == before {
                    break;
                }
            }
            // Unbalanced closing parentheses left by the split.
            while t.ends_with(')') && t.matches(')').count() > t.matches('(').count() {
                t = &t[..t.len() - 1];
            }
            self.caught_error.is_match(t.trim())
        })
    }

    /// The refusing statement of a guard's body, with the error value it
    /// passes on, if any: Go's checked `err` (`if err != nil { return nil,
    /// err }`), or in Python/TypeScript an error value returned as is (only
    /// when nothing else in the body refuses).
    fn refusal_in<'r>(
        &self,
        g: Grammar,
        stmts: &[Node<'r, Doc>],
        in_check: bool,
        cond: &str,
        helpers: &[String],
    ) -> Option<(Node<'r, Doc>, Option<String>)> {
        let capture = |r: &Regex| r.captures(cond).map(|c| c[1].to_string());
        if g == Grammar::Go {
            let e = capture(&self.err_check);
            return self
                .refusing(g, stmts, in_check, e.as_deref(), helpers)
                .map(|found| (found, e));
        }
        if let Some(found) = self.refusing(g, stmts, in_check, None, helpers) {
            return Some((found, None));
        }
        let e = capture(&self.err_value)?;
        let found = self.refusing(g, stmts, in_check, Some(&e), helpers)?;
        Some((found, Some(e)))
    }

    /// The refusing statement among `body`'s direct statements, if any: one
    /// that refuses itself, or a call of one of the file's `helpers` that
    /// never return.
    fn refusing<'r>(
        &self,
        g: Grammar,
        body: &[Node<'r, Doc>],
        in_check: bool,
        checked_err: Option<&str>,
        helpers: &[String],
    ) -> Option<Node<'r, Doc>> {
        body.iter()
            .find(|s| self.refuses(g, s, in_check, checked_err) || calls_helper(s, helpers))
            .cloned()
    }

    /// Whether `v` makes a new Go error value (`fmt.Errorf(…)`, `ErrDenied`).
    pub(crate) fn is_go_error(&self, v: &str) -> bool {
        self.go_error.is_match(v)
    }

    /// Whether a condition tests an upstream's answer (`resp.status_code == 403`).
    pub(crate) fn is_upstream_status(&self, cond: &str) -> bool {
        self.upstream_status.is_match(cond)
    }

    /// Whether the statement `s` refuses (`in_check`: it sits in a check
    /// function, where `return False` refuses; `checked_err`: the error a
    /// Go guard checked, passed on).
    pub(crate) fn refuses(
        &self,
        g: Grammar,
        s: &Node<'_, Doc>,
        in_check: bool,
        checked_err: Option<&str>,
    ) -> bool {
        let text = s.text();
        let value = || {
            text.trim_start_matches("return")
                .trim()
                .trim_end_matches(';')
                .trim()
                .to_string()
        };
        match (g, s.kind().as_ref()) {
            (Grammar::Python, "raise_statement") => true,
            (Grammar::Python, "return_statement") => {
                let v = value();
                // `return error_response`: hands the check's refusal on.
                if checked_err == Some(v.as_str()) {
                    return true;
                }
                (in_check && (matches!(v.as_str(), "False" | "None") || error_message(s)))
                    || self.status_4xx.is_match(&v)
                    || self.error_call.is_match(&v)
            }
            (Grammar::TypeScript | Grammar::Tsx, "throw_statement") => true,
            (Grammar::TypeScript | Grammar::Tsx, "return_statement") => {
                let v = value();
                if checked_err == Some(v.as_str()) {
                    return true;
                }
                (in_check
                    && (matches!(v.as_str(), "false" | "null" | "undefined") || error_message(s)))
                    || self.status_4xx.is_match(&v)
                    || v.contains("isError: true")
                    || self.error_call.is_match(&v)
            }
            (Grammar::TypeScript | Grammar::Tsx, "expression_statement") => {
                self.status_4xx.is_match(&text) || text.contains("process.exit(")
            }
            (Grammar::Go, "return_statement") => {
                let v = value();
                let parts: Vec<&str> = v.split(',').map(str::trim).collect();
                if let Some(e) = checked_err {
                    // `return nil, err`: passes the checked error on.
                    if parts.last() == Some(&e) {
                        return true;
                    }
                }
                (in_check && parts.first() == Some(&"false"))
                    || self.go_error.is_match(&v)
                    || self.status_4xx.is_match(&v)
            }
            (Grammar::Go, "expression_statement") => {
                text.starts_with("http.Error(")
                    || text.starts_with("panic(")
                    || text.starts_with("log.Fatal")
                    || text.starts_with("os.Exit(")
                    || (text.contains("WriteHeader(") && self.status_4xx.is_match(&text))
            }
            _ => false,
        }
    }
}

/// Does a `return` give back a message (a string literal, an f-string, a
/// template string)? In a check function that is the "no, because…" of a
/// validator that returns `None` when all is well.
fn error_message(ret: &Node<'_, Doc>) -> bool {
    ret.named_children().next().is_some_and(|v| {
        matches!(
            v.kind().as_ref(),
            "string" | "template_string" | "concatenated_string"
        )
    })
}

/// The functions a condition calls, each with whether it is negated
/// (`not f(x)`, `!f(x)`): a refusal taken when the call says no.
fn calls_in(cond: &Node<'_, Doc>) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for n in cond.dfs() {
        if n.kind() != "call" && n.kind() != "call_expression" {
            continue;
        }
        let Some(f) = n.field("function") else {
            continue;
        };
        let name = f.text().rsplit('.').next().unwrap_or("").to_string();
        let parent = n.ancestors().find(|a| {
            !matches!(
                a.kind().as_ref(),
                "parenthesized_expression" | "await" | "await_expression"
            )
        });
        let negated = parent.is_some_and(|a| {
            a.kind() == "not_operator"
                || a.kind() == "unary_expression" && a.text().starts_with('!')
        });
        out.push((name, negated));
    }
    out
}

/// Every refusal guard in a parsed file.
pub(crate) fn guards(g: Grammar, root: &Node<'_, Doc>) -> Vec<Guard> {
    let r = Refusals::get();
    let helpers = raising_helpers(g, root);
    let mut out = Vec::new();
    for n in root.dfs() {
        let kind = n.kind();
        if !matches!(kind.as_ref(), "if_statement" | "elif_clause") {
            continue;
        }
        let (Some(cond), Some(body)) = (n.field("condition"), n.field("consequence")) else {
            continue;
        };
        if lines_of(&body) > MAX_BODY_LINES {
            continue;
        }
        let ctext = cond.text().to_string();
        if ctext.contains(":=") && g == Grammar::Python
            || ctext.contains("__name__")
            || ctext.trim_matches(['(', ')', ' ']).is_empty()
            || matches!(
                ctext.trim_matches(['(', ')', ' ']),
                "false" | "False" | "true" | "True"
            )
        {
            continue;
        }
        // Translating an upstream's answer (`if resp.status_code == 403: raise …`)
        // is error handling, not a control of this server.
        if r.upstream_status.is_match(&ctext) {
            continue;
        }
        // Sorting a caught error by its kind or message (`if (error instanceof
        // InvalidParamsError) return …`) translates a refusal made elsewhere.
        // (Not Go: `errors.Is(err, ErrDenied)` is how a denial is recognised.)
        if g != Grammar::Go && r.sorts_caught_error(&ctext) {
            continue;
        }
        let fname = enclosing_name(&n);
        let in_check = check_name(&fname);
        let stmts = statements(&body);
        let Some((refusal, checked_err)) = r.refusal_in(g, &stmts, in_check, &ctext, &helpers)
        else {
            continue;
        };
        let mut site_text = ctext.clone();
        let mut calls = calls_in(&cond);
        if checked_err.is_some() {
            // What produced the error: the initializer, else the statement before.
            let producer = n
                .field("initializer")
                .or_else(|| n.prev().filter(|p| p.kind() != "comment"));
            // Named only by the check that produced the error
            // (`if err := verifyToken(r); err != nil`), not by its arguments.
            calls = producer
                .map(|p| calls_in(&p).into_iter().map(|(c, _)| (c, true)).collect())
                .unwrap_or_default();
            let checks: Vec<&str> = calls
                .iter()
                .map(|(c, _)| c.as_str())
                .filter(|c| check_name(c))
                .collect();
            if checks.is_empty() {
                continue;
            }
            site_text = checks.join(" ");
        }
        let (range, replacement) = match g {
            Grammar::Python => (cond.range(), "False".to_string()),
            Grammar::TypeScript | Grammar::Tsx => (cond.range(), "(false)".to_string()),
            Grammar::Go => (cond.range(), format!("false && ({ctext})")),
        };
        let presence = checked_err.is_none() && r.presence.is_match(&ctext);
        out.push(Guard {
            range,
            replacement,
            lines: (n.start_pos().line() + 1, n.end_pos().line() + 1),
            evidence: Evidence {
                site: words(&site_text),
                refusal: if checked_err.is_some() {
                    Vec::new()
                } else {
                    words(&body.text())
                },
                // `if not url: return "…"` refuses an empty input, whatever
                // the function checks: only its own words may name it.
                name: if presence { Vec::new() } else { words(&fname) },
                absent: if presence {
                    tested_value(&ctext)
                } else {
                    Vec::new()
                },
            },
            refusal: first_line(&refusal),
            propagation: checked_err.is_some(),
            calls,
            value_set: checked_err.is_none() && not_one_of(&ctext),
        });
    }
    out
}

/// The functions of a file that never return normally, by name: Python
/// annotated `-> NoReturn`/`-> Never`, TypeScript `: never`, or a body
/// that ends in a `raise`/`throw` of a new error with no `return` (or
/// `yield`) anywhere in it (`function reject(flag: string) { throw new
/// McpError(…) }`, `def _deny(msg): log(msg); raise PermissionError(msg)`).
/// A guard whose body calls one refuses through it. Go has no such
/// function (an error is returned, a `panic` helper is rare).
pub(crate) fn raising_helpers(g: Grammar, root: &Node<'_, Doc>) -> Vec<String> {
    let (kinds, raise): (&[&str], &str) = match g {
        Grammar::Python => (&["function_definition"], "raise_statement"),
        Grammar::TypeScript | Grammar::Tsx => (
            &[
                "function_declaration",
                "method_definition",
                "arrow_function",
                "function_expression",
            ],
            "throw_statement",
        ),
        Grammar::Go => return Vec::new(),
    };
    let mut out = Vec::new();
    for f in root.dfs() {
        if !kinds.contains(&f.kind().as_ref()) {
            continue;
        }
        let name = match f.field("name") {
            Some(n) => n.text().to_string(),
            // `const reject = (…) => { throw … }`
            None => match f.parent().filter(|p| p.kind() == "variable_declarator") {
                Some(p) => p
                    .field("name")
                    .map(|n| n.text().to_string())
                    .unwrap_or_default(),
                None => continue,
            },
        };
        let annotated = f.field("return_type").is_some_and(|t| {
            let t = t.text();
            let t = t.trim_start_matches(':').trim();
            matches!(
                t.rsplit('.').next().unwrap_or(""),
                "never" | "NoReturn" | "Never"
            )
        });
        let ends_raising = f.field("body").is_some_and(|b| {
            statements(&b)
                .last()
                .is_some_and(|s| s.kind() == raise && !rethrow(s) && !unimplemented(s))
                && !b.dfs().any(|n| {
                    matches!(
                        n.kind().as_ref(),
                        "return_statement" | "yield" | "yield_expression"
                    )
                })
        });
        if !name.is_empty() && (annotated || ends_raising) {
            out.push(name);
        }
    }
    out
}

/// Whether a `raise`/`throw` passes on what it was given or caught (a bare
/// `raise`, `throw error`, `raise e`: a name), not a new error of its own.
pub(crate) fn rethrow(s: &Node<'_, Doc>) -> bool {
    s.named_children()
        .find(|c| c.kind() != "comment")
        .is_none_or(|v| v.kind() == "identifier")
}

/// Whether a `raise`/`throw` marks a body not written yet (`raise
/// NotImplementedError`, `throw new Error("Not implemented")`): an abstract
/// method, not a refusal.
fn unimplemented(s: &Node<'_, Doc>) -> bool {
    let w = words(&s.text());
    w.windows(2).any(|p| p[0] == "not" && p[1] == "implemented")
}

/// The call a Python/TypeScript expression statement makes, awaited or not
/// (`reject(tok);`, `await server.tool(…);`, `self._deny("…")`).
pub(crate) fn statement_call<'r>(s: &Node<'r, Doc>) -> Option<Node<'r, Doc>> {
    if s.kind() != "expression_statement" {
        return None;
    }
    let outer = s.named_children().next()?;
    let e = if matches!(outer.kind().as_ref(), "await" | "await_expression") {
        outer.named_children().next()?
    } else {
        outer
    };
    matches!(e.kind().as_ref(), "call" | "call_expression").then_some(e)
}

/// Whether a statement is a call of one of `helpers` (awaited or not):
/// `reject(tok);`, `self._deny("…")`.
fn calls_helper(s: &Node<'_, Doc>, helpers: &[String]) -> bool {
    !helpers.is_empty()
        && statement_call(s)
            .and_then(|c| c.field("function"))
            .is_some_and(|f| {
                let t = f.text();
                let name = t.rsplit('.').next().unwrap_or("");
                helpers.iter().any(|h| h == name)
            })
}

/// A refusing statement's first line, trimmed (what a generic guard lists).
pub(crate) fn first_line(n: &Node<'_, Doc>) -> String {
    n.text().lines().next().unwrap_or("").trim().to_string()
}

/// Whether a condition refuses a value that is none of two or more literals:
/// Go/TypeScript `op != "list" && op != "get"` (an `op != ""` part
/// allowed), Python `fmt not in ("json", "csv")`.
pub(crate) fn not_one_of(cond: &str) -> bool {
    static PY: OnceLock<Regex> = OnceLock::new();
    static PART: OnceLock<Regex> = OnceLock::new();
    let py = PY.get_or_init(|| {
        re(r#"^\(?\s*[\w.\[\]'"]+\s+not\s+in\s+[(\[{]\s*(?:(?:"[^"]*"|'[^']*')\s*,\s*)+(?:"[^"]*"|'[^']*')\s*,?\s*[)\]}]\s*\)?$"#)
    });
    if py.is_match(cond.trim()) {
        return true;
    }
    let part = PART
        .get_or_init(|| re(r#"^\(?\s*([\w.\[\]?]+)\s*!==?\s*("[^"]*"|'[^']*'|`[^`$]*`)\s*\)?$"#));
    let flat = cond.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = flat.trim().trim_start_matches('(').trim_end_matches(')');
    let mut operand: Option<String> = None;
    let mut literals = 0;
    for p in flat.split("&&") {
        let Some(c) = part.captures(p.trim()) else {
            return false;
        };
        if operand.get_or_insert_with(|| c[1].to_string()) != &c[1] {
            return false;
        }
        if c[2].len() > 2 {
            literals += 1;
        }
    }
    literals >= 2
}

/// The words of the one value a presence test tests: `not self.api_key`,
/// `!apiKey`, `token is None`, `body.Token == ""` → its name's words.
fn tested_value(cond: &str) -> Vec<String> {
    const TEST_WORDS: [&str; 8] = ["not", "is", "none", "nil", "null", "undefined", "len", "0"];
    let mut w = words(cond);
    while w.first().is_some_and(|x| TEST_WORDS.contains(&x.as_str())) {
        w.remove(0);
    }
    while w.last().is_some_and(|x| TEST_WORDS.contains(&x.as_str())) {
        w.pop();
    }
    w
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    fn guarded(file: &str, code: &str) -> Vec<String> {
        testing::found(file, code, guards)
            .into_iter()
            .map(|g| code[g.range].to_string())
            .collect()
    }

    #[test]
    fn a_guard_refuses_through_a_helper_that_never_returns() {
        let ts = "function reject(flag: string): never {\n  throw new McpError(InvalidParams, `refused ${flag}`);\n}\nconst deny = (m) => { log(m); throw new Error(m); };\nfunction soft(x) {\n  if (x) return;\n  throw new Error('x');\n}\nfunction pass(e) { throw e; }\nexport function check(args: string[]) {\n  for (const tok of args) {\n    if (isDangerousFlagName(tok)) reject(tok);\n    if (tok === '--kubeconfig') { deny(tok); }\n    if (tok === '-s') soft(tok);\n    if (tok === '-x') pass(tok);\n  }\n}\n";
        assert_eq!(
            guarded("a.ts", ts),
            ["(isDangerousFlagName(tok))", "(tok === '--kubeconfig')"]
        );
        let py = "from typing import NoReturn\n\ndef _deny(msg: str) -> NoReturn:\n    log(msg)\n    abort(msg)\n\nclass V:\n    def _refuse(self, what):\n        logger.warning(what)\n        raise PermissionError(what)\n\n    def _maybe(self, what):\n        if what:\n            return\n        raise ValueError(what)\n\n    def _check(self, cmd):\n        raise NotImplementedError('subclasses')\n\n    def run(self, cmd):\n        if cmd == 'x':\n            self._check(cmd)\n        if cmd.startswith('-'):\n            self._refuse(cmd)\n        if cmd == 'rm':\n            _deny(cmd)\n        if cmd == 'ls':\n            self._maybe(cmd)\n";
        assert_eq!(guarded("a.py", py), ["cmd.startswith('-')", "cmd == 'rm'"]);
    }

    #[test]
    fn a_value_that_is_none_of_two_literals_or_more_is_an_inline_allow_list() {
        assert!(not_one_of(r#"op != "list" && op != "get""#));
        assert!(not_one_of(
            r#"p.QueryType != "" && p.QueryType != "range" && p.QueryType != "instant""#
        ));
        assert!(not_one_of("(format !== 'table' &&\n format !== 'dot')"));
        assert!(not_one_of(r#"fmt not in ("json", "csv")"#));
        assert!(not_one_of("mode not in {'a', 'b',}"));
        // One literal, two operands, an empty check, a disjunction: not a set.
        assert!(!not_one_of(r#"op != "list""#));
        assert!(!not_one_of(r#"a != "x" && b != "y""#));
        assert!(!not_one_of(r#"op != "" && op != "list""#));
        assert!(!not_one_of(r#"op != "a" || op != "b""#));
        assert!(!not_one_of("x not in ('a',)"));
        assert!(!not_one_of("x not in ALLOWED"));
    }
}
