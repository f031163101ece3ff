//! Matching a mutation's pattern against file bytes, replacing, and proving
//! by diff that the replacement changed something.
//!
//! Hostile inputs, decided once for every caller:
//!
//! - **Line endings.** YAML hands us `\n` only, so in a literal `find` every line
//!   break (`\n` or `\r\n`) matches either line ending in the file: at the edges
//!   of a flexible `find` and with `exact_whitespace: true` too (inner whitespace
//!   runs match any whitespace anyway). In a file whose line breaks are mostly
//!   CRLF, every bare `\n` in `replace` is written as `\r\n`, so the mutant keeps
//!   the file's convention. A `regex` is taken as written (`\n` matches LF only;
//!   write `\r?\n` or `\s`).
//! - **UTF-8 BOM.** Not part of the text: patterns match after it (a regex `^`
//!   too), columns do not count it, and it is always kept.
//! - **Non-UTF-8 bytes** (Latin-1 and friends) are matched and written back byte
//!   for byte. A `find` is UTF-8 text and cannot match them; a `regex` can
//!   (`(?-u:\xE9)`). A no-op in such a file says so.
//! - **NUL bytes** anywhere: the file is binary and refused.
//! - **Diffs** show invalid bytes as `\xNN` (so a change to them is never an
//!   empty diff) and cut lines longer than [`MAX_DIFF_LINE`] characters to a
//!   window around the change, marked with `…`.

use std::borrow::Cow;
use std::ops::Range;

use regex::bytes::Regex;

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
    pub mutated: Vec<u8>,
    /// 1-based line and column of the first match (where the pattern is
    /// anchored; the site's line every output shows is [`Change::line`]).
    pub line: usize,
    pub col: usize,
    /// 1-based line and column just after the first match.
    pub end_line: usize,
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

/// The part of a site that a mutation changes, in the original file.
///
/// `line` is *the site's line*, the one line every output shows for it: the
/// line of the first byte that differs between the original and the mutated
/// file ([`first_changed_line`]). A multi-line `find` whose first lines are a
/// comment or unchanged context is shown at the line it changes.
///
/// The region (`line:col` to `end_line:end_col`, 1-based, columns in
/// characters, the end just after the last character) covers the changed
/// text of the first changed site, grown to the site's own start and end
/// where they lie on the changed lines: so `verify=True` → `verify=False`
/// keeps its whole match, while a site's unchanged leading and trailing
/// lines are left out. Replacing the region's text by `replacement` gives
/// the mutant (at that site).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub line: usize,
    pub col: usize,
    pub end_line: usize,
    pub end_col: usize,
    /// Byte range of the region in the original file.
    pub start: usize,
    pub end: usize,
    /// The text that replaces the region.
    pub replacement: String,
}

/// Byte offset of the first difference between `original` and `mutated`
/// (the length of their common prefix); `None` when they are equal. A
/// difference inside a multi-byte UTF-8 character is moved back to the
/// character's first byte.
pub fn first_change(original: &[u8], mutated: &[u8]) -> Option<usize> {
    if original == mutated {
        return None;
    }
    let mut p = original
        .iter()
        .zip(mutated)
        .position(|(a, b)| a != b)
        .unwrap_or(original.len().min(mutated.len()));
    let mut back = 0;
    while p > 0 && back < 3 && original.get(p).is_some_and(|b| b & 0xC0 == 0x80) {
        p -= 1;
        back += 1;
    }
    Some(p)
}

/// The site's line: the 1-based line of the first byte that differs between
/// `original` and `mutated`, i.e. the first line whose text differs. For a
/// pure insertion or deletion it is the line where the bytes go in or come
/// out (a line appended at the end of a file without a final newline is the
/// new last line). Line breaks are `\n` (`\r\n` counts once); a BOM is not
/// a line. `None` when the files are equal.
pub fn first_changed_line(original: &[u8], mutated: &[u8]) -> Option<usize> {
    first_change(original, mutated).map(|p| line_col(original, p).0)
}

/// [`first_changed_line`] of `original` with bytes `range` replaced by
/// `insert`, without building the mutated file.
pub fn first_changed_line_of_edit(
    original: &[u8],
    range: Range<usize>,
    insert: &[u8],
) -> Option<usize> {
    let tail = original.get(range.start..)?;
    let after = original.get(range.end..)?;
    let new_tail = || insert.iter().chain(after);
    let new_len = insert.len() + after.len();
    let p = match tail.iter().zip(new_tail()).position(|(a, b)| a != b) {
        Some(i) => i,
        None if tail.len() == new_len => return None,
        None => tail.len().min(new_len),
    };
    Some(line_col(original, range.start + p).0)
}

