//! The suite's environment never points at the user's checkout (issue 13,
//! items 1 and 2): no inherited variable lets git reach the user's
//! repository or index, git cannot discover a repository above the copy,
//! `PWD` is the copy, and inherited paths under the target root point into
//! the copy. The run log names (never shows) what was rewritten or dropped.

use crate::common::*;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// A spec running `command` (YAML flow), one mutant per `(id, find, replace)` in `file`.
fn spec(command: &str, file: &str, mutations: &[(&str, &str, &str)]) -> String {
    let mut s = format!(
        "version: 1\ntest:\n  command: {command}\n  preset: generic\n  timeout: 60s\nmutations:\n"
    );
    for (id, find, replace) in mutations {
        s.push_str(&format!(
            "  - id: {id}\n    control: \"control {id}\"\n    file: {file}\n    find: '{find}'\n    replace: '{replace}'\n"
        ));
    }
    s
}

/// `run.py`: passes while `m.VALUE == 1`.
fn run_py() -> String {
    "import m, sys\nsys.exit(0 if m.VALUE == 1 else 1)\n".into()
}

/// `git <args>` in `dir` (the test's own environment, no hook variables);
/// its trimmed stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The baseline's log in `out`: `@baseline.log`, or `baseline.log` as it
/// was named before issue 11 (so that the old binary fails at the effect).
fn baseline_log(out: &Path) -> String {
    std::fs::read_to_string(out.join("@baseline.log"))
        .or_else(|_| std::fs::read_to_string(out.join("baseline.log")))
        .unwrap()
}

/// The value after `prefix` on the first line of `log` starting with it.
fn line_value<'a>(log: &'a str, prefix: &str) -> Option<&'a str> {
    log.lines().find_map(|l| l.strip_prefix(prefix))
}

fn output(c: &mut Command) -> (i32, String, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A pre-commit hook in a linked worktree runs `unguard run .` with
/// `GIT_DIR` and `GIT_INDEX_FILE` exported, as git does for hooks. The
/// suite's `git add -A` and `git commit` must not reach the user's index or
/// branch, and `git rev-parse --git-dir` in the copy finds no repository.
#[test]
fn a_hooks_git_variables_never_reach_the_suite() {
    let suite = format!(
        "echo \"gitdir: $(git rev-parse --git-dir 2>&1)\"\n\
         git add -A >/dev/null 2>&1\n\
         git -c user.name=s -c user.email=s@s commit -qm 'suite commit' >/dev/null 2>&1\n\
         exec {} run.py\n",
        python()
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", &run_py()),
        ("suite.sh", &suite),
        (
            "unguard.yaml",
            &spec("sh suite.sh", "m.py", &[("v", "VALUE = 1", "VALUE = 2")]),
        ),
    ]);
    let side = tempfile::tempdir().unwrap();
    let wt = side.path().join("wt");
    git(
        fx.path(),
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature",
            wt.to_str().unwrap(),
        ],
    );
    let gitdir = fx.path().join(".git/worktrees/wt").canonicalize().unwrap();
    let index = gitdir.join("index");
    let index_before = std::fs::read(&index).unwrap();
    let head_before = git(&wt, &["rev-parse", "HEAD"]);
    let main_before = git(fx.path(), &["rev-parse", "HEAD"]);
    let out = side.path().join("out");

    let (code, stdout, stderr) = output(
        fx.unguard(&["run", ".", "--out", out.to_str().unwrap()])
            .current_dir(&wt)
            .env("GIT_DIR", &gitdir)
            .env("GIT_INDEX_FILE", &index),
    );
    let c = ctx(code, &stdout, &stderr);

    // The effect: the user's index, branch and staged set are untouched.
    assert_eq!(git(&wt, &["diff", "--cached", "--name-only"]), "", "{c}");
    assert!(
        std::fs::read(&index).unwrap() == index_before,
        "the user's index changed: {c}"
    );
    assert_eq!(git(&wt, &["rev-parse", "HEAD"]), head_before, "{c}");
    assert_eq!(git(fx.path(), &["rev-parse", "HEAD"]), main_before, "{c}");
    // The suite ran against the mutant, and git found no repository.
    assert_eq!(code, 0, "{c}");
    assert_eq!(verdicts_in(&out)["v"], "killed", "{c}");
    let log = baseline_log(&out);
    let gd = line_value(&log, "gitdir: ").unwrap_or_default();
    assert!(gd.contains("not a git repository"), "{log}");
    let names = line_value(&log, "# environment: ").unwrap_or_default();
    assert!(names.contains("dropped: GIT_DIR, GIT_INDEX_FILE"), "{log}");
    assert!(!names.contains(gitdir.to_str().unwrap()), "{log}");
}

