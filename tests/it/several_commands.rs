//! Specs whose mutations name several test commands (issue 21): each
//! command's baseline is a job of its own and holds back only its own
//! command's canaries and mutants; only stdin, stdout and stderr reach a
//! suite; orphans a suite leaves are reaped as they exit; the top-level
//! `test.command` is needed only by mutations without one of their own;
//! the terminal table shortens long controls; the warning about uncounted
//! tests comes once per run.

use crate::common::*;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A directory outside the fixture that the suites and the test share.
fn state_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ug-state-")
        .tempdir()
        .unwrap()
}

// ----------------------------------------------- 1. baselines as jobs

/// The slow command's baseline waits (up to 30 s) for a mutant of the fast
/// command to have run, and is red if a job of its own command started
/// before it finished.
const SLOW_SH: &str = r#"#!/bin/sh
if [ "$UNGUARD_MUTANT" = baseline ]; then
  i=0
  while [ ! -e "$STATE/fast-mutant-ran" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  if [ -e "$STATE/fast-mutant-ran" ]; then
    echo "SAW a mutant of the fast command during this baseline"
  else
    echo "NO mutant of the fast command ran during this baseline"
  fi
  if [ -e "$STATE/slow-job-ran" ]; then
    echo "a job of the slow command ran before its baseline was green"
    exit 1
  fi
else
  touch "$STATE/slow-job-ran"
fi
grep -qx ok s.txt
"#;

const FAST_SH: &str = r#"#!/bin/sh
case "$UNGUARD_MUTANT" in
  baseline|canary) ;;
  *) touch "$STATE/fast-mutant-ran" ;;
esac
grep -qx ok f.txt
"#;

fn two_command_fixture(state: &Path) -> Fixture {
    let spec = format!(
        r#"version: 1
test:
  command: "sh fast.sh"
  env:
    STATE: "{}"
mutations:
  - id: slow-kill
    control: c
    file: s.txt
    find: "ok"
    replace: "BAD"
    test:
      command: "sh slow.sh"
  - id: fast-kill
    control: c
    file: f.txt
    find: "ok"
    replace: "BAD"
  - id: fast-survive
    control: c
    file: f.txt
    find: "extra"
    replace: "other"
"#,
        state.display()
    );
    Fixture::git(&[
        ("slow.sh", SLOW_SH),
        ("fast.sh", FAST_SH),
        ("s.txt", "ok\n"),
        ("f.txt", "ok\nextra\n"),
        ("unguard.yaml", &spec),
    ])
}

