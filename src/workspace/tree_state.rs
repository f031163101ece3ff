//! What a scratch copy holds, and putting it back after every suite run.
//!
//! Right after a worker's copy is made, [`TreeState::record`] notes every
//! entry of it: kind, inode, size, mtime, ctime and mode (a symlink's target
//! cannot change without a new inode and ctime). After each run,
//! [`TreeState::reset`] compares the copy with that record and puts back
//! what the run created (removed, never followed), deleted or changed
//! (restored from a [`Reference`]: the run's pristine copy, never the
//! user's checkout). A directory is compared by kind, inode and mode; its
//! entries are compared one by one. Symlinks (the linked environment dirs
//! among them) are never descended into.
//!
//! Which entries to compare: where the kernel can say which ones something
//! touched (inotify, a watch on every entry and directory of the copy), only
//! those; stat-ing all 10,000 files of a copy after every run would cost
//! more than a fast suite's run. Where it cannot (another OS, the watch
//! limit reached) or lost events (its queue overflowed), every entry.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::fs::Metadata;
use std::io::ErrorKind;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::run::platform::watch::{Event, Watcher};

/// What an entry of the copy is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device: never part of a copy, only of debris.
    Other,
}

/// One entry as recorded: enough to see any change made to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rec {
    kind: Kind,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    /// Permission bits (with setuid, setgid and sticky).
    pub mode: u32,
}

impl Rec {
    fn of(m: &Metadata) -> Rec {
        let t = m.file_type();
        let kind = if t.is_symlink() {
            Kind::Symlink
        } else if t.is_dir() {
            Kind::Dir
        } else if t.is_file() {
            Kind::File
        } else {
            Kind::Other
        };
        Rec {
            kind,
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
            mode: m.mode() & 0o7777,
        }
    }

    /// Whether this is a symlink.
    pub fn is_symlink(&self) -> bool {
        self.kind == Kind::Symlink
    }

    /// The modification time (seconds, nanoseconds).
    pub fn mtime(&self) -> (i64, i64) {
        self.mtime
    }

    /// The entry at `p` as it is now (a symlink itself, never its target).
    pub fn lstat(p: &Path) -> std::io::Result<Rec> {
        p.symlink_metadata().map(|m| Rec::of(&m))
    }

    /// Whether `now` is still this entry. A directory's size and times
    /// change with its entries, which are compared one by one instead.
    fn same(&self, now: &Rec) -> bool {
        match self.kind {
            Kind::Dir => now.kind == Kind::Dir && now.ino == self.ino && now.mode == self.mode,
            _ => self == now,
        }
    }
}

/// Where the entries that a run deleted or changed come back from.
pub trait Reference {
    /// Recreate file or symlink `rel` of the copy at `dst` (nothing is
    /// there now), as it was recorded (`rec`).
    fn restore(&self, rel: &Path, dst: &Path, rec: &Rec) -> std::io::Result<()>;

    /// Whether the file or symlink at `dst` (whose metadata differs from
    /// `rec`: a rename, a chmod and back, a symlink made again) is what
    /// [`Reference::restore`] would put there: same bytes, mode and mtime,
    /// or same target.
    fn same(&self, rel: &Path, dst: &Path, rec: &Rec) -> bool;
}

/// What a walk found different from the record.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Change {
    /// Not in the record: the run created it.
    Extra(PathBuf),
    /// In the record, but changed, replaced or gone.
    Differs(PathBuf),
}

impl Change {
    fn path(&self) -> &Path {
        match self {
            Change::Extra(p) | Change::Differs(p) => p,
        }
    }
}

/// Entries at which the walk is split between threads: below, one thread.
const PARALLEL_FROM: usize = 4096;
/// At most this many threads walk one copy.
const WALK_THREADS: usize = 4;
/// A reset walks the copy at most this many times (a directory whose mode a
/// run changed is read again once its mode is back).
const PASSES: usize = 4;

