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
    pub message: String,
    /// Pre-rendered source excerpt with a caret under the column.
    pub snippet: Option<String>,
    /// One line telling the user what to change.
    pub fix: Option<String>,
}

impl Diagnostic {
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

    pub fn with_fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(
                f,
                "error: {}:{}:{}: {}",
                self.path, self.line, self.col, self.message
            )?;
        } else {
            write!(f, "error: {}: {}", self.path, self.message)?;
        }
        if let Some(snippet) = &self.snippet {
            write!(f, "\n{snippet}")?;
        }
        if let Some(fix) = &self.fix {
            write!(f, "\n  = fix: {fix}")?;
        }
        Ok(())
    }
}

/// Render up to two lines of context and a caret under `col` of `line`.
pub fn render_snippet(source: &str, line: u64, col: u64) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let idx = (line as usize).saturating_sub(1);
    if idx >= lines.len() {
        return String::new();
    }
    let first = idx.saturating_sub(2);
    let width = (idx + 1).to_string().len();
    let mut out = String::new();
    for (n, text) in lines.iter().enumerate().take(idx + 1).skip(first) {
        out.push_str(&format!("{:>width$} | {}\n", n + 1, text, width = width));
    }
    let caret_pad = (col as usize).saturating_sub(1);
    let prefix: String = lines[idx]
        .chars()
        .take(caret_pad)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    out.push_str(&format!("{:>width$} | {}^", "", prefix, width = width));
    out
}

/// A list of diagnostics, reported together so the user fixes them in one pass.
#[derive(Debug, Default)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }
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
    fn display_has_position_and_fix() {
        let d = Diagnostic::new("u.yaml", 2, 3, "bad thing")
            .with_source("x\nyyyy\n")
            .with_fix("do this");
        let text = d.to_string();
        assert!(text.starts_with("error: u.yaml:2:3: bad thing\n"));
        assert!(text.ends_with("  = fix: do this"));
    }
}
