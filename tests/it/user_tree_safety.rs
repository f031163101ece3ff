//! The copy never leads back to the user's checkout and never leaks its
//! secrets: scratch dirs are private, symlinks into the tree point into the
//! copy, links that leave the root resolve to their original target, a repo
//! git cannot read stops the run, and nested ignored env dirs reach the copy.

use crate::common::*;

/// A generic spec: `sh check.sh` is the suite, one mutant of `m.sh` that it
/// kills (`FLAG=1` becomes `FLAG=2`).
fn spec(file: &str) -> String {
    format!(
        "version: 1\ntest:\n  command: 'sh check.sh'\n  preset: generic\n  timeout: 60s\nmutations:\n  - id: flag\n    control: \"the flag\"\n    file: {file}\n    find: 'FLAG=1'\n    replace: 'FLAG=2'\n"
    )
}

/// `check.sh`: `probe` (shell lines), then green only while `m.sh` sets FLAG=1.
fn check(probe: &str) -> String {
    format!("set -e\n{probe}\n. ./m.sh\ntest \"$FLAG\" = 1\n")
}

/// Make `fx` a git repo with everything in it committed.
fn commit_all(fx: &Fixture) {
    fx.git_cmd(&["init", "-q", "-b", "main"]);
    fx.git_cmd(&["add", "-A"]);
    fx.commit("init");
}

fn run(fx: &Fixture, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["run", "--out", "out", "--timeout", "20s"];
    all.extend_from_slice(args);
    fx.run(&all)
}

/// Every scratch dir unguard makes in the shared temp dir is 0700 at its
/// top, while the run goes on: the suite itself lists them.
#[test]
fn scratch_dirs_are_private_while_the_suite_runs() {
    let seen = tempfile::tempdir().unwrap();
    let modes = seen.path().join("modes.txt");
    let fx = Fixture::new();
    let probe = format!(
        "stat -c '%a %n' {}/unguard-* >> {}",
        fx.tmp.path().display(),
        modes.display()
    );
    fx.write_all(&[
        ("unguard.yaml", &spec("m.sh")),
        ("m.sh", "FLAG=1\n"),
        ("secret.env", "TOKEN=hunter2\n"),
        ("check.sh", &check(&probe)),
    ]);
    commit_all(&fx);
    let (code, out, err) = run(&fx, &[]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(fx.verdicts("out")["flag"], "killed");
    let text = std::fs::read_to_string(&modes).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.iter().any(|l| l.contains("/unguard-w0-")),
        "the suite saw no scratch dir: {text}"
    );
    let open: Vec<&&str> = lines.iter().filter(|l| !l.starts_with("700 ")).collect();
    assert!(
        open.is_empty(),
        "scratch dirs other users can enter: {open:?}"
    );
    // The pristine copy (the checkout's copy for the whole run) too.
    assert!(
        lines.iter().any(|l| l.contains("/unguard-pristine-")),
        "{text}"
    );
}

/// An absolute symlink into the tree points into the copy: the suite
/// writes through it into the copy's file, never the user's, and the reset
/// puts the copy's file back (each run sees the original bytes again).
#[test]
fn absolute_links_into_the_tree_point_into_the_copy() {
    let mut tables = Vec::new();
    for jobs in ["1", "2"] {
        let fx = Fixture::new();
        let root = fx.path().canonicalize().unwrap();
        let probe = "test \"$(cat data/link.txt)\" = original\n\
                     test -f conf/real.txt\n\
                     echo pwned >> data/link.txt\n\
                     echo planted > conf/new.txt";
        fx.write_all(&[
            ("unguard.yaml", &spec2()),
            ("m.sh", "FLAG=1\nOTHER=1\n"),
            ("data/real.txt", "original\n"),
            ("check.sh", &check(probe)),
        ]);
        std::os::unix::fs::symlink(root.join("data/real.txt"), root.join("data/link.txt")).unwrap();
        std::os::unix::fs::symlink(root.join("data"), root.join("conf")).unwrap();
        commit_all(&fx);
        let before = tree_state(&root, &[".git"]);
        let (code, out, err) = run(&fx, &["-j", jobs]);
        // The effect: the user's files are as they were.
        assert_eq!(
            fx.read("data/real.txt"),
            "original\n",
            "-j {jobs}: {}",
            ctx(code, &out, &err)
        );
        assert!(
            !root.join("data/new.txt").exists(),
            "-j {jobs}: written through a dir link"
        );
        let mut after = tree_state(&root, &[".git"]);
        after.retain(|p, _| !p.starts_with("out"));
        assert_eq!(after, before, "-j {jobs}");
        let v = fx.verdicts("out");
        assert_eq!(v["flag"], "killed", "-j {jobs}: {}", ctx(code, &out, &err));
        assert_eq!(
            v["other"],
            "survived",
            "-j {jobs}: {}",
            ctx(code, &out, &err)
        );
        // The links themselves are the copy's reference state, not debris.
        assert!(!err.contains("link.txt"), "-j {jobs}: {err}");
        tables.push(v);
    }
    assert_eq!(tables[0], tables[1]);
}

