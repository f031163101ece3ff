//! Scratch copies of the target tree. The user's checkout is only ever read:
//! never written, stashed or checked out.
//!
//! The copy holds the working tree *as it is*: tracked files (with their
//! uncommitted edits) plus untracked files that are not ignored. Ignored
//! environment directories (`.venv`, `node_modules`, …), at the top of the
//! target or deeper down, are recreated in the copy as directories of links
//! (see [`Manifest::env_links`]): an entry that is a link itself gets the
//! copied target every symlink of the tree gets, so the workspace links of
//! npm, pnpm and yarn resolve inside the copy; anything else is a link to
//! the original, shared, never copied. Symlinks inside the
//! tree are recreated pointing at the same thing, in the copy where that is
//! inside the tree, at the original target where it is outside (see
//! [`copied_link_target`]). The checkout is copied once per run into a [`Pristine`] copy;
//! each worker's [`Scratch`] copy is made from it, and reused: after every
//! run in it, whatever the run created, deleted or changed is put back
//! ([`crate::workspace::tree_state`]) from the pristine copy, never from the checkout.

pub mod tree_state;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{Context, Error, Result};
use tempfile::TempDir;

use crate::run::platform;
use crate::workspace::tree_state::{Rec, Reference, TreeState};

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
    /// Ignored environment dirs linked into the copy, relative paths with
    /// `/`: the top-level ones first, then nested ones (a pnpm package's
    /// `node_modules`) in path order. Each one is laid out by
    /// [`Manifest::env_dirs`] and [`Manifest::env_links`].
    pub links: Vec<String>,
    /// The directories a copy makes for the env dirs (those that are
    /// directories in the checkout, and the `@scope` dirs in a
    /// `node_modules`), parents first.
    pub env_dirs: Vec<PathBuf>,
    /// The entries of those directories, each made a symlink in the copy: a
    /// symlink in the checkout gets the target [`copied_link_target`] gives
    /// (a relative one that stays in the tree stays relative, so that a
    /// workspace package's link resolves to the copy's package; an absolute
    /// one into the tree points into the copy); anything else (a package
    /// dir, pnpm's `.pnpm` store, `.venv/bin`, a file) is a link to the
    /// original. An env dir that is itself a symlink is one of these. Sorted.
    pub env_links: Vec<PathBuf>,
    /// Whether the tree came from git (for messages).
    pub from_git: bool,
    /// Symlinks of the tree that lead outside the root, with the target they
    /// get in a copy (their original target: see [`copied_link_target`]). A
    /// suite can write through them; the run names them. Sorted.
    pub outside_links: Vec<(String, PathBuf)>,
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

    let (rels, ignored_dirs, ignored_check) = match open_repo(&root)? {
        Some(repo) => {
            let (files, ignored) = git_files(&repo, &root)?;
            (files, ignored, Some(repo))
        }
        None => (walk_files(&root)?, Vec::new(), None),
    };
    let from_git = ignored_check.is_some();
    let (mut entries, mut opaque) = split(rels);
    entries.retain(|e| !is_excluded(e));
    entries.sort();
    // (The excluded out dir and the linked env dirs have UTF-8 names.)
    opaque.retain(|p| !is_excluded(&rel_string(p)));

    let mut links: Vec<String> = Vec::new();
    for name in link_candidates(extra_links, &ignored_dirs) {
        let p = root.join(&name);
        let in_link = links.iter().any(|l| name.starts_with(&format!("{l}/")));
        if in_link || !p.is_dir() || is_excluded(&name) {
            continue;
        }
        let prefix = format!("{name}/");
        let first = entries.partition_point(|e| e.as_str() < prefix.as_str());
        let tracked = entries.get(first).is_some_and(|e| e.starts_with(&prefix));
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
                if !repo.is_path_ignored(rel).unwrap_or(true) && !wholly_ignored(repo, rel, &p) {
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
    let outside_links = outside_links(&root, &entries);
    let (env_dirs, env_links) = env_layout(&root, &links)?;
    Ok(Manifest {
        root,
        entries,
        opaque,
        links,
        env_dirs,
        env_links,
        from_git,
        outside_links,
    })
}

/// How the env dirs `links` are laid out in a copy (see
/// [`Manifest::env_dirs`] and [`Manifest::env_links`]): each one's entries
/// become links, and so do those of the `@scope` dirs directly in a
/// `node_modules` (where npm, pnpm and yarn put a scoped workspace
/// package's link). Nothing deeper is read: a large store costs one link.
fn env_layout(root: &Path, links: &[String]) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let (mut dirs, mut entries) = (Vec::new(), Vec::new());
    let list = |rel: &Path| -> Result<Vec<(PathBuf, bool)>> {
        let dir = root.join(rel);
        let mut out = Vec::new();
        for e in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let e = e.with_context(|| format!("reading {}", dir.display()))?;
            let is_dir = e
                .file_type()
                .with_context(|| format!("reading {}", e.path().display()))?
                .is_dir();
            out.push((rel.join(e.file_name()), is_dir));
        }
        Ok(out)
    };
    for name in links {
        let rel = PathBuf::from(name);
        let is_dir = root
            .join(&rel)
            .symlink_metadata()
            .with_context(|| format!("reading {}", root.join(&rel).display()))?
            .is_dir();
        if !is_dir {
            // Itself a symlink (to a venv elsewhere): one link.
            entries.push(rel);
            continue;
        }
        let node_modules = rel.file_name().is_some_and(|n| n == "node_modules");
        dirs.push(rel.clone());
        for (child, child_is_dir) in list(&rel)? {
            let scope = node_modules
                && child_is_dir
                && child
                    .file_name()
                    .is_some_and(|n| n.as_encoded_bytes().starts_with(b"@"));
            if scope {
                dirs.push(child.clone());
                entries.extend(list(&child)?.into_iter().map(|(p, _)| p));
            } else {
                entries.push(child);
            }
        }
    }
    dirs.sort();
    entries.sort();
    Ok((dirs, entries))
}

