//! Verdicts that cannot be faked: a suite that goes red for a reason other
//! than the removed control is never "killed".

use crate::common::*;

/// A suite that crashes with `SIG` when m.CRASH is true, else passes.
const CRASHING_RUN_PY: &str = r#"import os, signal, sys
import m
if m.CRASH:
    print("about to crash", flush=True)
    os.kill(os.getpid(), getattr(signal, m.SIG))
sys.exit(0)
"#;

fn crash_spec(command: &str) -> String {
    SpecBuilder::command_yaml(command)
        .preset("generic")
        .timeout("60s")
        .mutation(
            mutation("crash", "m.py", "CRASH = False", "CRASH = True")
                .control("the crash guard")
                .line("canary: false"),
        )
        .build()
}

#[test]
fn a_crash_is_wrong_reason_as_a_shell_string_and_as_argv() {
    for sig in ["SIGKILL", "SIGSEGV"] {
        // `cd . &&` keeps the shell as the suite's parent, so it reports the
        // death as 128+N (137, 139); the argv form dies of the signal itself.
        for command in ["\"cd . && python3 run.py\"", "[python3, run.py]"] {
            let fx = Fixture::git(&[
                ("m.py", &format!("CRASH = False\nSIG = {sig:?}\n")),
                ("run.py", CRASHING_RUN_PY),
                ("unguard.yaml", &crash_spec(command)),
            ]);
            let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
            let what = format!("{sig} under {command}");
            assert_eq!(
                fx.verdicts("out")["crash"],
                "wrong-reason",
                "{what}: {}",
                ctx(code, &out, &err)
            );
            let o = fx.outcomes("out");
            assert_eq!(reason(&o, "crash"), "crash", "{what}");
            // The detail names the signal.
            let detail = o["mutants"][0]["detail"].as_str().unwrap();
            let n = if sig == "SIGKILL" { 9 } else { 11 };
            assert!(detail.contains(&format!("signal {n}")), "{what}: {detail}");
            assert_eq!(code, 2, "{what}: {}", ctx(code, &out, &err));
        }
    }
}

/// A suite with one timing test that fails on every other run (a counter
/// in a file outside the tree): a 50 % flaky test, deterministic here.
fn alternating_run_py(counter: &std::path::Path) -> String {
    format!(
        r#"import sys
import m
path = {counter:?}
n = int(open(path).read()) + 1
open(path, "w").write(str(n))
assert m.LIMIT == 10
_ = m.UNUSED
if n % 2 == 1 and n > 1:
    print("timing test: took too long under load", flush=True)
    sys.exit(1)
sys.exit(0)
"#
    )
}

