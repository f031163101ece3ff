//! The output dir: one run at a time (a second one exits 1 at once and
//! names the first), names that never collide (ids that spell unguard's
//! own log names, two canary files that escape alike), and a full file
//! system (the log says where it was cut, the error names the file, and
//! the finished verdicts are written).

use crate::common::*;

use std::path::{Path, PathBuf};
use std::time::Duration;

const KILL_ONLY: &str = "mutations:
  - id: kill
    control: c
    file: m.txt
    find: \"ok\"
    replace: \"BAD\"
";

/// A second run on a locked out dir exits 1 at once, names the first run,
/// and leaves its files alone; a run killed with SIGKILL leaves no lock
/// behind, even while the suite it started still runs.
#[test]
fn a_second_run_on_a_busy_out_dir_exits_1_naming_the_first() {
    let mk = marker("outlock");
    let signals = tempfile::tempdir().unwrap();
    let started = signals.path().join("started");
    let release = signals.path().join("release");
    // The slow suite holds the first run in its baseline until released.
    let slow = "#!/bin/sh
touch \"$STARTED\"
i=0
while [ ! -f \"$RELEASE\" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done
if grep -q BAD m.txt; then exit 1; fi
exit 0
";
    let quick = "#!/bin/sh\nif grep -q BAD m.txt; then exit 1; fi\nexit 0\n";
    let fx = Fixture::git(&[("m.txt", "ok\n"), ("run.sh", slow), ("quick.sh", quick)]);
    fx.write(
        "unguard.yaml",
        &format!(
            "version: 1\ntest:\n  command: \"sh run.sh {mk}\"\n  env: {{STARTED: \"{}\", RELEASE: \"{}\"}}\n{KILL_ONLY}",
            started.display(),
            release.display()
        ),
    );
    fx.write(
        "quick.yaml",
        &format!("version: 1\ntest:\n  command: \"sh quick.sh\"\n{KILL_ONLY}"),
    );
    fx.git_cmd(&["add", "-A"]);
    fx.commit("specs");
    let quick_run = vec![
        "run",
        "--config",
        "quick.yaml",
        "--out",
        "out",
        "-j",
        "1",
        "--no-canary",
        "--timeout",
        "20s",
    ];

    // `out` is unguard's (cleared on the next run); the slow run holds
    // `out/inner`, made and cleared by a run before it.
    for dir in ["out", "out/inner", "out/inner"] {
        let mut args = quick_run.clone();
        args[4] = dir;
        let (code, out, err) = fx.run(&args);
        assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    }
    let mut first = spawn({
        let mut c = fx.unguard(&["run", "--out", "out/inner", "-j", "1", "--no-canary"]);
        c.args(["--timeout", "300s"]);
        c
    });
    let pid = first.child.id();
    wait_for("the first run's baseline", Duration::from_secs(120), || {
        started.exists()
    });
    let marker_before = fx.read("out/inner/.unguard-out");

    // Its own dir, and a dir that holds it (clearing that would clear it).
    for dir in ["out/inner", "out"] {
        let mut args = quick_run.clone();
        args[4] = dir;
        let (code, out, err, _) = spawn(fx.unguard(&args)).wait(Duration::from_secs(120));
        assert_eq!(code, 1, "--out {dir}: {}", ctx(code, &out, &err));
        assert!(
            err.contains(&format!(
                "out/inner is in use by another unguard run (pid {pid}, started "
            )),
            "{err}"
        );
        assert!(err.contains("--out out/inner -j 1"), "{err}");
        assert!(err.contains("--out DIR"), "{err}");
        // The first run's dir is as it was: its record, no results of another run.
        assert_eq!(fx.read("out/inner/.unguard-out"), marker_before);
        assert!(!fx.path().join("out/inner/outcomes.json").exists());
    }

    // SIGKILL: the kernel drops the lock with the process; the suite it
    // started (still waiting, unless the kill took it along) holds none.
    first.child.kill().unwrap();
    let _ = first.child.wait();
    let mut args = quick_run.clone();
    args[4] = "out/inner";
    let (code, out, err) = fx.run(&args);
    std::fs::write(&release, "").unwrap();
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(fx.verdicts("out/inner")["kill"], "killed");
    assert!(!fx
        .read("out/inner/.unguard-out")
        .contains(&format!("pid: {pid}\n")));
    assert_no_processes(&mk, "the killed run's suite, released");
}

/// Ids that spell the names of unguard's own logs under the old scheme
/// (`baseline`, `canary-app_a_b.py`, `m.recheck-1`), and two files whose
/// paths once escaped alike (`app/a_b.py`, `app/a/b.py`): every log keeps
/// its own run, at -j 1 and -j 2 alike.
#[test]
fn every_log_keeps_its_own_run() {
    let suite = "#!/bin/sh
echo \"suite output of $UNGUARD_MUTANT\"
[ -s app/a_b.py ] && [ -s app/a/b.py ] || exit 1
if grep -q BAD app/a_b.py app/a/b.py; then exit 1; fi
exit 0
";
    let mutation = |id: &str, file: &str, find: &str, replace: &str| {
        format!(
            "  - id: {id}\n    control: c\n    file: {file}\n    find: \"{find}\"\n    replace: \"{replace}\"\n"
        )
    };
    let spec = format!(
        "version: 1\ntest:\n  command: \"sh run.sh\"\nmutations:\n{}{}{}{}",
        mutation("m.recheck-1", "app/a_b.py", "X = 1", "X = BAD"),
        mutation("m", "app/a/b.py", "Y = 1", "Y = BAD"),
        mutation("baseline", "app/a_b.py", "X = 1", "X = 2"),
        mutation("canary-app_a_b.py", "app/a/b.py", "Y = 1", "Y = 2"),
    );
    let fx = Fixture::git(&[
        ("app/a_b.py", "X = 1\n"),
        ("app/a/b.py", "Y = 1\n"),
        ("run.sh", suite),
        ("unguard.yaml", &spec),
    ]);
    let mut tables = Vec::new();
    for (jobs, out) in [("1", "out1"), ("2", "out2")] {
        let (code, stdout, err) = fx.run(&["run", "--out", out, "-j", jobs, "--timeout", "20s"]);
        assert_eq!(code, 2, "{}", ctx(code, &stdout, &err));
        let o = fx.outcomes(out);
        let header = |name: &str| {
            let text = fx.read(&format!("{out}/{name}"));
            text.lines().next().unwrap_or_default().to_string()
        };
        let mut names = Vec::new();
        let log = o["baselines"][0]["log_file"].as_str().unwrap();
        assert_eq!(header(log), "# unguard: baseline of `sh run.sh`", "{log}");
        names.push(log.to_string());
        let canaries = o["canaries"].as_array().unwrap();
        assert_eq!(canaries.len(), 2, "{o}");
        for c in canaries {
            let (file, log) = (c["file"].as_str().unwrap(), c["log_file"].as_str().unwrap());
            assert_eq!(
                header(log),
                format!("# unguard: canary: {file} emptied"),
                "{log}"
            );
            names.push(log.to_string());
        }
        for m in o["mutants"].as_array().unwrap() {
            let (id, log) = (m["id"].as_str().unwrap(), m["log_file"].as_str().unwrap());
            assert!(
                header(log).starts_with(&format!("# unguard: mutant {id} (")),
                "{log} of {id}: {}",
                header(log)
            );
            names.push(log.to_string());
        }
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "two runs share a log: {names:?}");
        assert!(!fx.path().join(out).join(".unguard-reserve").exists());
        tables.push(fx.verdicts(out));
    }
    assert_eq!(tables[0]["m"], "killed");
    assert_eq!(tables[0]["m.recheck-1"], "killed");
    assert_eq!(tables[0]["baseline"], "survived");
    assert_eq!(tables[0]["canary-app_a_b.py"], "survived");
    assert_eq!(tables[0], tables[1], "-j 1 and -j 2 differ");
}

