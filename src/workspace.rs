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
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{anyhow, bail, Context, Result};
use tempfile::TempDir;

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

    let (mut entries, from_git, ignored_check): (Vec<String>, bool, Option<git2::Repository>) =
        match git2::Repository::discover(&root) {
            Ok(repo) if repo.workdir().is_some() => {
                let files = git_files(&repo, &root)?;
                (files, true, Some(repo))
            }
            _ => (walk_files(&root)?, false, None),
        };
    entries.retain(|e| !is_excluded(e));

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
    }
    entries.sort();
    entries.dedup();
    Ok(Manifest {
        root,
        entries,
        links,
        from_git,
    })
}

/// Tracked files (working-tree contents) plus untracked, non-ignored files under `root`.
fn git_files(repo: &git2::Repository, root: &Path) -> Result<Vec<String>> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| anyhow!("bare repository"))?
        .canonicalize()?;
    let prefix = root
        .strip_prefix(&workdir)
        .map(rel_string)
        .unwrap_or_default();
    let under = |p: &str| -> Option<String> {
        if prefix.is_empty() {
            Some(p.to_string())
        } else {
            p.strip_prefix(&format!("{prefix}/")).map(str::to_string)
        }
    };
    let mut out = BTreeSet::new();
    let index = repo.index().context("reading the git index")?;
    for entry in index.iter() {
        let path = String::from_utf8_lossy(&entry.path).into_owned();
        if let Some(rel) = under(&path) {
            let full = root.join(&rel);
            // Deleted in the working tree (uncommitted deletion): not copied.
            if full.symlink_metadata().is_ok() {
                if entry.mode == 0o160000 {
                    // Submodule: copy its files as a plain walk.
                    for f in walk_files(&full)? {
                        out.insert(format!("{rel}/{f}"));
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
        opts.pathspec(format!("{prefix}/"));
    }
    let statuses = repo
        .statuses(Some(&mut opts))
        .context("reading git status")?;
    for s in statuses.iter() {
        if s.status().contains(git2::Status::WT_NEW) {
            let path = String::from_utf8_lossy(s.path_bytes()).into_owned();
            if let Some(rel) = under(&path) {
                out.insert(rel);
            }
        }
    }
    Ok(out.into_iter().collect())
}

/// Every file and symlink under `root` (for a directory that is not in git).
/// `.git`, `__pycache__` and the default environment directories are skipped.
fn walk_files(root: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let rd = std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?;
        for e in rd {
            let e = e?;
            let name = e.file_name();
            let name_s = name.to_string_lossy();
            let child = rel.join(&name);
            let ft = e.file_type()?;
            if ft.is_dir() {
                if name_s == ".git" || name_s == "__pycache__" {
                    continue;
                }
                if rel.as_os_str().is_empty() && DEFAULT_LINKS.contains(&name_s.as_ref()) {
                    continue;
                }
                stack.push(child);
            } else {
                out.push(rel_string(&child));
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
    /// Copy the manifest into a fresh temp dir.
    pub fn create(manifest: &Manifest, worker: usize) -> Result<Scratch> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("unguard-w{worker}-"))
            .tempdir()
            .context("creating a scratch directory")?;
        let live = LiveScratch::new(dir.path());
        let base = dir.path().canonicalize()?;
        let tree = base.join("tree");
        let pycache = base.join("pycache");
        let junit_dir = base.join("junit");
        for d in [&tree, &pycache, &junit_dir] {
            std::fs::create_dir_all(d)?;
        }
        for rel in &manifest.entries {
            if INTERRUPTED.load(Ordering::Relaxed) {
                bail!("interrupted while copying the tree");
            }
            copy_entry(&manifest.root, &tree, rel)
                .with_context(|| format!("copying {rel} into the scratch tree"))?;
        }
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
            let mut perms = std::fs::metadata(&path)?.permissions();
            perms.set_mode(perms.mode() | 0o200);
            std::fs::set_permissions(&path, perms)?;
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

fn copy_entry(root: &Path, tree: &Path, rel: &str) -> Result<()> {
    let src = root.join(rel);
    let dst = tree.join(rel);
    if let Some(parent) = dst.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let meta = match src.symlink_metadata() {
        Ok(m) => m,
        // Vanished between enumeration and copy (e.g. a temp file): skip.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&src)?;
        std::os::unix::fs::symlink(&target, &dst)?;
    } else if meta.is_file() {
        std::fs::copy(&src, &dst)?;
        // Keep the original mtime: tools that cache by mtime see the same tree.
        // (futimens on a read-only handle: works for read-only files too.)
        if let Ok(m) = meta.modified() {
            if let Ok(f) = std::fs::File::open(&dst) {
                let _ = f.set_modified(m);
            }
        }
    }
    Ok(())
}
