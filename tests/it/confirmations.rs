//! Confirmation runs (issue 33, items 3 and 6): a hang is confirmed like a
//! kill, and every confirmation (of a kill or of a hang) runs with no other
//! suite running, so a port, a lock or the load of another worker cannot
//! confirm a verdict.

use crate::common::*;

/// `check.py` imports `app` (so an emptied `app.py` is red: the canary
/// reaches it) and, with `app.py` carrying `marker`, hangs 30 s the first
/// time only (`once`, a flag file outside the repository) or every time.
fn hanging_check(flag: &std::path::Path) -> String {
    format!(
        r#"import pathlib, sys, time
src = pathlib.Path("app.py").read_text()
flag = pathlib.Path({flag:?})
if "HANG_ONCE" in src and not flag.exists():
    flag.write_text("hung once")
    time.sleep(30)
if "HANG_ALWAYS" in src:
    time.sleep(30)
import app
sys.exit(0 if app.VALUE == 1 else 1)
"#,
        flag = flag.display().to_string()
    )
}

const APP: &str = "# first note\n# second note\nVALUE = 1\n";

/// A test that stalls once makes an equivalent mutant hang once: its
/// confirmation run does not hang, so it is `flaky` (it was `timeout`,
/// counted as detected: score 100 %, gate passed). A mutant that hangs
/// every time stays `timeout`, and says it hung again.
#[test]
fn a_hang_that_does_not_reproduce_is_flaky_and_one_that_does_stays_timeout() {
    let flags = tempfile::tempdir().unwrap();
    let spec = SpecBuilder::new("python3 check.py")
        .preset("generic")
        .timeout("5s")
        .mutation(mutation("once", "app.py", "# first note", "# HANG_ONCE"))
        .mutation(mutation(
            "always",
            "app.py",
            "# second note",
            "# HANG_ALWAYS",
        ))
        .build();
    let fx = Fixture::git(&[
        ("app.py", APP),
        ("check.py", &hanging_check(&flags.path().join("hung"))),
        ("unguard.yaml", &spec),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let v = fx.verdicts("out");
    assert_eq!(
        v.get("once").map(String::as_str),
        Some("flaky"),
        "{v:?}\n{}",
        ctx(code, &out, &err)
    );
    assert_eq!(
        v.get("always").map(String::as_str),
        Some("timeout"),
        "{v:?}"
    );
    assert_eq!(
        code,
        2,
        "a flaky mutant fails the gate\n{}",
        ctx(code, &out, &err)
    );
    let o = fx.outcomes("out");
    assert_eq!(reason(&o, "once"), "hang-not-reproduced");
    assert_eq!(
        reason(&o, "always"),
        "hang",
        "a confirmed hang keeps its reason"
    );
    let detail = mutant(&o, "always")["detail"].as_str().unwrap();
    assert!(
        detail.contains("hung again on its confirmation run"),
        "the detail names the confirmation: {detail}"
    );
    assert!(fx.path().join("out/once@recheck-1.log").is_file());
    assert!(
        !fx.path().join("out/@baseline.netns.log").exists(),
        "one worker keeps no port from anyone: no baseline run in a namespace"
    );

    // `--recheck-kills 0` turns confirmations off, hangs included.
    std::fs::remove_file(flags.path().join("hung")).unwrap();
    let (code, out, err) = fx.run(&[
        "run",
        "--out",
        "out0",
        "-j",
        "1",
        "--only",
        "once",
        "--recheck-kills",
        "0",
    ]);
    assert_eq!(
        fx.verdicts("out0").get("once").map(String::as_str),
        Some("timeout"),
        "{}",
        ctx(code, &out, &err)
    );
}

/// A port no other test of this process uses (the suites bind it on
/// purpose, so they collide only with each other).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Every test run binds one fixed loopback port for 1.5 s. At -j 2 two
/// runs on the machine's network collide and one goes red; its
/// confirmation runs alone, does not go red, and the mutant is `flaky`: no
/// equivalent mutant is ever `killed` (today's main confirmed the collision
/// while the other worker held the port: 2 killed). In a network namespace
/// of its own (the default where the machine gives one) no run collides
/// with another: every mutant survives.
#[test]
fn a_kill_by_a_port_collision_is_not_confirmed_at_j2() {
    let port = free_port();
    let check = format!(
        "import socket, sys, time\nimport app\nassert app.VALUE == 1\ns = socket.socket()\ns.bind((\"127.0.0.1\", {port}))\ns.listen()\ntime.sleep(1.5)\ns.close()\n"
    );
    let app = "# one\n# two\n# three\n# four\nVALUE = 1\n";
    let mut spec = SpecBuilder::new("python3 check.py")
        .preset("generic")
        .timeout("30s");
    for id in ["one", "two", "three", "four"] {
        spec = spec.mutation(mutation(
            id,
            "app.py",
            &format!("# {id}"),
            &format!("# {id}!"),
        ));
    }
    let fx = Fixture::git(&[
        ("app.py", app),
        ("check.py", &check),
        ("unguard.yaml", &spec.build()),
    ]);
    let (code, out, err) = fx.run(&[
        "run",
        "--out",
        "out",
        "-j",
        "2",
        "--network-isolation",
        "off",
    ]);
    let v = fx.verdicts("out");
    assert_eq!(v.len(), 4, "{v:?}\n{}", ctx(code, &out, &err));
    assert!(
        v.values().all(|o| o == "survived" || o == "flaky"),
        "an equivalent mutant was reported killed: {v:?}\n{}",
        ctx(code, &out, &err)
    );
    let reasons = fx.reasons("out");
    for (id, o) in &v {
        if o == "flaky" {
            assert_eq!(reasons[id], "kill-not-reproduced", "{id}");
            let log = fx.read(&format!("out/{id}@recheck-1.log"));
            assert!(!log.is_empty(), "{id}: its confirmation ran");
        } else {
            assert_eq!(reasons[id], "suite-green", "{id}");
        }
    }
    let o = fx.outcomes("out");
    assert!(
        o["baselines"][0].get("network").is_none(),
        "shared: left out"
    );
    assert!(
        o["baselines"][0].get("network_note").is_none(),
        "off is the user's choice, not a finding: {}",
        o["baselines"][0]
    );

    if !netns_here() {
        return;
    }
    let (code, out, err) = fx.run(&["run", "--out", "ns", "-j", "2"]);
    let v = fx.verdicts("ns");
    assert!(
        v.len() == 4 && v.values().all(|o| o == "survived"),
        "in their own network no two runs collide: {v:?}\n{}",
        ctx(code, &out, &err)
    );
    let o = fx.outcomes("ns");
    assert_eq!(
        o["baselines"][0]["network"], "namespace",
        "{}",
        o["baselines"][0]
    );
    for m in o["mutants"].as_array().unwrap() {
        assert_eq!(m["network"], "namespace", "{m}");
    }
    let log = fx.read("ns/one.log");
    assert!(
        log.contains("its own network namespace (loopback only)"),
        "the log's isolation line says it: {log}"
    );
    assert!(
        fx.path().join("ns/@baseline.netns.log").is_file(),
        "the baseline's run inside a namespace has its log"
    );
}

/// Whether this machine gives a run a network namespace of its own (a
/// supervisor started with `--netns`); else the test says it is skipped.
fn netns_here() -> bool {
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("unguard"))
        .args(["__supervise", "--grace", "0", "--netns", "--", "true"])
        .output()
        .unwrap();
    out.status.success() || {
        crate::common::skip::not_here(&format!(
            "no network namespace here: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
        false
    }
}

/// A server on the machine's loopback that accepts every connection for
/// the rest of the test process: reachable from a run that shares the
/// machine's network, not from one in a namespace of its own. Its port.
fn machine_loopback_server() -> u16 {
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    std::thread::spawn(move || for _ in server.incoming() {});
    port
}

/// A suite run that says, in a file outside the copy, how many other runs
/// were going when it started (`<mutant> <others>` per line): `red` turns
/// the suite red at once, `slow` keeps it green for 8 s.
fn counting_check(dir: &std::path::Path) -> String {
    format!(
        r#"import os, pathlib, sys, time
d = pathlib.Path({dir:?})
src = pathlib.Path("app.py").read_text()
me = "red" if "VALUE = 2" in src else "slow" if "SLOW" in src else "other"
running = d / "running"
running.mkdir(exist_ok=True)
others = len(list(running.iterdir()))
with open(d / "starts", "a") as f:
    f.write(f"{{me}} {{others}}\n")
token = running / str(os.getpid())
token.write_text(me)
try:
    if me == "slow":
        time.sleep(8)
    import app
    sys.exit(0 if app.VALUE == 1 else 1)
finally:
    token.unlink()
"#,
        dir = dir.display().to_string()
    )
}

/// At -j 2, a kill's confirmation waits for the other worker's run when
/// the runs share the machine's network, and runs beside it when each run
/// has a network namespace of its own: `red`'s second run (its
/// confirmation) starts while `slow` still runs only then.
#[test]
fn a_confirmation_runs_beside_the_other_worker_only_in_its_own_network() {
    if !netns_here() {
        return;
    }
    for (mode, beside) in [("auto", true), ("off", false)] {
        let dir = tempfile::tempdir().unwrap();
        let spec = SpecBuilder::new("python3 check.py")
            .preset("generic")
            .timeout("60s")
            .mutation(mutation("red", "app.py", "VALUE = 1", "VALUE = 2"))
            .mutation(mutation("slow", "app.py", "# note", "# SLOW"))
            .build();
        let fx = Fixture::git(&[
            ("app.py", "# note\nVALUE = 1\n"),
            ("check.py", &counting_check(dir.path())),
            ("unguard.yaml", &spec),
        ]);
        let (code, out, err) = fx.run(&[
            "run",
            "--out",
            "out",
            "-j",
            "2",
            "--network-isolation",
            mode,
        ]);
        let v = fx.verdicts("out");
        assert_eq!(
            v["red"],
            "killed",
            "{mode}: {v:?}\n{}",
            ctx(code, &out, &err)
        );
        assert_eq!(v["slow"], "survived", "{mode}: {v:?}");
        let starts = std::fs::read_to_string(dir.path().join("starts")).unwrap();
        let reds: Vec<usize> = starts
            .lines()
            .filter_map(|l| l.strip_prefix("red "))
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(
            reds.len(),
            2,
            "{mode}: a run and its confirmation: {starts}"
        );
        assert_eq!(
            reds[1] > 0,
            beside,
            "{mode}: the confirmation saw {} other run(s) going: {starts}\n{}",
            reds[1],
            ctx(code, &out, &err)
        );
    }
}

/// A suite whose baseline is not the same in a network namespace of its
/// own keeps the machine's network, said in one line and in
/// `outcomes.json`: one that is red without a server on the machine's
/// loopback, and one that skips a test without it (green both ways, but a
/// mutant only that test kills would survive inside).
#[test]
fn a_suite_that_needs_the_machines_network_keeps_it() {
    if !netns_here() {
        return;
    }
    let port = machine_loopback_server();
    let red_without = format!(
        "import socket, sys\nimport app\nsocket.create_connection((\"127.0.0.1\", {port}), timeout=5).close()\nsys.exit(0 if app.VALUE == 1 else 1)\n"
    );
    let skips_without = format!(
        r#"import socket, sys
import app
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
    net = '<testcase classname="t" name="server"/>'
except OSError:
    net = '<testcase classname="t" name="server"><skipped/></testcase>'
ok = app.VALUE == 1
local = '<testcase classname="t" name="value"/>' if ok else '<testcase classname="t" name="value"><failure/></testcase>'
open(sys.argv[1], "w").write(f'<testsuite tests="2">{{net}}{{local}}</testsuite>')
sys.exit(0 if ok else 1)
"#
    );
    for (check, command, junit, says) in [
        (&red_without, "python3 check.py", None, "red there"),
        (
            &skips_without,
            "python3 check.py {junit}",
            Some("{junit}"),
            "`t::server` Skipped there, Passed outside",
        ),
    ] {
        // Two mutants: two workers (one alone keeps no port from anyone).
        let mut spec = SpecBuilder::new(command)
            .preset("generic")
            .timeout("30s")
            .mutation(mutation("value", "app.py", "VALUE = 1", "VALUE = 2"))
            .mutation(mutation("note", "app.py", "# note", "# a note"));
        if let Some(j) = junit {
            spec = spec.junit(j);
        }
        let fx = Fixture::git(&[
            ("app.py", "VALUE = 1\n# note\n"),
            ("check.py", check),
            ("unguard.yaml", &spec.build()),
        ]);
        let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "2"]);
        let v = fx.verdicts("out");
        assert_eq!(v["value"], "killed", "{v:?}\n{}", ctx(code, &out, &err));
        let o = fx.outcomes("out");
        let b = &o["baselines"][0];
        assert!(b.get("network").is_none(), "shared: {b}");
        let note = b["network_note"].as_str().unwrap_or_default();
        assert!(note.contains(says), "{note}");
        assert!(
            err.contains("its runs share the machine's network"),
            "said in one line: {}",
            ctx(code, &out, &err)
        );
        assert!(mutant(&o, "value").get("network").is_none());
    }
}

/// A mutant that makes the code reach beyond loopback: in a network
/// namespace of its own the try fails (`Network is unreachable`, simulated
/// here by a server only the machine's loopback has), and the suite goes
/// red. That kill is no evidence: it is confirmed on the machine's network,
/// alone, where the suite stays green, so the mutant is `flaky`, never
/// `killed`. A kill without such a line is confirmed in the namespace.
#[test]
fn a_kill_that_shows_the_outside_network_is_confirmed_on_the_machines_network() {
    if !netns_here() {
        return;
    }
    let port = machine_loopback_server();
    let check = format!(
        r#"import socket, sys
import app
if app.REACH:
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
    except OSError:
        print("OSError: [Errno 101] Network is unreachable")
        sys.exit(1)
sys.exit(0 if app.VALUE == 1 else 1)
"#
    );
    let spec = SpecBuilder::new("python3 check.py")
        .preset("generic")
        .timeout("30s")
        .mutation(mutation("reach", "app.py", "REACH = False", "REACH = True"))
        .mutation(mutation("value", "app.py", "VALUE = 1", "VALUE = 2"))
        .build();
    let fx = Fixture::git(&[
        ("app.py", "REACH = False\nVALUE = 1\n"),
        ("check.py", &check),
        ("unguard.yaml", &spec),
    ]);
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "2"]);
    let o = fx.outcomes("out");
    assert_eq!(
        o["baselines"][0]["network"],
        "namespace",
        "{}",
        ctx(code, &out, &err)
    );
    let v = fx.verdicts("out");
    assert_eq!(v["value"], "killed", "{v:?}\n{}", ctx(code, &out, &err));
    assert_eq!(v["reach"], "flaky", "{v:?}\n{}", ctx(code, &out, &err));
    assert_eq!(reason(&o, "reach"), "kill-not-reproduced");
    let confirmation = fx.read("out/reach@recheck-1.log");
    let isolation = confirmation
        .lines()
        .find(|l| l.starts_with("# isolation:"))
        .unwrap_or_default();
    assert!(
        !isolation.contains("network namespace"),
        "confirmed on the machine's network: {isolation}"
    );
    let kept = fx.read("out/value@recheck-1.log");
    assert!(
        kept.contains("its own network namespace"),
        "a plain kill is confirmed in the namespace: {kept}"
    );

    // Even with confirmations off: the namespace is unguard's addition.
    let (code, out, err) = fx.run(&["run", "--out", "off", "-j", "2", "--recheck-kills", "0"]);
    let v = fx.verdicts("off");
    assert_eq!(v["value"], "killed", "{v:?}\n{}", ctx(code, &out, &err));
    assert_eq!(v["reach"], "flaky", "{v:?}\n{}", ctx(code, &out, &err));
    assert!(!fx.path().join("off/value@recheck-1.log").exists());
}
