//! Scratch copies of the target tree. The user's checkout is only ever read:
//! never written, stashed or checked out.
//!
//! The copy holds the working tree *as it is*: tracked files (with their
//! uncommitted edits) plus untracked files that are not ignored. Ignored
//! environment directories at the top of the target (`.venv`, `node_modules`,
//! …) are symlinked in; symlinks inside the tree are recreated as the same
//! symlinks. One scratch copy per worker, reused: between mutants only the
//! written files are restored from the original bytes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::error::{Context, Error, Result};
use tempfile::TempDir;

use crate::platform;

/// Environment directories that are linked (not copied) when present and ignored.
pub const DEFAULT_LINKS: &[&str] = &[
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "node_modules",
    ".direnv",
    "env",
];

/// What to copy into each scratch tree, computed once.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// Canonical target root.
    pub root: PathBuf,
    /// Relative paths (with `/`) of files and symlinks to copy, sorted.
    pub entries: Vec<String>,
    /// Relative paths whose bytes are not UTF-8 (a Latin-1 file name, say):
    /// copied byte for byte like the others, but no spec can name them (YAML
    /// is UTF-8), so they are never mutated or scanned. Sorted.
    pub opaque: Vec<PathBuf>,
    /// Top-level names to symlink to the original.
    pub links: Vec<String>,
    /// Whether the tree came from git (for messages).
    pub from_git: bool,
}

