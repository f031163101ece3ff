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
    Some((less == max_right, name))
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
}
