//! A suite's output, captured into its log with bounded size and memory.
//!
//! stdout and stderr share one pipe (so their lines interleave as the suite
//! wrote them). The first [`LOG_HEAD_BYTES`] go to the log as they come; after
//! that only the last [`LOG_TAIL_BYTES`] are kept in a ring buffer and written
//! at the end, after a marker saying how much was left out. unguard keeps
//! reading (a suite never blocks on a full pipe) and never holds more than the
//! tail in memory, whatever the suite prints.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::sync::oneshot;

use crate::platform;

/// Bytes of a suite's output written to its log before truncation.
pub const LOG_HEAD_BYTES: u64 = 8 * 1024 * 1024;
/// Bytes from the end of the output kept after truncation.
pub const LOG_TAIL_BYTES: usize = 1024 * 1024;
/// How long to keep draining the pipe after the suite's group is gone (a
/// process that escaped every net may still hold it open).
pub const DRAIN_LIMIT: Duration = Duration::from_millis(500);

/// A pipe: the read end for unguard, the write end (twice) for the child.
pub struct Pipe {
    pub read: OwnedFd,
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
    pub total: u64,
    pub omitted: u64,
    /// The pipe was still open when draining stopped.
    pub cut_off: bool,
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
    mut log: File,
    mut stop: oneshot::Receiver<()>,
) -> std::io::Result<Captured> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut c = Captured::default();
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
        log.write_all(head)?;
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
        writeln!(
            log,
            "\n# unguard: output truncated: {} of {} bytes left out (the log keeps the first {} MiB and the last {} MiB)",
            c.omitted,
            c.total,
            LOG_HEAD_BYTES / (1024 * 1024),
            LOG_TAIL_BYTES / (1024 * 1024)
        )?;
    }
    let (a, b) = tail.as_slices();
    log.write_all(a)?;
    log.write_all(b)?;
    Ok(c)
}
