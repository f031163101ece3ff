//! pytest: recognised when the command names it (or the baseline's log
//! shows pytest alone). Its subset is the config's own command with the
//! strict select plugin ([`super::pytest_select`]), whatever the command
//! (`pytest`, `python -m pytest`, a wrapper script). Everything else it
//! gets through its environment (`PYTEST_ADDOPTS`, read before the
//! command's own options), so it reaches pytest wherever the command starts
//! it (a Makefile, a script, `tox`): these are the [`Runner`] trait's
//! defaults, which every runner gets (other runners ignore the variable):
//! unguard's JUnit report ([`ask_for_junit`]), its cache expected in the
//! copy ([`caches`]), a coverage run's options ([`instrument`]); a subset
//! turns a pytest-cov gate off ([`pytest_cov_gate`]).

use std::path::{Path, PathBuf};

use super::pytest_select::SelectPlugin;
use super::{Place, Plugin, Runner};
use crate::coverage::collector::Collector;
use crate::coverage::python;
use crate::outcome::reading::suite_log;
use crate::run::{self, child_env::ChildEnv};
use crate::spec::Command;

/// The variable pytest reads extra command-line options from, before the
/// command's own (so a `--junitxml` on the command line wins over it).
const PYTEST_ADDOPTS: &str = "PYTEST_ADDOPTS";

/// How unguard's request for a JUnit report is named in warnings and in
/// `outcomes.json` (`baselines[].dropped`).
pub const JUNIT_REQUEST: &str = "PYTEST_ADDOPTS=--junitxml=… (a JUnit report for unguard)";

/// pytest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pytest;

impl Runner for Pytest {
    fn name(&self) -> &'static str {
        "pytest"
    }

    fn forkable(&self) -> &'static [&'static str] {
        &["pytest", "py.test"]
    }

    fn subset(&self, _ids: &[String], _at: &Place<'_>) -> Option<Command> {
        None
    }

    fn seen_as(&self) -> Option<suite_log::Runner> {
        Some(suite_log::Runner::Pytest)
    }

    fn collector(&self) -> Option<Collector> {
        Some(Collector::Python)
    }

    fn plugin(&self) -> Option<&'static dyn Plugin> {
        Some(&SelectPlugin)
    }

    fn subset_env(&self, command: &Command, env: &mut ChildEnv, tree: &Path) {
        gate_off(command, env, tree);
    }
}

/// pytest's cache dir, made at its rootdir by every run whose cache
/// provider is on: an expected output of the run (removed with the rest of
/// what the run left, but not counted as debris).
const PYTEST_CACHE: &str = ".pytest_cache";

/// Where a run may have left pytest's cache in `tree`: at its root, and in
/// a top-level directory (a rootdir one level down, `cd server && pytest`).
pub fn caches(tree: &Path) -> Vec<PathBuf> {
    let mut found = vec![PathBuf::from(PYTEST_CACHE)];
    if let Ok(entries) = std::fs::read_dir(tree) {
        for e in entries.flatten() {
            let name = PathBuf::from(e.file_name());
            if e.file_type().is_ok_and(|t| t.is_dir())
                && tree.join(&name).join(PYTEST_CACHE).is_dir()
            {
                found.push(name.join(PYTEST_CACHE));
            }
        }
    }
    found
}

/// Append `opt` to `PYTEST_ADDOPTS` in `env` (the value `test.env` or an
/// earlier step set, else unguard's own environment's).
fn append_addopts(env: &mut Vec<(String, String)>, opt: &str) {
    let base = match env.iter().rposition(|(k, _)| k == PYTEST_ADDOPTS) {
        Some(i) => Some(env.remove(i).1),
        None => std::env::var(PYTEST_ADDOPTS).ok(),
    };
    env.push((PYTEST_ADDOPTS.into(), addopts_with(base.as_deref(), opt)));
}

/// `PYTEST_ADDOPTS` for a run: `base` (the `test.env` or inherited value)
/// with `opt` appended.
fn addopts_with(base: Option<&str>, opt: &str) -> String {
    match base.map(str::trim) {
        Some(b) if !b.is_empty() => format!("{b} {opt}"),
        _ => opt.to_string(),
    }
}

