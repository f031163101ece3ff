//! Integration tests for spec validation (`unguard check`), `unguard list`,
//! the command line, and the spec errors that `unguard run` refuses to turn
//! into verdicts (no-op, ambiguous, binary).
//!
//! Every error snapshot is taken with the fixture as cwd and the default spec
//! path, so the CLI prints `unguard.yaml:<line>:<col>` and no temp paths.

use crate::common::*;

// ---------------------------------------------------------------- helpers

/// The source file most mutations point at (line 2 holds `x > 5`).
const A_PY: &str = "def f(x):\n    if x > 5:\n        return 1\n    return 0\n";

/// `version` + a global `test:` with a command that is never run by `check`.
const HEAD: &str = "version: 1\ntest: {command: \"true\"}\nmutations:\n";

/// One valid mutation (its `id:` is at line 4 col 9 when appended to HEAD).
const GOOD: &str =
    "  - id: a\n    control: c\n    file: src/a.py\n    find: \"x > 5\"\n    replace: \"True\"\n";

/// A plain (non-git) fixture with `src/a.py` and `unguard.yaml` = `spec`.
fn spec_fx(spec: &str) -> Fixture {
    let fx = Fixture::new();
    fx.write_all(&[("src/a.py", A_PY), ("unguard.yaml", spec)]);
    fx
}

/// `unguard check` must reject the spec with exit 1 and nothing on stdout;
/// returns stderr.
fn check_rejects(fx: &Fixture) -> String {
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 1, "exit code\n--- stdout:\n{out}\n--- stderr:\n{err}");
    assert!(
        out.is_empty(),
        "nothing on stdout for an invalid spec, got:\n{out}"
    );
    assert!(!err.is_empty());
    err
}

/// The first line is `error: <path>:<line>:<col>: ...`, the source line is
/// shown with a caret, and there is a `= fix:` line.
fn assert_diag(err: &str, path: &str, line: u64, col: u64) {
    let head = format!("error: {path}:{line}:{col}: ");
    assert!(
        err.starts_with(&head),
        "expected error to start with {head:?}:\n{err}"
    );
    assert!(
        err.contains(&format!(" --> {path}:{line}:{col}")),
        "no `--> {path}:{line}:{col}` header:\n{err}"
    );
    // The snippet shows the offending line, numbered, and a caret under it.
    assert!(
        err.lines()
            .any(|l| l.trim_start().starts_with(&format!("{line} | "))),
        "snippet does not show line {line}:\n{err}"
    );
    let caret = err
        .lines()
        .find(|l| l.trim_start().starts_with("| ") && l.contains('^'))
        .unwrap_or_else(|| panic!("no caret line:\n{err}"));
    // Caret column: position of `^` after the `| ` gutter.
    let gutter = caret.find("| ").unwrap() + 2;
    let caret_col = caret[gutter..].find('^').unwrap() as u64 + 1;
    assert_eq!(caret_col, col, "caret is not under column {col}:\n{err}");
    assert!(err.contains("\n  = fix: "), "no `= fix:` line:\n{err}");
}

/// Snapshot of exit code + stderr.
fn snap(name: &str, code: i32, err: &str) {
    insta::assert_snapshot!(name, format!("exit: {code}\n{err}"));
}

/// Write the spec, expect rejection with a diagnostic at line:col, snapshot it.
fn spec_error(name: &str, spec: &str, line: u64, col: u64) -> String {
    let fx = spec_fx(spec);
    let err = check_rejects(&fx);
    assert_diag(&err, "unguard.yaml", line, col);
    snap(name, 1, &err);
    err
}

fn ok_lines(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.starts_with("ok  ")).collect()
}

// ------------------------------------------------- 1. spec error snapshots

#[test]
fn valid_spec_checks_ok() {
    // Control: the base spec of all error tests is itself valid.
    let fx = spec_fx(&format!("{HEAD}{GOOD}"));
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        ok_lines(&out),
        vec!["ok  a  src/a.py:2  (1 site, +1 -1 lines)"],
        "{out}"
    );
    assert!(out.contains("1 mutations apply cleanly"), "{out}");
    assert!(err.is_empty(), "{err}");
}

#[test]
fn malformed_yaml_unclosed_bracket() {
    let spec = format!("{HEAD}{GOOD}    expect: {{killed_by: [\"t::x\"");
    let err = spec_error("malformed_yaml_unclosed_bracket", &spec, 9, 25);
    assert!(err.contains("unclosed bracket"), "{err}");
}