/// The temp dir lies inside the user's repository (git-ignored): without a
/// ceiling, git run in the copy discovers the user's repository above it
/// and the suite's commit lands on the user's branch.
#[test]
fn git_cannot_discover_a_repository_above_the_copy() {
    let suite = format!(
        "git -c user.name=s -c user.email=s@s commit --allow-empty -qm 'suite commit' 2>/dev/null\n\
         exec {} run.py\n",
        python()
    );
    let fx = Fixture::git(&[
        (".gitignore", "scratch/\nout/\n"),
        ("m.py", "VALUE = 1\n"),
        ("run.py", &run_py()),
        ("suite.sh", &suite),
        (
            "unguard.yaml",
            &spec("sh suite.sh", "m.py", &[("v", "VALUE = 1", "VALUE = 2")]),
        ),
    ]);
    std::fs::create_dir(fx.path().join("scratch")).unwrap();
    let head_before = git(fx.path(), &["rev-parse", "HEAD"]);

    let (code, stdout, stderr) = output(
        fx.unguard(&["run", "--out", "out"])
            .env("TMPDIR", fx.path().join("scratch")),
    );
    let c = ctx(code, &stdout, &stderr);

    assert_eq!(git(fx.path(), &["rev-parse", "HEAD"]), head_before, "{c}");
    assert_eq!(git(fx.path(), &["rev-list", "--count", "HEAD"]), "1", "{c}");
    assert_eq!(code, 0, "{c}");
    assert_eq!(fx.verdicts("out")["v"], "killed", "{c}");
}

/// `command: ["make", "test"]` with a Makefile doing `cd $(PWD)`, `PWD`
/// exported by the user's shell (the checkout): the suite runs in the copy,
/// writes nothing into the checkout and sees the mutants. Same verdicts at
/// `-j 1` and `-j 2`.
#[test]
fn pwd_from_the_users_shell_is_the_copy() {
    let makefile = format!(
        "test:\n\tcd $(PWD) && {} run.py && touch suite-was-here\n",
        python()
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\nOTHER = 1\n"),
        (
            "run.py",
            "import m, sys\nsys.exit(0 if m.VALUE == 1 and m.OTHER == 1 else 1)\n",
        ),
        ("Makefile", &makefile),
        (
            "unguard.yaml",
            &spec(
                "[make, -s, test]",
                "m.py",
                &[
                    ("v", "VALUE = 1", "VALUE = 2"),
                    ("o", "OTHER = 1", "OTHER = 3"),
                ],
            ),
        ),
    ]);
    let mut tables = Vec::new();
    for (j, out) in [("1", "out1"), ("2", "out2")] {
        let (code, stdout, stderr) = output(
            fx.unguard(&["run", "-j", j, "--out", out])
                .env("PWD", fx.path()),
        );
        let c = ctx(code, &stdout, &stderr);
        // The effect: nothing the suite wrote into `$PWD` is in the checkout.
        assert!(
            !fx.path().join("suite-was-here").exists(),
            "the suite ran in the user's checkout: {c}"
        );
        assert_eq!(code, 0, "{c}");
        let v = fx.verdicts(out);
        assert_eq!(v["v"], "killed", "{c}");
        assert_eq!(v["o"], "killed", "{c}");
        let log = baseline_log(&fx.path().join(out));
        let names = line_value(&log, "# environment: ").unwrap_or_default();
        assert!(names.contains("PWD"), "{log}");
        tables.push(v);
    }
    assert_eq!(tables[0], tables[1]);
}

