//! The protective-setting shape: a field, constant or config default whose
//! name says it switches a protection on (`read_only = True`, `verify:
//! true`, `Strict: true`, `requireConfirmation = true`) or keeps a risky
//! feature off (`allow_writes = False`, `insecure: false`,
//! `disableServerSideJs: true`, `readOnlySafe: false`: what may pass a
//! protection), set to a boolean literal. The mutant flips it.
//!
//! Where the value sits in a declaration is read per language: Python
//! assignments (with or without an annotation, `Field(default=…)`) and dict
//! entries; TypeScript object pairs, class fields, variable declarators and
//! zod's `.default(…)`; Go keyed elements of composite literals, constants,
//! variables and assignments.
//!
//! Left out, because on real servers they are not where a control is: a
//! function's parameter default and a call's keyword argument (a value passed
//! on; the setting it comes from is the site), MCP tool annotations
//! (`readOnlyHint`: advice to a client).
//!
//! Numbers are settings too when their name says they bound something
//! ([`bounds`]: `MAX_BYTES = 10 << 20`, `timeout: 30_000`), and so are the
//! bounds handed to where they take effect ([`bound_arguments`]:
//! Go's `io.LimitReader(r, maxBody)`, `context.WithTimeout(ctx, d)`).

use std::ops::Range;

use ast_grep_core::Node;

use super::super::grammar::Grammar;
use super::super::matcher::Doc;
use super::vocab::words;

/// One protective setting found in a file.
#[derive(Debug, Clone)]
pub(crate) struct Setting {
    /// The literal the mutant replaces.
    pub range: Range<usize>,
    /// The looser literal.
    pub replacement: String,
    /// The words of the setting's name.
    pub name: Vec<String>,
    /// 1-based line of the declaration.
    pub line: usize,
}

/// What kind of setting a name announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A protection that is on when `true`.
    OnWhenTrue,
    /// A risky feature that is off when `false` (protective when false).
    OnWhenFalse,
}

/// Words that make a boolean a protection switched on by `true`.
const ON_WORDS: &[&str] = &[
    "readonly",
    "verify",
    "verified",
    "strict",
    "secure",
    "httponly",
    "require",
    "required",
    "requires",
    "enforce",
    "enforced",
    "confirm",
    "confirmation",
    "protection",
    "protect",
    "redact",
    "redaction",
    "mask",
    "sanitize",
    "sanitise",
    "validate",
    "validation",
    "check",
    "checks",
    "restrict",
    "restricted",
    "deny",
    "lockdown",
];

/// Words that make a boolean a risky feature kept off by `false`.
const RISK_WORDS: &[&str] = &[
    "allow",
    "allows",
    "insecure",
    "unsafe",
    "dangerous",
    "dangerously",
    "skip",
    "bypass",
    "trust",
    "unverified",
    "override",
    "overrides",
];

/// Last words that make a protection's name say what may pass it
/// (`readOnlySafe`: the tool is let through in read-only mode).
const PERMITS: &[&str] = &["safe", "allowed", "permitted", "exempt", "ok", "compatible"];

/// Capabilities a switch may enable that a read-only or locked-down server
/// keeps off.
const RISKY_CAPABILITIES: &[&str] = &[
    "write",
    "writes",
    "delete",
    "deletes",
    "destructive",
    "mutation",
    "mutations",
    "mutating",
    "exec",
    "shell",
];

/// Does a name (its words) switch a protection on when `true`
/// (`read_only`, `strict`, `require_auth`, `disable_writes`)?
pub(crate) fn protects_when_true(name: &[String]) -> bool {
    kind_of(name) == Some(Kind::OnWhenTrue)
}

/// Does a name (its words) switch a risky feature on when `true`
/// (`allow_writes`, `insecure`, `skip_verify`)?
pub(crate) fn risky_when_true(name: &[String]) -> bool {
    kind_of(name) == Some(Kind::OnWhenFalse)
}

fn kind_of(name: &[String]) -> Option<Kind> {
    let has = |set: &[&str]| name.iter().any(|w| set.contains(&w.as_str()));
    let joined = name.join("");
    // `read_only`, `readOnly`, `READ_ONLY` → "readonly"; `http_only` alike.
    let on = has(ON_WORDS) || joined.contains("readonly") || joined.contains("httponly");
    let disable = name
        .first()
        .is_some_and(|w| matches!(w.as_str(), "disable" | "disabled" | "no" | "without"));
    // A protection's name followed by a permission (`readOnlySafe`,
    // `read_only_allowed`, `auth_exempt`) says what may pass it: `true`
    // lets the item through, so the setting is a risky one.
    if on && name.last().is_some_and(|w| PERMITS.contains(&w.as_str())) {
        return Some(Kind::OnWhenFalse);
    }
    if disable {
        // `disable_ssl_verification = False` keeps a protection on;
        // `disableServerSideJs = true` keeps a risky feature off.
        return Some(
            if on
                || name
                    .iter()
                    .any(|w| matches!(w.as_str(), "ssl" | "tls" | "auth"))
            {
                Kind::OnWhenFalse
            } else {
                Kind::OnWhenTrue
            },
        );
    }
    if has(RISK_WORDS) {
        return Some(Kind::OnWhenFalse);
    }
    // A switch that enables a dangerous capability (`enableWriteTools`,
    // `write_enabled`, `ENABLE_DESTRUCTIVE`) keeps it off when false.
    // (`enable_delete_protection` protects: the protection word wins.)
    if !on && has(&["enable", "enabled"]) && has(RISKY_CAPABILITIES) {
        return Some(Kind::OnWhenFalse);
    }
    if on {
        return Some(Kind::OnWhenTrue);
    }
    None
}