/// The paths that may be linked env dirs, in order: the top-level names
/// (defaults, then `workspace.link` names), the `workspace.link` paths, and
/// the git-ignored dirs deeper down that carry one of the names. Each is
/// still checked (a dir, ignored, nothing in it copied) by the caller.
fn link_candidates(extra_links: &[String], ignored_dirs: &[String]) -> Vec<String> {
    let mut names: Vec<String> = DEFAULT_LINKS.iter().map(|s| s.to_string()).collect();
    for l in extra_links.iter().filter(|l| !l.contains('/')) {
        if !names.contains(l) {
            names.push(l.clone());
        }
    }
    let mut nested: BTreeSet<String> = extra_links
        .iter()
        .filter(|l| l.contains('/'))
        .cloned()
        .collect();
    nested.extend(
        ignored_dirs
            .iter()
            .filter(|d| {
                d.rsplit_once('/')
                    .is_some_and(|(_, name)| names.iter().any(|n| n == name))
            })
            .cloned(),
    );
    names.extend(nested);
    names
}

/// The symlinks among `entries` whose copy leads outside `root` (see
/// [`Manifest::outside_links`]).
fn outside_links(root: &Path, entries: &[String]) -> Vec<(String, PathBuf)> {
    entries
        .iter()
        .filter_map(|e| {
            let target = std::fs::read_link(root.join(e)).ok()?;
            // Mapped onto a copy at `root` itself: what stays inside stays under it.
            let copied = copied_link_target(root, root, Path::new(e), &target);
            (copied.is_absolute() && !copied.starts_with(root)).then(|| (e.clone(), copied))
        })
        .collect()
}

/// The git repository whose work tree holds `root`, or `None` when there
/// is none (or it is bare): then the tree is walked. A repository that
/// exists but cannot be read (owned by another user, corrupt) stops the
/// run: a walk would copy the files git ignores, secrets among them.
fn open_repo(root: &Path) -> Result<Option<git2::Repository>> {
    let repo_dir = root
        .ancestors()
        .find(|d| d.join(".git").symlink_metadata().is_ok());
    let e = match git2::Repository::discover(root) {
        Ok(repo) => return Ok(repo.workdir().is_some().then_some(repo)),
        Err(e) if e.code() == git2::ErrorCode::NotFound && repo_dir.is_none() => return Ok(None),
        Err(e) => e,
    };
    let at = repo_dir.unwrap_or(root);
    let fix = if e.code() == git2::ErrorCode::Owner {
        format!(
            "the repository belongs to another user; if you trust it, run `git config --global --add safe.directory {}` and run unguard again",
            at.display()
        )
    } else {
        format!(
            "repair the repository (`git -C {} status` shows what is wrong), or remove its `.git` to copy the directory as it is",
            at.display()
        )
    };
    Err(Error::Usage(format!(
        "git cannot read the repository at {}: {}\n  unguard stops rather than copy the files git would ignore (secrets among them)\n  fix: {fix}",
        at.display(),
        e.message()
    )))
}