fn rel_string(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// A relative path as a manifest entry: its `/`-joined text when every
/// component is UTF-8, otherwise the exact bytes.
enum Rel {
    Text(String),
    Opaque(PathBuf),
}

impl Rel {
    fn of(p: &Path) -> Rel {
        if p.to_str().is_some() {
            Rel::Text(rel_string(p))
        } else {
            Rel::Opaque(p.to_path_buf())
        }
    }
}

/// Split manifest entries into text and opaque ones.
fn split(rels: Vec<Rel>) -> (Vec<String>, Vec<PathBuf>) {
    let (mut text, mut opaque) = (Vec::new(), Vec::new());
    for r in rels {
        match r {
            Rel::Text(s) => text.push(s),
            Rel::Opaque(p) => opaque.push(p),
        }
    }
    (text, opaque)
}

/// Enumerate the files to copy. `exclude` is a directory (the output dir) that
/// is never copied when it lies inside the root.
pub fn manifest(root: &Path, exclude: &[PathBuf], extra_links: &[String]) -> Result<Manifest> {
    let root = root
        .canonicalize()
        .with_context(|| format!("target directory {}", root.display()))?;
    let excluded: Vec<String> = exclude
        .iter()
        .filter_map(|e| {
            let e = e.canonicalize().unwrap_or_else(|_| e.clone());
            e.strip_prefix(&root).ok().map(rel_string)
        })
        .filter(|s| !s.is_empty())
        .collect();
    let is_excluded = |rel: &str| {
        excluded
            .iter()
            .any(|x| rel == x || rel.starts_with(&format!("{x}/")))
    };

    let (rels, from_git, ignored_check): (Vec<Rel>, bool, Option<git2::Repository>) =
        match git2::Repository::discover(&root) {
            Ok(repo) if repo.workdir().is_some() => {
                let files = git_files(&repo, &root)?;
                (files, true, Some(repo))
            }
            _ => (walk_files(&root)?, false, None),
        };
    let (mut entries, mut opaque) = split(rels);
    entries.retain(|e| !is_excluded(e));
    // (The excluded out dir and the linked env dirs have UTF-8 names.)
    opaque.retain(|p| !is_excluded(&rel_string(p)));

    let mut links = Vec::new();
    let mut candidates: Vec<String> = DEFAULT_LINKS.iter().map(|s| s.to_string()).collect();
    for l in extra_links {
        if !candidates.contains(l) {
            candidates.push(l.clone());
        }
    }
    for name in candidates {
        let p = root.join(&name);
        if !p.is_dir() || is_excluded(&name) {
            continue;
        }
        let prefix = format!("{name}/");
        let tracked = entries.iter().any(|e| e.starts_with(&prefix));
        if tracked {
            // Part of the tree (tracked or not ignored): it is copied as it is.
            continue;
        }
        if let Some(repo) = &ignored_check {
            let workdir = repo.workdir().expect("non-bare");
            let wd = workdir
                .canonicalize()
                .unwrap_or_else(|_| workdir.to_path_buf());
            if let Ok(rel) = p.strip_prefix(&wd) {
                if !repo.is_path_ignored(rel).unwrap_or(true) {
                    continue;
                }
            }
        }
        links.push(name);
    }
    if !from_git {
        // A plain walk skipped the env dirs entirely; they are linked instead.
        entries.retain(|e| !links.iter().any(|l| e.starts_with(&format!("{l}/"))));
        opaque.retain(|p| !links.iter().any(|l| p.starts_with(l)));
    }
    entries.sort();
    entries.dedup();
    opaque.sort();
    opaque.dedup();
    Ok(Manifest {
        root,
        entries,
        opaque,
        links,
        from_git,
    })
}

/// Tracked files (working-tree contents) plus untracked, non-ignored files under `root`.
fn git_files(repo: &git2::Repository, root: &Path) -> Result<Vec<Rel>> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::Internal("bare repository".into()))?
        .canonicalize()
        .context("resolving the git work tree")?;
    // git stores paths as bytes with `/`: so is the prefix compared with them.
    let prefix = root
        .strip_prefix(&workdir)
        .map(|p| {
            use std::os::unix::ffi::OsStrExt;
            p.as_os_str().as_bytes().to_vec()
        })
        .unwrap_or_default();
    // A path relative to `root`, from git's bytes (relative to the workdir).
    let under = |p: &[u8]| -> Option<PathBuf> {
        use std::os::unix::ffi::OsStrExt;
        let rel = if prefix.is_empty() {
            p
        } else {
            p.strip_prefix(prefix.as_slice())?.strip_prefix(b"/")?
        };
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(rel)))
    };
    let mut out = BTreeSet::new();
    let index = repo.index().context("reading the git index")?;
    for entry in index.iter() {
        if let Some(rel) = under(&entry.path) {
            let full = root.join(&rel);
            // Deleted in the working tree (uncommitted deletion): not copied.
            if full.symlink_metadata().is_ok() {
                if entry.mode == 0o160000 {
                    // Submodule: copy its files as a plain walk.
                    for f in walk_files(&full)? {
                        out.insert(rel.join(rel_path(&f)));
                    }
                } else {
                    out.insert(rel);
                }
            }
        }
    }
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    if !prefix.is_empty() {
        let mut spec = prefix.clone();
        spec.push(b'/');
        opts.pathspec(spec);
    }
    let statuses = repo
        .statuses(Some(&mut opts))
        .context("reading git status")?;
    for s in statuses.iter() {
        if s.status().contains(git2::Status::WT_NEW) {
            if let Some(rel) = under(s.path_bytes()) {
                out.insert(rel);
            }
        }
    }
    Ok(out.iter().map(|p| Rel::of(p)).collect())
}

/// A walked entry's path (for joining).
fn rel_path(r: &Rel) -> &Path {
    match r {
        Rel::Text(s) => Path::new(s),
        Rel::Opaque(p) => p,
    }
}

