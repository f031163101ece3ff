//! The fall-back refusal: the branch a dispatch takes when no accepted case
//! matched refuses. Go `switch op { case "list": …; default: return
//! fmt.Errorf("unknown operation %q", op) }`, TypeScript `default: throw
//! new Error(…)`, Python `if …: … elif …: … else: raise ValueError(…)` (and
//! TypeScript's `else { throw … }`), Python `match` `case _: raise …`. The
//! accepted values are the cases; anything else is refused. A refusal
//! guard's condition can be made false; a fall-back has no condition of its
//! own, so the mutant lets the refusal go instead, in a form that still
//! compiles:
//!
//! - Go: the error value is discarded, `return nil, func(error) error {
//!   return nil }(fmt.Errorf(…))` (every variable the message reads stays
//!   used; the function's other results are the ones it returned already);
//! - TypeScript: `return (void new Error(…)) as never;` in place of `throw
//!   new Error(…);` (`never` type-checks as any return type, and the error
//!   is still made, so no local goes unused; JavaScript files get `return
//!   void (new Error(…));`);
//! - Python: `return None` in place of the `raise`.
//!
//! The fall-back of an `if` on an upstream's answer (`if resp.ok: … else:
//! raise`) or on a caught error's kind is error handling, not a control:
//! the same conditions a refusal guard leaves alone are left alone here.

use ast_grep_core::Node;

use super::super::grammar::Grammar;
use super::super::matcher::Doc;
use super::refusal::{enclosing_name, first_line, rethrow, statements, Guard, Refusals};
use super::vocab::{words, Evidence};

/// Longest fall-back body (in lines) still read as a refusal.
const MAX_BODY_LINES: usize = 8;

/// Every fall-back refusal in a parsed file. `typed`: a TypeScript file
/// (not JavaScript), whose mutant must type-check.
pub(crate) fn fallbacks(g: Grammar, typed: bool, root: &Node<'_, Doc>) -> Vec<Guard> {
    let r = Refusals::get();
    let mut out = Vec::new();
    for n in root.dfs() {
        let found = match (g, n.kind().as_ref()) {
            (Grammar::Go, "expression_switch_statement") => go_default(r, &n),
            (Grammar::TypeScript | Grammar::Tsx, "switch_statement") => ts_default(r, typed, &n),
            (_, "if_statement") if g != Grammar::Go => else_fallback(r, g, typed, &n),
            (Grammar::Python, "match_statement") => py_wildcard(&n),
            _ => None,
        };
        if let Some(f) = found.filter(|f| !about_platform(f)) {
            out.push(f);
        }
    }
    out
}

/// Whether a fall-back dispatches on the machine it runs on (`switch
/// runtime.GOOS`, "Unsupported architecture"): not an input of the server.
fn about_platform(f: &Guard) -> bool {
    const PLATFORM: [&str; 6] = ["goos", "goarch", "platform", "architecture", "arch", "os"];
    f.evidence
        .site
        .iter()
        .any(|w| PLATFORM.contains(&w.as_str()))
}

fn lines_of(n: &Node<'_, Doc>) -> usize {
    n.end_pos().line() - n.start_pos().line() + 1
}

/// Whether `n` sits in a function (a `return` is valid there): the nearest
/// function or class around it is a function (a class body between them,
/// or a TypeScript static block, takes no `return`).
fn in_function(n: &Node<'_, Doc>) -> bool {
    n.ancestors()
        .find_map(|a| match a.kind().as_ref() {
            "function_definition"
            | "function_declaration"
            | "method_declaration"
            | "method_definition"
            | "func_literal"
            | "generator_function_declaration"
            | "arrow_function"
            | "function_expression"
            | "function"
            | "generator_function" => Some(true),
            "class_definition" | "class_body" | "class_static_block" => Some(false),
            _ => None,
        })
        .unwrap_or(false)
}