/// The name a value is given to, per node kind (`None`: not a setting).
fn named_value<'r>(g: Grammar, n: &Node<'r, Doc>) -> Option<(String, Node<'r, Doc>)> {
    let field = |f: &str| n.field(f);
    let (name, value) = match (g, n.kind().as_ref()) {
        (Grammar::Python, "assignment") => (field("left")?, field("right")?),
        (Grammar::Python, "pair") => (field("key")?, field("value")?),
        (
            Grammar::TypeScript | Grammar::Tsx,
            "pair" | "variable_declarator" | "public_field_definition" | "property_signature",
        ) => {
            let key = field("key").or_else(|| field("name"))?;
            (key, field("value")?)
        }
        (Grammar::TypeScript | Grammar::Tsx, "assignment_expression") => {
            (field("left")?, field("right")?)
        }
        (Grammar::Go, "keyed_element") => {
            let kids: Vec<Node<'r, Doc>> = n.named_children().collect();
            if kids.len() != 2 {
                return None;
            }
            (kids[0].clone(), kids[1].clone())
        }
        (Grammar::Go, "const_spec" | "var_spec") => (field("name")?, field("value")?),
        (Grammar::Go, "assignment_statement" | "short_var_declaration") => {
            (field("left")?, field("right")?)
        }
        _ => return None,
    };
    let text = name.text();
    // The last part of `self.x`, `cfg.MaxSize`, `"max_size"`.
    let last = text
        .trim_matches(['"', '\'', '`'])
        .rsplit(['.', ' '])
        .next()
        .unwrap_or("")
        .to_string();
    if last.is_empty() || last.contains(['(', '[', ',']) {
        return None;
    }
    Some((last, value))
}

/// The boolean literal inside a value that states the setting: the value
/// itself, a Go expression list's single element, `Field(default=…)`, zod's
/// `.default(…)`.
fn literal<'r>(g: Grammar, v: &Node<'r, Doc>) -> Option<Node<'r, Doc>> {
    let k = v.kind();
    match k.as_ref() {
        "true" | "false" => Some(v.clone()),
        "expression_list" | "literal_element" | "parenthesized_expression" => {
            let kids: Vec<Node<'r, Doc>> = v.named_children().collect();
            (kids.len() == 1).then(|| literal(g, &kids[0])).flatten()
        }
        "call" if g == Grammar::Python => {
            // `Field(default=True)`, `Field(True)`.
            let f = v.field("function")?.text().to_string();
            if !f.ends_with("Field") {
                return None;
            }
            let args = v.field("arguments")?;
            // The default is the first positional argument or `default=`.
            let first = args
                .named_children()
                .find(|a| a.kind() != "comment")
                .filter(|a| a.kind() != "keyword_argument")
                .and_then(|a| literal(g, &a));
            let default = args.named_children().find_map(|a| {
                if a.kind() == "keyword_argument" {
                    (a.field("name")?.text() == "default")
                        .then(|| literal(g, &a.field("value")?))
                        .flatten()
                } else {
                    None
                }
            });
            first.or(default)
        }
        "call_expression" if g != Grammar::Go => {
            // zod: `z.boolean().default(true)`.
            let f = v.field("function")?;
            if !f.text().ends_with(".default") {
                return None;
            }
            let args = v.field("arguments")?;
            let kids: Vec<Node<'r, Doc>> = args.named_children().collect();
            (kids.len() == 1).then(|| literal(g, &kids[0])).flatten()
        }
        _ => None,
    }
}

fn flipped(text: &str) -> Option<&'static str> {
    match text {
        "True" => Some("False"),
        "False" => Some("True"),
        "true" => Some("false"),
        "false" => Some("true"),
        _ => None,
    }
}

/// Every protective setting in a parsed file.
pub(crate) fn settings(g: Grammar, root: &Node<'_, Doc>) -> Vec<Setting> {
    let mut out = Vec::new();
    for n in root.dfs() {
        let Some((name, value)) = named_value(g, &n) else {
            continue;
        };
        let Some(lit) = literal(g, &value) else {
            continue;
        };
        let w = words(&name);
        // MCP tool annotations (`readOnlyHint: true`) advise a client; they
        // protect nothing on the server.
        if w.iter().any(|x| x == "hint") {
            continue;
        }
        let text = lit.text().to_string();
        let Some(f) = flipped(&text) else {
            continue;
        };
        let replacement = match kind_of(&w) {
            Some(Kind::OnWhenTrue) if text.eq_ignore_ascii_case("true") => f.to_string(),
            Some(Kind::OnWhenFalse) if text.eq_ignore_ascii_case("false") => f.to_string(),
            _ => continue,
        };
        out.push(Setting {
            range: lit.range(),
            replacement,
            name: w,
            line: n.start_pos().line() + 1,
        });
    }
    out
}

/// Words that make a number a bound: a maximum, a limit, a time allowed.
const BOUND_WORDS: &[&str] = &["max", "maximum", "limit", "limits", "timeout", "deadline"];

/// Words that make a number something else than a bound on input or work: a
/// minimum, a retry budget, a pause, a position (`MIN_LEN`, `MAX_RETRIES`,
/// `POLL_INTERVAL_TIMEOUT`, `PAGE_LIMIT_OFFSET`), a token's lifetime.
const NOT_BOUND_WORDS: &[&str] = &[
    "min",
    "minimum",
    "retry",
    "retries",
    "attempt",
    "attempts",
    "interval",
    "delay",
    "sleep",
    "backoff",
    "poll",
    "port",
    "version",
    "offset",
    "ttl",
    "age",
    "expiry",
    "expires",
    "errors",
    "failures",
    "verbosity",
    "level",
];

/// Does a name (its words) say it bounds something: a maximum, a limit, a
/// timeout, and none of the words of something else?
fn names_bound(w: &[String]) -> bool {
    let has = |set: &[&str]| w.iter().any(|x| set.contains(&x.as_str()));
    has(BOUND_WORDS) && !has(NOT_BOUND_WORDS)
}

/// A Go keyed element's key and value, the value taken out of its
/// `literal_element` (`Timeout: probeTimeout`, `IsError: true`).
pub(crate) fn go_keyed<'r>(n: &Node<'r, Doc>) -> Option<(Node<'r, Doc>, Node<'r, Doc>)> {
    let kids: Vec<Node<'r, Doc>> = n.named_children().collect();
    if kids.len() != 2 {
        return None;
    }
    let value = match kids[1].kind().as_ref() {
        "literal_element" => kids[1].named_children().next()?,
        _ => kids[1].clone(),
    };
    Some((kids[0].clone(), value))
}

