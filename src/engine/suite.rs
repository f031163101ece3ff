//! One run of a test command in a scratch copy, as every phase does it:
//! unguard's environment, a fresh JUnit path, a stale report removed first,
//! the report read after. Without `test.junit`, pytest is asked for a report
//! of its own through `PYTEST_ADDOPTS`, and the log says which runner ran and
//! what it counted ([`crate::suite_log`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::watch;

use super::select;
use crate::junit::{self, Reading};
use crate::run::{self, Invocation, RunResult};
use crate::spec::TestConfig;
use crate::suite_log::{self, Observed};
use crate::workspace::Scratch;

/// The variable pytest reads extra command-line options from, before the
/// command's own (so a `--junitxml` on the command line wins over it).
const PYTEST_ADDOPTS: &str = "PYTEST_ADDOPTS";

/// The environment of every run in `scratch` by `worker`; `label` is the
/// mutant id, `baseline` or `canary`.
pub(super) fn env_for(
    cfg: &TestConfig,
    worker: usize,
    label: &str,
    scratch: &Scratch,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = cfg
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    env.push(("UNGUARD_WORKER".into(), worker.to_string()));
    env.push(("UNGUARD_MUTANT".into(), label.to_string()));
    env.push((
        "PYTHONPYCACHEPREFIX".into(),
        scratch.pycache.display().to_string(),
    ));
    // With a private prefix, an inherited PYTHONDONTWRITEBYTECODE only makes
    // every run recompile everything it imports, the standard library
    // included (its cached bytecode is looked up under the prefix too). The
    // prefix is unguard's own and purged of mutated files before each run,
    // so writing there is safe. An explicit `test.env` setting still wins.
    if !cfg.env.contains_key("PYTHONDONTWRITEBYTECODE") {
        env.push(("PYTHONDONTWRITEBYTECODE".into(), String::new()));
    }
    env
}

/// Where the run's JUnit report will be: `test.junit` with `{junit}` expanded
/// to this run's fresh path; a relative path is inside the copy.
fn junit_report_path(cfg: &TestConfig, fresh: &Path, tree: &Path) -> Option<PathBuf> {
    let template = cfg.junit.as_ref()?;
    let expanded = template.replace("{junit}", &fresh.display().to_string());
    let p = PathBuf::from(expanded);
    Some(if p.is_absolute() { p } else { tree.join(p) })
}

/// `PYTEST_ADDOPTS` for a run: `base` (the `test.env` or inherited value)
/// with `--junitxml` pointing at `report`, quoted as pytest splits it.
fn addopts_with_junitxml(base: Option<&str>, report: &Path) -> String {
    let opt = format!(
        "--junitxml={}",
        run::shell_quote(&report.display().to_string())
    );
    match base.map(str::trim) {
        Some(b) if !b.is_empty() => format!("{b} {opt}"),
        _ => opt,
    }
}

/// Ask pytest, should the command run it, for a JUnit report at `report`:
/// `PYTEST_ADDOPTS` in `env` gets `--junitxml`, appended to what `test.env`
/// or unguard's own environment set. Not when the command, that value or a
/// config file at the root of `tree` turns pytest's junitxml plugin off
/// (`-p no:junitxml`): the option would then be a usage error.
fn ask_pytest_for_junit(
    cfg: &TestConfig,
    env: &mut Vec<(String, String)>,
    tree: &Path,
    report: &Path,
) {
    let base = match env.iter().position(|(k, _)| k == PYTEST_ADDOPTS) {
        Some(i) => Some(env.remove(i).1),
        None => std::env::var(PYTEST_ADDOPTS).ok(),
    };
    const OFF: &str = "no:junitxml";
    let off = cfg.command.display().contains(OFF)
        || base.as_deref().is_some_and(|b| b.contains(OFF))
        || ["pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"]
            .iter()
            .any(|f| std::fs::read_to_string(tree.join(f)).is_ok_and(|t| t.contains(OFF)));
    let value = if off {
        base
    } else {
        Some(addopts_with_junitxml(base.as_deref(), report))
    };
    if let Some(v) = value {
        env.push((PYTEST_ADDOPTS.into(), v));
    }
}

/// What a run without `test.junit` showed: the runner and counts in its
/// log, and the report pytest wrote (unguard's `injected` one, or the
/// command's own when the log names it). Nothing seen: not configured.
fn observe(log: &Path, injected: Option<&Path>, tree: &Path) -> Reading {
    let seen = read_log(log);
    let report = injected.and_then(|p| junit::read(p).ok()).or_else(|| {
        let named = seen.pytest_report.as_ref()?;
        junit::read(&tree.join(named)).ok()
    });
    Observed::new(seen, report).map_or(Reading::NotConfigured, Reading::Observed)
}

