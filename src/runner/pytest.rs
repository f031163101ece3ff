//! pytest: recognised when the command names it (or the baseline's log
//! shows pytest alone). Its subset is the config's own command with the
//! strict select plugin (`engine/select.rs`), whatever the command
//! (`pytest`, `python -m pytest`, a wrapper script); its report comes
//! through `PYTEST_ADDOPTS` (`engine/suite.rs`).

use std::path::Path;

use super::{Place, Runner};
use crate::coverage::collector::Collector;
use crate::outcome::reading::suite_log;
use crate::spec::Command;

/// pytest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pytest;

impl Runner for Pytest {
    fn name(&self) -> &'static str {
        "pytest"
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

    fn plugin(&self) -> bool {
        true
    }
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
        .find(|(k, _)| k == "PYTEST_ADDOPTS")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("PYTEST_ADDOPTS").ok())
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
