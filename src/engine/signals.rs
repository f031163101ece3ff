//! Ctrl-C and SIGTERM during a run: the first stops the run gracefully
//! (running suites are terminated, finished verdicts kept), the second
//! kills everything and exits 130 at once.

use std::sync::atomic::Ordering;

use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;

use crate::error::{Context, ExitCode, Result};
use crate::reaper;
use crate::workspace::{self, INTERRUPTED};

/// The installed handlers: `cancel` turns true at the first signal.
pub(super) struct Interrupts {
    pub cancel: watch::Receiver<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Interrupts {
    /// Install SIGINT and SIGTERM handlers now (so no signal can slip
    /// through to the default action), and make unguard a child subreaper.
    pub fn install() -> Result<Interrupts> {
        let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
        let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
        if !reaper::become_subreaper() {
            eprintln!("unguard: warning: cannot become a child subreaper; orphans that clear their environment may escape");
        }
        let (cancel_tx, cancel) = watch::channel(false);
        let task = tokio::spawn(async move {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            INTERRUPTED.store(true, Ordering::SeqCst);
            let _ = cancel_tx.send(true);
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            exit_now();
        });
        Ok(Interrupts { cancel, task })
    }

    /// Whether the run was interrupted.
    pub fn interrupted() -> bool {
        INTERRUPTED.load(Ordering::SeqCst)
    }

    /// The run is over: signals take their default action again.
    pub fn stop(self) {
        self.task.abort();
    }
}

/// The second Ctrl-C: no more waiting for graceful shutdown. Kill every
/// suite and orphan, remove the scratch dirs, exit 130 now.
fn exit_now() {
    let suites = reaper::kill_all_active();
    let dirs = workspace::remove_live_scratch_dirs();
    eprintln!(
        "unguard: second interrupt: killed {suites} running suite(s), removed {dirs} scratch dir(s); exiting now"
    );
    std::process::exit(ExitCode::Interrupted.code());
}
