//! Matching a mutation's pattern against file bytes and replacing what it
//! matched: literal `find` text with its whitespace tolerance (without a
//! regex), a `regex` with its capture groups, the declared `count`, the
//! file's line endings, and re-indenting a multi-line `replace` to the code
//! it lands in. The hostile inputs are listed in [`crate::mutate`].

use std::borrow::Cow;
use std::ops::Range;

use regex::bytes::Regex;

use crate::mutate::diff::{change_of, line_col, split_bom, Change};
use crate::mutate::pattern::{Count, Pattern};

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
    /// A multi-line `replace` cannot be fitted to the indentation of the
    /// text a whitespace-tolerant `find` matched.
    Misindented(String),
}

impl ApplyProblem {
    /// Short name shown in messages: `no-op`, `ambiguous` or `binary file`.
    pub fn kind(&self) -> &'static str {
        match self {
            ApplyProblem::NoOp(_) | ApplyProblem::Identical(_) => "no-op",
            ApplyProblem::Ambiguous(_) => "ambiguous",
            ApplyProblem::Binary(_) => "binary file",
            ApplyProblem::Misindented(_) => "indentation",
        }
    }
    /// What went wrong, in the words of the mutant's `detail`.
    pub fn detail(&self) -> &str {
        match self {
            ApplyProblem::NoOp(d)
            | ApplyProblem::Identical(d)
            | ApplyProblem::Ambiguous(d)
            | ApplyProblem::Binary(d)
            | ApplyProblem::Misindented(d) => d,
        }
    }
    /// One line telling the user what to change.
    pub fn fix(&self) -> &'static str {
        match self {
            ApplyProblem::NoOp(_) => "update `find`/`regex` to the current code (a mutation that changes nothing would look like a surviving mutant)",
            ApplyProblem::Identical(_) => "change `replace`: it must differ from the text it replaces",
            ApplyProblem::Ambiguous(_) => "make `find` longer so it names one site, or set `count: N` / `count: all`",
            ApplyProblem::Binary(_) => "point the mutation at a text source file",
            ApplyProblem::Misindented(_) => "copy the lines of `find` and `replace` with the indentation the file has (or set `exact_whitespace: true`, which matches indentation exactly)",
        }
    }
}

/// A successfully applied mutation.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The whole mutated file.
    pub mutated: Vec<u8>,
    /// 1-based line and column of the first match (where the pattern is
    /// anchored; the site's line every output shows is [`Change::line`]).
    pub line: usize,
    /// 1-based column (in characters) of the first match.
    pub col: usize,
    /// 1-based line and column just after the first match.
    pub end_line: usize,
    /// 1-based column (in characters) just after the first match.
    pub end_col: usize,
    /// What replaced the first match (capture groups expanded).
    pub replacement: String,
    /// What changed: the site's line, and the region of the first changed
    /// site without its unchanged leading and trailing lines.
    pub change: Change,
    /// 1-based line range (inclusive) of every match.
    pub site_lines: Vec<(usize, usize)>,
    /// Number of sites replaced.
    pub sites: usize,
    /// How a multi-line `replace` was re-indented to the code it replaces
    /// (`+8 spaces`), when it was ([`reindent`]); per site, so `count: all`
    /// over sites at different depths fits each.
    pub reindented: Option<String>,
}

/// One piece of a literal `find`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    /// Exactly this text.
    Lit(String),
    /// A run of one or more whitespace characters (`\s+`).
    Ws,
    /// A line break: `\n` or `\r\n` (`\r?\n`).
    Nl,
}

fn push_lit(segs: &mut Vec<Seg>, s: &str) {
    if s.is_empty() {
        return;
    }
    match segs.last_mut() {
        Some(Seg::Lit(prev)) => prev.push_str(s),
        _ => segs.push(Seg::Lit(s.to_string())),
    }
}

/// Exact text in which only line breaks are flexible.
fn push_exact(segs: &mut Vec<Seg>, mut s: &str) {
    while let Some(i) = s.find('\n') {
        push_lit(segs, s[..i].strip_suffix('\r').unwrap_or(&s[..i]));
        segs.push(Seg::Nl);
        s = &s[i + 1..];
    }
    push_lit(segs, s);
}

