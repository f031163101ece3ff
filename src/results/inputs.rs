//! The inputs of a verdict, for incremental runs (`--incremental`): what a
//! reused verdict depends on, named and hashed. A verdict is reused only
//! when its mutant's fingerprint ([`of_mutant`]) and the hash of every one
//! of its inputs are what the earlier run recorded.
//!
//! An input is a file of the copy (its bytes), or one of:
//! - `skeleton:FILE`: a Python file without its function bodies, the code
//!   its import runs (for files whose import-time code any test may read);
//! - [`CONFIG`]: every test configuration and lock file of the tree, with
//!   their bytes (a new `conftest.py` changes it too);
//! - [`TESTS`]: the list of test files (a new test may kill a survivor);
//! - [`TREE`]: every file of the copy, with its bytes (when no coverage
//!   map tells which files a verdict depends on).
//!
//! Which inputs a verdict has ([`of_verdict`]): only `survived` and
//! `no-coverage` are reusable (a kill is proven again by a run, never
//! reused). Their inputs: the mutated file and [`CONFIG`]; the files any
//! test executed and [`TESTS`] (a change anywhere a test runs may lead a
//! test to the mutated lines); every file of the copy the coverage run did
//! not measure as code, by its bytes (test data read at run time, a
//! `require()`d JSON, a file only a child process ran: nothing proves them
//! irrelevant); and the import-time code of every file the run measured
//! and of every `__init__.py`. Without a coverage map, or with one that was
//! blind somewhere (a process it did not see, a test red under a canary it
//! did not credit): [`TREE`]. A symlink is hashed by its target's path and
//! its bytes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::coverage::CoverageMap;
use crate::results::fingerprint::{mutation_fields, Fingerprint};
use crate::results::{MutantResult, Outcome};
use crate::spec::MutationSpec;

/// Every test configuration and lock file of the tree.
pub const CONFIG: &str = "config:*";
/// The list of test files of the tree.
pub const TESTS: &str = "tests:*";
/// Every file of the copy.
pub const TREE: &str = "tree:*";
/// The prefix of a Python file's import-time code.
pub const SKELETON: &str = "skeleton:";

/// File names (anywhere in the tree) whose bytes decide how any test runs:
/// the test runner's and the package manager's configuration and locks.
const CONFIG_NAMES: &[&str] = &[
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "tox.ini",
    "pytest.ini",
    "conftest.py",
    "noxfile.py",
    ".coveragerc",
    "uv.lock",
    "poetry.lock",
    "Pipfile",
    "Pipfile.lock",
    "pdm.lock",
    ".python-version",
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    "yarn.lock",
    "bun.lockb",
    "bun.lock",
    ".npmrc",
    ".nvmrc",
    "babel.config.js",
    ".babelrc",
    "go.mod",
    "go.sum",
    "go.work",
    "go.work.sum",
    "Cargo.toml",
    "Cargo.lock",
    "Makefile",
    "justfile",
];

