//! What the scratch copy contains (links, symlinks, the output dir, subdirectory
//! targets, plain directories) and one baseline per distinct test command.

use crate::common::*;

/// A suite (python) that checks facts about the copy it runs in; exit 1 with a
/// message when one is wrong. `m.py` holds `VALUE = 1`; the mutation flips it.
fn checking_suite(checks: &str) -> String {
    format!(
        r#"import os, sys
import m
problems = []
def check(cond, what):
    if not cond:
        problems.append(what)
{checks}
if problems:
    print("copy is wrong:", problems)
    sys.exit(3)   # not a test failure under fail_codes [1]: makes the baseline red
sys.exit(0 if m.VALUE == 1 else 1)
"#
    )
}

const SPEC: &str = r#"version: 1
test:
  command: "python3 run.py"
  fail_codes: [1]
mutations:
  - id: value
    control: "value is one"
    file: m.py
    find: "VALUE = 1"
    replace: "VALUE = 2"
"#;

#[test]
fn env_dirs_are_linked_nested_ones_too_and_symlinks_are_recreated() {
    let checks = r#"
check(not os.path.islink(".venv") and os.path.isdir(".venv"), ".venv is a directory of the copy")
check(os.path.islink(".venv/marker"), "whose entries link to the original")
check(os.path.isfile(".venv/marker"), ".venv content is reachable")
check(not os.path.islink("pkg/node_modules"), "nested ignored node_modules is a directory of the copy")
check(os.path.islink("pkg/node_modules/dep"), "whose entries link to the original")
check(os.path.isfile("pkg/node_modules/dep/index.js"), "its content is reachable")
check(os.path.islink("pkg/link.py"), "tracked symlink is recreated as a symlink")
check(os.readlink("pkg/link.py") == "../m.py", "with the same relative target")
check(not os.path.exists("build.log"), "ignored file is not copied")
"#;
    let fx = Fixture::git(&[
        (".gitignore", ".venv/\nnode_modules/\n*.log\nout/\n"),
        ("m.py", "VALUE = 1\n"),
        ("run.py", &checking_suite(checks)),
        ("unguard.yaml", SPEC),
    ]);
    fx.write(".venv/marker", "x");
    fx.write("pkg/node_modules/dep/index.js", "x");
    fx.write("build.log", "x");
    std::os::unix::fs::symlink("../m.py", fx.path().join("pkg/link.py")).unwrap();
    fx.git_cmd(&["add", "pkg/link.py"]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(fx.verdicts("out")["value"], "killed");
    assert!(err.contains("linked: .venv"), "{err}");
}

#[test]
fn output_dir_inside_the_target_is_never_copied() {
    let checks = r#"
check(not os.path.exists("reports"), "the output dir is not in the copy")
"#;
    // Not ignored by git: only unguard's own exclusion keeps it out.
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", &checking_suite(checks)),
        ("unguard.yaml", SPEC),
    ]);
    // A previous run left the dir (with the marker) behind.
    let (code, out, err) = fx.run(&["run", "--out", "reports", "-j", "1"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, out, err) = fx.run(&["run", "--out", "reports", "-j", "1"]);
    assert_eq!(
        code, 0,
        "second run over an existing output dir: {out}\n{err}"
    );
}

#[test]
fn a_foreign_non_empty_output_dir_is_not_cleared() {
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", &checking_suite("")),
        ("unguard.yaml", SPEC),
    ]);
    fx.write("docs/keep.txt", "precious");
    let (code, _out, err) = fx.run(&["run", "--out", "docs", "-j", "1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("refusing to clear"), "{err}");
    assert_eq!(fx.read("docs/keep.txt"), "precious");
}

#[test]
fn target_inside_a_larger_repo_copies_only_its_subtree() {
    let checks = r#"
check(os.path.isfile("m.py"), "target files are at the root of the copy")
check(not os.path.exists("other.txt"), "files outside the target are not copied")
check(not os.path.exists("sub"), "no extra nesting")
"#;
    let fx = Fixture::git(&[
        ("other.txt", "outside"),
        ("sub/m.py", "VALUE = 1\n"),
        ("sub/run.py", &checking_suite(checks)),
        ("sub/unguard.yaml", SPEC),
    ]);
    let (code, out, err) = fx.run(&["run", "sub", "--out", "out", "-j", "1"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(fx.verdicts("out")["value"], "killed");
}

#[test]
fn plain_directory_without_git_is_walked() {
    let checks = r#"
check(os.path.isfile("data/x.txt"), "nested files are copied")
check(not os.path.exists("__pycache__"), "bytecode caches are not copied")
check(os.path.islink(".venv/marker"), ".venv's entries are linked")
"#;
    let fx = Fixture::new();
    fx.write_all(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", &checking_suite(checks)),
        ("unguard.yaml", SPEC),
        ("data/x.txt", "x"),
        ("__pycache__/stale.cpython-311.pyc", "junk"),
        (".venv/marker", "x"),
    ]);
    let before = tree_state(fx.path(), &["out"]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(fx.verdicts("out")["value"], "killed");
    assert_eq!(before, tree_state(fx.path(), &["out"]));
    assert!(fx.leftover_tmp().is_empty());
}

#[test]
fn each_distinct_test_command_gets_its_own_baseline() {
    // The narrowed command is red on its own: every mutant mapped to it would be
    // "killed" without its own baseline.
    let spec = r#"version: 1
test:
  command: "python3 run.py"
  fail_codes: [1]
mutations:
  - id: value
    control: "value is one"
    file: m.py
    find: "VALUE = 1"
    replace: "VALUE = 2"
  - id: narrowed
    control: "value is one (subset)"
    file: m.py
    find: "VALUE = 1"
    replace: "VALUE = 3"
    test: {command: "python3 run.py --subset"}
"#;
    let run_py = r#"import sys
import m
if "--subset" in sys.argv:
    sys.exit(1)   # this subset is broken on its own
sys.exit(0 if m.VALUE == 1 else 1)
"#;
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", run_py),
        ("unguard.yaml", spec),
    ]);
    let (code, _out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("--subset"),
        "the red baseline names its command: {err}"
    );
    assert!(std::fs::read_to_string(fx.path().join("out/@baseline-2.log")).is_ok());
}

#[test]
fn baseline_that_exits_0_with_red_tests_in_junit_is_red() {
    let spec = r#"version: 1
test:
  command: "python3 run.py {junit}"
  junit: "{junit}"
mutations:
  - id: value
    control: "value is one"
    file: m.py
    find: "VALUE = 1"
    replace: "VALUE = 2"
"#;
    let run_py = r#"import sys
open(sys.argv[1], "w").write('<testsuite><testcase classname="t" name="a"><failure/></testcase></testsuite>')
sys.exit(0)   # a runner that lies about its result
"#;
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", run_py),
        ("unguard.yaml", spec),
    ]);
    let (code, _out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("red test"), "{err}");
}

