//! How every process a run starts is attributed to that run, whatever it
//! does to its session, group or environment, and killed when the run ends.
//!
//! Each test command runs under its own supervisor ([`crate::run::supervise`]),
//! a child subreaper: the run's processes stay in its subtree, and it kills
//! them all when the command's leader exits. Where unguard may create a
//! cgroup v2 below its own (`--isolation auto`, the default), each run also
//! gets one: the supervisor joins it before the command starts, and unguard
//! empties it with `cgroup.kill` and removes it when the run ends, which
//! catches even what a SIGKILLed supervisor left behind. `auto` drops the
//! cgroup once joining one proves slow ([`JOIN_BUDGET`]); `--isolation
//! cgroup` keeps it whatever it costs; `--isolation subreaper` forces the
//! supervisor alone (any uid, any kernel with `PR_SET_CHILD_SUBREAPER`). Without a subreaper (not Linux)
//! runs are spawned directly: process group and run token only
//! ([`crate::run::reaper`]).

use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::run::platform;
use crate::run::supervise::{self, Report};

/// `--isolation`: which mechanisms attribute a run's processes to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// The supervisor, plus a per-run cgroup v2 where unguard may create one
    /// and joining it is cheap (see [`JOIN_BUDGET`]).
    #[default]
    Auto,
    /// The supervisor, plus a per-run cgroup v2 wherever unguard may create
    /// one, whatever joining it costs.
    Cgroup,
    /// The per-run supervisor (child subreaper) alone.
    Subreaper,
}

static MODE: AtomicU8 = AtomicU8::new(0);

/// Set the mode for every run this process makes from now on.
pub fn set_mode(mode: Isolation) {
    MODE.store(mode as u8, Ordering::Relaxed);
}

fn mode() -> Isolation {
    match MODE.load(Ordering::Relaxed) {
        0 => Isolation::Auto,
        1 => Isolation::Cgroup,
        _ => Isolation::Subreaper,
    }
}

/// Under `auto`, the most a supervisor may take to join its cgroup. Moving
/// a process between cgroups waits for an RCU grace period on kernels that
/// do not favour dynamic changes (`favordynmods`): 5 to 35 ms per run on
/// the bench machine, against 0.3 ms when it is fast; a suite of 0.2 s
/// would pay up to 15 % for it. Once a join took longer, `auto` stops
/// creating cgroups for the rest of the run.
pub const JOIN_BUDGET: Duration = Duration::from_millis(2);

/// The first join over [`JOIN_BUDGET`], in microseconds (0: none yet).
static SLOW_JOIN_US: AtomicU64 = AtomicU64::new(0);

