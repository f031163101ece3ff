//! Every process a run starts dies with its run, at any -j (issue 11,
//! item 3): a Python suite leaves a daemon behind that double-forked, called
//! setsid and cleared its environment, listening on 127.0.0.1 at
//! BASE + UNGUARD_WORKER. Its first test fails when something already
//! answers on that port: a daemon of an earlier run on the same worker,
//! which would make an equivalent mutant look killed (a false kill).
//! Every run here shares the machine's network (`UNGUARD_NETWORK_ISOLATION=
//! off`): in a network namespace of its own a leaked daemon could not answer
//! another run's client anyway, and what this module tests is that it dies.
//!
//! Under each mechanism unguard ships (`--isolation auto`, with a cgroup
//! where it may create one, and the forced `--isolation subreaper`), and
//! once as a non-root user, -j 1 and -j 2 must give the same table: the four
//! real controls killed, the four equivalent mutants survived, no daemon
//! left afterwards.

use crate::common::*;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

const GUARD_PY: &str = r#"MAX_NAME = 32
KILL_SUPERVISOR = False


def valid_name(name):
    if len(name) > MAX_NAME:
        return False
    if not name.isidentifier():
        return False
    return True


def safe_path(p):
    if ".." in p.split("/"):
        return False
    if p.startswith("/"):
        return False
    return True


def allowed_tool(tool):
    return tool in ("read", "list")


def redact(text):
    return text.replace("secret", "******")


def audit_note(event):
    note = f"event: {event}"
    return note
"#;

/// The runner: every `test_` function of test_guard.py in order, like
/// pytest but with the standard library only (the non-root user here has
/// no pytest).
const RUN_TESTS_PY: &str = r#"import sys, traceback
import test_guard
failed = 0
for name, fn in list(vars(test_guard).items()):
    if name.startswith("test_") and callable(fn):
        try:
            fn()
            print("PASSED", name, flush=True)
        except Exception:
            failed += 1
            print("FAILED", name, flush=True)
            traceback.print_exc()
print(failed, "failed", flush=True)
sys.exit(1 if failed else 0)
"#;

/// The suite. `test_no_server_from_an_earlier_run` comes first: it is the
/// test a leftover daemon turns red. `test_leaves_a_daemon` starts the
/// daemon (double fork, setsid, stdio to /dev/null, exec with an empty
/// environment) and waits until it answers, so every run leaves one.
const TEST_GUARD_PY: &str = r#"import os, signal, socket, sys, time
import guard

PORT = int(os.environ["LEAK_BASE_PORT"]) + int(os.environ.get("UNGUARD_WORKER", "0"))
MARK = os.environ["LEAK_MARK"]
RUN = os.urandom(4).hex()

SERVER = """
import os, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(16)
while True:
    c, _ = s.accept()
    c.sendall(("server started by run %s, pid %d" % (sys.argv[3], os.getpid())).encode())
    c.close()
"""


def answering(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            return s.recv(128).decode(errors="replace") or "(connected)"
    except OSError:
        return None


def test_no_server_from_an_earlier_run():
    banner = answering(PORT)
    assert banner is None, f"a server of an earlier run answered on port {PORT}: {banner}"


def supervisor():
    """The nearest ancestor that is unguard's per-run supervisor, if any."""
    pid = os.getppid()
    while pid > 1:
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read()
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            return None
        if b"__supervise" in cmd:
            return pid
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return None


def test_leaves_a_daemon():
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.execve(sys.executable, [sys.executable, "-c", SERVER, str(PORT), MARK, RUN], {})
        os._exit(0)
    os.waitpid(pid, 0)
    for _ in range(400):
        if answering(PORT):
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"the daemon never answered on {PORT}")
    if guard.KILL_SUPERVISOR:
        sup = supervisor()
        print("killing the supervisor", sup, flush=True)
        if sup:
            os.kill(sup, signal.SIGKILL)
            time.sleep(1)


def test_the_daemon_is_still_ours_a_moment_later():
    # Nothing but this run may end this run's daemon while the run lasts
    # (another run's clean-up must not take it for a leftover).
    time.sleep(0.3)
    banner = answering(PORT) or "(nothing)"
    assert RUN in banner, f"expected this run's daemon on {PORT}, got: {banner}"


def test_names():
    assert guard.valid_name("reader")
    assert not guard.valid_name("x" * 33)
    assert not guard.valid_name("not an identifier")


