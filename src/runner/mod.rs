//! Test runners: what unguard knows about each runner a test command can
//! run, behind one trait ([`Runner`]), one module per runner. A runner is
//! recognised in the command (or in the package script it runs: see
//! [`package_script`]); it says how a *subset* of the suite runs by test
//! id (kill-first, see `engine/kill_first.rs`: a command, or a [`Plugin`]
//! that the command unchanged loads) and what a subset adds to be judged as
//! the full suite is, how unguard's own per-test report is asked for in a
//! run without `test.junit` (in the command, or through the environment),
//! what a run leaves in the copy that is not debris, and which coverage
//! collector measures it (and a coverage run's options, [`instrument`]).
//! Ids are JUnit ids (`classname::name`), as every report unguard reads
//! names them; the subset run's report is read as the full suite's is. The
//! engine (`engine/suite.rs`, `engine/baseline.rs`, `engine/kill_first.rs`)
//! and audit ask this module, never a runner by name.
//!
//! The trait's defaults are what reaches pytest through its environment
//! (`PYTEST_ADDOPTS`, see [`pytest`]), should the command start pytest
//! anywhere (a Makefile, a script, `tox`): the `--junitxml` request for
//! unguard's report, its cache expected in the copy. Other runners ignore
//! the variable; a runner whose report goes into its command
//! ([`Runner::report_request`]) gets no such request.
//!
//! - [`pytest`]: the command names pytest, or the baseline's log shows
//!   pytest alone; its subset is the strict select plugin
//!   ([`pytest_select`], the command unchanged), its report comes through
//!   `PYTEST_ADDOPTS`, a subset turns a pytest-cov gate off;
//! - [`unittest`]: `python -m unittest` / `python -m xmlrunner`;
//! - [`go_test`]: `go test -json`;
//! - [`node_test`]: `node --test` with a JUnit reporter;
//! - [`vitest`]: `vitest run`, with the user's JUnit reporter or unguard's
//!   own added beside the user's;
//! - [`jest`]: `jest`, with `jest-junit` or unguard's own reporter;
//! - [`cargo_test`]: `cargo test` (libtest's text);
//! - [`template`]: `test.select`, a template for any other runner (the
//!   select plugin set up too, for a pytest behind it);
//! - [`generic`]: a command no other module knows (the defaults; a re-check
//!   of a kill's red tests gets pytest's plugin, loosely); it selects no
//!   subset.
//!
//! Adding a runner is adding a module here with a `recognise` function and
//! a line in [`recognise`] (docs/development.md shows how).

pub mod cargo_test;
pub mod generic;
pub mod go_test;
pub mod jest;
pub mod node_test;
pub mod package_script;
pub mod pytest;
pub mod pytest_select;
pub mod template;
pub mod unittest;
pub mod vitest;
pub mod words;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::coverage::collector::{Collector, Instrumentation};
use crate::error::Result;
use crate::outcome::reading::{suite_log, Reading};
use crate::run::child_env::ChildEnv;
use crate::spec::{Command, Preset, Select, TestConfig};

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

    /// The Python modules (`-m NAME`) and console scripts whose start of
    /// an interpreter may be forked from a warm one ([`crate::run::warm`]);
    /// empty: this runner's runs always start as written.
    fn forkable(&self) -> &'static [&'static str] {
        &[]
    }

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

    /// The plugin that makes the config's own command run only some tests
    /// (a subset: strictly; a re-check of a kill's red tests: loosely, see
    /// [`Plugin::install`]); `None`: this runner selects through
    /// [`Runner::subset`] alone.
    fn plugin(&self) -> Option<&'static dyn Plugin> {
        None
    }

    /// What a subset run (of [`Runner::subset`]'s command or the plugin's)
    /// adds to `env`, the run's environment so far, so that the subset
    /// is judged as the full suite is (pytest: a coverage gate off). Never
    /// for the user's full command.
    fn subset_env(&self, _command: &Command, _env: &mut ChildEnv, _tree: &Path) {}

    /// unguard's request for its per-test report at `report` through the
    /// environment, in a whole-suite run of `command` that gets none in the
    /// command ([`Runner::report_request`] is `None`): added to `env` (the
    /// run's variables so far, then unguard's own); how it reads in messages
    /// and `outcomes.json` (`baselines[].dropped`); `None`: no request (it
    /// would break the run). By default pytest's, through `PYTEST_ADDOPTS`
    /// ([`pytest::ask_for_junit`]): any command may start pytest, and other
    /// runners ignore the variable.
    fn report_env(
        &self,
        command: &Command,
        env: &mut Vec<(String, String)>,
        tree: &Path,
        report: &Path,
    ) -> Option<String> {
        pytest::ask_for_junit(command, env, tree, report).then(|| pytest::JUNIT_REQUEST.to_string())
    }

    /// What a run may leave in the copy at `tree` that is its expected output
    /// (paths relative to it): put back with the rest, but not counted as
    /// debris. By default pytest's cache ([`pytest::caches`]), which any
    /// command may make.
    fn expected(&self, tree: &Path) -> Vec<PathBuf> {
        pytest::caches(tree)
    }
}

