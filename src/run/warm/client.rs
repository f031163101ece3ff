//! The hidden `__warm` subcommand: the leader of a warm run, in place of
//! the interpreter under the run's supervisor.
//!
//! `unguard __warm --socket S [--record F] [--set K=V]… --cold-argc N --
//! COMMAND… ARGS…` asks the warm interpreter at `S` to fork a child for
//! this run, handing it its stdin, stdout and stderr (`SCM_RIGHTS`), its
//! environment (with the command line's `K=V` assignments), working
//! directory, process group and cgroup, and `ARGS` (what follows `-m
//! MODULE` or the script). The child joins the run's process group (and
//! cgroup), so every kill of the run reaches it as it would reach the
//! interpreter; this process waits, catching the signals the group gets
//! (the child decides how the run ends), and then ends as the child did
//! (its exit code, or its signal). Where the interpreter refuses (it is
//! gone, a start-up variable differs, the fork could not join the group)
//! it runs the first `N` words, `COMMAND`, itself: the run goes cold,
//! never wrong.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};

/// The hidden subcommand.
pub const SUBCOMMAND: &str = "__warm";

/// What to ask for.
#[derive(Debug, Clone)]
pub struct Options {
    /// The warm interpreter's socket.
    pub socket: PathBuf,
    /// Where the child writes the modules it ended with (a baseline's run).
    pub record: Option<PathBuf>,
    /// The command line's own assignments, for the child's environment.
    pub set: Vec<(String, String)>,
    /// `argv[..cold_argc]` is the command as written (run when refused).
    pub cold_argc: usize,
    /// The command, then the interpreter's arguments.
    pub argv: Vec<String>,
}

/// Signals the run's process group may get: caught here (the child gets
/// them too and decides), reset by `exec` when the run goes cold.
const CAUGHT: &[i32] = &[
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGQUIT,
];

/// Run it; returns only the exit code (or never: a cold run `exec`s).
pub fn main(opts: Options) -> i32 {
    let caught = Arc::new(AtomicBool::new(false));
    for s in CAUGHT {
        let _ = signal_hook::flag::register(*s, Arc::clone(&caught));
    }
    let cold = opts.argv[..opts.cold_argc.min(opts.argv.len())].to_vec();
    match ask(&opts) {
        Ok(End::Exit(code)) => code,
        Ok(End::Signal(sig)) => {
            let _ = signal_hook::low_level::emulate_default_handler(sig);
            128 + sig
        }
        Ok(End::Lost) => {
            let _ = writeln!(
                std::io::stderr(),
                "\n# unguard: the warm interpreter ended before the run's child did"
            );
            128 + signal_hook::consts::SIGKILL
        }
        Err(why) => {
            let _ = writeln!(std::io::stderr(), "# unguard: ran cold ({why})");
            let Some((program, args)) = cold.split_first() else {
                return 127;
            };
            let e = std::process::Command::new(program).args(args).exec();
            let _ = writeln!(
                std::io::stderr(),
                "# unguard: could not start {program}: {e}"
            );
            127
        }
    }
}

/// How the forked child ended.
enum End {
    Exit(i32),
    Signal(i32),
    /// The interpreter closed the connection without saying.
    Lost,
}

fn ask(opts: &Options) -> Result<End, String> {
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    for (k, v) in std::env::vars_os() {
        match (k.into_string(), v.into_string()) {
            (Ok(k), Ok(v)) => {
                env.insert(k, v);
            }
            _ => return Err("a variable of the environment is not UTF-8".into()),
        }
    }
    env.extend(opts.set.iter().cloned());
    let cwd = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
    let cgroup = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|c| {
            c.lines()
                .find_map(|l| l.strip_prefix("0::"))
                .map(str::to_string)
        });
    let request = serde_json::json!({
        "args": &opts.argv[opts.cold_argc.min(opts.argv.len())..],
        "env": env,
        "cwd": cwd,
        "pgid": rustix::process::getpgrp().as_raw_nonzero().get(),
        "cgroup": crate::run::platform::cgroup2_own_dir(),
        "cgroup_rel": cgroup,
        "record": opts.record,
    });
    let body = serde_json::to_vec(&request).map_err(|e| e.to_string())?;
    let mut stream = UnixStream::connect(&opts.socket)
        .map_err(|e| format!("no warm interpreter at {}: {e}", opts.socket.display()))?;
    let mut message = u32::try_from(body.len())
        .map_err(|_| "request too large".to_string())?
        .to_be_bytes()
        .to_vec();
    message.extend_from_slice(&body);
    send_with_std_fds(&stream, &message)
        .map_err(|e| format!("cannot ask the warm interpreter: {e}"))?;
    let mut lines = BufReader::new(stream.try_clone().map_err(|e| e.to_string())?).lines();
    let _ = stream.flush();
    let mut started = false;
    loop {
        let line = match lines.next() {
            Some(Ok(l)) => l,
            Some(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Some(Err(e)) if !started => {
                return Err(format!("no answer from the warm interpreter: {e}"))
            }
            None if !started => return Err("the warm interpreter closed without an answer".into()),
            _ => return Ok(End::Lost),
        };
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if let Some(why) = v.get("refused").and_then(|r| r.as_str()) {
            return Err(format!("the warm interpreter refused: {why}"));
        }
        if v.get("started").is_some() {
            started = true;
            continue;
        }
        if let Some(n) = v
            .get("left")
            .and_then(serde_json::Value::as_u64)
            .filter(|n| *n > 0)
        {
            let _ = writeln!(
                std::io::stderr(),
                "\n# unguard: killed {n} process(es) the run left running (the warm interpreter adopts them)"
            );
        }
        if let Some(c) = v.get("exit").and_then(serde_json::Value::as_i64) {
            return Ok(End::Exit(i32::try_from(c).unwrap_or(1)));
        }
        if let Some(s) = v.get("signal").and_then(serde_json::Value::as_i64) {
            return Ok(End::Signal(i32::try_from(s).unwrap_or(9)));
        }
    }
}

/// Write `message`, its first part in one `sendmsg` with this process's
/// stdin, stdout and stderr attached.
fn send_with_std_fds(stream: &UnixStream, message: &[u8]) -> std::io::Result<()> {
    let (stdin, stdout, stderr) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
    let fds = [stdin.as_fd(), stdout.as_fd(), stderr.as_fd()];
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(3))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    control.push(SendAncillaryMessage::ScmRights(&fds));
    let sent = loop {
        match rustix::net::sendmsg(
            stream,
            &[std::io::IoSlice::new(message)],
            &mut control,
            SendFlags::empty(),
        ) {
            Ok(n) => break n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    };
    (&*stream).write_all(&message[sent..])
}
