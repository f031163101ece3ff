//! Running a test command: under its own supervisor, in its own process
//! group, stdin from /dev/null, output to a log file, a timeout that kills
//! the whole process tree.

pub mod capture;
pub mod child_env;
pub mod isolation;
pub mod platform;
pub mod reaper;
pub mod shell;
pub mod shell_line;
pub mod supervise;

use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::run::capture::Capture;
use crate::run::child_env::ChildEnv;
use crate::run::isolation::{Cgroup, Setup};
use crate::run::platform::Signal;
use crate::run::reaper::RUN_TOKEN_VAR;
use crate::run::supervise::End;
use crate::spec::Command;

/// Grace period between SIGTERM and SIGKILL for a process group, unless
/// `UNGUARD_KILL_GRACE` (seconds) says otherwise.
pub const KILL_GRACE: Duration = Duration::from_secs(2);

fn kill_grace() -> Duration {
    std::env::var("UNGUARD_KILL_GRACE")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
        .unwrap_or(KILL_GRACE)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// The command exited with this code.
    Code(i32),
    /// The command was killed by this signal (not by unguard).
    Signal(i32),
    /// unguard killed it at the timeout.
    Timeout,
    /// unguard killed it because the run was interrupted (Ctrl-C / SIGTERM).
    Interrupted,
    /// The command could not be started at all.
    SpawnFailed(String),
}