/// Whether `path` (relative, `/`-separated) is a test configuration or
/// lock file: [`CONFIG_NAMES`], `requirements*.txt`, `constraints*.txt`,
/// `tsconfig*.json` and the jest, vitest and vite configs.
pub fn is_config(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    CONFIG_NAMES.contains(&name)
        || ((name.starts_with("requirements") || name.starts_with("constraints"))
            && name.ends_with(".txt"))
        || (name.starts_with("tsconfig") && name.ends_with(".json"))
        || [
            "jest.config.",
            "vitest.config.",
            "vite.config.",
            "vitest.workspace.",
        ]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Whether `path` is a test file by the runners' conventions: `test_*.py`,
/// `*_test.py`, `*_test.go`, `*.test.*`/`*.spec.*` scripts, or any file
/// under a `tests`, `test` or `__tests__` directory.
pub fn is_test_file(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    let name = parts.pop().unwrap_or(path);
    if parts
        .iter()
        .any(|d| matches!(*d, "tests" | "test" | "__tests__"))
    {
        return true;
    }
    let stem_ext = name.rsplit_once('.');
    match stem_ext {
        Some((stem, "py")) => stem.starts_with("test_") || stem.ends_with("_test"),
        Some((stem, "go")) => stem.ends_with("_test"),
        Some((stem, "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts")) => {
            stem.ends_with(".test") || stem.ends_with(".spec")
        }
        _ => false,
    }
}

/// A Python source as its import runs it: its statements (one per line,
/// comments and blank lines left out) without their function bodies, and
/// without its plain module-level functions altogether (a new or renamed
/// function of the module matters only to code that calls it, which a
/// test then executes). `None` when it does not parse.
pub fn skeleton(source: &[u8]) -> Option<Vec<u8>> {
    let shape = crate::catalog::python_shape(source)?;
    let mut out = Vec::with_capacity(source.len());
    for st in shape
        .statements
        .iter()
        .filter(|st| !shape.plain.contains(st))
    {
        let mut at = st.start;
        for b in shape
            .bodies
            .iter()
            .filter(|b| st.start <= b.start && b.end <= st.end)
        {
            out.extend_from_slice(&source[at..b.start]);
            out.extend_from_slice(b"...");
            at = b.end;
        }
        out.extend_from_slice(&source[at..st.end]);
        out.push(b'\n');
    }
    Some(out)
}

/// Whether every one of `lines` (1-based, first and last) of a Python
/// source lies outside its function bodies: its import ran no function of
/// its own, so its import-time code is its [`skeleton`].
pub fn import_time_is_skeleton(source: &[u8], lines: &[(usize, usize)]) -> bool {
    let Some(shape) = crate::catalog::python_shape(source) else {
        return false;
    };
    let line_of = |offset: usize| 1 + source[..offset].iter().filter(|&&b| b == b'\n').count();
    let body_lines: Vec<(usize, usize)> = shape
        .bodies
        .iter()
        .map(|b| (line_of(b.start), line_of(b.end.max(b.start + 1) - 1)))
        .collect();
    lines
        .iter()
        .all(|&(first, last)| !body_lines.iter().any(|&(s, e)| first <= e && last >= s))
}

/// The inputs of `row`'s verdict, sorted; empty when it is not reusable.
/// `map`: the coverage map of its test command, when usable; `files`: the
/// copy's; `read`: the bytes of a file of the copy.
pub fn of_verdict(
    row: &MutantResult,
    map: Option<&CoverageMap>,
    files: &[String],
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> Vec<String> {
    let mut set: BTreeSet<String> = [row.file.clone(), CONFIG.to_string()].into();
    let executed = match (map, row.outcome) {
        (Some(map), Outcome::Survived | Outcome::NoCoverage) => {
            set.insert(TESTS.to_string());
            set.extend(files.iter().filter(|f| !map.measured(f)).cloned());
            map.files_run_by(None)
        }
        (None, Outcome::Survived | Outcome::NoCoverage) => {
            set.insert(TREE.to_string());
            return set.into_iter().collect();
        }
        _ => return Vec::new(),
    };
    set.extend(executed);
    // Import-time code: of every file the run measured, and of every
    // package's `__init__.py` (imported with any module of the package,
    // measured or not: an empty one has no statement).
    let Some(map) = map else {
        return set.into_iter().collect();
    };
    let everyone: BTreeMap<String, Vec<(usize, usize)>> =
        map.run_by_everyone().into_iter().collect();
    let inits = files
        .iter()
        .filter(|f| *f == "__init__.py" || f.ends_with("/__init__.py"));
    let imported: BTreeSet<String> = map
        .measured_files()
        .into_iter()
        .chain(inits.cloned())
        .collect();
    for file in imported {
        if set.contains(&file) {
            continue;
        }
        let lines = everyone.get(&file).map_or(&[][..], Vec::as_slice);
        let skeleton_only = file.ends_with(".py")
            && read(&file).is_some_and(|b| import_time_is_skeleton(&b, lines));
        set.insert(if skeleton_only {
            format!("{SKELETON}{file}")
        } else {
            file
        });
    }
    set.into_iter().collect()
}

/// The fingerprint of mutant `m` whose file holds `original`, in a run
/// whose verdict-deciding settings digest to `settings`.
pub fn of_mutant(settings: &str, m: &MutationSpec, original: &[u8]) -> String {
    let mut f = Fingerprint::new("mutant");
    f.field("unguard", env!("CARGO_PKG_VERSION").as_bytes())
        .field("settings", settings.as_bytes());
    mutation_fields(&mut f, m);
    f.field("original", original);
    f.finish()
}

/// The hashes of inputs in one tree (the target, or the run's pristine
/// copy of it), each computed once.
pub struct Hasher {
    root: PathBuf,
    /// The files of the copy, sorted (the manifest's entries, less the
    /// earlier `outcomes.json` when it lies in the tree).
    files: Vec<String>,
    cache: BTreeMap<String, String>,
}

impl Hasher {
    /// Hashes of files under `root`; `files`: the copy's, sorted.
    pub fn new(root: &Path, files: Vec<String>) -> Hasher {
        Hasher {
            root: root.to_path_buf(),
            files,
            cache: BTreeMap::new(),
        }
    }

    /// The bytes of file `rel`, `None` when it cannot be read.
    pub fn read(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.root.join(rel)).ok()
    }

    /// The hash of input `input` (see the module doc).
    pub fn hash(&mut self, input: &str) -> String {
        if let Some(h) = self.cache.get(input) {
            return h.clone();
        }
        let h = match input {
            CONFIG => self.digest("config", is_config, true),
            TESTS => self.digest("tests", is_test_file, false),
            TREE => self.digest("tree", |_| true, true),
            _ => match input.strip_prefix(SKELETON) {
                Some(file) => {
                    let mut f = Fingerprint::new("skeleton");
                    match self.read(file).map(|b| skeleton(&b)) {
                        Some(Some(code)) => f.field("code", &code),
                        Some(None) => f.field("unparsed", &[]),
                        None => f.field("absent", &[]),
                    };
                    f.finish()
                }
                None => self.file(input),
            },
        };
        self.cache.insert(input.to_string(), h.clone());
        h
    }

    /// The hash of one file's bytes (`absent` when it cannot be read); a
    /// symlink's also of the path it points to.
    fn file(&self, rel: &str) -> String {
        let mut f = Fingerprint::new("file");
        if let Ok(target) = std::fs::read_link(self.root.join(rel)) {
            f.field("link", target.as_os_str().as_encoded_bytes());
        }
        match self.read(rel) {
            Some(b) => f.field("bytes", &b),
            None => f.field("absent", &[]),
        };
        f.finish()
    }

    /// A digest of the files `pick` selects: their paths, and their bytes
    /// when `bytes`.
    fn digest(&mut self, kind: &str, pick: impl Fn(&str) -> bool, bytes: bool) -> String {
        let picked: Vec<String> = self.files.iter().filter(|f| pick(f)).cloned().collect();
        let mut f = Fingerprint::new(kind);
        for p in picked {
            if bytes {
                let h = self.hash(&p);
                f.field(&p, h.as_bytes());
            } else {
                f.field(&p, &[]);
            }
        }
        f.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_and_test_files_by_name() {
        for c in [
            "pyproject.toml",
            "sub/conftest.py",
            "requirements-dev.txt",
            "uv.lock",
            "web/package.json",
            "pnpm-lock.yaml",
            "tsconfig.build.json",
            "vitest.config.ts",
            "go.sum",
        ] {
            assert!(is_config(c), "{c}");
        }
        for n in ["app/guard.py", "README.md", "app/config.py"] {
            assert!(!is_config(n), "{n}");
        }
        for t in [
            "tests/helpers.py",
            "test_x.py",
            "pkg/x_test.go",
            "src/a.test.ts",
            "src/__tests__/a.js",
            "a.spec.mjs",
        ] {
            assert!(is_test_file(t), "{t}");
        }
        for n in ["app/testing.py", "app/guard.py", "contest.py"] {
            assert!(!is_test_file(n), "{n}");
        }
    }

    const SRC: &str = "import os\nLIMIT = 3\n\n\ndef f(n):\n    \"\"\"Doc.\"\"\"\n    return n > LIMIT\n\n\nclass C:\n    X = 1\n\n    def m(self):\n        return 2\n";

    #[test]
    fn a_skeleton_drops_function_bodies_only() {
        let base = skeleton(SRC.as_bytes()).unwrap();
        let body = SRC.replace("return n > LIMIT", "return n >= LIMIT + 1");
        assert_eq!(skeleton(body.as_bytes()).unwrap(), base);
        let method = SRC.replace("return 2", "x = 1\n        return x + 1");
        assert_eq!(skeleton(method.as_bytes()).unwrap(), base);
        // A plain function of the module: added, renamed, its signature.
        let added = format!("{SRC}\n\ndef g():\n    return 1\n");
        assert_eq!(skeleton(added.as_bytes()).unwrap(), base);
        assert_eq!(
            skeleton(SRC.replace("def f(n):", "def f(n, m=1):").as_bytes()).unwrap(),
            base
        );
        for changed in [
            SRC.replace("LIMIT = 3", "LIMIT = 4"),
            SRC.replace("X = 1", "X = 2"),
            SRC.replace("    def m(self):", "    def m(self, k=1):"),
            SRC.replace("def f(n):", "@register\ndef f(n):"),
        ] {
            assert_ne!(skeleton(changed.as_bytes()).unwrap(), base, "{changed}");
        }
        assert!(skeleton(b"def f(:\n").is_none());
    }

    #[test]
    fn import_time_code_inside_a_function_is_not_a_skeleton() {
        let s = SRC.as_bytes();
        assert!(import_time_is_skeleton(
            s,
            &[(1, 1), (2, 2), (5, 5), (10, 11)]
        ));
        // Line 7 is in f's body: f ran at import.
        assert!(!import_time_is_skeleton(s, &[(1, 1), (7, 7)]));
        assert!(!import_time_is_skeleton(b"def f(:\n", &[(1, 1)]));
    }

    #[test]
    fn hashes_follow_bytes_and_lists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("tests")).unwrap();
        std::fs::write(root.join("a.py"), SRC).unwrap();
        std::fs::write(root.join("pyproject.toml"), "[x]\n").unwrap();
        std::fs::write(root.join("tests/test_a.py"), "def test(): pass\n").unwrap();
        let files = |extra: &[&str]| {
            let mut v: Vec<String> = ["a.py", "pyproject.toml", "tests/test_a.py"]
                .iter()
                .chain(extra)
                .map(|s| s.to_string())
                .collect();
            v.sort();
            v
        };
        let all = |files: Vec<String>| {
            let mut h = Hasher::new(root, files);
            [CONFIG, TESTS, TREE, "a.py", "skeleton:a.py", "gone.py"].map(|i| h.hash(i))
        };
        let before = all(files(&[]));
        assert_eq!(before, all(files(&[])));
        assert_ne!(before[5], before[3]);
        std::fs::write(root.join("tests/test_b.py"), "").unwrap();
        let more = all(files(&["tests/test_b.py"]));
        assert_ne!(more[1], before[1], "a new test file changes the list");
        assert_ne!(more[2], before[2]);
        assert_eq!(more[0], before[0]);
        std::fs::write(root.join("pyproject.toml"), "[y]\n").unwrap();
        let conf = all(files(&["tests/test_b.py"]));
        assert_ne!(conf[0], more[0]);
        std::fs::write(root.join("a.py"), SRC.replace("return 2", "return 3")).unwrap();
        let body = all(files(&["tests/test_b.py"]));
        assert_ne!(body[3], conf[3]);
        assert_eq!(body[4], conf[4], "a body change keeps the skeleton");
    }

    fn map() -> CoverageMap {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("map.json");
        // t::a runs a.py and test_a.py; t::b runs b.py, helper.py and
        // test_b.py; c.py is imported by everyone, run by no test.
        std::fs::write(
            &p,
            r#"{"tests": ["t::a", "t::b"], "files": {
                "app/a.py": [[1, 1, "*"], [2, 2, [0]]],
                "app/b.py": [[1, 1, "*"], [2, 2, [1]]],
                "app/helper.py": [[1, 1, "*"], [2, 2, [1]]],
                "app/c.py": [[1, 1, "*"], [4, 4, []]],
                "tests/test_a.py": [[1, 1, "*"], [3, 3, [0]]],
                "tests/test_b.py": [[1, 1, "*"], [3, 3, [1]]]}}"#,
        )
        .unwrap();
        CoverageMap::read(&p).unwrap()
    }

    fn row(outcome: Outcome, red: &[&str]) -> MutantResult {
        let mut r = MutantResult::new("m", "c", "app/a.py", "u:1:1".into(), outcome, "d".into());
        r.red_tests = red.iter().map(|s| s.to_string()).collect();
        r
    }

    #[test]
    fn inputs_of_each_verdict() {
        let m = map();
        let files: Vec<String> = [
            "app/__init__.py",
            "app/a.py",
            "README.md",
            "tests/cases.json",
        ]
        .map(String::from)
        .to_vec();
        let read = |_: &str| Some(b"import os\n\n\ndef f():\n    return 1\n".to_vec());
        // A kill is proven again by a run: never reused, no inputs.
        assert!(of_verdict(&row(Outcome::Killed, &["t::a"]), Some(&m), &files, &read).is_empty());
        let survivor = of_verdict(&row(Outcome::Survived, &[]), Some(&m), &files, &read);
        assert_eq!(
            survivor,
            [
                "README.md",
                // Not measured (the map has no statement of it): by its bytes.
                "app/__init__.py",
                "app/a.py",
                "app/b.py",
                "app/helper.py",
                "config:*",
                "skeleton:app/c.py",
                "tests/cases.json",
                "tests/test_a.py",
                "tests/test_b.py",
                "tests:*",
            ]
        );
        let uncovered = of_verdict(&row(Outcome::NoCoverage, &[]), Some(&m), &files, &read);
        assert_eq!(uncovered, survivor);
        // Import-time code that ran a function of its own: the whole file.
        let called = |_: &str| Some(b"def f(): return 1\n".to_vec());
        let whole = of_verdict(&row(Outcome::Survived, &[]), Some(&m), &files, &called);
        assert!(whole.contains(&"app/c.py".to_string()), "{whole:?}");
        // No map (or one blind somewhere): the whole tree.
        assert_eq!(
            of_verdict(&row(Outcome::Survived, &[]), None, &files, &read),
            ["app/a.py", "config:*", "tree:*"]
        );
        for o in [
            Outcome::Timeout,
            Outcome::Flaky,
            Outcome::Unviable,
            Outcome::WrongReason,
            Outcome::Killed,
        ] {
            assert!(of_verdict(&row(o, &["t::a"]), Some(&m), &files, &read).is_empty());
        }
    }

    #[test]
    fn a_retargeted_symlink_changes_its_hash_even_with_equal_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("v1.py"), "X = 1\n").unwrap();
        std::fs::write(root.join("v2.py"), "X = 1\n").unwrap();
        std::os::unix::fs::symlink("v1.py", root.join("impl.py")).unwrap();
        let files = vec!["impl.py".to_string()];
        let before = Hasher::new(root, files.clone()).hash("impl.py");
        std::fs::remove_file(root.join("impl.py")).unwrap();
        std::os::unix::fs::symlink("v2.py", root.join("impl.py")).unwrap();
        assert_ne!(Hasher::new(root, files).hash("impl.py"), before);
    }
}
