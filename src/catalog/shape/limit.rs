//! The limit and allow-list test shape: the comparison inside a decision,
//! wherever it sits (an `if`, a comprehension's filter, a `.filter`
//! callback, a `return`), whatever the decision does.
//!
//! - **List membership**: an item tested against a named allow-list or
//!   block-list (`tool in allowed_tools`, `key not in _SECRET_FIELDS`,
//!   `disabledTools.includes(name)`, `FORWARDED.has(h)`, Go
//!   `validNames[name]` in a condition, `slices.Contains(excluded, t)`). The
//!   list's name says which it is (allow-list words: `allowed`, `enabled`,
//!   `permitted`, `valid`, `granted`, `trusted`…; block-list words:
//!   `excluded`, `disabled`, `blocked`, `denied`, `sensitive`, `secret`,
//!   `required`…) and the vocabulary's `lists` terms name the control. The
//!   mutant loosens the list: everything is on an allow-list, nothing on a
//!   block-list.
//! - **Expiry comparison**: a time compared with now (`expires_at <
//!   time.time()`, `Date.now() < token.expiresAt - SKEW`, `now >= expiry`,
//!   Go `time.Now().After(exp)`). The mutant never expires.
//! - **Bound**: a size or count compared with a named maximum in an `if`
//!   (`if total_rows >= max_rows: break`, `if (bytes > MAX_INLINE_BYTES)`,
//!   `if len(segments) > maxSegments {`): whatever the branch does (stop,
//!   truncate, refuse), the mutant never exceeds the bound. The bound's
//!   name (a word `max`/`maximum`, or an upper-case constant holding
//!   `LIMIT`/`MAX`/`CAP`) says it is one; the vocabulary's `settings` terms
//!   name the control (`max rows`: input-size-limited, `max body*`:
//!   body-size-limited). Loop conditions are left alone (a loop that never
//!   stops is a hang, not a verdict).
//!
//! The mutant replaces the test alone: Python by `True`/`False`, TypeScript
//! and Go by `(true || (test))`/`(false && (test))`, which keeps every
//! variable used (Go refuses unused ones; TypeScript may) and the types
//! unchanged. A test inside a refusal guard's condition the vocabulary names
//! is that guard's site.

use std::ops::Range;

use ast_grep_core::Node;

use super::super::grammar::Grammar;
use super::super::matcher::Doc;
use super::vocab::{polarity, words};

/// One limit or allow-list test found in a file.
#[derive(Debug, Clone)]
pub(crate) struct Test {
    /// The test's byte range.
    pub range: Range<usize>,
    /// The test with the list loosened or the time never expired.
    pub replacement: String,
    /// Words of the list's name (for [`Kind::Member`]), of the time
    /// compared with now (for [`Kind::Expiry`]) or of the maximum (for
    /// [`Kind::Bound`]).
    pub name: Vec<String>,
    /// Which test.
    pub kind: Kind,
    /// 1-based line of the test.
    pub line: usize,
}

/// Which test a [`Test`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An item tested against an allow-list or a block-list.
    Member,
    /// A time compared with now.
    Expiry,
    /// A size or count compared with a named maximum.
    Bound,
}

/// Words of a list's name that make it an allow-list: being on it lets a
/// request through.
const ALLOW: &[&str] = &[
    "allow",
    "allowed",
    "allowlist",
    "whitelist",
    "enabled",
    "permitted",
    "permit",
    "valid",
    "granted",
    "trusted",
    "safe",
    "approved",
];

/// Words that make it a block-list: being on it stops or protects something.
const BLOCK: &[&str] = &[
    "excluded",
    "exclude",
    "disabled",
    "blocked",
    "block",
    "blocklist",
    "blacklist",
    "denylist",
    "denied",
    "deny",
    "forbidden",
    "disallowed",
    "sensitive",
    "secret",
    "secrets",
    "required",
    "protected",
    "restricted",
    "dangerous",
    "unsafe",
    "untrusted",
];

