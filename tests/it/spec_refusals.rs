//! Specs that look fine but would fake a verdict: `unguard check` must refuse
//! them (with the position and a fix) instead of letting `run` turn them
//! into a "killed" that proves nothing, and specs that are fine must not be
//! refused (issue 12).

use crate::common::*;

/// The source file the mutations point at (line 2 holds `x > 5`).
const A_PY: &str = "def f(x):\n    if x > 5:\n        return 1\n    return 0\n";

/// A git repo with `src/a.py` and `unguard.yaml` = `spec`.
fn git_fx(spec: &str) -> Fixture {
    Fixture::git(&[("src/a.py", A_PY), ("unguard.yaml", spec)])
}

/// One regex mutation of `src/a.py` with `replace: <replace>` (the
/// `replace:` value at line 8, column 14).
fn regex_spec(regex: &str, replace: &str) -> String {
    format!(
        "version: 1\ntest: {{command: \"true\"}}\nmutations:\n  - id: a\n    control: c\n    file: src/a.py\n    regex: '{regex}'\n    replace: '{replace}'\n"
    )
}

/// `unguard check` refuses with exit 1, nothing on stdout, and an error at
/// `unguard.yaml:line:col` with a caret and a fix; returns stderr.
fn refused(fx: &Fixture, line: u64, col: u64) -> String {
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 1, "{}", ctx(code, &out, &err));
    assert!(out.is_empty(), "{}", ctx(code, &out, &err));
    let head = format!("error: unguard.yaml:{line}:{col}: ");
    assert!(err.starts_with(&head), "expected {head:?}:\n{err}");
    assert!(
        err.contains(&format!(" --> unguard.yaml:{line}:{col}")),
        "{err}"
    );
    assert!(err.contains("\n  = fix: "), "{err}");
    err
}

// ------------------------------------------- 5. bad capture references

#[test]
fn a_reference_to_a_missing_group_number_is_refused() {
    let fx = git_fx(&regex_spec(r"x (>) 5", "x $9 5"));
    let err = refused(&fx, 8, 14);
    assert!(err.contains("capture group 9"), "{err}");
    assert!(err.contains("`$9`"), "{err}");
    // The fix names the groups the regex has.
    assert!(
        err.contains("= fix: the regex has groups 0 (the whole match) and 1;"),
        "{err}"
    );
    // `run` refuses the same spec before running anything.
    let (code, out, err) = fx.run(&["run", "--out", "out"]);
    assert_eq!(code, 1, "{}", ctx(code, &out, &err));
    assert!(err.contains("capture group 9"), "{err}");
    assert!(!fx.path().join("out/outcomes.json").exists());
    insta::assert_snapshot!("missing_group_number", err);
}

#[test]
fn a_reference_to_a_missing_group_name_is_refused() {
    let fx = git_fx(&regex_spec(r"x (?P<op>>) (\d)", "x ${nope} $2"));
    let err = refused(&fx, 8, 14);
    assert!(
        err.contains("no capture group named `nope`") && err.contains("`${nope}`"),
        "{err}"
    );
    assert!(
        err.contains("= fix: the regex has groups 0 (the whole match), 1 (`op`) and 2;"),
        "{err}"
    );
}

#[test]
fn a_group_number_run_into_a_name_is_refused_with_the_braced_form() {
    // `$1_x` is the group named `1_x`, not group 1 then `_x`.
    let fx = git_fx(&regex_spec(r"(x) > 5", "$1_x > 5"));
    let err = refused(&fx, 8, 14);
    assert!(err.contains("`$1_x`"), "{err}");
    assert!(err.contains("= fix: write `${1}_x`"), "{err}");
    insta::assert_snapshot!("group_number_run_into_a_name", err);

    // The same for a name: `$op_x` with a group `op`.
    let fx = git_fx(&regex_spec(r"x (?P<op>>) 5", "x $op_ 6"));
    let err = refused(&fx, 8, 14);
    assert!(err.contains("= fix: write `${op}_`"), "{err}");
}