/// Two mutants of `m.sh`: `flag` (killed by [`check`]) and `other` (survives).
fn spec2() -> String {
    spec("m.sh") + "  - id: other\n    control: \"nothing\"\n    file: m.sh\n    find: 'OTHER=1'\n    replace: 'OTHER=2'\n    canary: false\n"
}

/// Monorepo: `unguard run services/api` where `services/api/common` is a
/// relative link to `../../libs/common`. In the copy it resolves to the
/// original target, never next to the copy in the shared temp dir (where
/// this test plants a look-alike), and the run names the link.
#[test]
fn links_leaving_the_root_resolve_to_their_original_target() {
    let fx = Fixture::new();
    let root = fx.path().canonicalize().unwrap();
    fx.write_all(&[
        ("libs/common/lib.sh", "LIBVAL=ok\n"),
        ("services/api/unguard.yaml", &spec("m.sh")),
        ("services/api/m.sh", "FLAG=1\n"),
        (
            "services/api/check.sh",
            &check(". ./common/lib.sh\ntest \"$LIBVAL\" = ok"),
        ),
    ]);
    std::os::unix::fs::symlink("../../libs/common", root.join("services/api/common")).unwrap();
    commit_all(&fx);
    // What the link would resolve to next to a copy in the temp dir
    // (`<tmp>/unguard-w0-X/tree-X/common`): code another user could plant.
    let planted = fx.tmp.path().join("libs/common");
    std::fs::create_dir_all(&planted).unwrap();
    let ran = fx.tmp.path().join("planted-code-ran");
    std::fs::write(
        planted.join("lib.sh"),
        format!("LIBVAL=ok\necho ran >> {}\n", ran.display()),
    )
    .unwrap();
    let (code, out, err) = run(&fx, &["services/api"]);
    assert!(
        !ran.exists(),
        "the suite ran code planted in the temp dir: {}",
        ctx(code, &out, &err)
    );
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(fx.verdicts("out")["flag"], "killed");
    // Said, not silent: the link and where it leads.
    let note = err
        .lines()
        .find(|l| l.contains("outside the target"))
        .unwrap_or_else(|| panic!("no note on the link: {err}"));
    assert!(note.contains("common"), "{note}");
    assert!(
        note.contains(&root.join("libs/common").display().to_string()),
        "{note}"
    );
}

/// A repository git refuses to read (owned by another user: git's
/// "dubious ownership") stops the run with the `safe.directory` fix; the
/// tree is never walked instead, which would copy the git-ignored secret.
#[test]
fn a_repo_git_cannot_read_stops_the_run_and_copies_no_secret() {
    let seen = tempfile::tempdir().unwrap();
    let leaked = seen.path().join("leaked.env");
    let fx = Fixture::new();
    let probe = format!(
        "if [ -f secret.env ]; then cp secret.env {}; fi",
        leaked.display()
    );
    fx.write_all(&[
        ("unguard.yaml", &spec("m.sh")),
        ("m.sh", "FLAG=1\n"),
        (".gitignore", "secret.env\nout/\n"),
        ("check.sh", &check(&probe)),
    ]);
    commit_all(&fx);
    fx.write("secret.env", "TOKEN=hunter2\n");
    // Another user's repository (as root: git's ownership check applies to
    // root too, unless safe.directory says otherwise).
    let chown = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(fx.path())
        .status()
        .unwrap();
    if !chown.success() {
        skip::not_here("cannot give the fixture to another user (not root)");
        return;
    }
    // A global git config of our own: no safe.directory from the machine's.
    let home = tempfile::tempdir().unwrap();
    let out = fx
        .unguard(&["run", "--out", "out", "--timeout", "20s"])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    let (code, stdout, err) = (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        !leaked.exists(),
        "the ignored secret reached a copy: {}",
        ctx(code, &stdout, &err)
    );
    assert_eq!(code, 1, "{}", ctx(code, &stdout, &err));
    let root = fx.path().canonicalize().unwrap();
    let fix = format!(
        "git config --global --add safe.directory {}",
        root.display()
    );
    assert!(err.contains(&fix), "{err}");
    assert!(!err.contains("baseline:"), "no suite ran: {err}");
}