/// Selection through the environment: a plugin the runner loads whatever
/// the command, written beside the copy for one run and removed after it
/// ([`pytest_select`]: pytest's).
pub trait Plugin: Send + Sync {
    /// Write the plugin into `holder` (the directory that holds the copy)
    /// and the list of `ids` into `lists` (named after the run's `label`);
    /// the variables that make the run load it, given the run's so far
    /// (`base`, then unguard's own). `strict` (a kill-first subset): ids
    /// that match no test run none; else (a re-check) the whole suite runs.
    fn install(
        &self,
        holder: &Path,
        lists: &Path,
        ids: &[String],
        label: &str,
        base: &[(String, String)],
        strict: bool,
    ) -> Result<Vec<(String, String)>>;

    /// Remove what [`Plugin::install`] wrote into `holder`.
    fn remove(&self, holder: &Path);
}

/// A recognised runner, shared by the runs of one test config.
pub type Handle = Arc<dyn Runner>;

/// The runner `cfg`'s command runs in the copy at `tree` (through a
/// package script too); `shown`: the one runner its baseline's run showed
/// (see [`shown_alone`]; pytest shown alone is pytest behind any wrapper).
/// `None` for a command unguard does not know.
pub fn recognise(
    cfg: &TestConfig,
    tree: &Path,
    shown: Option<suite_log::Runner>,
) -> Option<Handle> {
    if shown == Some(suite_log::Runner::Pytest) || pytest::names_pytest(&cfg.command) {
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

/// The one runner a run showed: the runners its log shows (`seen`, read
/// beside a configured report) or, without `test.junit`, the ones its
/// reading observed (`junit`); `None` when it showed none or several.
pub fn shown_alone(seen: &[suite_log::Runner], junit: &Reading) -> Option<suite_log::Runner> {
    if let [r] = seen {
        return Some(*r);
    }
    match junit {
        Reading::Observed(o) => match o.runners.as_slice() {
            [r] => Some(*r),
            _ => None,
        },
        _ => None,
    }
}

/// The preset (what the exit codes mean) of a test command given as it is
/// (`audit --test-command`): pytest's when the command names pytest (as
/// [`recognise`] reads it first: [`pytest::names_pytest`]), else the generic
/// one.
pub fn preset(command: &Command) -> Preset {
    if pytest::names_pytest(command) {
        Preset::Pytest
    } else {
        Preset::Generic
    }
}

/// The runner of a command [`recognise`] does not know (see [`generic`]).
pub fn generic() -> Handle {
    Arc::new(generic::Generic)
}

/// The runner that runs a subset of `cfg`'s tests (kill-first): `None`
/// with `test.select: off`; the template with `test.select: "…"`; else
/// the recognised runner (see [`recognise`]).
pub fn for_subsets(
    cfg: &TestConfig,
    tree: &Path,
    shown: Option<suite_log::Runner>,
) -> Option<Handle> {
    match &cfg.select {
        Select::Off => None,
        Select::Template(t) => Some(Arc::new(template::Template(t.clone()))),
        Select::Auto => recognise(cfg, tree, shown),
    }
}

/// Add a coverage run's collector options and variables (`inst`) to its
/// `env` (after `test.env`'s and unguard's own, so they extend those);
/// `command`: the config's, run in the copy at `tree`.
pub fn instrument(
    inst: &Instrumentation,
    command: &Command,
    tree: &Path,
    env: &mut Vec<(String, String)>,
) {
    match inst {
        Instrumentation::Python(inst) => pytest::instrument(inst, command, tree, env),
        Instrumentation::Node(inst) => {
            let options = last(env, "NODE_OPTIONS");
            env.extend(inst.env(options.as_deref()));
        }
        Instrumentation::Go(inst) => env.extend(inst.env()),
    }
}

/// The value of `key` a run gets: the last in `env`, else unguard's own.
fn last(env: &[(String, String)], key: &str) -> Option<String> {
    env.iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var(key).ok())
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

#[cfg(test)]
mod tests {
    use super::test_support::{argv, config};
    use super::*;
    use crate::outcome::reading::suite_log::Runner as Seen;

    #[test]
    fn a_given_command_gets_pytests_preset_when_it_names_pytest() {
        let sh = |s: &str| Command::Shell(s.into());
        assert_eq!(preset(&sh("uv run --no-sync pytest -q")), Preset::Pytest);
        assert_eq!(preset(&sh(".venv/bin/py.test")), Preset::Pytest);
        assert_eq!(preset(&sh("make test")), Preset::Generic);
        // A wrapper owns its exit code.
        assert_eq!(preset(&sh("./run_pytest.sh")), Preset::Generic);
    }

    #[test]
    fn pytest_shown_alone_is_recognised_behind_a_wrapper() {
        let d = tempfile::tempdir().unwrap();
        let make = config(argv(&["make", "test"]), None);
        assert_eq!(
            shown_alone(&[Seen::Pytest], &Reading::NotConfigured),
            Some(Seen::Pytest)
        );
        assert_eq!(
            shown_alone(&[Seen::Pytest, Seen::Jest], &Reading::NotConfigured),
            None
        );
        assert!(recognise(&make, d.path(), None).is_none());
        assert!(recognise(&make, d.path(), Some(Seen::Jest)).is_none());
        let r = recognise(&make, d.path(), Some(Seen::Pytest)).unwrap();
        assert_eq!(r.name(), "pytest");
    }
}