#[test]
fn a_regex_without_groups_names_only_the_whole_match() {
    let fx = git_fx(&regex_spec(r"x > 5", "$1"));
    let err = refused(&fx, 8, 14);
    assert!(err.contains("the regex has no capture group"), "{err}");
}

#[test]
fn every_bad_reference_of_every_mutation_is_reported_at_once() {
    let spec = format!(
        "{}  - id: b\n    control: c\n    file: src/a.py\n    regex: 'return (1)'\n    replace: \"return ${{2}}\"\n",
        regex_spec(r"x (>) 5", "$3 $x")
    );
    let fx = git_fx(&spec);
    let err = refused(&fx, 8, 14);
    assert_eq!(err.matches("error: ").count(), 3, "{err}");
    assert!(err.contains("error: unguard.yaml:13:14: "), "{err}");
}

#[test]
fn valid_references_and_literal_dollars_are_accepted() {
    for replace in [
        "${1}_x $1 $0 ${0}",
        "$$9 $$x $$",
        "cost: $ 5 $- $",
        "${unclosed",
        "${op}${2}$op",
    ] {
        let fx = git_fx(&regex_spec(r"x (?P<op>>) (5)", replace));
        let (code, out, err) = fx.run(&["check"]);
        assert_eq!(code, 0, "{replace}: {}", ctx(code, &out, &err));
    }
    // A literal `find` does not expand `$` at all.
    let fx = git_fx(
        "version: 1\ntest: {command: \"true\"}\nmutations:\n  - id: a\n    control: c\n    file: src/a.py\n    find: 'x > 5'\n    replace: '$9 ${nope} $1_x'\n",
    );
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
}

#[test]
fn the_catalog_refuses_bad_references_with_file_and_line() {
    let yaml = "group: transport\noperators:\n  - id: op-a\n    control: c\n    rule: '002/4'\n    languages: [python]\n    files: ['**/*.py']\n    expected: false\n    sdk: s\n    matchers:\n      - lang: python\n        regex: '(x) > 5'\n        replace: '$1_x'\n      - ini: {sections: [s], key: k, value: '(a)', replace: '${nope}'}\n    positive:\n      - code: 'x > 5'\n        mutated: 'x_x'\n    negative: ['y']\n";
    let err = unguard::catalog::parse_catalog(&[("mutations/t.yaml", yaml)]).unwrap_err();
    assert!(
        err.contains("mutations/t.yaml:13:18: operator `op-a`: ") && err.contains("write `${1}_x`"),
        "{err}"
    );
    assert!(
        err.contains("mutations/t.yaml:14:") && err.contains("no capture group named `nope`"),
        "{err}"
    );
    // The built-in catalog passes the same check.
    assert!(unguard::catalog::try_catalog().is_ok());
}

// ------------------------------------- 6a. pytest ids with `::` in params

const HOSTS_PY: &str = "def is_loopback(host):\n    return host in (\"127.0.0.1\", \"::1\")\n";
const T_PY: &str = "import pytest\nfrom hosts import is_loopback\n\n\n@pytest.mark.parametrize(\"host\", [\"::1\"])\ndef test_x(host):\n    assert is_loopback(host)\n\n\ndef test_other():\n    assert not is_loopback(\"10.0.0.1\")\n";

#[test]
fn a_pytest_parameter_id_containing_colons_names_its_test() {
    let spec = "version: 1\ntest:\n  command: \"python3 -m pytest -q -p no:cacheprovider tests/t.py --junitxml={junit}\"\n  junit: \"{junit}\"\n  timeout: 60s\nmutations:\n  - id: v6\n    control: \"::1 is loopback\"\n    file: hosts.py\n    find: ', \"::1\"'\n    replace: ', \"::2\"'\n    expect:\n      killed_by: [\"tests/t.py::test_x[::1]\"]\n";
    let fx = Fixture::git(&[
        ("hosts.py", HOSTS_PY),
        ("tests/__init__.py", ""),
        ("tests/t.py", T_PY),
        ("unguard.yaml", spec),
    ]);
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert!(
        fx.path().join("out/outcomes.json").exists(),
        "{}",
        ctx(code, &out, &err)
    );
    assert_eq!(
        fx.verdicts("out")["v6"],
        "killed",
        "{}",
        ctx(code, &out, &err)
    );
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
}