/// A literal `find` as pieces. Unless `exact_whitespace`, inner whitespace runs
/// are flexible; leading and trailing whitespace (e.g. the newline a YAML block
/// scalar adds) stays exact, so it cannot swallow the next line's indentation.
/// Line breaks always match `\n` and `\r\n`.
fn literal_segments(text: &str, exact_whitespace: bool) -> Vec<Seg> {
    let mut segs = Vec::new();
    if exact_whitespace {
        push_exact(&mut segs, text);
        return segs;
    }
    let core = text.trim_matches(char::is_whitespace);
    let lead = &text[..text.len() - text.trim_start_matches(char::is_whitespace).len()];
    let trail = &text[text.trim_end_matches(char::is_whitespace).len()..];
    push_exact(&mut segs, lead);
    for ch in core.chars() {
        if ch.is_whitespace() {
            if segs.last() != Some(&Seg::Ws) {
                segs.push(Seg::Ws);
            }
        } else {
            push_lit(&mut segs, ch.encode_utf8(&mut [0u8; 4]));
        }
    }
    if !core.is_empty() {
        push_exact(&mut segs, trail);
    }
    segs
}

/// Compile a pattern to a byte regex. A literal becomes an escaped regex in
/// which every inner whitespace run matches `\s+` (unless `exact_whitespace`)
/// and every line break `\r?\n`, so a `find` written on one line still hits
/// text wrapped over two, in LF and CRLF files alike. ([`apply`] matches
/// literals without a regex, to the same rules.)
pub fn compile(pattern: &Pattern) -> Result<Regex, regex::Error> {
    match pattern {
        Pattern::Regex(r) => Regex::new(r),
        Pattern::Literal {
            text,
            exact_whitespace,
        } => {
            let mut re = String::new();
            for seg in literal_segments(text, *exact_whitespace) {
                match seg {
                    Seg::Lit(s) => re.push_str(&regex::escape(&s)),
                    Seg::Ws => re.push_str(r"\s+"),
                    Seg::Nl => re.push_str(r"\r?\n"),
                }
            }
            Regex::new(&re)
        }
    }
}

/// A NUL byte anywhere means binary (git looks at the first 8 KiB; a NUL
/// further down is no more a text file).
pub fn is_binary(content: &[u8]) -> bool {
    content.contains(&0)
}

/// Line numbers of increasing offsets, in one pass over the text.
struct LineCounter<'a> {
    text: &'a [u8],
    pos: usize,
    line: usize,
}

impl LineCounter<'_> {
    fn line_at(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        if offset < self.pos {
            self.pos = 0;
            self.line = 1;
        }
        self.line += self.text[self.pos..offset]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        self.pos = offset;
        self.line
    }
}