/// A supervisor took `took` to join its cgroup.
pub fn note_join(took: Duration) {
    if took > JOIN_BUDGET {
        let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX).max(1);
        let _ = SLOW_JOIN_US.compare_exchange(0, us, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// Why `auto` runs without a cgroup now: the slow join it saw.
fn slow_join() -> Option<Duration> {
    match SLOW_JOIN_US.load(Ordering::Relaxed) {
        0 => None,
        us => Some(Duration::from_micros(us)),
    }
}

/// The program unguard starts its supervisors from: its own binary, even
/// when the file was replaced or deleted since (a rebuild during a run).
const SELF_EXE: &str = "/proc/self/exe";

/// One run's isolation, made before its spawn.
pub struct Setup {
    /// The control socket: unguard's end and the supervisor's (its stdin).
    /// `None`: spawned directly, without a supervisor.
    pub control: Option<(UnixStream, OwnedFd)>,
    /// The run's own cgroup; `None` when it runs without one.
    pub cgroup: Option<Cgroup>,
    /// `auto` left the cgroup out: a join took this long.
    pub slow_join: Option<Duration>,
    /// The supervisor starts the command in a network namespace of its own
    /// ([`crate::run::network`]).
    pub netns: bool,
}

impl Setup {
    /// Supervisor and cgroup as the mode and the platform allow; silently
    /// less where something is not available. `netns`: the run gets its own
    /// network, which only a supervisor gives it: where there is none, the
    /// setup is `Err` (the run must not start shared).
    pub fn prepare(netns: bool) -> Result<Setup, String> {
        let no_supervisor = |why: &str| match netns {
            true => Err(format!(
                "could not give the run its own network namespace: {why}"
            )),
            false => Ok(Setup::direct()),
        };
        if !platform::SUPERVISOR || !Path::new(SELF_EXE).exists() {
            return no_supervisor("no per-run supervisor here");
        }
        let Ok((ours, theirs)) = UnixStream::pair() else {
            return no_supervisor("no control socket for its supervisor");
        };
        let (slow_join, cgroup) = match (mode(), slow_join()) {
            (Isolation::Auto, Some(took)) => (Some(took), None),
            (Isolation::Auto | Isolation::Cgroup, _) => (None, Cgroup::create()),
            (Isolation::Subreaper, _) => (None, None),
        };
        Ok(Setup {
            control: Some((ours, theirs.into())),
            cgroup,
            slow_join,
            netns,
        })
    }

    /// No supervisor, no cgroup.
    pub fn direct() -> Setup {
        Setup {
            control: None,
            cgroup: None,
            slow_join: None,
            netns: false,
        }
    }

    /// One line for the log header: which mechanisms this run is under.
    pub fn describe(&self) -> String {
        let processes = match (&self.control, &self.cgroup, self.slow_join) {
            (Some(_), Some(cg), _) => format!(
                "supervisor (child subreaper) in cgroup {}",
                cg.dir.display()
            ),
            (Some(_), None, Some(took)) => format!(
                "supervisor (child subreaper); no cgroup: joining one took {:.1} ms here, over the {} ms budget of --isolation auto",
                took.as_secs_f64() * 1000.0,
                JOIN_BUDGET.as_millis()
            ),
            (Some(_), None, None) => "supervisor (child subreaper)".into(),
            (None, _, _) => "process group and run token (no supervisor)".into(),
        };
        match self.netns {
            true => format!("{processes}; its own network namespace (loopback only)"),
            false => processes,
        }
    }

    /// The supervisor's argv (after the program, [`SELF_EXE`]) for `argv`.
    pub fn supervisor_args(&self, argv: &[String], grace: Duration) -> Vec<String> {
        let mut args = vec![
            supervise::SUBCOMMAND.to_string(),
            "--grace".into(),
            format!("{:.3}", grace.as_secs_f64()),
        ];
        if let Some(cg) = &self.cgroup {
            args.push("--cgroup".into());
            args.push(cg.dir.display().to_string());
        }
        if self.netns {
            args.push("--netns".into());
        }
        args.push("--".into());
        args.extend(argv.iter().cloned());
        args
    }
}

/// The program supervisors are started from: unguard's own binary,
/// through `/proc/self/exe`.
pub fn self_exe() -> &'static str {
    SELF_EXE
}

/// The supervisor's report, once it has exited (its end of the socket is
/// closed then; what is there is all there will be).
pub fn read_report(control: &UnixStream) -> Option<Report> {
    let mut text = Vec::new();
    let _ = control.set_nonblocking(true);
    let _ = (&*control).read_to_end(&mut text);
    let text = String::from_utf8_lossy(&text);
    (!text.is_empty()).then(|| Report::decode(&text))
}

/// Wait up to `limit` until child `pid` (a supervisor) has exited; false
/// if it still runs.
pub fn await_exit(pid: i32, limit: Duration) -> bool {
    let start = Instant::now();
    loop {
        if platform::child(pid).is_none_or(|c| c.zombie) {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A per-run cgroup v2 directory below unguard's own. Emptied (`cgroup.kill`)
/// and removed by [`Cgroup::finish`], or on drop.
pub struct Cgroup {
    dir: PathBuf,
    done: bool,
}

/// unguard's own cgroup v2 directory, when it may create child groups there.
static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
/// Set once creating a group failed: not retried for every run.
static UNAVAILABLE: AtomicBool = AtomicBool::new(false);
static COUNTER: AtomicU64 = AtomicU64::new(0);

impl Cgroup {
    /// A fresh, empty group `<own>/unguard-<pid>-<n>`, or `None` where
    /// there is no cgroup v2, it is not writable, or it has no
    /// `cgroup.kill` (Linux < 5.14).
    pub fn create() -> Option<Cgroup> {
        if UNAVAILABLE.load(Ordering::Relaxed) {
            return None;
        }
        let base = BASE
            .get_or_init(|| {
                let base = platform::cgroup2_own_dir()?;
                remove_stale(&base);
                Some(base)
            })
            .as_ref()?;
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("unguard-{}-{n}", std::process::id()));
        let usable = std::fs::create_dir(&dir).is_ok();
        if usable && dir.join("cgroup.kill").exists() {
            return Some(Cgroup { dir, done: false });
        }
        if usable {
            let _ = std::fs::remove_dir(&dir);
        }
        UNAVAILABLE.store(true, Ordering::Relaxed);
        None
    }

    /// The cgroup's directory (under the cgroup v2 mount).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Kill whatever is still in the group, wait until it is empty, remove
    /// it. Returns how many processes outside process group `pgid` were
    /// still in it (none, unless the supervisor was killed before it could
    /// clean up).
    pub fn finish(mut self, pgid: i32) -> usize {
        self.done = true;
        kill_and_remove(&self.dir, pgid)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if !self.done {
            kill_and_remove(&self.dir, 0);
        }
    }
}

/// Whether the group (or one below it) still holds a process; unreadable
/// counts as populated.
fn populated(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("cgroup.events"))
        .map(|e| e.lines().any(|l| l.trim() == "populated 1"))
        .unwrap_or(true)
}

/// `cgroup.kill` the group at `dir` when it holds processes, wait (up to
/// 10 s) until it is empty, then remove it and any group created below it.
/// Returns how many of the processes it held directly were outside process
/// group `pgid`. Blocks: async callers run it on a blocking thread.
pub fn kill_and_remove(dir: &Path, pgid: i32) -> usize {
    if !dir.exists() {
        return 0;
    }
    let mut held = 0;
    if populated(dir) {
        held = std::fs::read_to_string(dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse::<i32>().ok())
            .filter(|p| platform::pgid_of(*p).is_some_and(|g| g != pgid))
            .count();
        let _ = std::fs::write(dir.join("cgroup.kill"), "1");
        let start = Instant::now();
        while populated(dir) && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    remove_tree(dir);
    held
}

/// `rmdir` a cgroup and the groups below it, deepest first.
fn remove_tree(dir: &Path) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            remove_tree(&e.path());
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// Groups left by an unguard that was killed before it could remove them
/// (`unguard-<pid>-<n>` whose pid is gone): emptied and removed.
fn remove_stale(base: &Path) {
    for e in std::fs::read_dir(base).into_iter().flatten().flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("unguard-"))
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            kill_and_remove(&e.path(), 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supervisor_args_carry_grace_cgroup_and_the_command_verbatim() {
        let s = Setup {
            control: None,
            cgroup: Some(Cgroup {
                dir: PathBuf::from("/sys/fs/cgroup/unguard-1-0"),
                done: true,
            }),
            slow_join: None,
            netns: true,
        };
        let argv = vec!["sh".to_string(), "-c".into(), "--grace x".into()];
        assert_eq!(
            s.supervisor_args(&argv, Duration::from_millis(2500)),
            [
                "__supervise",
                "--grace",
                "2.500",
                "--cgroup",
                "/sys/fs/cgroup/unguard-1-0",
                "--netns",
                "--",
                "sh",
                "-c",
                "--grace x"
            ]
        );
    }
}
