//! Diagnostics for bad input: every error names the file, line and column,
//! shows the offending source line with a caret, and says how to fix it.

use std::fmt;

/// One problem found in a spec file (or in a file a spec points at).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Path as shown to the user (relative to the current directory where possible).
    pub path: String,
    /// 1-based line; 0 when the position is unknown.
    pub line: u64,
    /// 1-based column; 0 when the position is unknown.
    pub col: u64,
    /// What is wrong, in one line.
    pub message: String,
    /// Pre-rendered source excerpt with a caret under the column.
    pub snippet: Option<String>,
    /// One line telling the user what to change.
    pub fix: Option<String>,
}

impl Diagnostic {
    /// A problem at `path:line:col` (0 for an unknown position), with no
    /// snippet and no fix yet.
    pub fn new(path: impl Into<String>, line: u64, col: u64, message: impl Into<String>) -> Self {
        Diagnostic {
            path: path.into(),
            line,
            col,
            message: message.into(),
            snippet: None,
            fix: None,
        }
    }

    /// Attach a caret snippet rendered from `source`.
    pub fn with_source(mut self, source: &str) -> Self {
        if self.line > 0 {
            let header = format!(" --> {}:{}:{}\n", self.path, self.line, self.col);
            self.snippet = Some(header + &render_snippet(source, self.line, self.col));
        }
        self
    }

    /// Attach a caret snippet rendered from `lines`, the source lines from
    /// 1-based line `first` on (enough to reach `self.line`). For callers that
    /// index a big file once instead of rescanning it per diagnostic.
    pub fn with_lines(mut self, lines: &[&str], first: u64) -> Self {
        if self.line > 0 {
            let header = format!(" --> {}:{}:{}\n", self.path, self.line, self.col);
            self.snippet = Some(header + &render_lines(lines, first, self.line, self.col));
        }
        self
    }

    /// Attach the one line that tells the user what to change.
    pub fn with_fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }

    /// 1-based `(line, column)`, or `None` when the position is unknown (the
    /// file could not be read at all).
    pub fn position(&self) -> Option<(u64, u64)> {
        (self.line > 0 && self.col > 0).then_some((self.line, self.col))
    }
}

/// Source text indexed by line, to render many snippets of one file without
/// rescanning it (a 10k-mutation spec has 50k lines). Line breaks are `\n`,
/// `\r\n` or a lone `\r`, as the YAML parser counts them; a leading BOM is
/// not text.
#[derive(Debug, Clone, Default)]
pub struct SourceLines {
    text: String,
    /// Byte offset of every line start.
    starts: Vec<usize>,
}

impl SourceLines {
    /// Index `text` by line (a leading BOM dropped, line breaks made `\n`).
    pub fn new(text: &str) -> SourceLines {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let text = if text.contains('\r') {
            text.replace("\r\n", "\n").replace('\r', "\n")
        } else {
            text.to_string()
        };
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceLines { text, starts }
    }

    /// The text, line breaks as `\n`.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Lines `first..=last` (1-based, clamped to the file), without their `\n`.
    pub fn lines(&self, first: u64, last: u64) -> Vec<&str> {
        let n = self.starts.len();
        let a = (first.max(1) as usize - 1).min(n);
        let b = (last as usize).min(n);
        (a..b)
            .map(|i| {
                let end = self.starts.get(i + 1).copied().unwrap_or(self.text.len());
                let l = &self.text[self.starts[i]..end];
                l.strip_suffix('\n').unwrap_or(l)
            })
            .collect()
    }

    /// `d` with the caret snippet of its position in this text.
    pub fn snippet(&self, d: Diagnostic) -> Diagnostic {
        let first = d.line.saturating_sub(2).max(1);
        let lines = self.lines(first, d.line);
        d.with_lines(&lines, first)
    }
}

/// Longest snippet line (in characters) a diagnostic prints; longer ones (a
/// 5 MB minified line) are cut to a window around the caret, with `…`.
pub const MAX_SHOWN: usize = 200;

/// Longest message or fix (in characters); a longer one (a huge scalar quoted
/// back) keeps its start and end, with `…` between.
pub const MAX_MESSAGE: usize = 600;

/// `s` cut to about [`MAX_MESSAGE`] characters: its start and its end, `…` between.
pub fn shorten(s: &str) -> std::borrow::Cow<'_, str> {
    shorten_to(s, MAX_MESSAGE)
}

/// `s` cut to about `max` characters: its start and its end, `…` between.
pub fn shorten_to(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.len() <= max || s.chars().count() <= max {
        return std::borrow::Cow::Borrowed(s);
    }
    let head: String = s.chars().take(max * 2 / 3).collect();
    let tail_rev: String = s.chars().rev().take(max / 3).collect();
    let tail: String = tail_rev.chars().rev().collect();
    std::borrow::Cow::Owned(format!("{head}…{tail}"))
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(
                f,
                "error: {}:{}:{}: {}",
                self.path,
                self.line,
                self.col,
                shorten(&self.message)
            )?;
        } else {
            write!(f, "error: {}: {}", self.path, shorten(&self.message))?;
        }
        if let Some(snippet) = &self.snippet {
            // Snippets are rendered cut; a pre-rendered one (from the YAML
            // parser) is cut here, line by line.
            // (Lines cut by `render_lines` carry a gutter and two `…` on top.)
            for line in snippet.lines() {
                write!(f, "\n{}", shorten_to(line, MAX_SHOWN + 40))?;
            }
        }
        if let Some(fix) = &self.fix {
            write!(f, "\n  = fix: {}", shorten(fix))?;
        }
        Ok(())
    }
}