/// The name of a list expression: the last part of a name, field or member
/// (`self._allowed_tools`, `this.config.disabledTools`), or of a getter
/// called for it (`ctx.GetExcludeTools(r)`, its `get` dropped). Literals and
/// other expressions have none.
fn list_name(n: &Node<'_, Doc>) -> Option<Vec<String>> {
    let text = match n.kind().as_ref() {
        "identifier" | "attribute" | "member_expression" | "selector_expression" => {
            n.text().to_string()
        }
        "call" | "call_expression" => n.field("function")?.text().to_string(),
        _ => return None,
    };
    let last = text.rsplit('.').next()?;
    if last.is_empty() || !last.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let mut w = words(last);
    if w.len() > 1 && w[0] == "get" {
        w.remove(0);
    }
    Some(w)
}

/// Whether a Go index expression's value is used as a truth value.
fn in_condition(n: &Node<'_, Doc>) -> bool {
    let Some(p) = n.parent() else {
        return false;
    };
    match p.kind().as_ref() {
        "if_statement" => p.field("condition").is_some_and(|c| c.range() == n.range()),
        "parenthesized_expression" => in_condition(&p),
        "unary_expression" => p.text().starts_with('!'),
        "binary_expression" => p
            .field("operator")
            .is_some_and(|o| matches!(o.text().as_ref(), "&&" | "||")),
        _ => false,
    }
}