/// A number as written (`4096`, `10 << 20`, `28_000`, `5 * 60`, Go `30 *
/// time.Second`): numeric literals, Go `time.Unit`s and arithmetic, at least
/// one literal, not zero or negative (often "no limit").
fn number(g: Grammar, v: &Node<'_, Doc>) -> bool {
    fn leaves_ok(g: Grammar, v: &Node<'_, Doc>, lits: &mut usize) -> bool {
        match v.kind().as_ref() {
            "integer" | "float" | "number" | "int_literal" | "float_literal" => {
                *lits += 1;
                true
            }
            "selector_expression" if g == Grammar::Go => {
                let t = v.text();
                t.starts_with("time.")
                    && matches!(
                        t.trim_start_matches("time."),
                        "Nanosecond" | "Microsecond" | "Millisecond" | "Second" | "Minute" | "Hour"
                    )
            }
            "binary_operator" | "binary_expression" => {
                let op = v.field("operator").map(|o| o.text().to_string());
                matches!(op.as_deref(), Some("*" | "+" | "<<"))
                    && v.field("left").is_some_and(|l| leaves_ok(g, &l, lits))
                    && v.field("right").is_some_and(|r| leaves_ok(g, &r, lits))
            }
            "parenthesized_expression" | "expression_list" | "literal_element" => {
                let kids: Vec<Node<'_, Doc>> = v.named_children().collect();
                kids.len() == 1 && leaves_ok(g, &kids[0], lits)
            }
            _ => false,
        }
    }
    let mut lits = 0;
    let t = v.text();
    let zero = t.trim_matches(['(', ')', ' ']).trim_start_matches("0x") == "0"
        || t.trim() == "0"
        || t.trim() == "0.0";
    leaves_ok(g, v, &mut lits) && lits > 0 && !zero
}

/// How much a bound named `w` is loosened: a thousandfold, a TypeScript
/// timeout tenfold (a timer past 2^31 ms fires at once).
fn loosening_factor(g: Grammar, w: &[String]) -> u32 {
    let timeout = w.iter().any(|x| x == "timeout" || x == "deadline");
    if matches!(g, Grammar::TypeScript | Grammar::Tsx) && timeout {
        10
    } else {
        1000
    }
}

/// Every numeric bound declared in a parsed file: a constant, field, config
/// default or keyed element whose name says it is a maximum, a limit or a
/// timeout, set to a number (`MAX_CONTENT_CHARS = 28_000`, `maxRows: 500`,
/// Go `Timeout: 30 * time.Second`, `const maxBody = 10 << 20`). The mutant
/// loosens it a thousandfold (TypeScript timeouts tenfold: a timer longer than
/// 2^31 ms fires at once). A parameter's default and a call's argument are
/// values passed on, not declared (as for boolean settings).
pub(crate) fn bounds(g: Grammar, root: &Node<'_, Doc>) -> Vec<Setting> {
    let mut out = Vec::new();
    for n in root.dfs() {
        let Some((name, value)) = named_value(g, &n) else {
            continue;
        };
        // Go's `x := 5` inside a function is a local variable, not a declaration.
        if g == Grammar::Go && n.kind() == "short_var_declaration" {
            continue;
        }
        let w = words(&name);
        if !names_bound(&w) {
            continue;
        }
        if !number(g, &value) {
            continue;
        }
        let v = value.text().to_string();
        let factor = loosening_factor(g, &w);
        out.push(Setting {
            range: value.range(),
            replacement: format!("({v}) * {factor}"),
            name: w,
            line: n.start_pos().line() + 1,
        });
    }
    out
}

/// Every command-line flag whose default is a protective setting or a
/// bound: Go `flag.BoolVar(&x, "tls-skip-verify", false, "…")`,
/// `flag.Int("max-results", 100, "…")`, cobra/pflag
/// `cmd.Flags().DurationP("timeout", "t", 30*time.Second, "…")`; Python
/// argparse `parser.add_argument("--max-rows", type=int, default=500)`. The
/// flag's name is the setting's; the default is loosened as a declared one
/// would be (a boolean flipped where its name says which side protects, a
/// number a thousandfold where its name says it bounds).
pub(crate) fn flag_defaults(g: Grammar, root: &Node<'_, Doc>) -> Vec<Setting> {
    let mut out = Vec::new();
    for n in root.dfs() {
        let Some((name, value)) = (match g {
            Grammar::Go => go_flag(&n),
            Grammar::Python => argparse_flag(&n),
            _ => None,
        }) else {
            continue;
        };
        let w = words(&name);
        let v = value.text().to_string();
        let replacement = match v.as_str() {
            "true" | "True" | "false" | "False" => {
                let on = matches!(v.as_str(), "true" | "True");
                let protective = match kind_of(&w) {
                    Some(Kind::OnWhenTrue) => on,
                    Some(Kind::OnWhenFalse) => !on,
                    None => false,
                };
                if !protective {
                    continue;
                }
                match (g, on) {
                    (Grammar::Python, true) => "False".to_string(),
                    (Grammar::Python, false) => "True".to_string(),
                    (_, on) => (!on).to_string(),
                }
            }
            _ if names_bound(&w) && number(g, &value) => format!("({v}) * 1000"),
            _ => continue,
        };
        out.push(Setting {
            range: value.range(),
            replacement,
            name: w,
            line: value.start_pos().line() + 1,
        });
    }
    out
}

