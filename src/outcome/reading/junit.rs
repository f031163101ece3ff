//! Reading JUnit XML reports (pytest, unittest runners, jest-junit, nextest …)
//! and matching `expect.killed_by` patterns against their test cases.

use std::path::{Path, PathBuf};

use quick_xml::events::Event;
use quick_xml::Reader;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Passed,
    Failed,
    Error,
    Skipped,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCase {
    pub classname: String,
    pub name: String,
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

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub cases: Vec<TestCase>,
}

impl Report {
    pub fn total(&self) -> usize {
        self.cases.len()
    }
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
}

fn attr(e: &quick_xml::events::BytesStart<'_>, key: &[u8]) -> String {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == key)
        .and_then(|a| {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .ok()
                .map(|v| v.into_owned())
        })
        .unwrap_or_default()
}

/// Why a run has no usable JUnit report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    /// No file where the report should be.
    #[error("no JUnit report at {path}: {reason}")]
    Missing { path: PathBuf, reason: String },
    /// The file is there but is not a JUnit report.
    #[error("malformed JUnit XML at byte {position}: {reason}")]
    Malformed { position: u64, reason: String },
    /// Well-formed XML, but no `<testsuite>` or `<testsuites>` element.
    #[error("not a JUnit report: no <testsuite> or <testsuites> element")]
    NotJunit,
}

/// What a run's JUnit source gave: nothing configured, a report, or the
/// reason it has none; without `test.junit`, what the run showed about
/// itself.
#[derive(Debug, Clone)]
pub enum Reading {
    /// The test config has no `test.junit`, and the log shows no runner
    /// unguard reads: tests are not counted.
    NotConfigured,
    Read(Report),
    /// Configured, but no readable report appeared.
    Unreadable(ReportError),
    /// No `test.junit`, but the log shows which runner ran (and pytest
    /// wrote the report unguard asked for): see [`crate::outcome::reading::suite_log`].
    Observed(crate::outcome::reading::suite_log::Observed),
}

impl Reading {
    /// The report, when one was read.
    pub fn report(&self) -> Option<&Report> {
        match self {
            Reading::Read(r) => Some(r),
            Reading::Observed(o) => o.report.as_ref(),
            _ => None,
        }
    }

    /// How many tests ran, when something counted them.
    pub fn tests_total(&self) -> Option<usize> {
        match self {
            Reading::Read(r) => Some(r.total()),
            Reading::Observed(o) => o.total(),
            _ => None,
        }
    }

    /// Red tests as only a summary line counted them: a run without
    /// `test.junit` whose log shows the runner's counts but no per-test
    /// report (jest, vitest, unittest).
    pub fn summary_red(&self) -> Option<usize> {
        match self {
            Reading::Observed(o) if o.report.is_none() => o.counts.map(|c| c.red()),
            _ => None,
        }
    }

    /// Every test id in the report (empty without one).
    pub fn test_ids(&self) -> Vec<String> {
        self.report()
            .map(|r| r.cases.iter().map(|c| c.id()).collect())
            .unwrap_or_default()
    }
}

/// Parse a JUnit XML document.
pub fn parse(xml: &str) -> Result<Report, ReportError> {
    let mut reader = Reader::from_str(xml);
    let mut cases = Vec::new();
    let mut current: Option<TestCase> = None;
    let mut saw_root = false;
    loop {
        match reader.read_event() {
            Err(e) => {
                return Err(ReportError::Malformed {
                    position: reader.buffer_position(),
                    reason: e.to_string(),
                })
            }
            Ok(Event::Eof) => break,
            Ok(Event::Start(e)) => match e.name().as_ref() {
                b"testsuites" | b"testsuite" => saw_root = true,
                b"testcase" => {
                    current = Some(TestCase {
                        classname: attr(&e, b"classname"),
                        name: attr(&e, b"name"),
                        status: Status::Passed,
                    })
                }
                other => mark(&mut current, other),
            },
            Ok(Event::Empty(e)) => match e.name().as_ref() {
                b"testsuites" | b"testsuite" => saw_root = true,
                b"testcase" => cases.push(TestCase {
                    classname: attr(&e, b"classname"),
                    name: attr(&e, b"name"),
                    status: Status::Passed,
                }),
                other => mark(&mut current, other),
            },
            Ok(Event::End(e)) if e.name().as_ref() == b"testcase" => {
                if let Some(c) = current.take() {
                    cases.push(c);
                }
            }
            Ok(_) => {}
        }
    }
    if !saw_root {
        return Err(ReportError::NotJunit);
    }
    Ok(Report { cases })
}