#[test]
fn a_kill_that_does_not_reproduce_is_flaky_at_default_flags() {
    let counter = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(counter.path(), "0").unwrap();
    // An equivalent mutant (UNUSED is read by nothing that matters): only
    // the flaky timing test can turn the suite red. Runs: 1 baseline
    // (green), 2 the canary (red: m.py emptied), 3 the mutant (red: the
    // timing test flaked), 4 its confirmation (green).
    let fx = Fixture::git(&[
        ("m.py", "LIMIT = 10\nUNUSED = 1\n"),
        ("run.py", &alternating_run_py(counter.path())),
        (
            "unguard.yaml",
            "version: 1\ntest:\n  command: python3 run.py\n  preset: generic\n  timeout: 60s\nmutations:\n  - id: equivalent\n    control: \"nothing\"\n    file: m.py\n    find: 'UNUSED = 1'\n    replace: 'UNUSED = 2'\n",
        ),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(
        fx.verdicts("out")["equivalent"],
        "flaky",
        "{}",
        ctx(code, &out, &err)
    );
    let o = fx.outcomes("out");
    assert_eq!(reason(&o, "equivalent"), "kill-not-reproduced");
    let detail = o["mutants"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("then re-check 1 of 1 went survived"),
        "the detail names the re-check: {detail}"
    );
    assert_eq!(o["summary"]["killed"], 0);
    assert_eq!(
        code,
        2,
        "a flaky kill is undetected: {}",
        ctx(code, &out, &err)
    );
    assert!(fx
        .read("out/equivalent@recheck-1.log")
        .contains("exit code 0"));

    // A real kill reproduces and stays killed; `--recheck-kills 0` skips the re-run.
    std::fs::write(counter.path(), "0").unwrap();
    fx.write(
        "unguard.yaml",
        &fx.read("unguard.yaml")
            .replace("'UNUSED = 1'", "'LIMIT = 10'")
            .replace("'UNUSED = 2'", "'LIMIT = 11'"),
    );
    fx.git_cmd(&["add", "-A"]);
    fx.commit("a real control");
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1", "--no-canary"]);
    assert_eq!(
        fx.verdicts("out")["equivalent"],
        "killed",
        "{}",
        ctx(code, &out, &err)
    );
    assert!(fx.path().join("out/equivalent@recheck-1.log").exists());
    let (code, out, err) = fx.run(&[
        "run",
        "--out",
        "out",
        "-j",
        "1",
        "--no-canary",
        "--recheck-kills",
        "0",
    ]);
    assert_eq!(
        fx.verdicts("out")["equivalent"],
        "killed",
        "{}",
        ctx(code, &out, &err)
    );
    assert!(!fx.path().join("out/equivalent@recheck-1.log").exists());
}

#[test]
fn expected_killers_that_stay_green_under_the_canary_make_the_mutant_unreached() {
    // The behaviour test imports the ORIGINAL checkout (as an editable
    // install does); only the license test reads the copy. Emptying
    // app/hosts.py turns the license test red, so the canary looks reached,
    // but the behaviour test, the mutant's expected killer, never sees the
    // copy: a green mutant run there proves nothing.
    let fx = Fixture::new();
    let original = fx.path().display().to_string();
    fx.write_all(&[
        ("app/__init__.py", ""),
        (
            "app/hosts.py",
            "# SPDX-License-Identifier: MIT\nALLOWED = {\"127.0.0.1\"}\n\ndef allowed(host):\n    return host in ALLOWED\n",
        ),
        (
            "tests/test_behaviour.py",
            &format!(
                "import sys\nsys.path.insert(0, {original:?})\nfrom app.hosts import allowed\n\ndef test_refuses_foreign_host():\n    assert not allowed(\"evil.example\")\n"
            ),
        ),
        (
            "tests/test_license.py",
            "def test_sources_carry_a_license():\n    assert open(\"app/hosts.py\").read().startswith(\"# SPDX\")\n",
        ),
        (
            "unguard.yaml",
            "version: 1\ntest:\n  command: python3 -m pytest -q -p no:cacheprovider --junitxml={junit}\n  junit: \"{junit}\"\n  timeout: 60s\nmutations:\n  - id: host-check\n    control: \"foreign hosts are refused\"\n    file: app/hosts.py\n    find: 'return host in ALLOWED'\n    replace: 'return True'\n    expect:\n      killed_by: [tests/test_behaviour.py::test_refuses_foreign_host]\n",
        ),
    ]);
    fx.git_cmd(&["init", "-q"]);
    fx.git_cmd(&["add", "-A"]);
    fx.commit("partial reach");
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(
        fx.verdicts("out")["host-check"],
        "unreached",
        "{}",
        ctx(code, &out, &err)
    );
    let o = fx.outcomes("out");
    assert_eq!(reason(&o, "host-check"), "killers-not-reached");
    let detail = o["mutants"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("the expected killers (tests/test_behaviour.py::test_refuses_foreign_host) stayed green under it"),
        "the detail names the killers: {detail}"
    );
    assert_eq!(o["canaries"][0]["reached"], true);
    assert_eq!(
        o["canaries"][0]["red_tests"][0],
        "tests.test_license::test_sources_carry_a_license"
    );
    assert_eq!(
        code,
        5,
        "unreached is a setup error: {}",
        ctx(code, &out, &err)
    );
}

#[test]
fn a_pytest_kill_is_confirmed_by_rerunning_only_its_red_tests() {
    let counter = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(counter.path(), "0").unwrap();
    let fx = Fixture::git(&[
        ("app.py", "def allowed(host):\n    return host == \"127.0.0.1\"\n"),
        (
            "test_app.py",
            &format!(
                r#"import app

def test_foreign_host_refused():
    assert not app.allowed("evil.example")

def test_timing():
    path = {counter:?}
    n = int(open(path).read()) + 1
    open(path, "w").write(str(n))
    assert n != 3, "took too long under load"
"#,
                counter = counter.path().display().to_string()
            ),
        ),
        (
            "unguard.yaml",
            "version: 1\ntest:\n  command: python3 -m pytest -q -p no:cacheprovider --junitxml={junit}\n  junit: \"{junit}\"\n  timeout: 60s\nmutations:\n  - id: host-check\n    control: \"foreign hosts are refused\"\n    file: app.py\n    find: 'return host == \"127.0.0.1\"'\n    replace: 'return True'\n    canary: false\n  - id: equivalent\n    control: \"nothing\"\n    file: app.py\n    find: 'def allowed(host):'\n    replace: 'def allowed(host, _unused=None):'\n    canary: false\n",
        ),
    ]);
    // Runs of test_timing: 1 baseline, 2 host-check (its kill is confirmed
    // by test_foreign_host_refused alone: test_timing does not run again),
    // 3 equivalent (red: the timing test flaked), 4 test_timing alone on
    // the unmutated copy (the check that it is green alone), 5 its
    // confirmation alone (green), 6 the whole suite once more (green).
    // Without the coverage run (a run of its own of test_timing; and with
    // no canary the map would decide nothing anyway), and cold: the warm
    // check runs the baseline twice more (tests/it/warm_runs.rs).
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1", "--no-coverage", "--cold"]);
    let v = fx.verdicts("out");
    assert_eq!(v["host-check"], "killed", "{}", ctx(code, &out, &err));
    assert_eq!(v["equivalent"], "flaky", "{}", ctx(code, &out, &err));
    let confirm = fx.read("out/host-check@recheck-1.log");
    assert!(confirm.contains("1 failed, 1 deselected"), "{confirm}");
    let recheck = fx.read("out/equivalent@recheck-1.log");
    assert!(recheck.contains("1 passed, 1 deselected"), "{recheck}");
    let whole = fx.read("out/equivalent@recheck-1-whole-suite.log");
    assert!(whole.contains("2 passed"), "{whole}");
    assert_eq!(std::fs::read_to_string(counter.path()).unwrap(), "6");
}
