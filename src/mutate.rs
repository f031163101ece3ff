//! Matching a mutation's pattern against file bytes, replacing, and proving
//! by diff that the replacement changed something.

use std::ops::Range;

use regex::bytes::{NoExpand, Regex};

use crate::spec::{Count, Pattern};

/// Why a mutation could not be applied. Both are spec errors, never "survived".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyProblem {
    /// Nothing matched.
    NoOp(String),
    /// The replacement equals the matched text.
    Identical(String),
    /// The number of matches is not the `count` the spec declares.
    Ambiguous(String),
    /// The file cannot be mutated as text.
    Binary(String),
}

impl ApplyProblem {
    /// Short name shown in messages: `no-op`, `ambiguous` or `binary file`.
    pub fn kind(&self) -> &'static str {
        match self {
            ApplyProblem::NoOp(_) | ApplyProblem::Identical(_) => "no-op",
            ApplyProblem::Ambiguous(_) => "ambiguous",
            ApplyProblem::Binary(_) => "binary file",
        }
    }
    pub fn detail(&self) -> &str {
        match self {
            ApplyProblem::NoOp(d)
            | ApplyProblem::Identical(d)
            | ApplyProblem::Ambiguous(d)
            | ApplyProblem::Binary(d) => d,
        }
    }
    /// One line telling the user what to change.
    pub fn fix(&self) -> &'static str {
        match self {
            ApplyProblem::NoOp(_) => "update `find`/`regex` to the current code (a mutation that changes nothing would look like a surviving mutant)",
            ApplyProblem::Identical(_) => "change `replace`: it must differ from the text it replaces",
            ApplyProblem::Ambiguous(_) => "make `find` longer so it names one site, or set `count: N` / `count: all`",
            ApplyProblem::Binary(_) => "point the mutation at a text source file",
        }
    }
}

/// A successfully applied mutation.
#[derive(Debug, Clone)]
pub struct Applied {
    pub mutated: Vec<u8>,
    /// 1-based line and column of the first match.
    pub line: usize,
    pub col: usize,
    /// 1-based line and column just after the first match.
    pub end_line: usize,
    pub end_col: usize,
    /// What replaced the first match (capture groups expanded).
    pub replacement: String,
    /// 1-based line range (inclusive) of every match.
    pub site_lines: Vec<(usize, usize)>,
    /// Number of sites replaced.
    pub sites: usize,
}

/// Compile a pattern to a byte regex. Literal text becomes an escaped regex in
/// which every whitespace run matches `\s+` (unless `exact_whitespace`), so a
/// `find` written on one line still hits text wrapped over two.
pub fn compile(pattern: &Pattern) -> Result<Regex, regex::Error> {
    match pattern {
        Pattern::Regex(r) => Regex::new(r),
        Pattern::Literal {
            text,
            exact_whitespace: true,
        } => Regex::new(&regex::escape(text)),
        Pattern::Literal {
            text,
            exact_whitespace: false,
        } => {
            // Inner whitespace runs are flexible; leading and trailing whitespace
            // (e.g. the newline a YAML block scalar adds) match literally, so they
            // cannot swallow the next line's indentation.
            let core = text.trim_matches(char::is_whitespace);
            let lead = &text[..text.len() - text.trim_start_matches(char::is_whitespace).len()];
            let trail = &text[text.trim_end_matches(char::is_whitespace).len()..];
            let mut re = regex::escape(lead);
            let mut in_ws = false;
            for ch in core.chars() {
                if ch.is_whitespace() {
                    if !in_ws {
                        re.push_str(r"\s+");
                        in_ws = true;
                    }
                } else {
                    in_ws = false;
                    re.push_str(&regex::escape(ch.encode_utf8(&mut [0u8; 4])));
                }
            }
            if !core.is_empty() {
                re.push_str(&regex::escape(trail));
            }
            Regex::new(&re)
        }
    }
}

/// Heuristic shared with git: a NUL byte in the first 8 KiB means binary.
pub fn is_binary(content: &[u8]) -> bool {
    content.iter().take(8192).any(|b| *b == 0)
}

