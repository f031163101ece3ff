//! A run's own network (`--network-isolation`): where the kernel lets an
//! unprivileged process make one, a suite run can get a network namespace
//! of its own, holding only a loopback device ([`crate::run::platform::netns`];
//! the supervisor enters it before it starts the command, so the command
//! and everything it starts are in it). Two runs on the same fixed port of
//! `127.0.0.1` cannot collide then, and a confirmation need not stop the
//! other workers to rule that out (`src/engine/job.rs`).
//!
//! It is never assumed: [`available`] starts one supervisor in a namespace
//! once per process and says why not where it fails, and the engine uses it
//! for a test command only once that command's baseline gave the same
//! result inside as outside (a suite that needs the outside network, or
//! that skips tests without it, keeps the shared network: the namespace
//! must not change the outcome of the user's command).

use std::process::Stdio;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use crate::run::{isolation, platform, supervise};

/// `--network-isolation`: whether suite runs may get their own network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NetworkIsolation {
    /// A network namespace per run for every test command whose baseline
    /// is the same inside one as outside, where the machine allows it.
    #[default]
    Auto,
    /// Every run shares the machine's network (as before).
    Off,
}

static MODE: AtomicU8 = AtomicU8::new(0);

/// Set the mode for every run this process makes from now on.
pub fn set_mode(mode: NetworkIsolation) {
    MODE.store(mode as u8, Ordering::Relaxed);
}

/// The mode set last (auto by default).
pub fn mode() -> NetworkIsolation {
    match MODE.load(Ordering::Relaxed) {
        0 => NetworkIsolation::Auto,
        _ => NetworkIsolation::Off,
    }
}

/// Whether runs can get their own network here: `Err` says why not (the
/// mode is off, no supervisor on this platform, or the kernel refused the
/// namespace: the probe's message). The probe runs once per process: a
/// supervisor in its own namespace starting unguard's own `--version`.
pub fn available() -> Result<(), String> {
    if mode() == NetworkIsolation::Off {
        return Err("--network-isolation off".into());
    }
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE.get_or_init(probe).clone()
}

fn probe() -> Result<(), String> {
    if !platform::SUPERVISOR {
        return Err("no per-run supervisor on this platform".into());
    }
    let exe = isolation::self_exe();
    let out = std::process::Command::new(exe)
        .args([supervise::SUBCOMMAND, "--grace", "0", "--netns", "--", exe])
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("could not start a supervisor to try one: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
    Err(if said.is_empty() {
        format!(
            "a supervisor in its own network namespace ended with {}",
            out.status
        )
    } else {
        said.replace("unguard __supervise: could not start ", "")
    })
}