/// Every entry of a copy as recorded, directory by directory.
#[derive(Debug)]
pub struct TreeState {
    /// The copy's top directory itself.
    root: Rec,
    /// Relative directory (`""` for the top) → its entries by name.
    dirs: HashMap<PathBuf, HashMap<OsString, Rec>>,
    /// The directories, sorted (parents before children): the walk's order.
    order: Vec<PathBuf>,
    /// How many entries there are in all.
    entries: usize,
    /// A watch on every entry (none: every reset compares every entry).
    watches: Option<Watches>,
}

/// The watches on a copy's entries, and the path each one stands for.
#[derive(Debug)]
struct Watches {
    watcher: Watcher,
    paths: HashMap<i32, PathBuf>,
}

impl Watches {
    /// Watch the copy at `tree` and every entry `state` holds; `None` when
    /// the kernel cannot (then nothing stays watched).
    fn on(tree: &Path, state: &TreeState) -> Option<Watches> {
        let mut w = Watches {
            watcher: Watcher::new().ok()?,
            paths: HashMap::with_capacity(state.entries + 1),
        };
        w.add(tree, Path::new("")).ok()?;
        for (dir, children) in &state.dirs {
            for name in children.keys() {
                w.add(tree, &dir.join(name)).ok()?;
            }
        }
        Some(w)
    }

    fn add(&mut self, tree: &Path, rel: &Path) -> std::io::Result<()> {
        let wd = self.watcher.add(&tree.join(rel))?;
        self.paths.insert(wd, rel.to_path_buf());
        Ok(())
    }

    /// The paths something touched since the last look (relative, sorted);
    /// `None` when events were lost.
    fn touched(&mut self) -> std::io::Result<Option<Vec<PathBuf>>> {
        let mut out = BTreeSet::new();
        for e in self.watcher.drain()? {
            let Event::Touched { wd, name, gone } = e else {
                return Ok(None);
            };
            if let Some(base) = self.paths.get(&wd) {
                out.insert(match name {
                    Some(n) => base.join(n),
                    None => base.clone(),
                });
            }
            if gone {
                self.paths.remove(&wd);
            }
        }
        Ok(Some(out.into_iter().collect()))
    }
}

impl TreeState {
    /// Record every entry under `tree` (which must not change meanwhile).
    pub fn record(tree: &Path) -> std::io::Result<TreeState> {
        let mut state = TreeState {
            root: Rec::lstat(tree)?,
            dirs: HashMap::new(),
            order: Vec::new(),
            entries: 0,
            watches: None,
        };
        let mut stack = vec![PathBuf::new()];
        while let Some(rel) = stack.pop() {
            let mut children = HashMap::new();
            for e in std::fs::read_dir(tree.join(&rel))? {
                let e = e?;
                let rec = Rec::of(&e.metadata()?);
                if rec.kind == Kind::Dir {
                    stack.push(rel.join(e.file_name()));
                }
                children.insert(e.file_name(), rec);
            }
            state.entries += children.len();
            state.order.push(rel.clone());
            state.dirs.insert(rel, children);
        }
        state.order.sort();
        state.watches = Watches::on(tree, &state);
        Ok(state)
    }

    /// Whether resets compare only what the kernel saw touched.
    pub fn watching(&self) -> bool {
        self.watches.is_some()
    }

    /// Compare every entry on every reset from now on (as where nothing
    /// can be watched).
    pub fn stop_watching(&mut self) {
        self.watches = None;
    }

    /// How many entries (files, symlinks, directories) the copy holds.
    pub fn len(&self) -> usize {
        self.entries
    }

    /// Whether the copy holds no entry at all.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The recorded entry at `rel`.
    fn rec(&self, rel: &Path) -> Option<Rec> {
        if rel.as_os_str().is_empty() {
            return Some(self.root);
        }
        let parent = rel.parent().unwrap_or(Path::new(""));
        self.dirs.get(parent)?.get(rel.file_name()?).copied()
    }

