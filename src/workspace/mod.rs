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
//! the original, shared, never copied; but a dot-named entry that is not
//! the package manager's (a runner's cache or temp dir: `.vite`, `.cache`,
//! `.pytest_cache`, see [`Manifest::env_copies`]) is copied whole, so what
//! a runner writes there stays in the copy. An env dir that is a symlink
//! to a directory is laid out the same way, its entries linked to their
//! path in the checkout (see [`Manifest::env_via`]). Symlinks inside the
//! tree are recreated pointing at the same thing, in the copy where that is
//! inside the tree, at the original target where it is outside (see
//! [`link::copied_link_target`]). The checkout is copied once per run into a [`Pristine`] copy;
//! each worker's [`Scratch`] copy is made from it, and reused: after every
//! run in it, whatever the run created, deleted or changed is put back
//! ([`crate::workspace::tree_state`]) from the pristine copy, never from the checkout.

pub mod tree_state;

mod area;
mod copy;
mod link;
mod manifest;
mod pristine;
mod scratch;

pub use area::{remove_live_scratch_dirs, sweep_orphans, INTERRUPTED};
pub use copy::copy_tree;
pub use manifest::{manifest, Manifest, DEFAULT_LINKS};
pub use pristine::Pristine;
pub use scratch::{Reset, RunDirs, Scratch};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::platform;
    use crate::workspace::area::spread_subdirectories;
    use crate::workspace::copy::{COPY_CHUNK, COPY_THREADS};
    use crate::workspace::manifest::rel_string;
    use std::collections::BTreeMap;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
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
        // A dot-named file is the copy's own (a tool rewrites it in place).
        assert!(t
            .join("node_modules/.modules.yaml")
            .symlink_metadata()
            .unwrap()
            .is_file());
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

    /// Runner caches in env dirs (a dot-named entry that is not the
    /// package manager's), in a `node_modules`, a `.venv` and
    /// an env dir that is a symlink to a directory outside: copied into the
    /// copy, never linked, so a run that rewrites them in place or adds to
    /// them changes only the copy, and the reset puts them back.
    #[test]
    fn runner_caches_in_env_dirs_are_private_to_each_copy() {
        use std::os::unix::fs::symlink;
        let src = workspace_tree();
        let root = src.path().canonicalize().unwrap();
        // `venv` is a symlink to `<outside>/env`, whose `lib64` leads out of
        // it, to `<outside>/shared`.
        let outside = tempfile::tempdir().unwrap();
        let out = outside.path().canonicalize().unwrap().join("env");
        let w = |p: &Path, body: &str| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        };
        w(&root.join("node_modules/.vite/vitest/h/results.json"), "{}");
        std::fs::create_dir_all(root.join("node_modules/.vite-temp")).unwrap();
        w(&root.join("node_modules/.cache/babel/x.json"), "{}");
        symlink("x.json", root.join("node_modules/.cache/babel/l")).unwrap();
        std::fs::create_dir_all(root.join("node_modules/.bin")).unwrap();
        symlink("../hoisted/index.js", root.join("node_modules/.bin/h")).unwrap();
        w(&root.join("packages/b/node_modules/.cache/nyc/y"), "{}");
        w(&root.join(".venv/.pytest_cache/v/cache/lastfailed"), "{}");
        w(&out.join(".cache/q"), "{}");
        w(&out.join("lib/m.py"), "X = 1\n");
        w(&out.join("../shared/n.py"), "X = 1\n");
        symlink("../shared", out.join("lib64")).unwrap();
        symlink(&out, root.join("venv")).unwrap();
        std::fs::write(root.join(".gitignore"), "node_modules\n.venv\nvenv\n").unwrap();
        let before = (state(&root), state(out.parent().unwrap()));
        let m = manifest(&root, &[], &[]).unwrap();
        let rels = |v: &[PathBuf]| -> Vec<String> { v.iter().map(|p| rel_string(p)).collect() };
        assert_eq!(
            rels(&m.env_copies),
            vec![
                ".venv/.pytest_cache/v/cache/lastfailed",
                "node_modules/.cache/babel/l",
                "node_modules/.cache/babel/x.json",
                "node_modules/.modules.yaml",
                "node_modules/.vite/vitest/h/results.json",
                "venv/.cache/q",
            ]
        );
        // (A plain tree: a nested env dir is copied as it is.)
        assert!(m
            .entries
            .contains(&"packages/b/node_modules/.cache/nyc/y".to_string()));
        assert!(m
            .env_dirs
            .contains(&PathBuf::from("node_modules/.vite-temp")));
        assert_eq!(rels(&m.env_via), vec!["venv/lib", "venv/lib64"]);
        assert!(m.env_links.contains(&PathBuf::from("node_modules/.bin")));
        let p = pristine(&m);
        let mut s = Scratch::create(&p, 0).unwrap();
        let t = s.tree.clone();
        let made = state(&t);
        let is_dir = |rel: &str| t.join(rel).symlink_metadata().unwrap().is_dir();
        for d in ["venv", "node_modules/.vite-temp", "node_modules/.cache"] {
            assert!(is_dir(d), "{d}");
        }
        assert_eq!(
            std::fs::read_link(t.join("venv/lib")).unwrap(),
            root.join("venv/lib")
        );
        assert_eq!(
            std::fs::read_link(t.join("venv/lib64")).unwrap(),
            root.join("venv/lib64")
        );
        assert!(t.join("venv/lib/m.py").is_file());
        // Resolved as in the checkout, not next to the copy's `venv`.
        assert!(t.join("venv/lib64/n.py").is_file());
        assert_eq!(
            std::fs::read_link(t.join("node_modules/.cache/babel/l")).unwrap(),
            PathBuf::from("x.json")
        );
        s.stop_watching();
        std::thread::sleep(Duration::from_millis(30));
        for rel in [
            "node_modules/.vite/vitest/h/results.json",
            "node_modules/.cache/babel/l",
            "node_modules/.modules.yaml",
            "packages/b/node_modules/.cache/nyc/y",
            ".venv/.pytest_cache/v/cache/lastfailed",
            "venv/.cache/q",
        ] {
            std::fs::write(t.join(rel), "written by the run").unwrap();
        }
        std::fs::write(t.join("node_modules/.vite-temp/c.mjs"), "").unwrap();
        std::fs::write(t.join("venv/.cache/new"), "").unwrap();
        let r = s.end_run(&[]).unwrap();
        // Every change is put back; those in the env dirs' runner caches are
        // no debris (the nested `node_modules` here is a plain tree file).
        assert_eq!(
            r.paths,
            vec!["packages/b/node_modules/.cache/nyc/y".to_string()],
            "{:?}",
            r.paths
        );
        assert_eq!(state(&t), made);
        drop(s);
        drop(p);
        assert_eq!((state(&root), state(out.parent().unwrap())), before);
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
}
