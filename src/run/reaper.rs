//! Making sure no process a suite started outlives its run.
//!
//! The first net is the run's own supervisor and cgroup
//! ([`crate::run::isolation`]): every process the run starts stays in the
//! supervisor's subtree (it is their child subreaper) and, where available,
//! in the run's cgroup, and is killed when the run ends. Behind it, for a
//! supervisor that was itself killed and for runs without one, three nets
//! from tight to wide:
//! 1. every run is its own process group, killed as a whole
//!    ([`crate::run::child`]);
//! 2. every run carries a token in its environment; processes that left the
//!    group (`setsid`, `start_new_session=True`) still carry it and are found
//!    in `/proc/*/environ`;
//! 3. unguard is a *child subreaper* (`PR_SET_CHILD_SUBREAPER`): a process
//!    that double-forked out of its group **and** cleared its environment,
//!    and whose supervisor is gone, is reparented to unguard instead of init,
//!    so it shows up as a child of unguard that is not a running suite. Such
//!    orphans are killed and reaped after every run while every running
//!    suite has a supervisor (orphans of a live supervised run never reach
//!    unguard), otherwise as soon as no suite is running, and always at the
//!    end of the run.
//!
//! The registry of running suites (their process-group ids) also serves the
//! second Ctrl-C, which kills them all at once.
//!
//! Locking: [`spawn_registered`] spawns and registers a suite under the
//! registry's lock, and [`reap_orphans`] decides "orphan" and kills it under
//! the same lock, so a freshly spawned suite is never mistaken for an orphan.
//! Nothing sleeps under that lock: waiting for a killed orphan to die polls
//! `waitpid` without blocking, taking the lock only around each poll. One
//! reaper runs at a time (so an orphan is killed and counted once), and its
//! waits block a thread: async callers use [`reap_orphans_async`].

use std::collections::BTreeMap;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::run::platform::{self, ChildProc, Signal};

/// Environment variable carrying a token unique to one run.
pub const RUN_TOKEN_VAR: &str = "UNGUARD_RUN_TOKEN";

/// What the registry keeps of a running suite.
struct Running {
    token: String,
    /// A handle on unguard's end of the supervisor's control socket:
    /// shutting it down makes the supervisor kill its subtree at once.
    control: Option<UnixStream>,
    /// The run's cgroup, if it has one.
    cgroup: Option<PathBuf>,
}

/// Process-group ids (= leader pids: the supervisors, or the suites run
/// without one) of the suites running right now.
static ACTIVE: Mutex<BTreeMap<i32, Running>> = Mutex::new(BTreeMap::new());

/// Held for the whole of [`reap_orphans`]: one reaper at a time.
static REAPING: Mutex<()> = Mutex::new(());

