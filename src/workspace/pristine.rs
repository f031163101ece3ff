//! The run's pristine copy of the checkout, the one every worker copy is
//! made from and restored from.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::Result;
use crate::workspace::area::Area;
use crate::workspace::copy::{copy_tree, remove_tree_contents};
use crate::workspace::manifest::Manifest;

/// The run's one copy of the manifest, made from the user's checkout once:
/// every worker copy is made from it and every reset restores from it, so
/// an edit the user makes during the run reaches none of them. Removed
/// when dropped.
#[derive(Debug)]
pub struct Pristine {
    /// Held for its `Drop`: removes the whole dir.
    _area: Area,
    /// The clean copy's root: what every scratch copy is made and restored
    /// from.
    pub tree: PathBuf,
    /// What it holds: the files copied and the directories linked.
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
    /// Empty the tree on a few threads (see [`Scratch`](super::Scratch)'s `Drop`); the
    /// area then removes what is left.
    fn drop(&mut self) {
        remove_tree_contents(&self.tree);
    }
}