/// A pnpm monorepo: `packages/a/node_modules/dep` is a relative link into
/// the root store, and every `node_modules` is git-ignored. The nested one
/// reaches the copy as laid out: the baseline is green in git mode, and the
/// verdicts are those of the same tree without `.git`, at -j 1 and -j 2.
#[test]
fn nested_ignored_env_dirs_reach_the_copy() {
    let fx = Fixture::new();
    let root = fx.path().canonicalize().unwrap();
    let probe = "grep -q exports packages/a/node_modules/dep/index.js";
    fx.write_all(&[
        ("unguard.yaml", &spec2()),
        ("m.sh", "FLAG=1\nOTHER=1\n"),
        (".gitignore", "node_modules\nout/\n"),
        ("package.json", "{\"private\": true}\n"),
        ("packages/a/index.js", "require('dep')\n"),
        ("node_modules/.pnpm/dep/index.js", "module.exports = 1\n"),
        ("check.sh", &check(probe)),
    ]);
    std::fs::create_dir_all(root.join("packages/a/node_modules")).unwrap();
    std::os::unix::fs::symlink(
        "../../../node_modules/.pnpm/dep",
        root.join("packages/a/node_modules/dep"),
    )
    .unwrap();
    commit_all(&fx);
    let before = tree_state(&root, &[".git", "out"]);
    let mut tables = Vec::new();
    for (mode, jobs) in [("git", "1"), ("git", "2"), ("plain", "1"), ("plain", "2")] {
        if mode == "plain" && root.join(".git").exists() {
            std::fs::remove_dir_all(root.join(".git")).unwrap();
        }
        let (code, out, err) = run(&fx, &["-j", jobs]);
        assert!(
            !err.contains("baseline: red") && !err.contains("fix the suite first"),
            "{mode} -j {jobs}: {}",
            ctx(code, &out, &err)
        );
        let v = fx.verdicts("out");
        assert_eq!(
            v["flag"],
            "killed",
            "{mode} -j {jobs}: {}",
            ctx(code, &out, &err)
        );
        tables.push((mode, jobs, v));
    }
    for (mode, jobs, v) in &tables[1..] {
        assert_eq!(v, &tables[0].2, "{mode} -j {jobs} differs from git -j 1");
    }
    assert_eq!(tree_state(&root, &[".git", "out"]), before);
}

/// `workspace.link` names a nested ignored dir by its path: linked into
/// every copy, where the suite finds it.
#[test]
fn workspace_link_accepts_a_nested_path() {
    let fx = Fixture::new();
    let yaml = spec("m.sh").replace(
        "mutations:\n",
        "workspace:\n  link: [tools/x/cache]\nmutations:\n",
    );
    fx.write_all(&[
        ("unguard.yaml", &yaml),
        ("m.sh", "FLAG=1\n"),
        (".gitignore", "cache/\nout/\n"),
        ("tools/x/run.sh", "true\n"),
        ("tools/x/cache/data.bin", "cached\n"),
        ("check.sh", &check("grep -q cached tools/x/cache/data.bin")),
    ]);
    commit_all(&fx);
    let (code, out, err) = run(&fx, &[]);
    let outcomes = fx.path().join("out/outcomes.json");
    assert!(outcomes.exists(), "no verdicts: {}", ctx(code, &out, &err));
    assert_eq!(
        fx.verdicts("out")["flag"],
        "killed",
        "{}",
        ctx(code, &out, &err)
    );
    assert!(err.contains("linked: tools/x/cache"), "{err}");
}