fn mark(current: &mut Option<TestCase>, element: &[u8]) {
    if let Some(c) = current {
        let new = match element {
            b"failure" => Status::Failed,
            b"error" => Status::Error,
            b"skipped" => Status::Skipped,
            _ => return,
        };
        // Failure/error outrank skipped; keep the worst.
        if !(c.is_red() && new == Status::Skipped) {
            c.status = new;
        }
    }
}

/// Read and parse the report at `path` (a suite controls it: see
/// [`read_regular_file`]).
pub fn read(path: &Path) -> Result<Report, ReportError> {
    let bytes = read_regular_file(path).map_err(|e| ReportError::Missing {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let text = String::from_utf8_lossy(&bytes);
    // `go test -json ./... > {junit}`: the file holds test2json events.
    if text.trim_start().starts_with('{') {
        if let Some(run) = crate::outcome::reading::go_test_json::parse(&text) {
            return Ok(run.report);
        }
    }
    // `cargo test 2>&1 | tee {junit}`: the file holds libtest's text.
    if !text.trim_start().starts_with('<') {
        if let Some(run) = crate::outcome::reading::libtest_text::parse(&text) {
            return Ok(run.report);
        }
    }
    parse(&text)
}

/// Read a file a suite controls, which may be anything: opened without
/// blocking (a FIFO with no writer would block `open` forever, and unguard
/// with it, deaf to Ctrl-C at `-j 1`), and read only when it is a regular
/// file (a FIFO, a device like `/dev/zero` or a directory, also behind a
/// symlink, is refused).
pub fn read_regular_file(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut f = crate::run::platform::open_nonblocking(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(format!(
            "not a regular file ({})",
            describe_type(&meta.file_type())
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    f.read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn describe_type(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
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
    pub fn raw(&self) -> &str {
        &self.raw
    }
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

    const PYTEST: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="4">
<testcase classname="tests.test_transport" name="test_right_host_wrong_port_is_rejected" time="0.01"><failure message="assert 200 == 421">x</failure></testcase>
<testcase classname="tests.test_transport.TestOrigin" name="test_ok[a|b]" time="0.01" />
<testcase classname="tests.test_transport" name="test_skip" time="0.0"><skipped message="no"/></testcase>
<testcase classname="tests.test_auth" name="test_err" time="0.0"><error message="boom"/></testcase>
</testsuite></testsuites>"#;

    #[test]
    fn parses_statuses() {
        let r = parse(PYTEST).unwrap();
        assert_eq!(r.total(), 4);
        let red = r.red_ids();
        assert_eq!(
            red,
            vec![
                "tests.test_transport::test_right_host_wrong_port_is_rejected",
                "tests.test_auth::test_err"
            ]
        );
        assert_eq!(r.cases[2].status, Status::Skipped);
    }

    #[test]
    fn a_file_of_cargo_test_output_is_read_as_its_tests() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.txt");
        std::fs::write(&p, "running 2 tests\ntest a::x ... ok\ntest a::y ... FAILED\n\nfailures:\n    a::y\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n").unwrap();
        assert_eq!(read(&p).unwrap().red_ids(), vec!["a::y"]);
        // Text that is neither XML nor a runner's output stays malformed.
        std::fs::write(&p, "hello\n").unwrap();
        assert!(read(&p).is_err());
    }

    #[test]
    fn reads_only_regular_files_and_never_blocks() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("report.xml");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let e = read(&fifo).unwrap_err();
        assert!(e.to_string().contains("not a regular file (a FIFO)"), "{e}");
        let link = d.path().join("zero.xml");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(read(&link).unwrap_err().to_string().contains("a device"));
        assert!(read(d.path()).is_err());
        std::fs::write(d.path().join("ok.xml"), PYTEST).unwrap();
        assert_eq!(read(&d.path().join("ok.xml")).unwrap().total(), 4);
    }

    #[test]
    fn rejects_non_junit() {
        assert!(parse("<html></html>").is_err());
        assert!(
            parse("<testsuite><testcase").is_err()
                || parse("<testsuite><testcase").unwrap().total() == 0
        );
    }

    #[test]
    fn patterns() {
        let r = parse(PYTEST).unwrap();
        let c0 = &r.cases[0];
        let c1 = &r.cases[1];
        assert!(
            TestPattern::new("tests.test_transport::test_right_host_wrong_port_is_rejected")
                .matches(c0)
        );
        assert!(TestPattern::new(
            "tests/test_transport.py::test_right_host_wrong_port_is_rejected"
        )
        .matches(c0));
        assert!(TestPattern::new("tests/test_transport.py::TestOrigin::test_ok[a|b]").matches(c1));
        assert!(TestPattern::new("*wrong_port*").matches(c0));
        assert!(!TestPattern::new("*wrong_port").matches(c1));
        assert!(!TestPattern::new("tests.test_transport::test_right_host").matches(c0));
    }

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

    #[test]
    fn ids_are_relative_to_the_copy_and_a_whole_file_is_a_load_error() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("test")).unwrap();
        std::fs::write(root.join("test/guard.test.js"), "").unwrap();
        let file = root.join("test/guard.test.js").display().to_string();
        let xml = format!(
            r#"<testsuites><testcase name="{file}" classname="test"><failure type="testCodeFailure" message="test failed"/></testcase><testcase name="a" classname="{file}"/></testsuites>"#
        );
        let r = parse(&xml).unwrap().relative_to(&root);
        assert_eq!(r.cases[0].id(), "test/guard.test.js");
        assert_eq!(r.cases[0].status, Status::Error);
        assert_eq!(r.load_errors().len(), 1);
        assert_eq!(r.cases[1].id(), "test/guard.test.js::a");
        // A red test whose name only mentions a path stays a red test.
        let xml = format!(
            r#"<testsuite><testcase classname="t" name="reads {file}"><failure/></testcase></testsuite>"#
        );
        let r = parse(&xml).unwrap().relative_to(&root);
        assert_eq!(r.red_ids(), vec!["t::reads test/guard.test.js"]);
        assert!(r.load_errors().is_empty());
    }

    #[test]
    fn vitest_and_jest_whole_file_failures_are_load_errors() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("vt")).unwrap();
        std::fs::write(root.join("vt/guard.test.js"), "").unwrap();
        // vitest --reporter=junit: a file that failed to load.
        let r = parse(r#"<testsuites><testsuite name="vt/guard.test.js"><testcase classname="vt/guard.test.js" name="vt/guard.test.js"><failure message="SyntaxError"/></testcase></testsuite></testsuites>"#)
            .unwrap()
            .relative_to(&root);
        assert_eq!(r.load_errors().len(), 1, "{r:?}");
        assert!(r.red_ids().iter().all(|id| !id.contains("::")), "{r:?}");
        // jest-junit with reportTestSuiteErrors.
        let r = parse(r#"<testsuites><testsuite name="guard"><testcase classname="Test suite failed to run" name="vt/guard.test.js"><error message="Cannot find module"/></testcase></testsuite></testsuites>"#)
            .unwrap()
            .relative_to(&root);
        assert_eq!(r.load_errors().len(), 1, "{r:?}");
        // A real vitest test keeps its id and stays a red test.
        let r = parse(r#"<testsuites><testcase classname="vt/guard.test.js" name="guard &gt; refuses evil"><failure/></testcase></testsuites>"#)
            .unwrap()
            .relative_to(&root);
        assert!(r.load_errors().is_empty());
        assert_eq!(r.red_ids(), vec!["vt/guard.test.js::guard > refuses evil"]);
    }

    #[test]
    fn unittest_import_placeholders_are_load_errors() {
        let r = parse(r#"<testsuite><testcase classname="unittest.loader._FailedTest" name="tests.test_x"><error/></testcase><testcase classname="tests.test_y" name="import"><error/></testcase><testcase classname="tests.test_z.T" name="test_a"><error/></testcase></testsuite>"#).unwrap();
        let ids: Vec<String> = r.load_errors().iter().map(|c| c.id()).collect();
        assert_eq!(
            ids,
            vec![
                "unittest.loader._FailedTest::tests.test_x",
                "tests.test_y::import"
            ]
        );
    }
}