#[test]
fn unknown_key_in_mutation() {
    let spec = format!(
        "{HEAD}  - id: a\n    control: c\n    bogus: 1\n    file: src/a.py\n    find: \"x > 5\"\n    replace: \"True\"\n"
    );
    let err = spec_error("unknown_key_in_mutation", &spec, 6, 5);
    assert!(err.contains("unknown field `bogus`"), "{err}");
    // Names the keys that are allowed.
    assert!(
        err.contains("replace") && err.contains("exact_whitespace"),
        "{err}"
    );
}

#[test]
fn duplicate_yaml_key() {
    let spec = format!("{HEAD}{GOOD}    find: \"return 1\"\n");
    let err = spec_error("duplicate_yaml_key", &spec, 9, 5);
    assert!(err.contains("duplicate mapping key"), "{err}");
    assert!(err.contains("find"), "{err}");
}

#[test]
fn duplicate_mutation_id_names_both_positions() {
    let spec = format!(
        "{HEAD}{GOOD}  - id: a\n    control: c\n    file: src/a.py\n    find: \"return 1\"\n    replace: \"return 0\"\n"
    );
    let err = spec_error("duplicate_mutation_id", &spec, 9, 9);
    assert!(err.contains("duplicate mutation id `a`"), "{err}");
    assert!(err.contains("first declared at unguard.yaml:4:9"), "{err}");
}

#[test]
fn bad_regex() {
    let spec = format!(
        "{HEAD}  - id: a\n    control: c\n    file: src/a.py\n    regex: \"x > (5\"\n    replace: \"True\"\n"
    );
    let err = spec_error("bad_regex", &spec, 7, 12);
    assert!(err.contains("bad regex"), "{err}");
    assert!(err.contains("unclosed group"), "{err}");
}

#[test]
fn file_with_parent_dir_is_refused() {
    let spec = format!(
        "{HEAD}  - id: a\n    control: c\n    file: ../x.py\n    find: \"x > 5\"\n    replace: \"True\"\n"
    );
    let err = spec_error("file_parent_dir", &spec, 6, 11);
    assert!(err.contains("leaves the target root"), "{err}");
}

#[test]
fn absolute_file_is_refused() {
    let spec = format!(
        "{HEAD}  - id: a\n    control: c\n    file: /etc/passwd\n    find: \"root\"\n    replace: \"toor\"\n"
    );
    let err = spec_error("file_absolute", &spec, 6, 11);
    assert!(err.contains("`/etc/passwd` is absolute"), "{err}");
}

#[test]
fn symlink_leaving_the_root_is_refused() {
    let outside = tempfile::Builder::new()
        .prefix("ug-outside-")
        .tempdir()
        .unwrap();
    std::fs::write(outside.path().join("secret.py"), "x > 5\n").unwrap();
    let spec = format!(
        "{HEAD}  - id: a\n    control: c\n    file: src/link.py\n    find: \"x > 5\"\n    replace: \"True\"\n"
    );
    let fx = spec_fx(&spec);
    std::os::unix::fs::symlink(
        outside.path().join("secret.py"),
        fx.path().join("src/link.py"),
    )
    .unwrap();
    let err = check_rejects(&fx);
    assert_diag(&err, "unguard.yaml", 6, 11);
    assert!(err.contains("resolves outside the target root"), "{err}");
    let real = outside.path().canonicalize().unwrap();
    assert!(
        err.contains(&real.display().to_string()),
        "names the link target:\n{err}"
    );
    let err = err.replace(&real.display().to_string(), "[OUTSIDE]");
    snap("file_symlink_outside", 1, &err);
    // The file outside was not touched.
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.py")).unwrap(),
        "x > 5\n"
    );
}

#[test]
fn missing_file() {
    let spec = format!(
        "{HEAD}  - id: a\n    control: c\n    file: src/missing.py\n    find: \"x > 5\"\n    replace: \"True\"\n"
    );
    let err = spec_error("file_missing", &spec, 6, 11);
    assert!(err.contains("`src/missing.py` does not exist"), "{err}");
}

#[test]
fn killed_by_without_junit() {
    let spec = format!("{HEAD}{GOOD}    expect: {{killed_by: [\"tests/test_x.py::test_y\"]}}\n");
    let err = spec_error("killed_by_without_junit", &spec, 9, 26);
    assert!(err.contains("killed_by"), "{err}");
    assert!(err.contains("junit"), "{err}");
}

