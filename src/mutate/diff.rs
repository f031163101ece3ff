//! What a mutation changed, and the proof: the first changed byte and line,
//! the changed region of a site ([`Change`]), positions in file bytes (lines,
//! columns in characters, a BOM not counted) and the unified diff of
//! original and mutant.

use std::borrow::Cow;
use std::ops::Range;

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
    /// The site's line (1-based): the line of the first changed byte.
    pub line: usize,
    /// 1-based column (in characters) where the region starts.
    pub col: usize,
    /// 1-based line where the region ends.
    pub end_line: usize,
    /// 1-based column (in characters) just after the region's last
    /// character.
    pub end_col: usize,
    /// Byte range of the region in the original file: its start.
    pub start: usize,
    /// The end of the region's byte range (exclusive).
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

pub(super) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `(bom, text)`: a leading UTF-8 byte order mark is not part of the text.
pub(super) fn split_bom(content: &[u8]) -> (&[u8], &[u8]) {
    if content.starts_with(BOM) {
        content.split_at(BOM.len())
    } else {
        (&[], content)
    }
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
    fn line_col_counts_chars() {
        assert_eq!(line_col("é\nxyz".as_bytes(), 5), (2, 3));
        assert_eq!(line_col("éa".as_bytes(), 2), (1, 2));
    }
}