    /// Note `rel` as it is now (unguard wrote or restored it), and watch it.
    pub fn update(&mut self, tree: &Path, rel: &Path) -> std::io::Result<()> {
        let now = Rec::lstat(&tree.join(rel))?;
        if let Some(w) = &mut self.watches {
            if w.add(tree, rel).is_err() {
                // (The watch limit, say): compare everything from now on.
                self.watches = None;
            }
        }
        if rel.as_os_str().is_empty() {
            self.root = now;
            return Ok(());
        }
        let parent = rel.parent().unwrap_or(Path::new(""));
        let name = rel.file_name().unwrap_or_default().to_os_string();
        if let Some(d) = self.dirs.get_mut(parent) {
            d.insert(name, now);
        }
        Ok(())
    }

    /// Put `tree` back as recorded: remove what is new, restore what
    /// changed or went from `reference`; `suspects` are entries to restore
    /// whatever their metadata says (unguard knows their content differs).
    /// Returns the paths put back (sorted; the top-most path of a created
    /// or replaced subtree), leaving out `expected` outputs of the run and
    /// the directories made to hold them.
    pub fn reset(
        &mut self,
        tree: &Path,
        reference: &dyn Reference,
        suspects: &[PathBuf],
        expected: &[PathBuf],
    ) -> std::io::Result<Vec<PathBuf>> {
        let mut put_back: BTreeSet<PathBuf> = BTreeSet::new();
        let mut changes = self.changes(tree)?;
        changes.extend(suspects.iter().cloned().map(Change::Differs));
        for pass in 1..=PASSES {
            // By path: a directory comes before its entries.
            changes.sort_by(|a, b| a.path().cmp(b.path()).then(a.cmp(b)));
            changes.dedup();
            self.prune(tree, &mut changes);
            if changes.is_empty() {
                break;
            }
            if pass == PASSES {
                let paths: Vec<String> = changes
                    .iter()
                    .take(5)
                    .map(|c| c.path().display().to_string())
                    .collect();
                return Err(std::io::Error::other(format!(
                    "the scratch copy cannot be put back: {} still differ",
                    paths.join(", ")
                )));
            }
            let spared = self.apply(tree, reference, &changes)?;
            for c in &changes {
                let p = c.path();
                let is_expected =
                    matches!(c, Change::Extra(_)) && expected.iter().any(|e| e.starts_with(p));
                if !is_expected && !spared.contains(p) {
                    put_back.insert(p.to_path_buf());
                }
            }
            changes = self.changes(tree)?;
        }
        Ok(put_back.into_iter().collect())
    }

    /// Leave out changes inside a directory that is rebuilt whole (gone or
    /// replaced): that directory is the one path put back. (`changes` are
    /// sorted: a directory comes before its entries.)
    fn prune(&self, tree: &Path, changes: &mut Vec<Change>) {
        let mut rebuilt: Vec<PathBuf> = Vec::new();
        changes.retain(|c| {
            let p = c.path();
            if rebuilt.iter().any(|r| p.starts_with(r) && p != r) {
                return false;
            }
            if let (Change::Differs(_), Some(want)) = (c, self.rec(p)) {
                let now = Rec::lstat(&tree.join(p)).ok();
                let same_dir = now.is_some_and(|n| n.kind == Kind::Dir && n.ino == want.ino);
                if want.kind == Kind::Dir && !same_dir {
                    rebuilt.push(p.to_path_buf());
                }
            }
            true
        });
    }

    /// What differs from the record: among the entries something touched,
    /// or (nothing watched, events lost) among all.
    fn changes(&mut self, tree: &Path) -> std::io::Result<Vec<Change>> {
        let touched = match &mut self.watches {
            Some(w) => w.touched()?,
            None => None,
        };
        match touched {
            Some(paths) => Ok(self.check(tree, &paths)),
            None => self.diff(tree),
        }
    }

