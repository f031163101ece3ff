//! Which files and controls `unguard audit` and `unguard init` scan.
//!
//! A repository holds far more than its server: tests, fixtures, docs,
//! examples, helper scripts, benchmarks, vendored code. The catalog's
//! operators describe server code, so by default those places are not
//! scanned (a `host=` in a test helper is not a control of the server). The
//! user narrows or widens the scan with `--file GLOB`, `--skip-file GLOB`,
//! `--control ID` and `--no-default-excludes`.
//!
//! Operators of the test-harness group read the test suite itself (a suite
//! timeout, an autouse fixture): the default excludes never apply to them.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use crate::catalog::{self, Group, Operator};
use crate::error::{FlagError, Result};
use crate::globs::Globs;

/// Directory names whose contents are not server code, at any depth.
pub const EXCLUDED_DIRS: &[&str] = &[
    "test",
    "tests",
    "__tests__",
    "testdata",
    "test-data",
    "e2e",
    "fixtures",
    "__fixtures__",
    "__mocks__",
    "mocks",
    "scripts",
    "script",
    "hack",
    "docs",
    "doc",
    "examples",
    "example",
    "samples",
    "benchmarks",
    "benchmark",
    "bench",
    "vendor",
    "node_modules",
    "dist",
    "evals",
];

/// Excluded directory names that are also ordinary module names: below a
/// source root they hold server code.
const SOFT_DIRS: &[&str] = &["docs", "doc", "examples", "example", "samples"];

/// Directories that hold a package's source code.
pub const SOURCE_ROOTS: &[&str] = &["src", "lib", "pkg", "internal"];

/// File-name patterns of tests and type declarations, in any directory.
pub const EXCLUDED_NAMES: &[&str] = &[
    "test_*.py",
    "*_test.py",
    "*_tests.py",
    "conftest.py",
    "*.test.*",
    "*.spec.*",
    "*_test.go",
    "*.d.ts",
];

/// The scan's scope: explicit globs, skips, controls and the default excludes.
#[derive(Debug, Clone)]
pub struct ScanScope {
    files: Globs,
    skip: Globs,
    controls: Vec<String>,
    default_excludes: bool,
    /// Files the default excludes would skip that start the server
    /// ([`crate::audit::server_entry`]): scanned like files named by `--file`.
    entries: Vec<String>,
    /// Find controls by shape too (the default; off with `--no-shapes`;
    /// `catalog::shape`).
    shapes: bool,
    /// List refusal guards whose control the vocabulary does not name, as
    /// generic `guard` sites (`--guards`).
    guards: bool,
    /// Find controls by shape alone, without the catalog's matchers
    /// (`--shapes-only`).
    shapes_only: bool,
    /// Documentation and example code found by its content and place
    /// ([`crate::audit::doc_trees`]): skipped like the default excludes.
    set_aside: BTreeSet<String>,
    /// The words shape sites are named with: the built-in table and the
    /// user's `--vocabulary` files.
    vocabulary: crate::catalog::shape::Vocabulary,
}

impl Default for ScanScope {
    fn default() -> Self {
        ScanScope {
            files: Globs::default(),
            skip: Globs::default(),
            controls: Vec::new(),
            default_excludes: true,
            entries: Vec::new(),
            shapes: false,
            guards: false,
            shapes_only: false,
            set_aside: BTreeSet::new(),
            vocabulary: crate::catalog::shape::Vocabulary::builtin(),
        }
    }
}

/// Compile the user's globs (see [`crate::globs`]); `src/` or
/// `src` also means everything under it, like `src/**`.
fn compile(flag: &'static str, globs: &[String]) -> Result<Globs> {
    let mut out = Vec::new();
    for g in globs {
        let g = g.trim_start_matches("./");
        out.push(g.to_string());
        if !g.contains(['*', '?', '[']) {
            out.push(format!("{}/**", g.trim_end_matches('/')));
        }
    }
    // (A glob comes before the `/**` made from it: the first bad one is the user's.)
    Globs::new(&out).map_err(|(i, why)| {
        FlagError::NotAGlob {
            flag,
            glob: out[i].clone(),
            why,
        }
        .into()
    })
}

/// A directory of tests by its name: `integtests`, `e2e-tests`, `eval-tests`,
/// `integration_tests`, `tests_unit`, `test-utils` (not `latest` or `contest`).
fn test_dir(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    EXCLUDED_DIRS.contains(&n.as_str())
        || n.ends_with("tests")
            && (n.len() == 5
                || n[..n.len() - 5].ends_with(['_', '-'])
                || n.starts_with("integ")
                || n.starts_with("e2e")
                || n.starts_with("eval")
                || n.starts_with("unit")
                || n.starts_with("func")
                || n.starts_with("smoke")
                || n.starts_with("system")
                || n.starts_with("accept"))
        || [
            "test_",
            "test-",
            "tests_",
            "tests-",
            "testhelper",
            "testutil",
            "mock",
        ]
        .iter()
        .any(|p| n.starts_with(p))
        || n.ends_with("mock")
        || n.ends_with("mocks")
}

