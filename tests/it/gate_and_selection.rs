//! The merge gate (`gate:` in unguard.yaml and its flags) and mutant
//! selection for PRs and scale-out: `--only/--skip/--file`, `--in-diff BASE`,
//! `--shard k/n` and `unguard merge`, on a tiny real Python fixture.

use crate::common::*;

use serde_json::Value;

/// A mutant of `file` turning `find` into `return 0`, with a rule.
fn rule_mutation(id: &str, file: &str, find: &str) -> String {
    mutation(id, file, find, "return 0")
        .rule(&format!("002/{id}"))
        .yaml()
}

/// The six-function spec (every mutant with a rule), then `extra` as written.
fn spec(extra: &str) -> String {
    six_fn_spec_of(
        six_fn_mutations()
            .into_iter()
            .enumerate()
            .map(|(i, m)| m.rule(&format!("002/m-{}", ["a", "b", "c", "d", "e", "f"][i]))),
    )
    .tail(extra)
    .build()
}

fn fixture(extra: &str) -> Fixture {
    Fixture::git(&[
        ("app.py", SIX_FN_APP),
        ("check.py", SIX_FN_CHECK),
        ("unguard.yaml", &spec(extra)),
        (".gitignore", "out*/\nmerged/\n__pycache__/\n"),
    ])
}

