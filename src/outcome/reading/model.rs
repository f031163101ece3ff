//! The report model every reader fills and every verdict rule reads: test
//! cases with their [`Status`], a run's [`Report`], why a run has none
//! ([`ReportError`]), and the `expect.killed_by` patterns matched against
//! test cases ([`TestPattern`]). A leaf: it uses none of the readers.

use std::path::{Path, PathBuf};

/// How one test case ended, as its report entry says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Ran green.
    Passed,
    /// An assertion failed (JUnit `<failure>`).
    Failed,
    /// Errored outside its assertions: setup, teardown, or a module that
    /// failed to load (JUnit `<error>`).
    Error,
    /// Skipped (JUnit `<skipped>`): neither red nor green.
    Skipped,
}

/// One entry of a test report: a test, or a module that failed to load
/// ([`TestCase::is_load_error`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCase {
    /// The JUnit `classname` (pytest: the dotted module path and class);
    /// empty when the runner gives none.
    pub classname: String,
    /// The JUnit `name`: the test itself.
    pub name: String,
    /// How it ended.
    pub status: Status,
}

impl TestCase {
    /// The canonical name unguard reports: `classname::name`.
    pub fn id(&self) -> String {
        if self.classname.is_empty() {
            self.name.clone()
        } else {
            format!("{}::{}", self.classname, self.name)
        }
    }
    /// Whether it failed or errored.
    pub fn is_red(&self) -> bool {
        matches!(self.status, Status::Failed | Status::Error)
    }

    /// Whether this entry stands for a test module that failed to load,
    /// not for a test: an error with no classname (pytest writes a
    /// collection failure as `<testcase classname="" name="tests.test_x">
    /// <error message="collection failure">`; every test of its has a
    /// classname, and [`Report::relative_to`] writes a `node --test` file
    /// that failed as a whole so), or unittest's placeholder for a module
    /// it could not import: `unittest.loader._FailedTest` as the classname
    /// (unittest-xml-reporting), or the test name `import` (the demo's
    /// runner; no Python test method can be called `import`).
    pub fn is_load_error(&self) -> bool {
        self.status == Status::Error
            && (self.classname.is_empty()
                || self.classname.starts_with("unittest.loader._FailedTest")
                || (self.name == "import" && !self.classname.contains("::")))
    }
}

/// jest-junit's classname for a test file that failed to run as a whole
/// (`reportTestSuiteErrors`): a file that did not load, not a test.
const JEST_SUITE_ERROR: &str = "Test suite failed to run";

/// One run's test report, whichever reader filled it (JUnit XML, `go test
/// -json`, libtest's text).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Every entry, in the report's order.
    pub cases: Vec<TestCase>,
}

impl Report {
    /// Entries in the report, skipped ones and load errors included.
    pub fn total(&self) -> usize {
        self.cases.len()
    }
    /// The entries that failed or errored.
    pub fn red(&self) -> Vec<&TestCase> {
        self.cases.iter().filter(|c| c.is_red()).collect()
    }
    /// Entries that stand for a test module that failed to load, not for a
    /// test (see [`TestCase::is_load_error`]).
    pub fn load_errors(&self) -> Vec<&TestCase> {
        self.cases.iter().filter(|c| c.is_load_error()).collect()
    }

    /// The report with every id relative to `root` (the copy the suite ran
    /// in): a runner that names a test by its file's absolute path (`node
    /// --test`'s JUnit reporter, jest-junit's `{filepath}`) would otherwise
    /// give an id that differs in every run and names a scratch dir. A red
    /// entry whose name is a file of the copy itself (`node --test`: the
    /// test file failed as a whole, e.g. it could not load) stands for no
    /// test: it becomes a load error (classname empty, status error), as
    /// pytest writes a collection failure.
    pub fn relative_to(mut self, root: &Path) -> Report {
        let mut roots = vec![root.to_path_buf()];
        if let Ok(real) = root.canonicalize() {
            if real != root {
                roots.push(real);
            }
        }
        let prefixes: Vec<String> = roots
            .iter()
            .map(|r| format!("{}/", r.display().to_string().trim_end_matches('/')))
            .collect();
        let strip = |s: &mut String| -> bool {
            for p in &prefixes {
                if let Some(rest) = s.strip_prefix(p.as_str()) {
                    *s = rest.to_string();
                    return true;
                }
            }
            // Inside a longer id (`/abs/test/a.test.js > suite`).
            let mut changed = false;
            for p in &prefixes {
                if s.contains(p.as_str()) {
                    *s = s.replace(p.as_str(), "");
                    changed = true;
                }
            }
            changed
        };
        for c in &mut self.cases {
            strip(&mut c.classname);
            let absolute_file = c.name.starts_with('/') && Path::new(&c.name).is_file();
            let stripped = strip(&mut c.name);
            // The entry names a test file, not a test: `node --test` (its
            // absolute path as the name), vitest's JUnit reporter (the
            // relative path as classname and name), jest-junit's
            // `reportTestSuiteErrors` (a fixed classname).
            let whole_file = (stripped && absolute_file)
                || (!c.name.is_empty() && c.name == c.classname && root.join(&c.name).is_file())
                || c.classname == JEST_SUITE_ERROR;
            if whole_file && c.is_red() {
                c.classname.clear();
                c.status = Status::Error;
            }
        }
        self
    }

    /// The ids (`classname::name`) of the red tests.
    pub fn red_ids(&self) -> Vec<String> {
        self.cases
            .iter()
            .filter(|c| c.is_red())
            .map(TestCase::id)
            .collect()
    }

    /// The ids of the tests that `keep` keeps, in this report's order, once each.
    pub fn ids_where(&self, keep: impl Fn(&TestCase) -> bool) -> Vec<String> {
        let mut seen = std::collections::BTreeSet::new();
        self.cases
            .iter()
            .filter(|c| keep(c))
            .map(TestCase::id)
            .filter(|id| seen.insert(id.clone()))
            .collect()
    }