/// Every file and symlink under `root` (for a directory that is not in git).
/// `.git`, `__pycache__` and the default environment directories are skipped.
fn walk_files(root: &Path) -> Result<Vec<Rel>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let rd = std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?;
        for e in rd {
            let e = e.with_context(|| format!("reading {}", dir.display()))?;
            let name = e.file_name();
            let name_s = name.to_string_lossy();
            let child = rel.join(&name);
            let ft = e
                .file_type()
                .with_context(|| format!("reading {}", e.path().display()))?;
            // Top-level environment dirs (or symlinks to them) are linked into
            // the copy, never copied.
            if rel.as_os_str().is_empty()
                && DEFAULT_LINKS.contains(&name_s.as_ref())
                && (ft.is_dir() || (ft.is_symlink() && dir.join(&name).is_dir()))
            {
                continue;
            }
            if ft.is_dir() {
                if name_s == ".git" || name_s == "__pycache__" {
                    continue;
                }
                stack.push(child);
            } else {
                out.push(Rel::of(&child));
            }
        }
    }
    Ok(out)
}

/// Set by the signal handler; long copies check it and stop early.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Every scratch dir that exists right now, for the second Ctrl-C, which
/// exits without unwinding (no `Drop` runs) and removes them itself.
static LIVE_SCRATCH: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Registers a scratch dir in [`LIVE_SCRATCH`] for as long as it lives.
#[derive(Debug)]
struct LiveScratch(PathBuf);

impl LiveScratch {
    fn new(p: &Path) -> LiveScratch {
        LIVE_SCRATCH
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(p.to_path_buf());
        LiveScratch(p.to_path_buf())
    }
}

impl Drop for LiveScratch {
    fn drop(&mut self) {
        LIVE_SCRATCH
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|p| p != &self.0);
    }
}

/// Remove every live scratch dir now (second Ctrl-C). Returns how many.
pub fn remove_live_scratch_dirs() -> usize {
    let dirs = LIVE_SCRATCH
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    for d in &dirs {
        // A copy thread may still be adding files: try twice.
        if std::fs::remove_dir_all(d).is_err() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
    dirs.len()
}

/// One worker's scratch area: `tree/` (the copy), `pycache/` (a private
/// PYTHONPYCACHEPREFIX) and `junit/`. Removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    /// Held for its `Drop`: removes the whole scratch area.
    _dir: TempDir,
    _live: LiveScratch,
    pub tree: PathBuf,
    pub pycache: PathBuf,
    pub junit_dir: PathBuf,
    /// Files written since the last run (their cached bytecode must go).
    written: BTreeSet<String>,
    /// Number of runs prepared so far (names fresh JUnit paths).
    runs: u64,
}