fn ids(v: &Value) -> Vec<String> {
    v["mutants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect()
}

/// Replace every duration and timestamp by a constant.
fn normalize(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                if k == "duration_s" || k == "started_at" || k == "timeout_s" {
                    *val = Value::Null;
                } else {
                    normalize(val);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(normalize),
        _ => {}
    }
}

fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

// ------------------------------------------------------------------ sharding

#[test]
fn three_shards_merged_equal_one_unsharded_run() {
    let fx = fixture("");
    let (code, out, err) = fx.run(&["run", "-j", "1", "--out", "out-single"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));

    let mut shard_ids = Vec::new();
    for k in 1..=3 {
        let dir = format!("out-{k}");
        let (code, out, err) = fx.run(&[
            "run",
            "-j",
            "1",
            "--shard",
            &format!("{k}/3"),
            "--out",
            &dir,
        ]);
        // Shard 3 holds m-c and m-f (round-robin): only it fails the gate.
        assert_eq!(
            code,
            if k == 3 { 2 } else { 0 },
            "{}",
            ctx(code, &out, &err)
        );
        assert!(err.contains(&format!("shard {k}/3: 2 of 6")), "{err}");
        let v = fx.outcomes(&dir);
        assert_eq!(v["selection"]["shard"]["k"], k);
        shard_ids.push(ids(&v));
    }
    assert_eq!(
        shard_ids,
        vec![
            vec!["m-a".to_string(), "m-d".into()],
            vec!["m-b".to_string(), "m-e".into()],
            vec!["m-c".to_string(), "m-f".into()],
        ]
    );

    // Given in any order, the shards merge into the unsharded result.
    let (code, out, err) = fx.run(&["merge", "out-3", "out-1", "out-2", "--out", "merged"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    let mut single = fx.outcomes("out-single");
    let mut merged = fx.outcomes("merged");
    normalize(&mut single);
    normalize(&mut merged);
    assert_eq!(
        merged,
        single,
        "merged:\n{}\nsingle:\n{}",
        serde_json::to_string_pretty(&merged).unwrap(),
        serde_json::to_string_pretty(&single).unwrap()
    );
    // The same artifacts, and every diff byte-identical.
    let single_files = files_in(&fx.path().join("out-single"));
    assert_eq!(files_in(&fx.path().join("merged")), single_files);
    for f in single_files.iter().filter(|f| f.ends_with(".diff")) {
        assert_eq!(
            fx.read(&format!("merged/{f}")),
            fx.read(&format!("out-single/{f}")),
            "{f}"
        );
    }
    // The table the merge prints lists all six in spec order.
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("| m-")).collect();
    assert_eq!(rows.len(), 6, "{out}");
    assert!(
        rows[0].starts_with("| m-a") && rows[5].starts_with("| m-f"),
        "{out}"
    );
    assert!(fx.leftover_tmp().is_empty());
}

#[test]
fn merge_refuses_incomplete_or_foreign_shards() {
    let fx = fixture("");
    for k in 1..=2 {
        let (code, out, err) = fx.run(&[
            "run",
            "-j",
            "1",
            "--shard",
            &format!("{k}/2"),
            "--out",
            &format!("out-{k}"),
            "--only",
            "m-a",
            "m-b",
        ]);
        assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    }
    let (code, _, err) = fx.run(&["merge", "out-1", "--out", "merged"]);
    assert_eq!(code, 1);
    assert!(err.contains("missing shard(s) 2/2"), "{err}");

    let (code, _, err) = fx.run(&["merge", "out-1", "out-1", "--out", "merged"]);
    assert_eq!(code, 1);
    assert!(err.contains("shard 1/2 given twice"), "{err}");

    let (code, _, _) = fx.run(&["run", "-j", "1", "--only", "m-a", "--out", "out-full"]);
    assert_eq!(code, 0);
    let (code, _, err) = fx.run(&["merge", "out-full", "out-1", "--out", "merged"]);
    assert_eq!(code, 1);
    assert!(err.contains("out-full: not a shard"), "{err}");

    // A shard of a run with other filters is a different run.
    let (code, _, _) = fx.run(&[
        "run",
        "-j",
        "1",
        "--shard",
        "2/2",
        "--out",
        "out-other",
        "--only",
        "m-a",
        "m-c",
    ]);
    assert_eq!(code, 0);
    let (code, _, err) = fx.run(&["merge", "out-1", "out-other", "--out", "merged"]);
    assert_eq!(code, 1);
    assert!(err.contains("come from different runs"), "{err}");

    let (code, _, err) = fx.run(&["merge", "nowhere", "--out", "merged"]);
    assert_eq!(code, 1);
    assert!(err.contains("nowhere/outcomes.json"), "{err}");
}

#[test]
fn merge_refuses_shards_run_from_a_changed_spec() {
    let fx = fixture("");
    let shard = |k: usize, expect: i32| {
        let (code, out, err) = fx.run(&[
            "run",
            "-j",
            "1",
            "--no-canary",
            "--shard",
            &format!("{k}/3"),
            "--out",
            &format!("out-{k}"),
        ]);
        assert_eq!(code, expect, "shard {k}: {}", ctx(code, &out, &err));
        fx.outcomes(&format!("out-{k}"))["fingerprint"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (f1, f2) = (shard(1, 0), shard(2, 0));
    assert!(f1.starts_with("sha256:") && f1.len() == 71, "{f1}");
    assert_eq!(f1, f2);

    // One `replace` changes between shards 2 and 3 (m-f is in shard 3): same
    // spec path, root, filters and selected ids, different mutants.
    let spec = fx.read("unguard.yaml");
    let edited = spec.replace(
        "find: 'return 6'\n    replace: 'return 0'",
        "find: 'return 6'\n    replace: 'return 60'",
    );
    assert_ne!(edited, spec);
    fx.write("unguard.yaml", &edited);
    fx.git_cmd(&["add", "-A"]);
    fx.commit("m-f: another replacement");
    let f3 = shard(3, 2);
    assert_ne!(f3, f1);
    let (code, out, err) = fx.run(&["merge", "out-1", "out-2", "out-3", "--out", "merged"]);
    assert_eq!(code, 1, "{}", ctx(code, &out, &err));
    assert!(
        err.contains("out-1 and out-3 come from different runs")
            && err.contains(
                "the spec's content, its resolved test commands or unguard's version differ"
            ),
        "{err}"
    );
    assert!(!fx.path().join("merged/outcomes.json").exists());

    // The same spec again: the shards merge, and the merged results carry
    // the run's fingerprint.
    fx.write("unguard.yaml", &spec);
    fx.git_cmd(&["add", "-A"]);
    fx.commit("m-f: back");
    assert_eq!(shard(3, 2), f1);
    let (code, out, err) = fx.run(&["merge", "out-1", "out-2", "out-3", "--out", "merged"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_eq!(fx.outcomes("merged")["fingerprint"], serde_json::json!(f1));
}

#[test]
fn shard_flag_is_one_based_and_validated() {
    let fx = fixture("");
    for bad in ["0/3", "4/3", "1/0", "3", "a/b"] {
        let (code, _, err) = fx.run(&["run", "--shard", bad]);
        assert_eq!(code, 1, "--shard {bad}");
        assert!(err.contains("shards are 1-based"), "--shard {bad}: {err}");
    }
    let (_, help, _) = fx.run(&["run", "--help"]);
    assert!(help.contains("1-based"), "{help}");
}

#[test]
fn a_shard_with_no_mutant_writes_empty_results_and_passes() {
    let fx = fixture("");
    let (code, out, err) = fx.run(&[
        "run",
        "--only",
        "m-a",
        "--shard",
        "2/2",
        "--out",
        "out-empty",
    ]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert!(err.contains("no mutation selected"), "{err}");
    let v = fx.outcomes("out-empty");
    assert_eq!(v["mutants"].as_array().unwrap().len(), 0);
    assert_eq!(v["selection"]["planned"], serde_json::json!(["m-a"]));
    assert!(v["baselines"].as_array().unwrap().is_empty());
}

// ------------------------------------------------------------------ filters

#[test]
fn skip_only_and_file_select_mutants() {
    let fx = fixture(&rule_mutation("other-x", "lib/other.py", "return 7"));
    fx.write("lib/other.py", "def x():\n    return 7\n");
    fx.git_cmd(&["add", "-A"]);
    fx.commit("other");

    let (code, out, err) = fx.run(&["run", "--skip", "m-f", "other-x", "--out", "out"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(ids(&fx.outcomes("out")).len(), 5);

    let (code, out, err) = fx.run(&["run", "--file", "lib/*.py", "--out", "out"]);
    // other-x survives: nothing checks lib/other.py (and the canary says so).
    assert_eq!(code, 5, "{}", ctx(code, &out, &err));
    assert_eq!(ids(&fx.outcomes("out")), vec!["other-x"]);
    assert_eq!(
        fx.outcomes("out")["selection"]["filters"],
        serde_json::json!(["--file lib/*.py"])
    );

    // `*` does not cross directories.
    let (code, _, err) = fx.run(&[
        "run", "--file", "*.py", "--only", "m-a", "other-x", "--out", "out",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(ids(&fx.outcomes("out")), vec!["m-a"]);
    // `**` crosses them, `{a,b}` is either (the globs of `audit --file`).
    let (code, out, err) = fx.run(&["list", "--file", "**/{other,nope}.py"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("other-x") && !out.contains("m-a"), "{out}");

    let (code, _, err) = fx.run(&["run", "--skip", "nope"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("--skip nope: no mutation with that id"),
        "{err}"
    );
    let (code, _, err) = fx.run(&["run", "--file", "[", "--out", "out"]);
    assert_eq!(code, 1);
    assert!(err.contains("--file [: bad glob"), "{err}");
}

#[test]
fn a_file_glob_that_matches_no_mutated_file_is_an_error_even_in_a_shard() {
    let fx = fixture("");
    // A typo selects nothing: an error naming the pattern, not "0 mutants;
    // gate: passed". Checked before sharding, so every shard says it.
    for extra in [&[][..], &["--shard", "2/3"][..]] {
        let mut args = vec!["run", "--file", "nomatch/*", "--out", "out"];
        args.extend_from_slice(extra);
        let (code, out, err) = fx.run(&args);
        assert_eq!(code, 1, "{}", ctx(code, &out, &err));
        assert!(
            err.contains("--file nomatch/*: matches the file of no mutation")
                && err.contains("mutated files: app.py"),
            "{err}"
        );
        assert!(!fx.path().join("out/outcomes.json").exists());
    }
    // One good pattern does not hide a bad one.
    let (code, _, err) = fx.run(&["list", "--file", "app.py", "--file", "ap.py"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--file ap.py:"), "{err}");
    // A pattern that matches, in a shard that gets nothing, still passes.
    let (code, out, err) = fx.run(&[
        "run", "--file", "app.py", "--only", "m-a", "--shard", "2/2", "--out", "out",
    ]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert!(err.contains("no mutation selected"), "{err}");
}

#[test]
fn in_diff_runs_only_mutants_on_changed_lines() {
    let fx = fixture(&rule_mutation("new-x", "lib/new.py", "return 7"));
    // new-x's file is untracked: all of it counts as changed.
    std::fs::remove_file(fx.path().join("lib/new.py")).ok();
    // A committed change (line of c) and an uncommitted one (line of e).
    fx.write(
        "app.py",
        &SIX_FN_APP.replace("    return 3", "    return 3  # reviewed"),
    );
    fx.git_cmd(&["add", "-A"]);
    fx.commit("touch c");
    fx.write(
        "app.py",
        &fx.read("app.py")
            .replace("    return 5", "    return 5  # wip"),
    );
    fx.write("lib/new.py", "def x():\n    return 7\n");

    let (code, out, err) = fx.run(&["run", "--in-diff", "HEAD~1", "--out", "out", "--no-canary"]);
    // new-x survives (nothing checks lib/new.py).
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_eq!(ids(&fx.outcomes("out")), vec!["m-c", "m-e", "new-x"]);

    let (code, out, err) = fx.run(&["run", "--in-diff", "HEAD", "--out", "out", "--no-canary"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_eq!(ids(&fx.outcomes("out")), vec!["m-e", "new-x"]);
    assert_eq!(
        fx.outcomes("out")["selection"]["filters"],
        serde_json::json!(["--in-diff HEAD"])
    );

    // Nothing changed on a mutated line: nothing runs, and that passes.
    fx.git_cmd(&["add", "-A"]);
    fx.commit("wip");
    fx.write("check.py", &format!("{SIX_FN_CHECK}# unrelated\n"));
    let (code, out, err) = fx.run(&["run", "--in-diff", "HEAD", "--out", "out"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert!(ids(&fx.outcomes("out")).is_empty());
    assert!(
        err.contains("no mutation selected by --in-diff HEAD"),
        "{err}"
    );

    let (code, _, err) = fx.run(&["run", "--in-diff", "no-such-rev", "--out", "out"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("--in-diff no-such-rev: not a revision"),
        "{err}"
    );
}

#[test]
fn in_diff_starts_at_the_merge_base_like_git_diff_three_dots() {
    let fx = fixture("");
    fx.git_cmd(&["checkout", "-q", "-b", "feature"]);
    fx.write(
        "app.py",
        &SIX_FN_APP.replace("    return 3", "    return 3  # feature"),
    );
    fx.git_cmd(&["add", "-A"]);
    fx.commit("feature work on c");
    // main moves on after the branch point: its change to b is not the PR's.
    fx.git_cmd(&["checkout", "-q", "main"]);
    fx.write(
        "app.py",
        &SIX_FN_APP.replace("    return 2", "    return 2  # main"),
    );
    fx.git_cmd(&["add", "-A"]);
    fx.commit("main work on b");
    fx.git_cmd(&["checkout", "-q", "feature"]);
    let (code, out, err) = fx.run(&["list", "--in-diff", "main"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    let listed: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(listed, vec!["m-c"], "{out}");
}

#[test]
fn in_diff_keeps_a_broken_mutation_of_a_changed_file_only() {
    let fx = fixture(&rule_mutation("stale-x", "app.py", "return 9"));
    fx.write("check.py", &format!("{SIX_FN_CHECK}# unrelated\n"));
    let (code, out, _) = fx.run(&["list", "--in-diff", "HEAD"]);
    assert_eq!(code, 0);
    assert_eq!(out, "", "app.py did not change: nothing selected");
    fx.write(
        "app.py",
        &SIX_FN_APP.replace("    return 3", "    return 3  # x"),
    );
    let (code, out, _) = fx.run(&["list", "--in-diff", "HEAD"]);
    assert_eq!(code, 0);
    let listed: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(listed, vec!["m-c", "stale-x"], "{out}");
    assert!(out.contains("[no-op]"), "{out}");
}

#[test]
fn in_diff_counts_a_deletion_next_to_a_site() {
    let fx = fixture("");
    // Delete the comment line right above `return 4` (line of d).
    fx.write(
        "app.py",
        &SIX_FN_APP.replace("def d():\n", "def d():\n    # note\n"),
    );
    fx.git_cmd(&["add", "-A"]);
    fx.commit("note");
    fx.write("app.py", SIX_FN_APP);
    let (code, out, err) = fx.run(&["run", "--in-diff", "HEAD", "--out", "out", "--no-canary"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(ids(&fx.outcomes("out")), vec!["m-d"]);
}

#[test]
fn in_diff_outside_git_is_a_clear_error() {
    let fx = Fixture::new();
    fx.write_all(&[
        ("app.py", SIX_FN_APP),
        ("check.py", SIX_FN_CHECK),
        ("unguard.yaml", &spec("")),
    ]);
    let (code, _, err) = fx.run(&["run", "--in-diff", "main"]);
    assert_eq!(code, 1);
    assert!(err.contains("--in-diff needs a git repository"), "{err}");
}

// ------------------------------------------------------------------ gate

#[test]
fn max_survived_and_min_score_from_the_spec_and_flags() {
    let fx = fixture("gate:\n  max_survived: 1\n");
    let (code, out, err) = fx.run(&["run", "--out", "out"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert!(out.contains("gate: passed"), "{out}");

    // 5/6 = 83.3% < 90.
    let (code, out, err) = fx.run(&["run", "--out", "out", "--min-score", "90"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert!(out.contains("score 83.3% is below min_score 90%"), "{out}");
    let v = fx.outcomes("out");
    assert_eq!(v["gate_config"]["min_score"], 90.0);
    assert_eq!(v["gate"]["passed"], false);

    let (code, out, _) = fx.run(&["run", "--out", "out", "--max-survived", "0"]);
    assert_eq!(code, 2);
    assert!(
        out.contains("1 undetected mutant(s) where max_survived allows 0: 1 survived"),
        "{out}"
    );

    let fx = fixture("gate:\n  min_score: 80\n  max_survived: 1\n");
    let (code, out, err) = fx.run(&["run", "--out", "out"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    let (code, _, _) = fx.run(&["run", "--out", "out", "--min-score", "85"]);
    assert_eq!(code, 2);
}

#[test]
fn allowed_mutants_leave_score_and_gate_with_their_reason() {
    let fx = fixture(
        "gate:\n  allow:\n    - id: m-f\n      reason: \"f is dead code, removed in #12\"\n",
    );
    let (code, out, err) = fx.run(&["run", "--out", "out"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    let v = fx.outcomes("out");
    assert_eq!(v["summary"]["allowed"], 1);
    assert_eq!(v["summary"]["survived"], 0);
    assert_eq!(v["summary"]["score"], 100.0);
    assert_eq!(v["summary"]["scored"], 5);
    let f = &v["mutants"][5];
    assert_eq!(f["outcome"], "survived");
    assert_eq!(f["allowed"], "f is dead code, removed in #12");
    assert!(out.contains("1 allowed"), "{out}");

    // The same from the command line.
    let fx = fixture("");
    let (code, out, err) = fx.run(&["run", "--out", "out", "--allow", "m-f=dead code"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    let (code, _, err) = fx.run(&["run", "--allow", "m-zz=x"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("--allow m-zz: no mutation with that id"),
        "{err}"
    );
    let (code, _, err) = fx.run(&["run", "--allow", "m-f"]);
    assert_eq!(code, 1);
    assert!(err.contains("expected ID=REASON"), "{err}");

    // An allow on a killed mutant is stale: said, but not a failure.
    let (code, out, err) = fx.run(&[
        "run",
        "--out",
        "out",
        "--allow",
        "m-a=flaky",
        "--allow",
        "m-f=dead",
    ]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert!(
        out.contains("note: `gate.allow` lists m-a, but it was killed: remove the allow entry"),
        "{out}"
    );
    assert_eq!(fx.outcomes("out")["summary"]["killed"], 5);
}

#[test]
fn gate_block_errors_name_file_line_and_column() {
    let cases = [
        (
            "gate:\n  allow:\n    - id: m-f\n",
            "unguard.yaml:45:11",
            "allow entry for `m-f` has no reason",
        ),
        (
            "gate:\n  allow:\n    - id: m-zz\n      reason: x\n",
            "unguard.yaml:45:11",
            "allow names `m-zz`, but no mutation has that id",
        ),
        (
            "gate:\n  allow:\n    - {id: m-f, reason: a}\n    - {id: m-f, reason: b}\n",
            "unguard.yaml:46:12",
            "`m-f` is allowed twice (first on line 45)",
        ),
        (
            "gate:\n  min_score: 120\n",
            "unguard.yaml:44:14",
            "min_score 120 is not a percentage",
        ),
        (
            "gate:\n  timeout_is: maybe\n",
            "unguard.yaml:44:15",
            "unknown timeout_is `maybe`",
        ),
        (
            "thresholds: {high: 50, low: 70}\n",
            "unguard.yaml:43:13",
            "not 0 ≤ low ≤ high ≤ 100",
        ),
        ("gate:\n  max_score: 1\n", "unguard.yaml:44:3", "max_score"),
    ];
    for (extra, pos, msg) in cases {
        let fx = fixture(extra);
        let (code, out, err) = fx.run(&["check"]);
        assert_eq!(code, 1, "{extra}: {}", ctx(code, &out, &err));
        assert!(err.contains(pos) && err.contains(msg), "{extra}:\n{err}");
        assert!(err.contains("= fix:"), "{err}");
    }
}

#[test]
fn timeout_is_from_the_gate_block_and_thresholds_reach_the_results() {
    let fx = fixture("gate:\n  timeout_is: error\nthresholds: {high: 90, low: 50}\n");
    let mut s = fx.read("unguard.yaml");
    s = s.replace(
        "    find: 'return 5'\n    replace: 'return 0'\n",
        // The mutant's own timeout: the baseline keeps its generous cap (a
        // 2 s `--timeout` would apply to it too, and a loaded machine can
        // take that long to start Python).
        "    find: 'return 5'\n    replace: \"__import__('time').sleep(30)\"\n    timeout: 2s\n",
    );
    fx.write("unguard.yaml", &s);
    let (code, out, err) = fx.run(&["run", "--out", "out", "--only", "m-e"]);
    assert_eq!(code, 3, "{}", ctx(code, &out, &err));
    let v = fx.outcomes("out");
    assert_eq!(v["timeout_policy"], "error");
    assert_eq!(
        v["thresholds"],
        serde_json::json!({"high": 90.0, "low": 50.0})
    );
    // The flag wins over the spec.
    let (code, _, _) = fx.run(&[
        "run",
        "--out",
        "out",
        "--only",
        "m-e",
        "--timeout-is",
        "killed",
    ]);
    assert_eq!(code, 0);
}

// ------------------------------------------------------------------ outputs

#[test]
fn the_report_is_appended_to_the_github_step_summary() {
    let fx = fixture("");
    let summary = fx.path().join("out-summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let out = fx
        .unguard(&["run", "--out", "out", "--markdown", "out-comment.md"])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.starts_with("earlier step\n<!-- unguard -->"), "{text}");
    let comment = fx.read("out-comment.md");
    assert_eq!(text, format!("earlier step\n{comment}"));
    assert_eq!(comment, fx.read("out/report.md"));
    assert!(fx.path().join("out/report.html").is_file());
}

#[test]
fn a_closed_stdout_keeps_the_gates_exit_code() {
    // `unguard run . | true`: the reader is gone before unguard prints the
    // table; the run still ends with the gate's exit code, its reports written.
    let fx = fixture("");
    let mut child = fx
        .unguard(&["run", "--out", "out"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(fx.path().join("out/outcomes.json").is_file());
}

#[test]
fn report_rerenders_a_finished_run_without_running_tests() {
    let fx = fixture("");
    let (code, _, _) = fx.run(&["run", "--out", "out"]);
    assert_eq!(code, 2);
    // Break the suite: a re-render must not run it.
    fx.write("check.py", "import sys; sys.exit(3)\n");
    let (code, md, err) = fx.run(&["report", "out"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(md, fx.read("out/report.md"));
    let (code, json, _) = fx.run(&["report", "out", "--format", "json"]);
    assert_eq!(code, 0);
    let a: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(a, fx.outcomes("out"));
}