/// Tracked files (working-tree contents) plus untracked, non-ignored files
/// under `root`; and the ignored directories under it (relative, UTF-8),
/// as git reports them: the top ignored dir of each ignored tree.
fn git_files(repo: &git2::Repository, root: &Path) -> Result<(Vec<Rel>, Vec<String>)> {
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
                    for f in submodule_files(&full)? {
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
        .include_ignored(true)
        .recurse_ignored_dirs(false)
        .exclude_submodules(true);
    if !prefix.is_empty() {
        let mut spec = prefix.clone();
        spec.push(b'/');
        opts.pathspec(spec);
    }
    let statuses = repo
        .statuses(Some(&mut opts))
        .context("reading git status")?;
    let mut ignored_dirs = Vec::new();
    for s in statuses.iter() {
        let bytes = s.path_bytes();
        if s.status().contains(git2::Status::WT_NEW) {
            if let Some(rel) = under(bytes) {
                out.insert(rel);
            }
        } else if s.status().contains(git2::Status::IGNORED) {
            // An ignored directory is reported once, with a trailing `/`
            // (a symlink to one without: the caller checks what it is).
            if let Some(dir) = under(bytes.strip_suffix(b"/").unwrap_or(bytes)) {
                if let Some(d) = dir.to_str() {
                    ignored_dirs.push(d.to_string());
                }
            }
        }
    }
    Ok((out.iter().map(|p| Rel::of(p)).collect(), ignored_dirs))
}

/// A submodule's files: those git lists in its own repository when it is
/// checked out (never the files its `.gitignore` leaves out), or whatever a
/// walk finds in its dir when it is not (usually nothing).
fn submodule_files(dir: &Path) -> Result<Vec<Rel>> {
    if dir.join(".git").symlink_metadata().is_err() {
        return walk_files(dir);
    }
    match open_repo(dir)? {
        Some(repo) => Ok(git_files(&repo, dir)?.0),
        None => walk_files(dir),
    }
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
struct Area {
    _dir: TempDir,
    _live: LiveScratch,
    /// Its canonical path.
    base: PathBuf,
}

impl Area {
    /// Make and register a fresh private (0700) dir named `<prefix>XXXXXX`; refused once
    /// the run is interrupted.
    fn new(prefix: &str) -> Result<Area> {
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
    fn tree_dir(&self) -> Result<PathBuf> {
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

/// The run's one copy of the manifest, made from the user's checkout once:
/// every worker copy is made from it and every reset restores from it, so
/// an edit the user makes during the run reaches none of them. Removed
/// when dropped.
#[derive(Debug)]
pub struct Pristine {
    /// Held for its `Drop`: removes the whole dir.
    _area: Area,
    pub tree: PathBuf,
    pub manifest: Arc<Manifest>,
    /// Set once a run left debris in a copy (the warning is printed once).
    debris_seen: AtomicBool,
}

impl Pristine {
    /// Copy the manifest from the checkout (see [`copy_tree`]).
    pub fn create(manifest: Arc<Manifest>) -> Result<Pristine> {
        let area = Area::new("unguard-pristine-")?;
        let tree = area.tree_dir()?;
        let p = Pristine {
            _area: area,
            tree,
            manifest,
            debris_seen: AtomicBool::new(false),
        };
        copy_tree(&p.manifest.root, &p.manifest, &p.tree)?;
        Ok(p)
    }

    /// Whether this is the first time a run left debris (true once).
    pub fn first_debris(&self) -> bool {
        !self.debris_seen.swap(true, Ordering::SeqCst)
    }
}

impl Drop for Pristine {
    /// Empty the tree on a few threads (see [`Scratch`]'s `Drop`); the
    /// area then removes what is left.
    fn drop(&mut self) {
        remove_tree_contents(&self.tree);
    }
}

/// One worker's scratch area: `tree/` (the copy), `pycache/` (a private
/// PYTHONPYCACHEPREFIX), `junit/` and `run/` (made fresh for each run: its
/// TMPDIR and the runners' caches). Removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    /// Held for its `Drop`: removes the whole scratch area.
    _area: Area,
    pub tree: PathBuf,
    pub pycache: PathBuf,
    pub junit_dir: PathBuf,
    /// This run's own dirs (see [`RunDirs`]), emptied after it.
    pub run: RunDirs,
    /// Where resets restore from.
    pristine: Arc<Pristine>,
    /// The copy as made, plus what unguard wrote since.
    state: TreeState,
    /// Bytes unguard wrote to a file of the copy (a mutant, the original
    /// back): what a reset restores that file to.
    wrote: BTreeMap<String, Vec<u8>>,
    /// Files written since the last run (their cached bytecode must go).
    written: BTreeSet<String>,
    /// Number of runs prepared so far (names fresh JUnit paths).
    runs: u64,
}

/// A run's own dirs inside its worker's scratch area, emptied after it.
#[derive(Debug, Clone)]
pub struct RunDirs {
    /// Holds the others.
    pub dir: PathBuf,
    /// The run's `TMPDIR` (`TMP`, `TEMP`).
    pub tmp: PathBuf,
    /// Hypothesis's example database (`HYPOTHESIS_STORAGE_DIRECTORY`).
    pub hypothesis: PathBuf,
}

impl RunDirs {
    fn at(dir: PathBuf) -> RunDirs {
        RunDirs {
            tmp: dir.join("tmp"),
            hypothesis: dir.join("hypothesis"),
            dir,
        }
    }

    /// Make the dirs a run starts with (`tmp`, private), unless they are
    /// there already as they should be. They are kept from run to run and
    /// only emptied ([`RunDirs::empty`]): on an ext4 without a journal each
    /// new inode costs more the more were deleted nearby in the last minute.
    fn make(&self) -> std::io::Result<()> {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        for d in [&self.dir, &self.tmp] {
            match d.symlink_metadata() {
                Ok(m) if m.is_dir() && m.mode() & 0o7777 == 0o700 => continue,
                Ok(_) => crate::workspace::tree_state::remove_any(d)?,
                Err(_) => {}
            }
            std::fs::DirBuilder::new().mode(0o700).create(d)?;
        }
        Ok(())
    }

    /// Remove whatever a run left in them (best effort; [`RunDirs::make`]
    /// sees to the rest before the next run).
    fn empty(&self) {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p != self.tmp {
                let _ = crate::workspace::tree_state::remove_any(&p);
            } else if let Ok(inner) = std::fs::read_dir(&p) {
                for e in inner.flatten() {
                    let _ = crate::workspace::tree_state::remove_any(&e.path());
                }
            }
        }
    }
}

/// What a reset after a run put back in the copy.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Reset {
    /// Paths (relative to the copy) that were created, deleted or changed
    /// and are back as they were, sorted; the run's expected outputs are
    /// not among them.
    pub paths: Vec<String>,
    /// Whether this was the first debris of the whole run.
    pub first: bool,
}

impl Scratch {
    /// Copy the pristine copy into a fresh temp dir (see [`copy_tree`]) and
    /// record what it holds.
    pub fn create(pristine: &Arc<Pristine>, worker: usize) -> Result<Scratch> {
        let area = Area::new(&format!("unguard-w{worker}-"))?;
        let tree = area.tree_dir()?;
        let pycache = area.base.join("pycache");
        let junit_dir = area.base.join("junit");
        for d in [&pycache, &junit_dir] {
            std::fs::create_dir(d).with_context(|| format!("creating {}", d.display()))?;
        }
        copy_tree(&pristine.tree, &pristine.manifest, &tree)?;
        let state = TreeState::record(&tree)
            .with_context(|| format!("recording the scratch tree {}", tree.display()))?;
        let run = RunDirs::at(area.base.join("run"));
        run.make()
            .with_context(|| format!("creating {}", run.tmp.display()))?;
        Ok(Scratch {
            _area: area,
            tree,
            pycache,
            junit_dir,
            run,
            pristine: pristine.clone(),
            state,
            wrote: BTreeMap::new(),
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
        // What the copy holds now, by unguard's hand: not debris.
        self.state
            .update(&self.tree, Path::new(rel))
            .with_context(|| format!("reading {}", path.display()))?;
        self.wrote.insert(rel.to_string(), bytes.to_vec());
        self.written.insert(rel.to_string());
        Ok(())
    }

    pub fn read(&self, rel: &str) -> Result<Vec<u8>> {
        let path = self.tree.join(rel);
        std::fs::read(&path).with_context(|| format!("reading {}", path.display()))
    }

    /// Before a run: stale bytecode purged (see
    /// [`Scratch::purge_stale_bytecode`]) and the run's own dirs there.
    pub fn begin_run(&mut self) -> Result<()> {
        self.purge_stale_bytecode();
        self.run
            .make()
            .with_context(|| format!("creating {}", self.run.tmp.display()))
    }

    /// After a run: its own dirs emptied, and the copy put back as it was
    /// before it (see [`TreeState::reset`]). `expected` are outputs the run
    /// was asked for inside the copy (a relative `test.junit`): removed, but
    /// not counted.
    pub fn end_run(&mut self, expected: &[PathBuf]) -> Result<Reset> {
        self.run.empty();
        // A file unguard wrote whose bytes are not those any more, whatever
        // its metadata says.
        let suspects: Vec<PathBuf> = self
            .wrote
            .iter()
            .filter(|(rel, bytes)| std::fs::read(self.tree.join(rel)).ok().as_ref() != Some(bytes))
            .map(|(rel, _)| PathBuf::from(rel))
            .collect();
        let reference = Restorer {
            pristine: &self.pristine,
            wrote: &self.wrote,
            tree: &self.tree,
        };
        let paths = self
            .state
            .reset(&self.tree, &reference, &suspects, expected)
            .with_context(|| format!("putting back the scratch tree {}", self.tree.display()))?;
        let paths: Vec<String> = paths.iter().map(|p| rel_string(p)).collect();
        let first = !paths.is_empty() && self.pristine.first_debris();
        Ok(Reset { paths, first })
    }

    /// How many entries the copy holds (files, symlinks, directories).
    pub fn entries(&self) -> usize {
        self.state.len()
    }

    /// Whether a reset compares only the entries the kernel saw touched
    /// (see [`TreeState`]).
    pub fn watching(&self) -> bool {
        self.state.watching()
    }

    /// Compare every entry on every reset from now on.
    pub fn stop_watching(&mut self) {
        self.state.stop_watching();
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

    /// The user's checkout this is a copy of (canonical).
    pub fn root(&self) -> &Path {
        &self.pristine.manifest.root
    }

    /// Per-run JUnit path (fresh for each run).
    pub fn next_junit_path(&self, label: &str) -> PathBuf {
        self.junit_dir.join(format!("{}-{label}.xml", self.runs))
    }
}

/// Puts an entry of a worker copy back: the bytes unguard last wrote there,
/// or else the pristine copy's entry (an env dir's links among them).
struct Restorer<'a> {
    pristine: &'a Pristine,
    wrote: &'a BTreeMap<String, Vec<u8>>,
    tree: &'a Path,
}

impl Reference for Restorer<'_> {
    fn restore(&self, rel: &Path, dst: &Path, rec: &Rec) -> std::io::Result<()> {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let key = rel_string(rel);
        if let Some(bytes) = self.wrote.get(&key) {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(dst)?;
            std::io::Write::write_all(&mut f, bytes)?;
            return f.set_permissions(std::fs::Permissions::from_mode(rec.mode));
        }
        // (An env dir's entry is a symlink in the pristine copy too.)
        let reflink = AtomicBool::new(cfg!(target_os = "linux"));
        copy_entry(
            &self.pristine.tree,
            self.tree,
            rel,
            &reflink,
            &platform::reflink,
        )
    }

    fn same(&self, rel: &Path, dst: &Path, rec: &Rec) -> bool {
        let Ok(now) = Rec::lstat(dst) else {
            return false;
        };
        let key = rel_string(rel);
        if let Some(bytes) = self.wrote.get(&key) {
            return now.mode == rec.mode && std::fs::read(dst).is_ok_and(|b| &b == bytes);
        }
        let src = self.pristine.tree.join(rel);
        if now.is_symlink() {
            // The link as a copy of the pristine copy has it (see
            // [`copied_link_target`]).
            let Ok(target) = std::fs::read_link(&src) else {
                return false;
            };
            let copied = copied_link_target(&self.pristine.tree, self.tree, rel, &target);
            return std::fs::read_link(dst).is_ok_and(|t| t == copied);
        }
        now.mode == rec.mode && now.mtime() == rec.mtime() && same_bytes(&src, dst).unwrap_or(false)
    }
}

/// Whether files `a` and `b` hold the same bytes.
fn same_bytes(a: &Path, b: &Path) -> std::io::Result<bool> {
    use std::io::Read;
    let (mut fa, mut fb) = (std::fs::File::open(a)?, std::fs::File::open(b)?);
    if fa.metadata()?.len() != fb.metadata()?.len() {
        return Ok(false);
    }
    let (mut ba, mut bb) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let n = fa.read(&mut ba)?;
        if n == 0 {
            return Ok(true);
        }
        fb.read_exact(&mut bb[..n])?;
        if ba[..n] != bb[..n] {
            return Ok(false);
        }
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

/// Copy every manifest entry from `from` (the checkout, or the run's
/// pristine copy of it) into `tree` (which exists and is empty): the
/// directories first, once each, then the files and symlinks on a few
/// threads. Files keep their mode bits and mtime; symlinks are recreated as
/// the same symlinks; empty directories are not copied (the manifest lists
/// files). Where the filesystem can share extents (`FICLONE`: btrfs, XFS,
/// bcachefs), files are reflinked instead of copied.
pub fn copy_tree(from: &Path, manifest: &Manifest, tree: &Path) -> Result<()> {
    let files = manifest.entries.len() + manifest.opaque.len();
    // The manifest's files, then the env dirs' links (`i >= files`).
    let entries: Vec<&Path> = manifest
        .entries
        .iter()
        .map(Path::new)
        .chain(manifest.opaque.iter().map(PathBuf::as_path))
        .chain(manifest.env_links.iter().map(PathBuf::as_path))
        .collect();
    let mut dirs: BTreeSet<&Path> = BTreeSet::new();
    // An env dir is made even when empty, its ancestors too.
    for d in &manifest.env_dirs {
        dirs.extend(d.ancestors().filter(|a| !a.as_os_str().is_empty()));
    }
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
        if INTERRUPTED.load(Ordering::Relaxed) {
            break;
        }
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
            // Checked before each file: a second Ctrl-C removes the copy
            // while this runs, and must find it no longer growing.
            if INTERRUPTED.load(Ordering::Relaxed) {
                return;
            }
            let copied = if i < files {
                copy_entry(from, tree, rel, &reflink, &platform::reflink)
            } else {
                link_env_entry(from, tree, rel)
            };
            if let Err(e) = copied {
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
        return std::os::unix::fs::symlink(copied_link_target(root, tree, rel, &target), &dst);
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

/// Make the env dir entry `rel` of `from` (the checkout, or the pristine
/// copy) a symlink in `tree` (see [`Manifest::env_links`]): a symlink gets
/// its copied target, anything else a link to itself in `from` (only ever
/// the checkout: in the pristine copy every one is a symlink already). One
/// that vanished since the manifest was taken is skipped.
fn link_env_entry(from: &Path, tree: &Path, rel: &Path) -> std::io::Result<()> {
    let src = from.join(rel);
    let target = match src.symlink_metadata() {
        Ok(m) if m.file_type().is_symlink() => {
            copied_link_target(from, tree, rel, &std::fs::read_link(&src)?)
        }
        Ok(_) => src,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    std::os::unix::fs::symlink(target, tree.join(rel))
}

/// Where the symlink `rel` of the tree `from` (the checkout, or the
/// pristine copy) points in its copy `to`, given its `target`:
/// - absolute and into `from` (as written or once resolved): the same path
///   under `to`, so that nothing written through it reaches `from`;
/// - relative and staying inside `from` (lexically): the same relative
///   target, which resolves inside the copy too;
/// - leaving `from` (relative) : the absolute original target, resolved
///   where it can be, so that the copy never resolves it next to itself, in
///   the shared temp dir, where anyone can plant a file;
/// - absolute and outside: the same target.
pub(crate) fn copied_link_target(from: &Path, to: &Path, rel: &Path, target: &Path) -> PathBuf {
    use std::path::Component;
    let under = |inside: &Path| -> PathBuf {
        if inside.as_os_str().is_empty() {
            to.to_path_buf()
        } else {
            to.join(inside)
        }
    };
    if target.is_absolute() {
        let plain = !target.components().any(|c| c == Component::ParentDir);
        if let Some(inside) = target.strip_prefix(from).ok().filter(|_| plain) {
            return under(inside);
        }
        if let Some(inside) = target
            .canonicalize()
            .ok()
            .and_then(|c| c.strip_prefix(from).ok().map(Path::to_path_buf))
        {
            return under(&inside);
        }
        return target.to_path_buf();
    }
    let dir = rel.parent().unwrap_or(Path::new(""));
    if stays_inside(dir, target) {
        return target.to_path_buf();
    }
    let original = from.join(dir).join(target);
    original.canonicalize().unwrap_or(original)
}

/// Whether the relative `target` of a symlink in the directory `dir` (both
/// relative to the root) stays inside the root, by its components.
fn stays_inside(dir: &Path, target: &Path) -> bool {
    use std::path::Component;
    let mut depth = dir.components().count();
    for c in target.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir if depth > 0 => depth -= 1,
            _ => return false,
        }
    }
    true
}

/// A directory git ignores through its own contents: not matched itself,
/// but every entry in it is (uv and virtualenv write `.venv/.gitignore`
/// with `*`; `git status --ignored` then lists `.venv/` as ignored). It is
/// an env dir like one the root `.gitignore` names. An empty or unreadable
/// directory is not.
fn wholly_ignored(repo: &git2::Repository, rel: &Path, abs: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(abs) else {
        return false;
    };
    let mut any = false;
    for e in entries.flatten() {
        any = true;
        if !repo
            .is_path_ignored(rel.join(e.file_name()))
            .unwrap_or(false)
        {
            return false;
        }
    }
    any
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

    /// The run's pristine copy of `m`.
    fn pristine(m: &Manifest) -> Arc<Pristine> {
        Arc::new(Pristine::create(Arc::new(m.clone())).unwrap())
    }

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
        let s = Scratch::create(&pristine(&m), 0).unwrap();
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
            let a = s.spawn(|| Scratch::create(&pristine(&m), 0).unwrap());
            let b = s.spawn(|| Scratch::create(&pristine(&m), 1).unwrap());
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
        let mut s = Scratch::create(&pristine(&m), 0).unwrap();
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

    /// What a careless suite does to a copy of [`sample_tree`]: returns the
    /// paths a reset must name.
    fn scramble(tree: &Path) -> Vec<&'static str> {
        use std::os::unix::fs::symlink;
        let w = |rel: &str, body: &str| std::fs::write(tree.join(rel), body).unwrap();
        // Created: a file, a directory tree, a socket.
        w("run.lock", "pid 42\n");
        std::fs::create_dir_all(tree.join("newdir/sub")).unwrap();
        w("newdir/sub/x.db", "table");
        let _sock = std::os::unix::net::UnixListener::bind(tree.join("sock")).unwrap();
        // Deleted: a file, a whole directory.
        std::fs::remove_file(tree.join("pkg/d00/sub/m00.py")).unwrap();
        std::fs::remove_dir_all(tree.join("pkg/d01")).unwrap();
        // Changed in place, same size, mtime set back: only ctime tells.
        let p = tree.join("pkg/d02/sub/m05.py");
        let m = std::fs::metadata(&p).unwrap();
        let len = m.len() as usize;
        std::fs::write(&p, "#".repeat(len)).unwrap();
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(m.modified().unwrap()).unwrap();
        // Mode, symlink target.
        set_mode(&tree.join("run.sh"), 0o644);
        std::fs::remove_file(tree.join("rel-link")).unwrap();
        symlink("pkg/d03/sub/m01.py", tree.join("rel-link")).unwrap();
        // A file became a directory, a directory became a file.
        std::fs::remove_file(tree.join("empty.txt")).unwrap();
        std::fs::create_dir(tree.join("empty.txt")).unwrap();
        std::fs::remove_dir_all(tree.join("pkg/d04")).unwrap();
        w("pkg/d04", "not a dir");
        // A directory locked after a file was left in it.
        w("pkg/d05/junk", "x");
        set_mode(&tree.join("pkg/d05"), 0o000);
        // Written through a hard link that is gone again.
        std::fs::hard_link(tree.join("pkg/d06/sub/m00.py"), tree.join("hl")).unwrap();
        let mut f = std::fs::File::options()
            .append(true)
            .open(tree.join("hl"))
            .unwrap();
        std::io::Write::write_all(&mut f, b"# appended\n").unwrap();
        std::fs::remove_file(tree.join("hl")).unwrap();
        // Moved away.
        std::fs::rename(tree.join("pkg/d07"), tree.join("moved")).unwrap();
        // Changed and changed back by the run itself: nothing to put back.
        let back = tree.join("pkg/d08/sub/m00.py");
        std::fs::rename(&back, tree.join("away")).unwrap();
        std::fs::rename(tree.join("away"), &back).unwrap();
        set_mode(&tree.join("readonly.py"), 0o644);
        set_mode(&tree.join("readonly.py"), 0o444);
        std::fs::remove_file(tree.join("dangling")).unwrap();
        symlink("does/not/exist", tree.join("dangling")).unwrap();
        vec![
            "empty.txt",
            "moved",
            "newdir",
            "pkg/d00/sub/m00.py",
            "pkg/d01",
            "pkg/d02/sub/m05.py",
            "pkg/d04",
            "pkg/d05",
            "pkg/d05/junk",
            "pkg/d06/sub/m00.py",
            "pkg/d07",
            "rel-link",
            "run.lock",
            "run.sh",
            "sock",
        ]
    }

    fn reset_puts_back_whatever_a_run_did(watch: bool) {
        let src = sample_tree();
        let m = manifest(src.path(), &[], &[]).unwrap();
        let p = pristine(&m);
        let mut s = Scratch::create(&p, 0).unwrap();
        if !watch {
            s.stop_watching();
        }
        assert_eq!(s.watching(), watch && cfg!(target_os = "linux"));
        let expected = state(&p.tree);
        // Coarse timestamps: the changes come at least a tick after the copy.
        std::thread::sleep(Duration::from_millis(30));
        s.begin_run().unwrap();
        let names = scramble(&s.tree);
        let r = s.end_run(&[]).unwrap();
        assert_eq!(r.paths, names);
        assert!(r.first, "the first debris of the run");
        assert_eq!(state(&s.tree), expected);
        let mode = std::fs::metadata(s.tree.join("pkg/d05")).unwrap().mode() & 0o777;
        assert_eq!(mode & 0o700, 0o700, "the locked directory is open again");
        // Clean now; a second debris is not the first any more.
        s.begin_run().unwrap();
        assert_eq!(s.end_run(&[]).unwrap(), Reset::default());
        std::fs::write(s.tree.join("again"), "x").unwrap();
        let r = s.end_run(&[]).unwrap();
        assert_eq!((r.paths, r.first), (vec!["again".to_string()], false));
        assert_eq!(state(&s.tree), expected);
    }

    #[test]
    fn reset_puts_back_whatever_a_run_did_watching() {
        reset_puts_back_whatever_a_run_did(true);
    }

    #[test]
    fn reset_puts_back_whatever_a_run_did_walking() {
        reset_puts_back_whatever_a_run_did(false);
    }

    #[test]
    fn reset_keeps_what_unguard_wrote_and_spares_expected_outputs() {
        let src = sample_tree();
        std::fs::create_dir_all(src.path().join(".venv/bin")).unwrap();
        let m = manifest(src.path(), &[], &[]).unwrap();
        let p = pristine(&m);
        let mut s = Scratch::create(&p, 0).unwrap();
        let target = "pkg/d03/sub/m07.py";
        s.write(target, b"mutated = True\n").unwrap();
        s.begin_run().unwrap();
        std::fs::write(s.run.tmp.join("app.lock"), "").unwrap();
        std::fs::create_dir(&s.run.hypothesis).unwrap();
        // The run changes the mutated file, removes the linked env dir
        // (its links), and writes the report it was asked for into the copy.
        std::thread::sleep(Duration::from_millis(30));
        std::fs::write(s.tree.join(target), b"mutated = Fals\n").unwrap();
        std::fs::remove_dir_all(s.tree.join(".venv")).unwrap();
        std::fs::create_dir(s.tree.join("reports")).unwrap();
        std::fs::write(s.tree.join("reports/junit.xml"), "<testsuite/>").unwrap();
        let r = s.end_run(&[PathBuf::from("reports/junit.xml")]).unwrap();
        assert_eq!(r.paths, vec![".venv", target]);
        // The mutant is back for a re-check, not the original.
        assert_eq!(s.read(target).unwrap(), b"mutated = True\n");
        assert_eq!(
            std::fs::read_link(s.tree.join(".venv/bin")).unwrap(),
            m.root.join(".venv/bin")
        );
        assert!(!s.tree.join("reports").exists());
        // The run's own dirs are empty again.
        assert_eq!(std::fs::read_dir(&s.run.tmp).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(&s.run.dir).unwrap().count(), 1);
    }

    /// A workspace's `node_modules`: links to workspace packages (relative,
    /// scoped, absolute), pnpm's store, a package dir, a file.
    fn workspace_tree() -> tempfile::TempDir {
        use std::os::unix::fs::symlink;
        let src = sample_tree();
        let r = src.path().canonicalize().unwrap();
        for p in ["packages/b/index.js", "packages/c/index.js"] {
            std::fs::create_dir_all(r.join(p).parent().unwrap()).unwrap();
            std::fs::write(r.join(p), "module.exports = 1\n").unwrap();
        }
        std::fs::write(r.join(".gitignore"), "node_modules\n.venv\n").unwrap();
        std::fs::create_dir_all(r.join("node_modules/.pnpm/dep@1/node_modules/dep")).unwrap();
        std::fs::create_dir_all(r.join("node_modules/@s")).unwrap();
        std::fs::create_dir_all(r.join("node_modules/hoisted")).unwrap();
        std::fs::write(r.join("node_modules/hoisted/index.js"), "x").unwrap();
        std::fs::write(r.join("node_modules/.modules.yaml"), "x").unwrap();
        symlink("../packages/b", r.join("node_modules/b")).unwrap();
        symlink("../../packages/c", r.join("node_modules/@s/c")).unwrap();
        symlink(r.join("packages/c"), r.join("node_modules/abs-c")).unwrap();
        symlink(".pnpm/dep@1/node_modules/dep", r.join("node_modules/dep")).unwrap();
        std::fs::create_dir_all(r.join("packages/b/node_modules")).unwrap();
        symlink("../../c", r.join("packages/b/node_modules/c")).unwrap();
        std::fs::create_dir_all(r.join(".venv/bin")).unwrap();
        symlink("/usr/bin/python3", r.join(".venv/bin/python")).unwrap();
        std::fs::write(r.join(".venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        std::fs::create_dir(r.join(".venv/empty")).unwrap();
        src
    }

    #[test]
    fn env_dirs_are_dirs_of_links_that_resolve_inside_each_copy() {
        let src = workspace_tree();
        let root = src.path().canonicalize().unwrap();
        let before = state(&root);
        let m = manifest(&root, &[], &[]).unwrap();
        assert_eq!(m.links, vec![".venv", "node_modules"]);
        let dirs: Vec<&str> = m.env_dirs.iter().map(|d| d.to_str().unwrap()).collect();
        assert_eq!(dirs, vec![".venv", "node_modules", "node_modules/@s"]);
        // The store is one link: nothing in it is listed.
        assert!(m.env_links.contains(&PathBuf::from("node_modules/.pnpm")));
        assert!(!m
            .env_links
            .iter()
            .any(|l| l.starts_with("node_modules/.pnpm/dep@1")));
        let p = pristine(&m);
        let mut s = Scratch::create(&p, 0).unwrap();
        let t = s.tree.clone();
        let t = &t;
        let link = |rel: &str| std::fs::read_link(t.join(rel)).unwrap();
        assert!(t.join("node_modules").symlink_metadata().unwrap().is_dir());
        assert!(t
            .join("node_modules/@s")
            .symlink_metadata()
            .unwrap()
            .is_dir());
        assert_eq!(link("node_modules/b"), PathBuf::from("../packages/b"));
        assert_eq!(link("node_modules/@s/c"), PathBuf::from("../../packages/c"));
        assert_eq!(link("node_modules/abs-c"), t.join("packages/c"));
        assert_eq!(link("node_modules/.pnpm"), root.join("node_modules/.pnpm"));
        assert_eq!(
            link("node_modules/hoisted"),
            root.join("node_modules/hoisted")
        );
        assert_eq!(
            link("node_modules/.modules.yaml"),
            root.join("node_modules/.modules.yaml")
        );
        assert_eq!(
            link("node_modules/dep"),
            PathBuf::from(".pnpm/dep@1/node_modules/dep")
        );
        assert_eq!(link("packages/b/node_modules/c"), PathBuf::from("../../c"));
        assert_eq!(link(".venv/bin"), root.join(".venv/bin"));
        assert_eq!(link(".venv/empty"), root.join(".venv/empty"));
        // What each resolves to: the copy's packages, the shared store.
        let real = |rel: &str| t.join(rel).canonicalize().unwrap();
        assert_eq!(real("node_modules/b/index.js"), real("packages/b/index.js"));
        assert_eq!(real("node_modules/@s/c"), real("packages/c"));
        assert_eq!(real("packages/b/node_modules/c"), real("packages/c"));
        assert!(real("node_modules/dep").starts_with(&root));
        assert!(t.join(".venv/bin/python").exists());
        // A run that removes the env dir, and one that adds a package to
        // it: put back, and the checkout never sees either.
        let made = state(&s.tree);
        s.stop_watching();
        std::thread::sleep(Duration::from_millis(30));
        std::fs::remove_dir_all(t.join("node_modules")).unwrap();
        std::fs::create_dir(t.join(".venv/new")).unwrap();
        let r = s.end_run(&[]).unwrap();
        assert_eq!(r.paths, vec![".venv/new", "node_modules"]);
        assert_eq!(state(&s.tree), made);
        drop(s);
        drop(p);
        assert_eq!(state(&root), before);
    }

    #[test]
    fn a_link_into_the_tree_points_into_each_copy_and_resets_there() {
        let src = sample_tree();
        let root = src.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(root.join("run.sh"), root.join("abs-in")).unwrap();
        std::os::unix::fs::symlink("../../../..", root.join("pkg/d02/sub/up")).unwrap();
        let m = manifest(src.path(), &[], &[]).unwrap();
        let outside: Vec<&str> = m.outside_links.iter().map(|(r, _)| r.as_str()).collect();
        assert_eq!(outside, vec!["abs-link", "pkg/d02/sub/up"]);
        assert_eq!(m.outside_links[1].1, root.parent().unwrap());
        let p = pristine(&m);
        assert_eq!(
            std::fs::read_link(p.tree.join("abs-in")).unwrap(),
            p.tree.join("run.sh")
        );
        let mut s = Scratch::create(&p, 0).unwrap();
        let link = s.tree.join("abs-in");
        assert_eq!(std::fs::read_link(&link).unwrap(), s.tree.join("run.sh"));
        s.stop_watching();
        // Recreated as it was: nothing to put back.
        std::thread::sleep(Duration::from_millis(30));
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(s.tree.join("run.sh"), &link).unwrap();
        assert_eq!(s.end_run(&[]).unwrap(), Reset::default());
        // Pointed at the checkout: back into the copy.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(root.join("run.sh"), &link).unwrap();
        assert_eq!(s.end_run(&[]).unwrap().paths, vec!["abs-in"]);
        assert_eq!(std::fs::read_link(&link).unwrap(), s.tree.join("run.sh"));
    }

    #[test]
    fn a_reset_restores_from_the_pristine_copy_never_the_checkout() {
        let src = sample_tree();
        let m = manifest(src.path(), &[], &[]).unwrap();
        let p = pristine(&m);
        let mut s = Scratch::create(&p, 0).unwrap();
        // The user edits the checkout during the run.
        std::fs::write(src.path().join("run.sh"), "#!/bin/sh\nexit 1\n").unwrap();
        std::fs::remove_file(s.tree.join("run.sh")).unwrap();
        let r = s.end_run(&[]).unwrap();
        assert_eq!(r.paths, vec!["run.sh"]);
        assert_eq!(s.read("run.sh").unwrap(), b"#!/bin/sh\nexit 0\n");
        // A worker copy made now is made from the pristine copy too.
        let s2 = Scratch::create(&p, 1).unwrap();
        assert_eq!(s2.read("run.sh").unwrap(), b"#!/bin/sh\nexit 0\n");
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
        let s = Scratch::create(&pristine(&m), 0).unwrap();
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
        let a = Scratch::create(&pristine(&m), 0).unwrap();
        let b = Scratch::create(&pristine(&m), 0).unwrap();
        let base = a.tree.parent().unwrap();
        assert_eq!(platform::is_top_directory(base), Some(true));
        // Each tree has a name of its own (the allocator hashes it).
        assert_ne!(a.tree.file_name(), b.tree.file_name());
    }

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