/// Inherited `PYTHONPATH`, `VIRTUAL_ENV`, `CARGO_TARGET_DIR` and `OLDPWD`
/// under the root, reached through a symlinked path: the suite sees the
/// same paths in the copy (`OLDPWD` dropped), imports the mutant, and the
/// log names the variables without their values.
#[test]
fn paths_under_the_root_point_into_the_copy() {
    let check = "import os, sys\n\
                 for k in ['PYTHONPATH', 'VIRTUAL_ENV', 'CARGO_TARGET_DIR', 'OLDPWD']:\n    \
                 print(k + '=' + os.environ.get(k, '<unset>'))\n\
                 import m\n\
                 sys.exit(0 if m.VALUE == 1 else 1)\n";
    let fx = Fixture::git(&[
        (".gitignore", ".venv/\nout/\n"),
        ("src/m.py", "VALUE = 1\n"),
        ("check.py", check),
        (
            "unguard.yaml",
            &spec(
                &format!("[{}, check.py]", python()),
                "src/m.py",
                &[("v", "VALUE = 1", "VALUE = 2")],
            ),
        ),
    ]);
    std::fs::create_dir_all(fx.path().join(".venv/bin")).unwrap();
    let side = tempfile::tempdir().unwrap();
    let alias = side.path().join("alias");
    std::os::unix::fs::symlink(fx.path(), &alias).unwrap();
    let a = alias.display().to_string();

    let (code, stdout, stderr) = output(
        fx.unguard(&["run", ".", "--out", "out"])
            .current_dir(&alias)
            .env("PWD", &alias)
            .env("PYTHONPATH", format!("{a}/src:/opt/elsewhere"))
            .env("VIRTUAL_ENV", format!("{a}/.venv"))
            .env("CARGO_TARGET_DIR", format!("{a}/target"))
            .env("OLDPWD", format!("{a}/src")),
    );
    let c = ctx(code, &stdout, &stderr);
    let log = baseline_log(&fx.path().join("out"));
    let copy = line_value(&log, "# cwd: ").unwrap();

    // The effect: the suite's paths are the copy's.
    assert_eq!(
        line_value(&log, "PYTHONPATH="),
        Some(format!("{copy}/src:/opt/elsewhere").as_str()),
        "{log}"
    );
    assert_eq!(
        line_value(&log, "VIRTUAL_ENV="),
        Some(format!("{copy}/.venv").as_str()),
        "{log}"
    );
    assert_eq!(
        line_value(&log, "CARGO_TARGET_DIR="),
        Some(format!("{copy}/target").as_str()),
        "{log}"
    );
    assert_eq!(line_value(&log, "OLDPWD="), Some("<unset>"), "{log}");
    assert_eq!(code, 0, "{c}");
    assert_eq!(fx.verdicts("out")["v"], "killed", "{c}");
    let names = line_value(&log, "# environment: ").unwrap_or_default();
    for n in [
        "PYTHONPATH",
        "VIRTUAL_ENV",
        "CARGO_TARGET_DIR",
        "PWD",
        "OLDPWD",
    ] {
        assert!(names.contains(n), "{n} not named: {log}");
    }
    assert!(!names.contains('/'), "values leaked into the log: {log}");
}