/// Is `path` (repo-relative, `/`-separated) in a place that is not server code?
pub fn default_excluded(path: &str) -> bool {
    let mut parts = path.split('/').collect::<Vec<_>>();
    let name = parts.pop().unwrap_or("");
    let excluded_dir = |(i, d): (usize, &&str)| {
        // Below a source root, `docs/` or `examples/` is a module of the
        // server (`src/tools/docs/fetch_docs.ts`), not its documentation.
        let module_name = SOFT_DIRS.contains(&d.to_ascii_lowercase().as_str())
            && parts[..i].iter().any(|a| SOURCE_ROOTS.contains(a));
        test_dir(d) && !module_name
    };
    // A hidden directory at the top (`.github/scripts/`, `.claude-plugin/`,
    // `.devcontainer/`) holds the repository's tooling; one deeper is a
    // place the server serves (`app/.well-known/…/route.ts`).
    if parts
        .first()
        .is_some_and(|d| d.starts_with('.') && !matches!(*d, "." | ".."))
    {
        return true;
    }
    if parts.iter().enumerate().any(excluded_dir) {
        return true;
    }
    static NAMES: OnceLock<Globs> = OnceLock::new();
    NAMES
        .get_or_init(|| Globs::new(EXCLUDED_NAMES).unwrap_or_default())
        .is_match(name)
}

impl ScanScope {
    /// Build a scope from the command-line flags; an unknown control id or a
    /// bad glob is a usage error that names the flag and the fix.
    pub fn new(
        files: &[String],
        skip: &[String],
        controls: &[String],
        default_excludes: bool,
    ) -> Result<ScanScope> {
        let known: Vec<&str> = catalog::catalog().iter().map(|o| o.id.as_str()).collect();
        for c in controls {
            if !known.contains(&c.as_str()) {
                let near: Vec<String> = known
                    .iter()
                    .filter(|k| {
                        k.split('-')
                            .any(|w| w.len() > 3 && c.split('-').any(|v| v == w))
                    })
                    .take(5)
                    .map(|k| k.to_string())
                    .collect();
                return Err(FlagError::NoSuchControl {
                    control: c.clone(),
                    near,
                }
                .into());
            }
        }
        Ok(ScanScope {
            files: compile("--file", files)?,
            skip: compile("--skip-file", skip)?,
            controls: controls.to_vec(),
            default_excludes,
            entries: Vec::new(),
            shapes: false,
            guards: false,
            shapes_only: false,
            set_aside: BTreeSet::new(),
            vocabulary: crate::catalog::shape::Vocabulary::builtin(),
        })
    }

    /// Does the scan want the documentation and example code set aside
    /// ([`crate::audit::doc_trees`])? Only with the default excludes, and
    /// not under `--file` (every file it scans is the user's choice).
    pub fn sets_aside_docs(&self) -> bool {
        self.default_excludes && self.files.is_empty()
    }

    /// This scope, with `files` (documentation and example code,
    /// [`crate::audit::doc_trees`]) skipped like the default excludes skip.
    pub fn with_set_aside(mut self, files: BTreeSet<String>) -> ScanScope {
        self.set_aside = files;
        self
    }

    /// Is `file` set aside as documentation or examples, and kept out of
    /// the scan (not named by `--file`, not already skipped by `--skip-file`)?
    pub fn sets_aside(&self, file: &str) -> bool {
        self.default_excludes
            && self.set_aside.contains(file)
            && !self.files.is_match(file)
            && !self.skip.is_match(file)
            && !self.entries.iter().any(|e| e == file)
    }

    /// This scope, with `entries` (the server's start scripts and what they
    /// import, [`crate::audit::server_entry::entry_files_in`]) scanned even where
    /// the default excludes skip.
    pub fn with_entries(mut self, entries: Vec<String>) -> ScanScope {
        self.entries = entries;
        self
    }

    /// This scope, finding controls by shape too (or not), and with them
    /// the generic `guard` sites (or not; only with shapes), or by shape
    /// alone (`only`: the catalog's matchers are not used; implies shapes).
    pub fn with_shapes(mut self, shapes: bool, guards: bool, only: bool) -> ScanScope {
        self.shapes = shapes || only;
        self.guards = self.shapes && guards;
        self.shapes_only = only;
        self
    }

    /// This scope, naming shape sites with `vocabulary`.
    pub fn with_vocabulary(mut self, vocabulary: crate::catalog::shape::Vocabulary) -> ScanScope {
        self.vocabulary = vocabulary;
        self
    }

