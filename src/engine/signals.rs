//! Ctrl-C, SIGTERM and SIGHUP (the terminal closed) during a run: the
//! first stops the run gracefully (running suites are terminated, finished
//! verdicts kept, scratch dirs removed), the second kills everything and
//! exits 130 at once. A SIGHUP that was ignored when unguard started
//! (`nohup`) stays ignored.

use std::sync::atomic::Ordering;

use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::watch;

use crate::error::{Context, ExitCode, Result};
use crate::run::reaper;
use crate::workspace::{self, INTERRUPTED};

/// The installed handlers: `cancel` turns true at the first signal.
pub(super) struct Interrupts {
    pub cancel: watch::Receiver<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Interrupts {
    /// Install SIGINT, SIGTERM and SIGHUP handlers now (so no signal can
    /// slip through to the default action), and make unguard a child
    /// subreaper.
    pub fn install() -> Result<Interrupts> {
        let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
        let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
        const SIGHUP: u32 = 1;
        let mut hup = if crate::run::platform::signal_ignored(SIGHUP) {
            None
        } else {
            Some(signal(SignalKind::hangup()).context("installing the SIGHUP handler")?)
        };
        if !reaper::become_subreaper() {
            eprintln!("unguard: warning: cannot become a child subreaper; orphans that clear their environment may escape");
        }
        let (cancel_tx, cancel) = watch::channel(false);
        let task = tokio::spawn(async move {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
                _ = recv(&mut hup) => {}
                // A write into the output dir failed: stop the same way.
                _ = crate::outdir::space::stop_requested() => {}
            }
            INTERRUPTED.store(true, Ordering::SeqCst);
            let _ = cancel_tx.send(true);
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
                _ = recv(&mut hup) => {}
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

/// The next delivery of `sig`; never when it is not handled.
async fn recv(sig: &mut Option<Signal>) {
    match sig {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
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
