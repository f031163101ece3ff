//! JUnit reports are read per run: a report left behind by an earlier run in
//! the same scratch copy must never be mistaken for the current run's.

use crate::common::*;

const SUITE: &str = r#"#!/bin/sh
# Dies before writing a report when app.txt says CRASH; reports a red test on BROKEN.
if grep -q CRASH app.txt; then echo "crashed before reporting" >&2; exit 1; fi
if grep -q BROKEN app.txt; then
  printf '<testsuite><testcase classname="t" name="a"><failure/></testcase></testsuite>' > "$1"
  exit 1
fi
printf '<testsuite><testcase classname="t" name="a"/></testsuite>' > "$1"
"#;

fn spec(junit: &str, arg: &str) -> String {
    format!(
        r#"version: 1
test:
  command: "sh run.sh {arg}"
  junit: "{junit}"
mutations:
  - id: a-broken
    control: c
    file: app.txt
    find: "ok"
    replace: "BROKEN"
  - id: b-crash
    control: c
    file: app.txt
    find: "fine"
    replace: "CRASH"
"#
    )
}

fn check_no_stale_report(junit: &str, arg: &str) {
    let fx = Fixture::git(&[
        ("run.sh", SUITE),
        ("app.txt", "ok\nfine\n"),
        ("unguard.yaml", &spec(junit, arg)),
    ]);
    let (code, stdout, stderr) = fx.run(&["run", "-j", "1", "--no-canary", "--out", "out"]);
    let v = fx.verdicts("out");
    assert_eq!(v["a-broken"], "killed", "{stdout}\n{stderr}");
    // The crash wrote no report: reading a-broken's report would make this "killed".
    assert_eq!(v["b-crash"], "wrong-reason", "{stdout}\n{stderr}");
    assert_eq!(code, 2);
    let o = fx.outcomes("out");
    assert_eq!(reason(&o, "b-crash"), "no-junit-report");
}

#[test]
fn fresh_placeholder_path_per_run() {
    check_no_stale_report("{junit}", "{junit}");
}

#[test]
fn literal_report_path_inside_the_copy_is_cleared_before_each_run() {
    check_no_stale_report("report.xml", "report.xml");
}