/// Every bound read from the environment with a literal default: Python
/// `int(os.getenv("CH_CONNECT_TIMEOUT", "30"))`, `os.environ.get("MAX_ROWS",
/// 500)`; TypeScript `parseInt(process.env.SPAWN_MAX_BUFFER || "1048577")`,
/// `process.env.MAX_ITEMS ?? 100`. The variable's name is the setting's; the
/// default is what applies unless the deployment says otherwise, loosened a
/// thousandfold (a number, or the digits of a string).
pub(crate) fn env_defaults(g: Grammar, root: &Node<'_, Doc>) -> Vec<Setting> {
    let mut out = Vec::new();
    for n in root.dfs() {
        let found = match (g, n.kind().as_ref()) {
            (Grammar::Python, "call") => {
                let f = n.field("function").map(|f| f.text().to_string());
                let env_call = f.as_deref().is_some_and(|f| {
                    matches!(f, "os.getenv" | "os.environ.get" | "environ.get" | "getenv")
                });
                let args: Vec<Node<'_, Doc>> = n
                    .field("arguments")
                    .map(|a| {
                        a.named_children()
                            .filter(|c| c.kind() != "comment")
                            .collect()
                    })
                    .unwrap_or_default();
                match (env_call, args.as_slice()) {
                    (true, [name, default]) if name.kind() == "string" => Some((
                        name.text().trim_matches(['"', '\'']).to_string(),
                        default.clone(),
                    )),
                    _ => None,
                }
            }
            (Grammar::TypeScript | Grammar::Tsx, "binary_expression")
                if n.field("operator")
                    .is_some_and(|o| matches!(o.text().as_ref(), "||" | "??")) =>
            {
                let left = n
                    .field("left")
                    .map(|l| l.text().to_string())
                    .unwrap_or_default();
                match (env_name(&left), n.field("right")) {
                    (Some(name), Some(right)) if left.starts_with("process.env") => {
                        Some((name, right))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let Some((name, default)) = found else {
            continue;
        };
        let w = words(&name);
        if !names_bound(&w) {
            continue;
        }
        let Some(replacement) = loosened_literal(&default.text(), loosening_factor(g, &w)) else {
            continue;
        };
        out.push(Setting {
            range: default.range(),
            replacement,
            name: w,
            line: default.start_pos().line() + 1,
        });
    }
    out
}

/// A positive number literal, or a quoted one, times `factor`: `30` →
/// `(30) * 1000`, `"30"` → `"30000"`, `'2.5'` → `'2500'`.
fn loosened_literal(text: &str, factor: u32) -> Option<String> {
    let t = text.trim();
    let quote = t.chars().next().filter(|c| matches!(c, '"' | '\'' | '`'));
    let inner = match quote {
        Some(q) => t.strip_prefix(q)?.strip_suffix(q)?,
        None => t,
    };
    let v: f64 = inner.replace('_', "").parse().ok()?;
    if v <= 0.0 || !v.is_finite() {
        return None;
    }
    Some(match quote {
        Some(q) => format!("{q}{}{q}", v * f64::from(factor)),
        None => format!("({inner}) * {factor}"),
    })
}

/// A Go flag definition's name and default: `flag.BoolVar(&x, "name",
/// false, "…")`, `fs.Int("name", 5, "…")`, `cmd.Flags().BoolP("name", "n",
/// true, "…")`.
fn go_flag<'r>(n: &Node<'r, Doc>) -> Option<(String, Node<'r, Doc>)> {
    if n.kind() != "call_expression" {
        return None;
    }
    let f = n
        .field("function")
        .filter(|f| f.kind() == "selector_expression")?;
    let method = f.field("field")?.text().to_string();
    let recv = f.field("operand")?.text().to_string();
    let kinds = [
        "Bool", "Int", "Int64", "Uint", "Uint64", "Float64", "Duration",
    ];
    let base = method.strip_suffix('P').unwrap_or(&method);
    let (base, var) = match base.strip_suffix("Var") {
        Some(b) => (b, true),
        None => (base, false),
    };
    let flags_receiver = recv == "flag" || recv.ends_with("Flags()") || recv.ends_with("flags");
    if !kinds.contains(&base) || !flags_receiver {
        return None;
    }
    let args: Vec<Node<'r, Doc>> = n.field("arguments")?.named_children().collect();
    let at = usize::from(var);
    let name = args.get(at)?;
    if name.kind() != "interpreted_string_literal" {
        return None;
    }
    let default = args.get(at + 1 + usize::from(method.ends_with('P')))?;
    Some((name.text().trim_matches('"').to_string(), default.clone()))
}

/// An argparse option's name and literal default:
/// `parser.add_argument("--max-rows", type=int, default=500)`.
fn argparse_flag<'r>(n: &Node<'r, Doc>) -> Option<(String, Node<'r, Doc>)> {
    if n.kind() != "call" {
        return None;
    }
    let f = n.field("function")?;
    if !f.text().ends_with(".add_argument") {
        return None;
    }
    let args = n.field("arguments")?;
    let name = args
        .named_children()
        .filter(|a| a.kind() == "string")
        .map(|a| a.text().trim_matches(['"', '\'']).to_string())
        .find(|a| a.starts_with("--"))?;
    let default = args.named_children().find_map(|a| {
        (a.kind() == "keyword_argument" && a.field("name").is_some_and(|k| k.text() == "default"))
            .then(|| a.field("value"))
            .flatten()
    })?;
    Some((name.trim_start_matches('-').to_string(), default))
}

/// Go calls one of whose arguments (its index here) bounds what they read
/// or how long they wait: `context.WithTimeoutCause(ctx, d, cause)` is
/// bounded by `d`, not by its last argument.
const GO_BOUNDING_CALLS: &[(&str, usize)] = &[
    ("io.LimitReader", 1),
    ("http.MaxBytesReader", 2),
    ("context.WithTimeout", 1),
    ("context.WithTimeoutCause", 1),
];

/// Whether a Go value is declared, in this file, with a type that is not a
/// number, so multiplying it would not build: a struct field of that name
/// (`Limit *int64`, `Limit string`) for `args.Limit`, a parameter or typed
/// `var` of the enclosing function for a plain name. Unknown types (declared
/// elsewhere, inferred by `:=`) are taken to be numbers, as the key says.
fn go_not_a_number(root: &Node<'_, Doc>, value: &Node<'_, Doc>) -> bool {
    let not_number = |t: Node<'_, Doc>| {
        matches!(
            t.kind().as_ref(),
            "pointer_type"
                | "slice_type"
                | "array_type"
                | "map_type"
                | "struct_type"
                | "interface_type"
                | "channel_type"
                | "function_type"
        ) || matches!(t.text().as_ref(), "string" | "bool" | "any" | "error")
    };
    let named = |decl: &Node<'_, Doc>, name: &str| {
        decl.children().any(|c| {
            matches!(c.kind().as_ref(), "field_identifier" | "identifier") && c.text() == name
        })
    };
    match value.kind().as_ref() {
        "selector_expression" => {
            let Some(field) = value.field("field") else {
                return false;
            };
            let name = field.text().to_string();
            root.dfs()
                .filter(|d| d.kind() == "field_declaration" && named(d, &name))
                .filter_map(|d| d.field("type"))
                .any(not_number)
        }
        "identifier" => {
            let name = value.text().to_string();
            let Some(function) = value.ancestors().find(|a| {
                matches!(
                    a.kind().as_ref(),
                    "function_declaration" | "method_declaration" | "func_literal"
                )
            }) else {
                return false;
            };
            let typed = function
                .dfs()
                .filter(|d| {
                    matches!(d.kind().as_ref(), "parameter_declaration" | "var_spec")
                        && named(d, &name)
                })
                .filter_map(|d| d.field("type"))
                .any(not_number);
            typed
        }
        _ => false,
    }
}