#[test]
fn killed_by_with_junit_is_accepted() {
    // Control for the test above: the same mutation is fine once `junit` is set.
    let spec = format!(
        "version: 1\ntest: {{command: \"true {{junit}}\", junit: \"{{junit}}\"}}\nmutations:\n{GOOD}    expect: {{killed_by: [\"tests/test_x.py::test_y\"]}}\n"
    );
    let fx = spec_fx(&spec);
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn bad_timeout_string() {
    let spec = "version: 1\ntest:\n  command: \"true\"\n  timeout: 45 seconds please\nmutations:\n"
        .to_string()
        + GOOD;
    let err = spec_error("bad_timeout", &spec, 4, 12);
    assert!(err.contains("bad timeout `45 seconds please`"), "{err}");
}

#[test]
fn bad_per_mutant_timeout_string() {
    let spec = format!("{HEAD}{GOOD}    timeout: soon\n");
    let err = check_rejects(&spec_fx(&spec));
    assert_diag(&err, "unguard.yaml", 9, 14);
    assert!(err.contains("bad timeout `soon`"), "{err}");
}

#[test]
fn unsupported_version() {
    let spec = format!("version: 2\ntest: {{command: \"true\"}}\nmutations:\n{GOOD}");
    let err = spec_error("version_2", &spec, 1, 10);
    assert!(err.contains("unsupported spec version 2"), "{err}");
}

#[test]
fn empty_spec_file() {
    for content in ["", "  \n\n"] {
        let fx = spec_fx(content);
        let err = check_rejects(&fx);
        // An empty file has no source line to show, so no caret snippet.
        assert!(
            err.starts_with("error: unguard.yaml:1:1: spec file is empty"),
            "{err}"
        );
        assert!(err.contains("\n  = fix: "), "{err}");
        snap("empty_spec", 1, &err);
    }
}

#[test]
fn missing_test_section() {
    let spec = format!("version: 1\nmutations:\n{GOOD}");
    let err = spec_error("missing_test_section", &spec, 1, 1);
    assert!(err.contains("missing `test:` section"), "{err}");
}

#[test]
fn count_zero() {
    let spec = format!("{HEAD}{GOOD}    count: 0\n");
    let err = spec_error("count_zero", &spec, 9, 12);
    assert!(err.contains("`count` must be at least 1"), "{err}");
}

#[test]
fn invalid_id_with_slash() {
    let spec = format!(
        "{HEAD}  - id: a/b\n    control: c\n    file: src/a.py\n    find: \"x > 5\"\n    replace: \"True\"\n"
    );
    let err = spec_error("invalid_id_slash", &spec, 4, 9);
    assert!(err.contains("invalid mutation id `a/b`"), "{err}");
}

#[test]
fn both_find_and_regex() {
    let spec = format!(
        "{HEAD}  - id: a\n    control: c\n    file: src/a.py\n    find: \"x > 5\"\n    regex: \"x > 5\"\n    replace: \"True\"\n"
    );
    let err = spec_error("both_find_and_regex", &spec, 8, 12);
    assert!(err.contains("both `find` and `regex`"), "{err}");
}

#[test]
fn include_matching_nothing() {
    let spec = format!("version: 1\ntest: {{command: \"true\"}}\ninclude: [\"mutations/*.yaml\"]\nmutations:\n{GOOD}");
    let err = spec_error("include_matches_nothing", &spec, 3, 11);
    assert!(
        err.contains("include `mutations/*.yaml` matches no file"),
        "{err}"
    );
}

#[test]
fn include_with_parent_dir() {
    let spec = format!("version: 1\ntest: {{command: \"true\"}}\ninclude: [\"../other/*.yaml\"]\nmutations:\n{GOOD}");
    let fx = spec_fx(&spec);
    let err = check_rejects(&fx);
    assert_diag(&err, "unguard.yaml", 3, 11);
    assert!(err.contains("leaves the target root"), "{err}");
    snap("include_parent_dir", 1, &err);
}

#[test]
fn all_problems_are_reported_in_one_pass() {
    // Two independent errors in two mutations: both named, in spec order.
    let spec = format!(
        "{HEAD}  - id: a\n    control: c\n    file: src/a.py\n    find: \"x > 5\"\n    replace: \"True\"\n    count: 0\n  - id: b\n    control: c\n    file: src/nope.py\n    find: \"x\"\n    replace: \"y\"\n"
    );
    let err = check_rejects(&spec_fx(&spec));
    let first = err
        .find("unguard.yaml:9:12:")
        .unwrap_or_else(|| panic!("{err}"));
    let second = err
        .find("unguard.yaml:12:11:")
        .unwrap_or_else(|| panic!("{err}"));
    assert!(first < second, "{err}");
    assert_eq!(err.matches("= fix:").count(), 2, "{err}");
}

// ------------------------------------------- 2. no-op never becomes a verdict

/// A git fixture whose suite (tests/t.sh) appends to `$MARKER` each time it
/// runs and fails when either control in src/a.py is gone.
struct RunFx {
    fx: Fixture,
    marks: tempfile::TempDir,
}

impl RunFx {
    fn new(mutations: &str) -> RunFx {
        let marks = tempfile::Builder::new()
            .prefix("ug-marks-")
            .tempdir()
            .unwrap();
        let marker = marks.path().join("ran");
        let spec = format!(
            "version: 1\ntest:\n  command: \"sh tests/t.sh\"\n  env: {{MARKER: \"{}\"}}\nmutations:\n{mutations}",
            marker.display()
        );
        let suite = "#!/bin/sh\necho run >> \"$MARKER\"\ngrep -q 'x > 5' src/a.py || exit 1\ngrep -q 'return 1' src/a.py || exit 1\nexit 0\n";
        let fx = Fixture::git(&[
            ("src/a.py", A_PY),
            ("tests/t.sh", suite),
            ("unguard.yaml", &spec),
        ]);
        RunFx { fx, marks }
    }
    fn runs(&self) -> usize {
        std::fs::read_to_string(self.marks.path().join("ran"))
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }
}

/// id line 6 col 9 (`good`), id line 11 col 9 (`stale`).
const GOOD_AND_STALE: &str = "  - id: good\n    control: c\n    file: src/a.py\n    find: \"x > 5\"\n    replace: \"True\"\n  - id: stale\n    control: c\n    file: src/a.py\n    find: \"x >= 6\"\n    replace: \"True\"\n";

#[test]
fn run_refuses_noop_and_runs_nothing() {
    let r = RunFx::new(GOOD_AND_STALE);
    let (code, out, err) = r.fx.run(&["run", "-j", "1"]);
    assert_eq!(code, 5, "--- stdout:\n{out}\n--- stderr:\n{err}");
    assert!(
        err.contains("error: unguard.yaml:11:9: no-op: mutation `stale`"),
        "{err}"
    );
    assert!(err.contains("= fix:"), "{err}");
    assert!(
        err.contains("--keep-going"),
        "says how to run the others:\n{err}"
    );
    assert_eq!(
        r.runs(),
        0,
        "the test suite must not run (not even the baseline)"
    );
    assert!(
        !out.contains("survived") && !err.contains("survived"),
        "{out}\n{err}"
    );
    assert!(r.fx.leftover_tmp().is_empty(), "{:?}", r.fx.leftover_tmp());
}

#[test]
fn run_keep_going_runs_others_and_reports_noop() {
    let r = RunFx::new(GOOD_AND_STALE);
    let (code, out, err) = r.fx.run(&["run", "-j", "1", "--keep-going"]);
    assert_eq!(code, 5, "--- stdout:\n{out}\n--- stderr:\n{err}");
    assert!(err.contains("unguard.yaml:11:9"), "{err}");
    // baseline + canary + the good mutant ran; nothing for the stale one.
    assert!(r.runs() >= 2, "suite ran {} times", r.runs());
    let v = r.fx.verdicts("unguard.out");
    assert_eq!(v.get("good").map(String::as_str), Some("killed"), "{v:?}");
    assert_eq!(v.get("stale").map(String::as_str), Some("no-op"), "{v:?}");
    let o = r.fx.outcomes("unguard.out");
    assert_eq!(o["summary"]["survived"], 0, "{o}");
    assert_eq!(o["summary"]["no_op"], 1, "{o}");
    assert_eq!(o["gate"]["passed"], false, "{o}");
    let stale = o["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == "stale")
        .unwrap();
    assert_eq!(stale["spec_pos"], "unguard.yaml:11:9", "{stale}");
    assert!(
        stale["diff_file"].is_null() && stale["log_file"].is_null(),
        "{stale}"
    );
    for line in out.lines().filter(|l| l.contains("stale")) {
        assert!(
            !line.contains("survived"),
            "row for a no-op says survived: {line}"
        );
    }
    assert!(!out.contains("survived"), "nothing survived here:\n{out}");
    assert!(r.fx.leftover_tmp().is_empty(), "{:?}", r.fx.leftover_tmp());
}

#[test]
fn run_keep_going_reports_ambiguous() {
    let mutations = "  - id: good\n    control: c\n    file: src/a.py\n    find: \"x > 5\"\n    replace: \"True\"\n  - id: twice\n    control: c\n    file: src/a.py\n    find: \"return\"\n    replace: \"yield\"\n";
    let r = RunFx::new(mutations);
    let (code, out, err) = r.fx.run(&["run", "-j", "1", "--keep-going"]);
    assert_eq!(code, 5, "--- stdout:\n{out}\n--- stderr:\n{err}");
    let v = r.fx.verdicts("unguard.out");
    assert_eq!(
        v.get("twice").map(String::as_str),
        Some("ambiguous"),
        "{v:?}"
    );
    assert_eq!(v.get("good").map(String::as_str), Some("killed"), "{v:?}");
}

// ------------------------------------------ 3. whitespace across line breaks

const WRAPPED: &str = "def msg():\n    return \"\"\"up to 5\npartial results\"\"\"\n";

fn wrapped_spec(extra: &str) -> String {
    format!("{HEAD}  - id: cap\n    control: result cap\n    file: src/m.py\n    find: \"5 partial\"\n    replace: \"50 partial\"\n{extra}")
}

#[test]
fn find_matches_across_line_break() {
    let fx = spec_fx(&wrapped_spec(""));
    fx.write("src/m.py", WRAPPED);
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        ok_lines(&out),
        vec!["ok  cap  src/m.py:2  (1 site, +1 -2 lines)"],
        "{out}"
    );
    // check is a dry run: the file is unchanged.
    assert_eq!(fx.read("src/m.py"), WRAPPED);
}

#[test]
fn exact_whitespace_does_not_cross_line_break() {
    let fx = spec_fx(&wrapped_spec("    exact_whitespace: true\n"));
    fx.write("src/m.py", WRAPPED);
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 5, "{out}{err}");
    assert!(ok_lines(&out).is_empty(), "{out}");
    assert!(
        err.contains("error: unguard.yaml:4:9: no-op: mutation `cap` on src/m.py"),
        "{err}"
    );
    assert!(err.contains("1 of 1 mutations cannot be applied"), "{err}");
}

