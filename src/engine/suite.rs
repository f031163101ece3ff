//! One run of a test command in a scratch copy, as every phase does it:
//! unguard's environment, a fresh JUnit path, a stale report removed first,
//! the report read after. Without `test.junit`, the command's runner (see
//! [`crate::runner`]) is asked for a report of unguard's, and the log says
//! which runner ran and what it counted
//! ([`crate::outcome::reading::suite_log`]). What is particular to a runner
//! (its report request, its select plugin, what it leaves in the copy) is
//! asked of the [`runner::Runner`] trait.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::{watch, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::coverage::collector::Instrumentation;
use crate::error::{Context, Result};
use crate::outcome::reading::model::ReportError;
use crate::outcome::reading::suite_log::{self, Observed};
use crate::outcome::reading::{self, Reading};
use crate::progress::Progress;
use crate::run::child_env::{self, ChildEnv};
use crate::run::report_versions::Versions;
use crate::run::{self, Exit, Invocation, RunResult};
use crate::runner::{self, Handle, Place, Plugin};
use crate::spec::{Command, SuiteGit, TestConfig};
use crate::workspace::{RunDirs, Scratch};

/// The environment of every run in `scratch` by `worker`; `label` is the
/// mutant id, `baseline` or `canary`. [`Scratch::begin_run`] made the run's
/// own dirs. What is inherited is confined to the copy (see
/// [`child_env`]): nothing in it points at the user's checkout.
pub(super) fn env_for(cfg: &TestConfig, worker: usize, label: &str, scratch: &Scratch) -> ChildEnv {
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
    per_run_dirs(cfg, &mut env, &scratch.run);
    let mut notes = Vec::new();
    if cfg.git == SuiteGit::Private && !cfg.env.contains_key("GIT_DIR") {
        match child_env::private_repo(&scratch.run.dir.join("git"), &scratch.tree) {
            Ok(vars) => {
                env.extend(vars);
                notes.push("GIT_DIR, GIT_WORK_TREE: a private repository of the copy (workspace.git: private)".into());
            }
            Err(e) => notes.push(format!("no private git repository ({e})")),
        }
    }
    let mut env = ChildEnv::with(env);
    env.notes = notes;
    child_env::confine(
        &mut env,
        std::env::vars_os(),
        &child_env::Place {
            root: scratch.root(),
            copy: &scratch.tree,
            cwd: &scratch.tree,
        },
    );
    env
}

/// The run's own temp dir and runner caches (removed after it), so that
/// nothing a run leaves there reaches the next: `TMPDIR` (`TMP`, `TEMP`)
/// and Hypothesis's example database. A variable `test.env` sets wins
/// (Hypothesis's also when inherited). `XDG_CACHE_HOME` and the like stay
/// as they are: package managers' caches are the user's.
///
/// pytest's cache is not redirected: an `-o cache_dir=` breaks a strict
/// set-up (`--strict-config`, or `filterwarnings = error` with `-p
/// no:cacheprovider`: "Unknown config option"). It stays in the copy's
/// `.pytest_cache`, which the reset after every run removes (see
/// [`runner::Runner::expected`]).
fn per_run_dirs(cfg: &TestConfig, env: &mut Vec<(String, String)>, run: &RunDirs) {
    let tmp = run.tmp.display().to_string();
    for k in ["TMPDIR", "TMP", "TEMP"] {
        if !cfg.env.contains_key(k) {
            env.push((k.into(), tmp.clone()));
        }
    }
    const HYPOTHESIS: &str = "HYPOTHESIS_STORAGE_DIRECTORY";
    if !cfg.env.contains_key(HYPOTHESIS) && std::env::var_os(HYPOTHESIS).is_none() {
        env.push((HYPOTHESIS.into(), run.hypothesis.display().to_string()));
    }
}

/// Where the run's JUnit report will be: `test.junit` with `{junit}` expanded
/// to this run's fresh path; a relative path is inside the copy.
fn junit_report_path(cfg: &TestConfig, fresh: &Path, tree: &Path) -> Option<PathBuf> {
    let template = cfg.junit.as_ref()?;
    let expanded = template.replace("{junit}", &fresh.display().to_string());
    let p = PathBuf::from(expanded);
    Some(if p.is_absolute() { p } else { tree.join(p) })
}