/// `workspace.link` never names `.git`: a copy never leads git back to the
/// user's repository.
#[test]
fn workspace_link_refuses_dot_git() {
    let fx = Fixture::new();
    let yaml = spec("m.sh").replace("mutations:\n", "workspace:\n  link: [.git]\nmutations:\n");
    fx.write_all(&[
        ("unguard.yaml", &yaml),
        ("m.sh", "FLAG=1\n"),
        ("check.sh", &check("test ! -e .git")),
    ]);
    commit_all(&fx);
    let (code, out, err) = run(&fx, &[]);
    assert_eq!(code, 1, "{}", ctx(code, &out, &err));
    assert!(err.contains("cannot name `.git`"), "{err}");
    assert!(!fx.path().join("out/outcomes.json").exists());
}

/// A submodule's git-ignored files stay out of the copy like the
/// superproject's: its files come from its own repository, not a walk.
#[test]
fn a_submodules_ignored_secret_is_not_copied() {
    let seen = tempfile::tempdir().unwrap();
    let leaked = seen.path().join("leaked.env");
    let sub = Fixture::git(&[("lib.sh", "LIBVAL=ok\n"), (".gitignore", "secret.env\n")]);
    let fx = Fixture::new();
    let probe = format!(
        "if [ -f vendor/lib/secret.env ]; then cp vendor/lib/secret.env {}; fi\n\
         . vendor/lib/lib.sh\ntest \"$LIBVAL\" = ok",
        leaked.display()
    );
    fx.write_all(&[
        ("unguard.yaml", &spec("m.sh")),
        ("m.sh", "FLAG=1\n"),
        (".gitignore", "out/\n"),
        ("check.sh", &check(&probe)),
    ]);
    fx.git_cmd(&["init", "-q", "-b", "main"]);
    let url = sub.path().display().to_string();
    fx.git_cmd(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        &url,
        "vendor/lib",
    ]);
    fx.git_cmd(&["add", "-A"]);
    fx.commit("init");
    fx.write("vendor/lib/secret.env", "TOKEN=hunter2\n");
    let (code, out, err) = run(&fx, &[]);
    assert!(
        !leaked.exists(),
        "the submodule's ignored secret reached a copy: {}",
        ctx(code, &out, &err)
    );
    assert_eq!(
        fx.verdicts("out")["flag"],
        "killed",
        "{}",
        ctx(code, &out, &err)
    );
}

/// `check.sh` of [`runner_caches_in_node_modules_and_venv_stay_in_the_copy`]:
/// a write through every kind of linked env dir, each into an entry that is
/// there in the checkout already (in place, and a new file in it) or new,
/// then vitest (its results cache in `node_modules/.vite`, its bundled
/// config in `node_modules/.vite-temp`), green while `src/flag.js` is.
const WRITE_THROUGH: &str = r#"set -e
echo run >> node_modules/.vite/vitest/old.json
echo run >> node_modules/.cache/babel/old.json
mkdir -p node_modules/.cache/jest && echo run > node_modules/.cache/jest/new
echo run >> node_modules/.package-lock.json
mkdir -p node_modules/.jest-cache && echo run > node_modules/.jest-cache/new
echo run > node_modules/@org/.cache-new
echo run >> packages/a/node_modules/.cache/nyc/old.json
mkdir -p packages/a/node_modules/.vite && echo run > packages/a/node_modules/.vite/new
echo run >> .venv/.pytest_cache/v/cache/lastfailed
echo run >> .venv/.lock
echo run > .venv/new
echo run >> venv/.cache/old
echo run > venv/new
node_modules/.bin/vitest run
"#;

