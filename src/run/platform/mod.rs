//! Every call into the operating system beyond std, behind safe functions.
//!
//! Process groups, signals, `waitpid` and the output pipe are plain unix
//! (`rustix::process`, `std::io::pipe`). What only Linux has sits in the
//! `linux` submodule: the child subreaper, the `/proc` scans, reflink copies
//! (`FICLONE`) and the ext4 allocation hint (`FS_TOPDIR_FL`). The `portable`
//! submodule stands in for it elsewhere: no subreaper, empty scans, no
//! reflink (so copies fall back to a plain copy), no hint, no private
//! network. A port touches this module only. Only [`netns`] needs `unsafe`
//! (two calls, each with its argument); marking inherited descriptors
//! close-on-exec, which rustix only offers through a raw descriptor number,
//! goes through the `close_fds` crate's safe function.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::process::Pid;

#[cfg(target_os = "linux")]
pub mod netns;
pub mod watch;

#[cfg(target_os = "linux")]
pub use netns::enter_private_network;

/// No network namespaces off Linux.
#[cfg(not(target_os = "linux"))]
pub fn enter_private_network() -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "network namespaces are Linux only",
    ))
}

#[cfg(target_os = "linux")]
pub use linux::*;
#[cfg(not(target_os = "linux"))]
pub use portable::*;

/// The signals unguard sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGTERM: the polite stop, first.
    Term,
    /// SIGKILL: what is left after the grace period.
    Kill,
}

impl Signal {
    fn os(self) -> rustix::process::Signal {
        match self {
            Signal::Term => rustix::process::Signal::TERM,
            Signal::Kill => rustix::process::Signal::KILL,
        }
    }
}

/// A process id as the OS wants it: ids ≤ 0 mean "every process" (or the
/// caller's group) to `kill`, so they are refused here.
fn pid(raw: i32) -> io::Result<Pid> {
    Pid::from_raw(raw.max(0)).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a process id: {raw}"),
        )
    })
}

/// unguard's real user id.
pub fn own_uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// `killpg(pgid, sig)`: signal every process in the group.
pub fn kill_group(pgid: i32, sig: Signal) -> io::Result<()> {
    Ok(rustix::process::kill_process_group(pid(pgid)?, sig.os())?)
}

/// Whether any process (zombies included) is left in the group
/// (`killpg(pgid, 0)`).
pub fn group_alive(pgid: i32) -> bool {
    pid(pgid).is_ok_and(|p| rustix::process::test_kill_process_group(p).is_ok())
}

/// `kill(pid, sig)`: signal one process.
pub fn kill(id: i32, sig: Signal) -> io::Result<()> {
    Ok(rustix::process::kill_process(pid(id)?, sig.os())?)
}

/// `waitpid(pid, WNOHANG)`: reap the child `pid` if it has exited. `Ok(false)`
/// while it runs; an error if it is not (or no longer) a child of ours.
/// Never blocks.
pub fn try_reap(id: i32) -> io::Result<bool> {
    let waited = rustix::process::waitpid(Some(pid(id)?), rustix::process::WaitOptions::NOHANG)?;
    Ok(waited.is_some())
}

/// What [`reap_any`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaped {
    /// This child had exited and is reaped now.
    One(i32),
    /// Children are left, all still running.
    Running,
    /// No child at all, running or exited (`ECHILD`): the authoritative
    /// "none left".
    NoChildren,
}

/// `waitpid(-1, WNOHANG)`: reap any one exited child. Never blocks.
pub fn reap_any() -> Reaped {
    match rustix::process::wait(rustix::process::WaitOptions::NOHANG) {
        Ok(Some((p, _))) => Reaped::One(p.as_raw_nonzero().get()),
        Ok(None) => Reaped::Running,
        Err(rustix::io::Errno::CHILD) => Reaped::NoChildren,
        // EINTR and the like: nothing reaped this time.
        Err(_) => Reaped::Running,
    }
}

/// The process group of `id` (`getpgid`); `None` once it is gone.
pub fn pgid_of(id: i32) -> Option<i32> {
    let p = pid(id).ok()?;
    rustix::process::getpgid(Some(p))
        .ok()
        .map(|g| g.as_raw_nonzero().get())
}