/// A tmpfs mounted at a directory, unmounted on drop (every path out of
/// the test).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(at.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = std::process::Command::new("umount")
            .arg(&self.0)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(&self.0)
                .status();
        }
    }
}

/// About 1 MB of output, then the verdict; an equivalent mutant waits a
/// little before it passes, so the stop usually finds it running.
const LOUD_SUITE: &str = r#"import sys, time
for i in range(10000):
    sys.stdout.write("line %06d %s\n" % (i, "x" * 88))
sys.stdout.flush()
src = open("m.txt").read()
if "EQUIV" in src:
    time.sleep(3)
sys.exit(1 if "BAD" in src else 0)
"#;

/// The out dir fills up while a mutant's suite prints: that log ends with
/// a marker, the error names it and says what to do, unguard exits 1 and
/// writes outcomes.json for the mutants that finished; the suite never
/// notices (its output is still read), so no mutant that did not finish, and
/// no equivalent one, is reported killed.
#[test]
fn a_full_out_dir_cuts_the_log_with_a_marker_and_keeps_the_finished_verdicts() {
    let mutation = |id: &str, replace: &str| {
        format!("  - id: {id}\n    control: c\n    file: m.txt\n    find: \"ok\"\n    replace: \"{replace}\"\n")
    };
    let spec = format!(
        "version: 1\ntest:\n  command: \"python3 run.py\"\nmutations:\n{}{}{}{}",
        mutation("kill1", "BAD1"),
        mutation("equiv1", "EQUIV1"),
        mutation("kill2", "BAD2"),
        mutation("equiv2", "EQUIV2"),
    );
    let fx = Fixture::git(&[
        ("m.txt", "ok\n"),
        ("run.py", LOUD_SUITE),
        ("unguard.yaml", &spec),
    ]);
    for jobs in ["1", "2"] {
        let out = fx.path().join("out");
        // Room for the reserve (~0.3 MB), the baseline's log and one
        // mutant's: the next log fills it.
        let Some(_mounted) = Tmpfs::mount(&out, "2700k") else {
            skip::not_here("cannot mount tmpfs");
            return;
        };
        let run = spawn(fx.unguard(&[
            "run",
            "--out",
            "out",
            "-j",
            jobs,
            "--no-canary",
            "--recheck-kills",
            "0",
            "--timeout",
            "60s",
            // Its room is counted in logs: no baseline run inside a
            // network namespace (a log of its own).
            "--network-isolation",
            "off",
        ]));
        let (code, stdout, err, _) = run.wait(Duration::from_secs(300));
        let said = ctx(code, &stdout, &err);
        assert!(
            out.join("outcomes.json").exists(),
            "-j {jobs}: no outcomes.json: {said}"
        );
        assert_eq!(code, 1, "-j {jobs}: {said}");
        let verdicts = fx.verdicts("out");
        for (id, v) in &verdicts {
            let right = if id.starts_with("kill") {
                "killed"
            } else {
                "survived"
            };
            assert_eq!(v, right, "-j {jobs}: {id}: {said}");
        }
        if jobs == "1" {
            assert_eq!(
                verdicts.get("kill1").map(String::as_str),
                Some("killed"),
                "{said}"
            );
        }
        // The error names the file that could not be written, and what to do.
        let line = err
            .lines()
            .find(|l| l.contains("the run stopped there"))
            .unwrap_or_else(|| panic!("-j {jobs}: no error naming the file: {said}"));
        let rest = line
            .strip_prefix("error: writing ")
            .unwrap_or_else(|| panic!("{line}"));
        let path = &rest[..rest.find(": ").unwrap()];
        assert!(rest.contains("No space left on device"), "{said}");
        assert!(rest.contains("--out DIR"), "{said}");
        // With one worker the loud log is the write that fails. With two, the
        // other worker may start its next mutant while the first one's log
        // fills the disk: then its diff is the write that fails (the case of
        // `a_full_out_dir_at_a_diff_keeps_the_finished_verdicts`), which has
        // no marker to carry.
        if jobs == "1" || !path.ends_with(".diff") {
            assert!(path.ends_with(".log"), "-j {jobs}: {path}: {said}");
            let log = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}: {said}"));
            let log = String::from_utf8_lossy(&log);
            assert!(
                log.contains(
                    "\n# unguard: log cut here: writing it failed (No space left on device"
                ),
                "-j {jobs}: {path} has no marker:\n{}",
                &log[log.len().saturating_sub(400)..]
            );
        }
        let o = fx.outcomes("out");
        assert_eq!(o["interrupted"], true, "{said}");
        assert_eq!(o["gate"]["exit_code"], 1, "{said}");
        assert!(!out.join(".unguard-reserve").exists());
    }
}

