//! One run of a test command in a scratch copy, as every phase does it:
//! unguard's environment, a fresh JUnit path, a stale report removed first,
//! the report read after.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::watch;

use crate::junit::{self, Reading};
use crate::run::{self, Invocation, RunResult};
use crate::spec::TestConfig;
use crate::workspace::Scratch;

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
}

/// A finished suite run and its JUnit reading.
pub(super) struct SuiteRun {
    pub res: RunResult,
    pub junit: Reading,
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
    let mut substitutions = vec![("{junit}", junit_path.display().to_string())];
    substitutions.extend(call.substitutions);
    let res = run::run(
        Invocation {
            command: &call.cfg.command,
            cwd: &scratch.tree,
            env: env_for(call.cfg, call.worker, call.label, scratch),
            substitutions,
            log: call.log,
            timeout: call.timeout,
            label: call.header,
        },
        cancel.clone(),
    )
    .await;
    let junit = match report_path {
        None => Reading::NotConfigured,
        Some(p) => match junit::read(&p) {
            Ok(r) => Reading::Read(r),
            Err(e) => Reading::Unreadable(e),
        },
    };
    SuiteRun { res, junit }
}