    /// The words shape sites are named with.
    pub fn vocabulary(&self) -> &crate::catalog::shape::Vocabulary {
        &self.vocabulary
    }

    /// Are controls found by shape alone (no catalog matcher)?
    pub fn shapes_only(&self) -> bool {
        self.shapes_only
    }

    /// Are controls found by shape too?
    pub fn shapes(&self) -> bool {
        self.shapes
    }

    /// Are generic `guard` sites listed?
    pub fn generic_guards(&self) -> bool {
        self.guards
    }

    /// Does `op` scan `file`? (The operator's own `files`/`exclude` globs
    /// are checked by the catalog.)
    pub fn admits(&self, op: &Operator, file: &str) -> bool {
        self.keeps_control(op) && self.reads(op.group, file)
    }

    /// Does the scope read `file` for an operator of `group` (the file
    /// globs and default excludes; `--control` aside)?
    fn reads(&self, group: Group, file: &str) -> bool {
        if self.skip.is_match(file) {
            return false;
        }
        let chosen = self.files.is_match(file);
        if !self.files.is_empty() && !chosen {
            return false;
        }
        let chosen = chosen || self.entries.iter().any(|e| e == file);
        // A file named by --file is scanned even where the defaults skip.
        if self.default_excludes
            && !chosen
            && group != Group::TestHarness
            && (default_excluded(file) || self.set_aside.contains(file))
        {
            return false;
        }
        true
    }

    /// Does the scope read `file` for source controls, whichever control is
    /// asked (the `--control` filter is applied per site)?
    pub fn admits_file(&self, file: &str) -> bool {
        self.reads(crate::catalog::shape::guard_operator().group, file)
    }

    /// Does the scope keep `op` at all?
    pub fn keeps_control(&self, op: &Operator) -> bool {
        self.controls.is_empty() || self.controls.contains(&op.id)
    }