/// What a finished run's log shows (the suite's output, unguard's header left out).
fn read_log(log: &Path) -> suite_log::LogReading {
    let bytes = std::fs::read(log).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    suite_log::read(suite_log::suite_output(&text))
}

/// One suite run to make.
pub(super) struct SuiteCall<'a> {
    pub cfg: &'a TestConfig,
    pub worker: usize,
    /// `baseline`, `canary` or the mutant id (environment and JUnit file name).
    pub label: &'a str,
    /// Placeholders besides `{junit}` (e.g. `{file}`).
    pub substitutions: Vec<(&'static str, String)>,
    pub log: &'a Path,
    pub timeout: Duration,
    /// One line for the log header.
    pub header: String,
    /// Whether this run's JUnit report is read (the canary only needs the exit).
    pub read_junit: bool,
    /// Run only these tests (JUnit ids) where the runner can select them
    /// (pytest, through [`select`]); empty: the whole suite.
    pub select: &'a [String],
}

/// A finished suite run, its JUnit reading, and the runners its log shows
/// (read for a configured report too: the exit code's meaning depends on it).
pub(super) struct SuiteRun {
    pub res: RunResult,
    pub junit: Reading,
    pub seen: Vec<suite_log::Runner>,
}

/// Run the suite in `scratch` as `call` says.
pub(super) async fn run_suite(
    scratch: &mut Scratch,
    call: SuiteCall<'_>,
    cancel: &watch::Receiver<bool>,
) -> SuiteRun {
    scratch.purge_stale_bytecode();
    let junit_path = scratch.next_junit_path(call.label);
    // A report left by an earlier run must never be read as this run's.
    let report_path = if call.read_junit {
        junit_report_path(call.cfg, &junit_path, &scratch.tree)
    } else {
        None
    };
    if let Some(p) = &report_path {
        let _ = std::fs::remove_file(p);
    }
    let mut env = env_for(call.cfg, call.worker, call.label, scratch);
    // Every run of a config without `test.junit` gets the same request (the
    // canary too, so it runs the suite exactly as the mutants do).
    let injected = call.cfg.junit.is_none().then(|| {
        let p = scratch.next_junit_path(&format!("{}.pytest", call.label));
        let _ = std::fs::remove_file(&p);
        ask_pytest_for_junit(call.cfg, &mut env, &scratch.tree, &p);
        p
    });
    if !call.select.is_empty() {
        // Without the plugin the whole suite runs: still a valid re-check.
        let dir = scratch.junit_dir.with_file_name("select");
        if let Ok(extra) =
            select::install(&dir).and_then(|dir| select::env(&dir, call.select, call.label, &env))
        {
            env.extend(extra);
        }
    }
    let mut substitutions = vec![("{junit}", junit_path.display().to_string())];
    substitutions.extend(call.substitutions);
    let res = run::run(
        Invocation {
            command: &call.cfg.command,
            cwd: &scratch.tree,
            env,
            substitutions,
            log: call.log,
            timeout: call.timeout,
            label: call.header,
        },
        cancel.clone(),
    )
    .await;
    let mut seen = Vec::new();
    let junit = match report_path {
        Some(p) => {
            seen = read_log(call.log).runners;
            match junit::read(&p) {
                Ok(r) => Reading::Read(r),
                Err(e) => Reading::Unreadable(e),
            }
        }
        None if call.read_junit && call.cfg.junit.is_none() => {
            observe(call.log, injected.as_deref(), &scratch.tree)
        }
        None => Reading::NotConfigured,
    };
    SuiteRun { res, junit, seen }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junitxml_is_appended_to_the_users_addopts_and_quoted() {
        let p = Path::new("/tmp/ug x/junit/3-m.pytest.xml");
        assert_eq!(
            addopts_with_junitxml(None, p),
            "--junitxml='/tmp/ug x/junit/3-m.pytest.xml'"
        );
        assert_eq!(
            addopts_with_junitxml(Some("-x -p no:randomly "), Path::new("/t/r.xml")),
            "-x -p no:randomly --junitxml=/t/r.xml"
        );
        assert_eq!(
            addopts_with_junitxml(Some("  "), Path::new("/t/r.xml")),
            "--junitxml=/t/r.xml"
        );
    }
}
