//! The spec file as text and as YAML: the raw serde types that mirror it one
//! to one (`deny_unknown_fields` everywhere), reading a file (UTF-8 only),
//! parsing it with positions, and the parser's messages put in words with a
//! fix.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::spec::diag::{Diagnostic, SourceLines};
use crate::spec::paths::display_path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSpec {
    pub(super) version: Spanned<u32>,
    #[serde(default)]
    pub(super) test: Option<Spanned<RawTest>>,
    #[serde(default)]
    pub(super) workspace: Option<RawWorkspace>,
    #[serde(default)]
    pub(super) include: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) mutations: Vec<Spanned<RawMutation>>,
    #[serde(default)]
    pub(super) gate: Option<RawGate>,
    #[serde(default)]
    pub(super) thresholds: Option<Spanned<RawThresholds>>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGate {
    #[serde(default)]
    pub(super) min_score: Option<Spanned<f64>>,
    #[serde(default)]
    pub(super) max_survived: Option<u32>,
    #[serde(default)]
    pub(super) timeout_is: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) allow: Vec<Spanned<RawAllow>>,
    #[serde(default)]
    pub(super) twins: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAllow {
    pub(super) id: Spanned<String>,
    #[serde(default)]
    pub(super) reason: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawThresholds {
    pub(super) high: f64,
    pub(super) low: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawInclude {
    #[serde(default)]
    pub(super) mutations: Vec<Spanned<RawMutation>>,
}

#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTest {
    #[serde(default)]
    pub(super) command: Option<Spanned<RawCommand>>,
    #[serde(default)]
    pub(super) junit: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub(super) preset: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) fail_codes: Option<Vec<i32>>,
    #[serde(default)]
    pub(super) check: Option<Spanned<RawCommand>>,
    #[serde(default)]
    pub(super) select: Option<Spanned<RawCommand>>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(untagged)]
pub(super) enum RawCommand {
    Shell(String),
    Argv(Vec<String>),
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWorkspace {
    #[serde(default)]
    pub(super) link: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) git: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMutation {
    pub(super) id: Spanned<String>,
    pub(super) control: String,
    #[serde(default)]
    pub(super) rule: Option<String>,
    #[serde(default)]
    pub(super) direction: Option<Spanned<String>>,
    pub(super) file: Spanned<String>,
    #[serde(default)]
    pub(super) find: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) regex: Option<Spanned<String>>,
    pub(super) replace: Spanned<String>,
    #[serde(default)]
    pub(super) exact_whitespace: bool,
    #[serde(default)]
    pub(super) count: Option<Spanned<RawCount>>,
    #[serde(default)]
    pub(super) canary: Option<bool>,
    #[serde(default)]
    pub(super) expect: Option<RawExpect>,
    #[serde(default)]
    pub(super) timeout: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) test: Option<Spanned<RawTest>>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(untagged)]
pub(super) enum RawCount {
    N(u32),
    Word(String),
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawExpect {
    #[serde(default)]
    pub(super) killed_by: Vec<Spanned<String>>,
}

// ------------------------------------------------------------------ reading

pub(super) struct SourceFile {
    pub(super) display: String,
    /// The text, indexed by line for snippets.
    source: SourceLines,
}

impl SourceFile {
    pub(super) fn new(display: String, text: &str) -> SourceFile {
        SourceFile {
            display,
            source: SourceLines::new(text),
        }
    }
    pub(super) fn text(&self) -> &str {
        self.source.text()
    }
    pub(super) fn diag(&self, line: u64, col: u64, msg: impl Into<String>) -> Diagnostic {
        self.source
            .snippet(Diagnostic::new(&self.display, line, col, msg))
    }
    pub(super) fn at<T>(&self, s: &Spanned<T>, msg: impl Into<String>) -> Diagnostic {
        self.diag(s.referenced.line(), s.referenced.column(), msg)
    }
}

pub(super) fn read_source(path: &Path) -> Result<SourceFile, Diagnostic> {
    let display = display_path(path);
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            return Err(
                Diagnostic::new(display, 0, 0, format!("cannot read spec file: {e}")).with_fix(
                    "create it (`unguard.yaml` in the target root) or pass --config FILE",
                ),
            )
        }
    };
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(
            Diagnostic::new(display, 1, 1, "spec file is UTF-16, not UTF-8")
                .with_fix("save the file as UTF-8"),
        );
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let upto = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = upto.iter().filter(|b| **b == b'\n').count() as u64 + 1;
            let line_start = upto.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
            let col = String::from_utf8_lossy(&upto[line_start..]).chars().count() as u64 + 1;
            let byte = e.as_bytes()[upto.len()];
            return Err(Diagnostic::new(
                display,
                line,
                col,
                format!("spec file is not valid UTF-8 (byte 0x{byte:02X})"),
            )
            .with_fix("save the file as UTF-8"));
        }
    };
    // A BOM is not content; CR and CRLF line breaks count as one line break
    // (as in the YAML parser), so snippets show the lines positions refer to.
    Ok(SourceFile::new(display, &text))
}

