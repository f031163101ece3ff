//! Where a symlink of the tree points in a copy of it.

use std::path::{Path, PathBuf};

/// Where the symlink `rel` of the tree `from` (the checkout, or the
/// pristine copy) points in its copy `to`, given its `target`:
/// - absolute and into `from` (as written or once resolved): the same path
///   under `to`, so that nothing written through it reaches `from`;
/// - relative and staying inside `from` (lexically): the same relative
///   target, which resolves inside the copy too;
/// - leaving `from` (relative) : the absolute original target, resolved
///   where it can be, so that the copy never resolves it next to itself, in
///   the shared temp dir, where anyone can plant a file;
/// - absolute and outside: the same target.
pub(crate) fn copied_link_target(from: &Path, to: &Path, rel: &Path, target: &Path) -> PathBuf {
    use std::path::Component;
    let under = |inside: &Path| -> PathBuf {
        if inside.as_os_str().is_empty() {
            to.to_path_buf()
        } else {
            to.join(inside)
        }
    };
    if target.is_absolute() {
        let plain = !target.components().any(|c| c == Component::ParentDir);
        if let Some(inside) = target.strip_prefix(from).ok().filter(|_| plain) {
            return under(inside);
        }
        if let Some(inside) = target
            .canonicalize()
            .ok()
            .and_then(|c| c.strip_prefix(from).ok().map(Path::to_path_buf))
        {
            return under(&inside);
        }
        return target.to_path_buf();
    }
    let dir = rel.parent().unwrap_or(Path::new(""));
    if stays_inside(dir, target) {
        return target.to_path_buf();
    }
    let original = from.join(dir).join(target);
    original.canonicalize().unwrap_or(original)
}

/// Whether the relative `target` of a symlink in the directory `dir` (both
/// relative to the root) stays inside the root, by its components.
fn stays_inside(dir: &Path, target: &Path) -> bool {
    use std::path::Component;
    let mut depth = dir.components().count();
    for c in target.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir if depth > 0 => depth -= 1,
            _ => return false,
        }
    }
    true
}