// ------------------------------- 6b. files that are not part of the copy

#[test]
fn check_refuses_a_git_ignored_file_as_run_does() {
    let spec = "version: 1\ntest: {command: \"true\"}\nmutations:\n  - id: ign\n    control: c\n    file: gen/conf.py\n    find: 'x = 1'\n    replace: 'x = 2'\n";
    let fx = Fixture::git(&[
        (".gitignore", "gen/\n"),
        ("src/a.py", A_PY),
        ("unguard.yaml", spec),
    ]);
    fx.write("gen/conf.py", "x = 1\n");
    let (run_code, run_out, run_err) = fx.run(&["run", "--out", "out"]);
    assert_eq!(run_code, 1, "{}", ctx(run_code, &run_out, &run_err));
    assert!(
        run_err.contains("is not part of the copied tree"),
        "{run_err}"
    );
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 1, "{}", ctx(code, &out, &err));
    assert!(out.is_empty(), "{out}");
    assert_eq!(err, run_err, "check and run refuse with one diagnostic");
    assert!(
        err.starts_with(
            "error: unguard.yaml:4:9: mutation `ign`: gen/conf.py is not part of the copied tree"
        ),
        "{err}"
    );
    // `check` made no output dir and left no scratch copy.
    assert!(!fx.path().join("unguard.out").exists());
    assert!(fx.leftover_tmp().is_empty(), "{:?}", fx.leftover_tmp());
}

#[test]
fn a_file_under_dot_git_is_a_spec_error_at_its_file_key() {
    for (file, find) in [
        (".git/config", "[core]"),
        ("./.git/HEAD", "ref: "),
        ("sub/.git/config", "[core]"),
    ] {
        let spec = format!(
            "version: 1\ntest: {{command: \"true\"}}\nmutations:\n  - id: g\n    control: c\n    file: {file}\n    find: '{find}'\n    replace: 'b'\n"
        );
        let fx = git_fx(&spec);
        fx.write("sub/.git/config", "[core]\n");
        let err = refused(&fx, 6, 11);
        assert!(err.contains("inside `.git`"), "{file}: {err}");
        let (code, _, run_err) = fx.run(&["run", "--out", "out"]);
        assert_eq!(code, 1);
        assert_eq!(run_err, err, "{file}");
    }
}

// ----------------------------------------------- 6c. 20,000 mutations

#[test]
fn twenty_thousand_mutations_parse_and_list() {
    // 20,000 mutations with a `rule` and `expect` each: ~500,000 YAML nodes,
    // twice the parser's default budget.
    let fx = Fixture::new();
    let mut spec =
        String::from("version: 1\ntest: {command: \"true\", junit: \"{junit}\"}\nmutations:\n");
    let mut body = String::new();
    for i in 0..20_000 {
        body.push_str(&format!("def check_{i}(x):\n    return x > {i}\n"));
        spec.push_str(&format!(
            "  - id: c{i}\n    control: \"check {i}\"\n    rule: \"r/{i}\"\n    file: src/m.py\n    find: \"return x > {i}\\n\"\n    replace: \"return True\\n\"\n    expect: {{killed_by: [\"t::test_{i}\"]}}\n"
        ));
    }
    fx.write("src/m.py", &body);
    fx.write("unguard.yaml", &spec);
    let (code, out, err) = fx.run(&["list", "--only", "c0", "c19999"]);
    assert_eq!(code, 0, "{}", &err[..err.len().min(2000)]);
    assert_eq!(
        out,
        "c0\tsrc/m.py:2\tcheck 0\nc19999\tsrc/m.py:40000\tcheck 19999\n"
    );
}

