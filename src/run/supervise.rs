//! The per-run supervisor: `unguard __supervise --grace SECS [--cgroup DIR]
//! [--netns] -- ARGV…`, a second copy of unguard's own binary between unguard and
//! each test command.
//!
//! It makes every process the command starts *its* descendant for good: it
//! is a child subreaper (`PR_SET_CHILD_SUBREAPER`), so a process that
//! double-forks, calls `setsid` and clears its environment is reparented to
//! this run's supervisor, not to unguard (where it could not be told apart
//! from another run's) nor to init. When the command's leader exits, the
//! supervisor SIGKILLs and reaps its children until `waitpid` says none is
//! left, then reports and exits. Nothing a process does to its session,
//! group or environment takes it out of the subtree.
//!
//! It runs in the suite's process group (unguard makes it the leader; the
//! command inherits the group), with the command's environment, cwd,
//! stdout and stderr, and adds nothing the command can see: its stdin is
//! /dev/null as before. Its own stdin is one end of a socket pair whose
//! other end unguard holds (the *control* socket):
//! - unguard's SIGTERM to the group (timeout, Ctrl-C) reaches the command
//!   as before; the supervisor catches it and gives the group the grace
//!   period (`--grace`) before it kills the rest;
//! - EOF on the control socket means unguard is gone (or wants everything
//!   dead at once: the second Ctrl-C): kill everything now. Unlike a
//!   parent-death signal this is not tied to the thread that spawned it;
//! - at the end it writes its [`Report`] there: how the command ended
//!   (exit code, signal, or a spawn failure with the message), how many
//!   processes had left the group, whether joining the cgroup failed. It
//!   also exits with the command's code, or dies of its signal where it can
//!   (a signal it handles itself ends in `128 + N`), for a reader without
//!   the socket.
//!
//! With `--netns` it first moves itself into a network namespace of its
//! own with only a loopback device up ([`crate::run::network`]), before it
//! has a second thread; where that fails it starts nothing and reports the
//! spawn failure.
//!
//! With `--cgroup DIR` it first moves itself into that (per-run, empty)
//! cgroup v2, so the command and everything it forks are born there; unguard
//! empties it with `cgroup.kill` after the run, which catches even what a
//! SIGKILLed supervisor could no longer reap.

use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::time::Instant;

use crate::run::platform::{self, Reaped};

/// The hidden subcommand.
pub const SUBCOMMAND: &str = "__supervise";

/// What to supervise.
#[derive(Debug, Clone)]
pub struct Options {
    /// Between the SIGTERM of the group and the SIGKILL of what is left.
    pub grace: Duration,
    /// A cgroup v2 directory to join before the command starts.
    pub cgroup: Option<PathBuf>,
    /// Start the command in a network namespace of its own, loopback only
    /// (see [`crate::run::network`]); where it cannot be made, the command
    /// is not started (a spawn failure naming why).
    pub netns: bool,
    /// The test command.
    pub argv: Vec<String>,
}

/// How the command ended, as the supervisor saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// It exited with this code.
    Code(i32),
    /// It died from this signal.
    Signal(i32),
    /// The command could not be started (the message names it).
    SpawnFailed(String),
}

/// What the supervisor tells unguard on the control socket, one line each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// `None` when the supervisor never got that far.
    pub end: Option<End>,
    /// Processes killed after the leader exited that were outside its
    /// process group (they had called `setsid` or `setpgid`).
    pub escaped: usize,
    /// Why the supervisor could not join its cgroup (it ran without it).
    pub cgroup_error: Option<String>,
    /// How long joining the cgroup took, in microseconds.
    pub joined_us: Option<u64>,
}

impl Report {
    /// The report as the supervisor writes it to the control socket: one
    /// `key value` line per fact known.
    pub fn encode(&self) -> String {
        let one_line = |s: &str| s.replace(['\n', '\r'], " ");
        let mut out = String::new();
        match &self.end {
            Some(End::Code(c)) => out.push_str(&format!("exit {c}\n")),
            Some(End::Signal(s)) => out.push_str(&format!("signal {s}\n")),
            Some(End::SpawnFailed(m)) => out.push_str(&format!("spawn-failed {}\n", one_line(m))),
            None => {}
        }
        out.push_str(&format!("escaped {}\n", self.escaped));
        if let Some(e) = &self.cgroup_error {
            out.push_str(&format!("cgroup-failed {}\n", one_line(e)));
        }
        if let Some(us) = self.joined_us {
            out.push_str(&format!("joined-us {us}\n"));
        }
        out
    }

    /// Unknown or malformed lines are skipped.
    pub fn decode(text: &str) -> Report {
        let mut r = Report::default();
        for line in text.lines() {
            let (key, value) = line.split_once(' ').unwrap_or((line, ""));
            match key {
                "exit" => r.end = value.parse().ok().map(End::Code).or(r.end),
                "signal" => r.end = value.parse().ok().map(End::Signal).or(r.end),
                "spawn-failed" => r.end = Some(End::SpawnFailed(value.to_string())),
                "escaped" => r.escaped = value.parse().unwrap_or(0),
                "cgroup-failed" => r.cgroup_error = Some(value.to_string()),
                "joined-us" => r.joined_us = value.parse().ok(),
                _ => {}
            }
        }
        r
    }
}

