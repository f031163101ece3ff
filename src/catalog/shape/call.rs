//! Two shapes of a protective call, named by the called function's words
//! (the vocabulary's `calls` terms):
//!
//! - a **protective transform**: a call whose result is used and whose name
//!   says it makes a value safe (`redact(msg, secrets)`,
//!   `mask_sensitive(token)`, `sanitize.Sanitize(body)`, `escapeHtml(s)`).
//!   The mutant passes the value through untouched: the call becomes its
//!   first argument;
//! - an **assertion statement**: a call of a check (`assert*`, `ensure*`,
//!   `validate*`, `verify*`, `check*`, `require*`, `enforce*`) whose result
//!   is thrown away, so only its exception refuses
//!   (`this.assertMqlIsAllowed(pipeline);`, `validate_safe_path(p)`). The
//!   mutant does not call it: Python `pass`, TypeScript `undefined`. Go has
//!   no such shape (a check returns an error, read by a guard).
//!
//! - a **route middleware**: a handler run before a route's own, named like
//!   a check (Express/Koa/Hono `app.post("/mcp", authMiddleware, handler)`,
//!   `router.get(path, rateLimit({…}), handler)`; FastAPI
//!   `Depends(verify_api_key)`). The mutant leaves it out of the route (the
//!   argument is dropped; a FastAPI dependency becomes `Depends(lambda:
//!   None)`).
//!
//! A call inside an `if` condition is a guard's business, not this one's.

use std::ops::Range;

use ast_grep_core::Node;

use super::super::grammar::Grammar;
use super::super::matcher::Doc;
use super::vocab::words;

/// One protective call found in a file.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    /// What the mutant replaces.
    pub range: Range<usize>,
    /// The call's replacement.
    pub replacement: String,
    /// Words of the called function's name.
    pub name: Vec<String>,
    /// An assertion statement (else a transform).
    pub assertion: bool,
    /// A transform whose result goes into a log line.
    pub logged: bool,
}

const TRANSFORM: &[&str] = &[
    "redact",
    "redacted",
    "mask",
    "masked",
    "sanitize",
    "sanitise",
    "sanitized",
    "escape",
    "scrub",
    "censor",
    "obfuscate",
    "strip",
];

const ASSERT: &[&str] = &[
    "assert", "ensure", "validate", "verify", "check", "require", "enforce",
];