def test_paths():
    assert guard.safe_path("docs/a.txt")
    assert not guard.safe_path("docs/../../etc/passwd")
    assert not guard.safe_path("/etc/passwd")


def test_tools():
    assert guard.allowed_tool("read")
    assert not guard.allowed_tool("exec")


def test_redaction():
    assert guard.redact("the secret") == "the ******"
    assert guard.audit_note("x") == "event: x"
"#;

/// 8 mutants: 4 remove a control the suite checks (killed), 4 are
/// equivalent rewrites (must survive).
const MUTANTS: &[(&str, &str, &str, &str)] = &[
    (
        "name-length",
        "if len(name) > MAX_NAME:",
        "if False:",
        "killed",
    ),
    (
        "path-dotdot",
        r#"if ".." in p.split("/"):"#,
        "if False:",
        "killed",
    ),
    (
        "tool-allowlist",
        r#"return tool in ("read", "list")"#,
        "return True",
        "killed",
    ),
    (
        "redaction",
        r#"text.replace("secret", "******")"#,
        "text",
        "killed",
    ),
    (
        "name-ident-eq",
        "if not name.isidentifier():",
        "if not (name.isidentifier()):",
        "survived",
    ),
    (
        "abs-path-eq",
        r#"if p.startswith("/"):"#,
        r#"if p[:1] == "/":"#,
        "survived",
    ),
    (
        "audit-note-eq",
        r#"note = f"event: {event}""#,
        r#"note = "event: " + str(event)"#,
        "survived",
    ),
    (
        "max-name-eq",
        "MAX_NAME = 32",
        "MAX_NAME = 16 * 2",
        "survived",
    ),
];

/// A ninth mutant for [`a_supervisor_killed_mid_run_leaves_nothing_behind`]:
/// its suite starts its daemon, then SIGKILLs its own supervisor (it dies
/// of that signal: wrong-reason).
const SUPERVISOR_KILLER: (&str, &str, &str, &str) = (
    "supervisor-killed",
    "KILL_SUPERVISOR = False",
    "KILL_SUPERVISOR = True",
    "wrong-reason",
);

/// The mutants in spec order; the supervisor killer first, so that later
/// runs on its worker would meet its daemon.
fn mutants(kill_supervisor: bool) -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
    let mut m = MUTANTS.to_vec();
    if kill_supervisor {
        m.insert(0, SUPERVISOR_KILLER);
    }
    m
}

fn spec(base_port: u16, mark: &str, kill_supervisor: bool) -> String {
    SpecBuilder::new("python3 run_tests.py")
        .preset("generic")
        .timeout("60s")
        .env("LEAK_BASE_PORT", &base_port.to_string())
        .env("LEAK_MARK", mark)
        .mutations(
            mutants(kill_supervisor)
                .into_iter()
                .map(|(id, f, r, _)| mutation(id, "guard.py", f, r)),
        )
        .build()
}

fn expected(kill_supervisor: bool) -> BTreeMap<String, String> {
    mutants(kill_supervisor)
        .iter()
        .map(|(id, _, _, v)| (id.to_string(), v.to_string()))
        .collect()
}

fn fixture(base_port: u16, mark: &str, kill_supervisor: bool) -> Fixture {
    Fixture::git(&[
        ("guard.py", GUARD_PY),
        ("test_guard.py", TEST_GUARD_PY),
        ("run_tests.py", RUN_TESTS_PY),
        ("unguard.yaml", &spec(base_port, mark, kill_supervisor)),
    ])
}

/// Whether unguard, run by this user, may create a cgroup below its own
/// (what `--isolation auto` tries): checked the same way, by creating one.
fn cgroup_available() -> bool {
    let Ok(cgroups) = std::fs::read_to_string("/proc/self/cgroup") else {
        return false;
    };
    let Some(own) = cgroups.lines().find_map(|l| l.strip_prefix("0::")) else {
        return false;
    };
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let Some(dir) = mounts.lines().find_map(|l| {
        let (m, fs) = l.split_once(" - ")?;
        (fs.split_whitespace().next()? == "cgroup2").then(|| {
            let f: Vec<&str> = m.split_whitespace().collect();
            let rel = Path::new(own).strip_prefix(f[3]).ok()?;
            Some(Path::new(f[4]).join(rel))
        })?
    }) else {
        return false;
    };
    let probe = dir.join(format!("ug-test-probe-{}", std::process::id()));
    if std::fs::create_dir(&probe).is_err() {
        return false;
    }
    let usable = probe.join("cgroup.kill").exists();
    let _ = std::fs::remove_dir(&probe);
    usable
}

