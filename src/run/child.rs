//! The life of one suite's child process: spawned under its supervisor
//! (or directly) in its own process group and registered with the reaper,
//! waited for, its group terminated at the timeout or on cancellation, and
//! everything it left swept when it ends. [`crate::run::reaper`],
//! [`crate::run::isolation`] and [`crate::run::platform`] are the helpers
//! it calls; none of them calls back.

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::run::capture::{self, Capture};
use crate::run::isolation::{self, Cgroup, Setup};
use crate::run::platform::{self, Signal};
use crate::run::reaper::{self, RUN_TOKEN_VAR};
use crate::run::supervise::{End, Report};
use crate::run::{Exit, Invocation};

/// Grace period between SIGTERM and SIGKILL for a process group, unless
/// `UNGUARD_KILL_GRACE` (seconds) says otherwise.
pub const KILL_GRACE: Duration = Duration::from_secs(2);

fn kill_grace() -> Duration {
    std::env::var("UNGUARD_KILL_GRACE")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
        .unwrap_or(KILL_GRACE)
}

/// Signal the suite's process group. `pgid` is the pid of a child we
/// spawned as a group leader; Linux does not reuse a pid while a process
/// group with that id still exists.
fn signal_group(pgid: i32, sig: Signal) {
    if pgid > 0 {
        let _ = platform::kill_group(pgid, sig);
    }
}

/// Start the suite (under its supervisor, see [`Setup`]) in its own process
/// group, registered with the reaper, stdout and stderr on one pipe read
/// into `log`. The capture may fail on its own (the suite still runs,
/// uncaptured). If the supervisor cannot be started, the suite is started
/// directly.
fn spawn(
    inv: &Invocation<'_>,
    argv: &[String],
    token: &str,
    log: &std::fs::File,
    setup: Setup,
) -> Result<Spawned, String> {
    // stdout and stderr share one pipe, read into the log with a size cap.
    let (pipe, log_for_capture) = match (capture::pipe(), log.try_clone()) {
        (Ok(p), Ok(l)) => (p, l),
        (Err(e), _) | (_, Err(e)) => return Err(format!("(setting up the output pipe: {e})")),
    };
    let mut note = None;
    let args = setup.supervisor_args(argv, kill_grace());
    let (child, control, cgroup) = match setup.control {
        Some((ours, theirs)) => {
            let mut cmd = command(
                inv,
                token,
                isolation::self_exe(),
                &args,
                &pipe.write,
                Stdio::from(theirs),
            )?;
            cmd.arg0("unguard");
            let registry_handle = ours.try_clone().ok();
            let cg = setup.cgroup.as_ref().map(|c| c.dir().to_path_buf());
            match reaper::spawn_registered(&mut cmd, token, registry_handle, cg) {
                Ok(child) => (child, Some(ours), setup.cgroup),
                Err(e) if setup.netns => {
                    // Without its supervisor the run would share the
                    // network it was promised not to.
                    return Err(format!(
                        "the supervisor ({e}), which gives the run its own network namespace"
                    ));
                }
                Err(e) => {
                    note = Some(format!(
                        "could not start the supervisor ({e}); the suite runs without it"
                    ));
                    drop(setup.cgroup);
                    let mut cmd =
                        command(inv, token, &argv[0], &argv[1..], &pipe.write, Stdio::null())?;
                    let child = reaper::spawn_registered(&mut cmd, token, None, None);
                    (
                        child.map_err(|e| format!("`{}`: {e}", argv[0]))?,
                        None,
                        None,
                    )
                }
            }
        }
        None => {
            let mut cmd = command(inv, token, &argv[0], &argv[1..], &pipe.write, Stdio::null())?;
            let child = reaper::spawn_registered(&mut cmd, token, None, None);
            (
                child.map_err(|e| format!("`{}`: {e}", argv[0]))?,
                None,
                None,
            )
        }
    };
    // unguard's copy of the pipe's write end goes here (the commands' copies
    // went with them), so the pipe reaches EOF when the suite's processes
    // close theirs.
    drop(pipe.write);
    let capture = Capture::start(pipe.read, log_for_capture).map(Some);
    Ok(Spawned {
        process: child,
        control,
        cgroup,
        capture,
        note,
    })
}

