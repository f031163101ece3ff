//! Making sure no process a suite started outlives its run.
//!
//! Three nets, from tight to wide:
//! 1. every run is its own process group, killed as a whole (`run`);
//! 2. every run carries a token in its environment; processes that left the
//!    group (`setsid`, `start_new_session=True`) still carry it and are found
//!    in `/proc/*/environ`;
//! 3. unguard is a *child subreaper* (`PR_SET_CHILD_SUBREAPER`): a process
//!    that double-forked out of its group **and** cleared its environment is
//!    reparented to unguard instead of init when its parent exits, so it
//!    shows up as a child of unguard that is not a running suite. Such
//!    orphans are killed and reaped as soon as no other suite is running
//!    (with `-j 1`: after every run), and always at the end of the run.
//!
//! The registry of running suites (their process-group ids) also serves the
//! second Ctrl-C, which kills them all at once.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Environment variable carrying a token unique to one run.
pub const RUN_TOKEN_VAR: &str = "UNGUARD_RUN_TOKEN";

/// Process-group ids (= leader pids) of the suites running right now, with
/// their run tokens.
static ACTIVE: Mutex<BTreeMap<i32, String>> = Mutex::new(BTreeMap::new());

static RUN_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

pub fn new_run_token() -> String {
    let n = RUN_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

fn active() -> std::sync::MutexGuard<'static, BTreeMap<i32, String>> {
    ACTIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Become a child subreaper (Linux ≥ 3.4). Idempotent; failure is harmless
/// (the token sweep still works), so it is only reported.
pub fn become_subreaper() -> bool {
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER, 1) takes no pointers.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
}

/// Spawn `cmd` and register its process group, atomically with respect to
/// [`reap_orphans`] (which must never mistake a fresh suite for an orphan).
pub fn spawn_registered(
    cmd: &mut tokio::process::Command,
    token: &str,
) -> std::io::Result<tokio::process::Child> {
    let mut g = active();
    let child = cmd.spawn()?;
    if let Some(pid) = child.id() {
        g.insert(pid as i32, token.to_string());
    }
    Ok(child)
}

/// The suite's leader has been reaped: forget its group.
pub fn unregister(pgid: i32) {
    active().remove(&pgid);
}

/// SIGKILL every running suite: its process group, its escaped processes
/// and every orphan (second Ctrl-C). Returns the number of suites.
pub fn kill_all_active() -> usize {
    let suites: Vec<(i32, String)> = active().iter().map(|(p, t)| (*p, t.clone())).collect();
    for (pgid, token) in &suites {
        // SAFETY: killpg takes no pointers; the ids are our children's groups.
        unsafe {
            libc::killpg(*pgid, libc::SIGKILL);
        }
        sweep_token(token);
    }
    active().clear();
    reap_orphans();
    suites.len()
}

/// Pids of live processes whose environment holds `VAR=token`.
fn processes_with_token(token: &str) -> Vec<i32> {
    let needle = format!("{RUN_TOKEN_VAR}={token}");
    let me = std::process::id() as i32;
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
                .unwrap_or(false)
        })
        .collect()
}

/// Kill every process that carries this run's token, until none is left
/// (a process may fork while we scan). Returns how many were killed.
pub fn sweep_token(token: &str) -> usize {
    let mut killed = 0;
    for _ in 0..20 {
        let pids = processes_with_token(token);
        if pids.is_empty() {
            break;
        }
        for pid in &pids {
            // SAFETY: kill takes no pointers; the pid was just seen carrying
            // this run's token.
            unsafe {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
        killed += pids.len();
        std::thread::sleep(Duration::from_millis(10));
    }
    killed
}

/// `(pid, state)` of every process whose parent is unguard.
fn children_of_me() -> Vec<(i32, char)> {
    let me = std::process::id() as i32;
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ppid …`; comm may contain spaces and parens.
            let rest = &stat[stat.rfind(')')? + 2..];
            let mut f = rest.split_whitespace();
            let state = f.next()?.chars().next()?;
            let ppid: i32 = f.next()?.parse().ok()?;
            (ppid == me).then_some((pid, state))
        })
        .collect()
}

/// Reap a child that is dead or dying, waiting at most `limit`.
fn reap(pid: i32, limit: Duration) -> bool {
    let start = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: status is a valid out-pointer; WNOHANG never blocks; the pid
        // is our child and not one tokio tracks (not in ACTIVE).
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid || r == -1 {
            return r == pid;
        }
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Kill and reap orphans that were reparented to unguard (see the module
/// docs). Only when no suite is running, since then every child of unguard
/// is an orphan of a finished run; otherwise only reaps the dead ones.
/// Returns how many live orphans were killed.
pub fn reap_orphans() -> usize {
    let mut killed = 0;
    for _ in 0..50 {
        let g = active();
        let children: Vec<(i32, char)> = children_of_me()
            .into_iter()
            .filter(|(pid, _)| !g.contains_key(pid))
            .collect();
        if children.is_empty() {
            return killed;
        }
        let idle = g.is_empty();
        let mut progressed = false;
        for (pid, state) in children {
            if state == 'Z' {
                progressed |= reap(pid, Duration::from_millis(100));
            } else if idle {
                // SAFETY: kill takes no pointers; pid is a child of ours that
                // no running suite owns.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
                killed += 1;
                progressed |= reap(pid, Duration::from_secs(1));
            }
        }
        drop(g);
        if !progressed {
            return killed;
        }
    }
    killed
}