/// Render up to two lines of context and a caret under `col` of `line`.
pub fn render_snippet(source: &str, line: u64, col: u64) -> String {
    let idx = (line as usize).saturating_sub(1);
    let first = idx.saturating_sub(2);
    let lines: Vec<&str> = source.lines().skip(first).take(idx + 1 - first).collect();
    render_lines(&lines, first as u64 + 1, line, col)
}

/// Characters shown before the caret when a long line is cut.
const CUT_LEAD: usize = 40;

/// The snippet from `lines` (line `first` onwards): the lines up to `line`
/// (at most three), then the caret under `col`. Lines longer than
/// [`MAX_SHOWN`] characters are cut to one window around the caret (the same
/// window for every line, so the columns still line up), marked with `…`.
pub fn render_lines(lines: &[&str], first: u64, line: u64, col: u64) -> String {
    if line < first || line == 0 {
        return String::new();
    }
    let idx = (line - first) as usize;
    if idx >= lines.len() {
        return String::new();
    }
    let from = idx.saturating_sub(2);
    let shown = &lines[from..=idx];
    let caret = (col as usize).saturating_sub(1);
    let is_long = |l: &str| l.len() > MAX_SHOWN && l.chars().count() > MAX_SHOWN;
    // Long lines are shown through one window that starts a little before
    // the caret when the caret's own line is long (so columns line up), or
    // at the start otherwise. Short lines are shown whole.
    let skip = if is_long(shown[shown.len() - 1]) {
        caret.saturating_sub(CUT_LEAD)
    } else {
        0
    };
    let cut = |text: &str| -> String {
        if !is_long(text) {
            return text.to_string();
        }
        let mut chars = text.chars().skip(skip);
        let mut out: String = if skip > 0 {
            "…".into()
        } else {
            String::new()
        };
        out.extend(chars.by_ref().take(MAX_SHOWN));
        if chars.next().is_some() {
            out.push('…');
        }
        out
    };
    let width = (first as usize + idx).to_string().len();
    let mut out = String::new();
    for (n, text) in shown.iter().enumerate() {
        let number = first as usize + from + n;
        out.push_str(&format!(
            "{:>width$} | {}\n",
            number,
            cut(text),
            width = width
        ));
    }
    let prefix: String = shown[shown.len() - 1]
        .chars()
        .skip(skip)
        .take(caret - skip)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let marker = if skip > 0 { " " } else { "" };
    out.push_str(&format!(
        "{:>width$} | {marker}{prefix}^",
        "",
        width = width
    ));
    out
}

/// A list of diagnostics, reported together so the user fixes them in one pass.
#[derive(Debug, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Add one problem to the list.
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }
    /// Whether no problem was found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            writeln!(f, "{d}")?;
        }
        Ok(())
    }
}

/// Spec files read and indexed once each, however many diagnostics point
/// into them: adds the caret snippet to a diagnostic.
#[derive(Default)]
pub struct SnippetCache(std::collections::HashMap<String, SourceLines>);

impl SnippetCache {
    /// `d` with the snippet of `path` at its position (none when the file
    /// cannot be read).
    pub fn snippet(&mut self, d: Diagnostic, path: &str) -> Diagnostic {
        self.0
            .entry(path.to_string())
            .or_insert_with(|| SourceLines::new(&std::fs::read_to_string(path).unwrap_or_default()))
            .snippet(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippet_points_at_column() {
        let src = "a: 1\nb: 2\nc: oops\n";
        let s = render_snippet(src, 3, 4);
        assert_eq!(s, "1 | a: 1\n2 | b: 2\n3 | c: oops\n  |    ^");
    }

    #[test]
    fn source_lines_count_every_line_break_kind() {
        let src = SourceLines::new("\u{feff}a: 1\r\nb: 2\rc: oops\n");
        assert_eq!(src.lines(1, 3), ["a: 1", "b: 2", "c: oops"]);
        assert_eq!(src.lines(3, 9), ["c: oops", ""]);
        let d = src.snippet(Diagnostic::new("u.yaml", 3, 4, "bad"));
        assert_eq!(
            d.snippet.as_deref(),
            Some(" --> u.yaml:3:4\n1 | a: 1\n2 | b: 2\n3 | c: oops\n  |    ^")
        );
    }

    #[test]
    fn long_lines_are_cut_around_the_caret() {
        let line = format!("{}key: bad{}", "x".repeat(5_000), "y".repeat(5_000));
        let s = render_snippet(&format!("short\n{line}\n"), 2, 5_001);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "1 | short");
        assert!(
            lines[1].starts_with("2 | …") && lines[1].ends_with('…'),
            "{s}"
        );
        assert!(lines[1].chars().count() < MAX_SHOWN + 10, "{s}");
        let caret = lines[2].chars().count() - 1;
        assert_eq!(lines[1].chars().nth(caret), Some('k'), "{s}");
    }

    #[test]
    fn display_has_position_and_fix() {
        let d = Diagnostic::new("u.yaml", 2, 3, "bad thing")
            .with_source("x\nyyyy\n")
            .with_fix("do this");
        let text = d.to_string();
        assert!(text.starts_with("error: u.yaml:2:3: bad thing\n"));
        assert!(text.ends_with("  = fix: do this"));
    }
}
