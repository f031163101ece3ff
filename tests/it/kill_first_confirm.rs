//! Kill confirmation of a kill-first subset kill (issue 17): by its red
//! tests alone when they are green alone on the unmutated copy, else (or
//! when they do not go red again alone) by the whole subset once more.

use crate::common::*;

const PYTEST: &str = "python3 -m pytest -q -p no:cacheprovider --junitxml={junit}";

/// `test_b` catches the mutant only after `test_a` armed the module in
/// the same process: its red does not reproduce alone.
const M: &str = "STATE = {\"armed\": False}\n\n\ndef guard(x):\n    return x > 0\n";
const TESTS: &str = "import m\n\n\ndef test_a():\n    m.STATE[\"armed\"] = True\n    assert m.guard(1)\n\n\ndef test_b():\n    if m.STATE[\"armed\"]:\n        assert not m.guard(-1)\n\n\ndef test_c():\n    assert m.STATE is not None\n";

/// The fixture repo with `spec` as its unguard.yaml.
fn fixture(spec: &str) -> Fixture {
    Fixture::git(&[
        ("m.py", M),
        ("tests/__init__.py", ""),
        ("tests/test_m.py", TESTS),
        ("unguard.yaml", spec),
    ])
}

/// `test_b` alone was checked green on the unmutated copy, then ran alone
/// with the mutant and stayed green (no kill by it alone).
fn assert_test_b_checked_then_alone(fx: &Fixture, o: &serde_json::Value) {
    assert_test_b_checked_green(o);
    let alone = fx.read("out/guard@recheck-1.log");
    assert!(alone.contains("1 passed, 2 deselected"), "{alone}");
}

/// The red test alone (green alone on the unmutated copy) does not go red
/// again with the mutant: the whole subset runs once more and confirms
/// the kill, as a subset kill was confirmed before.
#[test]
fn a_red_test_that_is_green_alone_is_confirmed_by_its_whole_subset() {
    let spec = format!(
        "version: 1\ntest:\n  command: \"{PYTEST}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\nmutations:\n  - id: guard\n    control: \"the guard\"\n    file: m.py\n    find: \"return x > 0\"\n    replace: \"return True\"\n    expect:\n      killed_by: [\"tests/test_m.py::test_a\", \"tests/test_m.py::test_b\"]\n"
    );
    let fx = fixture(&spec);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let o = fx.outcomes("out");
    let m = &o["mutants"][0];
    assert_eq!(
        (m["outcome"].as_str(), m["red_tests"].clone()),
        (Some("killed"), serde_json::json!(["tests.test_m::test_b"])),
        "{m:#}\n{}",
        ctx(code, &out, &err)
    );
    assert_eq!(
        m["subset_runs"][0]["tests"].as_array().unwrap().len(),
        2,
        "{m:#}"
    );
    // test_b alone ran on the unmutated copy (green) and with the mutant
    // (green: no kill), then the whole subset confirmed.
    assert_test_b_checked_then_alone(&fx, &o);
    let whole = fx.read("out/guard@recheck-1-whole-subset.log");
    assert!(
        whole.contains("1 failed, 1 passed, 1 deselected"),
        "{whole}"
    );
}

/// The same kill under `--full` (the whole suite, no subset): the red test
/// alone, green alone on the unmutated copy, does not go red again alone,
/// so the whole suite runs once more and confirms the kill. `--full` and
/// kill-first now agree (this was `flaky` under `--full`).
#[test]
fn under_full_a_red_test_that_is_green_alone_is_confirmed_by_the_whole_suite() {
    let spec = format!(
        "version: 1\ntest:\n  command: \"{PYTEST}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\nmutations:\n  - id: guard\n    control: \"the guard\"\n    file: m.py\n    find: \"return x > 0\"\n    replace: \"return True\"\n"
    );
    let fx = fixture(&spec);
    let (code, out, err) = fx.run(&["run", "--full", "--out", "out", "-j", "1"]);
    let o = fx.outcomes("out");
    let m = &o["mutants"][0];
    assert_eq!(
        (m["outcome"].as_str(), m["full_suite"].as_bool()),
        (Some("killed"), Some(true)),
        "{m:#}\n{}",
        ctx(code, &out, &err)
    );
    // test_b alone was checked green on the unmutated copy, ran green alone
    // with the mutant, then the whole suite confirmed.
    assert_test_b_checked_then_alone(&fx, &o);
    let whole = fx.read("out/guard@recheck-1-whole-suite.log");
    assert!(whole.contains("1 failed, 2 passed"), "{whole}");
}

/// A kill confirmed by the whole suite (its red test alone stayed green)
/// whose canary then stays green ends `unreached`, and every file of its
/// runs goes with the verdict: the whole-suite re-check log too (issue 34
/// item 4; it outlived the verdict).
#[test]
fn a_whole_suite_recheck_log_goes_with_a_kill_the_canary_makes_unreached() {
    // With `m.py` emptied (the canary) every test passes, after a sleep
    // that keeps the canary running while the other worker takes the
    // mutant; otherwise these are the tests above.
    let tests = "import time\nimport m\n\n\ndef test_a():\n    if not hasattr(m, \"STATE\"):\n        time.sleep(2)\n        return\n    m.STATE[\"armed\"] = True\n    assert m.guard(1)\n\n\ndef test_b():\n    if getattr(m, \"STATE\", {}).get(\"armed\"):\n        assert not m.guard(-1)\n\n\ndef test_c():\n    assert True\n";
    let spec = format!(
        "version: 1\ntest:\n  command: \"{PYTEST}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\nmutations:\n  - id: guard\n    control: \"the guard\"\n    file: m.py\n    find: \"return x > 0\"\n    replace: \"return True\"\n  - id: other\n    control: \"a second mutant, so that two workers run\"\n    file: m.py\n    find: \"OTHER = 1\"\n    replace: \"OTHER = 2\"\n"
    );
    let fx = Fixture::git(&[
        ("m.py", &format!("{M}\n\nOTHER = 1\n")),
        ("tests/__init__.py", ""),
        ("tests/test_m.py", tests),
        ("unguard.yaml", &spec),
    ]);
    // Without the canary: a kill confirmed by the whole suite, its log there.
    let (code, out, err) = fx.run(&["run", "--full", "--no-canary", "--out", "out", "-j", "1"]);
    assert_eq!(
        fx.verdicts("out")["guard"],
        "killed",
        "{}",
        ctx(code, &out, &err)
    );
    assert!(fx
        .path()
        .join("out/guard@recheck-1-whole-suite.log")
        .is_file());

    let (code, out, err) = fx.run(&["run", "--full", "--out", "out", "-j", "2"]);
    let o = fx.outcomes("out");
    assert_eq!(
        o["mutants"][0]["outcome"],
        "unreached",
        "{o:#}\n{}",
        ctx(code, &out, &err)
    );
    // The mutant ran beside the canary as far as its re-check: its red
    // test was checked alone on the unmutated copy.
    assert_test_b_checked_green(&o);
    let left: Vec<String> = std::fs::read_dir(fx.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("guard"))
        .collect();
    assert!(
        left.is_empty(),
        "left behind: {left:?}\n{}",
        ctx(code, &out, &err)
    );
}

/// `test_b` alone was checked green on the unmutated copy (only a kill's
/// re-check makes that check).
fn assert_test_b_checked_green(o: &serde_json::Value) {
    let checks = o["subset_checks"].as_array().unwrap();
    assert!(
        checks.iter().any(
            |c| c["tests"] == serde_json::json!(["tests.test_m::test_b"]) && c["green"] == true
        ),
        "{checks:#?}"
    );
}