/// The guard of a fall-back whose refusing statement is `refusal`, tested
/// value `tested`, in the branch `branch`.
fn guard(
    branch: &Node<'_, Doc>,
    refusal: &Node<'_, Doc>,
    range: std::ops::Range<usize>,
    replacement: String,
    tested: &str,
) -> Guard {
    Guard {
        range,
        replacement,
        lines: (branch.start_pos().line() + 1, branch.end_pos().line() + 1),
        // The fall-back has no condition of its own: what it refuses with
        // (its message, its error's name) is its condition's words.
        evidence: Evidence {
            site: words(&format!("{tested} {}", branch.text())),
            refusal: Vec::new(),
            name: words(&enclosing_name(branch)),
            absent: Vec::new(),
        },
        refusal: first_line(refusal),
        propagation: false,
        calls: Vec::new(),
        value_set: false,
    }
}

/// Go: the `default:` of a value switch with at least one case, refusing
/// with a new error value as the last result of a function whose last
/// result is an `error`.
fn go_default(r: &Refusals, sw: &Node<'_, Doc>) -> Option<Guard> {
    let cases: Vec<_> = sw
        .children()
        .filter(|c| c.kind() == "expression_case")
        .collect();
    let default = sw.children().find(|c| c.kind() == "default_case")?;
    if cases.is_empty()
        || lines_of(&default) > MAX_BODY_LINES
        || cases.iter().any(|c| body_refuses(r, Grammar::Go, c))
    {
        return None;
    }
    let stmts: Vec<_> = default
        .children()
        .filter(|c| c.kind() == "statement_list")
        .flat_map(|c| statements(&c))
        .collect();
    let ret = stmts.iter().find(|s| s.kind() == "return_statement")?;
    if !r.refuses(Grammar::Go, ret, false, None) {
        return None;
    }
    let list = ret.children().find(|c| c.kind() == "expression_list")?;
    let last = list.named_children().last()?;
    // `fmt.Errorf("…: %w", err)` passes a caught error on.
    if !r.is_go_error(&last.text()) || passes_error_on(&last.text()) || !returns_error(sw) {
        return None;
    }
    let tested = match sw.field("value") {
        Some(v) => v.text().to_string(),
        // `switch { case a == b: … }`: the cases are the conditions.
        None => sw
            .children()
            .filter(|c| c.kind() == "expression_case")
            .filter_map(|c| c.field("value"))
            .map(|v| v.text().to_string())
            .collect::<Vec<_>>()
            .join(" "),
    };
    let replacement = format!("func(error) error {{ return nil }}({})", last.text());
    Some(guard(&default, ret, last.range(), replacement, &tested))
}

/// Whether a Go error value wraps or quotes a caught error (`%w`, an
/// `err` argument): the branch passes a failure on, it refuses nothing.
fn passes_error_on(v: &str) -> bool {
    static ERR_ARG: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let arg = ERR_ARG.get_or_init(|| {
        regex::Regex::new(r"[(,]\s*\w*(?:err|Err)(?:\.Error\(\))?\s*[,)]").expect("a valid regex")
    });
    v.contains("%w") || arg.is_match(v)
}

/// Whether the Go function around `n` has `error` as its last result.
fn returns_error(n: &Node<'_, Doc>) -> bool {
    let f = n.ancestors().find(|a| {
        matches!(
            a.kind().as_ref(),
            "function_declaration" | "method_declaration" | "func_literal"
        )
    });
    let Some(result) = f.and_then(|f| f.field("result")) else {
        return false;
    };
    let text = result.text();
    let t = text.trim().trim_end_matches(')').trim();
    t == "error" || t.ends_with(" error") || t.ends_with(",error") || t.ends_with("(error")
}

/// The TypeScript mutant of `throw <value>`: a return that type-checks
/// whatever the function returns, the error still made (every local its
/// message reads stays used) but not thrown.
fn ts_return(typed: bool, thrown: &Node<'_, Doc>) -> String {
    let value = thrown
        .named_children()
        .find(|c| c.kind() != "comment")
        .map(|v| v.text().to_string())
        .unwrap_or_default();
    if typed {
        format!("return (void {value}) as never;")
    } else {
        format!("return void ({value});")
    }
}