impl Scratch {
    /// Copy the manifest into a fresh temp dir (see [`copy_tree`]).
    pub fn create(manifest: &Manifest, worker: usize) -> Result<Scratch> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("unguard-w{worker}-"))
            .tempdir()
            .context("creating a scratch directory")?;
        let live = LiveScratch::new(dir.path());
        let base = dir
            .path()
            .canonicalize()
            .context("resolving the scratch directory")?;
        // The tree gets a name of its own (the temp dir's random suffix), so
        // that on ext4 each copy lands in a block group of its own.
        spread_subdirectories(&base);
        let suffix = base
            .file_name()
            .map(|n| {
                n.to_string_lossy()
                    .rsplit('-')
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_default();
        let tree = base.join(format!("tree-{suffix}"));
        let pycache = base.join("pycache");
        let junit_dir = base.join("junit");
        for d in [&tree, &pycache, &junit_dir] {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
        }
        copy_tree(manifest, &tree)?;
        for name in &manifest.links {
            let target = manifest.root.join(name);
            std::os::unix::fs::symlink(&target, tree.join(name))
                .with_context(|| format!("linking {name} into the scratch tree"))?;
        }
        Ok(Scratch {
            _dir: dir,
            _live: live,
            tree,
            pycache,
            junit_dir,
            written: BTreeSet::new(),
            runs: 0,
        })
    }

    /// Write `bytes` to `rel` in the copy (a mutant or a restore).
    pub fn write(&mut self, rel: &str, bytes: &[u8]) -> Result<()> {
        let path = self.tree.join(rel);
        if let Err(e) = std::fs::write(&path, bytes) {
            if e.kind() != std::io::ErrorKind::PermissionDenied {
                return Err(e).with_context(|| format!("writing {}", path.display()));
            }
            // A read-only file in the copy (the user's mode bits): make the
            // copy writable, never the original.
            use std::os::unix::fs::PermissionsExt;
            let mut perms = std::fs::metadata(&path)
                .with_context(|| format!("reading {}", path.display()))?
                .permissions();
            perms.set_mode(perms.mode() | 0o200);
            std::fs::set_permissions(&path, perms)
                .with_context(|| format!("making {} writable", path.display()))?;
            std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        }
        self.written.insert(rel.to_string());
        Ok(())
    }

    pub fn read(&self, rel: &str) -> Result<Vec<u8>> {
        let path = self.tree.join(rel);
        std::fs::read(&path).with_context(|| format!("reading {}", path.display()))
    }

    /// Before a run: delete any cached bytecode of files written since the
    /// last run, so CPython cannot trust a `.pyc` whose (mtime in whole
    /// seconds, size) happens to match a same-length rewrite.
    pub fn purge_stale_bytecode(&mut self) {
        for rel in std::mem::take(&mut self.written) {
            let src = self.tree.join(&rel);
            let Some(stem) = src.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
                continue;
            };
            let parent = src.parent().unwrap_or(&self.tree).to_path_buf();
            // In-tree __pycache__ (if any was copied or written without the prefix).
            remove_pycs(&parent.join("__pycache__"), &stem);
            // The private prefix mirrors the absolute source directory.
            let mirrored = self
                .pycache
                .join(parent.strip_prefix("/").unwrap_or(&parent));
            remove_pycs(&mirrored, &stem);
        }
        self.runs += 1;
    }

    /// Per-run JUnit path (fresh for each run).
    pub fn next_junit_path(&self, label: &str) -> PathBuf {
        self.junit_dir.join(format!("{}-{label}.xml", self.runs))
    }
}

impl Drop for Scratch {
    /// Empty the tree on a few threads (removing 10,000 files one by one is
    /// most of the time the run spends after its last mutant); the `TempDir`
    /// then removes what is left.
    fn drop(&mut self) {
        remove_tree_contents(&self.tree);
    }
}

/// Remove what is inside `tree`, in parallel and best effort. Symlinks (the
/// linked environment dirs among them) are unlinked, never followed.
fn remove_tree_contents(tree: &Path) {
    let children = |dir: &Path| -> Vec<(PathBuf, bool)> {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        rd.flatten()
            .map(|e| {
                // The entry's own type: a symlink to a directory is not a directory.
                let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
                (e.path(), is_dir)
            })
            .collect()
    };
    // Units of work: the entries two levels down (and the files one level down).
    let mut units = Vec::new();
    for (p, is_dir) in children(tree) {
        if is_dir {
            units.extend(children(&p));
        } else {
            units.push((p, false));
        }
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(COPY_THREADS)
        .min(units.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some((p, is_dir)) = units.get(i) else {
            return;
        };
        let _ = if *is_dir {
            std::fs::remove_dir_all(p)
        } else {
            std::fs::remove_file(p)
        };
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            let _ = std::thread::Builder::new()
                .name("unguard-rm".into())
                .spawn_scoped(s, work);
        }
        work();
    });
}

fn remove_pycs(dir: &Path, stem: &str) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!("{stem}.");
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) && (name.ends_with(".pyc") || name.ends_with(".pyo")) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// At most this many threads copy one scratch tree (each worker copies its
/// own tree at the same time, so more would only contend).
const COPY_THREADS: usize = 4;
/// Entries a copy thread takes from the shared list at a time.
const COPY_CHUNK: usize = 32;

