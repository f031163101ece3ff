//! A FIFO where unguard reads the JUnit report (the suite made it): unguard
//! must not block opening it (at -j 1 that hung the whole run, deaf to
//! Ctrl-C and SIGTERM); the report counts as unreadable and the verdict
//! follows the exit code.

use crate::common::*;

use std::time::Duration;

/// Writes a JUnit report with one test, red when `m.txt` says BAD (or is
/// empty: the canary); when it
/// says FIFO, puts a FIFO where the report goes instead.
const SUITE: &str = r#"import os, sys
src = open("m.txt").read()
red = "BAD" in src or not src.strip()
if os.path.lexists("report.xml"):
    os.remove("report.xml")
if "FIFO" in src:
    os.mkfifo("report.xml")
else:
    case = '<testcase classname="t" name="test_m">%s</testcase>' % (
        '<failure message="bad"/>' if red else "")
    with open("report.xml", "w") as f:
        f.write('<testsuite tests="1">%s</testsuite>' % case)
sys.exit(1 if red else 0)
"#;

#[test]
fn a_fifo_at_the_junit_path_is_an_unreadable_report_not_a_hang() {
    let mutation = |id: &str, replace: &str| {
        format!("  - id: {id}\n    control: c\n    file: m.txt\n    find: \"ok\"\n    replace: \"{replace}\"\n")
    };
    let spec = format!(
        "version: 1\ntest:\n  command: \"python3 run.py\"\n  junit: report.xml\nmutations:\n{}{}{}",
        mutation("fifo-green", "FIFO"),
        mutation("fifo-red", "FIFO BAD"),
        mutation("kill", "BAD"),
    );
    let fx = Fixture::git(&[
        ("m.txt", "ok\n"),
        ("run.py", SUITE),
        ("unguard.yaml", &spec),
    ]);
    let mut tables = Vec::new();
    for (jobs, out) in [("1", "out1"), ("2", "out2")] {
        let run = spawn(fx.unguard(&["run", "--out", out, "-j", jobs, "--timeout", "20s"]));
        // unguard must finish: an overrun kills it and fails here.
        let (code, stdout, err, _) = run.wait(Duration::from_secs(120));
        let said = ctx(code, &stdout, &err);
        let v = fx.verdicts(out);
        // Exit 0 with no readable report: the suite passed; never a kill.
        assert_eq!(v["fifo-green"], "survived", "-j {jobs}: {said}");
        // Red without a report: it broke before reporting.
        assert_eq!(v["fifo-red"], "wrong-reason", "-j {jobs}: {said}");
        assert_eq!(v["kill"], "killed", "-j {jobs}: {said}");
        let o = fx.outcomes(out);
        let red = o["mutants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == "fifo-red")
            .unwrap()["detail"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(red.contains("not a regular file (a FIFO)"), "{red}");
        assert_eq!(code, 2, "{said}");
        tables.push(v);
    }
    assert_eq!(tables[0], tables[1], "-j 1 and -j 2 differ");
}