/// TypeScript: the `default:` of a switch with at least one case, whose
/// body throws.
fn ts_default(r: &Refusals, typed: bool, sw: &Node<'_, Doc>) -> Option<Guard> {
    let body = sw.field("body")?;
    let cases: Vec<_> = body
        .children()
        .filter(|c| c.kind() == "switch_case")
        .collect();
    let default = body.children().find(|c| c.kind() == "switch_default")?;
    if cases.is_empty()
        || lines_of(&default) > MAX_BODY_LINES
        || !in_function(sw)
        || cases.iter().any(|c| body_refuses(r, Grammar::Tsx, c))
    {
        return None;
    }
    let thrown = default
        .named_children()
        .flat_map(|c| statements(&c))
        .find(|s| s.kind() == "throw_statement")?;
    if rethrow(&thrown) {
        return None;
    }
    let value = sw.field("value")?.text().to_string();
    if r.is_upstream_status(&value) {
        return None;
    }
    Some(guard(
        &default,
        &thrown,
        thrown.range(),
        ts_return(typed, &thrown),
        &value,
    ))
}

/// An `if` chain: the conditions of its `if` and every `else if`/`elif`,
/// their bodies, and its last `else`, if any.
struct Chain<'r> {
    conds: Vec<Node<'r, Doc>>,
    bodies: Vec<Node<'r, Doc>>,
    fallback: Option<Node<'r, Doc>>,
}

fn chain<'r>(n: &Node<'r, Doc>, g: Grammar) -> Chain<'r> {
    let mut c = Chain {
        conds: Vec::new(),
        bodies: Vec::new(),
        fallback: None,
    };
    let mut cur = n.clone();
    loop {
        c.conds.extend(cur.field("condition"));
        c.bodies.extend(cur.field("consequence"));
        if g == Grammar::Python {
            for alt in cur.children() {
                match alt.kind().as_ref() {
                    "elif_clause" => {
                        c.conds.extend(alt.field("condition"));
                        c.bodies.extend(alt.field("consequence"));
                    }
                    "else_clause" => c.fallback = alt.field("body"),
                    _ => {}
                }
            }
            return c;
        }
        let next = cur
            .field("alternative")
            .and_then(|alt| alt.named_children().find(|x| x.kind() != "comment"));
        match next {
            Some(next) if next.kind() == "if_statement" => cur = next,
            other => {
                c.fallback = other;
                return c;
            }
        }
    }
}