// ------------------------------------------------------------ 4. ambiguous

const TWICE: &str = "a = 1\nb = 2\nif x:\n    return 1\nelse:\n    return 1\n";

fn twice_fx(count: &str) -> Fixture {
    let fx = spec_fx(&format!(
        "{HEAD}  - id: r\n    control: c\n    file: src/t.py\n    find: \"return 1\"\n    replace: \"return 0\"\n{count}"
    ));
    fx.write("src/t.py", TWICE);
    fx
}

#[test]
fn ambiguous_find_names_both_lines() {
    let fx = twice_fx("");
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 5, "{out}{err}");
    assert!(
        err.contains("error: unguard.yaml:4:9: ambiguous: mutation `r` on src/t.py"),
        "{err}"
    );
    assert!(err.contains("matches 2 times (lines 4, 6)"), "{err}");
    assert!(err.contains("= fix:") && err.contains("count"), "{err}");
}

#[test]
fn count_two_and_all_accept_two_sites() {
    for count in ["    count: 2\n", "    count: all\n"] {
        let fx = twice_fx(count);
        let (code, out, err) = fx.run(&["check"]);
        assert_eq!(code, 0, "{count}: {out}{err}");
        assert_eq!(
            ok_lines(&out),
            vec!["ok  r  src/t.py:4  (2 sites, +2 -2 lines)"],
            "{out}"
        );
    }
}

