//! A full output dir: room for the results is set aside before the first
//! suite runs, and the first write that fails stops the run.
//!
//! - [`reserve`] writes [`RESERVE`], a file of zeros as large as the
//!   results of the run can be; [`release_reserve`] deletes it just before
//!   `outcomes.json` is written, so the results fit however full the logs
//!   made the file system.
//! - [`failed`] records the first write into the output dir that failed
//!   (its path and error) and wakes [`stop_requested`]: the run stops like
//!   an interrupt (running suites are ended, their verdicts dropped; the
//!   finished ones are kept), and ends with exit 1 and that path.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use tokio::sync::Notify;

use crate::error::{Error, Result};

/// The file that keeps the room for the results.
pub const RESERVE: &str = ".unguard-reserve";
/// The least room set aside (the summary, the reports' fixed parts).
const RESERVE_MIN: u64 = 256 * 1024;
/// Room per mutation in `outcomes.json` (its record and its diff).
const RESERVE_PER_MUTATION: u64 = 8 * 1024;
/// The most room set aside.
const RESERVE_MAX: u64 = 64 * 1024 * 1024;

/// The first failed write into the output dir.
#[derive(Debug, Clone)]
pub struct WriteFailure {
    /// The file whose write failed.
    pub path: PathBuf,
    /// The write's error, as printed.
    pub error: String,
}

impl WriteFailure {
    /// The error to print: the path, the cause, and what to do.
    pub fn to_error(&self) -> Error {
        Error::OutDirFull(format!(
            "writing {}: {}; the run stopped there (the log is cut where the write failed and says so); free space on that file system, or pass --out DIR on a larger one, and run again",
            self.path.display(),
            self.error
        ))
    }
}

static FAILURE: Mutex<Option<WriteFailure>> = Mutex::new(None);

fn stop() -> &'static Notify {
    static STOP: OnceLock<Notify> = OnceLock::new();
    STOP.get_or_init(Notify::new)
}

/// Record that writing `path` failed with `error`; the first failure stops
/// the run. Returns whether this was the first.
pub fn failed(path: &Path, error: &std::io::Error) -> bool {
    let mut f = FAILURE.lock().unwrap_or_else(|p| p.into_inner());
    if f.is_some() {
        return false;
    }
    *f = Some(WriteFailure {
        path: path.to_path_buf(),
        error: error.to_string(),
    });
    // A stored permit: the run's signal task sees it even if it starts
    // waiting only later.
    stop().notify_one();
    true
}

/// The first failed write into the output dir, when one failed.
pub fn write_failure() -> Option<WriteFailure> {
    FAILURE.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Resolves when a write into the output dir failed (the run must stop).
pub async fn stop_requested() {
    stop().notified().await;
}

/// `std::fs::write` into the output dir; a failure is recorded (and stops the run).
pub fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| {
        failed(path, &e);
        Error::at("writing", path, e)
    })
}

/// How much room to set aside for the results of `mutations` mutations
/// whose mutated files hold `source_bytes` bytes (they are in the results).
pub fn reserve_size(mutations: usize, source_bytes: u64) -> u64 {
    (RESERVE_MIN + RESERVE_PER_MUTATION * mutations as u64 + 2 * source_bytes).min(RESERVE_MAX)
}

/// Set `bytes` aside in `out` (real blocks: zeros written, not a sparse
/// file). Fails when the file system has not that much room: the results
/// could not be written at the end.
pub fn reserve(out: &Path, bytes: u64) -> Result<()> {
    let path = out.join(RESERVE);
    let written = std::fs::File::create(&path).and_then(|f| {
        let mut w = std::io::BufWriter::new(f);
        let zeros = vec![0u8; 64 * 1024];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            w.write_all(&zeros[..n])?;
            left -= n as u64;
        }
        w.into_inner().map_err(|e| e.into_error())?.sync_all()
    });
    written.map_err(|e| {
        let _ = std::fs::remove_file(&path);
        Error::OutDirFull(format!(
            "writing {}: {e}: the output dir has not the {} KiB its results need; free space on that file system, or pass --out DIR on a larger one",
            path.display(),
            bytes.div_ceil(1024)
        ))
    })
}

/// Give the room set aside back (before the results are written; also on
/// every way out of a run, so the file never stays behind).
pub fn release_reserve(out: &Path) {
    let _ = std::fs::remove_file(out.join(RESERVE));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_is_real_and_released() {
        let d = tempfile::tempdir().unwrap();
        reserve(d.path(), 100_000).unwrap();
        let meta = std::fs::metadata(d.path().join(RESERVE)).unwrap();
        assert_eq!(meta.len(), 100_000);
        use std::os::unix::fs::MetadataExt;
        assert!(meta.blocks() * 512 >= 100_000, "not sparse");
        release_reserve(d.path());
        assert!(!d.path().join(RESERVE).exists());
        assert_eq!(reserve_size(0, 0), RESERVE_MIN);
        assert_eq!(reserve_size(1_000_000, 0), RESERVE_MAX);
    }
}