/// Whether an `if` chain tests an upstream's answer or sorts a caught
/// error: its fall-back is error handling.
fn handles_errors(r: &Refusals, g: Grammar, conds: &[Node<'_, Doc>]) -> bool {
    conds.iter().any(|c| {
        let t = c.text();
        r.is_upstream_status(&t)
            || t.contains("__name__")
            || (g != Grammar::Go && r.sorts_caught_error(&t))
            || upstream_ok(&t)
    })
}

/// `resp.ok`, `response.is_success`, `r.status_code == 200`: an upstream
/// answer's success.
fn upstream_ok(cond: &str) -> bool {
    let w = words(cond);
    let has = |x: &str| w.iter().any(|y| y == x);
    (has("ok") || has("success") || has("succeeded") || has("200"))
        && (has("response") || has("resp") || has("res") || has("result") || has("status"))
}

/// Whether a branch body refuses itself (a chain whose every branch
/// refuses is not a dispatch).
fn body_refuses(r: &Refusals, g: Grammar, body: &Node<'_, Doc>) -> bool {
    let stmts: Vec<_> = match body.kind().as_ref() {
        // A case's statements are its children (Go: in a `statement_list`).
        "expression_case" | "switch_case" => {
            body.named_children().flat_map(|c| statements(&c)).collect()
        }
        _ => statements(body),
    };
    stmts.iter().any(|s| r.refuses(g, s, false, None))
}

/// The `else` closing an `if` chain whose branches do not refuse, when it
/// refuses: TypeScript `else { throw … }` (only at the chain's first `if`:
/// an `else if` is handled with its head), Python `else: raise …` (after
/// any `elif`s).
fn else_fallback(r: &Refusals, g: Grammar, typed: bool, n: &Node<'_, Doc>) -> Option<Guard> {
    if n.parent().is_some_and(|p| p.kind() == "else_clause") || !in_function(n) {
        return None;
    }
    let Chain {
        conds,
        bodies,
        fallback,
    } = chain(n, g);
    let els = fallback?;
    if lines_of(&els) > MAX_BODY_LINES
        || handles_errors(r, g, &conds)
        || bodies.iter().any(|b| body_refuses(r, g, b))
    {
        return None;
    }
    let python = g == Grammar::Python;
    let kind = if python {
        "raise_statement"
    } else {
        "throw_statement"
    };
    let stmts = statements(&els);
    let refusing = stmts.iter().find(|s| s.kind() == kind)?;
    if rethrow(refusing) {
        return None;
    }
    let replacement = if python {
        "return None".to_string()
    } else {
        ts_return(typed, refusing)
    };
    let tested = conds.first()?.text().to_string();
    Some(guard(
        &els,
        refusing,
        refusing.range(),
        replacement,
        &tested,
    ))
}

/// Python: a `match` whose wildcard case (`case _:`) raises, after at
/// least one other case.
fn py_wildcard(m: &Node<'_, Doc>) -> Option<Guard> {
    if !in_function(m) {
        return None;
    }
    let body = m.field("body")?;
    let cases: Vec<_> = body
        .children()
        .filter(|c| c.kind() == "case_clause")
        .collect();
    let last = cases.last()?;
    let pattern = last.children().find(|c| c.kind() == "case_pattern")?;
    if cases.len() < 2 || pattern.text().trim() != "_" || last.field("guard").is_some() {
        return None;
    }
    let block = last.field("consequence")?;
    if lines_of(&block) > MAX_BODY_LINES {
        return None;
    }
    let stmts = statements(&block);
    let raised = stmts.iter().find(|s| s.kind() == "raise_statement")?;
    if rethrow(raised) {
        return None;
    }
    let subject = m
        .field("subject")
        .map(|s| s.text().to_string())
        .unwrap_or_default();
    Some(guard(
        last,
        raised,
        raised.range(),
        "return None".to_string(),
        &subject,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// The fall-backs found in `code` (named like a file of its language),
    /// each as the mutated line.
    fn mutated(file: &str, code: &str) -> Vec<String> {
        let typed = file.ends_with(".ts");
        testing::found(file, code, |g, root| fallbacks(g, typed, root))
            .into_iter()
            .map(|f| {
                let line = code[..f.range.start].matches('\n').count() + 1;
                testing::edited_line(code, &f.range, &f.replacement, line)
            })
            .collect()
    }

    #[test]
    fn a_go_switch_default_keeps_its_results_and_discards_the_error() {
        let go = "package p\n\nfunc op(s string) (int, error) {\n\tswitch s {\n\tcase \"list\", \"get\":\n\t\treturn 1, nil\n\tdefault:\n\t\treturn 0, fmt.Errorf(\"unknown operation %q\", s)\n\t}\n}\n";
        assert_eq!(
            mutated("t.go", go),
            ["return 0, func(error) error { return nil }(fmt.Errorf(\"unknown operation %q\", s))"]
        );
        // Without a case it is no dispatch; without an error result the
        // return cannot be kept.
        let no_case = go.replace("\tcase \"list\", \"get\":\n\t\treturn 1, nil\n", "");
        assert!(mutated("t.go", &no_case).is_empty());
        let no_error = go
            .replace("(int, error)", "int")
            .replace("return 1, nil", "return 1")
            .replace(
                "return 0, fmt.Errorf(\"unknown operation %q\", s)",
                "return 0",
            );
        assert!(mutated("t.go", &no_error).is_empty());
        // An error-like value the function does not return as an `error`.
        let problem = "package p\n\nfunc op(s string) *Problem {\n\tswitch s {\n\tcase \"a\":\n\t\treturn nil\n\tdefault:\n\t\treturn NewProblemError(\"unknown\")\n\t}\n}\n";
        assert!(mutated("t.go", problem).is_empty());
        let as_error = problem
            .replace("*Problem {", "error {")
            .replace("NewProblemError", "NewError");
        assert_eq!(mutated("t.go", &as_error).len(), 1);
    }

    #[test]
    fn a_go_default_that_passes_an_error_on_or_sorts_errors_is_not_a_fallback() {
        let wrap = "package p\n\nfunc f(err error) error {\n\tswitch {\n\tcase errors.Is(err, io.EOF):\n\t\treturn nil\n\tdefault:\n\t\treturn fmt.Errorf(\"reading: %w\", err)\n\t}\n}\n";
        assert!(mutated("t.go", wrap).is_empty());
        let quoted = wrap.replace("\"reading: %w\", err", "\"reading: %v\", err");
        assert!(mutated("t.go", &quoted).is_empty());
        // Cases that refuse themselves sort failures; they dispatch nothing.
        let sorting = "package p\n\nfunc f(err error) error {\n\tswitch {\n\tcase errors.As(err, &nf):\n\t\treturn fmt.Errorf(\"not found\")\n\tdefault:\n\t\treturn errors.New(\"failed\")\n\t}\n}\n";
        assert!(mutated("t.go", sorting).is_empty());
        let platform = "package p\n\nfunc bin() (string, error) {\n\tswitch runtime.GOOS {\n\tcase \"linux\":\n\t\treturn \"x\", nil\n\tdefault:\n\t\treturn \"\", errors.New(\"unsupported\")\n\t}\n}\n";
        assert!(mutated("t.go", platform).is_empty());
    }

    #[test]
    fn a_typescript_default_or_else_throw_returns_instead() {
        let ts = "function f(name: string): number {\n  switch (name) {\n    case 'a':\n      return 1;\n    default:\n      throw new Error(`Unknown tool: ${name}`);\n  }\n}\n";
        assert_eq!(
            mutated("t.ts", ts),
            ["return (void new Error(`Unknown tool: ${name}`)) as never;"]
        );
        // JavaScript has no `as`.
        assert_eq!(
            mutated("t.js", ts),
            ["return void (new Error(`Unknown tool: ${name}`));"]
        );
        let chain = "function g(kind: string) {\n  if (kind === 'a') {\n    run();\n  } else if (kind === 'b') {\n    walk();\n  } else {\n    throw new Error('invalid kind');\n  }\n}\n";
        assert_eq!(
            mutated("t.ts", chain),
            ["return (void new Error('invalid kind')) as never;"]
        );
        // A rethrow passes a caught error on; an `if` on an upstream's
        // answer handles errors; a chain whose branch refuses is no dispatch.
        let rethrow = chain.replace("throw new Error('invalid kind');", "throw error;");
        assert!(mutated("t.ts", &rethrow).is_empty());
        let upstream = chain.replace("kind === 'a'", "response.ok");
        assert!(mutated("t.ts", &upstream).is_empty());
        let refusing = chain.replace("walk();", "throw new Error('no');");
        assert!(mutated("t.ts", &refusing).is_empty());
        // Outside a function a `return` would not parse.
        let top = "switch (mode) {\n  case 'a':\n    break;\n  default:\n    throw new Error('bad mode');\n}\n";
        assert!(mutated("t.ts", top).is_empty());
    }

    #[test]
    fn a_python_else_or_wildcard_raise_returns_none() {
        let py = "def f(action):\n    if action == 'create':\n        return make()\n    elif action == 'list':\n        return ls()\n    else:\n        raise ValueError(f'Invalid action: {action}')\n";
        assert_eq!(mutated("t.py", py), ["return None"]);
        let bare = py.replace("raise ValueError(f'Invalid action: {action}')", "raise");
        assert!(mutated("t.py", &bare).is_empty());
        let named = py.replace("raise ValueError(f'Invalid action: {action}')", "raise e");
        assert!(mutated("t.py", &named).is_empty());
        let matched = "def f(action):\n    match action:\n        case 'a':\n            return 1\n        case _:\n            raise ValueError('unknown action')\n";
        assert_eq!(mutated("t.py", matched), ["return None"]);
        // A `case` that is not the wildcard catches something, not everything else.
        let captured = matched.replace("case _:", "case str():");
        assert!(mutated("t.py", &captured).is_empty());
        // A module's `if`/`else` runs at import, a class body's when the
        // class is made: a `return` would not parse in either.
        let module = "if MODE == 'a':\n    run()\nelse:\n    raise SystemExit('bad mode')\n";
        assert!(mutated("t.py", module).is_empty());
        let class_body = format!(
            "def make():\n    class C:\n{}",
            module
                .lines()
                .map(|l| format!("        {l}\n"))
                .collect::<String>()
        );
        assert!(mutated("t.py", &class_body).is_empty(), "{class_body}");
        let refusing = py.replace("return ls()", "raise KeyError('x')");
        assert!(mutated("t.py", &refusing).is_empty());
        let platform = py.replace("action == 'create'", "platform.system() == 'Linux'");
        assert!(mutated("t.py", &platform).is_empty());
    }
}