/// Length of the whitespace character at `p`, if there is one (Unicode
/// White_Space, what `\s` matches).
fn ws_len_at(hay: &[u8], p: usize) -> Option<usize> {
    let b = *hay.get(p)?;
    if b < 0x80 {
        return matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ').then_some(1);
    }
    let w = match b {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let s = std::str::from_utf8(hay.get(p..p + w)?).ok()?;
    s.chars().next().filter(|c| c.is_whitespace()).map(|_| w)
}

/// Length of the line break (`\n` or `\r\n`) at `p`.
fn line_break_at(hay: &[u8], p: usize) -> Option<usize> {
    match hay.get(p..)? {
        [b'\n', ..] => Some(1),
        [b'\r', b'\n', ..] => Some(2),
        _ => None,
    }
}

/// End of the match of `segs` starting at `p`. Every piece is deterministic
/// (an inner whitespace run is always followed by a non-whitespace
/// character), so greedy matching is what the regex would do.
fn match_at(segs: &[Seg], hay: &[u8], mut p: usize) -> Option<usize> {
    for seg in segs {
        match seg {
            Seg::Lit(s) => {
                if !hay.get(p..)?.starts_with(s.as_bytes()) {
                    return None;
                }
                p += s.len();
            }
            Seg::Nl => p += line_break_at(hay, p)?,
            Seg::Ws => {
                let start = p;
                while let Some(w) = ws_len_at(hay, p) {
                    p += w;
                }
                if p == start {
                    return None;
                }
            }
        }
    }
    Some(p)
}

/// Non-overlapping matches of a literal, left to right: the same matches as
/// [`compile`]'s regex, without compiling one (in a 10k-mutation spec, regex
/// construction was most of the time `check` took).
fn literal_matches(segs: &[Seg], hay: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let Some(first) = segs.first() else {
        return out;
    };
    // Candidate starts: the first piece's occurrences (a plain-literal regex is
    // a substring search and cheap to build).
    let finder = match first {
        Seg::Lit(s) => Regex::new(&regex::escape(s)).ok(),
        _ => None,
    };
    let mut pos = 0;
    while pos < hay.len() {
        let start = match (&finder, first) {
            (Some(re), _) => match re.find_at(hay, pos) {
                Some(m) => m.start(),
                None => break,
            },
            (None, Seg::Lit(s)) => {
                match hay[pos..].windows(s.len()).position(|w| w == s.as_bytes()) {
                    Some(i) => pos + i,
                    None => break,
                }
            }
            (None, Seg::Nl) => match hay[pos..].iter().position(|b| matches!(b, b'\r' | b'\n')) {
                Some(i) => pos + i,
                None => break,
            },
            (None, Seg::Ws) => match (pos..hay.len()).find(|&i| ws_len_at(hay, i).is_some()) {
                Some(i) => i,
                None => break,
            },
        };
        match match_at(segs, hay, start) {
            // Every piece consumes at least one byte, so `end > start`.
            Some(end) => {
                out.push(start..end);
                pos = end;
            }
            None => pos = start + 1,
        }
    }
    out
}

/// Find every match of `pattern` in `content` (non-overlapping, left to right).
pub fn find_matches(re: &Regex, content: &[u8]) -> Vec<Range<usize>> {
    re.find_iter(content).map(|m| m.range()).collect()
}

/// The sites `pattern` matches in `text` (after a BOM), and the compiled
/// regex for a `regex` pattern.
fn find_sites(
    pattern: &Pattern,
    text: &[u8],
) -> Result<(Option<Regex>, Vec<Range<usize>>), regex::Error> {
    match pattern {
        Pattern::Literal {
            text: find,
            exact_whitespace,
        } => Ok((
            None,
            literal_matches(&literal_segments(find, *exact_whitespace), text),
        )),
        Pattern::Regex(_) => {
            let re = compile(pattern)?;
            let m = find_matches(&re, text);
            Ok((Some(re), m))
        }
    }
}

/// The byte ranges of `content` that [`apply`] would replace: non-overlapping
/// matches, left to right, never inside a leading BOM. The same as
/// `find_matches(&compile(pattern)?, …)`, which is what a literal is
/// checked against.
pub fn sites(pattern: &Pattern, content: &[u8]) -> Result<Vec<Range<usize>>, regex::Error> {
    let (bom, body) = split_bom(content);
    let (_, m) = find_sites(pattern, body)?;
    Ok(m.into_iter()
        .map(|r| r.start + bom.len()..r.end + bom.len())
        .collect())
}

/// More `\r\n` than bare `\n` line breaks.
fn mostly_crlf(text: &[u8]) -> bool {
    let mut crlf = 0usize;
    let mut lf = 0usize;
    for (i, b) in text.iter().enumerate() {
        if *b == b'\n' {
            if i > 0 && text[i - 1] == b'\r' {
                crlf += 1;
            } else {
                lf += 1;
            }
        }
    }
    crlf > lf
}

/// Every bare `\n` as `\r\n`.
fn to_crlf(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut prev = '\0';
    for ch in s.chars() {
        if ch == '\n' && prev != '\r' {
            out.push('\r');
        }
        out.push(ch);
        prev = ch;
    }
    out
}

/// Why a `find` may miss in a file that is not UTF-8 (empty when it is).
fn non_utf8_hint(content: &[u8], pattern: &Pattern) -> String {
    let text = match pattern {
        Pattern::Literal { text, .. } | Pattern::Regex(text) => text,
    };
    let Err(e) = std::str::from_utf8(content) else {
        return String::new();
    };
    if text.is_ascii() {
        return String::new();
    }
    let at = e.valid_up_to();
    let byte = content[at];
    let (line, col) = line_col(content, at);
    format!(
        " (the file is not UTF-8: byte 0x{byte:02X} at line {line}, column {col}; a UTF-8 pattern cannot match such bytes, a `regex` with `(?-u:\\x{byte:02X})` can)"
    )
}

/// `count: N` holds only when the pattern matched exactly N times; the
/// error names the first lines it matched.
fn check_count(
    what: &str,
    count: Count,
    matches: &[Range<usize>],
    lines: &mut LineCounter<'_>,
) -> Result<(), ApplyProblem> {
    match count {
        Count::Exactly(n) if matches.len() != n => {
            let shown: Vec<String> = matches
                .iter()
                .take(5)
                .map(|r| lines.line_at(r.start).to_string())
                .collect();
            Err(ApplyProblem::Ambiguous(format!(
                "{what} matches {} times (lines {}{}), the spec expects exactly {n}",
                matches.len(),
                shown.join(", "),
                if matches.len() > 5 { ", …" } else { "" }
            )))
        }
        _ => Ok(()),
    }
}

/// Write `body` into `mutated` with every match of `re` replaced by
/// `replace` (captures expanded); each site's end in `mutated` goes to
/// `mutated_ends`, the first replacement's text to `first_replacement`.
/// Returns where the last match ends in `body`.
fn write_regex_sites(
    re: &Regex,
    body: &[u8],
    replace: &str,
    mutated: &mut Vec<u8>,
    mutated_ends: &mut Vec<usize>,
    first_replacement: &mut Vec<u8>,
) -> usize {
    let mut last = 0;
    for (i, caps) in re.captures_iter(body).enumerate() {
        let whole = caps.get(0).expect("group 0 is the match").range();
        mutated.extend_from_slice(&body[last..whole.start]);
        let at = mutated.len();
        caps.expand(replace.as_bytes(), mutated);
        mutated_ends.push(mutated.len());
        if i == 0 {
            first_replacement.extend_from_slice(&mutated[at..]);
        }
        last = whole.end;
    }
    last
}

/// A file with a NUL byte is binary: unguard mutates text files only.
fn refuse_binary(content: &[u8]) -> Result<(), ApplyProblem> {
    match content.iter().position(|b| *b == 0) {
        Some(nul) => {
            let (line, _) = line_col(content, nul);
            Err(ApplyProblem::Binary(format!(
                "file looks binary (a NUL byte on line {line}); unguard mutates text files only"
            )))
        }
        None => Ok(()),
    }
}

/// `text` with every whitespace run one space, trimmed: what a
/// whitespace-tolerant `find` tells apart.
fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `a` and `b` have the same lines, each with the same indentation
/// and the same words, and differ only in the length of whitespace runs
/// between words (`x  >  1` for `x > 1`). A change of indentation or of line
/// breaks is code (Python), a whitespace run added or removed may join or
/// split words, and a differing line with a quote may hold the change in a
/// string literal (`"Bearer "`): none of those is whitespace only.
fn only_inner_whitespace_differs(a: &[u8], b: &[u8]) -> bool {
    let (la, lb): (Vec<&[u8]>, Vec<&[u8]>) = (
        a.split(|&c| c == b'\n').collect(),
        b.split(|&c| c == b'\n').collect(),
    );
    if a == b || la.len() != lb.len() {
        return false;
    }
    let indent = |l: &[u8]| l.iter().take_while(|c| **c == b' ' || **c == b'\t').count();
    let words = |l: &[u8]| -> Vec<Vec<u8>> {
        l.split(|c| c.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    };
    let quoted = |l: &[u8]| l.iter().any(|c| matches!(c, b'"' | b'\'' | b'`'));
    la.iter().zip(&lb).all(|(x, y)| {
        x == y
            || (x[..indent(x)] == y[..indent(y)]
                && words(x) == words(y)
                && !quoted(x)
                && !quoted(y))
    })
}

/// A literal `find` that is empty, or that `replace` equals under the
/// whitespace tolerance of `find`, changes nothing: `no-op` before a run.
fn check_literal(pattern: &Pattern, replace: &str) -> Result<(), ApplyProblem> {
    let Pattern::Literal {
        text,
        exact_whitespace,
    } = pattern
    else {
        return Ok(());
    };
    if text.is_empty() {
        return Err(ApplyProblem::NoOp("`find` is empty".into()));
    }
    if !exact_whitespace
        && text != replace
        && collapse_whitespace(text) == collapse_whitespace(replace)
    {
        return Err(ApplyProblem::Identical(
            "`replace` differs from `find` only in whitespace, which `find` is tolerant of: the mutant would change nothing".into(),
        ));
    }
    Ok(())
}

/// Apply the mutation to `content` in memory.
pub fn apply(
    pattern: &Pattern,
    replace: &str,
    count: Count,
    content: &[u8],
) -> Result<Applied, ApplyProblem> {
    refuse_binary(content)?;
    let (bom, body) = split_bom(content);
    let what = match pattern {
        Pattern::Literal { .. } => "find text",
        Pattern::Regex(_) => "regex",
    };
    check_literal(pattern, replace)?;
    // The matches in the text after the BOM (and the regex, for captures).
    let (compiled, matches) = find_sites(pattern, body)
        .map_err(|e| ApplyProblem::NoOp(format!("pattern does not compile: {e}")))?;
    if matches.is_empty() {
        return Err(ApplyProblem::NoOp(format!(
            "{what} matches nothing in the file: the code moved or the spec is stale{}",
            non_utf8_hint(body, pattern)
        )));
    }
    let mut lines = LineCounter {
        text: body,
        pos: 0,
        line: 1,
    };
    check_count(what, count, &matches, &mut lines)?;
    // Line breaks in `replace` follow the file's convention.
    let replace: Cow<str> = if replace.contains('\n') && mostly_crlf(body) {
        Cow::Owned(to_crlf(replace))
    } else {
        Cow::Borrowed(replace)
    };
    let mut mutated = Vec::with_capacity(content.len() + replace.len());
    mutated.extend_from_slice(bom);
    let mut first_replacement = Vec::new();
    // Where each site ends in the mutated file.
    let mut mutated_ends = Vec::with_capacity(matches.len());
    let (last, reindented) = match &compiled {
        None => {
            let reindented = write_literal_sites(
                pattern,
                body,
                &matches,
                &replace,
                &mut mutated,
                &mut mutated_ends,
            )?;
            if let Some(&end) = mutated_ends.first() {
                let start = bom.len() + matches[0].start;
                first_replacement.extend_from_slice(&mutated[start..end]);
            }
            (matches.last().map_or(0, |r| r.end), reindented)
        }
        Some(re) => {
            let last = write_regex_sites(
                re,
                body,
                &replace,
                &mut mutated,
                &mut mutated_ends,
                &mut first_replacement,
            );
            (last, None)
        }
    };
    mutated.extend_from_slice(&body[last..]);
    let in_file: Vec<Range<usize>> = matches
        .iter()
        .map(|r| r.start + bom.len()..r.end + bom.len())
        .collect();
    let Some(change) = change_of(content, &mutated, &in_file, &mutated_ends) else {
        return Err(ApplyProblem::Identical(
            "the replacement leaves the file unchanged (replace equals the matched text)".into(),
        ));
    };
    if only_inner_whitespace_differs(content, &mutated) {
        return Err(ApplyProblem::Identical(
            "the replacement changes only whitespace inside lines (not a line's indentation nor its breaks): the mutant would change nothing the code means".into(),
        ));
    }
    let (line, col) = line_col(content, bom.len() + matches[0].start);
    let (end_line, end_col) = line_col(content, bom.len() + matches[0].end);
    lines.pos = 0;
    lines.line = 1;
    let site_lines = matches
        .iter()
        .map(|r| {
            let first = lines.line_at(r.start);
            // A match ending in a newline does not touch the next line.
            let last = lines.line_at(r.end.saturating_sub(1).max(r.start));
            (first, last)
        })
        .collect();
    Ok(Applied {
        mutated,
        line,
        col,
        end_line,
        end_col,
        replacement: String::from_utf8_lossy(&first_replacement).into_owned(),
        change,
        site_lines,
        sites: matches.len(),
        reindented,
    })
}

/// Write the literal's `matches` of `body` into `mutated` (which holds
/// what precedes `body`), each replaced by `replace` fitted to its site
/// ([`reindent`]), recording where each site ends; everything after the last
/// site is left to the caller. Returns the first site's re-indentation.
fn write_literal_sites(
    pattern: &Pattern,
    body: &[u8],
    matches: &[Range<usize>],
    replace: &str,
    mutated: &mut Vec<u8>,
    mutated_ends: &mut Vec<usize>,
) -> Result<Option<String>, ApplyProblem> {
    let mut lines = LineCounter {
        text: body,
        pos: 0,
        line: 1,
    };
    let mut reindented = None;
    let mut last = 0;
    for r in matches {
        let (fitted, shift) = match pattern {
            Pattern::Literal {
                text,
                exact_whitespace: false,
            } => reindent(text, &body[r.clone()], replace, lines.line_at(r.start))?,
            _ => (Cow::Borrowed(replace), None),
        };
        if reindented.is_none() {
            reindented = shift;
        }
        mutated.extend_from_slice(&body[last..r.start]);
        mutated.extend_from_slice(fitted.as_bytes());
        mutated_ends.push(mutated.len());
        last = r.end;
    }
    Ok(reindented)
}

// ------------------------------------------------------------ re-indenting

/// Leading whitespace of `line`.
fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The lines after the first of `text` that hold something besides
/// whitespace (`\r` of CRLF files stripped).
fn continuation_lines(text: &str) -> Vec<&str> {
    text.split('\n')
        .skip(1)
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.trim().is_empty())
        .collect()
}

/// An indentation change, in words: `+8 spaces`, `-1 tab`.
fn describe_shift(sign: char, ws: &str) -> String {
    let tabs = ws.chars().filter(|c| *c == '\t').count();
    let spaces = ws.chars().count() - tabs;
    let unit = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    match (spaces, tabs) {
        (s, 0) => format!("{sign}{}", unit(s, "space")),
        (0, t) => format!("{sign}{}", unit(t, "tab")),
        (s, t) => format!("{sign}{} and {}", unit(t, "tab"), unit(s, "space")),
    }
}

/// Fit a multi-line `replace` to the indentation of the text a
/// whitespace-tolerant `find` matched (`matched`, at 1-based `line`).
///
/// Inner whitespace in `find` matches any run, so `find: |` written at
/// column 0 matches a body indented 8 spaces; `replace` is written in the
/// same frame as `find`, and pasted as written its second and later lines
/// would land at the wrong depth (a collection error, or a body moved out
/// of its block). The first line lands where the match starts; every later
/// line of `find` that holds text is paired with the matched text's, and
/// when they all differ by the same leading whitespace, that much is added
/// to (or taken from) every later non-blank line of `replace`. A replacement
/// that cannot be fitted is refused, never written at a guessed depth.
/// Returns the replacement and, when it changed, the shift in words.
fn reindent<'r>(
    find: &str,
    matched: &[u8],
    replace: &'r str,
    line: usize,
) -> Result<(Cow<'r, str>, Option<String>), ApplyProblem> {
    let as_is = Ok((Cow::Borrowed(replace), None));
    let later = continuation_lines(replace);
    if later.is_empty() {
        return as_is;
    }
    // A literal's match is its UTF-8 pieces and whitespace.
    let Ok(matched) = std::str::from_utf8(matched) else {
        return as_is;
    };
    let (want, have) = (continuation_lines(find), continuation_lines(matched));
    if want.is_empty() {
        // A one-line `find`: nothing says how the file indents the lines of
        // `replace`; they are written as given.
        return as_is;
    }
    let refuse = |why: String| {
        Err(ApplyProblem::Misindented(format!(
            "`find` matched the code at line {line} with another indentation than it is written with, and {why}, so the lines of the multi-line `replace` cannot be indented to fit"
        )))
    };
    if want.len() != have.len() {
        return refuse(format!(
            "its {} indented line(s) matched {} line(s) in the file",
            want.len(),
            have.len()
        ));
    }
    // `Ok(ws)`: the file's lines are `ws` deeper; `Err(ws)`: `ws` shallower.
    let mut shift: Option<Result<&str, &str>> = None;
    for (k, (w, h)) in want.iter().zip(&have).enumerate() {
        let (wi, hi) = (indent_of(w), indent_of(h));
        let this = if let Some(extra) = hi.strip_suffix(wi) {
            Ok(&hi[..extra.len()])
        } else if let Some(less) = wi.strip_suffix(hi) {
            Err(&wi[..less.len()])
        } else {
            return refuse(format!(
                "line {} of the site is indented with {hi:?} where `find` has {wi:?}",
                line + k + 1
            ));
        };
        match shift {
            None => shift = Some(this),
            Some(s) if s == this => {}
            Some(_) => {
                return refuse(format!(
                    "its lines are off by different amounts (line {} of the site is indented with {hi:?} where `find` has {wi:?})",
                    line + k + 1
                ))
            }
        }
    }
    let (add, remove) = match shift {
        Some(Ok(add)) => (add, ""),
        Some(Err(remove)) => ("", remove),
        None => return as_is,
    };
    if add.is_empty() && remove.is_empty() {
        return as_is;
    }
    let mut out = String::with_capacity(replace.len() + later.len() * add.len());
    for (i, l) in replace.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            if !l.trim().is_empty() {
                out.push_str(add);
                match l.strip_prefix(remove) {
                    Some(rest) => {
                        out.push_str(rest);
                        continue;
                    }
                    None => {
                        return refuse(format!(
                            "line {} of `replace` is indented less than the {} the file removes",
                            i + 1,
                            describe_shift('-', remove).trim_start_matches('-')
                        ))
                    }
                }
            }
        }
        out.push_str(l);
    }
    let words = if add.is_empty() {
        describe_shift('-', remove)
    } else {
        describe_shift('+', add)
    };
    Ok((Cow::Owned(out), Some(words)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutate::diff::first_changed_line;

    fn lit(s: &str) -> Pattern {
        Pattern::Literal {
            text: s.into(),
            exact_whitespace: false,
        }
    }

    #[test]
    fn a_change_of_whitespace_only_is_a_no_op_but_indentation_and_strings_are_code() {
        let file = b"if n  >  LIMIT:\n    return False\nauth = \"Bearer \"\n";
        // `find` equal to `replace` under the tolerance of `find`.
        let e = apply(&lit("n > LIMIT"), "n  > LIMIT", Count::Exactly(1), file).unwrap_err();
        assert_eq!(e.kind(), "no-op", "{e:?}");
        // A regex whose replacement changes only a run's length.
        let re = Pattern::Regex(r"n\s+>\s+LIMIT".into());
        let e = apply(&re, "n > LIMIT", Count::Exactly(1), file).unwrap_err();
        assert_eq!(e.kind(), "no-op", "{e:?}");
        // Indentation is code, and so is a space inside a string.
        let exact = Pattern::Literal {
            text: "    return False".into(),
            exact_whitespace: true,
        };
        assert!(apply(&exact, "return False", Count::Exactly(1), file).is_ok());
        let bearer = Pattern::Regex("\"Bearer \"".into());
        assert!(apply(&bearer, "\"Bearer\"", Count::Exactly(1), file).is_ok());
        let joined = Pattern::Regex(r"n\s+>".into());
        assert!(
            apply(&joined, "n>", Count::Exactly(1), file).is_ok(),
            "words joined"
        );
    }

    #[test]
    fn literal_matches_across_line_break() {
        let content = b"at most 5\npartial results\n";
        let a = apply(&lit("5 partial"), "50 partial", Count::Exactly(1), content).unwrap();
        assert_eq!(a.mutated, b"at most 50 partial results\n");
        assert_eq!((a.line, a.col), (1, 9));
    }

    /// A method body indented 8 spaces, twice (for `count: all`) at
    /// different depths.
    const NESTED: &str = "class G:\n    def ok(self, host):\n        if host == \"evil\":\n            return False\n        return True\n";

    #[test]
    fn a_multi_line_replace_is_reindented_to_the_code_it_replaces() {
        let find = "if host == \"evil\":\n    return False\n";
        let replace = "if host == \"evil\":\n    log(host)\n\n    return True\n";
        let a = apply(&lit(find), replace, Count::Exactly(1), NESTED.as_bytes()).unwrap();
        assert_eq!(
            String::from_utf8(a.mutated).unwrap(),
            "class G:\n    def ok(self, host):\n        if host == \"evil\":\n            log(host)\n\n            return True\n        return True\n"
        );
        assert_eq!(a.reindented.as_deref(), Some("+8 spaces"));
        // Written at the code's depth already: as given, no note.
        let deep = "if host == \"evil\":\n            return False";
        let a = apply(
            &lit(deep),
            "if host == \"evil\":\n            return True",
            Count::Exactly(1),
            NESTED.as_bytes(),
        )
        .unwrap();
        assert!(String::from_utf8(a.mutated)
            .unwrap()
            .contains("\n            return True\n"));
        assert_eq!(a.reindented, None);
        // Written deeper than the code: indentation taken away.
        let deeper = "if host == \"evil\":\n                return False";
        let a = apply(
            &lit(deeper),
            "if host == \"evil\":\n                return True",
            Count::Exactly(1),
            NESTED.as_bytes(),
        )
        .unwrap();
        assert!(String::from_utf8(a.mutated)
            .unwrap()
            .contains(":\n            return True\n"));
        assert_eq!(a.reindented.as_deref(), Some("-4 spaces"));
        // ... unless `replace` is not that deep: refused, not guessed.
        let r = apply(
            &lit(deeper),
            "if host == \"evil\":\n  return True",
            Count::Exactly(1),
            NESTED.as_bytes(),
        );
        assert!(matches!(r, Err(ApplyProblem::Misindented(_))), "{r:?}");
    }

    #[test]
    fn every_site_is_reindented_to_its_own_depth_in_lf_and_crlf() {
        let two = "if a:\n    x()\ndef f():\n    if a:\n        x()\n";
        let a = apply(
            &lit("if a:\n    x()"),
            "if a:\n    y()",
            Count::All,
            two.as_bytes(),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(a.mutated).unwrap(),
            "if a:\n    y()\ndef f():\n    if a:\n        y()\n"
        );
        let crlf = two.replace('\n', "\r\n");
        let a = apply(
            &lit("if a:\n    x()"),
            "if a:\n    y()",
            Count::All,
            crlf.as_bytes(),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(a.mutated).unwrap(),
            "if a:\r\n    y()\r\ndef f():\r\n    if a:\r\n        y()\r\n"
        );
    }

    #[test]
    fn a_replacement_that_cannot_be_fitted_is_refused() {
        // Lines off by different amounts.
        let uneven = "    if a:\n        x()\n          y()\n";
        let r = apply(
            &lit("if a:\nx()\ny()"),
            "if a:\nz()",
            Count::Exactly(1),
            uneven.as_bytes(),
        );
        let Err(ApplyProblem::Misindented(why)) = r else {
            panic!("{r:?}")
        };
        assert!(why.contains("line 3 of the site"), "{why}");
        // Tabs in the file, spaces in `find`.
        let tabs = "if a:\n\tx()\n";
        let r = apply(
            &lit("if a:\n    x()"),
            "if a:\n    y()",
            Count::Exactly(1),
            tabs.as_bytes(),
        );
        assert!(matches!(r, Err(ApplyProblem::Misindented(_))), "{r:?}");
        // A one-line `replace`, a one-line `find`, an exact `find` or a
        // regex: written as given.
        let a = apply(
            &lit("if host == \"evil\":\n    return False"),
            "pass",
            Count::Exactly(1),
            NESTED.as_bytes(),
        )
        .unwrap();
        assert_eq!(a.reindented, None);
        let a = apply(
            &lit("return False"),
            "log()\n    return True",
            Count::Exactly(1),
            NESTED.as_bytes(),
        )
        .unwrap();
        assert!(String::from_utf8(a.mutated)
            .unwrap()
            .contains("log()\n    return True\n"));
        let re = Pattern::Regex("if a:\\n    x\\(\\)".into());
        let a = apply(
            &re,
            "if a:\n    y()",
            Count::Exactly(1),
            b"def f():\n    if a:\n    x()\n",
        )
        .unwrap();
        assert_eq!(a.reindented, None);
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
    fn change_skips_unchanged_leading_and_trailing_lines() {
        let content = b"def f(origin):\n    # check the origin\n    if not allowed(origin):\n        raise Forbidden()\n    return 1\n";
        let a = apply(
            &lit("# check the origin\n    if not allowed(origin):\n        raise Forbidden()"),
            "# check the origin\n    if False:\n        raise Forbidden()",
            Count::Exactly(1),
            content,
        )
        .unwrap();
        // The match starts on the comment line; the change is on line 3.
        assert_eq!((a.line, a.col), (2, 5));
        let c = &a.change;
        assert_eq!((c.line, c.col, c.end_line, c.end_col), (3, 1, 3, 28));
        assert_eq!(&content[c.start..c.end], b"    if not allowed(origin):");
        assert_eq!(c.replacement, "    if False:");
        assert_eq!(first_changed_line(content, &a.mutated), Some(c.line));
    }

    #[test]
    fn change_of_a_one_line_site_is_the_whole_match() {
        let a = apply(
            &lit("verify=True"),
            "verify=False",
            Count::Exactly(1),
            b"c = Client(\n    verify=True)\n",
        )
        .unwrap();
        let c = &a.change;
        assert_eq!((c.line, c.col, c.end_line, c.end_col), (2, 5, 2, 16));
        assert_eq!(c.replacement, "verify=False");
        // A deleted line: the region is the line with its newline.
        let a = apply(
            &lit("    check()\n"),
            "",
            Count::Exactly(1),
            b"a\r\n    check()\nb\n",
        )
        .unwrap();
        let c = &a.change;
        assert_eq!((c.line, c.col, c.end_line, c.end_col), (2, 1, 3, 1));
        assert_eq!(c.replacement, "");
    }

    #[test]
    fn change_of_many_sites_is_the_first_changed_one() {
        let content = b"x = 1\nkeep\nx = 1\n";
        let a = apply(&lit("x = 1"), "x = 2", Count::All, content).unwrap();
        let c = &a.change;
        assert_eq!((c.line, c.col, c.end_line, c.end_col), (1, 1, 1, 6));
        assert_eq!(c.replacement, "x = 2");
        // A regex whose first site expands to itself: the second site.
        let a = apply(
            &Pattern::Regex(r"(\w) = 1".into()),
            "${1} = $1",
            Count::All,
            b"1 = 1\n\nx = 1\n",
        )
        .unwrap();
        let c = &a.change;
        assert_eq!((c.line, c.col, c.end_line, c.end_col), (3, 1, 3, 6));
        assert_eq!(c.replacement, "x = x");
        // A BOM is not a column.
        let a = apply(&lit("b"), "c", Count::Exactly(1), b"\xEF\xBB\xBFab\n").unwrap();
        assert_eq!((a.change.line, a.change.col), (1, 2));
    }

    #[test]
    fn change_region_replaced_gives_the_mutant_and_starts_on_the_first_changed_line() {
        let alphabet: Vec<&str> = vec!["a", "b", "\n", "\r\n", " ", "é", "x"];
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            ((seed >> 33) as usize) % n
        };
        let mut applied = 0;
        for _ in 0..5_000 {
            let mut text = |len: usize| -> String {
                (0..len).map(|_| alphabet[next(alphabet.len())]).collect()
            };
            let (before, find, after, replace) = (text(4), text(3), text(4), text(3));
            let content = format!("{before}{find}{after}");
            let Some(r) = content.find(&find).filter(|_| !find.trim().is_empty()) else {
                continue;
            };
            let p = Pattern::Literal {
                text: find.clone(),
                exact_whitespace: true,
            };
            let Ok(a) = apply(&p, &replace, Count::Exactly(1), content.as_bytes()) else {
                continue;
            };
            let c = &a.change;
            let rebuilt = format!(
                "{}{}{}",
                &content[..c.start],
                c.replacement,
                &content[c.end..]
            );
            assert_eq!(
                rebuilt.as_bytes(),
                a.mutated,
                "{content:?} {find:?} {replace:?} at {r}"
            );
            assert_eq!(
                Some(c.line),
                first_changed_line(content.as_bytes(), &a.mutated),
                "{content:?} {find:?} {replace:?}"
            );
            assert_eq!((c.line, c.col), line_col(content.as_bytes(), c.start));
            assert!((c.line, c.col) <= (c.end_line, c.end_col));
            applied += 1;
        }
        assert!(applied > 1_000, "{applied}");
    }
}