/// The per-run cgroups (`unguard-<pid>-<n>`) of unguard processes that
/// have exited: left behind (must be none).
fn leftover_cgroups() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"] {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = name
                .strip_prefix("unguard-")
                .and_then(|n| n.split('-').next())
                .and_then(|p| p.parse::<u32>().ok());
            if pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists()) {
                out.push(format!("{dir}/{name}"));
            }
        }
    }
    out
}

/// Run unguard at `-j jobs` into `out` and return its verdicts, after
/// checking that no daemon is left.
fn run_at(
    fx: &Fixture,
    mark: &str,
    jobs: &str,
    out: &str,
    extra: &[&str],
    mode: Option<&str>,
    want: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut args = vec!["run", "-j", jobs, "--out", out];
    args.extend_from_slice(extra);
    let mut cmd = fx.unguard(&args);
    cmd.env("UNGUARD_NETWORK_ISOLATION", "off");
    // The mode through the environment: an older unguard without the flag
    // still runs (and shows what it does wrong).
    if let Some(mode) = mode {
        cmd.env("UNGUARD_ISOLATION", mode);
    }
    let output = cmd.output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let (code, o, e) = (
        output.status.code().unwrap_or(-1),
        text(&output.stdout),
        text(&output.stderr),
    );
    assert_eq!(
        &fx.verdicts(out),
        want,
        "-j {jobs} {extra:?} {mode:?}: a daemon of an earlier run answered (false kill)?\n{}",
        ctx(code, &o, &e)
    );
    assert_eq!(code, 2, "survivors fail the gate: {}", ctx(code, &o, &e));
    assert_no_processes(mark, &format!("after the run at -j {jobs} {extra:?}"));
    v_ok(fx, out);
    fx.verdicts(out)
}

/// No log shows a server of an earlier run answering.
fn v_ok(fx: &Fixture, out: &str) {
    for e in std::fs::read_dir(fx.path().join(out)).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".log") {
            let log = std::fs::read_to_string(e.path()).unwrap_or_default();
            assert!(
                !log.contains("a server of an earlier run answered"),
                "{name}: a daemon of an earlier run answered:\n{log}"
            );
        }
    }
}

/// The `# isolation:` line of every log in `out`, by log name.
fn isolation_lines(fx: &Fixture, out: &str) -> BTreeMap<String, String> {
    let mut lines = BTreeMap::new();
    for e in std::fs::read_dir(fx.path().join(out)).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".log") {
            continue;
        }
        let log = std::fs::read_to_string(e.path()).unwrap_or_default();
        let line = log
            .lines()
            .find(|l| l.starts_with("# isolation:"))
            .unwrap_or_else(|| panic!("{name}: no isolation line:\n{log}"));
        lines.insert(name, line.to_string());
    }
    assert!(lines.contains_key("@baseline.log"), "{lines:?}");
    lines
}

/// The `# isolation:` line of a mutant's log.
fn isolation_line(fx: &Fixture, out: &str) -> String {
    isolation_lines(fx, out)["name-length.log"].clone()
}

/// `mode` forced through `UNGUARD_ISOLATION` at -j 2 (into `out2`), through
/// `--isolation` at -j 1 (into `out1`): the same right table both times.
fn run_forced(fx: &Fixture, mark: &str, mode: &str) {
    let want = expected(false);
    let j2 = run_at(fx, mark, "2", "out2", &[], Some(mode), &want);
    let j1 = run_at(fx, mark, "1", "out1", &["--isolation", mode], None, &want);
    assert_eq!(j1, j2, "-j 1 and -j 2 differ");
}