/// The supervisor's `main`: never returns.
pub fn main(opts: Options) -> ! {
    // Only stdin, stdout and stderr reach the command (not what unguard's
    // own parent left open), whoever started this supervisor.
    platform::no_inherited_fds();
    // Before anything can fork: orphans of the command are ours from here.
    // (Where it fails, only the group and the cgroup still attribute.)
    let _ = platform::become_subreaper();
    // While this process has one thread (a user namespace can be entered
    // only then): the command and all it starts inherit the namespace.
    let netns_failed = match opts.netns {
        true => platform::enter_private_network()
            .err()
            .map(|e| e.to_string()),
        false => None,
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "# unguard: supervisor: {e}");
            std::process::exit(SUPERVISOR_FAILED);
        }
    };
    let report = rt.block_on(async {
        let mut control = control_socket();
        let report = match netns_failed {
            Some(e) => Report {
                end: Some(End::SpawnFailed(format!(
                    "the command in its own network namespace: {e}"
                ))),
                ..Report::default()
            },
            None => supervise(&opts, &mut control).await,
        };
        match (control.as_mut(), &report.end) {
            (Some(c), _) => {
                let _ = c.write_all(report.encode().as_bytes()).await;
            }
            (None, Some(End::SpawnFailed(m))) => {
                eprintln!("unguard __supervise: could not start {m}")
            }
            (None, _) => {}
        }
        report
    });
    drop(rt);
    match report.end {
        Some(End::Code(c)) => std::process::exit(c),
        Some(End::Signal(s)) => {
            // Twice: Rust's own SIGSEGV/SIGBUS handler returns the first
            // time, after restoring the default action.
            platform::raise(s);
            platform::raise(s);
            std::process::exit(128 + s)
        }
        Some(End::SpawnFailed(_)) | None => std::process::exit(SUPERVISOR_FAILED),
    }
}

/// The supervisor's exit code when it reports no status of the command
/// (read only when its report is lost).
pub const SUPERVISOR_FAILED: i32 = 127;

/// unguard's end of the control socket is our stdin; anything else (a
/// terminal, /dev/null) means there is no unguard to listen to.
fn control_socket() -> Option<UnixStream> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let sock = std::os::unix::net::UnixStream::from(fd);
    sock.local_addr().ok()?;
    sock.set_nonblocking(true).ok()?;
    UnixStream::from_std(sock).ok()
}

/// Join the cgroup, run the command, wait, kill what is left.
async fn supervise(opts: &Options, control: &mut Option<UnixStream>) -> Report {
    let mut report = Report::default();
    // Before the command starts, so no SIGTERM of the group can be missed.
    let mut term = signal(SignalKind::terminate()).ok();
    let mut chld = signal(SignalKind::child()).ok();
    if let Some(dir) = &opts.cgroup {
        let start = std::time::Instant::now();
        match std::fs::write(dir.join("cgroup.procs"), "0") {
            Ok(()) => report.joined_us = u64::try_from(start.elapsed().as_micros()).ok(),
            Err(e) => report.cgroup_error = Some(format!("{}: {e}", dir.display())),
        }
    }
    let Some(program) = opts.argv.first() else {
        report.end = Some(End::SpawnFailed("empty command".into()));
        return report;
    };
    let mut child = match tokio::process::Command::new(program)
        .args(&opts.argv[1..])
        .stdin(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            report.end = Some(End::SpawnFailed(format!("`{program}`: {e}")));
            return report;
        }
    };
    let signals = Signals {
        term: &mut term,
        chld: &mut chld,
    };
    let (status, grace_until) = wait(&mut child, opts.grace, signals, control).await;
    if let Some(until) = grace_until {
        // Terminating: the rest of the group gets what is left of the
        // grace to run its handlers, as unguard gave it before.
        let group = platform::own_pgid();
        while Instant::now() < until && !platform::group_members(group).is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    report.escaped = kill_subtree();
    report.end = status.map(|s| {
        use std::os::unix::process::ExitStatusExt;
        match (s.code(), s.signal()) {
            (Some(c), _) => End::Code(c),
            (None, Some(sig)) => End::Signal(sig),
            _ => End::Code(-1),
        }
    });
    report
}

/// The signals [`wait`] listens to (each `None` where it cannot be handled).
struct Signals<'a> {
    term: &'a mut Option<Signal>,
    chld: &'a mut Option<Signal>,
}

