//! Globs over repo-relative, `/`-separated paths (`src/**/*.py`), compiled
//! once into one set: `*`, `?` and `[…]` stay inside one directory, `**`
//! crosses directories (`**/x` also matches `x` at the top, `x/**`
//! everything under `x`). Matching is case-sensitive, and a leading `.` is
//! matched by `*` like any other character.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// A compiled set of globs; a path matches when one of them matches it.
#[derive(Debug, Clone, Default)]
pub struct Globs {
    set: GlobSet,
}

/// Why a glob does not compile (globset's wording, without the glob).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadGlob(pub String);

impl std::fmt::Display for BadGlob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One glob with the semantics above.
fn glob(pattern: &str) -> Result<Glob, BadGlob> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| BadGlob(e.kind().to_string()))
}

impl Globs {
    /// Compile `patterns`; the first one that is not a glob is the error,
    /// with its index (0 when the set as a whole is too large).
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<Globs, (usize, BadGlob)> {
        let mut set = GlobSetBuilder::new();
        for (i, p) in patterns.iter().enumerate() {
            set.add(glob(p.as_ref()).map_err(|e| (i, e))?);
        }
        let set = set
            .build()
            .map_err(|e| (0, BadGlob(e.kind().to_string())))?;
        Ok(Globs { set })
    }

    /// Whether `pattern` is a glob (the error otherwise).
    pub fn check(pattern: &str) -> Result<(), BadGlob> {
        glob(pattern).map(|_| ())
    }

    /// Whether one of the globs matches `path`.
    pub fn is_match(&self, path: &str) -> bool {
        self.set.is_match(path)
    }

    /// Whether there are no globs (then nothing matches).
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, path: &str) -> bool {
        Globs::new(&[pattern]).unwrap().is_match(path)
    }

    /// The documented semantics (docs/selection.md, docs/audit.md): `*`
    /// stays inside one directory, `**` crosses them.
    #[test]
    fn star_stays_in_one_directory_and_double_star_crosses() {
        assert!(m("src/*.py", "src/app.py"));
        assert!(!m("src/*.py", "src/pkg/app.py"));
        assert!(!m("*.py", "src/app.py"));
        assert!(!m("src/?/x.py", "src/a/b/x.py"));
        assert!(m("src/**/*.py", "src/pkg/sub/app.py"));
        assert!(m("src/**/*.py", "src/app.py"));
        assert!(m("**/*.py", "app.py"));
        assert!(m("**/*.py", "a/b/app.py"));
        assert!(m("**/tests/**", "tests/x.py"));
        assert!(m("src/**", "src/a/b.py"));
        assert!(!m("src/**", "srcs/a.py"));
        // A leading dot is an ordinary character; case counts.
        assert!(m("*.py", ".hidden.py"));
        assert!(!m("*.py", "APP.PY"));
        assert!(m("test_*.py", "test_app.py"));
        assert!(m("[!a]*.py", "b.py") && !m("[!a]*.py", "a.py"));
    }

    #[test]
    fn a_set_matches_when_one_glob_does_and_an_empty_set_never() {
        let g = Globs::new(&["*.ts", "lib/**"]).unwrap();
        assert!(g.is_match("a.ts") && g.is_match("lib/x/y.py"));
        assert!(!g.is_match("src/a.ts"));
        let none = Globs::new::<&str>(&[]).unwrap();
        assert!(none.is_empty() && !none.is_match("a.ts"));
    }

    #[test]
    fn a_bad_glob_is_named_by_its_index() {
        let (i, e) = Globs::new(&["*.py", "src/[a"]).unwrap_err();
        assert_eq!(i, 1);
        assert!(e.0.contains("unclosed character class"), "{e}");
        assert!(Globs::check("src/[a").is_err());
        assert!(Globs::check("src/**/*.py").is_ok());
    }
}