/// No YAML content at all: blank, comments, document markers.
fn only_comments(text: &str) -> bool {
    text.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "---" || l == "..."
    })
}

/// Line and column of the first character of YAML content.
fn first_content(text: &str) -> Option<(u64, u64)> {
    text.lines().enumerate().find_map(|(i, l)| {
        let t = l.trim_start();
        if t.is_empty() || t.starts_with('#') || t.starts_with("---") || t.starts_with('%') {
            return None;
        }
        Some((
            i as u64 + 1,
            (l.chars().count() - t.chars().count()) as u64 + 1,
        ))
    })
}

pub(super) fn parse_yaml<T: for<'de> Deserialize<'de>>(src: &SourceFile) -> Result<T, Diagnostic> {
    if src.text().trim().is_empty() {
        return Err(Diagnostic::new(&src.display, 1, 1, "spec file is empty")
            .with_fix("start it with `version: 1` and a `mutations:` list (see README)"));
    }
    if only_comments(src.text()) {
        return Err(
            Diagnostic::new(&src.display, 1, 1, "spec file is empty (only comments)")
                .with_fix("start it with `version: 1` and a `mutations:` list (see README)"),
        );
    }
    serde_saphyr::from_str_with_options::<T>(src.text(), yaml_options(src.text())).map_err(|e| {
        // Without a location from the parser, point at the first content.
        let (line, col) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .filter(|(l, c)| *l > 0 && *c > 0)
            .or_else(|| first_content(src.text()))
            .unwrap_or((1, 1));
        let opts = serde_saphyr::render_options! { source_name: Some(src.display.as_str()) };
        let rendered = e.render_with_options(opts);
        // A flow bracket left open makes the parser trip over a later line;
        // point at the bracket instead.
        if rendered.contains("placement of ':'") || rendered.contains("mapping values") {
            if let Some((bl, bc)) = unclosed_flow_bracket(src.text(), line) {
                return src
                    .diag(bl, bc, "unclosed bracket: this `[` or `{` is never closed")
                    .with_fix("close it on the same line (`]` or `}`), or quote the text if the bracket is meant literally");
            }
        }
        // First line of the rendering is "error: line L column C: message"; keep the message.
        let mut lines = rendered.lines();
        let head = lines.next().unwrap_or_default();
        let message = head
            .split_once(": ")
            .map(|(_, rest)| rest)
            .map(|rest| match rest.split_once(": ") {
                Some((pos, msg)) if pos.starts_with("line ") => msg,
                _ => rest,
            })
            .unwrap_or(head)
            .to_string();
        let mut message = humanize_yaml_message(&message);
        if message.starts_with("expected a mapping") && first_content(src.text()) == Some((line, col)) {
            message = "the spec must be a mapping of keys (`version: 1`, `test:`, `mutations:`), not a list or a single value".into();
        }
        let snippet: Vec<String> = lines
            .map(|l| {
                // The parser's `-->` line counts columns in the window it
                // cut from a long line: name the position in the file, the
                // one the header gives.
                if let Some(rest) = l.trim_start().strip_prefix("--> ") {
                    if rest.starts_with(src.display.as_str()) {
                        let indent = &l[..l.len() - l.trim_start().len()];
                        return format!("{indent}--> {}:{line}:{col}", src.display);
                    }
                }
                // The parser repeats its raw message after the caret; keep the caret only.
                match l.find('^') {
                    Some(i) if l[..i].trim_start().starts_with('|') => l[..=i].to_string(),
                    _ => l.to_string(),
                }
            })
            .collect();
        let fix = yaml_fix_hint(&message);
        // The parser's own snippet, unless it has none or a line too long to
        // print: then ours (cut around the caret).
        let long = snippet.iter().any(|l| l.chars().count() > crate::spec::diag::MAX_SHOWN);
        let mut d = src.diag(line, col, message);
        if !snippet.is_empty() && !long {
            d.snippet = Some(snippet.join("\n"));
        }
        d.with_fix(fix)
    })
}

/// The parser's options: its defaults, with the budgets that grow with the
/// size of a legitimate spec (nodes, events, scalar bytes) scaled to the
/// text. The defaults (250,000 nodes) stop a generated spec of about 20,000
/// mutations; these counts come from the text itself (aliases replay under
/// their own, unchanged limits), so a budget linear in its length cannot be
/// amplified.
fn yaml_options(text: &str) -> serde_saphyr::Options {
    let d = serde_saphyr::Budget::default();
    let n = text.len();
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_nodes: d.max_nodes.max(n.saturating_mul(2)),
            max_events: d.max_events.max(n.saturating_mul(4)),
            max_total_scalar_bytes: d.max_total_scalar_bytes.max(n.saturating_mul(2)),
            // Many mutations sharing one anchored block (`control: *c`,
            // `test: *narrow`) is a legitimate spec; alias replay keeps its
            // own caps, so the ratio heuristic only refuses good specs.
            enforce_alias_anchor_ratio: false,
        },
    }
}

