//! Every version of a report file one run writes. A command may start its
//! runner more than once (`pytest tests/unit && pytest tests/integration`)
//! and every process writes the one path it was given: the last would
//! overwrite the others' tests. While the run goes on, the report's
//! directory is watched (inotify, see [`super::platform::watch`]) and each
//! complete version written is kept beside it as `<report>.v<N>`, so that
//! the reader sees every process's tests. Where nothing can watch, only the
//! final file is there, as before.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::platform::watch::{Event, Watcher};

/// How often the watch is read while the run goes on: far shorter than
/// the start of a second runner process.
const POLL: Duration = Duration::from_millis(5);

/// The watch of one report path for one run.
pub struct Versions {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<PathBuf>>>,
}

impl Versions {
    /// Start watching `report` (whose directory must exist); `None` when
    /// the platform cannot watch it.
    pub fn watch(report: &Path) -> Option<Versions> {
        let dir = report.parent()?.to_path_buf();
        let name = report.file_name()?.to_os_string();
        let watcher = Watcher::new().ok()?;
        watcher.add(&dir).ok()?;
        let stop = Arc::new(AtomicBool::new(false));
        let report = report.to_path_buf();
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("unguard-report-versions".into())
            .spawn(move || {
                let mut kept = Kept::new(report);
                loop {
                    let done = flag.load(Ordering::Acquire);
                    let touched = watcher.drain().map_or(true, |events| {
                        events.iter().any(|e| match e {
                            Event::Touched { name: Some(n), .. } => *n == name,
                            Event::Touched { name: None, .. } => false,
                            Event::Overflow => true,
                        })
                    });
                    if touched || done {
                        kept.look();
                    }
                    if done {
                        return kept.paths;
                    }
                    std::thread::sleep(POLL);
                }
            })
            .ok()?;
        Some(Versions {
            stop,
            thread: Some(thread),
        })
    }

    /// Stop watching (the run has ended): every distinct complete version
    /// written, in order, as files beside the report. One version or none:
    /// the report as it is says everything.
    pub fn finish(mut self) -> Vec<PathBuf> {
        self.stop.store(true, Ordering::Release);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Versions {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

/// The versions kept so far.
struct Kept {
    report: PathBuf,
    last: Option<Vec<u8>>,
    paths: Vec<PathBuf>,
}

impl Kept {
    fn new(report: PathBuf) -> Kept {
        Kept {
            report,
            last: None,
            paths: Vec::new(),
        }
    }

    /// Keep the report's bytes when they are a complete report unlike the
    /// last one kept (a half-written file is looked at again on its next
    /// write).
    fn look(&mut self) {
        let Some(bytes) = read_regular(&self.report) else {
            return;
        };
        if !complete(&bytes) || self.last.as_ref() == Some(&bytes) {
            return;
        }
        let mut name = self.report.clone().into_os_string();
        name.push(format!(".v{}", self.paths.len() + 1));
        let path = PathBuf::from(name);
        if std::fs::write(&path, &bytes).is_ok() {
            self.paths.push(path);
            self.last = Some(bytes);
        }
    }
}

/// The bytes of `path` when it is a regular file: a suite controls the
/// path, and a FIFO there must not block the watch (opened without
/// blocking, then checked to be a file before it is read).
fn read_regular(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut f = super::platform::open_nonblocking(path).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Whether `bytes` are a finished report: well-formed XML whose root
/// element is closed, with nothing but whitespace after it. A reporter
/// that streams (`node --test`'s junit, one `</testsuite>` per describe
/// block inside `<testsuites>`) leaves states that end in a closing tag
/// too; only the root's closing tag ends a version.
fn complete(bytes: &[u8]) -> bool {
    use quick_xml::events::Event as Xml;
    let mut reader = quick_xml::Reader::from_reader(bytes);
    let mut buf = Vec::new();
    let mut depth = 0usize;
    let mut closed = false;
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Xml::Start(_)) if closed => return false,
            Ok(Xml::Start(_)) => depth += 1,
            Ok(Xml::Empty(_)) if depth == 0 => closed = true,
            Ok(Xml::End(_)) => {
                let Some(d) = depth.checked_sub(1) else {
                    return false;
                };
                depth = d;
                closed |= depth == 0;
            }
            Ok(Xml::Text(t)) if depth == 0 && !t.iter().all(u8::is_ascii_whitespace) => {
                return false
            }
            Ok(Xml::Eof) => return closed && depth == 0,
            Ok(_) => {}
            Err(_) => return false,
        }
        buf.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_at_the_report_path_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("r.xml");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        assert_eq!(read_regular(&fifo), None);
        let v = Versions::watch(&fifo).unwrap();
        assert!(v.finish().is_empty());
    }

    #[test]
    fn only_complete_reports_are_versions() {
        assert!(complete(b"<testsuites><testsuite/></testsuites>\n"));
        assert!(complete(b"<testsuite tests=\"1\"></testsuite>"));
        assert!(complete(
            b"<?xml version=\"1.0\"?>\n<testsuites>\n<testsuite name=\"a\"><testsuite name=\"b\"/></testsuite>\n</testsuites>\n"
        ));
        assert!(!complete(b"<testsuites><testsuite>"));
        assert!(!complete(b""));
        // node --test's junit reporter streams: after its first describe
        // block the file ends in `</testsuite>`, inside the open root.
        assert!(!complete(
            b"<?xml version=\"1.0\"?>\n<testsuites>\n<testsuite name=\"a\">\n<testcase name=\"t\"/>\n</testsuite>\n"
        ));
        // A root `<testsuite>` with suites nested in it, half written.
        assert!(!complete(
            b"<testsuite name=\"all\"><testsuite name=\"a\"><testcase name=\"t\"/></testsuite>"
        ));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn every_distinct_complete_version_written_is_kept_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("r.xml");
        let v = Versions::watch(&report).unwrap();
        // The next process writes only once the watch kept the first one
        // (as a second runner starts long after the first has written).
        let kept_first = || {
            let until = std::time::Instant::now() + Duration::from_secs(30);
            while !dir.path().join("r.xml.v1").exists() && std::time::Instant::now() < until {
                std::thread::sleep(POLL);
            }
        };
        std::fs::write(
            &report,
            "<testsuites><testsuite name=\"unit\"></testsuite></testsuites>",
        )
        .unwrap();
        kept_first();
        std::fs::write(&report, "<testsuites><testsuite name=\"unit\">").unwrap();
        std::fs::write(
            &report,
            "<testsuites><testsuite name=\"integration\"></testsuite></testsuites>",
        )
        .unwrap();
        let kept = v.finish();
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(std::fs::read_to_string(&kept[0]).unwrap().contains("unit"));
        assert!(std::fs::read_to_string(&kept[1])
            .unwrap()
            .contains("integration"));
    }
}