/// Copy every manifest entry into `tree` (which exists and is empty): the
/// directories first, once each, then the files and symlinks on a few
/// threads. Files keep their mode bits and mtime; symlinks are recreated as
/// the same symlinks; empty directories are not copied (the manifest lists
/// files). Where the filesystem can share extents (`FICLONE`: btrfs, XFS,
/// bcachefs), files are reflinked instead of copied.
pub fn copy_tree(manifest: &Manifest, tree: &Path) -> Result<()> {
    let entries: Vec<&Path> = manifest
        .entries
        .iter()
        .map(Path::new)
        .chain(manifest.opaque.iter().map(PathBuf::as_path))
        .collect();
    let mut dirs: BTreeSet<&Path> = BTreeSet::new();
    for rel in &entries {
        let mut p = *rel;
        while let Some(parent) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            p = parent;
            if !dirs.insert(p) {
                break; // its ancestors are in already
            }
        }
    }
    // Sorted by component: a parent ("a") always precedes its children ("a/b").
    for d in dirs {
        let path = tree.join(d);
        match std::fs::create_dir(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("creating {} in the scratch tree", d.display()));
            }
        }
    }

    let entries = &entries;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(COPY_THREADS)
        .min(entries.len().div_ceil(COPY_CHUNK))
        .max(1);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let reflink = AtomicBool::new(cfg!(target_os = "linux"));
    // The first failure in manifest order (deterministic messages).
    let failure: Mutex<Option<(usize, std::io::Error)>> = Mutex::new(None);
    let work = || loop {
        if stop.load(Ordering::Relaxed) || INTERRUPTED.load(Ordering::Relaxed) {
            return;
        }
        let start = next.fetch_add(COPY_CHUNK, Ordering::Relaxed);
        if start >= entries.len() {
            return;
        }
        for (i, rel) in entries.iter().enumerate().skip(start).take(COPY_CHUNK) {
            if let Err(e) = copy_entry(&manifest.root, tree, rel, &reflink, &platform::reflink) {
                let mut f = failure.lock().unwrap_or_else(|e| e.into_inner());
                if f.as_ref().is_none_or(|(j, _)| i < *j) {
                    *f = Some((i, e));
                }
                stop.store(true, Ordering::Relaxed);
                return;
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            // No thread to be had: the others (and this one) do the work.
            let _ = std::thread::Builder::new()
                .name("unguard-copy".into())
                .spawn_scoped(s, work);
        }
        work();
    });
    if INTERRUPTED.load(Ordering::SeqCst) {
        return Err(Error::Internal("interrupted while copying the tree".into()));
    }
    if let Some((i, e)) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e)
            .with_context(|| format!("copying {} into the scratch tree", entries[i].display()));
    }
    Ok(())
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
fn spread_subdirectories(dir: &Path) {
    platform::mark_top_directory(dir);
}

type CloneFn = dyn Fn(&std::fs::File, &std::fs::File) -> std::io::Result<()> + Sync;