    /// Which of `paths` (touched) differ from the record.
    fn check(&self, tree: &Path, paths: &[PathBuf]) -> Vec<Change> {
        let mut out = Vec::new();
        for rel in paths {
            let now = Rec::lstat(&tree.join(rel));
            let Some(parent) = rel.parent() else {
                // The top of the copy.
                if !now.is_ok_and(|n| self.root.same(&n)) {
                    out.push(Change::Differs(rel.clone()));
                }
                continue;
            };
            // Inside a directory the run made, or one that is gone: that
            // directory's own entry says so.
            let Some(dir) = self.dirs.get(parent) else {
                continue;
            };
            let want = rel.file_name().and_then(|n| dir.get(n));
            match (want, now) {
                (None, Err(_)) => {} // came and went
                (None, Ok(_)) => out.push(Change::Extra(rel.clone())),
                (Some(w), Ok(n)) if w.same(&n) => {}
                (Some(_), _) => out.push(Change::Differs(rel.clone())),
            }
        }
        out
    }

    /// What differs between `tree` and the record, in no particular order.
    fn diff(&self, tree: &Path) -> std::io::Result<Vec<Change>> {
        let root = match Rec::lstat(tree) {
            Ok(r) => r,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Ok(vec![Change::Differs(PathBuf::new())])
            }
            Err(e) => return Err(e),
        };
        if !self.root.same(&root) {
            // Its mode first; the next pass reads it.
            return Ok(vec![Change::Differs(PathBuf::new())]);
        }
        let threads = if self.entries < PARALLEL_FROM {
            1
        } else {
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(WALK_THREADS)
        };
        let next = AtomicUsize::new(0);
        let found: Mutex<std::io::Result<Vec<Change>>> = Mutex::new(Ok(Vec::new()));
        let work = || {
            let mut mine = Vec::new();
            let mut result = Ok(());
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(rel) = self.order.get(i) else { break };
                if let Err(e) = self.diff_dir(tree, rel, &mut mine) {
                    result = Err(e);
                    break;
                }
            }
            let mut f = found.lock().unwrap_or_else(|e| e.into_inner());
            match (result, f.as_mut()) {
                (Ok(()), Ok(all)) => all.append(&mut mine),
                (Err(e), Ok(_)) => *f = Err(e),
                (_, Err(_)) => {}
            }
        };
        std::thread::scope(|s| {
            for _ in 1..threads {
                let _ = std::thread::Builder::new()
                    .name("unguard-reset".into())
                    .spawn_scoped(s, work);
            }
            work();
        });
        found.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    /// Compare one recorded directory with what it holds now.
    fn diff_dir(&self, tree: &Path, rel: &Path, out: &mut Vec<Change>) -> std::io::Result<()> {
        let want = &self.dirs[rel];
        let rd = match std::fs::read_dir(tree.join(rel)) {
            Ok(rd) => rd,
            // Gone, replaced or unreadable: its own entry (in its parent)
            // differs, and is put back whole or read on the next pass.
            Err(_) if !rel.as_os_str().is_empty() => return Ok(()),
            Err(e) => return Err(e),
        };
        let mut matched = 0;
        for e in rd {
            let e = e?;
            let name = e.file_name();
            let Some(rec) = want.get(&name) else {
                out.push(Change::Extra(rel.join(&name)));
                continue;
            };
            matched += 1;
            match e.metadata() {
                Ok(m) if rec.same(&Rec::of(&m)) => {}
                _ => out.push(Change::Differs(rel.join(&name))),
            }
        }
        if matched < want.len() {
            // Something went: find which (the names seen again).
            let now: BTreeSet<OsString> = std::fs::read_dir(tree.join(rel))?
                .filter_map(|e| e.ok().map(|e| e.file_name()))
                .collect();
            for name in want.keys().filter(|n| !now.contains(*n)) {
                out.push(Change::Differs(rel.join(name)));
            }
        }
        Ok(())
    }

    /// Put back every change (sorted: a directory comes before its entries).
    /// Returns the entries that were changed back by the run itself (see
    /// [`Reference::same`]): recorded anew, not put back.
    fn apply(
        &mut self,
        tree: &Path,
        reference: &dyn Reference,
        changes: &[Change],
    ) -> std::io::Result<BTreeSet<PathBuf>> {
        let mut spared = BTreeSet::new();
        // Subtrees rebuilt whole: what was found inside them is done.
        let mut rebuilt: Vec<&Path> = Vec::new();
        for c in changes {
            let rel = c.path();
            if rebuilt.iter().any(|r| rel.starts_with(r)) {
                continue;
            }
            let dst = tree.join(rel);
            let Some(want) = self.rec(rel).filter(|_| matches!(c, Change::Differs(_))) else {
                remove_any(&dst)?;
                continue;
            };
            let now = Rec::lstat(&dst).ok();
            match (want.kind, now) {
                (Kind::Dir, Some(now)) if now.kind == Kind::Dir && now.ino == want.ino => {
                    // Same directory, other mode: its entries are compared as they are.
                    std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(want.mode))?;
                    self.update(tree, rel)?;
                }
                (Kind::Dir, _) => {
                    if now.is_some() {
                        remove_any(&dst)?;
                    }
                    self.rebuild_dir(tree, reference, rel)?;
                    rebuilt.push(rel);
                }
                (_, Some(now)) if now.kind == want.kind && reference.same(rel, &dst, &want) => {
                    self.update(tree, rel)?;
                    spared.insert(rel.to_path_buf());
                }
                (_, _) => {
                    if now.is_some() {
                        remove_any(&dst)?;
                    }
                    reference.restore(rel, &dst, &want)?;
                    self.update(tree, rel)?;
                }
            }
        }
        Ok(spared)
    }

    /// Recreate directory `rel` (absent now) and everything recorded in it.
    fn rebuild_dir(
        &mut self,
        tree: &Path,
        reference: &dyn Reference,
        rel: &Path,
    ) -> std::io::Result<()> {
        let want = self
            .rec(rel)
            .ok_or_else(|| std::io::Error::other("no record of the directory"))?;
        let dst = tree.join(rel);
        std::fs::create_dir(&dst)?;
        std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(want.mode))?;
        self.update(tree, rel)?;
        let children: Vec<(OsString, Rec)> = self
            .dirs
            .get(rel)
            .map(|d| d.iter().map(|(n, r)| (n.clone(), *r)).collect())
            .unwrap_or_default();
        for (name, rec) in children {
            let child = rel.join(&name);
            if rec.kind == Kind::Dir {
                self.rebuild_dir(tree, reference, &child)?;
            } else {
                reference.restore(&child, &tree.join(&child), &rec)?;
                self.update(tree, &child)?;
            }
        }
        Ok(())
    }
}

/// Remove `p` whatever it is; a directory with everything in it (symlinks
/// unlinked, never followed), made writable where a run locked it.
pub fn remove_any(p: &Path) -> std::io::Result<()> {
    let m = match p.symlink_metadata() {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if !m.is_dir() {
        return match std::fs::remove_file(p) {
            Err(e) if e.kind() != ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    match std::fs::remove_dir_all(p) {
        Err(e) if e.kind() != ErrorKind::NotFound => {
            unlock_dirs(p);
            match std::fs::remove_dir_all(p) {
                Err(e) if e.kind() != ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// Give the owner full access to every directory under `dir` (and `dir`),
/// without following symlinks, so that what is inside can be removed.
fn unlock_dirs(dir: &Path) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(m) = d.symlink_metadata() else {
            continue;
        };
        if !m.is_dir() {
            continue;
        }
        let mode = m.mode() & 0o7777;
        let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode | 0o700));
        if let Ok(rd) = std::fs::read_dir(&d) {
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(e.path());
                }
            }
        }
    }
}