/// A parser budget breach (`budget breached: Aliases { aliases: 50001 }`)
/// in words, or `None` for any other message.
fn budget_breach_words(message: &str) -> Option<String> {
    let detail = message.strip_prefix("budget breached: ")?;
    let what = match detail.split([' ', '{']).next().unwrap_or_default() {
        "Aliases" | "AliasAnchorRatio" | "Anchors" | "MergeKeys" => {
            "too many YAML aliases (`*name`), anchors (`&name`) or merge keys (`<<`)"
        }
        "Depth" => "YAML nested too deeply",
        _ => "too much YAML for one file",
    };
    Some(format!(
        "the spec goes beyond a limit of the YAML parser: {what} ({detail})"
    ))
}

/// The last bracket `[`/`{` before `before_line` that is still open at the end
/// of its line (outside quotes), as 1-based (line, column).
fn unclosed_flow_bracket(text: &str, before_line: u64) -> Option<(u64, u64)> {
    let mut found = None;
    for (i, line) in text
        .lines()
        .enumerate()
        .take(before_line.saturating_sub(1) as usize)
    {
        let mut stack: Vec<usize> = Vec::new();
        let mut quote: Option<char> = None;
        for (col, ch) in line.chars().enumerate() {
            match (quote, ch) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(ch),
                (None, '#') => break,
                (None, '[' | '{') => stack.push(col),
                (None, ']' | '}') => {
                    stack.pop();
                }
                _ => {}
            }
        }
        if let Some(col) = stack.first() {
            found = Some((i as u64 + 1, *col as u64 + 1));
        }
    }
    found
}

/// Rewrite parser messages that leak Rust or library internals.
fn humanize_yaml_message(message: &str) -> String {
    let m = message.replace(", set DuplicateKeyPolicy in Options if acceptable", "");
    if let Some(words) = budget_breach_words(&m) {
        return words;
    }
    if m.contains("cannot deserialize null into string") {
        return "missing value: a string is expected here".into();
    }
    if m.contains("untagged enum RawCount") {
        return "bad `count`: expected a positive number or `all`".into();
    }
    if m.contains("untagged enum RawCommand") {
        return "bad command: expected a string (run by `sh -c`) or a list of strings (argv)"
            .into();
    }
    if m.contains("did not match any variant") {
        return "value has the wrong type here".into();
    }
    if m.contains("expected mapping start") {
        return "expected a mapping (`key: value` entries) here".into();
    }
    if m.contains("expected sequence start") {
        return "expected a list (`- item` lines or `[a, b]`) here".into();
    }
    if m.contains("expected string scalar") {
        return "expected a single value here, not a list or a mapping".into();
    }
    if m.contains("multiple YAML documents") {
        return "the spec holds more than one YAML document (a `---` line in the middle)".into();
    }
    m
}

fn yaml_fix_hint(message: &str) -> String {
    if message.contains("unknown field") {
        "remove the key or correct its spelling to one of the expected keys".into()
    } else if message.contains("duplicate mapping key") {
        "each key may appear once per mapping: delete or merge the repeated key".into()
    } else if message.contains("missing field") {
        "add the missing key (see the spec format in README)".into()
    } else if message.contains("unclosed") {
        "close the bracket or quote that opens here".into()
    } else if message.contains("missing value") {
        "write the value after the key (quote it if it is empty: `''`)".into()
    } else if message.contains("bad `count`") {
        "use `count: 1`, another positive number, or `count: all`".into()
    } else if message.contains("the spec must be a mapping") {
        "start the file with `version: 1`, then `test:` and `mutations:` at column 1 (see README)"
            .into()
    } else if message.contains("expected a mapping") {
        "write `key: value` entries here, indented under their parent key".into()
    } else if message.contains("expected a list") {
        "write the entries as a list: one `- ` line per entry".into()
    } else if message.contains("more than one YAML document") {
        "keep one document: remove the `---` line and merge what follows into the first part".into()
    } else if message.contains("a limit of the YAML parser") {
        "write repeated values out instead of aliasing them, nest less, or split the spec into files listed under `include:`".into()
    } else if message.contains("bad command") {
        "e.g. `command: \"python3 -m pytest -q\"` or `command: [python3, -m, pytest]`".into()
    } else if message.contains("placement of ':'") || message.contains("mapping values") {
        "look for an unclosed `[`, `{` or quote above this line, or quote a string that contains `: `".into()
    } else {
        "fix the YAML at this position (quote strings that contain `:` or `#`)".into()
    }
}

/// The mutations declared in one spec file (the main file or an include).
pub(super) type MutationSource = (SourceFile, Vec<Spanned<RawMutation>>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_budget_breaches_are_put_in_words() {
        let w = |m: &str| budget_breach_words(m).unwrap();
        assert!(w("budget breached: Depth { depth: 65 }")
            .contains("YAML nested too deeply (Depth { depth: 65 })"));
        assert!(w("budget breached: Aliases { aliases: 50001 }").contains("too many YAML aliases"));
        assert!(w("budget breached: Nodes").contains("too much YAML for one file"));
        assert_eq!(budget_breach_words("mapping values are not allowed"), None);
    }
}
