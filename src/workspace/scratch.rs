//! A worker's scratch copy: written by unguard (a mutant, the original
//! back), run in, and put back after every run from the pristine copy.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::error::{Context, Result};

use crate::run::platform;
use crate::workspace::area::Area;
use crate::workspace::copy::{copy_entry, copy_tree, remove_tree_contents};
use crate::workspace::link::copied_link_target;
use crate::workspace::manifest::rel_string;
use crate::workspace::pristine::Pristine;
use crate::workspace::tree_state::{Rec, Reference, TreeState};

/// One worker's scratch area: `tree/` (the copy), `pycache/` (a private
/// PYTHONPYCACHEPREFIX), `junit/` and `run/` (made fresh for each run: its
/// TMPDIR and the runners' caches). Removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    /// Held for its `Drop`: removes the whole scratch area.
    _area: Area,
    /// The copy the suite runs in (`tree/`).
    pub tree: PathBuf,
    /// The private `PYTHONPYCACHEPREFIX` (`pycache/`).
    pub pycache: PathBuf,
    /// Where a run's JUnit report is written (`junit/`).
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

    /// The bytes of the copy's file at `rel` (relative to its root).
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
    /// not counted; nor are the private entries of env dirs (runner caches).
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
        // A runner's own cache (see `Manifest::in_runner_cache`) is put back
        // too, but a run that rewrites it left no debris.
        let paths: Vec<String> = paths
            .iter()
            .filter(|p| !self.pristine.manifest.in_runner_cache(p))
            .map(|p| rel_string(p))
            .collect();
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