/// `--junitxml` pointing at `report`, quoted as pytest splits `PYTEST_ADDOPTS`.
fn junitxml_opt(report: &Path) -> String {
    format!(
        "--junitxml={}",
        run::shell::quote(&report.display().to_string())
    )
}

/// Ask pytest, should `command` run it, for a JUnit report at `report`:
/// `PYTEST_ADDOPTS` in `env` gets `--junitxml`, appended to what `test.env`
/// or unguard's own environment set. Not when the command, that value or a
/// config file at the root of `tree` turns pytest's junitxml plugin off
/// (`-p no:junitxml`): the option would then be a usage error.
pub fn ask_for_junit(
    command: &Command,
    env: &mut Vec<(String, String)>,
    tree: &Path,
    report: &Path,
) -> bool {
    const OFF: &str = "no:junitxml";
    let set = env
        .iter()
        .find(|(k, _)| k == PYTEST_ADDOPTS)
        .map(|(_, v)| v.clone());
    let off = command.display().contains(OFF)
        || set
            .or_else(|| std::env::var(PYTEST_ADDOPTS).ok())
            .is_some_and(|b| b.contains(OFF))
        || ["pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"]
            .iter()
            .any(|f| std::fs::read_to_string(tree.join(f)).is_ok_and(|t| t.contains(OFF)));
    if !off {
        append_addopts(env, &junitxml_opt(report));
    }
    !off
}

/// A subset run of `command` (unguard's own, never the user's full
/// command): a pytest-cov coverage gate there fails every subset on the
/// unmutated copy (a few tests cover little), so it is turned off with
/// `--cov-fail-under=0` in `PYTEST_ADDOPTS` (see [`pytest_cov_gate`]).
pub fn gate_off(command: &Command, env: &mut ChildEnv, tree: &Path) {
    if pytest_cov_gate(command, &env.visible(), tree) {
        append_addopts(&mut env.set, "--cov-fail-under=0");
    }
}

/// A coverage run's options for pytest in `env` (after `test.env`'s and
/// unguard's own, so they extend those): the collector's plugin in
/// `PYTEST_ADDOPTS` (`--no-cov` too where the user's pytest-cov is on),
/// its variables after.
pub fn instrument(
    inst: &python::Instrumentation,
    command: &Command,
    tree: &Path,
    env: &mut Vec<(String, String)>,
) {
    let addopts = super::last(env, PYTEST_ADDOPTS);
    let cov_on = python::pytest_cov_on(&command.display(), addopts.as_deref(), tree);
    for opt in inst.addopts(cov_on) {
        append_addopts(env, &opt);
    }
    let path = super::last(env, "PYTHONPATH");
    env.extend(inst.env(tree, path.as_deref()));
}

/// Whether a pytest-cov coverage gate may be on for `command` run in the
/// copy at `tree` with environment `env`: `--cov-fail-under` in the
/// command, in `PYTEST_ADDOPTS`, in a root config file, or in a file the
/// command names (a `Makefile`, a script), or coverage's own `fail_under`
/// in its config, and pytest-cov in use: a `--cov` option somewhere in
/// those same places. coverage's `fail_under` alone is `coverage report`'s
/// gate (`coverage run -m pytest`), not pytest's: there pytest has no
/// `--cov-fail-under` option and would stop with a usage error (exit 4) on
/// every subset. A subset run then gets `--cov-fail-under=0` (pytest-cov
/// reads it over both).
pub fn pytest_cov_gate(command: &Command, env: &[(String, String)], tree: &Path) -> bool {
    const GATE: &str = "cov-fail-under";
    let text = command.display();
    let addopts = env
        .iter()
        .rev()
        .find(|(k, _)| k == PYTEST_ADDOPTS)
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var(PYTEST_ADDOPTS).ok())
        .unwrap_or_default();
    if text.contains(GATE) || addopts.contains(GATE) {
        return true;
    }
    // pytest-cov's options all start `--cov`.
    const COV: &str = "--cov";
    let mut cov = text.contains(COV) || addopts.contains(COV);
    let mut gate = false;
    let mut files: Vec<String> = [
        "pytest.ini",
        "pyproject.toml",
        "tox.ini",
        "setup.cfg",
        ".coveragerc",
        "Makefile",
        "makefile",
        "noxfile.py",
    ]
    .iter()
    .map(|f| f.to_string())
    .collect();
    files.extend(
        text.split(|c: char| c.is_whitespace() || c == '\'' || c == '"')
            .filter(|w| !w.is_empty() && !w.starts_with('-') && !w.contains(".."))
            .map(|w| w.trim_start_matches("./").to_string()),
    );
    for f in &files {
        let path = tree.join(f);
        if !path.starts_with(tree) || !path.is_file() {
            continue;
        }
        if let Ok(t) = std::fs::read_to_string(&path) {
            if t.contains(GATE) {
                return true;
            }
            gate |= t.contains("fail_under");
            cov |= t.contains(COV);
        }
    }
    gate && cov
}