#[test]
fn read_only_target_file_is_mutated_in_the_copy_only() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", &checking_suite("")),
        ("unguard.yaml", SPEC),
    ]);
    let m = fx.path().join("m.py");
    std::fs::set_permissions(&m, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = tree_state(fx.path(), &["out"]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(fx.verdicts("out")["value"], "killed");
    assert_eq!(
        before,
        tree_state(fx.path(), &["out"]),
        "mode bits and bytes unchanged"
    );
}

#[test]
fn mutating_an_ignored_file_is_a_spec_error() {
    let spec = SPEC.replace("file: m.py", "file: gen.py");
    let fx = Fixture::git(&[
        (".gitignore", "gen.py\n"),
        ("m.py", "VALUE = 1\n"),
        ("run.py", &checking_suite("")),
        ("unguard.yaml", &spec),
    ]);
    fx.write("gen.py", "VALUE = 1\n");
    let (code, _out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("unguard.yaml:6:"), "{err}");
    assert!(err.contains("not part of the copied tree"), "{err}");
}

#[test]
fn plain_directory_whose_venv_is_a_symlink_links_it_once() {
    // Outside git, a top-level `.venv` that is itself a symlink (to a venv
    // kept elsewhere) used to be copied as an entry and then linked again.
    let checks = r#"
check(os.path.isfile(".venv/marker"), "the linked venv resolves")
"#;
    let venv = tempfile::tempdir().unwrap();
    std::fs::write(venv.path().join("marker"), "x").unwrap();
    let fx = Fixture::new();
    fx.write_all(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", &checking_suite(checks)),
        ("unguard.yaml", SPEC),
    ]);
    std::os::unix::fs::symlink(venv.path(), fx.path().join(".venv")).unwrap();
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("1 linked: .venv"), "{err}");
    assert_eq!(fx.verdicts("out")["value"], "killed");
    assert!(fx.leftover_tmp().is_empty());
}

#[test]
fn suites_may_write_bytecode_into_their_private_prefix() {
    // An inherited PYTHONDONTWRITEBYTECODE=1 plus unguard's private
    // PYTHONPYCACHEPREFIX would make every run recompile the standard
    // library: unguard lets Python write bytecode there.
    let checks = r#"
check(not sys.dont_write_bytecode, "bytecode writing is on")
check(sys.pycache_prefix and "unguard-w" in sys.pycache_prefix, "the prefix is unguard's")
"#;
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\n"),
        ("run.py", &checking_suite(checks)),
        ("unguard.yaml", SPEC),
    ]);
    let out = fx
        .unguard(&["run", "--out", "out", "-j", "1"])
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert_eq!(fx.verdicts("out")["value"], "killed");
}

/// A `.venv` that only its own `.gitignore` (`*`, as uv and Python 3.13's
/// venv write it) keeps out of git is an env dir like one the root
/// `.gitignore` names: the copy gets it and the suite's `.venv/bin/python`
/// runs (it was neither copied nor linked: exit 127, a red baseline).
#[test]
fn a_venv_ignored_by_its_own_gitignore_is_an_env_dir() {
    let spec = SpecBuilder::new(".venv/bin/python check.py")
        .preset("generic")
        .timeout("60s")
        .mutation(mutation("m-a", "app.py", "return 1", "return 0"))
        .build();
    let fx = Fixture::git(&[
        ("app.py", "def a():\n    return 1\n"),
        (
            "check.py",
            "import sys\nimport app\nsys.exit(0 if app.a() == 1 else 1)\n",
        ),
        ("unguard.yaml", &spec),
    ]);
    let st = std::process::Command::new(python())
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(fx.path())
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::write(fx.path().join(".venv/.gitignore"), "*\n").unwrap();
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert!(
        fx.path().join("out/outcomes.json").is_file(),
        "the baseline did not run the copy's .venv\n{}",
        ctx(code, &out, &err)
    );
    assert_eq!(
        fx.verdicts("out").get("m-a").map(String::as_str),
        Some("killed"),
        "{}",
        ctx(code, &out, &err)
    );
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert!(err.contains("linked: .venv"), "{err}");
}
