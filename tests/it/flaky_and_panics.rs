//! Flaky suites (`--baseline-runs`, `--recheck-survivors` → `flaky`) and
//! panics inside unguard (one mutant's internal error, never a crashed run).

use crate::common::*;

fn spec(mutations: &[(&str, &str, &str)]) -> String {
    SpecBuilder::new("python3 run.py")
        .preset("generic")
        .timeout("60s")
        .mutations(
            mutations
                .iter()
                .map(|(id, f, r)| mutation(id, "m.py", f, r)),
        )
        .build()
}

/// A suite that counts its runs in a file outside the tree (the copy is
/// fresh, the counter is not) and goes red on the runs listed in m.RED_ON,
/// or whenever m.VALUE != 1.
fn counting_run_py(counter: &std::path::Path) -> String {
    format!(
        r#"import sys
import m
path = {counter:?}
try:
    n = int(open(path).read())
except FileNotFoundError:
    n = 0
n += 1
open(path, "w").write(str(n))
print("run", n)
if n in m.RED_ON:
    print("flaked")
    sys.exit(1)
sys.exit(0 if m.VALUE == 1 else 1)
"#
    )
}

#[test]
fn a_baseline_that_goes_red_on_a_later_run_is_reported_as_flaky() {
    let counter = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(counter.path(), "0").unwrap();
    let fx = Fixture::git(&[
        ("m.py", "RED_ON = [2]\nVALUE = 1\n"),
        ("run.py", &counting_run_py(counter.path())),
        ("unguard.yaml", &spec(&[("v", "VALUE = 1", "VALUE = 2")])),
    ]);
    // One baseline run cannot see it.
    let (code, out, err) = fx.run(&["run", "--out", "out", "--no-canary"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));

    std::fs::write(counter.path(), "0").unwrap();
    let (code, out, err) = fx.run(&["run", "--out", "out", "--no-canary", "--baseline-runs", "3"]);
    assert_eq!(code, 4, "{}", ctx(code, &out, &err));
    assert!(
        err.contains("flaky baseline: run 2 of 3 differs from run 1, which was green"),
        "{err}"
    );
    assert!(err.contains("@baseline.run2.log"), "{err}");
    assert!(fx.read("out/@baseline.run2.log").contains("flaked"));
    assert!(fx.leftover_tmp().is_empty());

    // Three green runs agree.
    let fx = Fixture::git(&[
        ("m.py", "RED_ON = []\nVALUE = 1\n"),
        ("run.py", &counting_run_py(counter.path())),
        ("unguard.yaml", &spec(&[("v", "VALUE = 1", "VALUE = 2")])),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "--no-canary", "--baseline-runs", "3"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert!(err.contains("baseline: 3 runs agree"), "{err}");
}

#[test]
fn a_survivor_that_goes_red_on_a_recheck_is_flaky_never_killed() {
    let counter = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(counter.path(), "0").unwrap();
    // Runs: 1 baseline, 2 the mutant (green: survived), 3 its first
    // re-check (red: the suite flaked).
    let fx = Fixture::git(&[
        ("m.py", "RED_ON = [3]\nVALUE = 1\nOTHER = 1\n"),
        ("run.py", &counting_run_py(counter.path())),
        (
            "unguard.yaml",
            &spec(&[("other", "OTHER = 1", "OTHER = 2")]),
        ),
    ]);
    let (code, out, err) = fx.run(&[
        "run",
        "--out",
        "out",
        "--no-canary",
        "--recheck-survivors",
        "2",
    ]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    let v = fx.verdicts("out");
    assert_eq!(v["other"], "flaky");
    let o = fx.outcomes("out");
    assert_eq!(o["summary"]["flaky"], 1);
    assert_eq!(o["summary"]["killed"], 0);
    assert_eq!(o["summary"]["score"], 0.0);
    assert_eq!(reason(&o, "other"), "survivor-not-reproduced");
    // The detail names the re-check and how it went.
    let detail = o["mutants"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("survived, then re-check 1 of 2 went killed"),
        "{detail}"
    );
    assert!(fx.read("out/other@recheck-1.log").contains("flaked"));
    assert!(!fx.path().join("out/other@recheck-2.log").exists());
    assert!(
        out.contains("1 flaky (survived, then red on a re-check)"),
        "{out}"
    );

    // A steady survivor is re-checked N times and stays survived.
    std::fs::write(counter.path(), "0").unwrap();
    fx.write("m.py", "RED_ON = []\nVALUE = 1\nOTHER = 1\n");
    fx.git_cmd(&["add", "-A"]);
    fx.commit("steady");
    let (code, out, err) = fx.run(&[
        "run",
        "--out",
        "out",
        "--no-canary",
        "--recheck-survivors",
        "2",
    ]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_eq!(fx.verdicts("out")["other"], "survived");
    assert!(fx.path().join("out/other@recheck-2.log").exists());
    assert_eq!(std::fs::read_to_string(counter.path()).unwrap(), "4");
}

#[test]
fn a_panic_costs_one_mutant_and_leaves_no_process_and_no_trace() {
    let mk = marker("panic");
    // The suite leaves a background process in its group; the panic hits
    // after the suite finished and before unguard's cleanup of that group.
    let run_py = format!(
        r#"import subprocess, sys
import m
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "{mk}"])
sys.exit(0 if m.VALUE == 1 and m.OTHER == 1 else 1)
"#
    );
    let fx = Fixture::git(&[
        ("m.py", "VALUE = 1\nOTHER = 1\n"),
        ("run.py", &run_py),
        (
            "unguard.yaml",
            &spec(&[
                ("boom", "VALUE = 1", "VALUE = 2"),
                ("after", "OTHER = 1", "OTHER = 2"),
            ]),
        ),
    ]);
    let before = tree_state(fx.path(), &["out"]);
    let out = fx
        .unguard(&["run", "--out", "out", "-j", "1"])
        .env("UNGUARD_TEST_PANIC_IN", "boom")
        .output()
        .unwrap();
    let (code, so, se) = (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(code, 1, "{}", ctx(code, &so, &se));
    let v = fx.verdicts("out");
    assert_eq!(v["boom"], "internal-error");
    assert_eq!(fx.reasons("out")["boom"], "internal-error");
    // The worker went on, on a fresh copy: the next mutant has its verdict.
    assert_eq!(v["after"], "killed");
    assert!(
        so.contains("1 mutant(s) hit an internal error of unguard"),
        "{so}"
    );
    assert_no_processes(&mk, "after a panic during a mutant");
    assert_eq!(tree_state(fx.path(), &["out"]), before, "user tree changed");
    assert!(fx.leftover_tmp().is_empty(), "{:?}", fx.leftover_tmp());
}