/// The [`Change`] of a mutation of `original` into `mutated` whose sites are
/// `sites` (byte ranges of the original, left to right) and whose site `i`
/// ends at byte `mutated_ends[i]` of the mutated file. `None` when nothing
/// changed.
pub fn change_of(
    original: &[u8],
    mutated: &[u8],
    sites: &[Range<usize>],
    mutated_ends: &[usize],
) -> Option<Change> {
    let p = first_change(original, mutated)?;
    // The site the first change is in (or the last one before it: a pure
    // insertion can read as happening just after its site).
    let k = sites
        .iter()
        .position(|r| r.end >= p)
        .unwrap_or(sites.len().saturating_sub(1));
    let (site, site_end_m) = match (sites.get(k), mutated_ends.get(k)) {
        (Some(r), Some(&e)) => (r.clone(), e),
        _ => (p..p, p + mutated.len().saturating_sub(original.len())),
    };
    // The changed bytes: `original[p..eo]` became `mutated[p..em]`. Without
    // a later site, everything after the common suffix is unchanged.
    let (mut eo, mut em) = if k + 1 >= sites.len() {
        (original.len(), mutated.len())
    } else {
        let delta = site_end_m as isize - site.end as isize;
        let eo = site.end.max(p + delta.min(0).unsigned_abs());
        (eo, (eo as isize + delta) as usize)
    };
    while eo > p && em > p && original[eo - 1] == mutated[em - 1] {
        eo -= 1;
        em -= 1;
    }
    while eo < original.len()
        && original[eo] & 0xC0 == 0x80
        && mutated.get(em) == Some(&original[eo])
    {
        eo += 1;
        em += 1;
    }
    // Grown to the site's start and end on the changed lines.
    let line_start = original[..p]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(split_bom(original).0.len().min(p), |i| i + 1);
    let start = site.start.clamp(line_start, p);
    let line_end = original[eo..]
        .iter()
        .position(|b| *b == b'\n')
        .map_or(original.len(), |i| eo + i);
    let line_end = match line_end.checked_sub(1) {
        Some(cr) if cr >= eo && original[cr] == b'\r' => cr,
        _ => line_end,
    };
    let grown = site.end.min(line_end).max(eo) - eo;
    let end = eo + grown;
    let (line, col) = line_col(original, start);
    let (end_line, end_col) = line_col(original, end);
    Some(Change {
        line,
        col,
        end_line,
        end_col,
        start,
        end,
        replacement: String::from_utf8_lossy(&mutated[start..em + grown]).into_owned(),
    })
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `(bom, text)`: a leading UTF-8 byte order mark is not part of the text.
fn split_bom(content: &[u8]) -> (&[u8], &[u8]) {
    if content.starts_with(BOM) {
        content.split_at(BOM.len())
    } else {
        (&[], content)
    }
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

/// 1-based (line, column) of a byte offset; column counts characters (an
/// invalid UTF-8 sequence counts as one), and a leading BOM is not counted.
pub fn line_col(content: &[u8], offset: usize) -> (usize, usize) {
    let before = &content[..offset.min(content.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let line_start = match before.iter().rposition(|b| *b == b'\n') {
        Some(p) => p + 1,
        None if before.starts_with(BOM) => BOM.len(),
        None => 0,
    };
    let col = String::from_utf8_lossy(&before[line_start.min(before.len())..])
        .chars()
        .count()
        + 1;
    (line, col)
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

/// Apply the mutation to `content` in memory.
pub fn apply(
    pattern: &Pattern,
    replace: &str,
    count: Count,
    content: &[u8],
) -> Result<Applied, ApplyProblem> {
    if let Some(nul) = content.iter().position(|b| *b == 0) {
        let (line, _) = line_col(content, nul);
        return Err(ApplyProblem::Binary(format!(
            "file looks binary (a NUL byte on line {line}); unguard mutates text files only"
        )));
    }
    let (bom, body) = split_bom(content);
    let what = match pattern {
        Pattern::Literal { .. } => "find text",
        Pattern::Regex(_) => "regex",
    };
    if let Pattern::Literal { text, .. } = pattern {
        if text.is_empty() {
            return Err(ApplyProblem::NoOp("`find` is empty".into()));
        }
    }
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
    match count {
        Count::Exactly(n) if matches.len() != n => {
            let shown: Vec<String> = matches
                .iter()
                .take(5)
                .map(|r| lines.line_at(r.start).to_string())
                .collect();
            return Err(ApplyProblem::Ambiguous(format!(
                "{what} matches {} times (lines {}{}), the spec expects exactly {n}",
                matches.len(),
                shown.join(", "),
                if matches.len() > 5 { ", …" } else { "" }
            )));
        }
        _ => {}
    }
    // Line breaks in `replace` follow the file's convention.
    let replace: Cow<str> = if replace.contains('\n') && mostly_crlf(body) {
        Cow::Owned(to_crlf(replace))
    } else {
        Cow::Borrowed(replace)
    };
    let mut mutated = Vec::with_capacity(content.len() + replace.len());
    mutated.extend_from_slice(bom);
    let mut first_replacement = Vec::new();
    let mut reindented = None;
    // Where each site ends in the mutated file.
    let mut mutated_ends = Vec::with_capacity(matches.len());
    let mut last = 0;
    match &compiled {
        None => {
            reindented = write_literal_sites(
                pattern,
                body,
                &matches,
                &replace,
                &mut mutated,
                &mut mutated_ends,
            )?;
            last = matches.last().map_or(0, |r| r.end);
            if let Some(&end) = mutated_ends.first() {
                let start = bom.len() + matches[0].start;
                first_replacement.extend_from_slice(&mutated[start..end]);
            }
        }
        Some(re) => {
            for (i, caps) in re.captures_iter(body).enumerate() {
                let whole = caps.get(0).expect("group 0 is the match").range();
                mutated.extend_from_slice(&body[last..whole.start]);
                let at = mutated.len();
                caps.expand(replace.as_bytes(), &mut mutated);
                mutated_ends.push(mutated.len());
                if i == 0 {
                    first_replacement.extend_from_slice(&mutated[at..]);
                }
                last = whole.end;
            }
        }
    }
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

// ------------------------------------------------------ capture references

/// The group a `$…` reference in a regex replacement names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupRef<'a> {
    Number(usize),
    Name(&'a str),
}

impl<'a> GroupRef<'a> {
    /// A name that parses as a `usize` is a group number (`01` and `+1` too).
    fn of(name: &'a str) -> GroupRef<'a> {
        match name.parse::<usize>() {
            Ok(n) => GroupRef::Number(n),
            Err(_) => GroupRef::Name(name),
        }
    }

    /// Whether a regex whose groups are `names` has this group.
    fn exists_in(self, names: &[Option<&str>]) -> bool {
        match self {
            GroupRef::Number(n) => n < names.len(),
            GroupRef::Name(s) => names.contains(&Some(s)),
        }
    }
}

/// One capture reference in a replacement template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureRef<'a> {
    /// The reference as written: `$1`, `$name`, `${1}`.
    pub written: &'a str,
    pub group: GroupRef<'a>,
    /// Written `${…}`.
    pub braced: bool,
}

/// Every capture reference in a regex `replace`, in order, read exactly as
/// the regex crate's `Captures::expand` reads it: `$$` is a literal `$`;
/// `${name}` runs to the next `}` (without one the `$` is literal); `$name`
/// takes the longest run of `[_0-9a-zA-Z]`, so `$1_x` names the group `1_x`;
/// a name that parses as a `usize` is a group number; a `$` followed by
/// anything else is literal.
pub fn capture_refs(replace: &str) -> Vec<CaptureRef<'_>> {
    let bytes = replace.as_bytes();
    let mut refs = Vec::new();
    let mut i = 0;
    while let Some(off) = bytes[i..].iter().position(|b| *b == b'$') {
        let at = i + off;
        i = at + 1;
        let (name, end, braced) = match bytes.get(at + 1) {
            Some(b'$') => {
                i = at + 2;
                continue;
            }
            Some(b'{') => match bytes[at + 2..].iter().position(|b| *b == b'}') {
                Some(len) => (&replace[at + 2..at + 2 + len], at + 3 + len, true),
                None => continue,
            },
            _ => {
                let len = bytes[at + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                    .count();
                if len == 0 {
                    continue;
                }
                (&replace[at + 1..at + 1 + len], at + 1 + len, false)
            }
        };
        refs.push(CaptureRef {
            written: &replace[at..end],
            group: GroupRef::of(name),
            braced,
        });
        i = end;
    }
    refs
}

/// A reference in a regex `replace` to a group the regex does not have: it
/// would expand to nothing, silently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadCaptureRef {
    pub message: String,
    /// One line telling the user what to write instead.
    pub fix: String,
}

/// The references in `replace` that name no group of a regex whose groups
/// are `names` (indexed by group number, as `Regex::capture_names` yields
/// them), each once.
pub fn bad_capture_refs(replace: &str, names: &[Option<&str>]) -> Vec<BadCaptureRef> {
    let mut bad: Vec<BadCaptureRef> = Vec::new();
    let mut seen = Vec::new();
    for r in capture_refs(replace) {
        if r.group.exists_in(names) || seen.contains(&r.written) {
            continue;
        }
        seen.push(r.written);
        bad.push(describe_bad_ref(r, names));
    }
    bad
}

/// What is wrong with `r` (a group `names` does not have), and the fix.
fn describe_bad_ref(r: CaptureRef<'_>, names: &[Option<&str>]) -> BadCaptureRef {
    let written = r.written;
    let missing = match r.group {
        GroupRef::Number(n) => format!("capture group {n}"),
        GroupRef::Name(s) => format!("capture group named `{s}`"),
    };
    // `$1_x`, `$21`: the longest start of the name that is a group was meant.
    let name = &written[1..];
    let meant = (1..name.len())
        .rev()
        .filter(|_| !r.braced)
        .map(|n| name.split_at(n))
        .find(|(head, _)| GroupRef::of(head).exists_in(names));
    if let Some((head, tail)) = meant {
        let group = match GroupRef::of(head) {
            GroupRef::Number(n) => n.to_string(),
            GroupRef::Name(s) => format!("`{s}`"),
        };
        return BadCaptureRef {
            message: format!(
                "`{written}` in `replace` is read as the {missing} (a `$` reference takes every letter, digit and `_` that follows it), and the regex has no such group: it would expand to nothing"
            ),
            fix: format!("write `${{{head}}}{tail}` for group {group} followed by `{tail}`"),
        };
    }
    BadCaptureRef {
        message: format!(
            "`replace` refers to `{written}`, but the regex has no {missing}: it would expand to nothing"
        ),
        fix: format!(
            "{}, or write `$$` for a literal `$`",
            describe_groups(names)
        ),
    }
}

/// The groups of a regex, for a fix: `the regex has groups 0 (the whole
/// match), 1 (`op`) and 2; refer to one of them`.
fn describe_groups(names: &[Option<&str>]) -> String {
    if names.len() <= 1 {
        return "the regex has no capture group, only 0 (the whole match); put `(…)` around the text to keep and refer to it as `${1}`".into();
    }
    let groups: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, name)| match (i, name) {
            (0, _) => "0 (the whole match)".to_string(),
            (i, Some(n)) => format!("{i} (`{n}`)"),
            (i, None) => i.to_string(),
        })
        .collect();
    let (last, rest) = groups.split_last().expect("at least two groups");
    format!(
        "the regex has groups {} and {last}; refer to one of them",
        rest.join(", ")
    )
}

/// Longest line (in characters) a diff shows whole; longer lines are cut to a
/// window around the change, marked with `…`.
pub const MAX_DIFF_LINE: usize = 240;
/// Characters shown before the change in a cut line.
const CUT_LEAD: usize = 60;
const DIFF_CONTEXT: usize = 3;

/// Bytes as diff text: valid UTF-8 as is, every other byte as `\xNN`. With
/// `escape_backslash` the mapping is injective (a literal `\` becomes `\\`).
fn show_bytes(bytes: &[u8], escape_backslash: bool) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        if escape_backslash {
            out.push_str(&chunk.valid().replace('\\', "\\\\"));
        } else {
            out.push_str(chunk.valid());
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `line` (without its newline) cut to at most [`MAX_DIFF_LINE`] characters
/// around byte offset `focus`.
fn cut_line(line: &str, focus: usize) -> Cow<'_, str> {
    if line.len() <= MAX_DIFF_LINE || line.chars().count() <= MAX_DIFF_LINE {
        return Cow::Borrowed(line);
    }
    let focus = floor_boundary(line, focus);
    let start = line[..focus]
        .char_indices()
        .rev()
        .nth(CUT_LEAD.saturating_sub(1))
        .map(|(i, _)| i)
        .unwrap_or(0);
    let end = line[start..]
        .char_indices()
        .nth(MAX_DIFF_LINE)
        .map(|(i, _)| start + i)
        .unwrap_or(line.len());
    let mut out = String::with_capacity(end - start + 8);
    if start > 0 {
        out.push('…');
    }
    out.push_str(&line[start..end]);
    if end < line.len() {
        out.push('…');
    }
    Cow::Owned(out)
}

fn hunk_range(start: usize, len: usize) -> String {
    match len {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        _ => format!("{},{len}", start + 1),
    }
}

/// Unified diff original → mutant, with `a/` and `b/` headers like git.
/// An empty string means nothing changed; any byte change gives a non-empty
/// diff. Only the changed region (plus context) is diffed, and long lines are
/// cut around the change, so the diff of a one-character change in a 5 MB
/// minified line stays a few hundred bytes.
pub fn unified_diff(path: &str, original: &[u8], mutated: &[u8]) -> String {
    if original == mutated {
        return String::new();
    }
    let (mut old, mut new) = (show_bytes(original, false), show_bytes(mutated, false));
    if old == new {
        // Only a `\xNN` spelled out in the text could make this happen.
        old = show_bytes(original, true);
        new = show_bytes(mutated, true);
    }
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let (on, nn) = (old_lines.len(), new_lines.len());
    let mut pre = 0;
    while pre < on.min(nn) && old_lines[pre] == new_lines[pre] {
        pre += 1;
    }
    let mut suf = 0;
    while suf < on.min(nn) - pre && old_lines[on - 1 - suf] == new_lines[nn - 1 - suf] {
        suf += 1;
    }
    let lo = pre.saturating_sub(DIFF_CONTEXT);
    let old_hi = (on - suf + DIFF_CONTEXT).min(on);
    let new_hi = (nn - suf + DIFF_CONTEXT).min(nn);
    // Byte offset of every line start (and of the end), for slicing and cutting.
    let starts = |lines: &[&str]| -> Vec<usize> {
        let mut v = Vec::with_capacity(lines.len() + 1);
        let mut at = 0;
        v.push(0);
        for l in lines {
            at += l.len();
            v.push(at);
        }
        v
    };
    let (old_starts, new_starts) = (starts(&old_lines), starts(&new_lines));
    // Where the texts start and stop differing (bytes), to centre cut lines.
    let first_diff = old
        .bytes()
        .zip(new.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(old.len().min(new.len()));

    let ops = similar::capture_diff_slices(
        similar::Algorithm::Myers,
        &old_lines[lo..old_hi],
        &new_lines[lo..new_hi],
    );
    let mut out = format!("--- a/{path}\n+++ b/{path}\n");
    for group in similar::group_diff_ops(ops, DIFF_CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (os, oe) = (first.old_range().start, last.old_range().end);
        let (ns, ne) = (first.new_range().start, last.new_range().end);
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            hunk_range(lo + os, oe - os),
            hunk_range(lo + ns, ne - ns)
        ));
        let mut emit = |sign: char, lines: &[&str], starts: &[usize], range: Range<usize>| {
            for i in range {
                let value = lines[lo + i];
                // Equal lines are cut from their start, changed ones around
                // the first difference.
                let focus = match sign {
                    ' ' => 0,
                    _ => first_diff.saturating_sub(starts[lo + i]),
                };
                let text = value.strip_suffix('\n').unwrap_or(value);
                out.push(sign);
                out.push_str(&cut_line(text, focus));
                out.push('\n');
                if !value.ends_with('\n') {
                    out.push_str("\\ No newline at end of file\n");
                }
            }
        };
        for op in &group {
            let (tag, o, n) = op.as_tag_tuple();
            match tag {
                similar::DiffTag::Equal => emit(' ', &old_lines, &old_starts, o),
                similar::DiffTag::Delete => emit('-', &old_lines, &old_starts, o),
                similar::DiffTag::Insert => emit('+', &new_lines, &new_starts, n),
                similar::DiffTag::Replace => {
                    emit('-', &old_lines, &old_starts, o);
                    emit('+', &new_lines, &new_starts, n);
                }
            }
        }
    }
    out
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
    fn diff_is_empty_only_when_unchanged() {
        assert_eq!(unified_diff("f", b"a\n", b"a\n"), "");
        let d = unified_diff("src/f.py", b"a\nb\n", b"a\nc\n");
        assert!(d.starts_with("--- a/src/f.py\n+++ b/src/f.py\n"), "{d}");
        assert!(d.contains("-b\n+c\n"), "{d}");
    }

    #[test]
    fn first_changed_line_same_length_change() {
        assert_eq!(first_changed_line(b"a\nbcd\ne\n", b"a\nbXd\ne\n"), Some(2));
        assert_eq!(first_changed_line(b"abc\n", b"abc\n"), None);
        // Both edit forms agree.
        assert_eq!(
            first_changed_line_of_edit(b"a\nbcd\ne\n", 3..4, b"X"),
            Some(2)
        );
        assert_eq!(first_changed_line_of_edit(b"a\nb\n", 2..3, b"b"), None);
    }

    #[test]
    fn first_changed_line_insertion_and_deletion() {
        // A line inserted before line 2, a line deleted at line 2.
        assert_eq!(first_changed_line(b"a\nb\nc\n", b"a\nz\nb\nc\n"), Some(2));
        assert_eq!(first_changed_line(b"a\nb\nc\n", b"a\nc\n"), Some(2));
        // Inserting a copy of the next line: line 3 is the first that differs.
        assert_eq!(first_changed_line(b"x\ny\nz\n", b"x\ny\ny\nz\n"), Some(3));
        assert_eq!(
            first_changed_line_of_edit(b"x\ny\nz\n", 0..2, b"x\ny\n"),
            Some(3)
        );
        // Appended after the final newline: the new last line.
        assert_eq!(first_changed_line(b"a\n", b"a\nb\n"), Some(2));
        assert_eq!(first_changed_line(b"a\nb\n", b"a\n"), Some(2));
    }

    #[test]
    fn first_changed_line_in_crlf_and_bom_files() {
        assert_eq!(
            first_changed_line(b"a\r\nb\r\nc\r\n", b"a\r\nb\r\nX\r\n"),
            Some(3)
        );
        // A changed line ending: the line it ends.
        assert_eq!(first_changed_line(b"a\r\nb\r\n", b"a\nb\r\n"), Some(1));
        assert_eq!(
            first_changed_line(b"\xEF\xBB\xBFa\nb\n", b"\xEF\xBB\xBFa\nc\n"),
            Some(2)
        );
        assert_eq!(
            first_changed_line(b"\xEF\xBB\xBFab\n", b"\xEF\xBB\xBFaX\n"),
            Some(1)
        );
        // A difference inside a multi-byte character starts at the character.
        assert_eq!(first_change("xé".as_bytes(), "xè".as_bytes()), Some(1));
    }

    #[test]
    fn first_changed_line_on_the_last_line_without_newline() {
        assert_eq!(first_changed_line(b"a\nb\nc", b"a\nb\nX"), Some(3));
        assert_eq!(first_changed_line(b"a\nb\nc", b"a\nb\ncd"), Some(3));
        assert_eq!(first_changed_line(b"a\nb\nc", b"a\nb\n"), Some(3));
        assert_eq!(first_changed_line(b"a\nb", b"a\nb\n"), Some(2));
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

    #[test]
    fn line_col_counts_chars() {
        assert_eq!(line_col("é\nxyz".as_bytes(), 5), (2, 3));
        assert_eq!(line_col("éa".as_bytes(), 2), (1, 2));
    }

    fn refs(replace: &str) -> Vec<(&str, GroupRef<'_>)> {
        capture_refs(replace)
            .into_iter()
            .map(|r| (r.written, r.group))
            .collect()
    }

    #[test]
    fn capture_refs_follow_the_regex_crate() {
        use GroupRef::{Name, Number};
        assert_eq!(refs("$1"), [("$1", Number(1))]);
        assert_eq!(refs("a$12b"), [("$12b", Name("12b"))]);
        assert_eq!(refs("$1_x"), [("$1_x", Name("1_x"))]);
        assert_eq!(refs("${1}_x"), [("${1}", Number(1))]);
        assert_eq!(
            refs("$01 ${+2}"),
            [("$01", Number(1)), ("${+2}", Number(2))]
        );
        assert_eq!(
            refs("${a b}${}"),
            [("${a b}", Name("a b")), ("${}", Name(""))]
        );
        assert_eq!(refs("$name-x"), [("$name", Name("name"))]);
        assert_eq!(refs("é$é$x"), [("$x", Name("x"))]);
        // Literal dollars: `$$`, a lone `$`, `${` without `}`.
        for literal in ["$$", "$$1", "$", "a $ b", "$-", "${1", "$${1}", "$$$$x"] {
            assert_eq!(refs(literal), [], "{literal}");
        }
        assert_eq!(refs("$$$1"), [("$1", Number(1))]);
        assert_eq!(refs("${${1}}"), [("${${1}", Name("${1"))]);
        assert_eq!(
            refs("99999999999999999999999$99999999999999999999999"),
            [("$99999999999999999999999", Name("99999999999999999999999"))]
        );
    }

    /// `replace` expanded from [`capture_refs`]: each reference by its
    /// group's text (nothing for a missing group), `$$` by `$`.
    fn expand_by_refs(replace: &str, caps: &regex::bytes::Captures<'_>, re: &Regex) -> Vec<u8> {
        let literal = |s: &str, out: &mut Vec<u8>| {
            let mut chars = s.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '$' && chars.peek() == Some(&'$') {
                    chars.next();
                }
                out.extend_from_slice(c.to_string().as_bytes());
            }
        };
        let mut out = Vec::new();
        let mut last = 0;
        for r in capture_refs(replace) {
            let at = r.written.as_ptr() as usize - replace.as_ptr() as usize;
            literal(&replace[last..at], &mut out);
            let index = match r.group {
                GroupRef::Number(n) => Some(n),
                GroupRef::Name(s) => re.capture_names().position(|n| n == Some(s)),
            };
            if let Some(m) = index.and_then(|i| caps.get(i)) {
                out.extend_from_slice(m.as_bytes());
            }
            last = at + r.written.len();
        }
        literal(&replace[last..], &mut out);
        out
    }

    #[test]
    fn capture_refs_expand_as_the_regex_crate_expands() {
        let re = Regex::new(r"(?P<a>x)(y)(?P<a_1>z)(?P<b>w)?").unwrap();
        let caps = re.captures(b"xyz").unwrap();
        let alphabet: Vec<char> = "$${}12a_b-x 0é".chars().collect();
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let len = (seed >> 60) as usize;
            let template: String = (0..len)
                .map(|k| alphabet[((seed >> (k * 4 % 56)) % alphabet.len() as u64) as usize])
                .collect();
            let mut want = Vec::new();
            caps.expand(template.as_bytes(), &mut want);
            assert_eq!(expand_by_refs(&template, &caps, &re), want, "{template:?}");
        }
    }

    #[test]
    fn bad_capture_refs_name_the_groups_and_the_braced_form() {
        let names = [None, None, Some("op")];
        let bad = |r: &str| bad_capture_refs(r, &names);
        for good in ["$0 $1 $2 ${op} $op ${2}_x $$9 $", "${1}${2}$1$op"] {
            assert_eq!(bad(good), [], "{good}");
        }
        let b = bad("$9");
        assert_eq!(b.len(), 1);
        assert_eq!(
            b[0].message,
            "`replace` refers to `$9`, but the regex has no capture group 9: it would expand to nothing"
        );
        assert_eq!(
            b[0].fix,
            "the regex has groups 0 (the whole match), 1 and 2 (`op`); refer to one of them, or write `$$` for a literal `$`"
        );
        assert!(bad("${nope}")[0]
            .message
            .contains("no capture group named `nope`"));
        assert_eq!(
            bad("$1_x")[0].fix,
            "write `${1}_x` for group 1 followed by `_x`"
        );
        assert_eq!(
            bad("$op_x")[0].fix,
            "write `${op}_x` for group `op` followed by `_x`"
        );
        assert_eq!(
            bad("$21")[0].fix,
            "write `${2}1` for group 2 followed by `1`"
        );
        // Braced names are taken as written: no guess.
        assert!(bad("${1_x}")[0].fix.starts_with("the regex has groups"));
        // Each bad reference once.
        assert_eq!(bad("$9 $9 ${9} $x").len(), 3);
        let none = bad_capture_refs("$1", &[None]);
        assert!(
            none[0].fix.starts_with("the regex has no capture group"),
            "{none:?}"
        );
    }
}