    /// This (baseline) report's tests that `canary`'s run turned red: red
    /// there themselves, or in a module or class whose import or collection
    /// broke (pytest reports `""` / `tests.test_x`, unittest `tests.test_x`
    /// / `import`).
    pub fn red_under(&self, canary: &Report) -> Vec<String> {
        let red: std::collections::HashSet<String> = canary.red_ids().into_iter().collect();
        let broken: Vec<&str> = canary
            .red()
            .into_iter()
            .filter(|c| c.status == Status::Error)
            .flat_map(|c| [c.classname.as_str(), c.name.as_str()])
            .filter(|n| !n.is_empty() && !n.contains("::"))
            .collect();
        self.ids_where(|c| {
            let id = c.id();
            if red.contains(&id) {
                return true;
            }
            let dotted = id.replace("::", ".");
            broken
                .iter()
                .any(|b| dotted == *b || dotted.starts_with(&format!("{b}.")))
        })
    }
}

/// Why a run has no usable JUnit report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    /// No file where the report should be.
    #[error("no JUnit report at {path}: {reason}")]
    Missing {
        /// Where the report should be.
        path: PathBuf,
        /// Why it could not be read (the I/O error).
        reason: String,
    },
    /// The file is there but is not a JUnit report.
    #[error("malformed JUnit XML at byte {position}: {reason}")]
    Malformed {
        /// Byte offset in the file where parsing failed.
        position: u64,
        /// The XML parser's error.
        reason: String,
    },
    /// Well-formed XML, but no `<testsuite>` or `<testsuites>` element.
    #[error("not a JUnit report: no <testsuite> or <testsuites> element")]
    NotJunit,
}

/// Normalise a `killed_by` pattern: a pytest node id
/// (`tests/test_x.py::TestC::test_y`) becomes the JUnit form
/// (`tests.test_x.TestC::test_y`). As in pytest's own JUnit writer, the
/// parameter part (from the first `[`: `test_x[::1]`) is kept whole, so a
/// `::` inside it splits nothing.
fn normalise(pattern: &str) -> String {
    let (path, params) = pattern.split_at(pattern.find('[').unwrap_or(pattern.len()));
    let parts: Vec<&str> = path.split("::").collect();
    if parts.len() >= 2 && parts[0].ends_with(".py") {
        let module = parts[0].trim_end_matches(".py").replace('/', ".");
        let mut class = vec![module];
        class.extend(parts[1..parts.len() - 1].iter().map(|s| s.to_string()));
        format!("{}::{}{params}", class.join("."), parts[parts.len() - 1])
    } else {
        pattern.to_string()
    }
}

/// A compiled `killed_by` pattern: exact `classname::name`, pytest node id,
/// or a glob where `*` matches any run of characters.
#[derive(Debug, Clone)]
pub struct TestPattern {
    raw: String,
    re: regex::Regex,
}

impl TestPattern {
    /// Compile a `killed_by` pattern as the spec writes it.
    pub fn new(pattern: &str) -> TestPattern {
        let norm = normalise(pattern);
        let re = format!(
            "^{}$",
            norm.split('*')
                .map(regex::escape)
                .collect::<Vec<_>>()
                .join(".*")
        );
        TestPattern {
            raw: pattern.to_string(),
            re: regex::Regex::new(&re).expect("escaped pattern is a valid regex"),
        }
    }
    /// The pattern as the spec wrote it.
    pub fn raw(&self) -> &str {
        &self.raw
    }
    /// Whether `case`'s id (`classname::name`) matches the pattern.
    pub fn matches(&self, case: &TestCase) -> bool {
        self.re.is_match(&case.id())
    }

    /// Whether `case` is an error of a module or class that holds this
    /// pattern's tests (an import or collection error: unittest reports
    /// `tests.test_x` / `import`, pytest `""` / `tests.test_x`): then the
    /// tests could not run because what they import broke.
    pub fn contained_in_error(&self, case: &TestCase) -> bool {
        if case.status != Status::Error {
            return false;
        }
        let dotted = normalise(&self.raw).replace("::", ".");
        [case.classname.as_str(), case.name.as_str()]
            .into_iter()
            .filter(|c| !c.is_empty() && !c.contains("::"))
            .any(|c| dotted == c || dotted.starts_with(&format!("{c}.")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parameter_ids_are_kept_whole() {
        assert_eq!(normalise("tests/t.py::test_x[::1]"), "tests.t::test_x[::1]");
        assert_eq!(
            normalise("tests/t.py::TestC::test_x[a::b-[::]]"),
            "tests.t.TestC::test_x[a::b-[::]]"
        );
        assert_eq!(normalise("tests/t.py::test_x[*]"), "tests.t::test_x[*]");
        assert_eq!(normalise("tests.t::test_x[::1]"), "tests.t::test_x[::1]");
        assert_eq!(normalise("t.py::test_x"), "t::test_x");
        let case = |classname: &str, name: &str| TestCase {
            classname: classname.into(),
            name: name.into(),
            status: Status::Failed,
        };
        let c = case("tests.t", "test_x[::1]");
        for p in [
            "tests/t.py::test_x[::1]",
            "tests.t::test_x[::1]",
            "tests/t.py::test_x[*]",
            "*[::1]",
        ] {
            assert!(TestPattern::new(p).matches(&c), "{p}");
        }
        assert!(!TestPattern::new("tests/t.py::test_x[::2]").matches(&c));
        let c = case("tests.t.TestC", "test_x[a::b]");
        assert!(TestPattern::new("tests/t.py::TestC::test_x[a::b]").matches(&c));
    }
}