/// The out dir fills up between two mutants (the suite of one fills it and
/// prints nothing): the next mutant's diff is the write that fails. The
/// run stops there, the error names the diff, and the verdict that
/// finished is written.
#[test]
fn a_full_out_dir_at_a_diff_keeps_the_finished_verdicts() {
    let suite = "#!/bin/sh
if grep -q FILL m.txt; then head -c 100000000 /dev/zero > \"$OUTDIR/filler\" 2>/dev/null; fi
if grep -q BAD m.txt; then exit 1; fi
exit 0
";
    let fx = Fixture::git(&[("m.txt", "ok\n"), ("run.sh", suite)]);
    let out = fx.path().join("out");
    let mutation = |id: &str, replace: &str| {
        format!("  - id: {id}\n    control: c\n    file: m.txt\n    find: \"ok\"\n    replace: \"{replace}\"\n")
    };
    fx.write(
        "unguard.yaml",
        &format!(
            "version: 1\ntest:\n  command: \"sh run.sh\"\n  env: {{OUTDIR: \"{}\"}}\nmutations:\n{}{}{}",
            out.display(),
            mutation("kill", "BAD"),
            mutation("fill", "FILL"),
            mutation("after", "BAD after"),
        ),
    );
    fx.git_cmd(&["add", "-A"]);
    fx.commit("spec");
    let Some(_mounted) = Tmpfs::mount(&out, "1m") else {
        skip::not_here("cannot mount tmpfs");
        return;
    };
    let run = spawn(fx.unguard(&[
        "run",
        "--out",
        "out",
        "-j",
        "1",
        "--no-canary",
        "--timeout",
        "60s",
    ]));
    let (code, stdout, err, _) = run.wait(Duration::from_secs(300));
    let said = ctx(code, &stdout, &err);
    assert!(
        out.join("outcomes.json").exists(),
        "no outcomes.json: {said}"
    );
    assert_eq!(code, 1, "{said}");
    let verdicts = fx.verdicts("out");
    assert_eq!(verdicts["kill"], "killed", "{said}");
    assert_eq!(verdicts["fill"], "survived", "{said}");
    assert!(!verdicts.contains_key("after"), "{said}");
    let diff = out.join("after.diff");
    assert!(
        err.contains(&format!(
            "error: writing {}: No space left on device",
            diff.canonicalize().unwrap_or(diff.clone()).display()
        )),
        "{said}"
    );
    assert!(err.contains("--out DIR"), "{said}");
}
