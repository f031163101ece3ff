//! Scratch dirs in the temp dir: each one made private and registered from
//! the moment it exists until it is removed (so that a second Ctrl-C can
//! remove them all), with an owner file naming the unguard that made it (so
//! that a later run can sweep the dirs of one that was killed).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::error::{Context, Error, Result};
use tempfile::TempDir;

use crate::run::platform;

/// Set by the signal handler; long copies check it and stop early.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Every scratch dir that exists right now (worker copies and the pristine
/// copy), for the second Ctrl-C, which exits without unwinding (no `Drop`
/// runs) and removes them itself. Once it has, no new one can be made.
static LIVE_SCRATCH: Mutex<Live> = Mutex::new(Live {
    dirs: Vec::new(),
    closed: false,
});

struct Live {
    dirs: Vec<PathBuf>,
    /// The second Ctrl-C took the list: making a scratch dir now fails.
    closed: bool,
}

fn live() -> std::sync::MutexGuard<'static, Live> {
    LIVE_SCRATCH.lock().unwrap_or_else(|e| e.into_inner())
}

/// A scratch dir in the temp dir, registered in [`LIVE_SCRATCH`] from the
/// moment it exists until it is removed (the fields drop in this order).
#[derive(Debug)]
pub(super) struct Area {
    _dir: TempDir,
    _live: LiveScratch,
    /// Its canonical path.
    pub(super) base: PathBuf,
}