/// Every bound passed where it takes effect rather than declared, in Go: a
/// keyed element named a maximum, limit or timeout holding a name
/// (`Timeout: probeTimeout`), and the bound of Go's bounding calls
/// (`io.LimitReader(r.Body, maxBody)`, `context.WithTimeout(ctx, d)`); the
/// mutants loosen the value a thousandfold. A literal value is the declared
/// bound's site ([`bounds`]). Python's `timeout=` keyword arguments are not
/// sites: the value is handed on (`timeout=self._timeout`,
/// `cli_timeout=settings.cli_timeout`), and where it is declared as a number
/// is ([`bounds`]).
pub(crate) fn bound_arguments(g: Grammar, root: &Node<'_, Doc>) -> Vec<Setting> {
    let mut out = Vec::new();
    let push =
        |out: &mut Vec<Setting>, v: &Node<'_, Doc>, replacement: String, name: Vec<String>| {
            out.push(Setting {
                range: v.range(),
                replacement,
                name,
                line: v.start_pos().line() + 1,
            })
        };
    for n in root.dfs() {
        match (g, n.kind().as_ref()) {
            (Grammar::Go, "keyed_element") => {
                let Some((key, value)) = go_keyed(&n) else {
                    continue;
                };
                let w = words(&key.text());
                if !names_bound(&w) {
                    continue;
                }
                if !matches!(value.kind().as_ref(), "identifier" | "selector_expression")
                    || go_not_a_number(root, &value)
                {
                    continue;
                }
                push(&mut out, &value, format!("({}) * 1000", value.text()), w);
            }
            (Grammar::Go, "call_expression") => {
                let Some(f) = n.field("function") else {
                    continue;
                };
                let ft = f.text().to_string();
                let Some(&(_, at)) = GO_BOUNDING_CALLS.iter().find(|(f, _)| *f == ft) else {
                    continue;
                };
                let Some(bound) = n
                    .field("arguments")
                    .and_then(|a| a.named_children().filter(|c| c.kind() != "comment").nth(at))
                else {
                    continue;
                };
                let name = words(ft.rsplit('.').next().unwrap_or(""));
                push(&mut out, &bound, format!("({}) * 1000", bound.text()), name);
            }
            _ => {}
        }
    }
    out
}

/// Whether a value is a literal (a number, string, boolean, `None`/`null`/
/// `nil`), which a wiring is not.
fn is_literal(v: &Node<'_, Doc>) -> bool {
    matches!(
        v.kind().as_ref(),
        "true"
            | "false"
            | "none"
            | "null"
            | "nil"
            | "undefined"
            | "integer"
            | "float"
            | "number"
            | "int_literal"
            | "float_literal"
            | "string"
            | "template_string"
            | "interpreted_string_literal"
            | "raw_string_literal"
    )
}

/// Whether a value reads as a truth value without its type: an equality
/// test or negation, a `GetBool`/`getBoolean`/`is…`/`has…` call, or a name that
/// is itself a protective switch (`cfg.ReadOnly`); and is not plumbing: a
/// name or call sharing a word with the key (`verify_ssl=self.config.ssl_verify`,
/// `ValidationEnabled: c.IsValidationEnabled()`) passes on a switch set
/// elsewhere, which is that switch's site.
fn boolean_value(v: &Node<'_, Doc>, key: &[String], go: bool) -> bool {
    let last_words = |t: &str| {
        let t = t.strip_suffix("()").unwrap_or(t);
        words(t.rsplit('.').next().unwrap_or(""))
    };
    let shares = |w: &[String]| {
        w.iter()
            .filter(|x| !matches!(x.as_str(), "is" | "get" | "has" | "should"))
            .any(|x| key.contains(x))
    };
    match v.kind().as_ref() {
        // Equality, not ordering: `n < 1e-10` computes, `env == "1"` switches.
        // `a || b` is a truth value in Go only (TypeScript and Python hand
        // back an operand: `x.tools || []`, `fn or default`).
        "binary_expression" => v.field("operator").is_some_and(|o| {
            matches!(o.text().as_ref(), "==" | "!=" | "===" | "!==")
                || (go && matches!(o.text().as_ref(), "&&" | "||"))
        }),
        "comparison_operator" => !v
            .children()
            .any(|c| matches!(c.kind().as_ref(), "<" | "<=" | ">" | ">=")),
        "not_operator" => true,
        "unary_expression" => v.text().starts_with('!'),
        "call" | "call_expression" => v.field("function").is_some_and(|f| {
            let w = last_words(&f.text());
            !shares(&w)
                && (w.last().is_some_and(|x| x == "bool" || x == "boolean")
                    || w.first().is_some_and(|x| x == "is" || x == "has"))
        }),
        "identifier" | "selector_expression" | "attribute" | "member_expression" => {
            let w = last_words(&v.text());
            kind_of(&w).is_some() && !shares(&w)
        }
        _ => false,
    }
}

