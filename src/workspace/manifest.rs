//! The manifest: what a copy of the target tree holds, computed once per
//! run. Tracked files (with their uncommitted edits) plus untracked files
//! that are not ignored (or every file of a tree that is not in git), and
//! the ignored environment directories that are linked, not copied.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::{Context, Error, Result};
use crate::workspace::link::copied_link_target;

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
    /// directories in the checkout, or symlinks to one; the `@scope` dirs
    /// in a `node_modules`; every directory of a private entry, see
    /// [`Manifest::env_copies`]), parents first.
    pub env_dirs: Vec<PathBuf>,
    /// The entries of those directories, each made a symlink in the copy: a
    /// symlink in the checkout gets the target [`copied_link_target`] gives
    /// (a relative one that stays in the tree stays relative, so that a
    /// workspace package's link resolves to the copy's package; an absolute
    /// one into the tree points into the copy); anything else (a package
    /// dir, pnpm's `.pnpm` store, `.bin`, `.venv/bin`, a file) is a link to the
    /// original. An env dir that is a symlink to nothing or to a file is one
    /// of these. Sorted.
    pub env_links: Vec<PathBuf>,
    /// The entries of an env dir that is a symlink to a directory (a
    /// `node_modules` or `venv` kept elsewhere): each is a link to its path
    /// in the checkout, symlink or not, so that it resolves as it does
    /// there. Sorted.
    pub env_via: Vec<PathBuf>,
    /// The files and symlinks of the private entries of the env dirs (the
    /// dot-named ones but [`SHARED_DOT_ENTRIES`]: a runner's cache or temp dir such as
    /// `node_modules/.vite`, `.cache`, `.venv/.pytest_cache`), copied into
    /// every copy like the tree's files, so that what a runner writes there,
    /// in place or new, stays in the copy. Never mutated or scanned. Sorted.
    pub env_copies: Vec<PathBuf>,
    /// Whether the tree came from git (for messages).
    pub from_git: bool,
    /// Symlinks of the tree that lead outside the root, with the target they
    /// get in a copy (their original target: see [`copied_link_target`]). A
    /// suite can write through them; the run names them. Sorted.
    pub outside_links: Vec<(String, PathBuf)>,
}

pub(super) fn rel_string(p: &Path) -> String {
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
    let layout = env_layout(&root, &links)?;
    Ok(Manifest {
        root,
        entries,
        opaque,
        links,
        env_dirs: layout.dirs,
        env_links: layout.links,
        env_via: layout.via,
        env_copies: layout.copies,
        from_git,
        outside_links,
    })
}

/// The dot-named entries of an env dir that are not a runner's but the
/// package manager's: what it installs and runners only read (the links of
/// `.bin`; the stores of pnpm, yarn's pnpm linker, bun and deno; tox's
/// packaging env). Shared like a package's dir.
pub const SHARED_DOT_ENTRIES: &[&str] = &[".bin", ".pnpm", ".store", ".bun", ".deno", ".pkg"];

/// Whether the entry `name` of an env dir is private to
/// each copy (copied, never linked): a dot-named file or directory that is
/// not one of the [`SHARED_DOT_ENTRIES`]. Those are where runners and tools
/// keep their caches, temp files and state (`.vite`, `.vite-temp`,
/// `.vitest`, `.cache`, `.jest-cache`, `.pytest_cache`, `.package-lock.json`,
/// `.lock`), which they rewrite in place: through a link that would be the
/// user's file. (A symlink is copied as the same symlink, as in the tree.)
fn private_entry(name: &std::ffi::OsStr) -> bool {
    let name = name.as_encoded_bytes();
    name.starts_with(b".") && !SHARED_DOT_ENTRIES.iter().any(|s| s.as_bytes() == name)
}

impl Manifest {
    /// Whether `rel` (relative to the copy) is inside a private entry of an
    /// env dir (see [`private_entry`]): a runner's cache or state, which a
    /// run rewrites routinely (vitest's `node_modules/.vite`). Put back
    /// after every run like any path, but not debris.
    pub fn in_runner_cache(&self, rel: &Path) -> bool {
        self.links.iter().any(|l| {
            rel.strip_prefix(l)
                .ok()
                .and_then(|rest| rest.components().next())
                .is_some_and(|first| private_entry(first.as_os_str()))
        })
    }
}

