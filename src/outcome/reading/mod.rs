//! What a run left behind, read into one model ([`model`]: the `Report`
//! every verdict rule reads): a JUnit report ([`junit`]), `go test -json`
//! events ([`go_test_json`]), libtest's text ([`libtest_text`]), and the
//! runner's summary line and load errors in the log ([`suite_log`]). This
//! module picks the reader for a report file ([`read`]) and holds what a
//! run's reading gave ([`Reading`]); the readers use the model, never each
//! other through it.

pub mod go_test_json;
pub mod junit;
pub mod libtest_text;
pub mod model;
pub mod suite_log;

use std::borrow::Cow;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::outcome::reading::model::{Report, ReportError};
use crate::outcome::reading::suite_log::Observed;

/// What a run's JUnit source gave: nothing configured, a report, or the
/// reason it has none; without `test.junit`, what the run showed about
/// itself.
#[derive(Debug, Clone)]
pub enum Reading {
    /// The test config has no `test.junit`, and the log shows no runner
    /// unguard reads: tests are not counted.
    NotConfigured,
    /// The configured report, read.
    Read(Report),
    /// Configured, but no readable report appeared.
    Unreadable(ReportError),
    /// No `test.junit`, but the log shows which runner ran (and pytest
    /// wrote the report unguard asked for): see [`crate::outcome::reading::suite_log`].
    Observed(Observed),
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
        if let Some(run) = go_test_json::parse(&text) {
            return Ok(run.report);
        }
    }
    // `cargo test 2>&1 | tee {junit}`: the file holds libtest's text.
    if !text.trim_start().starts_with('<') {
        if let Some(run) = libtest_text::parse(&text) {
            return Ok(run.report);
        }
    }
    junit::parse(&text)
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

/// `line` without ANSI escape sequences (colours, cursor movement).
pub(crate) fn strip_ansi(line: &str) -> Cow<'_, str> {
    static ANSI: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").expect("valid regex"));
    ANSI.replace_all(line, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYTEST: &str = r#"<testsuite><testcase classname="a" name="x"/><testcase classname="a" name="y"><failure/></testcase><testcase classname="a" name="z"><skipped/></testcase><testcase classname="b" name="w"/></testsuite>"#;

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
}