/// A runner's caches and temp files stay in the copy: vitest rewriting its
/// results cache in an existing `node_modules/.vite`, and a suite writing
/// through every kind of ignored env dir (a top-level `node_modules` with a
/// `@scope` dir and pnpm's store, a workspace package's nested one, a
/// `.venv`, a `venv` that is a symlink to a directory outside), into a
/// cache already there or a new entry. The checkout, ignored files
/// included, and the linked directory outside are byte for byte as they
/// were, and the run is green and kills its mutant.
#[test]
fn runner_caches_in_node_modules_and_venv_stay_in_the_copy() {
    let modules = match crate::common::node_tools::node_modules() {
        Ok(m) => m,
        Err(e) => return crate::common::skip::missing(&format!("vitest: {e}")),
    };
    let fx = Fixture::new();
    let root = fx.path().canonicalize().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fx.write_all(&[
        ("unguard.yaml", &spec("src/flag.js").replace("FLAG=", "flag = ")),
        ("src/flag.js", "export const flag = 1;\n"),
        (".gitignore", "node_modules\n.venv\nvenv\nout/\n"),
        ("package.json", "{\"name\": \"fx\", \"private\": true, \"type\": \"module\"}\n"),
        // A TypeScript config: vite bundles it into `node_modules/.vite-temp`.
        ("vitest.config.ts", "export default { test: { include: ['test/**/*.test.js'] } };\n"),
        ("test/flag.test.js", "import { test, expect } from 'vitest';\nimport { flag } from '../src/flag.js';\ntest('flag', () => expect(flag).toBe(1));\n"),
        ("packages/a/package.json", "{\"name\": \"a\"}\n"),
        ("check.sh", WRITE_THROUGH),
    ]);
    // node_modules: the pinned install's entries (a real directory, as an
    // install makes it), a runner cache of each kind, a scope, pnpm's store.
    let nm = root.join("node_modules");
    std::fs::create_dir(&nm).unwrap();
    for e in std::fs::read_dir(&modules).unwrap() {
        let e = e.unwrap();
        std::os::unix::fs::symlink(e.path(), nm.join(e.file_name())).unwrap();
    }
    std::fs::remove_file(nm.join(".package-lock.json")).unwrap();
    fx.write_all(&[
        ("node_modules/.package-lock.json", "{}\n"),
        ("node_modules/.vite/vitest/old.json", "{}\n"),
        ("node_modules/.vite-temp/old.mjs", "export default {};\n"),
        ("node_modules/.cache/babel/old.json", "{}\n"),
        ("node_modules/@org/pkg/index.js", "module.exports = 1;\n"),
        (
            "node_modules/.pnpm/dep@1/node_modules/dep/index.js",
            "module.exports = 1;\n",
        ),
        ("packages/a/node_modules/.cache/nyc/old.json", "{}\n"),
        (".venv/pyvenv.cfg", "home = /usr/bin\n"),
        (".venv/.lock", ""),
        (".venv/.pytest_cache/v/cache/lastfailed", "{}\n"),
        (".venv/lib/python3/site-packages/mod.py", "X = 1\n"),
    ]);
    std::os::unix::fs::symlink(
        "../../../node_modules/.pnpm/dep@1/node_modules/dep",
        root.join("packages/a/node_modules/dep"),
    )
    .unwrap();
    std::fs::create_dir_all(outside.path().join(".cache")).unwrap();
    std::fs::write(outside.path().join(".cache/old"), "{}\n").unwrap();
    std::fs::write(outside.path().join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("venv")).unwrap();
    commit_all(&fx);
    let before = tree_state(&root, &[".git", "out"]);
    let before_outside = tree_state(outside.path(), &[]);
    let names = |d: &std::path::Path| -> std::collections::BTreeSet<_> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect()
    };
    let before_install = names(&modules);
    let (code, out, err) = run(&fx, &["-j", "2"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(
        fx.verdicts("out")["flag"],
        "killed",
        "{}",
        ctx(code, &out, &err)
    );
    let after = tree_state(&root, &[".git", "out"]);
    let changed: Vec<_> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(v))
        .map(|(k, _)| k)
        .chain(before.keys().filter(|k| !after.contains_key(*k)))
        .collect();
    assert!(
        changed.is_empty(),
        "the run changed the checkout: {changed:?}"
    );
    assert_eq!(
        tree_state(outside.path(), &[]),
        before_outside,
        "the linked venv outside changed"
    );
    assert_eq!(
        names(&modules),
        before_install,
        "the shared install changed"
    );
    assert!(fx.leftover_tmp().is_empty(), "{:?}", fx.leftover_tmp());
}
