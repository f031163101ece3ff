//! One run per output dir: an exclusive, non-blocking advisory lock
//! (`flock`) on the directory itself, held until unguard exits. The kernel
//! drops it when the process ends, however it ends, so a dead run never
//! blocks the next one; the holder's record in the marker file only names
//! the run in the error, the lock alone decides.
//!
//! The descriptor is close-on-exec (std opens every file so): no suite
//! inherits the lock, so a daemon a suite leaves behind cannot hold it.
//! The `flock` itself is [`platform::try_lock_exclusive`].

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::run::platform::{self, Flock};

/// Locks this process holds: (device, inode) of the directory, and the open
/// directory that carries the lock (closing it would release the lock).
static HELD: Mutex<Vec<(u64, u64, File)>> = Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<(u64, u64, File)>> {
    HELD.lock().unwrap_or_else(|p| p.into_inner())
}

/// What became of an attempt to lock a directory.
pub(super) enum Locked {
    /// This process holds it now (or already did).
    Ours,
    /// Another process holds it.
    Busy,
}

/// Lock directory `dir` for the rest of this process's life.
pub(super) fn lock(dir: &Path) -> Result<Locked> {
    let f = File::open(dir).map_err(|e| Error::at("opening", dir, e))?;
    let meta = f.metadata().map_err(|e| Error::at("reading", dir, e))?;
    let key = (meta.dev(), meta.ino());
    let mut held = held();
    if held.iter().any(|(d, i, _)| (*d, *i) == key) {
        return Ok(Locked::Ours);
    }
    match platform::try_lock_exclusive(&f) {
        Flock::Taken => {
            held.push((key.0, key.1, f));
            Ok(Locked::Ours)
        }
        Flock::Busy => Ok(Locked::Busy),
        // A file system without flock (some network mounts): run unlocked,
        // as unguard did before it locked.
        Flock::Unsupported(e) => {
            eprintln!(
                "unguard: warning: cannot lock {} ({e}); another run on it would not be stopped",
                dir.display()
            );
            Ok(Locked::Ours)
        }
    }
}

/// Give up this process's lock on `dir` (a directory unguard refused to use).
pub(super) fn release(dir: &Path) {
    let Ok(meta) = std::fs::metadata(dir) else {
        return;
    };
    held().retain(|(d, i, _)| (*d, *i) != (meta.dev(), meta.ino()));
}

/// Whether another process holds the lock of `dir` right now (probed with
/// a lock taken and dropped at once; never blocks).
pub(super) fn busy_elsewhere(dir: &Path) -> bool {
    let Ok(f) = File::open(dir) else {
        return false;
    };
    if let Ok(meta) = f.metadata() {
        if held()
            .iter()
            .any(|(d, i, _)| (*d, *i) == (meta.dev(), meta.ino()))
        {
            return false;
        }
    }
    matches!(platform::try_lock_exclusive(&f), Flock::Busy)
}

/// The holder's record, written into the marker file: who to name when
/// another run finds the dir locked.
pub(super) fn holder_record() -> String {
    let started = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now())
        .format("%Y-%m-%d %H:%M:%S UTC");
    let argv: Vec<String> = std::env::args()
        .map(|a| crate::run::shell::quote(&a))
        .collect();
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    format!(
        "pid: {}\nstarted: {started}\ncommand: {}\ncwd: {cwd}\n",
        std::process::id(),
        argv.join(" ")
    )
}

/// "pid 1234, started …, `unguard run …` in /dir" from a holder record.
pub(super) fn describe_holder(record: &str) -> String {
    let field = |k: &str| {
        record
            .lines()
            .find_map(|l| l.strip_prefix(k).map(str::trim))
            .filter(|v| !v.is_empty())
    };
    let mut parts = Vec::new();
    if let Some(pid) = field("pid:") {
        parts.push(format!("pid {pid}"));
    }
    if let Some(s) = field("started:") {
        parts.push(format!("started {s}"));
    }
    if let Some(c) = field("command:") {
        parts.push(match field("cwd:") {
            Some(cwd) => format!("`{c}` in {cwd}"),
            None => format!("`{c}`"),
        });
    }
    if parts.is_empty() {
        "its record is not written yet".into()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_descriptor_is_refused_and_the_holder_is_named() {
        let d = tempfile::tempdir().unwrap();
        assert!(matches!(lock(d.path()).unwrap(), Locked::Ours));
        assert!(
            matches!(lock(d.path()).unwrap(), Locked::Ours),
            "held already"
        );
        // Another open file description conflicts, as another process would.
        let other = File::open(d.path()).unwrap();
        assert!(matches!(platform::try_lock_exclusive(&other), Flock::Busy));
        release(d.path());
        assert!(matches!(platform::try_lock_exclusive(&other), Flock::Taken));
        let rec = holder_record();
        let said = describe_holder(&rec);
        assert!(
            said.starts_with(&format!("pid {}, started ", std::process::id())),
            "{said}"
        );
        assert_eq!(describe_holder(""), "its record is not written yet");
    }
}