#[test]
fn a_slow_baseline_holds_back_only_its_own_commands_jobs() {
    let state = state_dir();
    let fx = two_command_fixture(state.path());
    let (code, out, err) = fx.run(&["run", "--out", "out2", "-j", "2", "--timeout", "60s"]);
    // (Exit 2: the survivor fails the gate.)
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    // The slow command's baseline is the first job; the other worker ran
    // the fast command's baseline, canary and a mutant beside it.
    let slow_log = std::fs::read_to_string(fx.path().join("out2/@baseline-1.log")).unwrap();
    assert!(
        slow_log.contains("SAW a mutant of the fast command"),
        "the fast command's jobs waited for the slow baseline:\n{slow_log}\n{}",
        ctx(code, &out, &err)
    );
    let j2 = fx.verdicts("out2");
    assert_eq!(j2["slow-kill"], "killed", "{j2:?}");
    assert_eq!(j2["fast-kill"], "killed", "{j2:?}");
    assert_eq!(j2["fast-survive"], "survived", "{j2:?}");

    // -j 1: one worker, the same verdicts (the slow baseline need not
    // wait: the marker is there already).
    std::fs::remove_file(state.path().join("slow-job-ran")).unwrap();
    let (code, out, err) = fx.run(&["run", "--out", "out1", "-j", "1", "--timeout", "60s"]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_eq!(fx.verdicts("out1"), j2);
}

// ------------------------------------------ 2. no inherited descriptors

/// `unguard <args>` started with fds 7 and 251 open and inheritable, as a
/// job runner may leave them.
fn with_leaked_fds(ug: &Command) -> Command {
    let mut c = Command::new(python());
    c.arg("-c")
        .arg(
            "import os, sys\n\
             for n in (7, 251):\n\
             \x20   os.dup2(os.open('/dev/null', os.O_RDONLY), n)\n\
             os.execvp(sys.argv[1], sys.argv[1:])",
        )
        .arg(ug.get_program())
        .args(ug.get_args());
    if let Some(d) = ug.get_current_dir() {
        c.current_dir(d);
    }
    for (k, v) in ug.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    c
}

/// The descriptor numbers of an `ls -l /proc/self/fd` listing, without the
/// one `ls` reads the directory through.
fn fds_in(listing: &str) -> BTreeSet<u32> {
    listing
        .lines()
        .filter_map(|l| l.split_once(" -> "))
        .filter(|(_, target)| !(target.starts_with("/proc/") && target.ends_with("/fd")))
        .filter_map(|(left, _)| left.split_whitespace().last()?.parse().ok())
        .collect()
}

#[test]
fn only_stdin_stdout_and_stderr_reach_the_suite_and_the_check() {
    let state = state_dir();
    let spec = SpecBuilder::new(
        r#"ls -l /proc/self/fd > "$STATE/suite-$UNGUARD_MUTANT.txt"; grep -qx ok m.txt"#,
    )
    .test_key(
        "check",
        r#"'ls -l /proc/self/fd > "$STATE/check-$UNGUARD_MUTANT.txt"'"#,
    )
    .env("STATE", &state.path().display().to_string())
    .mutation(mutation("bad", "m.txt", "ok", "BAD").control("c"))
    .build();
    let fx = Fixture::git(&[("m.txt", "ok\n"), ("unguard.yaml", &spec)]);

    // The wrapper does leak: a plain child of it sees both descriptors.
    let mut ls = Command::new("ls");
    ls.args(["-l", "/proc/self/fd"]);
    let seen = with_leaked_fds(&ls).output().unwrap();
    let seen = fds_in(&String::from_utf8_lossy(&seen.stdout));
    assert!(seen.contains(&7) && seen.contains(&251), "{seen:?}");

    let ug = fx.unguard(&["run", "--out", "out", "-j", "2", "--timeout", "30s"]);
    let o = with_leaked_fds(&ug).output().unwrap();
    let (code, out, err) = (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    let listings = [
        "suite-baseline.txt",
        "suite-canary.txt",
        "suite-bad.txt",
        "check-bad.txt",
    ];
    for name in listings {
        let text = std::fs::read_to_string(state.path().join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}\n{}", ctx(code, &out, &err)));
        assert_eq!(
            fds_in(&text),
            BTreeSet::from([0, 1, 2]),
            "{name}: descriptors beyond stdin, stdout and stderr reached the run:\n{text}"
        );
    }
    // The supervisor's control socket (its stdin) still did its work.
    assert_eq!(fx.verdicts("out")["bad"], "killed");
}

// ---------------------------------------------------- 3. no zombies

/// Zombies whose parent is `unguard` (pid `ug`) or one of its children
/// (the per-run supervisors).
fn zombies_under(ug: u32) -> Vec<u32> {
    let mut parent = std::collections::HashMap::new();
    let mut zombie = BTreeSet::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let mut f = stat.rsplit(')').next().unwrap_or("").split_whitespace();
        let state = f.next().unwrap_or("");
        let ppid: u32 = f.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        parent.insert(pid, ppid);
        if state == "Z" {
            zombie.insert(pid);
        }
    }
    zombie
        .into_iter()
        .filter(|z| {
            let p = parent[z];
            p == ug || parent.get(&p) == Some(&ug)
        })
        .collect()
}

#[test]
fn orphans_that_exit_during_a_long_suite_are_reaped_at_once() {
    let state = state_dir();
    // The baseline double-forks 50 short-lived processes (orphans: they are
    // reparented to the run's subreaper and exit), then keeps running until
    // the test releases it.
    let suite = r#"#!/bin/sh
if [ "$UNGUARD_MUTANT" = baseline ]; then
  for i in $(seq 50); do (sh -c 'exit 0' &); done
  touch "$STATE/spawned"
  i=0
  while [ ! -e "$STATE/release" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
fi
grep -qx ok m.txt
"#;
    let spec = SpecBuilder::new("sh run.sh")
        .env("STATE", &state.path().display().to_string())
        .mutation(mutation("bad", "m.txt", "ok", "BAD").control("c"))
        .build();
    let fx = Fixture::git(&[
        ("run.sh", suite),
        ("m.txt", "ok\n"),
        ("unguard.yaml", &spec),
    ]);
    let run = spawn(fx.unguard(&["run", "--out", "out", "-j", "1", "--timeout", "120s"]));
    let ug = run.child.id();
    let spawned = eventually(Duration::from_secs(60), || {
        state.path().join("spawned").exists()
    });
    let mut left = Vec::new();
    // While the baseline still runs (it waits for `release`).
    let reaped = spawned
        && eventually(Duration::from_secs(20), || {
            left = zombies_under(ug);
            left.is_empty()
        });
    let still_running = !state.path().join("release").exists();
    std::fs::write(state.path().join("release"), "").unwrap();
    let (code, out, err, _) = run.wait(Duration::from_secs(120));
    assert!(
        spawned,
        "the suite never started: {}",
        ctx(code, &out, &err)
    );
    assert!(still_running);
    assert!(
        reaped,
        "{} exited orphans were left unreaped under unguard while the suite ran: {left:?}",
        left.len()
    );
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    assert_eq!(fx.verdicts("out")["bad"], "killed");
}

// ------------------------------------- 4. a top-level command is optional

#[test]
fn a_top_level_command_is_needed_only_by_mutations_without_their_own() {
    let mutation = |id: &str, file: &str, test: &str| {
        format!(
            "  - id: {id}\n    control: c\n    file: {file}\n    find: \"ok\"\n    replace: \"BAD\"\n{test}"
        )
    };
    let own = |file: &str| format!("    test:\n      command: \"grep -qx ok {file}\"\n");
    let spec = format!(
        "version: 1\ntest:\n  timeout: 30s\nmutations:\n{}{}",
        mutation("a", "a.txt", &own("a.txt")),
        mutation("b", "b.txt", &own("b.txt"))
    );
    let fx = Fixture::git(&[
        ("a.txt", "ok\n"),
        ("b.txt", "ok\n"),
        ("unguard.yaml", &spec),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "2"]);
    assert_eq!(
        code,
        0,
        "every mutation sets its own command: {}",
        ctx(code, &out, &err)
    );
    let v = fx.verdicts("out");
    assert_eq!(v["a"], "killed", "{v:?}");
    assert_eq!(v["b"], "killed", "{v:?}");

    // One mutation without a command of its own: the error names it.
    let spec = format!(
        "version: 1\ntest:\n  timeout: 30s\nmutations:\n{}{}",
        mutation("a", "a.txt", &own("a.txt")),
        mutation("lacks-one", "b.txt", "")
    );
    fx.write("unguard.yaml", &spec);
    let (code, out, err) = fx.run(&["check"]);
    assert_eq!(code, 1, "{}", ctx(code, &out, &err));
    assert!(
        err.contains("`test` needs a `command`") && err.contains("`lacks-one`"),
        "the error does not name the mutation: {err}"
    );
    assert!(!err.contains("`a`"), "{err}");
}

// ------------------------------------------ 5. long controls, short rows

#[test]
fn the_terminal_table_shortens_a_long_control_and_the_reports_keep_it() {
    let control = "The server refuses a request whose Origin header names a host outside the configured allowlist, \
                   compares the port exactly, and never falls back to the Host header. "
        .repeat(4);
    let spec = format!(
        "version: 1\ntest:\n  command: \"grep -qx ok m.txt\"\nmutations:\n  - id: long\n    control: \"{}\"\n    file: m.txt\n    find: \"ok\"\n    replace: \"BAD\"\n",
        control.trim()
    );
    let fx = Fixture::git(&[("m.txt", "ok\n"), ("unguard.yaml", &spec)]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    let row = out
        .lines()
        .find(|l| l.starts_with("| long"))
        .unwrap_or_else(|| panic!("no row: {out}"));
    assert!(
        row.chars().count() < 200,
        "a {}-character row:\n{row}",
        row.chars().count()
    );
    assert!(
        row.contains("The server refuses a request") && row.contains('…'),
        "{row}"
    );
    let o = fx.outcomes("out");
    assert_eq!(o["mutants"][0]["control"], control.trim());
    assert!(fx.read("out/report.md").contains(control.trim()));
}

// ------------------------------------ 6. one warning about uncounted tests

#[test]
fn the_uncounted_tests_warning_comes_once_and_names_every_command() {
    let mutation = |id: &str| {
        format!(
            "  - id: {id}\n    control: c\n    file: {id}.txt\n    find: \"ok\"\n    replace: \"BAD\"\n    test:\n      command: \"grep -qx ok {id}.txt\"\n"
        )
    };
    let spec = format!(
        "version: 1\ntest:\n  command: \"true\"\nmutations:\n{}{}{}",
        mutation("a"),
        mutation("b"),
        mutation("c")
    );
    let fx = Fixture::git(&[
        ("a.txt", "ok\n"),
        ("b.txt", "ok\n"),
        ("c.txt", "ok\n"),
        ("unguard.yaml", &spec),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "2"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("no `test.junit` configured"))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    for id in ["a", "b", "c"] {
        assert!(
            warnings[0].contains(&format!("`grep -qx ok {id}.txt`")),
            "{}",
            warnings[0]
        );
    }
}

// --------------------------- 7. a baseline job that fails stops the run

#[test]
fn a_baseline_that_panics_stops_the_run_and_no_worker_waits_for_it() {
    // One command, two mutants, -j 2: one worker runs the baseline, which
    // panics (unguard's test hook); the other, waiting for it to turn
    // green, must not wait forever.
    let mutation = |id: &str| {
        format!("  - id: {id}\n    control: c\n    file: {id}.txt\n    find: \"ok\"\n    replace: \"BAD\"\n")
    };
    let spec = format!(
        "version: 1\ntest:\n  command: \"grep -qx ok a.txt && grep -qx ok b.txt\"\nmutations:\n{}{}",
        mutation("a"),
        mutation("b")
    );
    let fx = Fixture::git(&[
        ("a.txt", "ok\n"),
        ("b.txt", "ok\n"),
        ("unguard.yaml", &spec),
    ]);
    let mut ug = fx.unguard(&["run", "--out", "out", "-j", "2", "--timeout", "30s"]);
    ug.env("UNGUARD_TEST_PANIC_IN", "@baseline");
    let (code, out, err, _) = spawn(ug).wait(Duration::from_secs(120));
    assert_eq!(code, 1, "{}", ctx(code, &out, &err));
    assert!(err.contains("did not finish"), "{err}");
    assert!(fx.leftover_tmp().is_empty(), "{:?}", fx.leftover_tmp());
}
