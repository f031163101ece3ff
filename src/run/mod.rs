//! Running a test command: under its own supervisor, in its own process
//! group, stdin from /dev/null, output to a log file, a timeout that kills
//! the whole process tree.
//!
//! [`run`] is the one entry: it expands the command, writes the log's
//! header and footer, and leaves the child's whole life (spawn, register
//! with the reaper, wait, kill the group, sweep) to [`child`], which calls
//! [`reaper`], [`isolation`] and [`platform`] as helpers.

pub mod capture;
pub mod child;
pub mod child_env;
pub mod isolation;
pub mod network;
pub mod platform;
pub mod reaper;
pub mod report_versions;
pub mod shell;
pub mod shell_line;
pub mod supervise;
pub mod warm;

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::run::child::{Child, Started};
use crate::run::child_env::ChildEnv;
use crate::run::isolation::Setup;
use crate::spec::Command;

/// How one run of a command ended.
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
    /// How it ended, in a few words for logs and details (`exit code 1`,
    /// `killed by signal 9`, `timed out (process group killed)`).
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

/// One finished run of a command.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// How it ended.
    pub exit: Exit,
    /// Wall-clock time from the start of the run until its command ended
    /// (or could not start).
    pub duration: Duration,
    /// It was forked from a warm interpreter (see [`warm`]); the client may
    /// still have started it cold (its log says so).
    pub forked: bool,
}

/// What to run and where.
pub struct Invocation<'a> {
    /// The command, before its placeholders are expanded.
    pub command: &'a Command,
    /// The directory it runs in (in the scratch copy).
    pub cwd: &'a Path,
    /// unguard's own environment with these changes (see [`crate::run::child_env`]).
    pub env: ChildEnv,
    /// Placeholders like `{junit}` → value, expanded in the command.
    pub substitutions: Vec<(&'static str, String)>,
    /// The run's log file: a header, then the command's output.
    pub log: &'a Path,
    /// How long the command may run before its process group is killed.
    pub timeout: Duration,
    /// One line for the log header (what this run is).
    pub label: String,
    /// Run it in a network namespace of its own ([`network`]); where that
    /// cannot be made, it does not run (a spawn failure), never shared.
    pub network: bool,
    /// Fork it from the worker's warm interpreter ([`warm`]) where it can;
    /// `None`: start it as written.
    pub warm: Option<warm::Warm>,
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

/// Run the invocation to completion, timeout or cancellation. Never leaves a
/// process of the run alive: the command runs under its own supervisor
/// ([`crate::run::isolation`]), which kills everything the command started when
/// its leader exits; after that the group, the run token and the run's
/// cgroup are swept too.
pub async fn run(inv: Invocation<'_>, mut cancel: watch::Receiver<bool>) -> RunResult {
    let argv = argv(inv.command, &inv.substitutions);
    // A warm run's leader is unguard's client; the fork lives in the warm
    // interpreter's network (the worker's own namespace where the runs get one).
    let (leader, warm_line) = match &inv.warm {
        Some(w) => match warm::prepare(w, &argv, inv.cwd, &inv.env).await {
            Ok((client, started)) => (
                Some(client),
                format!(
                    "forked from the worker's warm interpreter ({}){}",
                    w.describe(),
                    started.map_or(String::new(), |s| format!("; {s}"))
                ),
            ),
            Err(why) => (None, format!("started cold: {why}")),
        },
        None => (None, String::new()),
    };
    let forked = leader.is_some();
    // Starting (or asking) the worker's interpreter is unguard's cost, not the run's.
    let started = Instant::now();
    let failed = |msg: String| RunResult {
        exit: Exit::SpawnFailed(msg),
        duration: started.elapsed(),
        forked: false,
    };
    let setup = match Setup::prepare(inv.network && !forked) {
        Ok(s) => s,
        Err(msg) => {
            // The log still says what this run was and why it never started.
            if let Ok(mut log) = std::fs::File::create(inv.log) {
                let _ = writeln!(
                    log,
                    "# unguard: {}\n# unguard: could not start {msg}",
                    inv.label
                );
            }
            return failed(msg);
        }
    };
    let mut log = match open_log(&inv, &argv, &setup) {
        Ok(f) => f,
        Err(msg) => return failed(msg),
    };
    if !warm_line.is_empty() {
        let _ = writeln!(log, "# warm: {warm_line}");
    }
    let Started {
        mut child,
        capture,
        note,
    } = match Child::start(&inv, leader.as_deref().unwrap_or(&argv), &log, setup) {
        Ok(started) => started,
        Err(msg) => {
            let _ = writeln!(log, "# unguard: could not start {msg}");
            return failed(msg);
        }
    };
    let capture = capture.unwrap_or_else(|e| {
        let _ = writeln!(log, "# unguard: cannot read the suite's output: {e}");
        None
    });
    if let Some(note) = &note {
        let _ = writeln!(log, "# unguard: {note}");
    }
    let (exit, report) = child.wait(inv.timeout, &mut cancel).await;
    test_hook_panic(&inv.label);
    // Whatever is left in the group goes too, and so does anything that
    // escaped the group but still carries the token, anything left in the
    // cgroup, and (when no other suite runs) any orphan reparented to unguard.
    let duration = started.elapsed();
    let swept = child.finish().await;
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
    RunResult {
        exit,
        duration,
        forked,
    }
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

/// For unguard's own tests of its panic handling: `UNGUARD_TEST_PANIC_IN=ID`
/// makes the run of mutant `ID` (`@baseline`: of every baseline) panic
/// after its suite finished, before the suite's processes are cleaned up
/// (the worst moment). Compiled into debug builds only (the tests'): a
/// release build reads no such variable (.ci/run checks its binary).
#[cfg(debug_assertions)]
fn test_hook_panic(label: &str) {
    if let Ok(id) = std::env::var("UNGUARD_TEST_PANIC_IN") {
        let baseline = id == "@baseline" && label.starts_with("baseline of ");
        if baseline || !id.is_empty() && label.starts_with(&format!("mutant {id} (")) {
            panic!("UNGUARD_TEST_PANIC_IN={id}: deliberate panic for testing");
        }
    }
}

/// A release build has no test hook.
#[cfg(not(debug_assertions))]
fn test_hook_panic(_label: &str) {}

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
