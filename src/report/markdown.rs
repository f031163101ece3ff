//! The PR comment: Markdown rendered from `templates/pr-comment.md` (minijinja),
//! or from a user's `--template`.
//!
//! This file also holds what every template shares: the template context built
//! from [`Results`] and the escaping filters (`cell`, `code`, `cell_code`,
//! `fence`, `html`, `head`). `templates/README.md` documents both for users.

use anyhow::{anyhow, Result};
use minijinja::syntax::SyntaxConfig;
use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value};
use serde_json::{json, Value as Json};

use super::red_tests_cell;
use crate::results::{MutantResult, Outcome, Results};

/// First line of every PR comment: a CI step finds its previous comment by it.
pub const MARKER: &str = "<!-- unguard -->";

const PR_COMMENT: &str = include_str!("../../templates/pr-comment.md");

/// A user's template (`--template FILE`): its name for error messages and its text.
#[derive(Debug, Clone)]
pub struct Template {
    pub name: String,
    pub text: String,
}

/// Render the PR comment with the built-in template, or with a user's
/// `template`. The result always starts with [`MARKER`]: it is prepended when
/// the template does not put it first.
pub fn render(results: &Results, template: Option<&Template>) -> Result<String> {
    let env = environment();
    let ctx = context(results)?;
    let out = match template {
        None => env
            .render_named_str("pr-comment.md", PR_COMMENT, ctx)
            .map_err(|e| anyhow!(describe_error(&e, PR_COMMENT, "built-in pr-comment.md")))?,
        Some(t) => env
            .render_named_str("template", &t.text, ctx)
            .map_err(|e| anyhow!(describe_error(&e, &t.text, &t.name)))?,
    };
    Ok(with_marker(out))
}

fn with_marker(out: String) -> String {
    if out.trim_start().starts_with(MARKER) {
        out
    } else {
        format!("{MARKER}\n{out}")
    }
}

/// `what, line N: kind: detail`, the template line and a caret under the
/// failing expression, and any cause (e.g. a filter's error).
pub(crate) fn describe_error(e: &minijinja::Error, src: &str, what: &str) -> String {
    let mut msg = match e.line() {
        Some(line) => format!("{what}, line {line}: {}", e.kind()),
        None => format!("{what}: {}", e.kind()),
    };
    if let Some(detail) = e.detail() {
        msg.push_str(": ");
        msg.push_str(detail);
    }
    if let Some(line) = e.line() {
        if let Some(text) = src.split('\n').nth(line - 1) {
            let text = text.trim_end_matches('\r');
            msg.push_str(&format!("\n{line:>5} | {text}"));
            if let Some(caret) = caret(e, src, line, text) {
                msg.push_str(&format!("\n      | {caret}"));
            }
        }
    }
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        msg.push_str(&format!("\ncaused by: {c}"));
        cause = c.source();
    }
    msg
}

/// `^^^` under the error's span, when the span lies on `line`.
fn caret(e: &minijinja::Error, src: &str, line: usize, text: &str) -> Option<String> {
    let range = e.range()?;
    let line_start: usize = src.split('\n').take(line - 1).map(|l| l.len() + 1).sum();
    let start = range.start.checked_sub(line_start)?;
    let end = range.end.checked_sub(line_start)?.min(text.len());
    let before = text.get(..start)?;
    let under = text.get(start..end.max(start))?;
    Some(format!(
        "{}{}",
        " ".repeat(before.chars().count()),
        "^".repeat(under.chars().count().max(1))
    ))
}

/// The environment every report template renders in: strict undefined
/// values (a typo is an error, not empty output), `trim_blocks` and
/// `lstrip_blocks` on, HTML auto-escaping for names ending in `.html`,
/// and the escaping filters.
pub(crate) fn environment<'a>() -> Environment<'a> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_debug(true);
    env.set_auto_escape_callback(|name| {
        if name.ends_with(".html") {
            AutoEscape::Html
        } else {
            AutoEscape::None
        }
    });
    if let Ok(syntax) = SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(true)
        .build()
    {
        env.set_syntax(syntax);
    }
    env.add_filter("cell", |v: Value| cell(&text_of(&v)));
    env.add_filter("cell_code", |v: Value| cell_code(&text_of(&v)));
    env.add_filter("code", |v: Value| code(&text_of(&v)));
    env.add_filter("fence", |v: Value, lang: Option<String>| {
        fence(&text_of(&v), lang.as_deref().unwrap_or(""))
    });
    env.add_filter("html", |v: Value| html(&text_of(&v)));
    env.add_filter("head", |v: Value, n: usize| head(&text_of(&v), n));
    env
}