/// The caller's own process group.
pub fn own_pgid() -> i32 {
    rustix::process::getpgrp().as_raw_nonzero().get()
}

/// Send signal number `sig` to the caller itself, e.g. to die of the
/// signal a child died of. Returns when the signal did not end the process
/// (it is handled or ignored here) or is not a known signal.
pub fn raise(sig: i32) {
    if let Some(s) = rustix::process::Signal::from_named_raw(sig) {
        let _ = rustix::process::kill_process(rustix::process::getpid(), s);
    }
}

/// A pipe as `(read, write)`, both ends close-on-exec (a child gets its
/// copies through `Stdio`, which dup2s them; no other child inherits them).
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = std::io::pipe()?;
    Ok((read.into(), write.into()))
}

/// Mark every descriptor past stderr close-on-exec: whatever started
/// unguard may have left some open without the flag (a job runner's, seen
/// as fds 10 and 251), and every child would inherit them, down to the test
/// suite. unguard's own descriptors already have the flag (std opens
/// everything close-on-exec), and a child's stdin, stdout and stderr are
/// dup2'd into 0-2, which clears it: so only those three reach a suite.
/// Called first thing by `unguard run` and by the supervisor.
pub fn no_inherited_fds() {
    close_fds::set_fds_cloexec_threadsafe(3, &[]);
}

/// A child process of unguard, as seen by [`children_of_self`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildProc {
    /// Its process id.
    pub pid: i32,
    /// Exited, waiting to be reaped.
    pub zombie: bool,
}

/// The directory of cgroup `own` (a `0::` path of `/proc/<pid>/cgroup`)
/// under the first `cgroup2` mount of `mountinfo` (the text of
/// `/proc/<pid>/mountinfo`) whose root holds it.
pub fn cgroup2_dir_in(mountinfo: &str, own: &str) -> Option<std::path::PathBuf> {
    // `id parent major:minor root mount-point options… - fstype source …`,
    // with spaces in paths written as `\040`.
    let unescape = |s: &str| {
        s.replace("\\040", " ")
            .replace("\\011", "\t")
            .replace("\\012", "\n")
            .replace("\\134", "\\")
    };
    mountinfo.lines().find_map(|line| {
        let (mount, fs) = line.split_once(" - ")?;
        if fs.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        let f: Vec<&str> = mount.split_whitespace().collect();
        let (root, point) = (unescape(f.get(3)?), unescape(f.get(4)?));
        let rel = std::path::Path::new(own).strip_prefix(&root).ok()?;
        Some(std::path::Path::new(&point).join(rel))
    })
}

/// What became of a non-blocking attempt at an exclusive `flock`.
#[derive(Debug)]
pub enum Flock {
    /// The open file description `f` holds the lock now.
    Taken,
    /// Another open file description (another process) holds it.
    Busy,
    /// The file system cannot lock (some network mounts).
    Unsupported(io::Error),
}

/// Try to take an exclusive advisory lock on `f` (a file or a directory)
/// without waiting. It lasts as long as `f`'s open file description.
pub fn try_lock_exclusive(f: &File) -> Flock {
    use rustix::fs::FlockOperation;
    match rustix::fs::flock(f, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Flock::Taken,
        Err(rustix::io::Errno::WOULDBLOCK) => Flock::Busy,
        Err(e) => Flock::Unsupported(e.into()),
    }
}

/// Open `path` for reading without blocking on it: a FIFO with no writer
/// would otherwise block `open` forever.
pub fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
}

/// Whether a failed [`reflink`] means the filesystem (or this pair of
/// filesystems) cannot clone at all, so the rest of a tree should not try.
pub fn reflink_unsupported(e: &io::Error) -> bool {
    use rustix::io::Errno;
    e.kind() == io::ErrorKind::Unsupported
        || [Errno::OPNOTSUPP, Errno::NOTTY, Errno::NOSYS, Errno::XDEV]
            .iter()
            .any(|n| e.raw_os_error() == Some(n.raw_os_error()))
}

#[cfg(target_os = "linux")]
mod linux {
    use std::fs::File;
    use std::io;
    use std::path::Path;