/// What a run without `test.junit` showed (`seen`: its log): the runner
/// and counts in its log, and the report written for unguard (`injected`,
/// by runner `by`; `None`: pytest, through its environment) or the one the
/// command's own pytest run names in the log. Nothing seen: not configured.
fn observe(
    seen: suite_log::LogReading,
    injected: Option<&Path>,
    by: Option<suite_log::Runner>,
    kept: &[PathBuf],
    tree: &Path,
) -> Reading {
    let report = injected
        .and_then(|p| read_every_version(p, kept).ok())
        .or_else(|| {
            let named = seen.pytest_report.as_ref()?;
            reading::read(&tree.join(named)).ok()
        })
        .map(|r| r.relative_to(tree));
    match by {
        Some(by) => Observed::written_by(seen, report, by),
        None => Observed::new(seen, report),
    }
    .map_or(Reading::NotConfigured, Reading::Observed)
}

/// The report at `path`, or, when the run wrote more than one version of it
/// (`kept`, see [`Versions`]), every version's tests in the order written.
fn read_every_version(
    path: &Path,
    kept: &[PathBuf],
) -> std::result::Result<crate::outcome::reading::model::Report, ReportError> {
    if kept.len() < 2 {
        return reading::read(path);
    }
    let mut reports = Vec::new();
    for v in kept {
        reports.push(reading::read(v)?);
    }
    Ok(join_versions(reports))
}

/// The tests of every version, in the order written; a version whose every
/// test a later version also holds is an earlier snapshot of that later
/// one (a reporter that rewrites its whole file as it goes) and adds nothing.
fn join_versions(
    reports: Vec<crate::outcome::reading::model::Report>,
) -> crate::outcome::reading::model::Report {
    use std::collections::HashSet;
    let ids: Vec<HashSet<String>> = reports
        .iter()
        .map(|r| r.cases.iter().map(|c| c.id()).collect())
        .collect();
    let mut cases = Vec::new();
    for (i, report) in reports.into_iter().enumerate() {
        let snapshot = ids[i + 1..].iter().any(|later| ids[i].is_subset(later));
        if !snapshot {
            cases.extend(report.cases);
        }
    }
    crate::outcome::reading::model::Report { cases }
}

/// `report` (a path as the command or `test.junit` names it, relative to
/// the copy) as a path inside the copy, if it is one.
fn inside(tree: &Path, report: &Path) -> Option<PathBuf> {
    let full = tree.join(report);
    full.strip_prefix(tree).ok().map(Path::to_path_buf)
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
    /// (through its command or its [`runner::Plugin`]); empty: the whole
    /// suite.
    pub select: &'a [String],
    /// A kill-first subset: `select` runs through this adapter, strictly
    /// (ids that match no test run none, never the whole suite).
    pub adapter: Option<&'a Handle>,
    /// Where the warning about debris goes.
    pub progress: &'a Progress,
    /// Run the command without unguard's convenience additions (its
    /// request for a per-test report, see [`request_report`]); the isolation
    /// stays. Set when the baseline showed they break the suite.
    pub bare: bool,
    /// A confirmation run that holds the machine alone (a hang's, and a
    /// kill's whose runs share the machine's network): it waits until no
    /// other suite runs and holds every other run off until it ends, so a
    /// port, a file or the CPU shared with another worker cannot confirm a
    /// verdict. Every other run shares the machine (a kill's confirmation
    /// in a network namespace of its own too: no port is shared there).
    pub alone: bool,
    /// The coverage run (see [`super::coverage_run`]): the whole suite with
    /// the collector's plugin and variables; never a mutant's run.
    pub coverage: Option<&'a Instrumented<'a>>,
    /// Run it in a network namespace of its own (the config's baseline was
    /// the same inside one: see `Baseline::network`).
    pub network: bool,
    /// Fork it from the worker's warm interpreter (see [`Warmth`]).
    pub warm: Warmth,
}

