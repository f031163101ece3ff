//! A suite's output, captured into its log with bounded size and memory.
//!
//! stdout and stderr share one pipe (so their lines interleave as the suite
//! wrote them). The first [`LOG_HEAD_BYTES`] go to the log as they come; after
//! that only the last [`LOG_TAIL_BYTES`] are kept in a ring buffer and written
//! at the end, after a marker saying how much was left out. unguard keeps
//! reading (a suite never blocks on a full pipe) and never holds more than the
//! tail in memory, whatever the suite prints.
//!
//! A write into the log that fails (a full disk) changes nothing for the
//! suite: unguard keeps reading and drops the rest, so the suite never sees
//! a closed pipe (which would turn an equivalent mutant into a kill). The
//! log is then cut where the write failed, ends with a marker saying so
//! (room for it is made by dropping the log's last few KiB), and the
//! failure is recorded: the run stops (see [`crate::outdir::space`]).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::sync::oneshot;

use crate::outdir::space;
use crate::run::platform;

/// Bytes of a suite's output written to its log before truncation.
pub const LOG_HEAD_BYTES: u64 = 8 * 1024 * 1024;
/// Bytes from the end of the output kept after truncation.
pub const LOG_TAIL_BYTES: usize = 1024 * 1024;
/// How long to keep draining the pipe after the suite's group is gone (a
/// process that escaped every net may still hold it open).
pub const DRAIN_LIMIT: Duration = Duration::from_millis(500);

/// A pipe: the read end for unguard, the write end (twice) for the child.
pub struct Pipe {
    /// The end unguard reads the output from.
    pub read: OwnedFd,
    /// The end the child writes its stdout and stderr to.
    pub write: OwnedFd,
}

/// Both ends close-on-exec: the child gets its copies through `Stdio`, and
/// no other child inherits them.
pub fn pipe() -> std::io::Result<Pipe> {
    let (read, write) = platform::pipe()?;
    Ok(Pipe { read, write })
}

/// What the capture saw.
#[derive(Debug, Default, Clone, Copy)]
pub struct Captured {
    /// Bytes of output read, in all.
    pub total: u64,
    /// Bytes of output left out of the log (between its head and its tail).
    pub omitted: u64,
    /// The pipe was still open when draining stopped.
    pub cut_off: bool,
    /// Writing the log failed: it is cut there (and says so), the rest of
    /// the output was read and dropped, and the failure is recorded.
    pub write_failed: bool,
}

/// The running capture: stop it with [`Capture::finish`].
pub struct Capture {
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<Captured>>,
}

impl Capture {
    /// Start copying from `read` into `log` (appending).
    pub fn start(read: OwnedFd, log: File) -> std::io::Result<Capture> {
        let rx = tokio::net::unix::pipe::Receiver::from_owned_fd(read)?;
        let (stop_tx, stop_rx) = oneshot::channel();
        let task = tokio::spawn(copy(rx, log, stop_rx));
        Ok(Capture {
            stop: Some(stop_tx),
            task,
        })
    }

    /// Drain what is left (up to [`DRAIN_LIMIT`]), write the tail, return the counts.
    pub async fn finish(mut self) -> Captured {
        let stop = self.stop.take();
        let drained = tokio::time::timeout(DRAIN_LIMIT, &mut self.task).await;
        match drained {
            Ok(Ok(Ok(c))) => c,
            Ok(_) => Captured::default(),
            Err(_) => {
                // Still open: tell the task to wrap up with what it has.
                if let Some(s) = stop {
                    let _ = s.send(());
                }
                match self.task.await {
                    Ok(Ok(mut c)) => {
                        c.cut_off = true;
                        c
                    }
                    _ => Captured::default(),
                }
            }
        }
    }
}

async fn copy(
    mut rx: tokio::net::unix::pipe::Receiver,
    log: File,
    mut stop: oneshot::Receiver<()>,
) -> std::io::Result<Captured> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut c = Captured::default();
    let mut log = LogWriter { log, failed: false };
    let mut tail: VecDeque<u8> = VecDeque::new();
    loop {
        let n = tokio::select! {
            r = rx.read(&mut buf) => r?,
            _ = &mut stop => break,
        };
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        let room = LOG_HEAD_BYTES.saturating_sub(c.total) as usize;
        let (head, rest) = chunk.split_at(room.min(n));
        log.put(head);
        c.total += n as u64;
        if !rest.is_empty() {
            tail.extend(rest);
            let excess = tail.len().saturating_sub(LOG_TAIL_BYTES);
            if excess > 0 {
                tail.drain(..excess);
                c.omitted += excess as u64;
            }
        }
    }
    if c.omitted > 0 {
        log.put(
            format!(
                "\n# unguard: output truncated: {} of {} bytes left out (the log keeps the first {} MiB and the last {} MiB)\n",
                c.omitted,
                c.total,
                LOG_HEAD_BYTES / (1024 * 1024),
                LOG_TAIL_BYTES / (1024 * 1024)
            )
            .as_bytes(),
        );
    }
    let (a, b) = tail.as_slices();
    log.put(a);
    log.put(b);
    c.write_failed = log.failed;
    Ok(c)
}

/// The log being written; after a write fails, nothing more is written.
struct LogWriter {
    log: File,
    failed: bool,
}

impl LogWriter {
    fn put(&mut self, bytes: &[u8]) {
        if self.failed {
            return;
        }
        if let Err(e) = self.log.write_all(bytes) {
            mark_cut(&mut self.log, &e);
            space::failed(&self.path(), &e);
            self.failed = true;
        }
    }

    /// The log's path, for the error (the file was opened elsewhere).
    fn path(&self) -> PathBuf {
        std::fs::read_link(format!("/proc/self/fd/{}", self.log.as_raw_fd()))
            .unwrap_or_else(|_| PathBuf::from("a log in the output dir"))
    }
}

/// End a log whose write failed with a marker. On a full disk there is no
/// room for it: each try drops more of the log's end first (whole pages,
/// so blocks are freed), and writes the marker at the new end.
fn mark_cut(log: &mut File, e: &std::io::Error) {
    let marker = format!(
        "\n# unguard: log cut here: writing it failed ({e}); the rest of the suite's output was read and dropped\n"
    );
    const PAGE: u64 = 4096;
    for drop_pages in [0, 2, 4, 8, 16] {
        if drop_pages > 0 {
            let len = log.metadata().map(|m| m.len()).unwrap_or(0);
            let cut = len.saturating_sub(drop_pages * PAGE) / PAGE * PAGE;
            if log.set_len(cut).is_err() {
                return;
            }
        }
        if log.seek(SeekFrom::End(0)).is_ok() && log.write_all(marker.as_bytes()).is_ok() {
            return;
        }
    }
}