/// The command: `program args…` in the run's cwd and environment (plus
/// the run token), in a new process group, stdout and stderr on copies of
/// `out`.
fn command(
    inv: &Invocation<'_>,
    token: &str,
    program: &str,
    args: &[String],
    out: &OwnedFd,
    stdin: Stdio,
) -> Result<tokio::process::Command, String> {
    let dup = || {
        out.try_clone()
            .map_err(|e| format!("(duplicating the pipe: {e})"))
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .current_dir(inv.cwd)
        .stdin(stdin)
        .stdout(Stdio::from(dup()?))
        .stderr(Stdio::from(dup()?))
        .process_group(0)
        .kill_on_drop(true);
    for k in &inv.env.remove {
        cmd.env_remove(k);
    }
    for (k, v) in &inv.env.set {
        cmd.env(k, v);
    }
    cmd.env(RUN_TOKEN_VAR, token);
    Ok(cmd)
}

/// Wait for the suite to exit, or terminate its group at the timeout or
/// when the run is cancelled.
async fn wait_or_terminate(
    child: &mut tokio::process::Child,
    pgid: i32,
    supervised: bool,
    timeout: Duration,
    cancel: &mut watch::Receiver<bool>,
) -> Exit {
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    tokio::select! {
        status = child.wait() => match status {
            Ok(s) => status_to_exit(s),
            Err(e) => Exit::SpawnFailed(format!("waiting for the child: {e}")),
        },
        _ = &mut deadline => {
            terminate(child, pgid, supervised).await;
            Exit::Timeout
        }
        _ = wait_cancel(cancel) => {
            terminate(child, pgid, supervised).await;
            Exit::Interrupted
        }
    }
}

/// A suite's child process, from spawn to sweep: its leader (the
/// supervisor, or the command run without one), registered with the
/// reaper under its process group, its run token, unguard's end of the
/// supervisor's control socket and the run's cgroup. [`Child::finish`]
/// sweeps what it left; dropped without that (a panic unwinding past the
/// run), it cleans up right there.
pub(super) struct Child {
    process: tokio::process::Child,
    pgid: i32,
    token: String,
    control: Option<UnixStream>,
    cgroup: Option<Cgroup>,
    armed: bool,
}

/// What [`Child::start`] gives: the child, the capture of its output (which
/// may fail on its own: the suite still runs, uncaptured), and a note for
/// the log (why it runs without its supervisor).
pub(super) struct Started {
    pub(super) child: Child,
    pub(super) capture: std::io::Result<Option<Capture>>,
    pub(super) note: Option<String>,
}

/// What [`spawn`] made, before it is a [`Child`].
struct Spawned {
    process: tokio::process::Child,
    control: Option<UnixStream>,
    cgroup: Option<Cgroup>,
    capture: std::io::Result<Option<Capture>>,
    note: Option<String>,
}

impl Child {
    /// Start the run's child under a fresh run token (see [`spawn`]); from
    /// here on, even a panic kills the run's processes and removes its
    /// cgroup.
    pub(super) fn start(
        inv: &Invocation<'_>,
        argv: &[String],
        log: &std::fs::File,
        setup: Setup,
    ) -> Result<Started, String> {
        let token = reaper::new_run_token();
        let spawned = spawn(inv, argv, &token, log, setup)?;
        let pgid = spawned.process.id().map(|p| p as i32).unwrap_or(0);
        let child = Child {
            process: spawned.process,
            pgid,
            token,
            control: spawned.control,
            cgroup: spawned.cgroup,
            armed: true,
        };
        Ok(Started {
            child,
            capture: spawned.capture,
            note: spawned.note,
        })
    }

    /// Wait until the command ends, the timeout passes or the run is
    /// cancelled (then its group is terminated). How it ended comes from
    /// the supervisor's report where there is one, returned too.
    pub(super) async fn wait(
        &mut self,
        timeout: Duration,
        cancel: &mut watch::Receiver<bool>,
    ) -> (Exit, Option<Report>) {
        let supervised = self.control.is_some();
        let mut exit =
            wait_or_terminate(&mut self.process, self.pgid, supervised, timeout, cancel).await;
        // The supervisor has exited: its report says how the command ended.
        let report = self.control.as_ref().and_then(isolation::read_report);
        if let Some(us) = report.as_ref().and_then(|r| r.joined_us) {
            isolation::note_join(Duration::from_micros(us));
        }
        if let (Some(r), Exit::Code(_) | Exit::Signal(_)) = (&report, &exit) {
            exit = match &r.end {
                Some(End::Code(c)) => Exit::Code(*c),
                Some(End::Signal(s)) => Exit::Signal(*s),
                Some(End::SpawnFailed(m)) => Exit::SpawnFailed(m.clone()),
                None => exit,
            };
        }
        (exit, report)
    }

    /// SIGKILL the group, forget it, empty and remove the run's cgroup,
    /// kill escaped processes, then kill and reap orphans (when no other
    /// suite runs); returns how many processes were found outside the
    /// supervisor's reach. On a blocking thread: the sweep and the reaping
    /// sleep.
    pub(super) async fn finish(mut self) -> usize {
        self.armed = false;
        let (pgid, token) = (self.pgid, std::mem::take(&mut self.token));
        let cgroup = self.cgroup.take();
        let cleanup = move || {
            signal_group(pgid, Signal::Kill);
            reaper::unregister(pgid);
            let in_cgroup = cgroup.map_or(0, |c| c.finish(pgid));
            in_cgroup + reaper::sweep_token(&token) + reaper::reap_orphans()
        };
        match tokio::task::spawn_blocking(cleanup).await {
            Ok(n) => n,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => 0,
        }
    }
}

impl Drop for Child {
    /// A panic is unwinding past the run: clean up right here (blocking).
    /// The supervisor, told to stop (its control socket shut down), kills
    /// its subtree at once; then the group, the token and the cgroup.
    fn drop(&mut self) {
        if self.armed {
            if let Some(c) = &self.control {
                let _ = c.shutdown(std::net::Shutdown::Both);
                isolation::await_exit(self.pgid, Duration::from_secs(2));
            }
            signal_group(self.pgid, Signal::Kill);
            reaper::unregister(self.pgid);
            drop(self.cgroup.take());
            reaper::sweep_token(&self.token);
        }
    }
}

async fn wait_cancel(cancel: &mut watch::Receiver<bool>) {
    loop {
        if *cancel.borrow() {
            return;
        }
        if cancel.changed().await.is_err() {
            // Sender gone: never cancelled.
            std::future::pending::<()>().await;
        }
    }
}

/// How much longer than the grace unguard waits for a supervisor to finish
/// its own grace and clean-up before it SIGKILLs the group itself.
const SUPERVISOR_MARGIN: Duration = Duration::from_secs(2);

/// SIGTERM the group, give the whole group (not just its leader) the grace
/// period to run its handlers and exit, then SIGKILL what is left and reap
/// the leader. Under a supervisor (in the group, catching the SIGTERM) the
/// supervisor does the waiting and the killing of its whole subtree;
/// unguard only waits for it (and kills the group if it does not finish).
async fn terminate(child: &mut tokio::process::Child, pgid: i32, supervised: bool) {
    signal_group(pgid, Signal::Term);
    let grace = kill_grace();
    if supervised {
        let _ = tokio::time::timeout(grace + SUPERVISOR_MARGIN, child.wait()).await;
    } else {
        let deadline = Instant::now() + grace;
        let _ = tokio::time::timeout(grace, child.wait()).await;
        while Instant::now() < deadline && platform::group_alive(pgid) {
            // Members whose parent died were reparented to unguard: reap the
            // dead ones, or they would keep the group "alive" as zombies.
            reaper::reap_orphans_async().await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    signal_group(pgid, Signal::Kill);
    let _ = child.wait().await;
}

fn status_to_exit(s: std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => Exit::Code(c),
        (None, Some(sig)) => Exit::Signal(sig),
        _ => Exit::Code(-1),
    }
}
