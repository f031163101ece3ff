//! Test runners: what unguard knows about each runner a test command can
//! run, behind one trait ([`Runner`]), one module per runner. A runner is
//! recognised in the command (or in the package script it runs: see
//! [`package_script`]); it says how a *subset* of the suite runs by test
//! id (kill-first, see `engine/kill_first.rs`), how unguard's own per-test
//! report is added to a run without `test.junit`, and which coverage
//! collector measures it. Ids are JUnit ids (`classname::name`), as every
//! report unguard reads names them; the subset run's report is read as the
//! full suite's is.
//!
//! - [`pytest`]: the command names pytest, or the baseline's log shows
//!   pytest alone; its subset is the strict select plugin (the command
//!   unchanged), its report comes through `PYTEST_ADDOPTS`;
//! - [`unittest`]: `python -m unittest` / `python -m xmlrunner`;
//! - [`go_test`]: `go test -json`;
//! - [`node_test`]: `node --test` with a JUnit reporter;
//! - [`vitest`]: `vitest run`, with the user's JUnit reporter or unguard's
//!   own added beside the user's;
//! - [`jest`]: `jest`, with `jest-junit` or unguard's own reporter;
//! - [`cargo_test`]: `cargo test` (libtest's text);
//! - [`template`]: `test.select`, a template for any other runner.
//!
//! Adding a runner is adding a module here with a `recognise` function and
//! a line in [`recognise`] (docs/development.md shows how).

pub mod cargo_test;
pub mod go_test;
pub mod jest;
pub mod node_test;
pub mod package_script;
pub mod pytest;
pub mod template;
pub mod unittest;
pub mod vitest;
pub mod words;

use std::path::Path;
use std::sync::Arc;

use crate::coverage::collector::Collector;
use crate::outcome::reading::suite_log;
use crate::spec::{Command, Select, TestConfig};

/// Where a run's command is made: the copy, unguard's own per-test report
/// (when the run asks for one), and a directory beside the copy for
/// helper files (a reporter) that never lands in the copy.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    /// The copy the command runs in.
    pub tree: &'a Path,
    /// Where unguard's own per-test report goes (`None`: the run asks for
    /// none; the user's `test.junit` is then the report, if any).
    pub report: Option<&'a Path>,
    /// A directory outside the copy for the runner's helper files.
    pub aside: &'a Path,
}

/// One test runner, as a test config runs it.
pub trait Runner: std::fmt::Debug + Send + Sync {
    /// The runner's name, for logs and messages.
    fn name(&self) -> &'static str;

    /// The command that runs only `ids` in the copy (`None`: the config's
    /// own command, with the select plugin's environment, see
    /// [`Runner::plugin`]; or the runner cannot select one of these ids,
    /// and the subset check then sees the whole suite run).
    fn subset(&self, ids: &[String], at: &Place<'_>) -> Option<Command>;

    /// How unguard's request for a per-test report in the command reads in
    /// messages and `outcomes.json` (`baselines[].dropped`); `None` when
    /// this runner gets no such request in its command (pytest gets its
    /// report through `PYTEST_ADDOPTS`; others have the user's, or none).
    fn report_request(&self) -> Option<String> {
        None
    }

    /// The whole suite's command with unguard's report at `at.report`
    /// (only called when [`Runner::report_request`] is `Some`).
    fn reported(&self, _at: &Place<'_>) -> Option<Command> {
        None
    }

    /// Write the helper files the report request needs beside the copy
    /// (into `at.aside`), and return the variables it needs.
    fn prepare(&self, _at: &Place<'_>) -> std::io::Result<Vec<(String, String)>> {
        Ok(Vec::new())
    }

    /// The runner whose log lines a run of it shows, when unguard knows
    /// them (the report unguard asked for was written by it).
    fn seen_as(&self) -> Option<suite_log::Runner> {
        None
    }

    /// The collector of per-test coverage for this runner; `None` where
    /// none measures it.
    fn collector(&self) -> Option<Collector> {
        None
    }

    /// The coverage run's command, with the collector's `options`; `None`:
    /// the config's own command (the collector needs only variables).
    fn coverage_command(&self, _options: &[String]) -> Option<Command> {
        None
    }

    /// Whether a subset run gets the strict pytest plugin.
    fn plugin(&self) -> bool {
        false
    }
}

/// A recognised runner, shared by the runs of one test config.
pub type Handle = Arc<dyn Runner>;

/// The runner `cfg`'s command runs in the copy at `tree` (through a
/// package script too); `pytest_seen`: its baseline's log shows that pytest
/// (and no other runner) ran. `None` for a command unguard does not know.
pub fn recognise(cfg: &TestConfig, tree: &Path, pytest_seen: bool) -> Option<Handle> {
    if pytest_seen || pytest::names_pytest(&cfg.command) {
        return Some(Arc::new(pytest::Pytest));
    }
    fn handle<R: Runner + 'static>(r: R) -> Handle {
        Arc::new(r)
    }
    let direct = unittest::recognise(&cfg.command)
        .map(handle)
        .or_else(|| go_test::recognise(&cfg.command).map(handle))
        .or_else(|| node_test::recognise(&cfg.command).map(handle))
        .or_else(|| vitest::recognise(cfg, tree).map(handle))
        .or_else(|| jest::recognise(cfg, tree).map(handle))
        .or_else(|| cargo_test::recognise(&cfg.command).map(handle));
    if direct.is_some() {
        return direct;
    }
    let script = package_script::resolve(&cfg.command, tree)?;
    vitest::through_script(&script, cfg, tree)
        .map(handle)
        .or_else(|| jest::through_script(&script, cfg, tree).map(handle))
        .or_else(|| node_test::through_script(&script).map(handle))
}

/// The runner that runs a subset of `cfg`'s tests (kill-first): `None`
/// with `test.select: off`; the template with `test.select: "…"`; else
/// the recognised runner (see [`recognise`]).
pub fn for_subsets(cfg: &TestConfig, tree: &Path, pytest_seen: bool) -> Option<Handle> {
    match &cfg.select {
        Select::Off => None,
        Select::Template(t) => Some(Arc::new(template::Template(t.clone()))),
        Select::Auto => recognise(cfg, tree, pytest_seen),
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use crate::spec::{Command, Select, TestConfig};

    /// An argv command.
    pub fn argv(v: &[&str]) -> Command {
        Command::Argv(v.iter().map(|s| s.to_string()).collect())
    }

    /// A test config with `command` and `junit`.
    pub fn config(command: Command, junit: Option<&str>) -> TestConfig {
        TestConfig {
            command,
            junit: junit.map(str::to_string),
            timeout: crate::spec::TimeoutSetting::Auto,
            env: Default::default(),
            fail_codes: crate::spec::FailCodes::AnyNonZero,
            preset: crate::spec::Preset::Generic,
            check: None,
            git: Default::default(),
            select: Select::Auto,
        }
    }

    /// A place in `tree` with no report of unguard's.
    pub fn bare(tree: &std::path::Path) -> super::Place<'_> {
        super::Place {
            tree,
            report: None,
            aside: tree,
        }
    }
}