#[test]
fn many_aliases_of_one_anchor_are_a_legitimate_spec() {
    // Many mutations sharing one anchored value are a legitimate spec (the
    // parser's aliases-per-anchor heuristic is off; alias replay keeps its caps).
    let mut spec = String::from("version: 1\ntest: {command: \"true\"}\nmutations:\n");
    let mut body = String::new();
    for i in 0..120 {
        body.push_str(&format!("def check_{i}(x):\n    return x > {i}\n"));
        let control = if i == 0 { "&c \"same control\"" } else { "*c" };
        spec.push_str(&format!(
            "  - id: c{i}\n    control: {control}\n    file: src/m.py\n    find: \"return x > {i}\\n\"\n    replace: \"return True\\n\"\n"
        ));
    }
    let fx = Fixture::new();
    fx.write_all(&[("src/m.py", &body), ("unguard.yaml", &spec)]);
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert!(out.contains("120 mutations apply cleanly"), "{out}");
}

// ------------------------------------------- issue 33: smaller edges

/// One mutation as a flow mapping on line 4, with `extra` (`, key: value`)
/// after its `replace`, and `head` (top-level keys) before `mutations:`.
fn flow_spec(head: &str, extra: &str) -> String {
    format!(
        "version: 1\ntest: {{command: \"true\"}}\n{head}mutations:\n  - {{id: a, control: c, file: src/a.py, find: \"x > 5\", replace: \"True\"{extra}}}\n"
    )
}

#[test]
fn a_bad_count_far_along_a_line_is_shown_where_the_header_says() {
    // The parser cuts a long line to a window and counted its `-->` column
    // in the window (4:66) while the header gave the file's (4:80).
    let fx = git_fx(&flow_spec("", ", count: -1"));
    let err = refused(&fx, 4, 80);
    assert!(err.contains("bad `count`"), "{err}");
    assert!(!err.contains(":4:66"), "{err}");
}

#[test]
fn a_timeout_too_large_says_so() {
    let fx = git_fx(
        "version: 1\ntest: {command: \"true\", timeout: 99999999999999h}\nmutations:\n  - {id: a, control: c, file: src/a.py, find: \"x > 5\", replace: \"True\"}\n",
    );
    let err = refused(&fx, 2, 34);
    assert!(
        err.contains("bad timeout `99999999999999h`: too large: a duration is at most 213503d"),
        "{err}"
    );
    assert!(!err.contains("expected a number with a unit"), "{err}");
    // The flag says the same.
    let (code, _, err) = fx.run(&["run", "--timeout", "99999999999999h"]);
    assert_eq!(code, 1);
    assert!(err.contains("too large"), "{err}");
}

#[test]
fn an_include_of_the_spec_itself_says_so() {
    let fx = git_fx(&flow_spec("include: [\"unguard.yaml\"]\n", ""));
    let err = refused(&fx, 3, 11);
    assert!(
        err.contains("include `unguard.yaml` matches this spec file itself"),
        "{err}"
    );
    assert!(!err.contains("unknown field `version`"), "{err}");
    // A glob that also matches other files includes those, not the spec.
    fx.write(
        "more.yaml",
        "mutations:\n  - {id: b, control: c, file: src/a.py, find: \"return 0\", replace: \"return 2\"}\n",
    );
    fx.write("unguard.yaml", &flow_spec("include: [\"*.yaml\"]\n", ""));
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert!(out.contains("2 mutations apply cleanly"), "{out}");
}

#[test]
fn a_bad_include_glob_counts_its_position_in_the_pattern_as_written() {
    // `[` is character 5 of `mut/[a.yaml`; joined to the absolute root, the
    // glob crate counted it far further along.
    let fx = git_fx(&flow_spec("include: [\"mut/[a.yaml\"]\n", ""));
    let err = refused(&fx, 3, 11);
    assert!(
        err.contains(
            "bad include pattern `mut/[a.yaml`: invalid range pattern at character 5 (`[`)"
        ),
        "{err}"
    );
    let root_len = fx.path().to_string_lossy().chars().count();
    assert!(
        !err.contains(&format!("position {}", root_len + 5)),
        "{err}"
    );
}
