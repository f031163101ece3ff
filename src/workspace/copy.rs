//! The copy itself: a manifest's files copied (or reflinked) into a tree on
//! a few threads, its env dirs laid out as dirs of links (their private
//! entries copied); and a tree's contents removed the same way.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::error::{Context, Error, Result};

use crate::run::platform;
use crate::workspace::area::INTERRUPTED;
use crate::workspace::link::copied_link_target;
use crate::workspace::manifest::Manifest;

/// Remove what is inside `tree`, in parallel and best effort. Symlinks (the
/// linked environment dirs among them) are unlinked, never followed.
pub(super) fn remove_tree_contents(tree: &Path) {
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

/// At most this many threads copy one scratch tree (each worker copies its
/// own tree at the same time, so more would only contend).
pub(super) const COPY_THREADS: usize = 4;
/// Entries a copy thread takes from the shared list at a time.
pub(super) const COPY_CHUNK: usize = 32;

/// Copy every manifest entry from `from` (the checkout, or the run's
/// pristine copy of it) into `tree` (which exists and is empty): the
/// directories first, once each, then the files and symlinks on a few
/// threads. Files keep their mode bits and mtime; symlinks are recreated as
/// the same symlinks; empty directories are not copied (the manifest lists
/// files). Where the filesystem can share extents (`FICLONE`: btrfs, XFS,
/// bcachefs), files are reflinked instead of copied.
pub fn copy_tree(from: &Path, manifest: &Manifest, tree: &Path) -> Result<()> {
    // The manifest's files and the env dirs' private files (copied: `i <
    // files`), then the env dirs' links (`i < links`), then the entries of
    // the env dirs that are symlinks to a directory.
    let files = manifest.entries.len() + manifest.opaque.len() + manifest.env_copies.len();
    let links = files + manifest.env_links.len();
    let entries: Vec<&Path> = manifest
        .entries
        .iter()
        .map(Path::new)
        .chain(manifest.opaque.iter().map(PathBuf::as_path))
        .chain(manifest.env_copies.iter().map(PathBuf::as_path))
        .chain(manifest.env_links.iter().map(PathBuf::as_path))
        .chain(manifest.env_via.iter().map(PathBuf::as_path))
        .collect();
    let from_checkout = from == manifest.root;
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
            } else if i < links || !from_checkout {
                link_env_entry(from, tree, rel)
            } else {
                link_via(from, tree, rel)
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

pub(super) type CloneFn = dyn Fn(&std::fs::File, &std::fs::File) -> std::io::Result<()> + Sync;

/// Copy one manifest entry. A source that vanished since the manifest was
/// taken (a temp file) is skipped.
pub(super) fn copy_entry(
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

/// Make the entry `rel` of an env dir of the checkout `from` that is a
/// symlink to a directory a link to its path in `from` (see
/// [`Manifest::env_via`]), whatever it is: it resolves as it does there. In
/// the pristine copy each is such a link already ([`link_env_entry`] keeps
/// it). One that vanished since the manifest was taken is skipped.
fn link_via(from: &Path, tree: &Path, rel: &Path) -> std::io::Result<()> {
    let src = from.join(rel);
    match src.symlink_metadata() {
        Ok(_) => std::os::unix::fs::symlink(src, tree.join(rel)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::io::Errno;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn set_mode(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
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
}
