//! The PR comment: Markdown rendered from `templates/pr-comment.md` (minijinja),
//! or from a user's `--template`.
//!
//! This file also holds what every template shares: the environment and the
//! escaping filters (`cell`, `code`, `cell_code`, `fence`, `html`, `head`);
//! the context is in `context.rs`. `templates/README.md` documents both for
//! users. A template that fails is an
//! [`Error::Template`](crate::error::Error::Template), printed with its line.

use std::sync::Arc;

use minijinja::syntax::SyntaxConfig;
use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value};

use super::context::Context;
pub use super::context::{FINDINGS_SHOWN_MAX, MARKER};
use crate::error::{Context as _, Result};
use crate::results::Results;

const PR_COMMENT: &str = include_str!("../../templates/pr-comment.md");

/// GitHub's limit on a comment body, in characters: the PR comment is kept
/// within it.
pub const COMMENT_MAX_CHARS: usize = 65_536;

/// A user's template (`--template FILE`): its name for error messages and its text.
#[derive(Debug, Clone)]
pub struct Template {
    /// The template's name in error messages: its path as given.
    pub name: String,
    /// The template's source.
    pub text: String,
}

/// Render the PR comment with the built-in template, or with a user's
/// `template`. The result always starts with [`MARKER`]: it is prepended when
/// the template does not put it first.
///
/// The lists `mutants_shown`, `others_shown` and `findings_shown` (at most
/// [`FINDINGS_SHOWN_MAX`]) hold as many mutants as keep the comment within
/// [`COMMENT_MAX_CHARS`]: all of them when the whole comment fits, else the
/// first `limit` of each, for the largest `limit` that fits (a template
/// that lists more than those can still be longer).
///
/// A template that does not parse or render is an
/// [`Error::Template`](crate::error::Error::Template) naming it (`built-in
/// pr-comment.md`, or the user template's name) and its failing line.
pub fn render(results: &Arc<Results>, template: Option<&Template>) -> Result<String> {
    let env = environment();
    let (name, text, what) = match template {
        None => ("pr-comment.md", PR_COMMENT, "built-in pr-comment.md"),
        Some(t) => ("template", t.text.as_str(), t.name.as_str()),
    };
    let tmpl = env.template_from_named_str(name, text).context(what)?;
    let ctx = Context::new(results)?;
    let render = |limit: usize| -> Result<String> {
        tmpl.render(ctx.value(limit)).map(with_marker).context(what)
    };
    // Counted in UTF-16 units: never fewer than characters, so the comment
    // fits whichever way GitHub counts (an emoji such as 🔴 is two units).
    let fits = |s: &str| s.encode_utf16().count() <= COMMENT_MAX_CHARS;
    let all = ctx.longest();
    let out = render(all)?;
    if fits(&out) {
        return Ok(out);
    }
    // Too long: the largest limit that fits, by bisection (the comment
    // grows with the limit). `lo` fits or is 0, `hi` does not fit.
    let (mut lo, mut hi) = (0, all);
    let mut best = render(0)?;
    if !fits(&best) {
        return Ok(best);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let out = render(mid)?;
        if fits(&out) {
            (lo, best) = (mid, out);
        } else {
            hi = mid;
        }
    }
    Ok(best)
}

fn with_marker(out: String) -> String {
    if out.trim_start().starts_with(MARKER) {
        out
    } else {
        format!("{MARKER}\n{out}")
    }
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
/// become spaces, a leading `#` `-` `+` `=` or `1.` cannot start a block,
/// and `@name` cannot mention anyone ([`MENTION_BREAK`]).
pub fn cell(s: &str) -> String {
    let flat = one_line(s);
    let flat = flat.trim();
    let mut out = String::with_capacity(flat.len() + 8);
    let mut chars = flat.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '@' {
            no_mention(&mut out, chars.peek());
            continue;
        }
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

/// An invisible U+2060 WORD JOINER put between `@` and a following letter or
/// digit: GitHub turns `@name` and `@org/team` in the text of a comment
/// into mentions that notify people (a backslash or `&#64;` does not stop
/// it: the mention is found in the rendered text), but a mention must start
/// right after the `@`. Code spans and fences are never scanned for
/// mentions, so `code` and `fence` keep the text as it is.
const MENTION_BREAK: char = '\u{2060}';

/// Push `@`, and [`MENTION_BREAK`] when `next` could start a mention.
fn no_mention(out: &mut String, next: Option<&char>) {
    out.push('@');
    if next.is_some_and(|c| c.is_ascii_alphanumeric()) {
        out.push(MENTION_BREAK);
    }
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
/// neither open a tag nor end the HTML block with a blank line; `@name`
/// cannot mention anyone ([`MENTION_BREAK`]).
pub fn html(s: &str) -> String {
    let flat = one_line(s);
    let mut out = String::with_capacity(flat.len() + 8);
    let mut chars = flat.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '@' {
            no_mention(&mut out, chars.peek());
            continue;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_and_html_never_mention_anyone() {
        for f in [cell, html] {
            assert_eq!(
                f("ping @alice and @org/team"),
                "ping @\u{2060}alice and @\u{2060}org/team"
            );
            // Nothing to break: a lone `@`, `@` before punctuation.
            assert_eq!(f("a @ b @-x"), "a @ b @-x");
        }
        // Code spans are not scanned for mentions: kept as written.
        assert_eq!(code("@alice"), "`@alice`");
    }

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
}