static RUN_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A token unique to one run (this process's pid and a counter), set in the
/// run's environment so that its processes are found after they leave its
/// group (see the module doc).
pub fn new_run_token() -> String {
    let n = RUN_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

fn active() -> std::sync::MutexGuard<'static, BTreeMap<i32, Running>> {
    ACTIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Become a child subreaper (Linux ≥ 3.4). Idempotent; failure is harmless
/// (the token sweep still works), so it is only reported. Always false
/// where the platform has no subreaper.
pub fn become_subreaper() -> bool {
    platform::become_subreaper()
}

/// Spawn `cmd` and register its process group, atomically with respect to
/// [`reap_orphans`] (which must never mistake a fresh suite for an orphan),
/// with what [`kill_all_active`] needs: the run token, a handle on the
/// supervisor's control socket and the run's cgroup.
pub fn spawn_registered(
    cmd: &mut tokio::process::Command,
    token: &str,
    control: Option<UnixStream>,
    cgroup: Option<PathBuf>,
) -> std::io::Result<tokio::process::Child> {
    let mut g = active();
    let child = cmd.spawn()?;
    if let Some(pid) = child.id() {
        let running = Running {
            token: token.to_string(),
            control,
            cgroup,
        };
        g.insert(pid as i32, running);
    }
    Ok(child)
}

/// The suite's leader has been reaped: forget its group.
pub fn unregister(pgid: i32) {
    active().remove(&pgid);
}

/// SIGKILL every running suite (second Ctrl-C): each supervisor is told to
/// kill its subtree at once (its control socket shut down) and given a
/// moment for it; then its process group, its escaped processes, its cgroup
/// and every orphan go. Returns the number of suites.
pub fn kill_all_active() -> usize {
    let suites: Vec<(i32, Running)> = std::mem::take(&mut *active()).into_iter().collect();
    for (_, run) in &suites {
        if let Some(c) = &run.control {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
    }
    for (pgid, run) in &suites {
        if run.control.is_some() {
            crate::run::isolation::await_exit(*pgid, Duration::from_secs(2));
        }
        let _ = platform::kill_group(*pgid, Signal::Kill);
        sweep_token(&run.token);
        if let Some(dir) = &run.cgroup {
            crate::run::isolation::kill_and_remove(dir, *pgid);
        }
    }
    reap_orphans();
    suites.len()
}

/// Pids of live processes whose environment holds `VAR=token`.
fn processes_with_token(token: &str) -> Vec<i32> {
    platform::pids_with_env(format!("{RUN_TOKEN_VAR}={token}").as_bytes())
}

/// Kill every process that carries this run's token, until none is left
/// (a process may fork while we scan). Returns how many were killed.
/// Sleeps between rounds: async callers run it on a blocking thread.
pub fn sweep_token(token: &str) -> usize {
    let mut killed = 0;
    for _ in 0..20 {
        let pids = processes_with_token(token);
        if pids.is_empty() {
            break;
        }
        for pid in &pids {
            // The pid was just seen carrying this run's token.
            let _ = platform::kill(*pid, Signal::Kill);
        }
        killed += pids.len();
        std::thread::sleep(Duration::from_millis(10));
    }
    killed
}

/// Reap a child that is dead or dying, waiting at most `limit`. Each
/// `waitpid` (instant: `WNOHANG`) happens under the registry's lock, after
/// checking that `pid` is not a registered suite (the runtime reaps those);
/// the sleeps between them happen outside it.
fn reap(pid: i32, limit: Duration) -> bool {
    let start = Instant::now();
    loop {
        let reaped = {
            let g = active();
            if g.contains_key(&pid) {
                return false;
            }
            platform::try_reap(pid)
        };
        match reaped {
            Ok(true) => return true,
            Err(_) => return false,
            Ok(false) => {}
        }
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Kill and reap orphans that were reparented to unguard (see the module
/// docs). Only when every running suite has a supervisor (or none runs),
/// since then every other child of unguard is an orphan of a finished run
/// or a dead supervisor; otherwise only reaps the dead ones.
/// Returns how many live orphans were killed. Blocks for up to a second per
/// orphan (never under the registry's lock); from async code use
/// [`reap_orphans_async`].
pub fn reap_orphans() -> usize {
    reap_orphans_with(&platform::children_of_self, &reap)
}

/// [`reap_orphans`] on a blocking thread, off the async runtime.
pub async fn reap_orphans_async() -> usize {
    match tokio::task::spawn_blocking(reap_orphans).await {
        Ok(n) => n,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => 0,
    }
}

/// [`reap_orphans`] with the scan of unguard's children and the wait for a
/// child to die passed in (tests replace them).
fn reap_orphans_with(
    scan: &dyn Fn() -> Vec<ChildProc>,
    wait: &dyn Fn(i32, Duration) -> bool,
) -> usize {
    let _one_reaper = REAPING.lock().unwrap_or_else(|p| p.into_inner());
    let mut killed = 0;
    for _ in 0..50 {
        let children = scan();
        // Orphan or suite is decided under the registry's lock, and a live
        // orphan is killed before it is released: a suite that
        // `spawn_registered` starts meanwhile is either registered already
        // (and skipped) or not spawned yet. The scan may be stale, so each
        // candidate is looked at again (one read of its /proc entry): a pid
        // that is no longer our child may be someone else's by now. A kill
        // is instant; the waits come after the lock is released.
        let mut dying: Vec<(i32, Duration)> = Vec::new();
        {
            let g = active();
            // With every running suite under a supervisor, no live run's
            // orphan is reparented to unguard (it goes to its supervisor):
            // every unregistered child is left over from a finished run or
            // a killed supervisor, and can go now. A suite spawned without
            // one may still be talking to its own orphan: then only when
            // nothing runs.
            let idle = g.values().all(|r| r.control.is_some());
            for c in children {
                if g.contains_key(&c.pid) {
                    continue;
                }
                let Some(now) = platform::child(c.pid) else {
                    continue;
                };
                if now.zombie {
                    dying.push((c.pid, Duration::from_millis(100)));
                } else if idle {
                    let _ = platform::kill(c.pid, Signal::Kill);
                    killed += 1;
                    dying.push((c.pid, Duration::from_secs(1)));
                }
            }
        }
        let mut progressed = false;
        for (pid, limit) in dying {
            progressed |= wait(pid, limit);
        }
        if !progressed {
            return killed;
        }
    }
    killed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::TryLockError;

    /// These tests share the registry: one at a time. They never scan
    /// /proc (that would find the other tests' children): the scan is
    /// replaced by a list of this test's own children.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn serial() -> std::sync::MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn sleeper() -> std::process::Child {
        Command::new("sleep")
            .arg("30")
            .stdin(Stdio::null())
            .spawn()
            .unwrap()
    }

    fn running() -> Running {
        Running {
            token: "token".into(),
            control: None,
            cgroup: None,
        }
    }

    fn live(pid: i32) -> ChildProc {
        ChildProc { pid, zombie: false }
    }

    /// Whether another thread could take the registry's lock right now.
    fn registry_free_for_another_thread() -> bool {
        std::thread::scope(|s| {
            s.spawn(|| !matches!(ACTIVE.try_lock(), Err(TryLockError::WouldBlock)))
                .join()
                .unwrap()
        })
    }

    fn never_wait(pid: i32, _: Duration) -> bool {
        panic!("waited for {pid}, which is not an orphan")
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_idle_reaper_kills_and_reaps_an_orphan_without_holding_the_registry() {
        let _serial = serial();
        assert!(active().is_empty());
        let orphan = sleeper();
        let pid = orphan.id() as i32;
        let scans = AtomicUsize::new(0);
        let scan = || {
            // The first round finds it; the next round finds it gone.
            if scans.fetch_add(1, Ordering::SeqCst) == 0 {
                vec![live(pid)]
            } else {
                platform::child(pid).into_iter().collect()
            }
        };
        let free_while_waiting = AtomicBool::new(false);
        let wait = |p: i32, limit: Duration| {
            // A worker starting its suite (`spawn_registered`) must not wait
            // for this: the reaper sleeps here.
            free_while_waiting.store(registry_free_for_another_thread(), Ordering::SeqCst);
            reap(p, limit)
        };
        assert_eq!(reap_orphans_with(&scan, &wait), 1);
        assert!(free_while_waiting.load(Ordering::SeqCst));
        assert_eq!(platform::child(pid), None, "killed and reaped");
        drop(orphan);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_suite_registered_after_the_scan_is_not_taken_for_an_orphan() {
        let _serial = serial();
        let mut suite = sleeper();
        let pid = suite.id() as i32;
        // The scan sees the new process; `spawn_registered` registers it
        // before the reaper gets the lock.
        let scan = || {
            active().insert(pid, running());
            vec![live(pid)]
        };
        assert_eq!(reap_orphans_with(&scan, &never_wait), 0);
        unregister(pid);
        assert!(suite.try_wait().unwrap().is_none(), "the suite was killed");
        suite.kill().unwrap();
        suite.wait().unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_pid_that_is_no_longer_our_child_is_left_alone() {
        let _serial = serial();
        let mut gone = Command::new("true").spawn().unwrap();
        let pid = gone.id() as i32;
        gone.wait().unwrap();
        // Stale scan: the pid was reaped since (and may be reused).
        assert_eq!(reap_orphans_with(&|| vec![live(pid)], &never_wait), 0);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn while_an_unsupervised_suite_runs_only_dead_orphans_are_reaped() {
        let _serial = serial();
        let mut suite = sleeper();
        let mut orphan = sleeper();
        let dead = Command::new("true").spawn().unwrap();
        let (s, o, d) = (suite.id() as i32, orphan.id() as i32, dead.id() as i32);
        active().insert(s, running());
        let start = Instant::now();
        while !platform::child(d).is_some_and(|c| c.zombie) {
            assert!(start.elapsed() < Duration::from_secs(20), "never exited");
            std::thread::sleep(Duration::from_millis(5));
        }
        let scan = || [s, o, d].into_iter().filter_map(platform::child).collect();
        assert_eq!(reap_orphans_with(&scan, &reap), 0);
        unregister(s);
        assert_eq!(platform::child(d), None, "the dead one is reaped");
        assert!(suite.try_wait().unwrap().is_none(), "the suite was killed");
        assert!(
            orphan.try_wait().unwrap().is_none(),
            "a live orphan was killed"
        );
        for c in [&mut suite, &mut orphan] {
            c.kill().unwrap();
            c.wait().unwrap();
        }
        drop(dead);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn while_only_supervised_suites_run_a_live_orphan_is_killed() {
        let _serial = serial();
        let mut suite = sleeper();
        let orphan = sleeper();
        let (s, o) = (suite.id() as i32, orphan.id() as i32);
        let (ours, _theirs) = UnixStream::pair().unwrap();
        let mut supervised = running();
        supervised.control = Some(ours);
        active().insert(s, supervised);
        let scan = || [s, o].into_iter().filter_map(platform::child).collect();
        assert_eq!(reap_orphans_with(&scan, &reap), 1);
        unregister(s);
        assert_eq!(platform::child(o), None, "killed and reaped");
        assert!(suite.try_wait().unwrap().is_none(), "the suite was killed");
        suite.kill().unwrap();
        suite.wait().unwrap();
        drop(orphan);
    }
}