#[test]
fn count_more_than_matches_is_ambiguous() {
    let fx = twice_fx("    count: 3\n");
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 5, "{out}{err}");
    assert!(
        err.contains("matches 2 times (lines 4, 6), the spec expects exactly 3"),
        "{err}"
    );
}

// ------------------------------------------------ 5. identity replacement

#[test]
fn replace_equal_to_match_is_noop() {
    let spec = format!("{HEAD}  - id: same\n    control: c\n    file: src/a.py\n    find: \"x > 5\"\n    replace: \"x > 5\"\n");
    let fx = spec_fx(&spec);
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 5, "{out}{err}");
    assert!(
        err.contains("error: unguard.yaml:4:9: no-op: mutation `same`"),
        "{err}"
    );
    assert!(err.contains("unchanged"), "{err}");
}

#[test]
fn regex_replacement_reproducing_the_match_is_noop() {
    let spec = format!("{HEAD}  - id: same\n    control: c\n    file: src/a.py\n    regex: 'x (>) 5'\n    replace: 'x $1 5'\n");
    let fx = spec_fx(&spec);
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 5, "{out}{err}");
    assert!(err.contains("no-op: mutation `same`"), "{err}");
}

// ------------------------------------------------------- 6. list, --only

const THREE: &str = "version: 1\ntest: {command: \"true\"}\nmutations:\n  - id: gt\n    control: bound check\n    file: src/a.py\n    find: \"x > 5\"\n    replace: \"True\"\n  - id: ret-one\n    control: result value\n    rule: \"002/4\"\n    file: src/a.py\n    find: \"return 1\"\n    replace: \"return 2\"\n  - id: ret.zero\n    control: default deny\n    file: src/a.py\n    regex: 'return (0)'\n    replace: 'return 9'\n";