#[test]
fn at_j2_a_daemon_of_an_earlier_run_never_answers_under_auto_isolation() {
    let mark = marker("leak_auto");
    let fx = fixture(47100, &mark, false);
    let j2 = run_at(&fx, &mark, "2", "out2", &[], None, &expected(false));
    let j1 = run_at(&fx, &mark, "1", "out1", &[], None, &expected(false));
    assert_eq!(j1, j2, "-j 1 and -j 2 differ");
    // The first run (the baseline) is in a cgroup where one can be made;
    // auto drops them once joining one proves slow, and says so.
    let lines = isolation_lines(&fx, "out2");
    let cgroups = cgroup_available();
    for (name, line) in &lines {
        assert!(
            line.contains("supervisor (child subreaper)"),
            "{name}: {line}"
        );
        if !cgroups {
            assert!(!line.contains("cgroup"), "{name}: {line}");
        } else if !line.contains(" in cgroup /") {
            assert!(
                line.contains("no cgroup: joining one took"),
                "{name}: {line}"
            );
        }
    }
    if cgroups {
        assert!(lines["@baseline.log"].contains(" in cgroup /"), "{lines:?}");
        assert!(leftover_cgroups().is_empty(), "{:?}", leftover_cgroups());
    } else {
        eprintln!("no writable cgroup v2 here: auto ran the supervisor alone");
    }
    assert!(fx.leftover_tmp().is_empty());
}

#[test]
fn at_j2_a_daemon_of_an_earlier_run_never_answers_in_per_run_cgroups() {
    let mark = marker("leak_cgroup");
    let fx = fixture(47200, &mark, false);
    run_forced(&fx, &mark, "cgroup");
    let cgroups = cgroup_available();
    for out in ["out2", "out1"] {
        for (name, line) in isolation_lines(&fx, out) {
            assert!(
                line.contains("supervisor (child subreaper)"),
                "{name}: {line}"
            );
            assert_eq!(line.contains(" in cgroup /"), cgroups, "{name}: {line}");
        }
    }
    if cgroups {
        assert!(leftover_cgroups().is_empty(), "{:?}", leftover_cgroups());
    } else {
        eprintln!("no writable cgroup v2 here: --isolation cgroup ran the supervisor alone");
    }
}

#[test]
fn at_j2_a_daemon_of_an_earlier_run_never_answers_under_the_forced_subreaper() {
    let mark = marker("leak_subreaper");
    let fx = fixture(47120, &mark, false);
    run_forced(&fx, &mark, "subreaper");
    for out in ["out2", "out1"] {
        for (name, line) in isolation_lines(&fx, out) {
            assert_eq!(line, "# isolation: supervisor (child subreaper)", "{name}");
        }
    }
}

#[test]
fn at_j2_a_daemon_of_an_earlier_run_never_answers_as_a_non_root_user() {
    if !euid_is_root() {
        skip::not_here("not root, cannot run unguard as another uid");
        return;
    }
    let mark = marker("leak_nobody");
    let fx = fixture(47140, &mark, false);
    // `nobody` must read the fixture and write the output and TMPDIR; the
    // build dir may sit below a directory it cannot enter: run a copy.
    for d in [fx.path(), fx.tmp.path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let status = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(fx.path())
        .status()
        .unwrap();
    assert!(status.success());
    let bin = fx.tmp.path().join("unguard-bin");
    std::fs::copy(assert_cmd::cargo::cargo_bin("unguard"), &bin).unwrap();
    let mut c = std::process::Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&bin)
        .args(["run", "-j", "2", "--out", "out"])
        .current_dir(fx.path())
        .env("UNGUARD_NETWORK_ISOLATION", "off")
        .env("TMPDIR", fx.tmp.path())
        .env("HOME", fx.tmp.path())
        .env_remove("GITHUB_STEP_SUMMARY");
    let (code, out, err, _) = spawn(c).wait(Duration::from_secs(600));
    assert_eq!(
        fx.verdicts("out"),
        expected(false),
        "as uid 65534: a daemon of an earlier run answered (false kill)?\n{}",
        ctx(code, &out, &err)
    );
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    assert_no_processes(&mark, "after the run as uid 65534");
    v_ok(&fx, "out");
    let line = isolation_line(&fx, "out");
    assert!(line.contains("supervisor (child subreaper)"), "{line}");
    let _ = std::fs::remove_file(&bin);
}