/// The name of the environment variable a comparison reads, if it reads
/// one: `os.getenv("X")`, `os.environ.get("X")`, `os.environ["X"]`,
/// `process.env.X`, `process.env["X"]`, Go `os.Getenv("X")`.
fn env_name(text: &str) -> Option<String> {
    static ENV: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = ENV.get_or_init(|| {
        regex::Regex::new(
            r#"(?:\bos\.(?:getenv|Getenv|LookupEnv)\(|\benviron(?:\.get\(|\[))\s*["']([A-Za-z_][A-Za-z0-9_]*)["']|\bprocess\.env(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*["']([A-Za-z_][A-Za-z0-9_]*)["'])"#,
        )
        .expect("a valid regex")
    });
    let c = re.captures(text)?;
    // One variable: `a == "1" or b == "1"` is not one switch.
    if re.find_iter(text).count() != 1 {
        return None;
    }
    c.iter()
        .skip(1)
        .flatten()
        .next()
        .map(|m| m.as_str().to_string())
}

/// Every protective switch wired to a value that is not a literal: a
/// keyword argument (`httpx.Client(verify=not settings.insecure)`), a
/// variable, constant or field (`READ_ONLY = os.getenv("RO") == "1"`), an
/// object or struct field (`ReadOnly: viper.GetBool("read-only")`), or a Go option
/// (`WithReadOnly(cfg.IsLocked())`), when the value reads as a truth value
/// ([`boolean_value`]). A value passed on under its own name
/// (`read_only=read_only`, `ReadOnly: cfg.ReadOnly`) is plumbing, not a
/// site. The mutant wires the protection off: Python `False`, TypeScript
/// and Go `false && (value)` (or `true || (value)` for a risky feature's
/// switch), which keeps the value's variables used.
pub(crate) fn wirings(g: Grammar, root: &Node<'_, Doc>) -> Vec<Setting> {
    let mut out: Vec<Setting> = Vec::new();
    for n in root.dfs() {
        let (key, value) = match (g, n.kind().as_ref()) {
            // An environment variable compared where it is read
            // (`return os.getenv("X_VERIFY", "true").lower() == "true"`,
            // `process.env.READ_ONLY !== "false"`): the variable's name is
            // the switch's, whatever holds the result. A comparison a named
            // holder already wired is that holder's site.
            (_, "comparison_operator" | "binary_expression")
                if out.iter().all(|s| s.range != n.range())
                    && !n
                        .field("operator")
                        .is_some_and(|o| matches!(o.text().as_ref(), "&&" | "||")) =>
            {
                match env_name(&n.text()) {
                    Some(name) => (name, n.clone()),
                    None => continue,
                }
            }
            (Grammar::Python, "keyword_argument") => {
                let (Some(k), Some(v)) = (n.field("name"), n.field("value")) else {
                    continue;
                };
                (k.text().to_string(), v)
            }
            (Grammar::TypeScript | Grammar::Tsx, "pair") => {
                let (Some(k), Some(v)) = (n.field("key"), n.field("value")) else {
                    continue;
                };
                (k.text().trim_matches(['"', '\'']).to_string(), v)
            }
            (Grammar::Go, "keyed_element") => {
                let kids: Vec<Node<'_, Doc>> = n.named_children().collect();
                if kids.len() != 2 {
                    continue;
                }
                let v = match kids[1].kind().as_ref() {
                    "literal_element" => match kids[1].named_children().next() {
                        Some(v) => v,
                        None => continue,
                    },
                    _ => kids[1].clone(),
                };
                (kids[0].text().to_string(), v)
            }
            (Grammar::Go, "call_expression") => {
                let (Some(f), Some(args)) = (n.field("function"), n.field("arguments")) else {
                    continue;
                };
                let t = f.text().to_string();
                let last = t.rsplit('.').next().unwrap_or("");
                let Some(opt) = last.strip_prefix("With").filter(|o| !o.is_empty()) else {
                    continue;
                };
                let kids: Vec<Node<'_, Doc>> = args.named_children().collect();
                if kids.len() != 1 {
                    continue;
                }
                (opt.to_string(), kids[0].clone())
            }
            // A variable, constant, field or dict entry set from a value
            // (`READ_ONLY = os.getenv("READ_ONLY") == "true"`, Go
            // `readOnly := os.Getenv("RO") == "1"`).
            _ => {
                let Some((name, v)) = named_value(g, &n) else {
                    continue;
                };
                let v = match v.kind().as_ref() {
                    "expression_list" => {
                        let kids: Vec<Node<'_, Doc>> = v.named_children().collect();
                        if kids.len() != 1 {
                            continue;
                        }
                        kids[0].clone()
                    }
                    _ => v,
                };
                (name, v)
            }
        };
        let w = words(&key);
        if w.iter().any(|x| x == "hint") || is_literal(&value) {
            continue;
        }
        let vt = value.text().to_string();
        if !boolean_value(&value, &w, g == Grammar::Go) {
            continue;
        }
        let off = match kind_of(&w) {
            Some(Kind::OnWhenTrue) => false,
            Some(Kind::OnWhenFalse) => true,
            None => continue,
        };
        let replacement = match (g, off) {
            (Grammar::Python, false) => "False".to_string(),
            (Grammar::Python, true) => "True".to_string(),
            (_, false) => format!("false && ({vt})"),
            (_, true) => format!("true || ({vt})"),
        };
        out.push(Setting {
            range: value.range(),
            replacement,
            name: w,
            line: value.start_pos().line() + 1,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    fn found(file: &str, code: &str) -> Vec<(String, String)> {
        loosened(file, code, settings)
    }

    #[test]
    fn booleans_are_flipped_only_in_their_protective_position() {
        let py = "class S(BaseSettings):\n    read_only: bool = True\n    allow_writes: bool = False\n    verbose: bool = True\n    strict = Field(default=True)\n    read_only_off: bool = False\nclient = httpx.Client(verify=True)\n";
        assert_eq!(
            found("s.py", py),
            [
                ("True".into(), "False".into()),
                ("False".into(), "True".into()),
                ("True".into(), "False".into()),
            ]
        );
        let ts = "const cfg = { readOnly: z.boolean().default(true), allowRequestOverrides: false, disableServerSideJs: true, debug: true };\n";
        assert_eq!(found("c.ts", ts).len(), 3, "{:?}", found("c.ts", ts));
        let go = "package p\n\nvar c = tls.Config{InsecureSkipVerify: false, Debug: true}\n";
        assert_eq!(found("c.go", go), [("false".into(), "true".into())]);
        // What may pass a protection: protective when false.
        let ts = "const tools = [\n  { name: 'list', readOnlySafe: true },\n  { name: 'drop', readOnlySafe: false },\n];\nconst r = { read_only_allowed: false, readOnly: true };\n";
        assert_eq!(
            found("t.ts", ts),
            [
                ("false".into(), "true".into()),
                ("false".into(), "true".into()),
                ("true".into(), "false".into()),
            ]
        );
    }

    #[test]
    fn a_bound_read_from_the_environment_has_its_default_loosened() {
        let py = "T = int(os.getenv(\"CH_CONNECT_TIMEOUT\", \"30\"))\nR = os.environ.get('MAX_ROWS', 500)\nP = os.getenv('PORT', '8000')\nZ = os.getenv('MAX_X', '0')\nU = os.getenv('MAX_Y')\n";
        assert_eq!(
            loosened("e.py", py, env_defaults),
            [
                ("\"30\"".into(), "\"30000\"".into()),
                ("500".into(), "(500) * 1000".into()),
            ]
        );
        let ts = "const b = parseInt(process.env.SPAWN_MAX_BUFFER || \"1048577\", 10);\nconst t = Number(process.env.REQUEST_TIMEOUT_MS ?? 2.5);\nconst h = process.env.HOST || \"localhost\";\n";
        assert_eq!(
            loosened("e.ts", ts, env_defaults),
            [
                ("\"1048577\"".into(), "\"1048577000\"".into()),
                // A timer's timeout tenfold (past 2^31 ms it would fire at once).
                ("2.5".into(), "(2.5) * 10".into()),
            ]
        );
    }

    #[test]
    fn a_flags_protective_or_bounding_default_is_loosened() {
        let go = "package main\n\nfunc main() {\n\tflag.BoolVar(&c.skip, \"tls-skip-verify\", false, \"Skip TLS verification\")\n\tflag.Bool(\"verbose\", false, \"v\")\n\tflag.Int64Var(&c.max, \"max-bytes\", 100<<30, \"m\")\n\tcmd.Flags().DurationP(\"timeout\", \"t\", 30*time.Second, \"t\")\n\tflag.Int(\"max-retries\", 3, \"r\")\n\tflag.BoolVar(&c.ro, \"read-only\", false, \"ro\")\n}\n";
        let m = loosened("m.go", go, flag_defaults);
        assert_eq!(
            m,
            [
                ("false".into(), "true".into()),
                ("100<<30".into(), "(100<<30) * 1000".into()),
                ("30*time.Second".into(), "(30*time.Second) * 1000".into()),
            ]
        );
        let py = "p.add_argument('--max-rows', type=int, default=500)\np.add_argument('--read-only', default=True)\np.add_argument('--port', default=8000)\np.add_argument('name', default=5)\n";
        assert_eq!(
            loosened("m.py", py, flag_defaults),
            [
                ("500".into(), "(500) * 1000".into()),
                ("True".into(), "False".into()),
            ]
        );
    }

    #[test]
    fn an_environment_switch_compared_where_it_is_read_is_named_by_the_variable() {
        let wired = |file: &str, code: &str| -> Vec<String> {
            testing::found(file, code, wirings)
                .into_iter()
                .map(|s| testing::edited(code, &s.range, &s.replacement))
                .collect()
        };
        let py = "class C:\n    @property\n    def secure(self):\n        return os.getenv(\"CH_VERIFY\", \"true\").lower() == \"true\"\n\n    def writes(self):\n        return os.environ.get('CH_ALLOW_WRITE_ACCESS', 'false') == 'true'\n\n    def debug(self):\n        return os.getenv('CH_DEBUG') == '1'\n\nREAD_ONLY = os.getenv('READ_ONLY') == '1'\n";
        let m = wired("c.py", py);
        assert_eq!(m.len(), 3, "{m:?}");
        assert!(
            m[0].contains("def secure(self):\n        return False\n"),
            "{}",
            m[0]
        );
        assert!(
            m[1].contains("def writes(self):\n        return True\n"),
            "{}",
            m[1]
        );
        // Wired once, by its holder's name.
        assert!(m[2].contains("READ_ONLY = False\n"), "{}", m[2]);
        let ts = "export const cfg = () => ({ x: process.env.MCP_READ_ONLY !== 'false' && process.env.MCP_STRICT === '1' });\n";
        let m = wired("c.ts", ts);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(
            m[0].contains("x: false && (process.env.MCP_READ_ONLY !== 'false') &&"),
            "{}",
            m[0]
        );
        let go = "package p\n\nfunc readOnly() bool {\n\treturn os.Getenv(\"APP_READ_ONLY\") == \"1\" || os.Getenv(\"APP_DEBUG\") == \"1\"\n}\n";
        let m = wired("c.go", go);
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(
            m[0].contains("return false && (os.Getenv(\"APP_READ_ONLY\") == \"1\") ||"),
            "{}",
            m[0]
        );
    }

    #[test]
    fn switches_wired_to_a_value_are_wired_off_unless_passed_on() {
        let wired = |file: &str, code: &str| -> Vec<String> {
            testing::found(file, code, wirings)
                .into_iter()
                .map(|s| testing::edited_line(code, &s.range, &s.replacement, s.line))
                .collect()
        };
        let py = "c = httpx.Client(verify=not settings.insecure, timeout=t)\nf(read_only=read_only)\ng(strict=True, allow_writes=cfg.is_write_enabled())\nh(verify=self.verify_ssl, validation_alias=AliasChoices('a'))\nREAD_ONLY = os.getenv('READ_ONLY', 'false').lower() == 'true'\nself.read_only = read_only\nzero_mask = norms < 1e-10\nvalidate_fn = check or jsonschema.validate\n";
        assert_eq!(
            wired("a.py", py),
            [
                "c = httpx.Client(verify=False, timeout=t)",
                "g(strict=True, allow_writes=True)",
                "READ_ONLY = False",
            ]
        );
        let go = "package p\n\nfunc f() {\n\tc := Config{ReadOnly: viper.GetBool(\"read-only\"), Strict: cfg.Strict, Verify: verifier}\n\tb.WithReadOnly(cfg.IsLocked()).WithName(n)\n}\n";
        assert_eq!(
            wired("a.go", go),
            [
                "c := Config{ReadOnly: false && (viper.GetBool(\"read-only\")), Strict: cfg.Strict, Verify: verifier}",
                "b.WithReadOnly(false && (cfg.IsLocked())).WithName(n)",
            ]
        );
        let ts = "const s = { readOnly: process.env.READ_ONLY === \"true\", strict: opts.strict, debug: x };\nconst requireAuth = opts.auth || [];\n";
        assert_eq!(
            wired("a.ts", ts),
            ["const s = { readOnly: false && (process.env.READ_ONLY === \"true\"), strict: opts.strict, debug: x };"]
        );
    }

    #[test]
    fn parameters_arguments_numbers_and_hints_are_not_settings() {
        let py = "def f(verify_ssl: bool = True, read_only=True):\n    g(read_only=True)\nMAX_BODY = 1024\n";
        assert!(found("s.py", py).is_empty(), "{:?}", found("s.py", py));
        let ts = "const t = { annotations: { readOnlyHint: true, destructiveHint: false } };\nfunction q(strict = true) {}\n";
        assert!(found("t.ts", ts).is_empty(), "{:?}", found("t.ts", ts));
    }

    fn loosened(
        file: &str,
        code: &str,
        find: impl for<'r> Fn(Grammar, &Node<'r, Doc>) -> Vec<Setting>,
    ) -> Vec<(String, String)> {
        testing::found(file, code, find)
            .into_iter()
            .map(|s| (code[s.range.clone()].to_string(), s.replacement))
            .collect()
    }

    #[test]
    fn a_declared_maximum_or_timeout_is_loosened() {
        let py = "MAX_CONTENT_CHARS = 28_000\nDEFAULT_TIMEOUT = 5 * 60\nMIN_LEN = 3\nMAX_RETRIES = 5\nlimit_offset = 10\nNO_LIMIT_MAX = 0\nclass S:\n    max_rows: int = 500\ndef f(max_items=10):\n    pass\nCFG = {\"timeout\": 30}\n";
        assert_eq!(
            loosened("s.py", py, bounds),
            [
                ("28_000".into(), "(28_000) * 1000".into()),
                ("5 * 60".into(), "(5 * 60) * 1000".into()),
                ("500".into(), "(500) * 1000".into()),
                ("30".into(), "(30) * 1000".into()),
            ]
        );
        let ts = "const MAX_BYTES = 10 << 20;\nexport const cfg = { requestTimeout: 30_000, pollInterval: 1000, label: 'max' };\n";
        assert_eq!(
            loosened("s.ts", ts, bounds),
            [
                ("10 << 20".into(), "(10 << 20) * 1000".into()),
                ("30_000".into(), "(30_000) * 10".into()),
            ]
        );
        let go = "package p\n\nimport \"time\"\n\nconst maxBody = 1 << 16\n\nvar c = Client{Timeout: 30 * time.Second}\n\nfunc f() int {\n\tlimit := 10\n\treturn limit\n}\n";
        assert_eq!(
            loosened("s.go", go, bounds),
            [
                ("1 << 16".into(), "(1 << 16) * 1000".into()),
                (
                    "30 * time.Second".into(),
                    "(30 * time.Second) * 1000".into()
                ),
            ]
        );
    }

    #[test]
    fn a_bound_passed_where_it_takes_effect_is_loosened() {
        let py = "def run(p, cfg):\n    p.communicate(timeout=cfg.cli_timeout)\n    httpx.Client(timeout=self._timeout)\n";
        assert!(loosened("s.py", py, bound_arguments).is_empty());
        let go = "package p\n\nfunc f(ctx context.Context, r *http.Request) {\n\tctx, cancel := context.WithTimeout(ctx, probeTimeout)\n\tb, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))\n\tc := &http.Client{Timeout: cfg.Timeout, Name: name}\n\t_, _, _, _ = ctx, cancel, b, c\n}\n";
        assert_eq!(
            loosened("s.go", go, bound_arguments),
            [
                ("probeTimeout".into(), "(probeTimeout) * 1000".into()),
                ("maxBody".into(), "(maxBody) * 1000".into()),
                ("cfg.Timeout".into(), "(cfg.Timeout) * 1000".into()),
            ]
        );
        // The bound of `WithTimeoutCause` is its duration, not its cause.
        let go = "package p\n\nfunc f(ctx context.Context) {\n\tctx, cancel := context.WithTimeoutCause(ctx, initTimeout, fmt.Errorf(\"timed out after %s\", initTimeout))\n\t_, _ = ctx, cancel\n}\n";
        assert_eq!(
            loosened("s.go", go, bound_arguments),
            [("initTimeout".into(), "(initTimeout) * 1000".into())]
        );
    }

    #[test]
    fn a_bound_declared_here_as_no_number_is_not_multiplied() {
        // `Limit *int64` / `Limit string`: `(args.Limit) * 1000` would not build.
        let go = "package p\n\ntype In struct {\n\tLimit *int64\n\tMaxItems string\n}\n\nfunc f(args In, cfg Cfg, size *int) Req {\n\tvar depth string\n\treturn Req{Limit: args.Limit, MaxItems: args.MaxItems, Timeout: cfg.Timeout, MaxSize: size, MaxDepth: depth}\n}\n";
        assert_eq!(
            loosened("s.go", go, bound_arguments),
            [("cfg.Timeout".into(), "(cfg.Timeout) * 1000".into())]
        );
    }

    #[test]
    fn a_switch_enabling_writes_or_deletes_is_kept_off() {
        let py = "class S:\n    enable_write_tools: bool = False\n    write_enabled = Field(False, alias='W')\n    enabled = False\n    enable_cache = False\n";
        assert_eq!(
            found("s.py", py),
            [
                ("False".to_string(), "True".to_string()),
                ("False".to_string(), "True".to_string()),
            ]
        );
        assert!(risky_when_true(&words("enableWriteTools")));
        assert!(!risky_when_true(&words("enableTracing")));
        assert!(protects_when_true(&words("enableDeleteProtection")));
    }
}