/// 1-based (line, column) of a byte offset; column counts characters.
pub fn line_col(content: &[u8], offset: usize) -> (usize, usize) {
    let before = &content[..offset.min(content.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map(|p| p + 1)
        .unwrap_or(0);
    let col = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (line, col)
}

/// Find every match of `pattern` in `content` (non-overlapping, left to right).
pub fn find_matches(re: &Regex, content: &[u8]) -> Vec<Range<usize>> {
    re.find_iter(content).map(|m| m.range()).collect()
}

/// Apply the mutation to `content` in memory.
pub fn apply(
    pattern: &Pattern,
    replace: &str,
    count: Count,
    content: &[u8],
) -> Result<Applied, ApplyProblem> {
    if is_binary(content) {
        return Err(ApplyProblem::Binary(
            "file looks binary (contains NUL bytes); unguard mutates text files only".into(),
        ));
    }
    let re = compile(pattern)
        .map_err(|e| ApplyProblem::NoOp(format!("pattern does not compile: {e}")))?;
    let matches = find_matches(&re, content);
    let what = match pattern {
        Pattern::Literal { .. } => "find text",
        Pattern::Regex(_) => "regex",
    };
    if matches.is_empty() {
        return Err(ApplyProblem::NoOp(format!(
            "{what} matches nothing in the file: the code moved or the spec is stale"
        )));
    }
    match count {
        Count::Exactly(n) if matches.len() != n => {
            let lines: Vec<String> = matches
                .iter()
                .take(5)
                .map(|r| line_col(content, r.start).0.to_string())
                .collect();
            return Err(ApplyProblem::Ambiguous(format!(
                "{what} matches {} times (lines {}{}), the spec expects exactly {n}",
                matches.len(),
                lines.join(", "),
                if matches.len() > 5 { ", …" } else { "" }
            )));
        }
        _ => {}
    }
    let mutated = match pattern {
        Pattern::Literal { .. } => re
            .replace_all(content, NoExpand(replace.as_bytes()))
            .into_owned(),
        Pattern::Regex(_) => re.replace_all(content, replace.as_bytes()).into_owned(),
    };
    if mutated == content {
        return Err(ApplyProblem::Identical(
            "the replacement leaves the file unchanged (replace equals the matched text)".into(),
        ));
    }
    let (line, col) = line_col(content, matches[0].start);
    let (end_line, end_col) = line_col(content, matches[0].end);
    let replacement = match pattern {
        Pattern::Literal { .. } => replace.to_string(),
        Pattern::Regex(_) => {
            let mut dst = Vec::new();
            if let Some(caps) = re.captures_at(content, matches[0].start) {
                caps.expand(replace.as_bytes(), &mut dst);
            }
            String::from_utf8_lossy(&dst).into_owned()
        }
    };
    Ok(Applied {
        mutated,
        line,
        col,
        end_line,
        end_col,
        replacement,
        site_lines: matches
            .iter()
            .map(|r| {
                let first = line_col(content, r.start).0;
                // A match ending in a newline does not touch the next line.
                let last = line_col(content, r.end.saturating_sub(1).max(r.start)).0;
                (first, last)
            })
            .collect(),
        sites: matches.len(),
    })
}

/// Unified diff original → mutant, with `a/` and `b/` headers like git.
/// An empty string means nothing changed.
pub fn unified_diff(path: &str, original: &[u8], mutated: &[u8]) -> String {
    if original == mutated {
        return String::new();
    }
    let old = String::from_utf8_lossy(original);
    let new = String::from_utf8_lossy(mutated);
    let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
    diff.unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .missing_newline_hint(true)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Pattern {
        Pattern::Literal {
            text: s.into(),
            exact_whitespace: false,
        }
    }

    #[test]
    fn literal_matches_across_line_break() {
        let content = b"at most 5\npartial results\n";
        let a = apply(&lit("5 partial"), "50 partial", Count::Exactly(1), content).unwrap();
        assert_eq!(a.mutated, b"at most 50 partial results\n");
        assert_eq!((a.line, a.col), (1, 9));
    }

    #[test]
    fn exact_whitespace_does_not_cross_lines() {
        let p = Pattern::Literal {
            text: "5 partial".into(),
            exact_whitespace: true,
        };
        let r = apply(&p, "x", Count::Exactly(1), b"5\npartial");
        assert!(matches!(r, Err(ApplyProblem::NoOp(_))));
    }

    #[test]
    fn literal_special_chars_are_literal() {
        let a = apply(
            &lit("f\"127.0.0.1:{port}\""),
            "\"127.0.0.1:*\"",
            Count::Exactly(1),
            b"h = [f\"127.0.0.1:{port}\"]",
        )
        .unwrap();
        assert_eq!(a.mutated, b"h = [\"127.0.0.1:*\"]");
    }

    #[test]
    fn literal_replace_does_not_expand_dollars() {
        let a = apply(&lit("x"), "$1", Count::Exactly(1), b"x").unwrap();
        assert_eq!(a.mutated, b"$1");
    }

    #[test]
    fn regex_expands_groups() {
        let a = apply(
            &Pattern::Regex(r"check\((\w+)\)".into()),
            "skip($1)",
            Count::Exactly(1),
            b"if check(host):",
        )
        .unwrap();
        assert_eq!(a.mutated, b"if skip(host):");
        assert_eq!(a.replacement, "skip(host)");
        assert_eq!((a.line, a.col, a.end_line, a.end_col), (1, 4, 1, 15));
    }

    #[test]
    fn zero_matches_is_noop() {
        assert!(matches!(
            apply(&lit("nope"), "x", Count::Exactly(1), b"abc"),
            Err(ApplyProblem::NoOp(_))
        ));
    }

    #[test]
    fn identical_replacement_is_noop() {
        assert!(matches!(
            apply(&lit("abc"), "abc", Count::Exactly(1), b"abc"),
            Err(ApplyProblem::Identical(_))
        ));
    }

    #[test]
    fn wrong_count_is_ambiguous() {
        let r = apply(&lit("a"), "b", Count::Exactly(1), b"a\na\n");
        match r {
            Err(ApplyProblem::Ambiguous(m)) => assert!(m.contains("lines 1, 2"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            apply(&lit("a"), "b", Count::Exactly(3), b"a a"),
            Err(ApplyProblem::Ambiguous(_))
        ));
        let a = apply(&lit("a"), "b", Count::Exactly(2), b"a a").unwrap();
        assert_eq!(a.mutated, b"b b");
        let a = apply(&lit("a"), "b", Count::All, b"a a a").unwrap();
        assert_eq!((a.mutated.as_slice(), a.sites), (&b"b b b"[..], 3));
    }

    #[test]
    fn edge_whitespace_matches_literally() {
        let content = b"def f(x):\n    if x > 5:\n        return 1\n";
        let a = apply(
            &lit("if x > 5:\n"),
            "if True:\n",
            Count::Exactly(1),
            content,
        )
        .unwrap();
        assert_eq!(a.mutated, b"def f(x):\n    if True:\n        return 1\n");
        let a = apply(
            &lit("  if x >\n 5:"),
            "  if True:",
            Count::Exactly(1),
            content,
        )
        .unwrap();
        assert_eq!(a.mutated, b"def f(x):\n    if True:\n        return 1\n");
    }

    #[test]
    fn binary_is_refused() {
        assert!(matches!(
            apply(&lit("a"), "b", Count::All, b"a\0b"),
            Err(ApplyProblem::Binary(_))
        ));
    }

    #[test]
    fn diff_is_empty_only_when_unchanged() {
        assert_eq!(unified_diff("f", b"a\n", b"a\n"), "");
        let d = unified_diff("src/f.py", b"a\nb\n", b"a\nc\n");
        assert!(d.starts_with("--- a/src/f.py\n+++ b/src/f.py\n"), "{d}");
        assert!(d.contains("-b\n+c\n"), "{d}");
    }

    #[test]
    fn line_col_counts_chars() {
        assert_eq!(line_col("é\nxyz".as_bytes(), 5), (2, 3));
        assert_eq!(line_col("éa".as_bytes(), 2), (1, 2));
    }
}