/// How the env dirs are laid out in a copy (see [`Manifest`]).
#[derive(Default)]
struct Layout {
    dirs: Vec<PathBuf>,
    links: Vec<PathBuf>,
    via: Vec<PathBuf>,
    copies: Vec<PathBuf>,
}

/// How the env dirs `links` are laid out in a copy (see
/// [`Manifest::env_dirs`], [`Manifest::env_links`], [`Manifest::env_via`]
/// and [`Manifest::env_copies`]): each one is a directory in the copy, its
/// private entries are copied whole, and its other entries become links,
/// as do those of the `@scope` dirs directly in a `node_modules` (where
/// npm, pnpm and yarn put a scoped workspace package's link). Nothing else
/// is read: a large store costs one link.
fn env_layout(root: &Path, links: &[String]) -> Result<Layout> {
    let mut out = Layout::default();
    let list = |rel: &Path| -> Result<Vec<(PathBuf, std::fs::FileType)>> {
        let dir = root.join(rel);
        let mut out = Vec::new();
        for e in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let e = e.with_context(|| format!("reading {}", dir.display()))?;
            let ft = e
                .file_type()
                .with_context(|| format!("reading {}", e.path().display()))?;
            out.push((rel.join(e.file_name()), ft));
        }
        Ok(out)
    };
    // Every directory and file of the private entry `rel`.
    let copy_whole = |rel: PathBuf, ft: std::fs::FileType, out: &mut Layout| -> Result<()> {
        if !ft.is_dir() {
            out.copies.push(rel);
            return Ok(());
        }
        let mut stack = vec![rel];
        while let Some(d) = stack.pop() {
            for (child, ft) in list(&d)? {
                if ft.is_dir() {
                    stack.push(child);
                } else {
                    out.copies.push(child);
                }
            }
            out.dirs.push(d);
        }
        Ok(())
    };
    let private = |p: &Path| p.file_name().is_some_and(private_entry);
    for name in links {
        let rel = PathBuf::from(name);
        let abs = root.join(&rel);
        let own = abs
            .symlink_metadata()
            .with_context(|| format!("reading {}", abs.display()))?;
        if !own.is_dir() {
            if !abs.is_dir() {
                // A symlink to nothing, or to a file: one link.
                out.links.push(rel);
                continue;
            }
            // A symlink to a directory (a venv kept elsewhere): a directory
            // whose entries lead to the checkout's, through its link.
            out.dirs.push(rel.clone());
            for (child, ft) in list(&rel)? {
                if private(&child) {
                    copy_whole(child, ft, &mut out)?;
                } else {
                    out.via.push(child);
                }
            }
            continue;
        }
        let node_modules = rel.file_name().is_some_and(|n| n == "node_modules");
        out.dirs.push(rel.clone());
        for (child, ft) in list(&rel)? {
            let scope = node_modules
                && ft.is_dir()
                && child
                    .file_name()
                    .is_some_and(|n| n.as_encoded_bytes().starts_with(b"@"));
            if scope {
                out.dirs.push(child.clone());
                out.links.extend(list(&child)?.into_iter().map(|(p, _)| p));
            } else if private(&child) {
                copy_whole(child, ft, &mut out)?;
            } else {
                out.links.push(child);
            }
        }
    }
    for v in [&mut out.dirs, &mut out.links, &mut out.via, &mut out.copies] {
        v.sort();
    }
    Ok(out)
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

    #[test]
    fn a_runner_cache_is_a_private_entry_of_an_env_dir() {
        let m = Manifest {
            root: PathBuf::from("/nonexistent"),
            entries: Vec::new(),
            opaque: Vec::new(),
            links: vec!["node_modules".into(), "packages/a/node_modules".into()],
            env_dirs: Vec::new(),
            env_links: Vec::new(),
            env_via: Vec::new(),
            env_copies: Vec::new(),
            from_git: true,
            outside_links: Vec::new(),
        };
        for cache in [
            "node_modules/.vite/vitest/h/results.json",
            "node_modules/.cache",
            "packages/a/node_modules/.cache/nyc/x.json",
        ] {
            assert!(m.in_runner_cache(Path::new(cache)), "{cache}");
        }
        for not in [
            "node_modules/.bin/vitest",
            "node_modules/vitest/package.json",
            ".vite/x",
            "src/.cache/x",
            "node_modules",
        ] {
            assert!(!m.in_runner_cache(Path::new(not)), "{not}");
        }
    }
}