    /// Files the default excludes kept out of every source operator
    /// (for the one-line summary).
    pub fn defaults_skipped<'a>(&self, files: &'a [String]) -> Vec<&'a str> {
        if !self.default_excludes {
            return Vec::new();
        }
        files
            .iter()
            .map(String::as_str)
            .filter(|f| {
                default_excluded(f)
                    && !self.files.is_match(f)
                    && !self.skip.is_match(f)
                    && !self.entries.iter().any(|e| e == f)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn op(id: &str) -> &'static Operator {
        catalog::catalog().iter().find(|o| o.id == id).unwrap()
    }

    #[test]
    fn tests_scripts_docs_and_fixtures_are_not_server_code() {
        for p in [
            "tests/test_app.py",
            "src/pkg/tests/helpers.py",
            "test/fixtures/config.json",
            "packages/a/__tests__/x.ts",
            "scripts/release.py",
            "docs/conf.py",
            "packages/cli/docs/build.ts",
            "examples/client.ts",
            "benchmarks/run.py",
            "src/app.test.ts",
            "src/app.spec.tsx",
            "pkg/server_test.go",
            "src/test_utils.py",
            "conftest.py",
            "vendor/x/y.go",
            "types/index.d.ts",
            "integtests/project_lock.py",
            "packages/eval-tests/src/lib/seeding.ts",
            "integration_tests/conftest.py",
            "test-utils/server.ts",
            ".github/scripts/release.js",
            ".claude-plugin/install-binary.mjs",
        ] {
            assert!(default_excluded(p), "{p} should be excluded");
        }
        for p in [
            "src/server.py",
            "src/pkg/testing_mode.py",
            "src/contest.py",
            "src/latest/app.ts",
            "src/scriptsrunner.ts",
            "pkg/http/middleware.go",
            "src/latest/x.py",
            "src/contests/x.py",
            "src/requests/x.py",
            "src/tools/docs/fetch_docs.ts",
            "pkg/toolsets/examples/list.go",
            "app/.well-known/oauth-authorization-server/route.ts",
            "./src/server.py",
        ] {
            assert!(!default_excluded(p), "{p} is server code");
        }
    }

    #[test]
    fn an_explicit_file_glob_overrides_the_defaults_and_skip_wins() {
        let host = op("host-origin-compared");
        let s = ScanScope::new(&["examples/**".into()], &[], &[], true).unwrap();
        assert!(s.admits(host, "examples/server.py"));
        assert!(!s.admits(host, "src/server.py"), "--file narrows the scan");
        let s = ScanScope::new(&["src".into()], &["src/gen/**".into()], &[], true).unwrap();
        assert!(
            s.admits(host, "src/app.py"),
            "a directory means everything under it"
        );
        assert!(!s.admits(host, "src/gen/models.py"));
        let s = ScanScope::new(&[], &[], &[], false).unwrap();
        assert!(s.admits(host, "tests/test_app.py"));
    }

    /// `*` stays inside one directory, `**` crosses them (the semantics
    /// docs/audit.md and docs/selection.md give `--file`), for the user's
    /// globs and the operators' own alike.
    #[test]
    fn a_star_stays_in_one_directory_and_a_double_star_crosses() {
        let host = op("host-origin-compared");
        let s = ScanScope::new(&["src/*.py".into()], &[], &[], true).unwrap();
        assert!(s.admits(host, "src/server.py"));
        assert!(!s.admits(host, "src/pkg/server.py"), "`*` crossed a `/`");
        let s = ScanScope::new(&["src/**/*.py".into()], &["*.py".into()], &[], true).unwrap();
        assert!(s.admits(host, "src/pkg/sub/server.py"), "`**` crosses");
        assert!(
            s.admits(host, "src/server.py"),
            "`**` also matches no directory"
        );
        let s = ScanScope::new(&[], &["src/*.py".into()], &[], true).unwrap();
        assert!(!s.admits(host, "src/server.py"));
        assert!(
            s.admits(host, "src/pkg/server.py"),
            "a skip's `*` crossed a `/`"
        );
        // The operator's `files: ['**/*.py']` reaches any depth, the top too.
        assert!(host.applies_to("server.py") && host.applies_to("a/b/c/server.py"));
    }

    /// Documentation and example code (`doc_trees`) is skipped like the
    /// default excludes: `--file` and `--no-default-excludes` scan it,
    /// `--skip-file` still wins, the test-harness operators read it.
    #[test]
    fn set_aside_docs_are_skipped_unless_the_user_names_them() {
        let host = op("host-origin-compared");
        let docs: BTreeSet<String> = ["docs_src/app.py".to_string()].into();
        let s = ScanScope::default().with_set_aside(docs.clone());
        assert!(s.sets_aside_docs());
        assert!(!s.admits(host, "docs_src/app.py"));
        assert!(s.sets_aside("docs_src/app.py"));
        assert!(s.admits(host, "src/app.py") && !s.sets_aside("src/app.py"));
        assert!(s.admits(op("autouse-sleep-yields"), "docs_src/app.py"));
        let s = ScanScope::new(&["docs_src".into()], &[], &[], true).unwrap();
        assert!(!s.sets_aside_docs(), "--file: the user chose every file");
        let s = s.with_set_aside(docs.clone());
        assert!(s.admits(host, "docs_src/app.py") && !s.sets_aside("docs_src/app.py"));
        let s = ScanScope::new(&[], &[], &[], false).unwrap();
        assert!(!s.sets_aside_docs());
        let s = s.with_set_aside(docs.clone());
        assert!(s.admits(host, "docs_src/app.py") && !s.sets_aside("docs_src/app.py"));
        let s = ScanScope::new(&[], &["docs_src/**".into()], &[], true).unwrap();
        let s = s.with_set_aside(docs);
        assert!(!s.admits(host, "docs_src/app.py"));
        assert!(
            !s.sets_aside("docs_src/app.py"),
            "skipped by --skip-file, not set aside"
        );
    }

    #[test]
    fn test_harness_operators_still_read_the_suite() {
        let s = ScanScope::default();
        assert!(s.admits(op("autouse-sleep-yields"), "tests/conftest.py"));
        assert!(!s.admits(op("host-origin-compared"), "tests/conftest.py"));
    }

    #[test]
    fn controls_narrow_and_unknown_ids_are_refused() {
        let s = ScanScope::new(&[], &[], &["bearer-token-compared".into()], true).unwrap();
        assert!(s.admits(op("bearer-token-compared"), "src/auth.py"));
        assert!(!s.admits(op("host-origin-compared"), "src/auth.py"));
        let e = ScanScope::new(&[], &[], &["bearer-token".into()], true).unwrap_err();
        let msg = e.to_string();
        let Error::Flag(FlagError::NoSuchControl { control, near }) = e else {
            panic!("not an unknown control: {msg}");
        };
        assert_eq!(control, "bearer-token");
        assert!(
            near.iter().any(|n| n == "bearer-token-compared"),
            "{near:?}"
        );
        assert!(msg.contains("--control \"bearer-token\""), "{msg}");
        assert!(msg.contains("bearer-token-compared"), "{msg}");
        let e = ScanScope::new(&["src/[".into()], &[], &[], true).unwrap_err();
        assert!(e.to_string().contains("--file \"src/[\""), "{e}");
        assert!(
            matches!(&e, Error::Flag(FlagError::NotAGlob { flag: "--file", glob, .. }) if glob == "src/["),
            "{e:?}"
        );
        let e = ScanScope::new(&[], &["ok/**".into(), "b[".into()], &[], true).unwrap_err();
        assert!(
            matches!(&e, Error::Flag(FlagError::NotAGlob { flag: "--skip-file", glob, .. }) if glob == "b["),
            "{e:?}"
        );
    }
}
