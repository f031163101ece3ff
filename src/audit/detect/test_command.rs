//! The test command detection hands to a spec: which runner, the shell
//! command, how its results are read, and why and where it was found.
//! Shared by the guesses of [`crate::audit::detect`] and the project's own
//! command ([`crate::audit::detect::project_command`]).

use crate::spec::Command;

/// The test runner unguard will drive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runner {
    /// pytest (the JUnit report comes from `--junitxml`).
    Pytest,
    /// Python's unittest (no per-test report: exit code only).
    Unittest,
    /// A package.json script or a JavaScript runner (vitest, jest, mocha).
    Npm,
    /// `cargo test`.
    Cargo,
    /// `go test` (per-test results from `-json`).
    Go,
}

impl Runner {
    /// The runner as named in messages (`pytest`, `npm test`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Runner::Pytest => "pytest",
            Runner::Unittest => "unittest",
            Runner::Npm => "npm test",
            Runner::Cargo => "cargo test",
            Runner::Go => "go test",
        }
    }
}

/// The test command as it goes into a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCommand {
    /// Which runner the command drives.
    pub runner: Runner,
    /// The shell command, run from the target root.
    pub command: String,
    /// `{junit}` when the command writes a JUnit report there.
    pub junit: Option<String>,
    /// `pytest` or `generic` (which exit codes mean "tests failed").
    pub preset: crate::spec::Preset,
    /// Why this command (shown to the user).
    pub reason: String,
    /// The command that sets up the environment the repo declares but does
    /// not have (`uv sync`, `pnpm install`, …): said when the baseline is red.
    pub setup: Option<String>,
    /// Where the project itself runs this command (`file:line`, and
    /// `a → b` when one calls the other), when it was read, not guessed.
    pub from: Option<String>,
}

impl TestCommand {
    /// The command as a spec's `test.command` (a shell string).
    pub fn spec_command(&self) -> Command {
        Command::Shell(self.command.clone())
    }
}