/// A value as text for the filters: `none` is the empty string.
fn text_of(v: &Value) -> String {
    if v.is_none() || v.is_undefined() {
        String::new()
    } else if let Some(s) = v.as_str() {
        s.to_string()
    } else {
        v.to_string()
    }
}

/// Inline Markdown text that is safe anywhere inline, table cells included:
/// HTML specials become entities (`<` `>` `&`), Markdown punctuation is
/// backslash-escaped (`\` `` ` `` `*` `_` `[` `]` `|` `~` `$`), line breaks
/// become spaces, and a leading `#` `-` `+` `=` or `1.` cannot start a block.
pub fn cell(s: &str) -> String {
    let flat = one_line(s);
    let flat = flat.trim();
    let mut out = String::with_capacity(flat.len() + 8);
    for ch in flat.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '$' => {
                out.push('\\');
                out.push(ch);
            }
            _ => out.push(ch),
        }
    }
    if out.starts_with(['#', '-', '+', '=']) {
        out.insert(0, '\\');
    } else {
        let digits = out.chars().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 && out[digits..].starts_with(['.', ')']) {
            out.insert(digits, '\\');
        }
    }
    out
}

/// Line breaks (`\r\n`, `\r`, `\n`) as single spaces.
fn one_line(s: &str) -> String {
    s.replace("\r\n", " ").replace(['\r', '\n'], " ")
}

/// A Markdown code span whose backtick run is longer than any run inside the
/// text (so a `` ` `` or ```` ``` ```` in the text cannot end it); padded with
/// spaces when the text starts or ends with a backtick or a space. Line
/// breaks become spaces. Not for table cells: use `cell_code` there.
pub fn code(s: &str) -> String {
    let s = one_line(s);
    if s.is_empty() {
        return String::new();
    }
    let ticks = "`".repeat(longest_run(&s, '`') + 1);
    let pad = s.starts_with(['`', ' ']) || s.ends_with(['`', ' ']);
    let sp = if pad { " " } else { "" };
    format!("{ticks}{sp}{s}{sp}{ticks}")
}

/// `code` for a table cell: `|` is escaped as `\|`, which GFM unescapes
/// before it parses the code span.
pub fn cell_code(s: &str) -> String {
    code(s).replace('|', "\\|")
}

/// A fenced code block: a backtick fence longer than any backtick run in the
/// text (at least three), line endings normalised to `\n`, and a closing
/// fence on its own line. `lang` keeps only `[A-Za-z0-9_+-]`. Put it at the
/// start of a line, outside lists.
pub fn fence(s: &str, lang: &str) -> String {
    let body = s.replace("\r\n", "\n").replace('\r', "\n");
    let ticks = "`".repeat((longest_run(&body, '`') + 1).max(3));
    let lang: String = lang
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-'))
        .collect();
    let nl = if body.is_empty() || body.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    format!("{ticks}{lang}\n{body}{nl}{ticks}")
}

fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for ch in s.chars() {
        run = if ch == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// Text for raw HTML in a Markdown file (e.g. inside `<summary>`): `&`, `<`,
/// `>`, `"` and `'` become entities and line breaks spaces, so the text can
/// neither open a tag nor end the HTML block with a blank line.
pub fn html(s: &str) -> String {
    let flat = one_line(s);
    let mut out = String::with_capacity(flat.len() + 8);
    for ch in flat.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

/// The first `n` lines, plus `… N more lines` when some were cut.
pub fn head(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    if lines.len() <= n {
        return s.to_string();
    }
    let more = lines.len() - n;
    let noun = if more == 1 { "line" } else { "lines" };
    format!("{}\n… {more} more {noun}\n", lines[..n].join("\n"))
}

// ---------------------------------------------------------------------------
// The template context.

/// The outcomes in report order (that of `Summary::line`), with the icon
/// the reports show for each.
const OUTCOMES: [(Outcome, &str); 10] = [
    (Outcome::Killed, "✅"),
    (Outcome::Survived, "❌"),
    (Outcome::Timeout, "⏱️"),
    (Outcome::WrongReason, "⚠️"),
    (Outcome::Unreached, "🚫"),
    (Outcome::Unviable, "🧱"),
    (Outcome::NoOp, "➖"),
    (Outcome::Ambiguous, "❓"),
    (Outcome::Flaky, "🎲"),
    (Outcome::InternalError, "💥"),
];

/// The outcomes that get a collapsible section in the PR comment, in the
/// order of the sections: survivors first (they are the findings).
const FINDINGS: [Outcome; 5] = [
    Outcome::Survived,
    Outcome::Flaky,
    Outcome::WrongReason,
    Outcome::Timeout,
    Outcome::Unreached,
];

/// The other outcomes that are not a clean kill, listed briefly.
const OTHERS: [Outcome; 4] = [
    Outcome::Unviable,
    Outcome::NoOp,
    Outcome::Ambiguous,
    Outcome::InternalError,
];

/// Icon of an allowed survivor / wrong-reason / timeout.
const ALLOWED_ICON: &str = "🔕";

fn icon(o: Outcome) -> &'static str {
    OUTCOMES
        .iter()
        .find(|(x, _)| *x == o)
        .map(|(_, i)| *i)
        .unwrap_or("")
}

fn is_finding(o: Outcome) -> bool {
    FINDINGS.contains(&o)
}

/// The context every template renders with (see templates/README.md).
pub(crate) fn context(results: &Results) -> Result<Value> {
    // Each mutant becomes one template value, shared (reference-counted) by
    // `results.mutants`, `mutants`, `findings` and `others`: a report of 10,000
    // mutants must not hold four deep copies of each.
    let mut model = serde_json::to_value(results)?;
    let mutants_json = match model.as_object_mut().and_then(|o| o.remove("mutants")) {
        Some(Json::Array(ms)) => ms,
        _ => Vec::new(),
    };
    let mutants: Vec<Value> = mutants_json
        .into_iter()
        .zip(&results.mutants)
        .map(|(mut j, m)| {
            if let (Json::Object(obj), Json::Object(extra)) = (&mut j, mutant_extras(m)) {
                obj.extend(extra);
            }
            to_value(j)
        })
        .collect();
    // By outcome in the given order, spec order within each.
    let by_outcome = |order: &[Outcome]| -> Vec<Value> {
        order
            .iter()
            .flat_map(|o| {
                results
                    .mutants
                    .iter()
                    .zip(&mutants)
                    .filter(move |(m, _)| m.outcome == *o)
                    .map(|(_, v)| v.clone())
            })
            .collect()
    };
    let findings = by_outcome(&FINDINGS);
    let others = by_outcome(&OTHERS);
    let all = Value::from(mutants);
    let results_value = match model {
        Json::Object(o) => Value::from_pairs(
            o.into_iter()
                .map(|(k, v)| (k, to_value(v)))
                .chain(std::iter::once(("mutants".to_string(), all.clone()))),
        ),
        other => to_value(other),
    };

    let s = &results.summary;
    let level = results.thresholds.level(s.score);
    let line = s.line();
    let counts_line = line
        .rsplit_once("; ")
        .map(|(a, _)| a.to_string())
        .unwrap_or_else(|| line.clone());
    let outcomes: Vec<Json> = OUTCOMES
        .iter()
        .filter_map(|(o, i)| {
            let n = results.mutants.iter().filter(|m| m.outcome == *o).count();
            (n > 0).then(|| json!({"name": o.as_str(), "count": n, "icon": i}))
        })
        .collect();
    let passed = results.gate.passed;
    let scalars = json!({
        "marker": MARKER,
        "verdict": if passed { "passed" } else { "failed" },
        "gate_icon": if passed { "✅" } else { "❌" },
        "summary_line": line,
        "counts_line": counts_line,
        "score": s.score.map(|x| format!("{x:.1}%")),
        "score_level": level,
        "score_icon": match level {
            "high" => "🟢",
            "medium" => "🟡",
            "low" => "🔴",
            _ => "⚪",
        },
        "outcomes": outcomes,
        "duration": format!("{:.1}s", results.duration_s),
    });
    let Json::Object(scalars) = scalars else {
        unreachable!("a json! object literal")
    };
    Ok(Value::from_pairs(
        scalars.into_iter().map(|(k, v)| (k, to_value(v))).chain([
            ("results".to_string(), results_value),
            ("mutants".to_string(), all),
            ("findings".to_string(), Value::from(findings)),
            ("others".to_string(), Value::from(others)),
        ]),
    ))
}

/// The computed fields every mutant gets besides the model's own.
fn mutant_extras(m: &MutantResult) -> Json {
    let allowed = m.is_allowed();
    let n = m.red_tests.len();
    json!({
        "site": if m.line > 0 { format!("{}:{}", m.file, m.line) } else { m.file.clone() },
        "red": red_tests_cell(m),
        "red_count": match m.tests_total {
            Some(total) => format!("{n}/{total}"),
            None => n.to_string(),
        },
        "time": format!("{:.1}s", m.duration_s),
        "icon": if allowed { ALLOWED_ICON } else { icon(m.outcome) },
        "label": if allowed { format!("{} (allowed)", m.outcome.as_str()) } else { m.outcome.as_str().to_string() },
        "is_allowed": allowed,
        "is_finding": is_finding(m.outcome),
        "diff_lines": m.diff.as_deref().map(diff_lines).unwrap_or_default(),
        "diff_href": m.diff_file.as_deref().map(href),
        "log_href": m.log_file.as_deref().map(href),
    })
}

/// A unified diff as `{kind, text}` lines; kind is `add`, `del`, `hunk`,
/// `meta` (the `---`/`+++` header) or `ctx`.
fn diff_lines(diff: &str) -> Vec<Json> {
    diff.lines()
        .map(|l| {
            let kind = if l.starts_with("+++") || l.starts_with("---") {
                "meta"
            } else if l.starts_with("@@") {
                "hunk"
            } else if l.starts_with('+') {
                "add"
            } else if l.starts_with('-') {
                "del"
            } else {
                "ctx"
            };
            json!({"kind": kind, "text": l})
        })
        .collect()
}

/// A relative link to a file in the output dir: `./` first (a name like
/// `javascript:x` stays a path) and every byte outside `[A-Za-z0-9._~-]`
/// percent-encoded.
fn href(name: &str) -> String {
    let mut out = String::from("./");
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'-') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// serde_json → minijinja (the `serde` feature of minijinja is not on).
fn to_value(j: Json) -> Value {
    match j {
        Json::Null => Value::from(()),
        Json::Bool(b) => Value::from(b),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                Value::from(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Json::String(s) => Value::from(s),
        Json::Array(a) => a.into_iter().map(to_value).collect(),
        Json::Object(o) => Value::from_pairs(o.into_iter().map(|(k, v)| (k, to_value(v)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_escapes_markdown_and_html() {
        assert_eq!(cell("a|b\r\nc"), "a\\|b c");
        assert_eq!(cell("<script>&"), "&lt;script&gt;&amp;");
        assert_eq!(cell("`x` *y* _z_"), "\\`x\\` \\*y\\* \\_z\\_");
        assert_eq!(cell("# h"), "\\# h");
        assert_eq!(cell("12. x"), "12\\. x");
        assert_eq!(cell("$x$ ~y~"), "\\$x\\$ \\~y\\~");
    }

    #[test]
    fn code_spans_outlast_backtick_runs() {
        assert_eq!(code("a"), "`a`");
        assert_eq!(code("a ``` b"), "````a ``` b````");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(code("a\nb"), "`a b`");
        assert_eq!(cell_code("a|b"), "`a\\|b`");
        assert_eq!(code(""), "");
    }

    #[test]
    fn fences_outlast_backtick_runs() {
        assert_eq!(fence("x", "diff"), "```diff\nx\n```");
        assert_eq!(fence("```\n````\n", "d`iff"), "`````diff\n```\n````\n`````");
        assert_eq!(fence("a\r\nb\rc", ""), "```\na\nb\nc\n```");
    }

    #[test]
    fn html_and_head() {
        assert_eq!(
            html("<a href=\"x\">'\n"),
            "&lt;a href=&quot;x&quot;&gt;&#39; "
        );
        assert_eq!(head("1\n2\n3\n", 2), "1\n2\n… 1 more line\n");
        assert_eq!(head("1\n2\n", 2), "1\n2\n");
    }

    #[test]
    fn hrefs_stay_relative() {
        assert_eq!(href("a b.diff"), "./a%20b.diff");
        assert_eq!(href("javascript:x"), "./javascript%3Ax");
    }
}