/// `workspace.git: private`: a suite that needs git metadata gets a fresh
/// repository of its copy for each run (even under a hook's `GIT_DIR`):
/// the top level is the copy, its commit is the copy as the run starts
/// (the mutant included), a commit the suite makes reaches neither the
/// user's repository nor the next run. Same verdicts at `-j 1` and `-j 2`.
#[test]
fn a_suite_can_opt_in_to_a_private_repository() {
    let suite = format!(
        "set -e\n\
         top=$(git rev-parse --show-toplevel)\n\
         [ \"$top\" = \"$PWD\" ] || {{ echo \"toplevel: $top\"; exit 5; }}\n\
         git diff --quiet HEAD || {{ echo 'the commit is not the copy'; exit 6; }}\n\
         git add -A\n\
         git -c user.name=s -c user.email=s@s commit -q --allow-empty -m suite\n\
         echo \"commits: $(git rev-list --count HEAD)\"\n\
         exec {} run.py\n",
        python()
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\nOTHER = 1\n"),
        (
            "run.py",
            "import m, sys\nsys.exit(0 if m.VALUE == 1 and m.OTHER == 1 else 1)\n",
        ),
        ("suite.sh", &suite),
        (
            "unguard.yaml",
            &format!(
                "workspace:\n  git: private\n{}",
                spec(
                    "sh suite.sh",
                    "m.py",
                    &[
                        ("v", "VALUE = 1", "VALUE = 2"),
                        ("o", "OTHER = 1", "OTHER = 3")
                    ]
                )
            ),
        ),
    ]);
    let head_before = git(fx.path(), &["rev-parse", "HEAD"]);
    let gitdir = fx.path().join(".git");
    let mut tables = Vec::new();
    for (j, out) in [("1", "out1"), ("2", "out2")] {
        let (code, stdout, stderr) = output(
            fx.unguard(&["run", "-j", j, "--out", out])
                .env("GIT_DIR", &gitdir)
                .env("GIT_INDEX_FILE", gitdir.join("index")),
        );
        let c = ctx(code, &stdout, &stderr);
        assert_eq!(git(fx.path(), &["rev-parse", "HEAD"]), head_before, "{c}");
        let v: BTreeMap<String, String> =
            std::fs::read_to_string(fx.path().join(out).join("outcomes.json"))
                .map(|_| fx.verdicts(out))
                .unwrap_or_default();
        assert_eq!(v.get("v").map(String::as_str), Some("killed"), "{c}");
        assert_eq!(v.get("o").map(String::as_str), Some("killed"), "{c}");
        assert_eq!(code, 0, "{c}");
        // Every run had its own repository: one commit of unguard's, one of its own.
        let mut logs = 0;
        for e in std::fs::read_dir(fx.path().join(out)).unwrap().flatten() {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            if let Some(n) = line_value(&text, "commits: ") {
                assert_eq!(n, "2", "{}: {text}", e.path().display());
                logs += 1;
            }
        }
        assert!(logs >= 3, "baseline and both mutants ran git: {logs} logs");
        tables.push(v);
    }
    assert_eq!(tables[0], tables[1]);
    assert_eq!(
        git(
            fx.path(),
            &["status", "--porcelain", "--untracked-files=no"]
        ),
        ""
    );
}

/// A `workspace.git` value unguard does not know is refused with the fix.
#[test]
fn an_unknown_workspace_git_value_is_refused() {
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", &run_py()),
        (
            "unguard.yaml",
            &format!(
                "workspace:\n  git: shared\n{}",
                spec("python3 run.py", "m.py", &[("v", "VALUE = 1", "VALUE = 2")])
            ),
        ),
    ]);
    let (code, stdout, stderr) = fx.run(&["run", "--out", "out"]);
    let c = ctx(code, &stdout, &stderr);
    assert!(
        stderr.contains("unknown `workspace.git` value `shared`")
            && stderr.contains("git: private"),
        "{c}"
    );
    assert_eq!(code, 1, "{c}");
    assert!(!fx.path().join("out/outcomes.json").exists(), "{c}");
}

/// unguard started directly with the runner's credentials in its
/// environment (a workflow step that does not use the Action): no suite
/// sees them, neither in its own environment nor in any ancestor's initial
/// one in /proc (unguard starts itself again without them).
#[test]
fn the_runners_credentials_are_in_no_ancestor_of_the_suite() {
    const FAKE: &str = "fakeRuntimeTokenNoSuiteMaySee0042";
    let dump = tempfile::tempdir().unwrap();
    let seen = dump.path().join("env.txt");
    let script = format!(
        "#!/bin/sh\nenv >> '{0}'\npid=$$\nwhile [ \"$pid\" -gt 1 ] && [ -r \"/proc/$pid/environ\" ]; do\n  tr '\\0' '\\n' < \"/proc/$pid/environ\" >> '{0}' 2>/dev/null || true\n  pid=$(sed 's/.*) //' \"/proc/$pid/stat\" | cut -d' ' -f2)\ndone\nexec python3 run.py\n",
        seen.display()
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", &run_py()),
        ("dump.sh", &script),
        (
            "unguard.yaml",
            &spec("sh dump.sh", "m.py", &[("value", "VALUE = 1", "VALUE = 2")]),
        ),
    ]);
    let out = fx
        .unguard(&["run", "--out", "out", "-j", "1"])
        .env("ACTIONS_RUNTIME_TOKEN", FAKE)
        .env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", FAKE)
        .env("UNGUARD_TOKEN", FAKE)
        .output()
        .unwrap();
    let said = format!("{out:?}");
    assert_eq!(out.status.code(), Some(0), "{said}");
    let text = std::fs::read_to_string(&seen).unwrap();
    assert!(
        text.contains("UNGUARD_MUTANT="),
        "the suite dumped its environment: {said}"
    );
    assert!(
        !text.contains(FAKE),
        "a suite could read a credential:\n{text}"
    );
}