/// Whether a run is forked from the worker's warm Python interpreter
/// ([`crate::run::warm`]), where its runner and command allow it.
#[derive(Debug, Clone, Default)]
pub(super) enum Warmth {
    /// Started as written.
    #[default]
    Cold,
    /// Forked from an interpreter that has imported nothing of the suite;
    /// the child writes the modules it ended with to this file (the
    /// baseline's first warm run).
    Record(PathBuf),
    /// Forked from an interpreter that has imported these modules first;
    /// with `Some(file)`, the child writes its modules there too (proof
    /// that the baseline's second warm run was forked).
    Preloaded(std::sync::Arc<Vec<String>>, Option<PathBuf>),
}

/// A coverage run's collector, and the command it runs instead of the
/// config's (with the collector's options; `None`: the config's own).
pub(super) struct Instrumented<'a> {
    pub inst: &'a Instrumentation,
    pub command: Option<Command>,
}

/// Every suite run of this process holds it: shared, or alone for a
/// confirmation ([`SuiteCall::alone`]). Writers are served in turn, so a
/// confirmation waits only for the runs already going.
static SUITES: RwLock<()> = RwLock::const_new(());

/// Hold the machine for one run of a command that is not a suite of a
/// mutant's confirmation (`test.check`): shared with the other workers.
pub(super) async fn shared_slot() -> RwLockReadGuard<'static, ()> {
    SUITES.read().await
}

/// `SUITES` held for one run, alone or shared; released when dropped.
struct Slot {
    _shared: Option<RwLockReadGuard<'static, ()>>,
    _alone: Option<RwLockWriteGuard<'static, ()>>,
}

impl Slot {
    async fn take(alone: bool, progress: &Progress, label: &str) -> Slot {
        let (mut shared, mut held) = (None, None);
        if !alone {
            shared = Some(SUITES.read().await);
        } else if let Ok(g) = SUITES.try_write() {
            held = Some(g);
        } else {
            progress.status(&format!("{label}: waiting to confirm alone"));
            held = Some(SUITES.write().await);
        }
        Slot {
            _shared: shared,
            _alone: held,
        }
    }
}

/// A finished suite run, its JUnit reading, the runners its log shows
/// (read for a configured report too: the exit code's meaning depends on
/// it), and how many paths it left in the copy (put back since).
pub(super) struct SuiteRun {
    pub res: RunResult,
    pub junit: Reading,
    pub seen: Vec<suite_log::Runner>,
    pub reset: usize,
    /// unguard's convenience additions this run had (see
    /// [`SuiteCall::bare`]), as named in messages.
    pub additions: Vec<String>,
}

/// Put the select plugin (run only `call.select`) of the subset's runner
/// beside the copy and its variables into `env`: strictly for a subset, and
/// loosely for a re-check (no subset runner given: the generic runner's
/// plugin, see [`runner::generic`]). The directory that holds it and the
/// plugin, to remove it after the run. `None` when there is nothing to
/// select, when the runner selects through its command alone, or when the
/// plugin cannot be installed for a re-check (the whole suite runs then,
/// still a valid one).
fn install_select(
    call: &SuiteCall<'_>,
    scratch: &Scratch,
    env: &mut ChildEnv,
) -> Result<Option<(PathBuf, &'static dyn Plugin)>> {
    let strict = call.adapter.is_some();
    let plugin = match call.adapter {
        Some(a) => a.plugin(),
        None => runner::generic().plugin(),
    };
    let Some(plugin) = plugin.filter(|_| !call.select.is_empty()) else {
        return Ok(None);
    };
    // Without the plugin the whole suite runs: still a valid re-check
    // (a strict subset whose plugin cannot be installed fails instead).
    let lists = scratch.junit_dir.with_file_name("select");
    let holder = scratch.tree.parent().unwrap_or(&scratch.tree).to_path_buf();
    match plugin.install(
        &holder,
        &lists,
        call.select,
        call.label,
        &env.visible(),
        strict,
    ) {
        Ok(extra) => {
            env.set.extend(extra);
            Ok(Some((holder, plugin)))
        }
        Err(e) if strict => Err(e),
        Err(_) => Ok(None),
    }
}