/// The list tested at a node and whether the test is negated (`not in`):
/// `(list node, negated)`.
fn membership<'r>(g: Grammar, n: &Node<'r, Doc>) -> Option<(Node<'r, Doc>, bool)> {
    match (g, n.kind().as_ref()) {
        (Grammar::Python, "comparison_operator") => {
            let kids: Vec<_> = n.children().collect();
            // `a in b` / `a not in b`: three children, the operator between.
            if kids.len() != 3 {
                return None;
            }
            let op = kids[1].kind();
            let negated = match op.as_ref() {
                "in" => false,
                "not in" => true,
                _ => return None,
            };
            Some((kids[2].clone(), negated))
        }
        (Grammar::Go, "index_expression") => in_condition(n)
            .then(|| n.field("operand"))
            .flatten()
            .map(|o| (o, false)),
        (_, "call_expression") => {
            let f = n.field("function")?;
            let args = n.field("arguments")?;
            match (g, f.kind().as_ref()) {
                (Grammar::Go, "selector_expression") => {
                    // `slices.Contains(list, item)`
                    let field = f.field("field")?;
                    let pkg = f.field("operand")?;
                    (pkg.text() == "slices" && field.text() == "Contains")
                        .then(|| args.named_children().next())
                        .flatten()
                        .map(|l| (l, false))
                }
                (Grammar::Go, _) | (Grammar::Python, _) => None,
                (_, "member_expression") => {
                    // `list.includes(item)`, `set.has(item)`
                    let prop = f.field("property")?;
                    matches!(prop.text().as_ref(), "includes" | "has")
                        .then(|| f.field("object"))
                        .flatten()
                        .map(|l| (l, false))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Words of an expression that reads the current time.
fn is_now(text: &str) -> bool {
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let w = words(&t);
    t == "now"
        || t.ends_with(".now")
        || t.contains("time.time()")
        || t.contains("time.monotonic()")
        || t.contains("Date.now()")
        || t.contains("time.Now()")
        || t.contains("datetime.now(")
        || t.contains("datetime.utcnow(")
        || t.contains("newDate()")
        || (w.len() <= 2 && w.first().is_some_and(|x| x == "now"))
}

/// Whether words name an expiry time (`expires_at`, `expiry`, `exp`,
/// `deadline`, `notAfter`).
fn is_expiry(w: &[String]) -> bool {
    w.iter()
        .any(|x| x.starts_with("expir") || x == "exp" || x == "deadline")
        || w.windows(2).any(|p| p[0] == "not" && p[1] == "after")
}

/// An expiry comparison at a node: `Some(true)` when it is true while the
/// time is still valid (`now < exp`), `Some(false)` when true once expired
/// (`exp <= now`).
fn expiry(g: Grammar, n: &Node<'_, Doc>) -> Option<(bool, Vec<String>)> {
    let (left, op, right) = match n.kind().as_ref() {
        "call_expression" if g == Grammar::Go => {
            // `time.Now().After(exp)`, `exp.Before(time.Now())`
            let f = n.field("function")?;
            if f.kind() != "selector_expression" {
                return None;
            }
            let method = f.field("field")?.text().to_string();
            let recv = f.field("operand")?;
            let arg = n.field("arguments")?.named_children().next()?;
            let op = match method.as_str() {
                "After" => ">",
                "Before" => "<",
                _ => return None,
            };
            (recv, op.to_string(), arg)
        }
        _ => comparison(g, n)?,
    };
    let less = match op.as_str() {
        "<" | "<=" => true,
        ">" | ">=" => false,
        _ => return None,
    };
    let (lt, rt) = (left.text().to_string(), right.text().to_string());
    // The expiry on the smaller side means "expired".
    let (expiry_left, w) = if is_now(&rt) && is_expiry(&words(&lt)) {
        (true, words(&lt))
    } else if is_now(&lt) && is_expiry(&words(&rt)) {
        (false, words(&rt))
    } else {
        return None;
    };
    let expired = expiry_left == less;
    Some((!expired, w))
}

/// The two sides and the operator of a comparison node.
fn comparison<'r>(g: Grammar, n: &Node<'r, Doc>) -> Option<(Node<'r, Doc>, String, Node<'r, Doc>)> {
    match n.kind().as_ref() {
        "comparison_operator" if g == Grammar::Python => {
            let kids: Vec<_> = n.children().collect();
            if kids.len() != 3 {
                return None;
            }
            Some((kids[0].clone(), kids[1].kind().to_string(), kids[2].clone()))
        }
        "binary_expression" if g != Grammar::Python => Some((
            n.field("left")?,
            n.field("operator")?.text().to_string(),
            n.field("right")?,
        )),
        _ => None,
    }
}

/// Whether an operand names a maximum: a word `max`/`maximum`
/// (`max_rows`, `this.config.maxDocumentsPerQuery`), or an upper-case
/// constant holding `LIMIT`, `MAX` or `CAP` (`MAX_INLINE_BYTES`,
/// `SIZE_LIMIT`). A call (`min(…)`, `len(…)`) is a size, not a bound.
fn is_bound(text: &str) -> bool {
    if text.contains('(') {
        return false;
    }
    let last = text.rsplit(['.', ':']).next().unwrap_or(text).trim();
    let upper = !last.is_empty()
        && last
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && last.chars().any(|c| c.is_ascii_uppercase());
    let w = words(last);
    // A language's number range (`math.MaxInt64`, `Number.MAX_SAFE_INTEGER`)
    // bounds arithmetic, not input.
    if w.iter().any(|x| NUMBER_TYPES.contains(&x.as_str())) {
        return false;
    }
    w.iter().any(|x| x == "max" || x == "maximum")
        || (upper && w.iter().any(|x| x == "limit" || x == "cap"))
}

/// Words of a number type: a maximum holding one is the type's range.
const NUMBER_TYPES: &[&str] = &[
    "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
    "float", "float32", "float64", "integer", "safe", "value",
];

/// Words of a retry or attempt count: a maximum of those bounds how often
/// the server tries again, not what a caller may send or get.
const RETRY_WORDS: &[&str] = &["retry", "retries", "attempt", "attempts", "tries", "errors"];

/// Whether a node sits in an `if`'s condition (through `not`/`!`,
/// parentheses and `and`/`or`/`&&`/`||`), not in a loop's.
fn in_if_condition(n: &Node<'_, Doc>) -> bool {
    let mut cur = n.clone();
    while let Some(p) = cur.parent() {
        match p.kind().as_ref() {
            "if_statement" | "elif_clause" => {
                return p
                    .field("condition")
                    .is_some_and(|c| c.range() == cur.range())
            }
            "parenthesized_expression" | "not_operator" | "boolean_operator" => {}
            "unary_expression" if p.text().starts_with('!') => {}
            "binary_expression"
                if p.field("operator")
                    .is_some_and(|o| matches!(o.text().as_ref(), "&&" | "||")) => {}
            _ => return false,
        }
        cur = p;
    }
    false
}

/// A bound test at a node: `Some((true, name))` when the test is true
/// within the bound (`n < MAX`), `Some((false, name))` when true once it is
/// exceeded (`n > max_rows`); `name` is the maximum's words.
fn bound(g: Grammar, n: &Node<'_, Doc>) -> Option<(bool, Vec<String>)> {
    bound_test(g, n).map(|b| (b.within, b.name))
}

/// A bound test's parts.
struct BoundTest {
    /// True within the bound (`n <= MAX`), false once exceeded (`n > MAX`).
    within: bool,
    /// The maximum's words.
    name: Vec<String>,
    /// The comparison operator's byte range and text.
    op: (Range<usize>, String),
    /// Whether the maximum is the right operand.
    max_right: bool,
}

/// The tightened operator of a bound test, where the value exactly at the
/// bound is accepted: `n > MAX` → `n >= MAX`, `n <= MAX` → `n < MAX` (and
/// mirrored). `n >= MAX` and `n < MAX` already refuse it: no twin (one
/// less would assume whole numbers).
fn at_bound_refused(b: &BoundTest) -> Option<&'static str> {
    match (b.op.1.as_str(), b.max_right) {
        (">", true) => Some(">="),
        ("<=", true) => Some("<"),
        ("<", false) => Some("<="),
        (">=", false) => Some(">"),
        _ => None,
    }
}

fn bound_test(g: Grammar, n: &Node<'_, Doc>) -> Option<BoundTest> {
    let (left, op, right) = comparison(g, n)?;
    let less = match op.as_str() {
        "<" | "<=" => true,
        ">" | ">=" => false,
        _ => return None,
    };
    let (lt, rt) = (left.text().to_string(), right.text().to_string());
    // One side the maximum, the other a size (not a second maximum, not a
    // literal: `MAX_X > 0` checks a setting, it bounds nothing).
    let literal = |t: &str| {
        t.trim()
            .chars()
            .all(|c| c.is_ascii_digit() || c == '_' || c == '.')
    };
    let (max_right, name) = match (is_bound(&lt), is_bound(&rt)) {
        (false, true) if !literal(&lt) => (true, words(&rt)),
        (true, false) if !literal(&rt) => (false, words(&lt)),
        _ => return None,
    };
    if !in_if_condition(n)
        || words(&n.text())
            .iter()
            .any(|x| RETRY_WORDS.contains(&x.as_str()))
    {
        return None;
    }
    // `size < MAX` (max on the right of `<`) holds within the bound.
    Some(BoundTest {
        within: less == max_right,
        name,
        op: (operator_range(g, n)?, op),
        max_right,
    })
}

/// The byte range of a comparison's operator.
fn operator_range(g: Grammar, n: &Node<'_, Doc>) -> Option<Range<usize>> {
    match g {
        Grammar::Python => n.children().nth(1).map(|o| o.range()),
        _ => n.field("operator").map(|o| o.range()),
    }
}

fn replacement(g: Grammar, value: bool, text: &str) -> String {
    match (g, value) {
        (Grammar::Python, true) => "True".to_string(),
        (Grammar::Python, false) => "False".to_string(),
        (_, true) => format!("(true || ({text}))"),
        (_, false) => format!("(false && ({text}))"),
    }
}

/// Every limit and allow-list test in a parsed file.
pub(crate) fn tests(g: Grammar, root: &Node<'_, Doc>) -> Vec<Test> {
    let mut out = Vec::new();
    for n in root.dfs() {
        let (value, name, kind) = if let Some((list, negated)) = membership(g, &n) {
            let Some(name) = list_name(&list) else {
                continue;
            };
            // Whether being on the list lets a request through.
            let Some(accept) = polarity(&name, ALLOW, BLOCK) else {
                continue;
            };
            // Loosened: on every allow-list, on no block-list.
            (accept != negated, name, Kind::Member)
        } else if let Some((valid, name)) = expiry(g, &n) {
            // Never expired.
            (valid, name, Kind::Expiry)
        } else if let Some((within, name)) = bound(g, &n) {
            // Never exceeded.
            (within, name, Kind::Bound)
        } else {
            continue;
        };
        out.push(Test {
            range: n.range(),
            replacement: replacement(g, value, &n.text()),
            name,
            kind,
            line: n.start_pos().line() + 1,
        });
    }
    out
}

/// A tightening twin of a limit test (seed 002 rule 5): the control
/// narrowed by one accepted class, never to nothing. A positive test ("this
/// accepted input is still accepted") kills it.
#[derive(Debug, Clone)]
pub(crate) struct Twin {
    /// Where the twin edits.
    pub at: TwinAt,
    /// The edit: empty for a left-out entry, the tightened operator of a bound.
    pub replacement: String,
    /// Words of the list's name or of the maximum.
    pub name: Vec<String>,
    /// Which test it pairs with.
    pub kind: Kind,
    /// The byte range of that test (a refusal guard around it names it).
    pub test: Range<usize>,
}

/// Where a twin edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TwinAt {
    /// This byte range of the test's own file.
    Here(Range<usize>),
    /// The first entry of the list bound to this name in another file (an
    /// imported constant): found where the repository binds it once; in
    /// the test's own directory only for a bare Go name (a package's
    /// variables are its directory's).
    Elsewhere {
        /// The list's name.
        name: String,
        /// Bound in the test's own directory.
        same_dir: bool,
    },
}

/// A name bound in a file (a constant, variable or field), with the span of
/// the first entry of the collection literal it holds, if it holds one with
/// two entries at least.
#[derive(Debug, Clone)]
pub(crate) struct ListDef {
    /// The bound name (its last part: `self.allowed` → `allowed`).
    pub name: String,
    /// The first entry, up to the next one.
    pub entry: Option<Range<usize>>,
    /// Bound at the top of the module or package, outside any function or
    /// class: what another file can import.
    pub top: bool,
}

/// The tightening twins of a file's limit tests:
///
/// - an item tested against an **allow-list** whose literal is defined once
///   in the same file (`ALLOWED = {"a", "b"}`, `const TOOLS = new
///   Set(["a", "b"])`, Go `var valid = map[string]bool{"a": true, …}`), or
///   not in the file at all ([`TwinAt::Elsewhere`]: an imported constant):
///   its first entry is left out (at least two entries; spreads stay;
///   TypeScript `as const` lists are left alone, types derive from them);
/// - a **bound** test that accepts the value exactly at the bound: it is
///   refused (`n > MAX` → `n >= MAX`, `n <= MAX` → `n < MAX`).
///
/// A block-list has no twin: what it accepts is everything else.
///
/// `defs` are the file's [`list_definitions`].
pub(crate) fn twins(g: Grammar, root: &Node<'_, Doc>, defs: &[ListDef]) -> Vec<Twin> {
    let mut out: Vec<Twin> = Vec::new();
    for n in root.dfs() {
        if let Some((list, _)) = membership(g, &n) {
            let Some(name) = list_name(&list) else {
                continue;
            };
            // A getter's list has no literal here.
            if polarity(&name, ALLOW, BLOCK) != Some(true)
                || matches!(list.kind().as_ref(), "call" | "call_expression")
            {
                continue;
            }
            let text = list.text();
            let last = text.rsplit('.').next().unwrap_or_default();
            let local: Vec<&ListDef> = defs.iter().filter(|d| d.name == last).collect();
            let at = match local.as_slice() {
                // Not bound here: imported, perhaps (a constant's name, not
                // a parameter of the function around the test).
                [] if importable(g, last) && !parameter(&n, last) => TwinAt::Elsewhere {
                    name: last.to_string(),
                    same_dir: g == Grammar::Go && list.kind() == "identifier",
                },
                [] => continue,
                [d] => match &d.entry {
                    Some(e) => TwinAt::Here(e.clone()),
                    None => continue,
                },
                // Bound twice: which one the test reads is not known here.
                _ => continue,
            };
            if out.iter().any(|t| t.at == at) {
                continue;
            }
            out.push(Twin {
                at,
                replacement: String::new(),
                name,
                kind: Kind::Member,
                test: n.range(),
            });
        } else if let Some(b) = bound_test(g, &n) {
            let Some(op) = at_bound_refused(&b) else {
                continue;
            };
            out.push(Twin {
                at: TwinAt::Here(b.op.0.clone()),
                replacement: op.to_string(),
                name: b.name,
                kind: Kind::Bound,
                test: n.range(),
            });
        }
    }
    out
}

/// Whether a name reads like a constant another file exports: upper case in
/// Python and TypeScript (`ALLOWED_TOOLS`), any name in Go (a package's
/// variables are shared by its files).
fn importable(g: Grammar, name: &str) -> bool {
    g == Grammar::Go
        || (name.chars().any(|c| c.is_ascii_uppercase())
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
}

/// Whether `name` is a parameter of the function around `n`.
fn parameter(n: &Node<'_, Doc>, name: &str) -> bool {
    n.ancestors()
        .find_map(|a| a.field("parameters"))
        .is_some_and(|p| {
            p.text()
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == name)
        })
}

/// Every name a file binds (assignments, declarators, class fields, Go
/// `var` and `:=`), with the first entry of the collection literal it
/// holds: left out, the literal keeps its other entries and its syntax.
pub(crate) fn list_definitions(g: Grammar, root: &Node<'_, Doc>) -> Vec<ListDef> {
    fn first<'r>(n: Option<Node<'r, Doc>>) -> Option<Node<'r, Doc>> {
        n.and_then(|l| l.named_children().next())
    }
    let mut out = Vec::new();
    for d in root.dfs() {
        let (target, value) = match (g, d.kind().as_ref()) {
            (Grammar::Python, "assignment") => (d.field("left"), d.field("right")),
            (
                Grammar::TypeScript | Grammar::Tsx,
                "variable_declarator" | "public_field_definition",
            ) => (d.field("name"), d.field("value")),
            (Grammar::Go, "var_spec") => (d.field("name"), first(d.field("value"))),
            (Grammar::Go, "short_var_declaration") => {
                (first(d.field("left")), first(d.field("right")))
            }
            _ => continue,
        };
        let Some(t) = target else {
            continue;
        };
        let text = t.text();
        let name = text.rsplit('.').next().unwrap_or_default().to_string();
        let entry = value
            .and_then(|v| collection(g, &v))
            .and_then(|lit| first_entry(&lit));
        let top = !d.ancestors().any(|a| {
            matches!(
                a.kind().as_ref(),
                "function_definition"
                    | "class_definition"
                    | "function_declaration"
                    | "method_declaration"
                    | "func_literal"
                    | "method_definition"
                    | "arrow_function"
                    | "function_expression"
                    | "class_declaration"
                    | "class_body"
            )
        });
        out.push(ListDef { name, entry, top });
    }
    out
}