impl Exit {
    pub fn describe(&self) -> String {
        match self {
            Exit::Code(c) => format!("exit code {c}"),
            Exit::Signal(s) => format!("killed by signal {s}"),
            Exit::Timeout => "timed out (process group killed)".into(),
            Exit::Interrupted => "interrupted".into(),
            Exit::SpawnFailed(e) => format!("could not start: {e}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct RunResult {
    pub exit: Exit,
    pub duration: Duration,
}

/// What to run and where.
pub struct Invocation<'a> {
    pub command: &'a Command,
    pub cwd: &'a Path,
    /// unguard's own environment with these changes (see [`crate::run::child_env`]).
    pub env: ChildEnv,
    /// Placeholders like `{junit}` → value, expanded in the command.
    pub substitutions: Vec<(&'static str, String)>,
    pub log: &'a Path,
    pub timeout: Duration,
    /// One line for the log header (what this run is).
    pub label: String,
}

fn expand(text: &str, subs: &[(&'static str, String)], quote: bool) -> String {
    let mut out = text.to_string();
    for (key, value) in subs {
        let v = if quote {
            shell::quote(value)
        } else {
            value.clone()
        };
        out = out.replace(key, &v);
    }
    out
}

/// The argv that will be executed.
pub fn argv(command: &Command, subs: &[(&'static str, String)]) -> Vec<String> {
    match command {
        Command::Shell(s) => vec!["sh".into(), "-c".into(), expand(s, subs, true)],
        Command::Argv(v) => v.iter().map(|a| expand(a, subs, false)).collect(),
    }
}

/// Signal the suite's process group. `pgid` is the pid of a child we
/// spawned as a group leader; Linux does not reuse a pid while a process
/// group with that id still exists.
fn signal_group(pgid: i32, sig: Signal) {
    if pgid > 0 {
        let _ = platform::kill_group(pgid, sig);
    }
}

/// Run the invocation to completion, timeout or cancellation. Never leaves a
/// process of the run alive: the command runs under its own supervisor
/// ([`crate::run::isolation`]), which kills everything the command started when
/// its leader exits; after that the group, the run token and the run's
/// cgroup are swept too.
pub async fn run(inv: Invocation<'_>, mut cancel: watch::Receiver<bool>) -> RunResult {
    let started = Instant::now();
    let argv = argv(inv.command, &inv.substitutions);
    let failed = |msg: String| RunResult {
        exit: Exit::SpawnFailed(msg),
        duration: started.elapsed(),
    };
    let setup = Setup::prepare();
    let mut log = match open_log(&inv, &argv, &setup) {
        Ok(f) => f,
        Err(msg) => return failed(msg),
    };
    let token = reaper::new_run_token();
    let (mut child, capture, supervised) = match spawn(&inv, &argv, &token, &log, setup) {
        Ok(spawned) => spawned,
        Err(msg) => {
            let _ = writeln!(log, "# unguard: could not start {msg}");
            return failed(msg);
        }
    };
    let capture = capture.unwrap_or_else(|e| {
        let _ = writeln!(log, "# unguard: cannot read the suite's output: {e}");
        None
    });
    if let Some(note) = &supervised.note {
        let _ = writeln!(log, "# unguard: {note}");
    }
    let pgid = child.id().map(|p| p as i32).unwrap_or(0);
    // From here on, even a panic (unwinding through this frame) kills the
    // run's processes and removes its cgroup.
    let guard = RunGuard {
        pgid,
        token: token.clone(),
        control: supervised.control,
        cgroup: supervised.cgroup,
        armed: true,
    };
    let mut exit = wait(
        &mut child,
        pgid,
        guard.supervised(),
        inv.timeout,
        &mut cancel,
    )
    .await;
    // The supervisor has exited: its report says how the command ended.
    let report = guard.control.as_ref().and_then(isolation::read_report);
    if let Some(us) = report.as_ref().and_then(|r| r.joined_us) {
        isolation::note_join(Duration::from_micros(us));
    }
    if let (Some(r), Exit::Code(_) | Exit::Signal(_)) = (&report, &exit) {
        exit = match &r.end {
            Some(End::Code(c)) => Exit::Code(*c),
            Some(End::Signal(s)) => Exit::Signal(*s),
            Some(End::SpawnFailed(m)) => Exit::SpawnFailed(m.clone()),
            None => exit,
        };
    }
    test_hook_panic(&inv.label);
    // Whatever is left in the group goes too, and so does anything that
    // escaped the group but still carries the token, anything left in the
    // cgroup, and (when no other suite runs) any orphan reparented to unguard.
    let duration = started.elapsed();
    let swept = guard.finish().await;
    let captured = match capture {
        Some(c) => c.finish().await,
        None => Default::default(),
    };
    let escaped = swept + report.as_ref().map_or(0, |r| r.escaped);
    let notes = report.and_then(|r| r.cgroup_error).map(|e| {
        format!("the supervisor could not join the run's cgroup ({e}); it attributed the run's processes alone")
    });
    if let Exit::SpawnFailed(m) = &exit {
        let _ = writeln!(log, "# unguard: could not start {m}");
    }
    write_footer(&mut log, captured, escaped, notes, &exit, duration);
    RunResult { exit, duration }
}

/// Create the log and write its header: what runs, where, under which
/// timeout and isolation, and which inherited variables were rewritten to
/// the copy or dropped (names only: values may be secrets).
fn open_log(inv: &Invocation<'_>, argv: &[String], setup: &Setup) -> Result<std::fs::File, String> {
    let mut log = std::fs::File::create(inv.log)
        .map_err(|e| format!("cannot create log {}: {e}", inv.log.display()))?;
    let _ = writeln!(
        log,
        "# unguard: {}\n# cwd: {}\n# timeout: {:.1}s\n# isolation: {}\n{}$ {}\n",
        inv.label,
        inv.cwd.display(),
        inv.timeout.as_secs_f64(),
        setup.describe(),
        inv.env
            .describe()
            .map_or(String::new(), |d| format!("# environment: {d}\n")),
        match inv.command {
            Command::Shell(_) => argv[2].clone(),
            Command::Argv(_) => argv.join(" "),
        }
    );
    Ok(log)
}

/// How a run was started: its supervisor's control socket and its cgroup
/// (both `None` when spawned directly), and a note for the log.
struct Supervised {
    control: Option<UnixStream>,
    cgroup: Option<Cgroup>,
    note: Option<String>,
}

type Spawned = (
    tokio::process::Child,
    std::io::Result<Option<Capture>>,
    Supervised,
);

/// Start the suite (under its supervisor, see [`Setup`]) in its own process
/// group, registered with the reaper, stdout and stderr on one pipe read
/// into `log`. The capture may fail on its own (the suite still runs,
/// uncaptured). If the supervisor cannot be started, the suite is started
/// directly.
fn spawn(
    inv: &Invocation<'_>,
    argv: &[String],
    token: &str,
    log: &std::fs::File,
    setup: Setup,
) -> Result<Spawned, String> {
    // stdout and stderr share one pipe, read into the log with a size cap.
    let (pipe, log_for_capture) = match (capture::pipe(), log.try_clone()) {
        (Ok(p), Ok(l)) => (p, l),
        (Err(e), _) | (_, Err(e)) => return Err(format!("(setting up the output pipe: {e})")),
    };
    let mut note = None;
    let args = setup.supervisor_args(argv, kill_grace());
    let (child, control, cgroup) = match setup.control {
        Some((ours, theirs)) => {
            let mut cmd = command(
                inv,
                token,
                isolation::self_exe(),
                &args,
                &pipe.write,
                Stdio::from(theirs),
            )?;
            cmd.arg0("unguard");
            let registry_handle = ours.try_clone().ok();
            let cg = setup.cgroup.as_ref().map(|c| c.dir().to_path_buf());
            match reaper::spawn_registered(&mut cmd, token, registry_handle, cg) {
                Ok(child) => (child, Some(ours), setup.cgroup),
                Err(e) => {
                    note = Some(format!(
                        "could not start the supervisor ({e}); the suite runs without it"
                    ));
                    drop(setup.cgroup);
                    let mut cmd =
                        command(inv, token, &argv[0], &argv[1..], &pipe.write, Stdio::null())?;
                    let child = reaper::spawn_registered(&mut cmd, token, None, None);
                    (
                        child.map_err(|e| format!("`{}`: {e}", argv[0]))?,
                        None,
                        None,
                    )
                }
            }
        }
        None => {
            let mut cmd = command(inv, token, &argv[0], &argv[1..], &pipe.write, Stdio::null())?;
            let child = reaper::spawn_registered(&mut cmd, token, None, None);
            (
                child.map_err(|e| format!("`{}`: {e}", argv[0]))?,
                None,
                None,
            )
        }
    };
    // unguard's copy of the pipe's write end goes here (the commands' copies
    // went with them), so the pipe reaches EOF when the suite's processes
    // close theirs.
    drop(pipe.write);
    let capture = Capture::start(pipe.read, log_for_capture).map(Some);
    Ok((
        child,
        capture,
        Supervised {
            control,
            cgroup,
            note,
        },
    ))
}

/// The command: `program args…` in the run's cwd and environment (plus
/// the run token), in a new process group, stdout and stderr on copies of
/// `out`.
fn command(
    inv: &Invocation<'_>,
    token: &str,
    program: &str,
    args: &[String],
    out: &OwnedFd,
    stdin: Stdio,
) -> Result<tokio::process::Command, String> {
    let dup = || {
        out.try_clone()
            .map_err(|e| format!("(duplicating the pipe: {e})"))
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .current_dir(inv.cwd)
        .stdin(stdin)
        .stdout(Stdio::from(dup()?))
        .stderr(Stdio::from(dup()?))
        .process_group(0)
        .kill_on_drop(true);
    for k in &inv.env.remove {
        cmd.env_remove(k);
    }
    for (k, v) in &inv.env.set {
        cmd.env(k, v);
    }
    cmd.env(RUN_TOKEN_VAR, token);
    Ok(cmd)
}

/// Wait for the suite to exit, or terminate its group at the timeout or
/// when the run is cancelled.
async fn wait(
    child: &mut tokio::process::Child,
    pgid: i32,
    supervised: bool,
    timeout: Duration,
    cancel: &mut watch::Receiver<bool>,
) -> Exit {
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    tokio::select! {
        status = child.wait() => match status {
            Ok(s) => status_to_exit(s),
            Err(e) => Exit::SpawnFailed(format!("waiting for the child: {e}")),
        },
        _ = &mut deadline => {
            terminate(child, pgid, supervised).await;
            Exit::Timeout
        }
        _ = wait_cancel(cancel) => {
            terminate(child, pgid, supervised).await;
            Exit::Interrupted
        }
    }
}

/// The log's last lines: what unguard cut or killed, and how the run ended.
fn write_footer(
    log: &mut std::fs::File,
    captured: capture::Captured,
    escaped: usize,
    notes: Option<String>,
    exit: &Exit,
    duration: Duration,
) {
    if captured.cut_off {
        let _ = writeln!(
            log,
            "\n# unguard: a process outside the suite's reach still held its output open; stopped reading"
        );
    }
    if let Some(note) = notes {
        let _ = writeln!(log, "\n# unguard: {note}");
    }
    if escaped > 0 {
        let _ = writeln!(
            log,
            "\n# unguard: killed {escaped} process(es) the suite left running outside its process group"
        );
    }
    let _ = writeln!(
        log,
        "\n# unguard: {} after {:.2}s",
        exit.describe(),
        duration.as_secs_f64()
    );
}

/// Cleans up after a suite: on [`RunGuard::finish`], or on drop if a panic
/// unwinds past the run.
struct RunGuard {
    pgid: i32,
    token: String,
    /// unguard's end of the supervisor's control socket.
    control: Option<UnixStream>,
    cgroup: Option<Cgroup>,
    armed: bool,
}

impl RunGuard {
    fn supervised(&self) -> bool {
        self.control.is_some()
    }

    /// SIGKILL the group, forget it, empty and remove the run's cgroup,
    /// kill escaped processes, then kill and reap orphans (when no other
    /// suite runs); returns how many processes were found outside the
    /// supervisor's reach. On a blocking thread: the sweep and the reaping
    /// sleep.
    async fn finish(mut self) -> usize {
        self.armed = false;
        let (pgid, token) = (self.pgid, std::mem::take(&mut self.token));
        let cgroup = self.cgroup.take();
        let cleanup = move || {
            signal_group(pgid, Signal::Kill);
            reaper::unregister(pgid);
            let in_cgroup = cgroup.map_or(0, |c| c.finish(pgid));
            in_cgroup + reaper::sweep_token(&token) + reaper::reap_orphans()
        };
        match tokio::task::spawn_blocking(cleanup).await {
            Ok(n) => n,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => 0,
        }
    }
}

impl Drop for RunGuard {
    /// A panic is unwinding past the run: clean up right here (blocking).
    /// The supervisor, told to stop (its control socket shut down), kills
    /// its subtree at once; then the group, the token and the cgroup.
    fn drop(&mut self) {
        if self.armed {
            if let Some(c) = &self.control {
                let _ = c.shutdown(std::net::Shutdown::Both);
                isolation::await_exit(self.pgid, Duration::from_secs(2));
            }
            signal_group(self.pgid, Signal::Kill);
            reaper::unregister(self.pgid);
            drop(self.cgroup.take());
            reaper::sweep_token(&self.token);
        }
    }
}

/// For unguard's own tests of its panic handling: `UNGUARD_TEST_PANIC_IN=ID`
/// makes the run of mutant `ID` (`@baseline`: of every baseline) panic
/// after its suite finished, before the suite's processes are cleaned up
/// (the worst moment).
fn test_hook_panic(label: &str) {
    if let Ok(id) = std::env::var("UNGUARD_TEST_PANIC_IN") {
        let baseline = id == "@baseline" && label.starts_with("baseline of ");
        if baseline || !id.is_empty() && label.starts_with(&format!("mutant {id} (")) {
            panic!("UNGUARD_TEST_PANIC_IN={id}: deliberate panic for testing");
        }
    }
}

async fn wait_cancel(cancel: &mut watch::Receiver<bool>) {
    loop {
        if *cancel.borrow() {
            return;
        }
        if cancel.changed().await.is_err() {
            // Sender gone: never cancelled.
            std::future::pending::<()>().await;
        }
    }
}

/// How much longer than the grace unguard waits for a supervisor to finish
/// its own grace and clean-up before it SIGKILLs the group itself.
const SUPERVISOR_MARGIN: Duration = Duration::from_secs(2);

/// SIGTERM the group, give the whole group (not just its leader) the grace
/// period to run its handlers and exit, then SIGKILL what is left and reap
/// the leader. Under a supervisor (in the group, catching the SIGTERM) the
/// supervisor does the waiting and the killing of its whole subtree;
/// unguard only waits for it (and kills the group if it does not finish).
async fn terminate(child: &mut tokio::process::Child, pgid: i32, supervised: bool) {
    signal_group(pgid, Signal::Term);
    let grace = kill_grace();
    if supervised {
        let _ = tokio::time::timeout(grace + SUPERVISOR_MARGIN, child.wait()).await;
    } else {
        let deadline = Instant::now() + grace;
        let _ = tokio::time::timeout(grace, child.wait()).await;
        while Instant::now() < deadline && platform::group_alive(pgid) {
            // Members whose parent died were reparented to unguard: reap the
            // dead ones, or they would keep the group "alive" as zombies.
            reaper::reap_orphans_async().await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    signal_group(pgid, Signal::Kill);
    let _ = child.wait().await;
}

fn status_to_exit(s: std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => Exit::Code(c),
        (None, Some(sig)) => Exit::Signal(sig),
        _ => Exit::Code(-1),
    }
}

/// The last `n` lines of a log file (for error messages).
pub fn log_tail(path: &Path, n: usize) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_expands_placeholders() {
        let subs = vec![("{junit}", "/tmp/j 1.xml".to_string())];
        let a = argv(&Command::Shell("pytest --junitxml={junit}".into()), &subs);
        assert_eq!(a, vec!["sh", "-c", "pytest --junitxml='/tmp/j 1.xml'"]);
        let a = argv(
            &Command::Argv(vec!["pytest".into(), "--junitxml={junit}".into()]),
            &subs,
        );
        assert_eq!(a, vec!["pytest", "--junitxml=/tmp/j 1.xml"]);
    }
}