fn callee_name(call: &Node<'_, Doc>) -> String {
    call.field("function")
        .map(|f| {
            f.text()
                .rsplit(['.', ':'])
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

fn in_condition(n: &Node<'_, Doc>) -> bool {
    n.ancestors()
        .take_while(|a| !a.kind().ends_with("statement") || a.kind() == "if_statement")
        .any(|a| {
            matches!(
                a.kind().as_ref(),
                "if_statement"
                    | "elif_clause"
                    | "while_statement"
                    | "ternary_expression"
                    | "conditional_expression"
                    | "boolean_operator"
            )
        })
}

fn first_argument<'r>(call: &Node<'r, Doc>) -> Option<Node<'r, Doc>> {
    let arg = call.field("arguments")?.named_children().next()?;
    // `f(*args)`, `f(...xs)`, `f(key=v)`: not a value to pass through.
    (!matches!(
        arg.kind().as_ref(),
        "list_splat" | "dictionary_splat" | "spread_element" | "keyword_argument" | "comment"
    ))
    .then_some(arg)
}

/// Words of a logger's or printer's name: a value made safe on its way
/// into one is a secret kept out of a log.
const LOG: &[&str] = &[
    "log", "logger", "logging", "debug", "info", "warn", "warning", "print", "printf", "fprintf",
    "println", "trace",
];

/// Is the call an argument of a logging call (in the same statement)?
fn logged(n: &Node<'_, Doc>) -> bool {
    n.ancestors()
        .take_while(|a| !a.kind().ends_with("statement"))
        .filter(|a| matches!(a.kind().as_ref(), "call" | "call_expression"))
        .any(|a| {
            a.field("function")
                .is_some_and(|f| words(&f.text()).iter().any(|w| LOG.contains(&w.as_str())))
        })
}

/// HTTP methods a router registers a route with.
const ROUTE_METHODS: &[&str] = &[
    "get", "post", "put", "patch", "delete", "all", "options", "head",
];

/// The middleware arguments of a TypeScript route registration
/// (`app.post("/mcp", authMiddleware, handler)`): every argument between
/// the path and the last one (the route's own handler) that names a
/// function (`authMiddleware`, `rateLimit({ max: 5 })`), each with the
/// range that drops it (its trailing comma included).
fn route_middlewares(call: &Node<'_, Doc>) -> Vec<(Range<usize>, String)> {
    let Some(f) = call
        .field("function")
        .filter(|f| f.kind() == "member_expression")
    else {
        return Vec::new();
    };
    let method = f
        .field("property")
        .map(|p| p.text().to_string())
        .unwrap_or_default();
    let Some(args) = call.field("arguments") else {
        return Vec::new();
    };
    let args: Vec<Node<'_, Doc>> = args
        .named_children()
        .filter(|a| a.kind() != "comment")
        .collect();
    let path_first = args
        .first()
        .is_some_and(|a| matches!(a.kind().as_ref(), "string" | "template_string"));
    if !ROUTE_METHODS.contains(&method.as_str()) || !path_first || args.len() < 3 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate().take(args.len() - 1).skip(1) {
        let name = match a.kind().as_ref() {
            "identifier" | "member_expression" => a.text().to_string(),
            "call_expression" => callee_name(a),
            _ => continue,
        };
        let name = name.rsplit('.').next().unwrap_or("").to_string();
        // Up to the next argument: the comma and the space after it go too.
        let end = args[i + 1].range().start;
        out.push((a.range().start..end, name));
    }
    out
}

/// Whether the call's result is unpacked into several values, so its one
/// argument cannot stand in for it: Go `a, b, c := f(x)` or `return f(x)`
/// in a function of several results; Python `a, b = f(x)`; TypeScript
/// `const [a, b] = f(x)` / `const { a } = await f(x)`.
fn several_results(call: &Node<'_, Doc>) -> bool {
    let up = call
        .parent()
        .filter(|p| matches!(p.kind().as_ref(), "await" | "await_expression"))
        .unwrap_or_else(|| call.clone());
    let Some(p) = up.parent() else {
        return false;
    };
    let count = |n: &Node<'_, Doc>| n.named_children().filter(|c| c.kind() != "comment").count();
    match p.kind().as_ref() {
        // Go: the call alone on the right of several names, or returned
        // alone from a function of several results.
        "expression_list" if count(&p) == 1 => {
            let Some(pp) = p.parent() else {
                return false;
            };
            match pp.kind().as_ref() {
                "short_var_declaration" | "assignment_statement" => {
                    pp.field("left").is_some_and(|l| count(&l) > 1)
                }
                "var_spec" => pp.children().filter(|c| c.kind() == "identifier").count() > 1,
                "return_statement" => pp
                    .ancestors()
                    .find(|a| {
                        matches!(
                            a.kind().as_ref(),
                            "function_declaration" | "method_declaration" | "func_literal"
                        )
                    })
                    .and_then(|f| f.field("result"))
                    .is_some_and(|r| r.kind() == "parameter_list" && count(&r) > 1),
                _ => false,
            }
        }
        "assignment" | "variable_declarator" | "assignment_expression" => {
            let target = p.field("left").or_else(|| p.field("name"));
            target.is_some_and(|t| {
                matches!(
                    t.kind().as_ref(),
                    "pattern_list"
                        | "tuple_pattern"
                        | "list_pattern"
                        | "array_pattern"
                        | "object_pattern"
                )
            })
        }
        _ => false,
    }
}

/// Whether the called function, declared in this file with types, returns
/// another type than its first parameter's, so that argument cannot stand
/// in for its result (Go `func initDefaultMask(fields []string) string`,
/// TypeScript `function redactAll(v: string[]): string`). Functions
/// declared elsewhere or without types are taken to return their input's
/// type, as a transform does.
fn changes_type(g: Grammar, root: &Node<'_, Doc>, call: &Node<'_, Doc>) -> bool {
    let name = callee_name(call);
    let kinds: &[&str] = match g {
        Grammar::Go => &["function_declaration", "method_declaration"],
        Grammar::TypeScript | Grammar::Tsx => &["function_declaration", "method_definition"],
        Grammar::Python => return false,
    };
    let clean = |t: &str| t.trim().trim_start_matches(':').trim().to_string();
    let signature = |f: &Node<'_, Doc>| -> Option<(String, String)> {
        let first = f
            .field("parameters")?
            .named_children()
            .find(|p| p.kind() != "comment")?;
        let input = clean(&first.field("type")?.text());
        let output = match g {
            Grammar::Go => {
                let r = f.field("result")?;
                if r.kind() == "parameter_list" {
                    let mut outs = r.named_children().filter(|p| p.kind() != "comment");
                    let only = outs.next()?;
                    if outs.next().is_some() {
                        return None;
                    }
                    clean(&only.field("type")?.text())
                } else {
                    clean(&r.text())
                }
            }
            _ => clean(&f.field("return_type")?.text()),
        };
        Some((input, output))
    };
    root.dfs()
        .filter(|f| kinds.contains(&f.kind().as_ref()))
        .filter(|f| f.field("name").is_some_and(|n| n.text() == name))
        .filter_map(|f| signature(&f))
        .any(|(input, output)| input != output)
}