/// Wait for the leader. Returns its status (`None` if it could not be
/// waited for) and, once unguard asked the group to terminate, the end of
/// the grace. At the end of the grace, or when unguard is gone, the leader
/// and every other child are killed at once. Meanwhile every other child
/// that exits (an orphan of the command, reparented here) is reaped as it
/// does: a long suite that double-forks short-lived helpers (`git`) leaves
/// no zombies piling up under its supervisor.
async fn wait(
    child: &mut tokio::process::Child,
    grace: Duration,
    signals: Signals<'_>,
    control: &mut Option<UnixStream>,
) -> (Option<std::process::ExitStatus>, Option<Instant>) {
    let Signals { term, chld } = signals;
    let leader = child.id().map(|p| p as i32);
    let mut until: Option<Instant> = None;
    loop {
        let deadline = until.unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400));
        // Biased, SIGTERM first: the group's SIGTERM reaches us before the
        // leader can die of it, and both wake the runtime in the same turn;
        // taken in random order, the leader's exit could win and the rest of
        // the group would lose its grace.
        tokio::select! {
            biased;
            _ = recv(term), if until.is_none() => until = Some(Instant::now() + grace),
            status = child.wait() => {
                if until.is_none() && term_pending(term).await {
                    until = Some(Instant::now() + grace);
                }
                return (status.ok(), until);
            }
            _ = recv(chld) => reap_exited_orphans(leader),
            _ = tokio::time::sleep_until(deadline), if until.is_some() => break,
            _ = closed(control) => {
                // unguard is gone or wants it all dead: no grace.
                until = Some(Instant::now());
                break;
            }
        }
    }
    kill_children();
    let _ = child.start_kill();
    (child.wait().await.ok(), until)
}

/// The next SIGTERM; never when it could not be handled.
async fn recv(term: &mut Option<Signal>) {
    match term {
        Some(t) => {
            t.recv().await;
        }
        None => std::future::pending().await,
    }
}

/// Whether a SIGTERM has arrived that [`recv`] has not taken yet (polled
/// once, never waits).
async fn term_pending(term: &mut Option<Signal>) -> bool {
    tokio::time::timeout(Duration::ZERO, recv(term))
        .await
        .is_ok()
}

/// EOF (or an error) on the control socket; never without one.
async fn closed(control: &mut Option<UnixStream>) {
    let Some(c) = control else {
        return std::future::pending().await;
    };
    let mut buf = [0u8; 64];
    loop {
        match c.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// Reap every child that has exited, except the leader (`leader`: its
/// status is the runtime's to collect). Never waits.
fn reap_exited_orphans(leader: Option<i32>) {
    for pid in platform::child_pids() {
        if Some(pid) != leader {
            let _ = platform::try_reap(pid);
        }
    }
}

/// SIGKILL every child once, without reaping (the leader's status is the
/// runtime's to collect).
fn kill_children() {
    for pid in platform::child_pids() {
        let _ = platform::kill(pid, platform::Signal::Kill);
    }
}

/// After the leader is reaped: SIGKILL and reap children until `waitpid`
/// says none is left. A killed process's own children are reparented here
/// (we are their subreaper) and go in the next round. Returns how many of
/// the killed processes were outside our process group. Gives up after a
/// minute (a process stuck in the kernel cannot be reaped); unguard's own
/// nets then take over.
fn kill_subtree() -> usize {
    let group = platform::own_pgid();
    let mut escaped = std::collections::BTreeSet::new();
    let start = std::time::Instant::now();
    let mut pause = Duration::from_micros(200);
    loop {
        match platform::reap_any() {
            Reaped::NoChildren => break,
            Reaped::One(_) => continue,
            Reaped::Running => {}
        }
        if start.elapsed() > Duration::from_secs(60) {
            break;
        }
        for pid in platform::child_pids() {
            if platform::pgid_of(pid).is_some_and(|g| g != group) {
                escaped.insert(pid);
            }
            let _ = platform::kill(pid, platform::Signal::Kill);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
    escaped.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_round_trip() {
        for r in [
            Report::default(),
            Report {
                end: Some(End::Code(3)),
                escaped: 2,
                cgroup_error: None,
                joined_us: Some(14_200),
            },
            Report {
                end: Some(End::Signal(11)),
                escaped: 0,
                cgroup_error: Some("/sys/fs/cgroup/x: Permission denied".into()),
                joined_us: None,
            },
            Report {
                end: Some(End::SpawnFailed("`nope`: No such file".into())),
                escaped: 0,
                cgroup_error: None,
                joined_us: None,
            },
        ] {
            assert_eq!(Report::decode(&r.encode()), r);
        }
    }

    #[test]
    fn a_report_is_one_line_per_fact_and_junk_is_skipped() {
        let r = Report {
            end: Some(End::SpawnFailed("two\nlines".into())),
            ..Report::default()
        };
        assert_eq!(r.encode(), "spawn-failed two lines\nescaped 0\n");
        let d = Report::decode("garbage\nexit x\nexit 4\nescaped many\n");
        assert_eq!(d.end, Some(End::Code(4)));
        assert_eq!(d.escaped, 0);
        assert_eq!(Report::decode(""), Report::default());
    }
}
