//! Paths in a spec: how one is shown to the user, and the check that a
//! relative path stays inside the target root.

use std::path::{Component, Path, PathBuf};

/// A path as the user should see it: relative to the current directory when
/// it lies below it, without `./` noise.
pub fn display_path(p: &Path) -> String {
    let p = match std::env::current_dir() {
        Ok(cwd) if p.is_absolute() => p.strip_prefix(&cwd).unwrap_or(p).to_path_buf(),
        _ => p.to_path_buf(),
    };
    let cleaned: PathBuf = p
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    if cleaned.as_os_str().is_empty() {
        ".".into()
    } else {
        cleaned.display().to_string()
    }
}

/// Why a path is not a relative path inside the target root (see [`check_rel_path`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadRelPath {
    /// Empty, or only whitespace.
    #[error("empty path")]
    Empty,
    /// A `..` anywhere in it (the path as written).
    #[error("path `{0}` leaves the target root (`..`)")]
    LeavesRoot(String),
    /// An absolute path (as written).
    #[error("path `{0}` is absolute")]
    Absolute(String),
    /// Only `.` components: the root itself (the path as written).
    #[error("path `{0}` names the root itself")]
    IsRoot(String),
}

/// A relative path that stays inside the root: no absolute paths, no `..`.
/// Returns it normalised with `/` separators.
pub fn check_rel_path(p: &str) -> Result<String, BadRelPath> {
    if p.trim().is_empty() {
        return Err(BadRelPath::Empty);
    }
    let path = Path::new(p);
    let mut parts = Vec::new();
    for comp in path.components() {
        match comp {
            Component::Normal(s) => parts.push(s.to_string_lossy().to_string()),
            Component::CurDir => {}
            Component::ParentDir => return Err(BadRelPath::LeavesRoot(p.to_string())),
            Component::RootDir | Component::Prefix(_) => {
                return Err(BadRelPath::Absolute(p.to_string()))
            }
        }
    }
    if parts.is_empty() {
        return Err(BadRelPath::IsRoot(p.to_string()));
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rel_paths_stay_inside() {
        assert_eq!(check_rel_path("./src/a.py").unwrap(), "src/a.py");
        assert!(check_rel_path("../x").is_err());
        assert!(check_rel_path("src/../../x").is_err());
        assert!(check_rel_path("/etc/passwd").is_err());
        assert!(check_rel_path("").is_err());
    }
}