    use super::ChildProc;

    /// Whether signal number `sig` was ignored (`SIG_IGN`) when unguard
    /// started, e.g. SIGHUP under `nohup`: the `SigIgn` mask of
    /// `/proc/self/status`, whose bit N-1 stands for signal N.
    pub fn signal_ignored(sig: u32) -> bool {
        let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
            return false;
        };
        ignored_in(&status, sig)
    }

    /// Whether the `SigIgn` mask of a `/proc/<pid>/status` text has
    /// signal `sig`'s bit set.
    pub(super) fn ignored_in(status: &str, sig: u32) -> bool {
        status
            .lines()
            .find_map(|l| l.strip_prefix("SigIgn:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .is_some_and(|mask| (1..=64).contains(&sig) && mask & (1 << (sig - 1)) != 0)
    }

    /// Become a child subreaper (`PR_SET_CHILD_SUBREAPER`, Linux ≥ 3.4): an
    /// orphaned descendant is reparented to unguard instead of init.
    pub fn become_subreaper() -> bool {
        // rustix takes the flag as an `Option<Pid>`: any `Some` sets it;
        // `Pid::INIT` passes 1, as `prctl(PR_SET_CHILD_SUBREAPER, 1)` does.
        rustix::process::set_child_subreaper(Some(rustix::process::Pid::INIT)).is_ok()
    }

    /// When process `pid` started (`starttime`, field 22 of
    /// `/proc/<pid>/stat`, in clock ticks since boot): with the pid, it
    /// names one process, as a pid alone does not once it is reused.
    /// `None` when there is no such process.
    pub fn start_time(pid: u32) -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        start_time_in(&stat)
    }

    /// Field 22 of a `/proc/<pid>/stat` text (comm, field 2, may hold
    /// spaces and parentheses: the fields after it are counted from its
    /// last `)`).
    pub(super) fn start_time_in(stat: &str) -> Option<u64> {
        let rest = stat.get(stat.rfind(')')? + 2..)?;
        rest.split_whitespace().nth(22 - 3)?.parse().ok()
    }

    /// `(state, ppid, pgrp)` from `/proc/<pid>/stat`.
    fn stat(pid: i32) -> Option<(char, i32, i32)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid pgrp …`; comm may contain spaces and parens.
        let rest = stat.get(stat.rfind(')')? + 2..)?;
        let mut f = rest.split_whitespace();
        let state = f.next()?.chars().next()?;
        let ppid = f.next()?.parse().ok()?;
        let pgrp = f.next()?.parse().ok()?;
        Some((state, ppid, pgrp))
    }

    fn pids() -> impl Iterator<Item = i32> {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
    }

    fn me() -> i32 {
        std::process::id() as i32
    }

    /// Every process whose parent is unguard.
    pub fn children_of_self() -> Vec<ChildProc> {
        pids().filter_map(child).collect()
    }

    /// `pid`, if it is (still) a child of unguard: one read of its
    /// `/proc/<pid>/stat`.
    pub fn child(pid: i32) -> Option<ChildProc> {
        let (state, ppid, _) = stat(pid)?;
        (ppid == me()).then_some(ChildProc {
            pid,
            zombie: state == 'Z',
        })
    }

    /// Pids of the caller's children, exited ones included: the
    /// `/proc/self/task/*/children` lists where the kernel keeps them
    /// (`CONFIG_PROC_CHILDREN`), else a scan of every process's parent. A
    /// child forked or reparented during the read may be missed: callers
    /// loop until [`super::reap_any`] says none is left.
    pub fn child_pids() -> Vec<i32> {
        let mut out = Vec::new();
        let mut listed = false;
        for task in std::fs::read_dir("/proc/self/task")
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                listed = true;
                out.extend(
                    text.split_whitespace()
                        .filter_map(|p| p.parse::<i32>().ok()),
                );
            }
        }
        if !listed {
            out = pids()
                .filter(|p| stat(*p).is_some_and(|s| s.1 == me()))
                .collect();
        }
        out
    }

    /// Live (not exited) processes other than the caller in process group
    /// `pgid`: a scan of `/proc`.
    pub fn group_members(pgid: i32) -> Vec<i32> {
        let me = me();
        pids()
            .filter(|p| *p != me)
            .filter(|p| stat(*p).is_some_and(|(state, _, g)| g == pgid && state != 'Z'))
            .collect()
    }

    /// Whether a per-run supervisor can attribute processes here (it needs
    /// a child subreaper).
    pub const SUPERVISOR: bool = true;

    /// The caller's own cgroup directory in the cgroup v2 hierarchy: the
    /// `cgroup2` mount from `/proc/self/mountinfo` joined with the `0::`
    /// path of `/proc/self/cgroup`. `None` without a v2 hierarchy (or when
    /// the caller's cgroup lies outside every v2 mount).
    pub fn cgroup2_own_dir() -> Option<std::path::PathBuf> {
        let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let own = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?;
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        super::cgroup2_dir_in(&mounts, own)
    }

    /// Pids of the live processes other than unguard whose environment holds
    /// `entry` (`NAME=value`), from `/proc/<pid>/environ`.
    pub fn pids_with_env(entry: &[u8]) -> Vec<i32> {
        let me = me();
        pids()
            .filter(|pid| *pid != me)
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/environ"))
                    .map(|env| env.split(|b| *b == 0).any(|kv| kv == entry))
                    .unwrap_or(false)
            })
            .collect()
    }

    /// Share `from`'s extents with the empty `to` (`ioctl(FICLONE)`).
    pub fn reflink(from: &File, to: &File) -> io::Result<()> {
        Ok(rustix::fs::ioctl_ficlone(to, from)?)
    }

    /// Mark `dir` as the top of a directory hierarchy (`chattr +T`,
    /// `FS_TOPDIR_FL`), which ext2/3/4 read as a hint to spread its
    /// subdirectories over the disk. Best effort: ignored where unsupported.
    pub fn mark_top_directory(dir: &Path) {
        use rustix::fs::{ioctl_getflags, ioctl_setflags, IFlags};
        let Ok(f) = File::open(dir) else {
            return;
        };
        if let Ok(flags) = ioctl_getflags(&f) {
            if !flags.contains(IFlags::TOPDIR) {
                let _ = ioctl_setflags(&f, flags | IFlags::TOPDIR);
            }
        }
    }

    /// Whether `dir` carries `FS_TOPDIR_FL`; `None` where the filesystem
    /// has no such flags.
    pub fn is_top_directory(dir: &Path) -> Option<bool> {
        let f = File::open(dir).ok()?;
        let flags = rustix::fs::ioctl_getflags(&f).ok()?;
        Some(flags.contains(rustix::fs::IFlags::TOPDIR))
    }
}

/// Stand-ins for what only Linux has (see the module docs).
#[cfg(not(target_os = "linux"))]
mod portable {
    use std::fs::File;
    use std::io;
    use std::path::Path;

    use super::ChildProc;

    /// No child subreaper here.
    pub fn become_subreaper() -> bool {
        false
    }

    /// No process start times here: scratch dirs are never swept.
    pub fn start_time(_pid: u32) -> Option<u64> {
        None
    }

    /// No child subreaper, so no per-run supervisor: runs are spawned
    /// directly (process group and token only).
    pub const SUPERVISOR: bool = false;

    pub fn child_pids() -> Vec<i32> {
        Vec::new()
    }

    pub fn group_members(_pgid: i32) -> Vec<i32> {
        Vec::new()
    }

    /// No cgroups here.
    pub fn cgroup2_own_dir() -> Option<std::path::PathBuf> {
        None
    }

    /// Not known here: handled as not ignored.
    pub fn signal_ignored(_sig: u32) -> bool {
        false
    }

    /// No `/proc` to scan: no orphan is ever found.
    pub fn children_of_self() -> Vec<ChildProc> {
        Vec::new()
    }

    pub fn child(_pid: i32) -> Option<ChildProc> {
        None
    }

    /// No `/proc` to scan: the token sweep finds nothing.
    pub fn pids_with_env(_entry: &[u8]) -> Vec<i32> {
        Vec::new()
    }

    /// No reflink: the caller falls back to a plain copy.
    pub fn reflink(_from: &File, _to: &File) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    pub fn mark_top_directory(_dir: &Path) {}

    pub fn is_top_directory(_dir: &Path) -> Option<bool> {
        None
    }
}

#[cfg(test)]
mod tests {
    #[cfg(target_os = "linux")]
    #[test]
    fn ignored_signals_are_read_from_proc() {
        // Rust programs start with SIGPIPE ignored, whatever they inherit;
        // SIGHUP depends on how the test binary was started (ignored under
        // `nohup`), so it is checked on fixed `status` texts below.
        assert!(super::signal_ignored(13));
        assert!(!super::signal_ignored(0));
        assert!(!super::signal_ignored(65));
        let status = |mask: &str| {
            format!("Name:\tx\nSigBlk:\t0000000000000001\nSigIgn:\t{mask}\nSigCgt:\t0\n")
        };
        // Bit N-1 is signal N: 0x1001 is SIGHUP (1) and SIGPIPE (13).
        let nohup = status("0000000000001001");
        assert!(super::linux::ignored_in(&nohup, 1));
        assert!(super::linux::ignored_in(&nohup, 13));
        assert!(!super::linux::ignored_in(&nohup, 2));
        let plain = status("0000000000001000");
        assert!(!super::linux::ignored_in(&plain, 1));
        assert!(super::linux::ignored_in(&plain, 13));
        assert!(!super::linux::ignored_in(&plain, 0));
        assert!(!super::linux::ignored_in(&plain, 65));
        assert!(!super::linux::ignored_in("SigIgn:\tzz\n", 1));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn start_times_come_from_field_22() {
        let stat = "42 (a b) c)) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(super::linux::start_time_in(stat), Some(987654));
        assert_eq!(super::linux::start_time_in("42 (x) S 1"), None);
        let me = super::start_time(std::process::id());
        assert!(me.is_some());
        assert_eq!(me, super::start_time(std::process::id()));
    }

    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    fn sleeper() -> std::process::Child {
        Command::new("sleep")
            .arg("30")
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap()
    }

    /// Polls `f` until true; generous, since the machine may be busy.
    fn eventually(mut f: impl FnMut() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if f() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    }

    #[test]
    fn pipe_carries_bytes_and_both_ends_close_on_exec() {
        let (read, write) = pipe().unwrap();
        for fd in [&read, &write] {
            let flags = rustix::io::fcntl_getfd(fd).unwrap();
            assert!(flags.contains(rustix::io::FdFlags::CLOEXEC));
        }
        let mut w = std::fs::File::from(write);
        w.write_all(b"through the pipe\n").unwrap();
        drop(w);
        let mut got = String::new();
        std::fs::File::from(read).read_to_string(&mut got).unwrap();
        assert_eq!(got, "through the pipe\n");
    }

    #[test]
    fn kill_group_signals_the_group_and_group_alive_sees_it_go() {
        let mut child = sleeper();
        let pgid = child.id() as i32;
        assert!(group_alive(pgid));
        kill_group(pgid, Signal::Term).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(15));
        assert!(!group_alive(pgid), "reaped: the group is gone");
        assert!(kill_group(pgid, Signal::Kill).is_err());
    }

    #[test]
    fn ids_below_one_are_refused_not_broadcast() {
        for id in [0, -1] {
            assert!(!group_alive(id));
            let e = kill_group(id, Signal::Kill).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
            let e = kill(id, Signal::Kill).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        }
    }

    #[test]
    fn kill_and_try_reap_one_child() {
        let child = sleeper();
        let pid = child.id() as i32;
        assert!(!try_reap(pid).unwrap(), "running: nothing to reap");
        kill(pid, Signal::Kill).unwrap();
        assert!(eventually(|| try_reap(pid).unwrap()));
        // Reaped: no longer a child of ours.
        assert!(try_reap(pid).is_err());
        // `child` is not waited on again (that would reap a reaped pid).
        drop(child);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn children_are_listed_with_their_zombie_state() {
        let child = sleeper();
        let pid = child.id() as i32;
        let me = ChildProc { pid, zombie: false };
        assert!(children_of_self().contains(&me));
        assert_eq!(self::child(pid), Some(me));
        kill(pid, Signal::Kill).unwrap();
        assert!(eventually(|| self::child(pid).is_some_and(|c| c.zombie)));
        assert!(children_of_self().contains(&ChildProc { pid, zombie: true }));
        assert!(try_reap(pid).unwrap());
        assert_eq!(self::child(pid), None);
        assert!(children_of_self().iter().all(|c| c.pid != pid));
        // Not ours: unguard's parent, and a pid that cannot exist.
        assert_eq!(
            self::child(std::os::unix::process::parent_id() as i32),
            None
        );
        assert_eq!(self::child(i32::MAX), None);
        drop(child);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn processes_are_found_by_an_environment_entry() {
        let entry = format!("UNGUARD_PLATFORM_TEST={}", std::process::id());
        let mut child = Command::new("sleep")
            .arg("30")
            .env("UNGUARD_PLATFORM_TEST", std::process::id().to_string())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        assert!(eventually(|| pids_with_env(entry.as_bytes()) == vec![pid]));
        // Only whole entries match, and never unguard itself.
        assert!(pids_with_env(&entry.as_bytes()[..entry.len() - 1]).is_empty());
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(pids_with_env(entry.as_bytes()).is_empty());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_subreaper_adopts_orphaned_grandchildren() {
        assert!(become_subreaper());
        // The shell starts a grandchild and exits: the grandchild is ours now.
        let out = Command::new("sh")
            .args(["-c", "sleep 30 >/dev/null 2>&1 & echo $!"])
            .output()
            .unwrap();
        let orphan: i32 = String::from_utf8(out.stdout)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(eventually(|| self::child(orphan).is_some()));
        kill(orphan, Signal::Kill).unwrap();
        assert!(eventually(|| try_reap(orphan).unwrap()));
    }

    #[test]
    fn reflink_copies_or_says_why_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("from"), "shared bytes\n").unwrap();
        let from = std::fs::File::open(dir.path().join("from")).unwrap();
        let to = std::fs::File::create(dir.path().join("to")).unwrap();
        match reflink(&from, &to) {
            Ok(()) => assert_eq!(
                std::fs::read_to_string(dir.path().join("to")).unwrap(),
                "shared bytes\n"
            ),
            // Filesystems without extents to share (tmpfs, ext4) say so;
            // btrfs may refuse one file with EINVAL.
            Err(e) => assert!(
                reflink_unsupported(&e)
                    || e.raw_os_error() == Some(rustix::io::Errno::INVAL.raw_os_error()),
                "{e}"
            ),
        }
        // A read-only destination is refused, whatever the filesystem.
        let ro = std::fs::File::open(dir.path().join("to")).unwrap();
        assert!(reflink(&from, &ro).is_err());
    }

    #[test]
    fn reflink_failures_that_mean_never_again() {
        use rustix::io::Errno;
        let os = |n: Errno| io::Error::from_raw_os_error(n.raw_os_error());
        for n in [Errno::OPNOTSUPP, Errno::NOTTY, Errno::NOSYS, Errno::XDEV] {
            assert!(reflink_unsupported(&os(n)), "{n:?}");
        }
        assert!(reflink_unsupported(&io::Error::from(
            io::ErrorKind::Unsupported
        )));
        for n in [Errno::INVAL, Errno::NOSPC, Errno::PERM] {
            assert!(!reflink_unsupported(&os(n)), "{n:?}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn top_directory_flag_is_set_on_ext4() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(is_top_directory(&dir.path().join("missing")), None);
        let fs = rustix::fs::statfs(dir.path()).unwrap();
        // EXT2/3/4_SUPER_MAGIC, in whatever integer type `f_type` has here.
        if fs.f_type != 0xEF53 {
            // Elsewhere only a hint the filesystem may ignore: never an error.
            mark_top_directory(dir.path());
            eprintln!("skipped: the temp dir is not on ext2/3/4");
            return;
        }
        assert_eq!(is_top_directory(dir.path()), Some(false));
        mark_top_directory(dir.path());
        assert_eq!(is_top_directory(dir.path()), Some(true));
        mark_top_directory(dir.path());
        assert_eq!(is_top_directory(dir.path()), Some(true));
    }
}
