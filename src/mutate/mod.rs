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
//!
//! `apply` matches and replaces, `diff` says what changed and proves it;
//! `pattern` is the pattern type and the capture references of a regex
//! `replace`, a leaf the spec uses too.

mod apply;
mod diff;
pub mod pattern;

pub use apply::{apply, compile, find_matches, is_binary, sites, Applied, ApplyProblem};
pub use diff::{
    change_of, first_change, first_changed_line, first_changed_line_of_edit, line_col,
    unified_diff, Change, MAX_DIFF_LINE,
};
pub use pattern::{bad_capture_refs, capture_refs, BadCaptureRef, CaptureRef, GroupRef};