/// Whether the command names pytest (as the spec's preset detection does).
pub fn names_pytest(c: &Command) -> bool {
    c.display()
        .split(|ch: char| ch.is_whitespace() || ch == '/' || ch == '\'' || ch == '"')
        .any(|w| w == "pytest" || w == "py.test")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junitxml_is_appended_to_the_users_addopts_and_quoted() {
        let p = Path::new("/tmp/ug x/junit/3-m.pytest.xml");
        assert_eq!(
            addopts_with(None, &junitxml_opt(p)),
            "--junitxml='/tmp/ug x/junit/3-m.pytest.xml'"
        );
        assert_eq!(
            addopts_with(
                Some("-x -p no:randomly "),
                &junitxml_opt(Path::new("/t/r.xml"))
            ),
            "-x -p no:randomly --junitxml=/t/r.xml"
        );
        assert_eq!(
            addopts_with(Some("  "), &junitxml_opt(Path::new("/t/r.xml"))),
            "--junitxml=/t/r.xml"
        );
    }

    #[test]
    fn a_pytest_cov_gate_is_found_where_it_is_set() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path();
        let sh = |s: &str| Command::Shell(s.into());
        assert!(!pytest_cov_gate(&sh("python3 -m pytest -q"), &[], t));
        assert!(pytest_cov_gate(
            &sh("pytest --cov=src --cov-fail-under=90"),
            &[],
            t
        ));
        let addopts = [(
            "PYTEST_ADDOPTS".to_string(),
            "--cov-fail-under=90".to_string(),
        )];
        assert!(pytest_cov_gate(&sh("pytest"), &addopts, t));
        std::fs::write(
            t.join("run-tests.sh"),
            "pytest --cov=app --cov-fail-under=100\n",
        )
        .unwrap();
        assert!(pytest_cov_gate(&sh("./run-tests.sh"), &[], t));
        assert!(!pytest_cov_gate(&sh("../run-tests.sh"), &[], t));
        std::fs::remove_file(t.join("run-tests.sh")).unwrap();
        std::fs::write(
            t.join("pyproject.toml"),
            "[tool.coverage.report]\nfail_under = 100\n",
        )
        .unwrap();
        // coverage's `fail_under` alone is `coverage report`'s gate (`coverage
        // run -m pytest`): pytest has no `--cov-fail-under` option there.
        assert!(!pytest_cov_gate(&sh("make test"), &[], t));
        assert!(!pytest_cov_gate(
            &sh("coverage run -m pytest -n auto"),
            &[],
            t
        ));
        // With pytest-cov in use (a `--cov` option in the Makefile, in
        // `PYTEST_ADDOPTS`, or in the config's addopts), it is pytest-cov's.
        std::fs::write(t.join("Makefile"), "test:\n\tpytest --cov=src\n").unwrap();
        assert!(pytest_cov_gate(&sh("make test"), &[], t));
        std::fs::remove_file(t.join("Makefile")).unwrap();
        let addopts = [("PYTEST_ADDOPTS".to_string(), "--cov=src".to_string())];
        assert!(pytest_cov_gate(&sh("make test"), &addopts, t));
        std::fs::write(
            t.join("pyproject.toml"),
            "[tool.pytest.ini_options]\naddopts = \"--cov=src\"\n\n[tool.coverage.report]\nfail_under = 100\n",
        )
        .unwrap();
        assert!(pytest_cov_gate(&sh("make test"), &[], t));
    }
}
