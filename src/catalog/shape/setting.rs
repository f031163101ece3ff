//! The protective-setting shape: a field, constant or config default whose
//! name says it switches a protection on (`read_only = True`, `verify:
//! true`, `Strict: true`, `requireConfirmation = true`) or keeps a risky
//! feature off (`allow_writes = False`, `insecure: false`,
//! `disableServerSideJs: true`), set to a boolean literal. The mutant flips
//! it.
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
//! (`readOnlyHint`: advice to a client), and numeric bounds (`MAX_BYTES =
//! …`: the control is the comparison that uses it, a guard).

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
            let default = args.named_children().find_map(|a| {
                if a.kind() == "keyword_argument" {
                    (a.field("name")?.text() == "default")
                        .then(|| literal(g, &a.field("value")?))
                        .flatten()
                } else {
                    None
                }
            });
            default
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
    let mut out = Vec::new();
    for n in root.dfs() {
        let (key, value) = match (g, n.kind().as_ref()) {
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
        testing::found(file, code, settings)
            .into_iter()
            .map(|s| (code[s.range.clone()].to_string(), s.replacement))
            .collect()
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
}
