//! Turning a match site (a byte range in a file) into a literal
//! search-and-replace that names exactly that site: the smallest text around
//! it, grown to whole lines and then line by line, that occurs once in the
//! file. `unguard init` writes these into unguard.yaml, and `unguard audit`
//! runs the very same mutations, so both give the same verdicts.

/// A single-site literal mutation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchored {
    /// Text that occurs once in the file and contains the site.
    pub find: String,
    /// `find` with the site replaced.
    pub replace: String,
}

/// Lines of context tried above and below before giving up.
const MAX_CONTEXT_LINES: usize = 12;

/// Why a site cannot be anchored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnchorError {
    /// The byte range is out of the file or not on character boundaries.
    #[error("site {start}..{end} is not a text range of the file")]
    NotTextRange {
        /// The site's first byte.
        start: usize,
        /// The byte just after the site.
        end: usize,
    },
    /// Every context within [`MAX_CONTEXT_LINES`] lines occurs elsewhere too.
    #[error("no text around the site is unique within {} lines", MAX_CONTEXT_LINES)]
    NotUnique,
}

/// Occurrences of `needle`, overlapping ones included: an anchor must not
/// occur anywhere else, or the leftmost match could be another site.
fn occurrences(haystack: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    let mut n = 0;
    let mut from = 0;
    while let Some(p) = haystack[from..].find(needle) {
        n += 1;
        from += p + needle.chars().next().map_or(1, char::len_utf8);
    }
    n
}

/// Anchor `source[start..end]` → `replacement`. Errors when no unique
/// context exists within [`MAX_CONTEXT_LINES`] lines (e.g. a file made of
/// repeated blocks), or when the range is not on character boundaries.
pub fn anchor(
    source: &str,
    start: usize,
    end: usize,
    replacement: &str,
) -> Result<Anchored, AnchorError> {
    if start > end
        || end > source.len()
        || !source.is_char_boundary(start)
        || !source.is_char_boundary(end)
    {
        return Err(AnchorError::NotTextRange { start, end });
    }
    let site = &source[start..end];
    if occurrences(source, site) == 1 && !site.trim().is_empty() {
        return Ok(Anchored {
            find: site.to_string(),
            replace: replacement.to_string(),
        });
    }
    // Whole lines around the site, then more lines above, then below.
    let line_start = |i: usize| source[..i].rfind('\n').map_or(0, |p| p + 1);
    let line_end = |i: usize| source[i..].find('\n').map_or(source.len(), |p| i + p);
    let mut a = line_start(start);
    let mut b = line_end(end);
    for step in 0..=(2 * MAX_CONTEXT_LINES) {
        let find = &source[a..b];
        if occurrences(source, find) == 1 {
            return Ok(Anchored {
                find: find.to_string(),
                replace: format!("{}{}{}", &source[a..start], replacement, &source[end..b]),
            });
        }
        if step < MAX_CONTEXT_LINES && a > 0 {
            a = line_start(a - 1);
        } else if b < source.len() {
            b = line_end(b + 1);
        } else if a > 0 {
            a = line_start(a - 1);
        } else {
            break;
        }
    }
    Err(AnchorError::NotUnique)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(source: &str, a: &Anchored) -> String {
        assert_eq!(source.matches(&a.find).count(), 1, "{a:?}");
        source.replacen(&a.find, &a.replace, 1)
    }

    #[test]
    fn a_unique_site_is_its_own_anchor() {
        let src = "app = build(transport_security=policy)\n";
        let start = src.find("transport_security=policy").unwrap();
        let a = anchor(src, start, start + 25, "").unwrap();
        assert_eq!(a.find, "transport_security=policy");
        assert_eq!(apply(src, &a), "app = build()\n");
    }

    #[test]
    fn repeated_sites_grow_to_a_unique_context() {
        let src = "\
def streamable():
    return build(
        transport_security=policy,
    )

def sse():
    return build(
        transport_security=policy,
    )
";
        let second = src.rfind("transport_security=policy,").unwrap();
        let a = anchor(src, second, second + 26, "").unwrap();
        let out = apply(src, &a);
        // Only the second call lost its argument.
        assert_eq!(out.matches("transport_security=policy,").count(), 1);
        assert!(out.find("transport_security").unwrap() < out.find("def sse").unwrap());
        assert!(a.find.contains("def sse"), "{a:?}");
        let first = src.find("transport_security=policy,").unwrap();
        let a = anchor(src, first, first + 26, "").unwrap();
        let out = apply(src, &a);
        assert!(out.find("transport_security").unwrap() > out.find("def sse").unwrap());
    }

    #[test]
    fn identical_lines_anchor_by_context_within_the_limit() {
        // The middle of three identical lines: only the whole file is unique.
        let src = "x = 1\nx = 1\nx = 1\n";
        let a = anchor(src, 6, 11, "x = 2").unwrap();
        assert_eq!(apply(src, &a), "x = 1\nx = 2\nx = 1\n");
        // The middle of 61 identical lines: no window of 12 lines each side is unique.
        let src = "x = 1\n".repeat(61);
        assert_eq!(
            anchor(&src, 30 * 6, 30 * 6 + 5, "x = 2"),
            Err(AnchorError::NotUnique)
        );
        assert!(anchor(&src, 3, 1, "").is_err());
        let e = anchor("é", 1, 2, "").unwrap_err();
        assert_eq!(e.to_string(), "site 1..2 is not a text range of the file");
        assert_eq!(
            AnchorError::NotUnique.to_string(),
            "no text around the site is unique within 12 lines"
        );
    }
}