/// A FastAPI dependency (`Depends(verify_api_key)`): the dependency's name.
fn fastapi_dependency(call: &Node<'_, Doc>) -> Option<String> {
    if callee_name(call) != "Depends" {
        return None;
    }
    let arg = first_argument(call)?;
    matches!(arg.kind().as_ref(), "identifier" | "attribute")
        .then(|| arg.text().rsplit('.').next().unwrap_or("").to_string())
}

/// Words that make a middleware's or dependency's name a check's.
const CHECK: &[&str] = &[
    "auth",
    "authenticate",
    "authorize",
    "require",
    "verify",
    "validate",
    "check",
    "ensure",
    "guard",
    "protect",
    "limit",
    "limiter",
    "rate",
    "login",
    "token",
    "key",
    "csrf",
    "cors",
    "origin",
    "host",
    "scope",
    "permission",
    "permissions",
    "role",
    "roles",
];

/// Every protective call in a parsed file.
pub(crate) fn calls(g: Grammar, root: &Node<'_, Doc>) -> Vec<Call> {
    let mut out = Vec::new();
    for n in root.dfs() {
        if !matches!(n.kind().as_ref(), "call" | "call_expression") {
            continue;
        }
        if matches!(g, Grammar::TypeScript | Grammar::Tsx) {
            for (range, name) in route_middlewares(&n) {
                let w = words(&name);
                if w.iter().any(|x| CHECK.contains(&x.as_str())) {
                    out.push(Call {
                        range,
                        replacement: String::new(),
                        name: w,
                        assertion: true,
                        logged: false,
                    });
                }
            }
        }
        if g == Grammar::Python {
            if let Some(dep) = fastapi_dependency(&n) {
                let w = words(&dep);
                if w.iter().any(|x| CHECK.contains(&x.as_str())) {
                    out.push(Call {
                        range: n.range(),
                        replacement: "Depends(lambda: None)".to_string(),
                        name: w,
                        assertion: true,
                        logged: false,
                    });
                }
                continue;
            }
        }
        let name = callee_name(&n);
        let w = words(&name);
        let Some(first) = w.first() else {
            continue;
        };
        // The statement the call is, when its result is thrown away.
        let statement = n
            .parent()
            .filter(|p| matches!(p.kind().as_ref(), "await" | "await_expression"))
            .unwrap_or_else(|| n.clone())
            .parent()
            .filter(|p| p.kind() == "expression_statement");
        let own = words(&super::refusal::enclosing_name(&n));
        if w.iter().any(|x| TRANSFORM.contains(&x.as_str())) && statement.is_none() {
            // Inside a transform's own implementation (`redactValues` calling
            // itself, `Sanitize` calling a policy): not where it is applied.
            if in_condition(&n) || own.iter().any(|x| TRANSFORM.contains(&x.as_str())) {
                continue;
            }
            let Some(arg) = first_argument(&n) else {
                continue;
            };
            if several_results(&n) || changes_type(g, root, &n) {
                continue;
            }
            out.push(Call {
                range: n.range(),
                replacement: arg.text().to_string(),
                name: w,
                assertion: false,
                logged: logged(&n),
            });
        } else if ASSERT.contains(&first.as_str()) && g != Grammar::Go {
            // A check checks something: one called without arguments
            // (`self._ensure_client()`) prepares state; inside another check
            // it is that check's implementation.
            let Some(stmt) = statement else {
                continue;
            };
            if first_argument(&n).is_none()
                || own.first().is_some_and(|x| ASSERT.contains(&x.as_str()))
            {
                continue;
            }
            let replacement = match g {
                Grammar::Python => "pass".to_string(),
                _ => "undefined".to_string(),
            };
            let range = match g {
                Grammar::Python => stmt.range(),
                _ => n.range(),
            };
            out.push(Call {
                range,
                replacement,
                name: w,
                assertion: true,
                logged: false,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    fn mutated(file: &str, code: &str) -> Vec<String> {
        testing::found(file, code, calls)
            .into_iter()
            .map(|c| testing::edited(code, &c.range, &c.replacement))
            .collect()
    }

    #[test]
    fn a_routes_checking_middleware_is_left_out_of_the_route() {
        let ts = "app.post(\"/mcp\", authMiddleware, async (req, res) => { await handle(req, res); });\nrouter.get('/x', rateLimit({ max: 5 }), express.json(), handler);\napp.get('/health', (req, res) => res.send('ok'));\nclient.get(url, opts, cb);\n";
        let m = mutated("a.ts", ts);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(
            m[0].starts_with("app.post(\"/mcp\", async (req, res)"),
            "{}",
            m[0]
        );
        assert!(
            m[1].contains("router.get('/x', express.json(), handler);"),
            "{}",
            m[1]
        );
        let py = "@app.get('/items', dependencies=[Depends(verify_api_key)])\nasync def items(user=Depends(get_current_user), db=Depends(get_db)):\n    return []\n";
        let m = mutated("a.py", py);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(
            m[0].contains("dependencies=[Depends(lambda: None)]"),
            "{}",
            m[0]
        );
    }

    #[test]
    fn transforms_pass_the_value_through_and_assertions_are_not_called() {
        let py = "def f(p, token):\n    validate_safe_path(p)\n    log.info('t %s', mask_sensitive(token, 8))\n    if is_masked(token):\n        return\n    return p\n";
        let m = mutated("a.py", py);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m[0].contains("    pass\n    log.info"), "{}", m[0]);
        assert!(m[1].contains("log.info('t %s', token)"), "{}", m[1]);
        let ts = "async function run(p) {\n  await this.assertMqlIsAllowed(p);\n  return redact(msg, secrets);\n}\n";
        let m = mutated("a.ts", ts);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m[0].contains("await undefined;"), "{}", m[0]);
        assert!(m[1].contains("return msg;"), "{}", m[1]);
        let go = "package p\n\nfunc f(b string) string {\n\tvalidate(b)\n\treturn sanitize.Sanitize(b)\n}\n";
        let m = mutated("a.go", go);
        assert_eq!(
            m,
            ["package p\n\nfunc f(b string) string {\n\tvalidate(b)\n\treturn b\n}\n"]
        );
    }

    #[test]
    fn a_transform_whose_result_is_unpacked_is_not_a_site() {
        // Its one argument cannot stand for several values: the mutant would
        // not build (Go) or would fail on unpacking, not on a test.
        let go = "package p\n\nfunc f(line string, in bool) (string, error) {\n\ts, toggled := sanitizeFenceLine(line, in)\n\tvar a, b = sanitizeParts(line)\n\t_, _, _ = toggled, a, b\n\treturn sanitizePair(s)\n}\n\nfunc g(line string) string {\n\treturn sanitizeLine(line)\n}\n";
        let m = mutated("a.go", go);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(m[0].contains("\treturn line\n"), "{}", m[0]);
        let py = "def f(x):\n    a, b = sanitize_pair(x)\n    (c, d) = sanitize_pair(x)\n    return sanitize(a)\n";
        let m = mutated("a.py", py);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(m[0].contains("return a\n"), "{}", m[0]);
        let ts = "async function f(x) {\n  const [a, b] = sanitizePair(x);\n  const { c } = await sanitizeObj(x);\n  return sanitize(a);\n}\n";
        let m = mutated("a.ts", ts);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(m[0].contains("return a;"), "{}", m[0]);
    }

    #[test]
    fn a_transform_declared_here_to_return_another_type_is_not_a_site() {
        // `initMask(fields)` → `fields` would hand a []string where a string
        // goes: the mutant would not build.
        let go = "package p\n\nvar mask = sanitizeFields(fields)\nvar body = sanitizeBody(raw)\n\nfunc sanitizeFields(fields []string) string {\n\treturn strings.Join(fields, \",\")\n}\n\nfunc sanitizeBody(raw string) (out string) {\n\treturn raw\n}\n";
        let m = mutated("a.go", go);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(m[0].contains("var body = raw\n"), "{}", m[0]);
        let ts = "function sanitizeAll(v: string[]): string {\n  return v.join(',');\n}\nfunction sanitizeOne(v: string): string {\n  return v;\n}\nexport const a = sanitizeAll(xs);\nexport const b = sanitizeOne(x);\n";
        let m = mutated("a.ts", ts);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(m[0].contains("export const b = x;"), "{}", m[0]);
    }

    #[test]
    fn a_transforms_own_body_and_argument_less_checks_are_not_sites() {
        let py = "def redact_values(v, secrets):\n    return [redact(x, secrets) for x in v]\n\ndef validate_all(q):\n    validate_each(q)\n\ndef run(self):\n    self._ensure_client()\n";
        assert!(mutated("r.py", py).is_empty(), "{:?}", mutated("r.py", py));
    }
}
