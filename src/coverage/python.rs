//! The Python collector: coverage.py, one dynamic context per test.
//!
//! Two files go beside the copy, in the directory that holds it (never into
//! the user's checkout or environment), for the coverage run only:
//! - `conftest.py` (pytest loads it because `--confcutdir` is moved up to
//!   that directory, as for the select plugin): it names the context after
//!   the running test's JUnit id, starts coverage.py itself when nothing
//!   did before, and at the end writes the map (`map.json`);
//! - `sitecustomize.py` in a directory put first on `PYTHONPATH`: every
//!   Python process of the run is measured from its start, a process a
//!   test starts (a server spawned over stdio) under that test's name; it
//!   hands over to any other `sitecustomize` on the path;
//! - `_unguard_coverage_watch.py` beside it: every measured process leaves
//!   a `started` record, and one for each process it starts whose
//!   environment will not load the `sitecustomize` (the MCP SDK's stdio
//!   client with its default environment); a measured process that left no
//!   data (SIGKILL, exec) is found at the end. The map lists both as
//!   blind spots ([`super::BlindSpot`]), and then decides nothing.
//!
//! Only what the copy's files execute is recorded (`include` the copy;
//! `site-packages` left out). A user's pytest-cov would pause unguard's
//! tracer, so the run adds `--no-cov` when the command or the project's
//! pytest configuration turns it on.

use std::path::{Path, PathBuf};

use super::Collected;
use crate::error::{Context, Result};
use crate::run::shell;

/// The pytest plugin, written as `conftest.py` beside the copy.
const PLUGIN: &str = include_str!("pytest_plugin.py");
/// Put first on `PYTHONPATH` for the run, in a directory of its own.
const SITE: &str = include_str!("sitecustomize.py");
/// Beside it, loaded by path by it and by the plugin: records every
/// measured process and every process started out of measurement's reach.
const WATCH: &str = include_str!("python_watch.py");

/// What a coverage run needs in its environment, and where its map will be.
#[derive(Debug, Clone)]
pub struct Instrumentation {
    /// The directory holding the plugin (`--confcutdir`).
    holder: PathBuf,
    /// Where the processes write their data and the plugin the map.
    pub out: PathBuf,
    /// The `sitecustomize.py` directory.
    site: PathBuf,
}

impl Instrumentation {
    /// Write the plugin and the `sitecustomize` beside the copy at `tree`
    /// (into its parent), and make an empty data directory `out`.
    pub fn install(tree: &Path, out: &Path) -> Result<Instrumentation> {
        let holder = tree.parent().unwrap_or(tree).to_path_buf();
        let site = holder.join("unguard-coverage-site");
        let _ = std::fs::remove_dir_all(out);
        for d in [out, &site] {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
        }
        let write = |p: PathBuf, text: &str| {
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
        };
        write(holder.join("conftest.py"), PLUGIN)?;
        write(site.join("sitecustomize.py"), SITE)?;
        write(site.join("_unguard_coverage_watch.py"), WATCH)?;
        Ok(Instrumentation {
            holder,
            out: out.to_path_buf(),
            site,
        })
    }

    /// Take the plugin and the `sitecustomize` away again.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(self.holder.join("conftest.py"));
        let _ = std::fs::remove_dir_all(&self.site);
    }

    /// Options for `PYTEST_ADDOPTS`: the plugin's `--confcutdir`, and
    /// `--no-cov` when `pytest_cov_on` (the user's pytest-cov would stop
    /// unguard's measurement).
    pub fn addopts(&self, pytest_cov_on: bool) -> Vec<String> {
        let mut opts = vec![format!(
            "--confcutdir={}",
            shell::quote(&self.holder.display().to_string())
        )];
        if pytest_cov_on {
            opts.push("--no-cov".into());
        }
        opts
    }

    /// The variables of the run besides `PYTEST_ADDOPTS`, given the
    /// `PYTHONPATH` it would have (`path`): the data directory, the copy's
    /// root, and the `sitecustomize` directory first on `PYTHONPATH`.
    pub fn env(&self, tree: &Path, path: Option<&str>) -> Vec<(String, String)> {
        let site = self.site.display().to_string();
        let pythonpath = match path.filter(|p| !p.is_empty()) {
            Some(p) => format!("{site}:{p}"),
            None => site.clone(),
        };
        vec![
            (
                "UNGUARD_COVERAGE_DIR".into(),
                self.out.display().to_string(),
            ),
            ("UNGUARD_COVERAGE_ROOT".into(), tree.display().to_string()),
            ("UNGUARD_COVERAGE_SITE".into(), site),
            ("PYTHONPATH".into(), pythonpath),
        ]
    }

    /// What the run left: the map, or why there is none.
    pub fn collect(&self) -> Collected {
        let map = self.out.join("map.json");
        if map.is_file() {
            return match super::CoverageMap::read(&map) {
                Ok(m) => Collected::Map(m),
                Err(e) => Collected::NoMap(e.to_string()),
            };
        }
        if self.out.join("missing").exists() {
            return Collected::Missing(
                "coverage.py is not importable where the suite runs: install it there (`pip install coverage`) for per-test selection and no-coverage".into(),
            );
        }
        match std::fs::read_to_string(self.out.join("failed")) {
            Ok(why) => Collected::NoMap(format!("the plugin failed: {}", why.trim())),
            Err(_) => Collected::NoMap(
                "the plugin wrote no map (pytest did not load it, or did not finish)".into(),
            ),
        }
    }
}

/// Whether the command, `PYTEST_ADDOPTS` (`addopts`) or the pytest
/// configuration at the root of `tree` turns pytest-cov on (`--cov`).
pub fn pytest_cov_on(command: &str, addopts: Option<&str>, tree: &Path) -> bool {
    let says = |t: &str| {
        t.split(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == ',' || c == '[')
            .any(|w| w == "--cov" || w.starts_with("--cov="))
    };
    says(command)
        || addopts.is_some_and(says)
        || ["pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"]
            .iter()
            .any(|f| std::fs::read_to_string(tree.join(f)).is_ok_and(|t| says(&t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_cov_is_seen_on_the_command_in_addopts_and_in_config() {
        let d = tempfile::tempdir().unwrap();
        assert!(pytest_cov_on("pytest --cov=app -q", None, d.path()));
        assert!(pytest_cov_on("pytest", Some("-q --cov app"), d.path()));
        assert!(!pytest_cov_on("pytest --covers", Some("-q"), d.path()));
        std::fs::write(
            d.path().join("pyproject.toml"),
            "[tool.pytest.ini_options]\naddopts = [\"--cov=app\", \"-q\"]\n",
        )
        .unwrap();
        assert!(pytest_cov_on("pytest", None, d.path()));
    }

    #[test]
    fn the_site_directory_goes_first_on_the_runs_pythonpath() {
        let d = tempfile::tempdir().unwrap();
        let tree = d.path().join("tree");
        std::fs::create_dir(&tree).unwrap();
        let i = Instrumentation::install(&tree, &d.path().join("cov")).unwrap();
        assert!(d.path().join("conftest.py").is_file());
        let env = i.env(&tree, Some("src"));
        let path = &env.iter().find(|(k, _)| k == "PYTHONPATH").unwrap().1;
        assert!(path.ends_with("unguard-coverage-site:src"), "{path}");
        i.remove();
        assert!(!d.path().join("conftest.py").exists());
        assert!(!d.path().join("unguard-coverage-site").exists());
    }
}