/// The runner a run asks about its command: the subset's (kill-first),
/// else the one [`runner::recognise`] finds in it, else the generic runner.
fn runner_of(call: &SuiteCall<'_>, tree: &Path) -> Handle {
    match call.adapter {
        Some(a) => a.clone(),
        None => runner::recognise(call.cfg, tree, None).unwrap_or_else(runner::generic),
    }
}

/// unguard's request for a per-test report in a run of a config without
/// `test.junit` (none when the run goes bare), by the run's `runner`: in
/// the command ([`runner::Runner::report_request`]; the runner is returned),
/// else through the environment ([`runner::Runner::report_env`]). Every run
/// of the config gets the same request (the canary too, so it runs the
/// suite exactly as the mutants do). The report's path is returned; its
/// name goes into `additions`.
fn request_report(
    call: &SuiteCall<'_>,
    runner: &Handle,
    scratch: &Scratch,
    env: &mut ChildEnv,
    additions: &mut Vec<String>,
) -> (Option<PathBuf>, Option<Handle>) {
    if call.cfg.junit.is_some() || call.bare {
        return (None, None);
    }
    let p = scratch.next_junit_path(&format!("{}.report", call.label));
    let _ = std::fs::remove_file(&p);
    if let Some(name) = runner.report_request() {
        additions.push(name);
        return (Some(p), Some(runner.clone()));
    }
    if let Some(name) = runner.report_env(&call.cfg.command, &mut env.set, &scratch.tree, &p) {
        additions.push(name);
    }
    (Some(p), None)
}

/// Run the suite in `scratch` as `call` says; after it, the copy is put
/// back as it was (see [`put_back`]).
pub(super) async fn run_suite(
    scratch: &mut Scratch,
    call: SuiteCall<'_>,
    cancel: &watch::Receiver<bool>,
) -> Result<SuiteRun> {
    let _slot = Slot::take(call.alone, call.progress, call.label).await;
    scratch.begin_run()?;
    let junit_path = scratch.next_junit_path(call.label);
    let report_path = fresh_report_path(&call, &junit_path, &scratch.tree);
    let mut env = env_for(call.cfg, call.worker, call.label, scratch);
    // Every run of a config without `test.junit` gets the same request (the
    // canary too, so it runs the suite exactly as the mutants do).
    let mut additions = Vec::new();
    let aside = scratch.junit_dir.with_file_name("runner");
    let runner = runner_of(&call, &scratch.tree);
    let (injected, request) = request_report(&call, &runner, scratch, &mut env, &mut additions);
    let place = Place {
        tree: &scratch.tree,
        report: request.as_ref().and(injected.as_deref()),
        aside: &aside,
    };
    if let Some(r) = &request {
        let vars = r
            .prepare(&place)
            .with_context(|| format!("writing {}'s reporter into {}", r.name(), aside.display()))?;
        env.set.extend(vars);
    }
    // The directory that holds the select plugin, and the plugin, while it is there.
    let plugin = install_select(&call, scratch, &mut env)?;
    // A subset is unguard's own command: a coverage gate there fails every
    // subset on the unmutated copy (a few tests cover little), so its runner
    // turns it off (through the environment here; in the subset's command
    // for others). Never in the user's full command.
    if let Some(a) = call.adapter {
        a.subset_env(&call.cfg.command, &mut env, &scratch.tree);
    }
    if let Some(c) = call.coverage {
        runner::instrument(c.inst, &call.cfg.command, &scratch.tree, &mut env.set);
    }
    let own;
    let command = match call
        .adapter
        .and_then(|a| a.subset(call.select, &place))
        .or_else(|| call.coverage.and_then(|c| c.command.clone()))
        .or_else(|| request.as_ref().and_then(|r| r.reported(&place)))
    {
        Some(c) => {
            own = c;
            &own
        }
        None => &call.cfg.command,
    };
    let mut substitutions = vec![("{junit}", junit_path.display().to_string())];
    substitutions.extend(call.substitutions);
    // Every version of the report the run writes (a runner started twice
    // writes the one path twice): all are read.
    let versions = report_path
        .as_deref()
        .or(injected.as_deref())
        .filter(|_| call.read_junit)
        .and_then(Versions::watch);
    let warm = warm_run(
        (&call.warm, call.network, call.coverage.is_some()),
        runner.forkable(),
        command,
        &substitutions,
        &env,
        scratch,
    );
    let res = run::run(
        Invocation {
            command,
            cwd: &scratch.tree,
            env,
            substitutions,
            log: call.log,
            timeout: call.timeout,
            label: call.header,
            network: call.network,
            warm,
        },
        cancel.clone(),
    )
    .await;
    if let Some((holder, plugin)) = plugin {
        plugin.remove(&holder);
    }
    let kept = versions.map(Versions::finish).unwrap_or_default();
    // Reports the run was asked for inside the copy, and what its runner
    // leaves there (pytest's cache): not debris.
    let mut expected = runner.expected(&scratch.tree);
    let (junit, seen) = read_reports(
        (call.log, call.read_junit, call.cfg),
        &scratch.tree,
        (report_path.as_deref(), injected.as_deref()),
        request.as_ref().and_then(|r| r.seen_as()),
        &kept,
        &mut expected,
    );
    for v in &kept {
        let _ = std::fs::remove_file(v);
    }
    let reset = if res.exit == Exit::Interrupted {
        0 // the copy is about to go
    } else {
        put_back(scratch, call.log, &expected, call.progress)?
    };
    Ok(SuiteRun {
        res,
        junit,
        seen,
        reset,
        additions,
    })
}