/// The span of a collection literal's first entry (spreads stay), up to the
/// next entry; none under two entries.
fn first_entry(lit: &Node<'_, Doc>) -> Option<Range<usize>> {
    let entries: Vec<Node<'_, Doc>> = lit
        .named_children()
        .filter(|c| c.kind() != "comment")
        .collect();
    let spread = |c: &Node<'_, Doc>| {
        matches!(
            c.kind().as_ref(),
            "list_splat" | "dictionary_splat" | "spread_element" | "parenthesized_list_splat"
        )
    };
    if entries.iter().filter(|c| !spread(c)).count() < 2 {
        return None;
    }
    let i = entries.iter().position(|c| !spread(c))?;
    let next = entries.get(i + 1)?;
    Some(entries[i].range().start..next.range().start)
}

/// The collection literal a value holds: itself, or the one a wrapper
/// builds (`frozenset({…})`, `new Set([…])`, `Object.freeze([…])`, a Go
/// composite literal's body).
fn collection<'r>(g: Grammar, v: &Node<'r, Doc>) -> Option<Node<'r, Doc>> {
    let only_argument = |call: &Node<'r, Doc>| {
        let args = call.field("arguments")?;
        let mut a = args.named_children().filter(|c| c.kind() != "comment");
        let first = a.next()?;
        a.next().is_none().then_some(first)
    };
    match (g, v.kind().as_ref()) {
        (Grammar::Python, "list" | "set" | "tuple" | "dictionary") => Some(v.clone()),
        (Grammar::Python, "call") => {
            let f = v.field("function")?;
            matches!(f.text().as_ref(), "frozenset" | "set" | "tuple" | "list")
                .then(|| only_argument(v))
                .flatten()
                .and_then(|a| collection(g, &a))
        }
        (Grammar::TypeScript | Grammar::Tsx, "array") => Some(v.clone()),
        (Grammar::TypeScript | Grammar::Tsx, "new_expression") => {
            let c = v.field("constructor")?;
            (c.text() == "Set")
                .then(|| only_argument(v))
                .flatten()
                .and_then(|a| collection(g, &a))
        }
        (Grammar::TypeScript | Grammar::Tsx, "call_expression") => {
            let f = v.field("function")?;
            (f.text() == "Object.freeze")
                .then(|| only_argument(v))
                .flatten()
                .and_then(|a| collection(g, &a))
        }
        (
            Grammar::TypeScript | Grammar::Tsx,
            "satisfies_expression" | "parenthesized_expression",
        ) => collection(g, &v.named_children().next()?),
        (Grammar::TypeScript | Grammar::Tsx, "as_expression") => {
            // `as const`: the list's entries are a type other code names.
            if v.text().trim_end().ends_with("const") {
                return None;
            }
            collection(g, &v.named_children().next()?)
        }
        (Grammar::Go, "composite_literal") => v.field("body"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// The lines of the mutants, as written.
    fn found(file: &str, code: &str) -> Vec<String> {
        testing::found(file, code, tests)
            .into_iter()
            .map(|t| testing::edited_line(code, &t.range, &t.replacement, t.line))
            .collect()
    }

    #[test]
    fn python_lists_are_loosened_and_times_never_expire() {
        let py = "def f(tool, key, exp):\n    if tool not in self.allowed_tools:\n        skip()\n    out = [k for k in d if k not in _SECRET_FIELDS]\n    if tool in EXCLUDED_TOOLS:\n        return\n    if tool in tools:\n        pass\n    if exp is not None and exp < time.time():\n        drop()\n    return time.time() < self.token_expiry\n";
        assert_eq!(
            found("a.py", py),
            [
                "if False:",
                "out = [k for k in d if True]",
                "if False:",
                "if exp is not None and False:",
                "return True",
            ]
        );
    }

    #[test]
    fn typescript_and_go_keep_the_test_in_the_mutant() {
        let ts = "if (config.disabledTools.includes(name)) { skip(); }\nif (ALLOWED_HOSTS.has(h) && x) { go(); }\nif (names.includes(n)) { go(); }\nconst ok = Date.now() < this.token.expiresAt - SKEW;\n";
        assert_eq!(
            found("a.ts", ts),
            [
                "if ((false && (config.disabledTools.includes(name)))) { skip(); }",
                "if ((true || (ALLOWED_HOSTS.has(h))) && x) { go(); }",
                "const ok = (true || (Date.now() < this.token.expiresAt - SKEW));",
            ]
        );
        let go = "package p\n\nfunc f(name string) {\n\tif !validNames[name] {\n\t\treturn\n\t}\n\tif slices.Contains(cfg.ExcludedTools, name) {\n\t\treturn\n\t}\n\tif counts[name] > 1 {\n\t\treturn\n\t}\n\tif time.Now().After(tok.Expiry) {\n\t\trefresh()\n\t}\n}\n";
        assert_eq!(
            found("a.go", go),
            [
                "if !(true || (validNames[name])) {",
                "if (false && (slices.Contains(cfg.ExcludedTools, name))) {",
                "if (false && (time.Now().After(tok.Expiry))) {",
            ]
        );
    }

    #[test]
    fn a_size_compared_with_a_named_maximum_never_exceeds_it() {
        let py = "def f(rows, data, attempt):\n    if total >= max_rows:\n        break\n    if len(data) > ATTACHMENT_MAX_BYTES:\n        raise ValueError('big')\n    if count < MAX_ITEMS and ok:\n        go()\n    if attempt < max_retries:\n        retry()\n    if n > math.MaxInt64:\n        x()\n    while i < MAX_ITEMS:\n        i += 1\n    if MAX_ITEMS > 0:\n        y()\n";
        assert_eq!(
            found("a.py", py),
            ["if False:", "if False:", "if True and ok:"]
        );
        let ts = "if (body.length > MAX_INLINE_BYTES) { cut(); }\nfor (let i = 0; i < MAX_ITEMS; i++) {}\n";
        assert_eq!(
            found("a.ts", ts),
            ["if ((false && (body.length > MAX_INLINE_BYTES))) { cut(); }"]
        );
        let go = "package p\n\nfunc f(segments []string) {\n\tif len(segments) > maxSegments {\n\t\treturn\n\t}\n\tif diff > math.MaxInt64 {\n\t\treturn\n\t}\n}\n";
        assert_eq!(
            found("a.go", go),
            ["if (false && (len(segments) > maxSegments)) {"]
        );
    }

    /// The lines of the twins, as written.
    fn twinned(file: &str, code: &str) -> Vec<String> {
        testing::found(file, code, |g, r| twins(g, r, &list_definitions(g, r)))
            .into_iter()
            .filter_map(|t| match t.at {
                TwinAt::Here(r) => Some((r, t.replacement)),
                TwinAt::Elsewhere { .. } => None,
            })
            .map(|(r, rep)| {
                let (line, _) = crate::mutate::line_col(code.as_bytes(), r.start);
                testing::edited_line(code, &r, &rep, line)
            })
            .collect()
    }

    #[test]
    fn an_allow_list_literal_loses_its_first_entry_once() {
        let py = "ALLOWED_TOOLS = frozenset({\"search\", \"fetch\"})\nEXCLUDED = {\"a\", \"b\"}\nONE = [\"x\"]\nVALID_MODES = [*BASE, \"r\", \"w\"]\n\ndef f(t, m):\n    if t not in ALLOWED_TOOLS:\n        raise PermissionError(t)\n    if t in ALLOWED_TOOLS and t in EXCLUDED:\n        pass\n    if m not in VALID_MODES or t in ONE:\n        pass\n";
        assert_eq!(
            twinned("a.py", py),
            [
                "ALLOWED_TOOLS = frozenset({\"fetch\"})",
                "VALID_MODES = [*BASE, \"w\"]",
            ]
        );
        let ts = "const ALLOWED_HOSTS = new Set([\"a.example\", \"b.example\"]);\nconst PERMITTED = [\"r\", \"w\"] as const;\nif (!ALLOWED_HOSTS.has(h)) { throw new Error(\"no\"); }\nif (PERMITTED.includes(m)) { go(); }\n";
        assert_eq!(
            twinned("a.ts", ts),
            ["const ALLOWED_HOSTS = new Set([\"b.example\"]);"]
        );
        let go = "package p\n\nvar validNames = map[string]bool{\"a\": true, \"b\": true}\n\nfunc f(n string) bool {\n\tallowedKinds := []string{\"x\", \"y\"}\n\tif slices.Contains(allowedKinds, n) {\n\t\treturn true\n\t}\n\treturn validNames[n] && ok\n}\n";
        assert_eq!(
            twinned("a.go", go),
            [
                "allowedKinds := []string{\"y\"}",
                "var validNames = map[string]bool{\"b\": true}",
            ]
        );
    }

    #[test]
    fn a_list_bound_twice_or_fetched_has_no_twin() {
        let py = "if x:\n    ALLOWED = [\"a\", \"b\"]\nelse:\n    ALLOWED = [\"c\", \"d\"]\nif t in ALLOWED:\n    go()\nif t in get_allowed():\n    go()\n";
        assert!(twinned("a.py", py).is_empty());
    }

    #[test]
    fn a_bound_that_accepts_its_own_value_refuses_it_in_the_twin() {
        let py = "def f(q, rows):\n    if len(q) > MAX_QUERY_LENGTH:\n        raise ValueError('long')\n    if rows >= max_rows:\n        stop()\n    if MAX_ITEMS < n:\n        cut()\n";
        assert_eq!(
            twinned("a.py", py),
            ["if len(q) >= MAX_QUERY_LENGTH:", "if MAX_ITEMS <= n:"]
        );
        let ts = "if (body.length <= MAX_BODY) { send(); }\nif (n < MAX_ITEMS) { go(); }\n";
        assert_eq!(
            twinned("a.ts", ts),
            ["if (body.length < MAX_BODY) { send(); }"]
        );
        let go =
            "package p\n\nfunc f(s []string) {\n\tif maxSegments >= len(s) {\n\t\treturn\n\t}\n}\n";
        assert_eq!(twinned("a.go", go), ["if maxSegments > len(s) {"]);
    }
}