impl Area {
    /// Make and register a fresh private (0700) dir named `<prefix>XXXXXX`; refused once
    /// the run is interrupted.
    pub(super) fn new(prefix: &str) -> Result<Area> {
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| {
            sweep_orphans(&std::env::temp_dir());
        });
        let dir = {
            // Made under the lock: the second Ctrl-C either sees it or comes first.
            let mut live = live();
            if live.closed || INTERRUPTED.load(Ordering::SeqCst) {
                return Err(Error::Interrupted);
            }
            // 0700: the temp dir is shared, and the copy holds the user's
            // sources and secrets (tempfile alone leaves it to the umask).
            let dir = tempfile::Builder::new()
                .prefix(prefix)
                .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
                .tempdir()
                .context("creating a scratch directory")?;
            live.dirs.push(dir.path().to_path_buf());
            // Who owns it, for the sweep of a later run should this one be
            // killed before it can remove it (best effort: without the
            // file, the dir is never swept).
            if let Some(owner) = Owner::me() {
                let _ = std::fs::write(dir.path().join(OWNER_FILE), owner.line());
            }
            dir
        };
        let live = LiveScratch(dir.path().to_path_buf());
        let base = dir
            .path()
            .canonicalize()
            .context("resolving the scratch directory")?;
        Ok(Area {
            _dir: dir,
            _live: live,
            base,
        })
    }

    /// A fresh `tree-<suffix>` dir inside: the tree gets a name of its own
    /// (the temp dir's random suffix), so that on ext4 each copy lands in a
    /// block group of its own (see [`spread_subdirectories`]).
    pub(super) fn tree_dir(&self) -> Result<PathBuf> {
        spread_subdirectories(&self.base);
        let suffix = self
            .base
            .file_name()
            .map(|n| {
                n.to_string_lossy()
                    .rsplit('-')
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_default();
        let tree = self.base.join(format!("tree-{suffix}"));
        std::fs::create_dir(&tree).with_context(|| format!("creating {}", tree.display()))?;
        Ok(tree)
    }
}

/// The file in every scratch dir naming the unguard that made it.
const OWNER_FILE: &str = "unguard-owner";

/// The names unguard gives its scratch dirs in the temp dir.
fn is_scratch_name(name: &str) -> bool {
    if name.strip_prefix("unguard-pristine-").is_some() {
        return true;
    }
    name.strip_prefix("unguard-w")
        .and_then(|rest| rest.split_once('-'))
        .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The unguard process that made a scratch dir: its pid and start time
/// (a pid alone names another process once it is reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Owner {
    pid: u32,
    start: u64,
}

impl Owner {
    /// This process; `None` where start times cannot be read.
    fn me() -> Option<Owner> {
        let pid = std::process::id();
        crate::run::platform::start_time(pid).map(|start| Owner { pid, start })
    }

    fn line(&self) -> String {
        format!("{} {}\n", self.pid, self.start)
    }

    fn parse(text: &str) -> Option<Owner> {
        let mut f = text.split_whitespace();
        let pid = f.next()?.parse().ok()?;
        let start = f.next()?.parse().ok()?;
        f.next().is_none().then_some(Owner { pid, start })
    }

    /// Whether the process is still running: the same pid with the same
    /// start time.
    fn alive(&self) -> bool {
        crate::run::platform::start_time(self.pid) == Some(self.start)
    }
}

/// Remove the scratch dirs in `tmp` whose unguard is gone (killed with
/// `kill -9` or by the OOM killer before it could remove them: each is a
/// full copy of a user's source). Only a real directory (never a symlink)
/// named as unguard names them, owned by this user, with an owner file
/// (a regular file) naming a process that is not running; a dir whose
/// owner is alive, or whose owner file is missing or unreadable (one being
/// made right now), stays. Returns how many were removed.
pub fn sweep_orphans(tmp: &Path) -> usize {
    use std::os::unix::fs::MetadataExt;
    if Owner::me().is_none() {
        return 0;
    }
    let uid = crate::run::platform::own_uid();
    let mut removed = 0;
    for e in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
        if !e.file_name().to_str().is_some_and(is_scratch_name) {
            continue;
        }
        let dir = e.path();
        let Ok(meta) = dir.symlink_metadata() else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid {
            continue;
        }
        let file = dir.join(OWNER_FILE);
        let owner = file
            .symlink_metadata()
            .ok()
            .filter(|m| m.is_file())
            .and_then(|_| std::fs::read_to_string(&file).ok())
            .and_then(|t| Owner::parse(&t));
        if owner.is_some_and(|o| !o.alive())
            && crate::workspace::tree_state::remove_any(&dir).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// Deregisters a scratch dir from [`LIVE_SCRATCH`] (after it is removed).
#[derive(Debug)]
struct LiveScratch(PathBuf);

impl Drop for LiveScratch {
    fn drop(&mut self) {
        live().dirs.retain(|p| p != &self.0);
    }
}

/// Remove every live scratch dir now (second Ctrl-C); no new one can be
/// made after. Copy threads stop at their next file (the run is
/// interrupted), so a dir is removed again until nothing is left of it.
/// Returns how many.
pub fn remove_live_scratch_dirs() -> usize {
    INTERRUPTED.store(true, Ordering::SeqCst);
    let dirs = {
        let mut live = live();
        live.closed = true;
        live.dirs.clone()
    };
    for d in &dirs {
        for _ in 0..200 {
            match crate::workspace::tree_state::remove_any(d) {
                Ok(()) if !d.exists() => break,
                _ => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        }
    }
    dirs.len()
}

/// On ext2/3/4, mark `dir` as the top of a directory hierarchy
/// (`chattr +T`): the Orlov allocator then puts each new subdirectory in a
/// lightly used block group, starting its search from a hash of the
/// subdirectory's name, instead of next to `dir`. Without it every copy
/// lands in the temp dir's group, where every temp file of the machine comes
/// and goes; on an ext4 without a journal, allocating an inode there first
/// skips each inode deleted in the last 60 s (360 s while its inode table
/// is dirty), one lookup each, so copying 10,000 files got several times
/// slower after any large delete (see bench/RESULTS.md). Only an allocation
/// hint: ignored where unsupported.
pub(super) fn spread_subdirectories(dir: &Path) {
    platform::mark_top_directory(dir);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sweep_removes_only_scratch_dirs_whose_owner_is_gone() {
        let tmp = tempfile::tempdir().unwrap();
        let me = Owner::me().expect("start times on Linux");
        let reused = Owner {
            start: me.start + 1,
            ..me
        };
        let make = |name: &str, owner: Option<Owner>| {
            let d = tmp.path().join(name);
            std::fs::create_dir_all(d.join("tree-x/src")).unwrap();
            std::fs::write(d.join("tree-x/src/secret.py"), "KEY = 1\n").unwrap();
            if let Some(o) = owner {
                std::fs::write(d.join(OWNER_FILE), o.line()).unwrap();
            }
            d
        };
        let dead = [
            make("unguard-pristine-aaaa", Some(reused)),
            make("unguard-w0-bbbb", Some(reused)),
            make("unguard-w12-cccc", Some(reused)),
        ];
        let kept = [
            make("unguard-w1-alive", Some(me)),
            make("unguard-w2-noowner", None),
            make("unguard-wx-dddd", Some(reused)),
            make("other-w0-eeee", Some(reused)),
        ];
        // A symlink named as a scratch dir, to a dir whose owner is gone.
        let target = make("target", Some(reused));
        let link = tmp.path().join("unguard-w3-link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        // An owner file that is a symlink is not read.
        let sneaky = make("unguard-w4-sneaky", None);
        std::os::unix::fs::symlink(target.join(OWNER_FILE), sneaky.join(OWNER_FILE)).unwrap();
        assert_eq!(sweep_orphans(tmp.path()), dead.len());
        for d in &dead {
            assert!(!d.exists(), "{}", d.display());
        }
        for d in kept.iter().chain([&target, &sneaky]) {
            assert!(d.join("tree-x/src/secret.py").is_file(), "{}", d.display());
        }
        assert!(link.symlink_metadata().is_ok());
        assert_eq!(Owner::parse(&me.line()), Some(me));
        assert_eq!(Owner::parse("12"), None);
        assert_eq!(Owner::parse("12 34 56"), None);
    }
}