/// Copy one manifest entry. A source that vanished since the manifest was
/// taken (a temp file) is skipped.
fn copy_entry(
    root: &Path,
    tree: &Path,
    rel: &Path,
    reflink: &AtomicBool,
    clone: &CloneFn,
) -> std::io::Result<()> {
    use std::io::ErrorKind::NotFound;
    use std::os::unix::fs::OpenOptionsExt;
    let src = root.join(rel);
    let dst = tree.join(rel);
    let meta = match src.symlink_metadata() {
        Ok(m) => m,
        Err(e) if e.kind() == NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&src)?;
        return std::os::unix::fs::symlink(&target, &dst);
    }
    if !meta.is_file() {
        return Ok(());
    }
    let mut from = match std::fs::File::open(&src) {
        Ok(f) => f,
        Err(e) if e.kind() == NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut to = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&dst)?;
    let mut cloned = false;
    if reflink.load(Ordering::Relaxed) {
        match clone(&from, &to) {
            Ok(()) => cloned = true,
            Err(e) => {
                if platform::reflink_unsupported(&e) {
                    reflink.store(false, Ordering::Relaxed);
                }
                // Whatever a failed clone left behind goes; offsets are untouched.
                to.set_len(0)?;
            }
        }
    }
    if !cloned {
        // copy_file_range where the kernel has it, read/write otherwise.
        std::io::copy(&mut from, &mut to)?;
    }
    // The user's mode bits, set on the open handle (so a read-only file's
    // mtime can still be set below).
    to.set_permissions(meta.permissions())?;
    // Keep the original mtime: tools that cache by mtime see the same tree.
    if let Ok(m) = meta.modified() {
        let _ = to.set_modified(m);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::io::Errno;
    use std::collections::BTreeMap;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::time::{Duration, SystemTime};

    /// (kind, mode, mtime, content or link target) of everything under `dir`.
    fn state(dir: &Path) -> BTreeMap<String, (String, u32, Option<SystemTime>, Vec<u8>)> {
        let mut out = BTreeMap::new();
        let mut stack = vec![PathBuf::new()];
        while let Some(rel) = stack.pop() {
            for e in std::fs::read_dir(dir.join(&rel)).unwrap() {
                let e = e.unwrap();
                let child = rel.join(e.file_name());
                let m = e.path().symlink_metadata().unwrap();
                let key = rel_string(&child);
                if m.file_type().is_symlink() {
                    let t = std::fs::read_link(e.path()).unwrap();
                    out.insert(key, ("link".into(), 0, None, t.into_os_string().into_vec()));
                } else if m.is_dir() {
                    out.insert(key, ("dir".into(), 0, None, vec![]));
                    stack.push(child);
                } else {
                    let bytes = std::fs::read(e.path()).unwrap();
                    out.insert(
                        key,
                        ("file".into(), m.mode() & 0o7777, m.modified().ok(), bytes),
                    );
                }
            }
        }
        out
    }
    use std::os::unix::ffi::OsStringExt;

    fn set_mode(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A plain (non-git) tree with many files, odd modes, old mtimes,
    /// symlinks of every kind and an empty directory.
    fn sample_tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        for d in 0..12 {
            let dir = r.join(format!("pkg/d{d:02}/sub"));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..20 {
                let p = dir.join(format!("m{f:02}.py"));
                std::fs::write(&p, format!("x = {d} * {f}\n").repeat(f * 50)).unwrap();
                let file = std::fs::File::options().write(true).open(&p).unwrap();
                file.set_modified(old + Duration::from_secs(d * 100 + f as u64))
                    .unwrap();
            }
        }
        std::fs::write(r.join("run.sh"), "#!/bin/sh\nexit 0\n").unwrap();
        set_mode(&r.join("run.sh"), 0o755);
        std::fs::write(r.join("readonly.py"), "SECRET = 1\n").unwrap();
        set_mode(&r.join("readonly.py"), 0o444);
        std::fs::write(r.join("empty.txt"), "").unwrap();
        std::os::unix::fs::symlink("pkg/d00/sub/m01.py", r.join("rel-link")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", r.join("abs-link")).unwrap();
        std::os::unix::fs::symlink("does/not/exist", r.join("dangling")).unwrap();
        std::os::unix::fs::symlink("pkg/d01", r.join("dir-link")).unwrap();
        std::fs::create_dir_all(r.join("empty-dir")).unwrap();
        t
    }

    #[test]
    fn copy_keeps_contents_modes_mtimes_and_symlinks_and_skips_empty_dirs() {
        let src = sample_tree();
        let m = manifest(src.path(), &[], &[]).unwrap();
        assert!(
            m.entries.len() > COPY_CHUNK * COPY_THREADS,
            "enough files for every copy thread"
        );
        let s = Scratch::create(&m, 0).unwrap();
        let mut expected = state(src.path());
        // The manifest lists files: an empty directory is not copied (as ever).
        expected.remove("empty-dir");
        assert_eq!(state(&s.tree), expected);
        // The user's tree is only read.
        let mut again = state(src.path());
        again.remove("empty-dir");
        assert_eq!(again, expected);
    }

    #[test]
    fn copies_of_two_workers_are_separate_trees() {
        let src = sample_tree();
        let m = manifest(src.path(), &[], &[]).unwrap();
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| Scratch::create(&m, 0).unwrap());
            let b = s.spawn(|| Scratch::create(&m, 1).unwrap());
            (a.join().unwrap(), b.join().unwrap())
        });
        assert_ne!(a.tree, b.tree);
        assert_eq!(state(&a.tree), state(&b.tree));
        let (ta, tb) = (a.tree.clone(), b.tree.clone());
        drop(a);
        assert!(!ta.exists());
        assert!(tb.exists());
    }

    fn copy_with(clone: &CloneFn, reflink: &AtomicBool) -> (tempfile::TempDir, PathBuf) {
        let src = tempfile::tempdir().unwrap();
        let body = "the original bytes\n".repeat(100);
        std::fs::write(src.path().join("f.py"), &body).unwrap();
        set_mode(&src.path().join("f.py"), 0o640);
        let dst = tempfile::tempdir().unwrap();
        copy_entry(src.path(), dst.path(), Path::new("f.py"), reflink, clone).unwrap();
        let out = dst.path().join("f.py");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), body);
        assert_eq!(std::fs::metadata(&out).unwrap().mode() & 0o7777, 0o640);
        (dst, out)
    }

    /// A clone that fails after writing junk (longer than the source) at
    /// offset 0 of the destination, without moving the file offset.
    fn failing_clone(
        errno: Errno,
    ) -> impl Fn(&std::fs::File, &std::fs::File) -> std::io::Result<()> {
        move |_from, to| {
            use std::os::unix::fs::FileExt;
            to.write_all_at(&vec![b'#'; 10_000], 0)?;
            Err(std::io::Error::from_raw_os_error(errno.raw_os_error()))
        }
    }

    #[test]
    fn failed_reflink_falls_back_to_a_copy() {
        // Unsupported by the filesystem: copy, and stop trying for this tree.
        let reflink = AtomicBool::new(true);
        copy_with(&failing_clone(Errno::OPNOTSUPP), &reflink);
        assert!(!reflink.load(Ordering::Relaxed));
        // Cross-device: the same.
        let reflink = AtomicBool::new(true);
        copy_with(&failing_clone(Errno::XDEV), &reflink);
        assert!(!reflink.load(Ordering::Relaxed));
        // Any other failure (e.g. btrfs refusing one nodatasum file): copy
        // this file, keep trying for the others.
        let reflink = AtomicBool::new(true);
        copy_with(&failing_clone(Errno::INVAL), &reflink);
        assert!(reflink.load(Ordering::Relaxed));
    }

    #[test]
    fn successful_reflink_is_not_copied_again() {
        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("f.py"), "source bytes\n").unwrap();
        let dst = tempfile::tempdir().unwrap();
        // A clone that "shares extents" (writes what it shares without moving
        // the offset, as FICLONE does): a copy after it would overwrite it.
        let clone = |_: &std::fs::File, to: &std::fs::File| {
            use std::os::unix::fs::FileExt;
            to.write_all_at(b"CLONED\n", 0)
        };
        let reflink = AtomicBool::new(true);
        copy_entry(src.path(), dst.path(), Path::new("f.py"), &reflink, &clone).unwrap();
        assert_eq!(
            std::fs::read_to_string(dst.path().join("f.py")).unwrap(),
            "CLONED\n"
        );
        assert!(reflink.load(Ordering::Relaxed));
        // Not tried when already known to be unsupported.
        let reflink = AtomicBool::new(false);
        copy_with(
            &|_: &std::fs::File, _: &std::fs::File| panic!("clone tried"),
            &reflink,
        );
    }

    #[test]
    fn reset_rewrites_only_the_mutated_file() {
        let src = sample_tree();
        let m = manifest(src.path(), &[], &[]).unwrap();
        let mut s = Scratch::create(&m, 0).unwrap();
        let ids = |tree: &Path| -> BTreeMap<String, (u64, i64, i64, i64, i64)> {
            m.entries
                .iter()
                .map(|e| {
                    let md = tree.join(e).symlink_metadata().unwrap();
                    let id = (
                        md.ino(),
                        md.mtime(),
                        md.mtime_nsec(),
                        md.ctime(),
                        md.ctime_nsec(),
                    );
                    (e.clone(), id)
                })
                .collect()
        };
        let before = ids(&s.tree);
        let target = "pkg/d03/sub/m07.py";
        let original = std::fs::read(src.path().join(target)).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        s.write(target, b"mutated = True\n").unwrap();
        s.write(target, &original).unwrap();
        // The read-only file can be mutated and restored in the copy too.
        let ro = std::fs::read(src.path().join("readonly.py")).unwrap();
        s.write("readonly.py", b"SECRET = 0\n").unwrap();
        s.write("readonly.py", &ro).unwrap();
        let after = ids(&s.tree);
        let changed: Vec<&String> = before.keys().filter(|k| before[*k] != after[*k]).collect();
        assert_eq!(changed, vec!["pkg/d03/sub/m07.py", "readonly.py"]);
        assert_eq!(std::fs::read(s.tree.join(target)).unwrap(), original);
        assert_eq!(std::fs::read(s.tree.join("readonly.py")).unwrap(), ro);
    }

    #[test]
    fn dropping_a_scratch_removes_it_and_never_follows_symlinks() {
        let src = sample_tree();
        // An ignored environment dir at the top (linked) and one symlinked
        // deeper (recreated as the same symlink): both point at real files.
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(outside.path().join("lib")).unwrap();
        std::fs::write(outside.path().join("lib/keep.py"), "x = 1\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), src.path().join("pkg/d02/env")).unwrap();
        std::os::unix::fs::symlink(outside.path(), src.path().join("pkg/d02/sub/env")).unwrap();
        std::fs::create_dir_all(src.path().join(".venv/bin")).unwrap();
        std::fs::write(src.path().join(".venv/bin/python"), "#!/bin/sh\n").unwrap();
        let m = manifest(src.path(), &[], &[]).unwrap();
        assert_eq!(m.links, vec![".venv"]);
        let s = Scratch::create(&m, 0).unwrap();
        let base = s.tree.parent().unwrap().to_path_buf();
        assert!(s.tree.join("pkg/d02/env/lib/keep.py").exists());
        assert!(s.tree.join(".venv/bin/python").exists());
        let before_src = state(src.path());
        let before_out = state(outside.path());
        drop(s);
        assert!(!base.exists(), "scratch dir left behind");
        assert_eq!(state(src.path()), before_src);
        assert_eq!(state(outside.path()), before_out);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn scratch_dir_spreads_its_tree_where_the_filesystem_can() {
        // Does the temp dir's filesystem keep FS_TOPDIR_FL at all (ext2/3/4)?
        let probe = tempfile::tempdir().unwrap();
        spread_subdirectories(probe.path());
        if platform::is_top_directory(probe.path()) != Some(true) {
            eprintln!("skipped: the temp dir's filesystem ignores FS_TOPDIR_FL");
            return;
        }
        let src = sample_tree();
        let m = manifest(src.path(), &[], &[]).unwrap();
        let a = Scratch::create(&m, 0).unwrap();
        let b = Scratch::create(&m, 0).unwrap();
        let base = a.tree.parent().unwrap();
        assert_eq!(platform::is_top_directory(base), Some(true));
        // Each tree has a name of its own (the allocator hashes it).
        assert_ne!(a.tree.file_name(), b.tree.file_name());
    }
}
