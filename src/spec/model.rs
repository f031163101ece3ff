//! The validated spec: what [`load`](super::load) returns and every later
//! stage reads.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::config::{Direction, GateConfig, Thresholds, TimeoutPolicy};
use crate::mutate::pattern::{Count, Pattern};

/// How the test command is started.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Command {
    /// Run through `sh -c`.
    Shell(String),
    /// Executed directly, no shell.
    Argv(Vec<String>),
}

impl Command {
    /// The command as one line for logs and messages (an argv joined by
    /// spaces, unquoted).
    pub fn display(&self) -> String {
        match self {
            Command::Shell(s) => s.clone(),
            Command::Argv(v) => v.join(" "),
        }
    }
}

/// Which exit codes of the test command mean "tests failed".
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FailCodes {
    /// Every non-zero exit counts as tests failed (generic runners).
    AnyNonZero,
    /// Only these codes; any other non-zero code is not a test failure.
    Only(Vec<i32>),
}

impl FailCodes {
    /// Whether exit code `code` means the tests failed.
    pub fn is_test_failure(&self, code: i32) -> bool {
        match self {
            FailCodes::AnyNonZero => code != 0,
            FailCodes::Only(codes) => codes.contains(&code),
        }
    }
}

/// Where `fail_codes` came from: a runner's preset, or the spec's own list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Preset {
    /// pytest: only exit 1 is "tests failed" (2–5 are usage, collection, no tests).
    Pytest,
    /// Any non-zero exit is "tests failed".
    Generic,
    /// `fail_codes` listed in the spec.
    Custom,
}

impl Preset {
    /// A preset by its name in the spec (`pytest` or `generic`).
    pub fn named(name: &str) -> Option<Preset> {
        match name {
            "pytest" => Some(Preset::Pytest),
            "generic" => Some(Preset::Generic),
            _ => None,
        }
    }

    /// The preset's name as the spec and a verdict's detail write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Pytest => "pytest",
            Preset::Generic => "generic",
            Preset::Custom => "custom",
        }
    }

    /// The exit codes this preset counts as test failures (`Custom` has
    /// none of its own: the spec lists them).
    pub fn fail_codes(self) -> FailCodes {
        match self {
            Preset::Pytest => FailCodes::Only(vec![1]),
            Preset::Generic | Preset::Custom => FailCodes::AnyNonZero,
        }
    }
}

impl std::fmt::Display for Preset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `test.timeout`: how long one run of the suite may take before its
/// process group is killed and the mutant counts as a `timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeoutSetting {
    /// `auto`: max(20 s, 5 × baseline duration).
    Auto,
    /// A duration the spec gives (`45s`).
    Fixed(Duration),
}

/// The effective test configuration for one mutant (global merged with overrides).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TestConfig {
    /// `test.command`: what runs the suite.
    pub command: Command,
    /// Where the command writes JUnit XML; may contain `{junit}`.
    pub junit: Option<String>,
    /// `test.timeout`: the limit on one run of the suite.
    pub timeout: TimeoutSetting,
    /// `test.env`: variables set for the command as given, never rewritten
    /// (see [`crate::run::child_env`]).
    pub env: BTreeMap<String, String>,
    /// Which exit codes mean the tests failed (from `preset` or
    /// `fail_codes`).
    pub fail_codes: FailCodes,
    /// The preset that set `fail_codes`.
    pub preset: Preset,
    /// Optional viability check run on each mutant before the suite.
    pub check: Option<Command>,
    /// `workspace.git`: which git repository the suite sees (the same for
    /// every test config of a spec).
    pub git: SuiteGit,
    /// `test.select`: how a subset of the tests is run (kill-first).
    pub select: Select,
}

/// `test.select`: how unguard runs a subset of the suite by test id, to try
/// the tests that can kill a mutant before the full suite.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum Select {
    /// Unset: the runner's own adapter, when unguard knows the runner
    /// (pytest, `python -m unittest`); else the full suite only.
    #[default]
    Auto,
    /// `off`: every mutant runs the full suite.
    Off,
    /// A command with `{tests}`: the selected test ids (JUnit form,
    /// `classname::name`), one argument each.
    Template(Command),
}

/// `workspace.git`: the git repository a suite sees in its copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SuiteGit {
    /// None: git finds no repository in the copy (the default).
    #[default]
    None,
    /// `private`: a fresh repository of the copy for each run, outside it
    /// (`GIT_DIR`, `GIT_WORK_TREE`), its one commit the copy as the run
    /// starts (the mutant included); see [`crate::run::child_env`].
    Private,
}

/// A source position inside a spec file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecPos {
    /// The spec (or included) file, as diagnostics name it.
    pub path: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub col: u64,
}

/// One validated entry of `mutations:`: where to change what, and what
/// should catch it.
#[derive(Debug, Clone)]
pub struct MutationSpec {
    /// `id:`: unique and stable; names the mutant's `.diff` and `.log`
    /// files.
    pub id: String,
    /// `control:`: the security control this mutation removes (trimmed,
    /// never empty).
    pub control: String,
    /// `rule:`: free text naming the rule behind the control, shown in
    /// reports.
    pub rule: Option<String>,
    /// `direction:` `loosen` or `tighten` (seed 002 rule 5), when declared.
    pub direction: Option<Direction>,
    /// Path relative to the target root, with `/` separators.
    pub file: String,
    /// `find:` or `regex:`: what to match in `file`.
    pub pattern: Pattern,
    /// `replace:`: what each match becomes, as the spec writes it.
    pub replace: String,
    /// `count:`: how many matches there must be (default exactly one).
    pub count: Count,
    /// `canary:` (default true): whether `file` gets a canary run (the
    /// file emptied); a canary that stays green makes the mutant
    /// `unreached`.
    pub canary: bool,
    /// `expect.killed_by`: the tests that must fail for a kill, as the
    /// spec writes them (see [`crate::outcome::reading::model::TestPattern`]).
    pub killed_by: Vec<String>,
    /// `timeout:`: this mutant's own limit on a run, over `test.timeout`.
    pub timeout: Option<Duration>,
    /// The effective test config: the top-level `test` with this
    /// mutation's `test:` merged over it.
    pub test: TestConfig,
    /// Where the mutation is declared (its `id:`).
    pub pos: SpecPos,
}

/// A loaded, validated `unguard.yaml` with its includes.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Canonical target root; every relative path resolves against it.
    pub root: PathBuf,
    /// The spec file, as given to [`load`](super::load).
    pub spec_path: PathBuf,
    /// The top-level `test` block, what mutations inherit. Its `command` is
    /// empty when the spec sets none there (every mutation sets its own).
    pub test: TestConfig,
    /// Extra ignored directories to symlink into every copy.
    pub link: Vec<String>,
    /// Every mutation, the spec's own then each include's, in file order.
    pub mutations: Vec<MutationSpec>,
    /// `gate:` (flags override it).
    pub gate: GateConfig,
    /// `gate.timeout_is`, when set.
    pub timeout_is: Option<TimeoutPolicy>,
    /// `thresholds:` (Stryker-style colouring), defaults 80/60.
    pub thresholds: Thresholds,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_codes() {
        assert!(FailCodes::AnyNonZero.is_test_failure(2));
        assert!(!FailCodes::AnyNonZero.is_test_failure(0));
        assert!(FailCodes::Only(vec![1]).is_test_failure(1));
        assert!(!FailCodes::Only(vec![1]).is_test_failure(5));
    }
}