/// Whether `cfg`'s command may be forked from a warm interpreter in
/// `scratch` at all: its runner names what may be forked and the command
/// is one start of it (read with unguard's environment and `test.env`; a
/// run reads it again with its own). Nothing is run.
pub(super) fn forkable(cfg: &TestConfig, scratch: &Scratch) -> bool {
    let runner = runner::recognise(cfg, &scratch.tree, None).unwrap_or_else(runner::generic);
    let env = ChildEnv::with(
        cfg.env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    );
    let subs = [("{junit}", "report.xml".to_string())];
    interpreter_start(runner.forkable(), &cfg.command, &subs, &env, scratch, true).is_some()
}

/// `command` (with `substitutions`, in `env`) read as one start of a
/// Python interpreter running one of `mains` in `scratch`, and the socket
/// of the worker's interpreter for that network; `None`: it cannot be
/// forked there.
fn interpreter_start(
    mains: &[&str],
    command: &Command,
    substitutions: &[(&'static str, String)],
    env: &ChildEnv,
    scratch: &Scratch,
    network: bool,
) -> Option<(run::warm::Entry, PathBuf)> {
    if mains.is_empty() {
        return None;
    }
    let socket = run::warm::socket_in(scratch.junit_dir.parent()?, network)?;
    let argv = run::argv(command, substitutions);
    let entry = run::warm::entry::read(&argv, &run::warm::environment(env), &scratch.tree, mains)?;
    Some((entry, socket))
}

/// The path of the run's configured report, if it is read; a report left
/// by an earlier run is removed first (never read as this run's).
fn fresh_report_path(call: &SuiteCall<'_>, junit_path: &Path, tree: &Path) -> Option<PathBuf> {
    let p = junit_report_path(call.cfg, junit_path, tree).filter(|_| call.read_junit)?;
    let _ = std::fs::remove_file(&p);
    Some(p)
}

/// How a run (its [`Warmth`], whether it gets its own network, whether it
/// is a coverage run) is forked, when it is warm and its `command` (with
/// `substitutions`, in `env`) is one start of a Python interpreter running
/// one of `mains`. A coverage run never is: its collector may read its
/// set-up when the interpreter starts.
fn warm_run(
    (warmth, network, coverage): (&Warmth, bool, bool),
    mains: &[&str],
    command: &Command,
    substitutions: &[(&'static str, String)],
    env: &ChildEnv,
    scratch: &Scratch,
) -> Option<run::warm::Warm> {
    let (preload, record) = match warmth {
        _ if coverage => return None,
        Warmth::Cold => return None,
        Warmth::Record(file) => (std::sync::Arc::new(Vec::new()), Some(file.clone())),
        Warmth::Preloaded(names, file) => (std::sync::Arc::clone(names), file.clone()),
    };
    let (entry, socket) = interpreter_start(mains, command, substitutions, env, scratch, network)?;
    Some(run::warm::Warm {
        entry,
        socket,
        roots: vec![scratch.tree.clone(), scratch.root().to_path_buf()],
        preload,
        record,
        netns: network,
    })
}

/// What a finished run's reports and log say: the JUnit reading (the
/// configured report, or the one written for unguard: `reports`), each
/// with every version the run wrote (`kept`), and the runners the log shows.
/// The reports inside the copy go into `expected` (not debris).
fn read_reports(
    (log, read_junit, cfg): (&Path, bool, &TestConfig),
    tree: &Path,
    (configured, injected): (Option<&Path>, Option<&Path>),
    by: Option<suite_log::Runner>,
    kept: &[PathBuf],
    expected: &mut Vec<PathBuf>,
) -> (Reading, Vec<suite_log::Runner>) {
    match configured {
        Some(p) => {
            expected.extend(inside(tree, p));
            let seen = read_log(log).runners;
            let junit = match read_every_version(p, kept) {
                Ok(r) => Reading::Read(r.relative_to(tree)),
                Err(e) => Reading::Unreadable(e),
            };
            (junit, seen)
        }
        None if read_junit && cfg.junit.is_none() => {
            let log = read_log(log);
            if let Some(named) = &log.pytest_report {
                expected.extend(inside(tree, named));
            }
            (observe(log, injected, by, kept, tree), Vec::new())
        }
        None => (Reading::NotConfigured, Vec::new()),
    }
}

/// After a run (suite or `test.check`) in `scratch`: put the copy back as
/// it was before (what the run created, deleted or changed), say so at the
/// end of its `log` and, the first time in the whole run, on stderr.
/// Returns how many paths were put back.
pub(super) fn put_back(
    scratch: &mut Scratch,
    log: &Path,
    expected: &[PathBuf],
    progress: &Progress,
) -> Result<usize> {
    let reset = scratch.end_run(expected)?;
    if reset.paths.is_empty() {
        return Ok(0);
    }
    let n = reset.paths.len();
    let named = name_a_few(&reset.paths);
    if let Ok(mut f) = std::fs::OpenOptions::new().append(true).open(log) {
        use std::io::Write;
        let _ = writeln!(
            f,
            "\n# unguard: put back {n} path(s) this run left changed in the scratch copy: {named}"
        );
    }
    if reset.first {
        let log_name = log.file_name().unwrap_or_default().to_string_lossy();
        progress.line(&format!(
            "warning: the suite left {n} path(s) changed in its scratch copy ({named}; see {log_name}); \
             unguard put them back, as it does after every run, so no run sees another's \
             leftovers (reset_paths in outcomes.json counts them per mutant)"
        ));
    }
    Ok(n)
}

/// The first few of `paths`, for a message.
fn name_a_few(paths: &[String]) -> String {
    const FEW: usize = 3;
    let mut s = paths
        .iter()
        .take(FEW)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > FEW {
        s.push_str(&format!(" and {} more", paths.len() - FEW));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(ids: &[&str]) -> crate::outcome::reading::model::Report {
        use crate::outcome::reading::model::{Report, Status, TestCase};
        Report {
            cases: ids
                .iter()
                .map(|n| TestCase {
                    classname: "t".into(),
                    name: (*n).into(),
                    status: Status::Failed,
                })
                .collect(),
        }
    }

    #[test]
    fn every_runners_tests_are_read_once() {
        // pytest twice (unit, then integration): both processes' tests.
        let two = join_versions(vec![report(&["a", "b"]), report(&["c"])]);
        assert_eq!(two.cases.len(), 3);
        // A reporter that rewrote its whole file as it went: the earlier
        // snapshot's tests are in the final version; none is read twice.
        let grown = join_versions(vec![report(&["a"]), report(&["a", "b"])]);
        let ids: Vec<String> = grown.cases.iter().map(|c| c.id()).collect();
        assert_eq!(ids, ["t::a", "t::b"]);
    }
}