#[test]
fn list_three_mutations() {
    let fx = spec_fx(THREE);
    let (code, out, err) = fx.run(&["list"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(out.lines().all(|l| l.split('\t').count() == 3), "{out}");
    insta::assert_snapshot!("list_three", out);
}

#[test]
fn run_only_unknown_id_is_usage_error() {
    let r = RunFx::new(GOOD_AND_STALE);
    let (code, out, err) = r.fx.run(&["run", "--only", "nope"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("--only nope: no mutation with that id"),
        "{err}"
    );
    assert_eq!(r.runs(), 0, "nothing runs");
}

// ---------------------------------------------------------- 7. clap usage

#[test]
fn usage_errors_exit_1() {
    let fx = Fixture::new();
    for args in [
        &["run", "--bogus"][..],
        &["frobnicate"],
        &[],
        &["run", "-j", "0"],
        &["run", "--timeout", "0s"],
    ] {
        let (code, out, err) = fx.run(args);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        assert!(
            err.contains("error:") || err.contains("Usage"),
            "{args:?}: {err}"
        );
    }
    let (_, _, err) = fx.run(&["run", "--bogus"]);
    assert!(err.contains("--bogus"), "{err}");
    let (_, _, err) = fx.run(&["frobnicate"]);
    assert!(err.contains("frobnicate"), "{err}");
}

#[test]
fn help_and_version_exit_0() {
    let fx = Fixture::new();
    let (code, out, _) = fx.run(&["--help"]);
    assert_eq!(code, 0);
    for cmd in ["run", "check", "list"] {
        assert!(out.contains(cmd), "{out}");
    }
    assert!(out.contains("Exit codes"), "{out}");
    let (code, out, _) = fx.run(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), format!("unguard {}", env!("CARGO_PKG_VERSION")));
    let (code, out, _) = fx.run(&["run", "--help"]);
    assert_eq!(code, 0);
    for flag in [
        "--keep-going",
        "--no-canary",
        "--timeout-is",
        "--only",
        "--markdown",
        "exit 3",
        "exit stays 5",
    ] {
        assert!(out.contains(flag), "run --help lacks {flag}:\n{out}");
    }
}

#[test]
fn run_help_lists_all_exit_codes() {
    let fx = Fixture::new();
    let (code, out, _) = fx.run(&["run", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("Exit codes"), "{out}");
    for needle in ["4 baseline red", "130 interrupted", "1 invalid"] {
        assert!(out.contains(needle), "run --help lacks `{needle}`:\n{out}");
    }
}

// ------------------------------------------------------------ 8. binary

#[test]
fn binary_target_is_refused() {
    let spec = format!("{HEAD}  - id: bin\n    control: c\n    file: src/blob.dat\n    find: \"x > 5\"\n    replace: \"True\"\n");
    let fx = spec_fx(&spec);
    std::fs::write(fx.path().join("src/blob.dat"), b"abc\0def x > 5\n").unwrap();
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 5, "{out}{err}");
    assert!(ok_lines(&out).is_empty(), "{out}");
    assert!(
        err.contains("error: unguard.yaml:4:9: binary file: mutation `bin` on src/blob.dat"),
        "{err}"
    );
    assert!(err.contains("NUL"), "{err}");
    assert!(err.contains("= fix:"), "{err}");
    assert_eq!(
        std::fs::read(fx.path().join("src/blob.dat")).unwrap(),
        b"abc\0def x > 5\n"
    );
}

// ------------------------------------------------------------ 9. includes

fn include_fx(inc: &str) -> Fixture {
    let spec = format!("version: 1\ntest: {{command: \"true\"}}\ninclude: [\"mutations/*.yaml\"]\nmutations:\n{GOOD}");
    let fx = spec_fx(&spec);
    fx.write("mutations/more.yaml", inc);
    fx
}

#[test]
fn include_file_ok() {
    let fx = include_fx("mutations:\n  - id: b\n    control: c\n    file: src/a.py\n    find: \"return 1\"\n    replace: \"return 2\"\n");
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        ok_lines(&out),
        vec![
            "ok  a  src/a.py:2  (1 site, +1 -1 lines)",
            "ok  b  src/a.py:3  (1 site, +1 -1 lines)"
        ],
        "{out}"
    );
}

#[test]
fn include_file_errors_name_the_include() {
    let fx = include_fx("mutations:\n  - id: b\n    control: c\n    file: src/nope.py\n    find: \"return 1\"\n    replace: \"return 2\"\n");
    let err = check_rejects(&fx);
    assert_diag(&err, "mutations/more.yaml", 4, 11);
    assert!(
        !err.contains("unguard.yaml:"),
        "error is attributed to the include:\n{err}"
    );
    snap("include_file_error", 1, &err);
}

#[test]
fn include_file_yaml_errors_name_the_include() {
    let fx = include_fx("mutations:\n  - id: b\n    control: c\n    file: src/a.py\n    find: \"return 1\"\n    replace: \"return 2\"\n    bogus: 3\n");
    let err = check_rejects(&fx);
    assert_diag(&err, "mutations/more.yaml", 7, 5);
    assert!(err.contains("unknown field `bogus`"), "{err}");
    snap("include_file_yaml_error", 1, &err);
}

#[test]
fn duplicate_id_across_include_names_both_files() {
    let fx = include_fx("mutations:\n  - id: a\n    control: c\n    file: src/a.py\n    find: \"return 1\"\n    replace: \"return 2\"\n");
    let err = check_rejects(&fx);
    assert_diag(&err, "mutations/more.yaml", 2, 9);
    assert!(err.contains("first declared at unguard.yaml:5:9"), "{err}");
    snap("include_duplicate_id", 1, &err);
}

#[test]
fn include_file_may_only_hold_mutations() {
    let fx = include_fx("version: 1\nmutations: []\n");
    let err = check_rejects(&fx);
    assert_diag(&err, "mutations/more.yaml", 1, 1);
    assert!(err.contains("unknown field `version`"), "{err}");
}

#[test]
fn include_works_when_root_path_has_glob_metacharacters() {
    let fx = Fixture::new();
    fx.write_all(&[
        ("t[1]/src/a.py", A_PY),
        ("t[1]/unguard.yaml", "version: 1\ntest: {command: \"true\"}\ninclude: [\"m/*.yaml\"]\n"),
        ("t[1]/m/x.yaml", "mutations:\n  - id: b\n    control: c\n    file: src/a.py\n    find: \"return 1\"\n    replace: \"return 2\"\n"),
    ]);
    let (code, out, err) = fx.run(&["check", "t[1]"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        ok_lines(&out),
        vec!["ok  b  src/a.py:3  (1 site, +1 -1 lines)"],
        "{out}"
    );
}

// ------------------------------------------- 10. target in a subdirectory

#[test]
fn check_subdirectory_target_from_repo_root() {
    let spec = format!("{HEAD}{GOOD}");
    let fx = Fixture::git(&[
        ("README.md", "outer repo\n"),
        // A decoy at the repo root: must not be the file that is mutated.
        ("src/a.py", "nothing here\n"),
        ("sub/src/a.py", A_PY),
        ("sub/unguard.yaml", &spec),
    ]);
    let (code, out, err) = fx.run(&["check", "sub"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        ok_lines(&out),
        vec!["ok  a  src/a.py:2  (1 site, +1 -1 lines)"],
        "{out}"
    );

    let (code, out, err) = fx.run(&["list", "sub"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "a\tsrc/a.py:2\tc\n");

    // Errors name the spec as seen from the cwd, and the file relative to `sub`.
    fx.write(
        "sub/unguard.yaml",
        &format!("{HEAD}  - id: a\n    control: c\n    file: src/missing.py\n    find: \"x\"\n    replace: \"y\"\n"),
    );
    let (code, out, err) = fx.run(&["check", "sub"]);
    assert_eq!(code, 1, "{out}{err}");
    assert_diag(&err, "sub/unguard.yaml", 6, 11);
    assert!(
        err.contains("file `src/missing.py` does not exist in sub"),
        "{err}"
    );
    snap("subdir_missing_file", code, &err);
}

#[test]
fn check_with_explicit_config_path() {
    let fx = spec_fx(&format!("{HEAD}{GOOD}"));
    std::fs::rename(fx.path().join("unguard.yaml"), fx.path().join("other.yaml")).unwrap();
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("unguard.yaml: cannot read spec file"), "{err}");
    let (code, out, err) = fx.run(&["check", "--config", "other.yaml"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(ok_lines(&out).len(), 1, "{out}");
}

// ------------------------------------------------ further bugs (ignored)

#[test]
fn trailing_newline_in_find_keeps_next_line_indentation() {
    let spec = format!("{HEAD}  - id: a\n    control: c\n    file: src/a.py\n    find: |\n      if x > 5:\n    replace: |\n      if True:\n");
    let fx = spec_fx(&spec);
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 0, "{out}{err}");
    // Only line 2 changes; `        return 1` keeps its indentation.
    assert_eq!(
        ok_lines(&out),
        vec!["ok  a  src/a.py:2  (1 site, +1 -1 lines)"],
        "{out}"
    );
}

#[test]
fn apply_problems_show_caret_snippet() {
    let fx = spec_fx(&format!("{HEAD}  - id: a\n    control: c\n    file: src/a.py\n    find: \"x >= 6\"\n    replace: \"True\"\n"));
    let (code, _, err) = fx.run(&["check"]);
    assert_eq!(code, 5, "{err}");
    assert_diag(&err, "unguard.yaml", 4, 9);
}

#[test]
fn unclosed_bracket_mid_file_points_at_bracket_line() {
    let spec = format!(
        "version: 1\ntest:\n  command: [\"python3\", \"-m\", \"pytest\"\nmutations:\n{GOOD}"
    );
    let err = check_rejects(&spec_fx(&spec));
    assert!(
        err.starts_with("error: unguard.yaml:3:"),
        "should point at line 3 (the `[`):\n{err}"
    );
}

#[test]
fn yaml_errors_do_not_leak_rust_internals() {
    let cases = [
        format!("{HEAD}  - id: a\n    control: c\n    file: src/a.py\n    find: \"x > 5\"\n    replace:\n"),
        format!("{HEAD}{GOOD}    count: -1\n"),
        format!("{HEAD}{GOOD}    find: \"return 1\"\n"),
    ];
    for spec in cases {
        let err = check_rejects(&spec_fx(&spec));
        for internal in [
            "Option<",
            "RawCount",
            "enum",
            "DuplicateKeyPolicy",
            "Options",
        ] {
            assert!(!err.contains(internal), "leaks `{internal}`:\n{err}");
        }
    }
}

// ------------------------------------------------- multi-line re-indentation

const NESTED_GUARD_PY: &str = "class Guard:\n    def allowed(self, host):\n        if host == \"evil\":\n            return False\n        return True\n";

const NESTED_GUARD_TEST: &str = "import guard\n\ndef test_evil_is_refused():\n    assert not guard.Guard().allowed(\"evil\")\n\ndef test_good_is_allowed():\n    assert guard.Guard().allowed(\"good\")\n";

#[test]
fn a_multi_line_replace_lands_at_the_depth_of_the_code_it_replaces() {
    // `find: |` is written at column 0 and matches a body indented 8
    // spaces; `replace` is in the same frame. Pasted as written, its second
    // line landed at 4 spaces (an IndentationError: `wrong-reason` under
    // pytest although the test kills the real mutant).
    let fx = Fixture::git(&[
        ("guard.py", NESTED_GUARD_PY),
        ("tests/test_guard.py", NESTED_GUARD_TEST),
        (".gitignore", "out/\n__pycache__/\n"),
        (
            "unguard.yaml",
            "version: 1\ntest:\n  command: python3 -m pytest -q -p no:cacheprovider --junitxml={junit}\n  junit: \"{junit}\"\n  timeout: 60s\nmutations:\n  - id: evil-host\n    control: \"the evil host is refused\"\n    file: guard.py\n    find: |\n      if host == \"evil\":\n          return False\n    replace: |\n      if host == \"evil\":\n          return True\n",
        ),
    ]);
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert!(
        out.contains("ok  evil-host  guard.py:4  (1 site, +1 -1 lines; `replace` re-indented +8 spaces to the code it replaces)"),
        "{out}"
    );
    assert!(
        out.contains("1 of them with a multi-line `replace` re-indented to the depth of the code it replaces (evil-host)"),
        "{out}"
    );

    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(
        fx.verdicts("out")["evil-host"],
        "killed",
        "{}",
        ctx(code, &out, &err)
    );
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    let diff = fx.outcomes("out")["mutants"][0]["diff"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        diff.contains("\n-            return False\n+            return True\n"),
        "{diff}"
    );
}

#[test]
fn a_multi_line_replace_that_cannot_be_fitted_is_refused_with_the_fix() {
    // Tabs in the file, spaces in `find`: no depth to re-indent to.
    let fx = Fixture::new();
    fx.write_all(&[
        ("src/a.py", "def f(x):\n\tif x:\n\t\treturn 1\n"),
        (
            "unguard.yaml",
            "version: 1\ntest: {command: \"true\"}\nmutations:\n  - id: tabs\n    control: c\n    file: src/a.py\n    find: |\n      if x:\n          return 1\n    replace: |\n      if x:\n          return 0\n",
        ),
    ]);
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 5, "{}", ctx(code, &out, &err));
    assert!(
        err.contains("indentation: mutation `tabs` on src/a.py: `find` matched the code at line 2 with another indentation")
            && err.contains("exact_whitespace: true"),
        "{err}"
    );
}
