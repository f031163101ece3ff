//! Scratch copies left by an unguard that was killed (`kill -9`, the OOM
//! killer, a CI runner's timeout) are removed by the next run, and never
//! those of an unguard that is still running (issue 33 item 9).

use crate::common::*;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// A suite whose mutant runs wait for `release` (the baseline and canaries
/// do not), so a run can be caught with every worker's copy in place.
fn blocking_run_py(release: &Path) -> String {
    format!(
        r#"import os, sys, time
import m
if os.environ.get("UNGUARD_MUTANT") not in ("baseline", "canary"):
    start = time.time()
    while not os.path.exists({release:?}) and time.time() - start < 120:
        time.sleep(0.05)
assert (m.A, m.B, m.C, m.D) == (1, 2, 3, 4)
"#
    )
}

/// The scratch dirs unguard made in `tmp`.
fn scratch_dirs(tmp: &Path) -> BTreeSet<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("unguard-"))
        .collect()
}

/// Whether `dirs` hold a pristine copy and the copies of workers 0 and 1.
fn full_set(dirs: &BTreeSet<String>) -> bool {
    ["unguard-pristine-", "unguard-w0-", "unguard-w1-"]
        .iter()
        .all(|p| dirs.iter().any(|d| d.starts_with(p)))
}

/// Wait until the run started after `before` was listed has its full set
/// of copies; returns them.
fn new_full_set(tmp: &Path, before: &BTreeSet<String>, who: &str) -> BTreeSet<String> {
    let mut mine = BTreeSet::new();
    wait_for(
        &format!("{who}'s scratch copies"),
        Duration::from_secs(60),
        || {
            mine = scratch_dirs(tmp).difference(before).cloned().collect();
            full_set(&mine)
        },
    );
    mine
}

#[test]
fn a_killed_runs_copies_are_swept_by_the_next_run_and_a_live_runs_never() {
    let release_dir = tempfile::tempdir().unwrap();
    let release = release_dir.path().join("go");
    let mark = marker("stale_scratch");
    let spec = SpecBuilder::new(&format!("python3 run.py {mark}"))
        .preset("generic")
        .timeout("150s")
        .mutations(["A = 1", "B = 2", "C = 3", "D = 4"].iter().map(|f| {
            let id = format!("m-{}", &f[..1].to_lowercase());
            mutation(&id, "m.py", f, &f.replace(" = ", " = 1")).line("canary: false")
        }))
        .build();
    let fx = Fixture::git(&[
        ("m.py", "A = 1\nB = 2\nC = 3\nD = 4\n"),
        ("run.py", &blocking_run_py(&release)),
        ("unguard.yaml", &spec),
    ]);
    let tmp = fx.tmp.path().to_path_buf();

    // The first run, killed with every copy in place.
    let first = spawn(fx.unguard(&["run", "--out", "out1", "-j", "2"]));
    let killed = new_full_set(&tmp, &BTreeSet::new(), "the first run");
    let mut first = first;
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    assert_no_processes(&mark, "after unguard was SIGKILLed");
    assert!(
        killed.iter().all(|d| tmp.join(d).is_dir()),
        "a SIGKILLed unguard cannot remove its copies: {killed:?}"
    );

    // The next run removes them before it makes its own.
    let second = spawn(fx.unguard(&["run", "--out", "out2", "-j", "2"]));
    let live = new_full_set(&tmp, &killed, "the second run");
    let left: Vec<&String> = killed.iter().filter(|d| tmp.join(d).exists()).collect();
    assert!(
        left.is_empty(),
        "the killed run's copies are still there: {left:?}"
    );

    // A third run, while the second is still running, leaves its copies alone.
    let mut before = killed.clone();
    before.extend(live.iter().cloned());
    let third = spawn(fx.unguard(&["run", "--out", "out3", "-j", "2"]));
    new_full_set(&tmp, &before, "the third run");
    for d in &live {
        assert!(
            tmp.join(d).join("unguard-owner").is_file(),
            "a running unguard's copy {d} was touched"
        );
    }

    std::fs::write(&release, "").unwrap();
    for (run, out) in [(second, "out2"), (third, "out3")] {
        let (code, so, se, _) = run.wait(Duration::from_secs(180));
        assert_eq!(code, 0, "{}", ctx(code, &so, &se));
        assert!(
            fx.verdicts(out).values().all(|v| v == "killed"),
            "{out}: {:?}",
            fx.verdicts(out)
        );
    }
    assert_eq!(scratch_dirs(&tmp), BTreeSet::new());
    assert_no_processes(&mark, "after the runs");
}