/// A suite that SIGKILLs its own supervisor after starting its daemon: the
/// daemon is reparented to unguard, and the nets behind the supervisor (the
/// run's cgroup; unguard's own subreaper, which may kill such orphans at
/// once while every running suite is supervised) must still end it before
/// any later run on that worker starts. Under each mechanism, at -j 2.
#[test]
fn a_supervisor_killed_mid_run_leaves_nothing_behind() {
    let mark = marker("leak_killed_sup");
    let fx = fixture(47160, &mark, true);
    let want = expected(true);
    let cgroup = run_at(&fx, &mark, "2", "cgroup", &[], Some("cgroup"), &want);
    let sub = run_at(&fx, &mark, "2", "sub", &[], Some("subreaper"), &want);
    assert_eq!(cgroup, sub);
    let log = fx.read("cgroup/supervisor-killed.log");
    assert!(log.contains("killing the supervisor"), "{log}");
    assert!(log.contains("killed by signal 9"), "{log}");
    assert!(leftover_cgroups().is_empty(), "{:?}", leftover_cgroups());
}

/// unguard itself SIGKILLed mid-run (an OOM kill, a CI runner's timeout):
/// no cleanup code of its own runs, yet each supervisor sees its control
/// socket close and kills its subtree, the daemon included. The cgroup it
/// left is removed by the next unguard.
#[test]
fn when_unguard_is_sigkilled_its_runs_die_with_it() {
    let mark = marker("leak_ug_killed");
    let port = 47180;
    let run_py = format!(
        r#"import os, socket, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        code = "import socket, time; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', {port})); s.listen(4); time.sleep(300)"
        os.execve(sys.executable, [sys.executable, "-c", code, "{mark}"], {{}})
    os._exit(0)
os.wait()
time.sleep(300)
"#
    );
    let spec = format!(
        "version: 1\ntest:\n  command: [python3, run.py, {mark}]\n  preset: generic\n  timeout: 300s\nmutations:\n  - id: m\n    control: c\n    file: m.txt\n    find: ok\n    replace: BAD\n"
    );
    let fx = Fixture::git(&[
        ("run.py", &run_py),
        ("m.txt", "ok\n"),
        ("unguard.yaml", &spec),
    ]);
    let mut ug = spawn(fx.unguard(&["run", "-j", "1", "--out", "out"]));
    // The baseline's daemon is up: its suite sleeps now.
    assert!(
        eventually(Duration::from_secs(60), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        }),
        "the daemon never listened"
    );
    assert!(
        processes_matching(&mark).len() >= 2,
        "the suite and its daemon run"
    );
    ug.child.kill().unwrap();
    ug.child.wait().unwrap();
    assert_no_processes(&mark, "after unguard was SIGKILLed");
    // The next unguard removes the cgroup the killed one left behind.
    if cgroup_available() {
        let next = Fixture::git(&[
            ("m.txt", "ok\n"),
            (
                "unguard.yaml",
                "version: 1\ntest:\n  command: \"grep -q ok m.txt\"\nmutations:\n  - id: m\n    control: c\n    file: m.txt\n    find: ok\n    replace: BAD\n",
            ),
        ]);
        let (code, o, e) = next.run(&["run", "-j", "1", "--out", "out"]);
        assert_eq!(code, 0, "{}", ctx(code, &o, &e));
        assert!(leftover_cgroups().is_empty(), "{:?}", leftover_cgroups());
    }
}

/// The supervisor exits as its command did, for a reader without its
/// report: the same exit code, the same signal (SIGKILL, and SIGSEGV, for
/// which Rust keeps a handler of its own), and 127 with the message on
/// stderr when the command cannot start.
#[test]
fn the_supervisor_exits_as_its_command_did() {
    use std::os::unix::process::ExitStatusExt;
    let supervise = |script: &str| {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("unguard"))
            .args(["__supervise", "--grace", "1", "--", "sh", "-c", script])
            .output()
            .unwrap()
    };
    for code in [0, 1, 3, 42] {
        let out = supervise(&format!("exit {code}"));
        assert_eq!(out.status.code(), Some(code), "{out:?}");
    }
    for (sig, name) in [(9, "KILL"), (11, "SEGV"), (6, "ABRT")] {
        let out = supervise(&format!("kill -{name} $$"));
        assert_eq!(out.status.signal(), Some(sig), "{name}: {out:?}");
    }
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("unguard"))
        .args(["__supervise", "--", "ug-no-such-binary-xyz"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("could not start `ug-no-such-binary-xyz`"),
        "{err}"
    );
    // Output passes through: the command's stdout is the supervisor's.
    let out = supervise("echo through; echo err >&2");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "through\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "err\n");
}
