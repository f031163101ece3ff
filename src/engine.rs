//! The mutation loop: baseline → canary → mutants, on N workers with one
//! scratch copy each. Reads the plan, writes the results model; knows nothing
//! about report formats.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use tokio::sync::watch;

use crate::diag::{Diagnostic, Diagnostics};
use crate::junit::{self, TestPattern};
use crate::outcome;
use crate::plan::{Entry, Mutant, Plan};
use crate::progress::Progress;
use crate::results::{
    BaselineResult, CanaryResult, GateConfig, Location, MutantResult, Outcome, Position, Results,
    Selection, Thresholds, TimeoutPolicy, SCHEMA,
};
use crate::run::{self, Exit, Invocation};
use crate::spec::{Spec, TestConfig, TimeoutSetting};
use crate::workspace::{Manifest, Scratch, INTERRUPTED};
use crate::{gate, mutate, reaper, workspace};

/// Floor and multiplier of the automatic timeout (as cargo-mutants).
pub const AUTO_TIMEOUT_MIN: Duration = Duration::from_secs(20);
pub const AUTO_TIMEOUT_FACTOR: u32 = 5;
/// Cap for the baseline run when no fixed timeout is configured.
pub const BASELINE_CAP: Duration = Duration::from_secs(30 * 60);

#[derive(Debug, Clone)]
pub struct EngineOptions {
    pub out: PathBuf,
    pub jobs: usize,
    pub no_canary: bool,
    pub timeout_policy: TimeoutPolicy,
    /// Overrides every timeout (`--timeout`).
    pub timeout: Option<Duration>,
    /// Root as the user wrote it (for the results).
    pub root_display: String,
    /// Runs of each baseline (`--baseline-runs`, ≥ 1): all must agree.
    pub baseline_runs: usize,
    /// Re-runs of each survivor (`--recheck-survivors`); a red one makes it `flaky`.
    pub recheck_survivors: usize,
    pub gate: GateConfig,
    pub thresholds: Thresholds,
    pub selection: Selection,
}

/// Why the loop stopped before producing verdicts.
#[derive(Debug)]
pub enum Abort {
    /// Exit 4: the unmutated suite is red or ran no tests.
    BaselineRed(String),
    /// Exit 1: the spec is inconsistent with the suite (e.g. a killed_by that names no test).
    Spec(Diagnostics),
    /// Exit 130.
    Interrupted,
    /// Anything else (I/O): exit 1.
    Internal(anyhow::Error),
}

impl From<anyhow::Error> for Abort {
    fn from(e: anyhow::Error) -> Self {
        Abort::Internal(e)
    }
}

struct Ctx {
    plan: Plan,
    /// What a scratch copy holds (a worker whose job panicked gets a fresh one).
    manifest: Arc<Manifest>,
    opts: EngineOptions,
    /// Per test config: the timeout mutants run under.
    timeouts: Vec<Duration>,
    patterns: HashMap<String, Vec<TestPattern>>,
    progress: Progress,
    /// Per (file, test config) with a canary: its state, and the verdicts
    /// of mutants that finished before it did.
    canaries: Mutex<HashMap<(String, usize), CanaryState>>,
}

/// Where a file's canary stands. A pair without a canary counts as reached.
enum CanaryState {
    /// Not finished: verdicts of its mutants wait here, unprinted.
    Pending(Vec<(usize, MutantResult)>),
    Reached,
    Unreached,
}

/// A worker's scratch copy: made, or still being made.
enum ScratchSource {
    Ready(Scratch),
    Copying(tokio::task::JoinHandle<Result<Scratch>>),
}

/// Wait for copies still being made and remove them (the run stops early).
async fn discard(sources: Vec<ScratchSource>) {
    for s in sources {
        if let ScratchSource::Copying(h) = s {
            let _ = h.await;
        }
    }
}

enum Job {
    Canary { file: String, test: usize },
    Mutant(usize),
}

enum JobResult {
    Canary(CanaryResult),
    Mutant(usize, Box<MutantResult>),
}

fn env_for(
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

fn test_timeout(ctx: &Ctx, m: Option<&Mutant>, test: usize) -> Duration {
    if let Some(t) = ctx.opts.timeout {
        return t;
    }
    if let Some(t) = m.and_then(|m| m.timeout) {
        return t;
    }
    ctx.timeouts[test]
}

/// Install SIGINT and SIGTERM handlers now (so no signal can slip through
/// to the default action). The returned future resolves at the first signal
/// and `second` runs at the next one.
fn interrupt_signals(
    second: impl FnOnce() + Send + 'static,
) -> Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let (first_tx, first_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        let _ = first_tx.send(());
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        second();
    });
    Ok(async move {
        let _ = first_rx.await;
    })
}

/// The second Ctrl-C: no more waiting for graceful shutdown. Kill every
/// suite and orphan, remove the scratch dirs, exit 130 now.
fn exit_now() {
    let suites = reaper::kill_all_active();
    let dirs = workspace::remove_live_scratch_dirs();
    eprintln!(
        "unguard: second interrupt: killed {suites} running suite(s), removed {dirs} scratch dir(s); exiting now"
    );
    std::process::exit(gate::EXIT_INTERRUPTED);
}

/// Run the loop. The manifest must describe the target tree; the output dir must exist.
pub fn execute(
    spec: &Spec,
    plan: Plan,
    manifest: Manifest,
    opts: EngineOptions,
) -> Result<Results, Abort> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(opts.jobs.clamp(1, 8))
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(execute_async(spec, plan, manifest, opts))
}

async fn execute_async(
    spec: &Spec,
    plan: Plan,
    manifest: Manifest,
    opts: EngineOptions,
) -> Result<Results, Abort> {
    let started = Instant::now();
    let started_at = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now())
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let interrupt = interrupt_signals(exit_now)?;
    if !reaper::become_subreaper() {
        eprintln!("unguard: warning: cannot become a child subreaper; orphans that clear their environment may escape");
    }
    let signals = tokio::spawn(async move {
        interrupt.await;
        INTERRUPTED.store(true, Ordering::SeqCst);
        let _ = cancel_tx.send(true);
    });

    let ready = plan.ready().count();
    // Nothing to run (every selected mutation was rejected, or a filter or
    // shard selected none): no copy, no baseline.
    let workers = if ready == 0 {
        0
    } else {
        opts.jobs.max(1).min(ready)
    };

    // Worker 0's copy first: the baselines run in it while the other
    // workers' copies are made (they join the queue as their copy is ready).
    let manifest = Arc::new(manifest);
    let mut first = if workers == 0 {
        None
    } else {
        let m = manifest.clone();
        let first = tokio::task::spawn_blocking(move || Scratch::create(&m, 0))
            .await
            .context("copy task")?;
        match first {
            Ok(s) => Some(s),
            Err(_) if INTERRUPTED.load(Ordering::SeqCst) => return Err(Abort::Interrupted),
            Err(e) => return Err(Abort::Internal(e)),
        }
    };
    let mut sources: Vec<ScratchSource> = Vec::new();
    for w in 1..workers {
        let m = manifest.clone();
        sources.push(ScratchSource::Copying(tokio::task::spawn_blocking(
            move || Scratch::create(&m, w),
        )));
    }
    // Baselines: one per distinct test configuration, in worker 0's copy.
    // However this stops early, the copies still being made are waited for
    // and removed.
    let prepared = async {
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Err(Abort::Interrupted);
        }
        let progress = Progress::new(ready as u64);
        let mut baselines = Vec::new();
        let mut timeouts = Vec::new();
        let mut baseline_reports = Vec::new();
        // (No mutant is ready, so no copy: `plan.tests` is empty then.)
        for (i, cfg) in plan.tests.iter().enumerate() {
            let Some(scratch) = first.as_mut() else { break };
            let b = run_baseline(
                i,
                plan.tests.len(),
                cfg,
                scratch,
                &opts,
                &progress,
                &cancel_rx,
            )
            .await?;
            baselines.push(b.result);
            timeouts.push(b.timeout);
            baseline_reports.push(b.report);
        }
        let patterns = killed_by_patterns(&plan, &baseline_reports)?;
        Ok((progress, baselines, timeouts, patterns))
    }
    .await;
    let (progress, baselines, timeouts, patterns) = match prepared {
        Ok(p) => p,
        Err(e) => {
            drop(first);
            discard(sources).await;
            return Err(e);
        }
    };
    if let Some(first) = first {
        sources.insert(0, ScratchSource::Ready(first));
    }

    // Canaries: one per (file, test command) that has mutants. They go first
    // in the queue; a file's mutants may start while its canary still runs
    // (on another worker), and their verdicts wait for it.
    let mut canary_jobs: VecDeque<Job> = VecDeque::new();
    let mut canary_state: HashMap<(String, usize), CanaryState> = HashMap::new();
    if !opts.no_canary {
        let mut pairs: BTreeMap<(String, usize), bool> = BTreeMap::new();
        for m in plan.ready() {
            let e = pairs.entry((m.file.clone(), m.test)).or_insert(true);
            *e &= m.canary;
        }
        for ((file, test), enabled) in pairs {
            if enabled {
                canary_state.insert((file.clone(), test), CanaryState::Pending(Vec::new()));
                canary_jobs.push_back(Job::Canary { file, test });
            }
        }
    }
    let mut jobs = canary_jobs;
    for (i, e) in plan.entries.iter().enumerate() {
        if let Entry::Ready(_) = e {
            jobs.push_back(Job::Mutant(i));
        }
    }

    let ctx = Arc::new(Ctx {
        plan,
        manifest: manifest.clone(),
        opts: opts.clone(),
        timeouts,
        patterns,
        progress,
        canaries: Mutex::new(canary_state),
    });

    let phase = run_phase(&ctx, sources, jobs, &cancel_rx).await;
    if !phase.errors.is_empty() {
        ctx.progress.finish();
        return Err(Abort::Internal(anyhow::anyhow!(phase.errors.join("; "))));
    }
    let mut canaries: Vec<CanaryResult> = Vec::new();
    let mut results: BTreeMap<usize, MutantResult> = BTreeMap::new();
    for r in phase.results {
        match r {
            JobResult::Canary(result) => canaries.push(result),
            JobResult::Mutant(i, m) => {
                results.insert(i, *m);
            }
        }
    }
    canaries.sort_by(|a, b| (&a.file, &a.command).cmp(&(&b.file, &b.command)));
    // Verdicts still waiting for a canary that never finished (interrupted):
    // unproven, so they are left out like mutants that never ran.
    for state in ctx.canaries.lock().expect("canary lock").values_mut() {
        if let CanaryState::Pending(held) = state {
            for (_, r) in held.drain(..) {
                discard_outputs(&ctx, &r);
            }
        }
    }
    ctx.progress.finish();
    signals.abort();
    // Anything reparented to unguard that no run's sweep could attribute.
    reaper::reap_orphans();

    let interrupted = INTERRUPTED.load(Ordering::SeqCst);
    // Rejected entries (no-op / ambiguous) keep their place in spec order.
    for (i, e) in ctx.plan.entries.iter().enumerate() {
        if let Entry::Rejected(r) = e {
            results.insert(i, rejected_result(r));
        }
    }
    let mut mutants: Vec<MutantResult> = results.into_values().collect();
    let (summary, gate) = gate::judge(&mut mutants, &opts.gate, opts.timeout_policy, interrupted);
    let sources = ctx
        .plan
        .originals
        .iter()
        .map(|(path, bytes)| (path.clone(), String::from_utf8_lossy(bytes).into_owned()))
        .collect();
    Ok(Results {
        schema: SCHEMA.into(),
        unguard_version: env!("CARGO_PKG_VERSION").into(),
        started_at: Some(started_at),
        root: opts.root_display.clone(),
        spec: spec.spec_path.display().to_string(),
        timeout_policy: opts.timeout_policy,
        jobs: workers,
        interrupted,
        duration_s: started.elapsed().as_secs_f64(),
        baselines,
        canaries,
        mutants,
        summary,
        gate,
        gate_config: opts.gate.clone(),
        thresholds: opts.thresholds,
        selection: opts.selection.clone(),
        sources,
    })
}

/// A green baseline: its result row, the timeout its mutants run under, and
/// its JUnit report (when the config has one).
struct Baseline {
    result: BaselineResult,
    timeout: Duration,
    report: Option<junit::Report>,
}

/// Run the unmutated suite of test config `i` `opts.baseline_runs` times.
/// Red, hung, or no tests counted: the run stops (exit 4), since every
/// verdict would be meaningless; a later run that differs from the first
/// means the baseline is flaky, and stops the run too.
async fn run_baseline(
    i: usize,
    n_tests: usize,
    cfg: &TestConfig,
    scratch: &mut Scratch,
    opts: &EngineOptions,
    progress: &Progress,
    cancel: &watch::Receiver<bool>,
) -> Result<Baseline, Abort> {
    let runs = opts.baseline_runs.max(1);
    let mut first = baseline_once(i, n_tests, 1, cfg, scratch, opts, progress, cancel).await?;
    for k in 2..=runs {
        let flaky = |msg: String| {
            Abort::BaselineRed(format!(
                "flaky baseline: run {k} of {runs} differs from run 1, which was green: {msg}"
            ))
        };
        let again = baseline_once(i, n_tests, k, cfg, scratch, opts, progress, cancel)
            .await
            .map_err(|e| match e {
                Abort::BaselineRed(msg) => flaky(msg),
                other => other,
            })?;
        let (a, b) = (first.result.tests_total, again.result.tests_total);
        if a != b {
            return Err(flaky(format!(
                "it ran {} tests, run 1 ran {} (log: {})",
                b.map_or("uncounted".into(), |n| n.to_string()),
                a.map_or("uncounted".into(), |n| n.to_string()),
                again.result.log_file
            )));
        }
        // The slowest run sets the automatic timeout.
        if again.result.duration_s > first.result.duration_s {
            first.result.duration_s = again.result.duration_s;
            first.timeout = again.timeout;
            first.result.timeout_s = again.result.timeout_s;
        }
    }
    if runs > 1 {
        progress.line(&format!(
            "baseline: {runs} runs agree (green, {} tests)",
            first
                .result
                .tests_total
                .map_or("uncounted".into(), |n| n.to_string())
        ));
    }
    Ok(first)
}

/// One run of the baseline (`k` counts from 1).
#[allow(clippy::too_many_arguments)]
async fn baseline_once(
    i: usize,
    n_tests: usize,
    k: usize,
    cfg: &TestConfig,
    scratch: &mut Scratch,
    opts: &EngineOptions,
    progress: &Progress,
    cancel: &watch::Receiver<bool>,
) -> Result<Baseline, Abort> {
    scratch.purge_stale_bytecode();
    let junit_path = scratch.next_junit_path("baseline");
    let report_path = junit_report_path(cfg, &junit_path, &scratch.tree);
    if let Some(p) = &report_path {
        let _ = std::fs::remove_file(p);
    }
    let stem = if n_tests == 1 {
        "baseline".to_string()
    } else {
        format!("baseline-{}", i + 1)
    };
    let log_name = if k == 1 {
        format!("{stem}.log")
    } else {
        format!("{stem}.run{k}.log")
    };
    let log = opts.out.join(&log_name);
    let cap = opts.timeout.unwrap_or(match cfg.timeout {
        TimeoutSetting::Fixed(d) => d,
        TimeoutSetting::Auto => BASELINE_CAP,
    });
    progress.line(&format!("baseline: {}", cfg.command.display()));
    let res = run::run(
        Invocation {
            command: &cfg.command,
            cwd: &scratch.tree,
            env: env_for(cfg, 0, "baseline", scratch),
            substitutions: vec![("{junit}", junit_path.display().to_string())],
            log: &log,
            timeout: cap,
            label: format!("baseline of `{}`", cfg.command.display()),
        },
        cancel.clone(),
    )
    .await;
    let tail = || run::log_tail(&log, 25);
    match &res.exit {
        Exit::Interrupted => return Err(Abort::Interrupted),
        Exit::Code(0) => {}
        Exit::Code(5) if cfg.preset == "pytest" => {
            return Err(Abort::BaselineRed(format!(
                "the baseline ran no tests (pytest exit 5: no tests collected); every mutant would survive.\nlog: {}\n{}",
                log.display(),
                tail()
            )))
        }
        other => {
            return Err(Abort::BaselineRed(format!(
                "the unmutated suite is not green ({}): fix the suite first, a red baseline makes every verdict meaningless.\nlog: {}\n{}",
                other.describe(),
                log.display(),
                tail()
            )))
        }
    }
    let report = match &cfg.junit {
        None => {
            progress.line("warning: no `test.junit` configured: tests are not counted, and a suite that runs zero tests would look green");
            None
        }
        Some(_) => match junit::read(report_path.as_deref().unwrap_or(&junit_path)) {
            Err(e) => {
                return Err(Abort::BaselineRed(format!(
                    "the baseline wrote no readable JUnit report ({e}); pass {{junit}} to the test command, e.g. `pytest --junitxml={{junit}}`.\nlog: {}",
                    log.display()
                )))
            }
            Ok(r) if r.total() == 0 => {
                return Err(Abort::BaselineRed(format!(
                    "the baseline ran 0 tests (JUnit report is empty): every mutant would survive.\nlog: {}",
                    log.display()
                )))
            }
            Ok(r) if !r.red().is_empty() => {
                let red: Vec<String> = r.red().iter().map(|c| c.id()).collect();
                return Err(Abort::BaselineRed(format!(
                    "the baseline exited 0 but its JUnit report has {} red test(s): {}\nlog: {}",
                    red.len(),
                    red.join(", "),
                    log.display()
                )));
            }
            Ok(r) => Some(r),
        },
    };
    let timeout = match cfg.timeout {
        TimeoutSetting::Fixed(d) => d,
        TimeoutSetting::Auto => AUTO_TIMEOUT_MIN.max(res.duration * AUTO_TIMEOUT_FACTOR),
    };
    let total = report.as_ref().map(|r| r.total());
    progress.line(&format!(
        "baseline: green in {:.1}s{}; mutant timeout {:.1}s",
        res.duration.as_secs_f64(),
        total.map(|t| format!(", {t} tests")).unwrap_or_default(),
        opts.timeout.unwrap_or(timeout).as_secs_f64()
    ));
    Ok(Baseline {
        result: BaselineResult {
            command: cfg.command.display(),
            duration_s: res.duration.as_secs_f64(),
            tests_total: total,
            timeout_s: opts.timeout.unwrap_or(timeout).as_secs_f64(),
            log_file: log_name,
        },
        timeout,
        report,
    })
}

/// Compile every mutant's `killed_by` patterns; each must name at least one
/// test of its baseline, or the spec is wrong (a typo would make every kill
/// "wrong-reason").
fn killed_by_patterns(
    plan: &Plan,
    baseline_reports: &[Option<junit::Report>],
) -> Result<HashMap<String, Vec<TestPattern>>, Abort> {
    let mut diags = Diagnostics::default();
    let mut patterns = HashMap::new();
    for m in plan.ready() {
        let pats: Vec<TestPattern> = m.killed_by.iter().map(|k| TestPattern::new(k)).collect();
        if let Some(Some(report)) = baseline_reports.get(m.test) {
            for p in &pats {
                if !report.cases.iter().any(|c| p.matches(c)) {
                    let sample: Vec<String> = report.cases.iter().take(3).map(|c| c.id()).collect();
                    diags.push(
                        Diagnostic::new(&m.pos.path, m.pos.line, m.pos.col, format!(
                            "mutation `{}`: killed_by `{}` names no test of the baseline ({} tests)",
                            m.id,
                            p.raw(),
                            report.total()
                        ))
                        .with_fix(format!("use a JUnit id like `{}` or a pytest node id", sample.first().cloned().unwrap_or_default())),
                    );
                }
            }
        }
        patterns.insert(m.id.clone(), pats);
    }

    if diags.is_empty() {
        Ok(patterns)
    } else {
        Err(Abort::Spec(diags))
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

/// Results for mutations that never applied.
pub fn rejected_result(r: &crate::plan::Rejected) -> MutantResult {
    let (outcome, detail) = match &r.problem {
        mutate::ApplyProblem::Ambiguous(d) => (Outcome::Ambiguous, d.clone()),
        other => (Outcome::NoOp, other.detail().to_string()),
    };
    MutantResult {
        id: r.id.clone(),
        control: r.control.clone(),
        rule: r.rule.clone(),
        file: r.file.clone(),
        line: 0,
        outcome,
        red_tests: vec![],
        tests_total: None,
        duration_s: 0.0,
        detail,
        killed_by: vec![],
        exit: None,
        diff_file: None,
        log_file: None,
        spec_pos: format!("{}:{}:{}", r.pos.path, r.pos.line, r.pos.col),
        location: None,
        replacement: None,
        sites: 0,
        command: None,
        diff: None,
        tests_ran: vec![],
        allowed: None,
    }
}

fn base_result(ctx: &Ctx, m: &Mutant, outcome: Outcome, detail: String) -> MutantResult {
    MutantResult {
        id: m.id.clone(),
        control: m.control.clone(),
        rule: m.rule.clone(),
        file: m.file.clone(),
        line: m.line,
        outcome,
        red_tests: vec![],
        tests_total: None,
        duration_s: 0.0,
        detail,
        killed_by: m.killed_by.clone(),
        exit: None,
        diff_file: None,
        log_file: None,
        spec_pos: format!("{}:{}:{}", m.pos.path, m.pos.line, m.pos.col),
        location: Some(Location {
            start: Position {
                line: m.line,
                column: m.col,
            },
            end: Position {
                line: m.end_line,
                column: m.end_col,
            },
        }),
        replacement: Some(m.replacement.clone()),
        sites: m.sites,
        command: Some(ctx.plan.tests[m.test].command.display()),
        diff: Some(m.diff.clone()),
        tests_ran: vec![],
        allowed: None,
    }
}

fn unreached_result(ctx: &Ctx, m: &Mutant) -> MutantResult {
    base_result(
        ctx,
        m,
        Outcome::Unreached,
        format!(
            "emptying {} did not turn the suite red: the suite does not run this copy of the file (editable install? prebuilt dist/? set `test.env: {{PYTHONPATH: src}}`), so no verdict is possible",
            m.file
        ),
    )
}

/// What the job phase leaves: the results, and internal errors (a worker
/// stops at its first one: its scratch state is unknown).
struct PhaseOutput {
    results: Vec<JobResult>,
    errors: Vec<String>,
}

/// Run a queue of jobs on all workers; each removes its copy when the queue
/// is empty (while the others may still be running).
async fn run_phase(
    ctx: &Arc<Ctx>,
    sources: Vec<ScratchSource>,
    jobs: VecDeque<Job>,
    cancel: &watch::Receiver<bool>,
) -> PhaseOutput {
    let mut out = PhaseOutput {
        results: Vec::new(),
        errors: Vec::new(),
    };
    let queue = Arc::new(Mutex::new(jobs));
    let mut handles = Vec::new();
    for (w, source) in sources.into_iter().enumerate() {
        let ctx = ctx.clone();
        let queue = queue.clone();
        let cancel = cancel.clone();
        handles.push(tokio::spawn(async move {
            let (scratch, results, error) = match source {
                ScratchSource::Ready(s) => worker(w, s, &ctx, &queue, cancel).await,
                ScratchSource::Copying(h) => match h.await {
                    Ok(Ok(s)) => worker(w, s, &ctx, &queue, cancel).await,
                    Ok(Err(e)) => (None, Vec::new(), Some(format!("worker {w}: {e:#}"))),
                    Err(e) => (
                        None,
                        Vec::new(),
                        Some(format!("worker {w}: copy task: {e}")),
                    ),
                },
            };
            if let Some(s) = scratch {
                let _ = tokio::task::spawn_blocking(move || drop(s)).await;
            }
            (results, error)
        }));
    }
    for h in handles {
        match h.await {
            Ok((mut r, e)) => {
                out.results.append(&mut r);
                out.errors.extend(e);
            }
            Err(e) => out.errors.push(format!("a worker task failed: {e}")),
        }
    }
    out
}

async fn worker(
    w: usize,
    scratch: Scratch,
    ctx: &Arc<Ctx>,
    queue: &Mutex<VecDeque<Job>>,
    cancel: watch::Receiver<bool>,
) -> (Option<Scratch>, Vec<JobResult>, Option<String>) {
    let mut out = Vec::new();
    let mut scratch = scratch;
    loop {
        if *cancel.borrow() {
            break;
        }
        let job = queue.lock().expect("queue lock").pop_front();
        let Some(job) = job else { break };
        let r = match job {
            Job::Canary { file, test } => {
                match run_canary(w, &mut scratch, ctx, &file, test, cancel.clone()).await {
                    Ok(Some(r)) => {
                        if let JobResult::Canary(result) = &r {
                            out.extend(canary_done(ctx, &file, test, result.reached));
                        }
                        Ok(Some(r))
                    }
                    other => other,
                }
            }
            Job::Mutant(i) if pair_state(ctx, i) == Some(false) => {
                Ok(Some(JobResult::Mutant(i, Box::new(unreached_of(ctx, i)))))
            }
            Job::Mutant(i) => {
                // Its own task, so a panic (a bug in unguard) costs this
                // mutant only: it is reported as an internal error, and the
                // worker goes on with a fresh copy (the old one's state is
                // unknown; dropping it removed it).
                let (c, cc) = (ctx.clone(), cancel.clone());
                let task = tokio::spawn(async move {
                    let mut s = scratch;
                    let r = run_mutant(w, &mut s, &c, i, cc).await;
                    (s, r)
                });
                match task.await {
                    Ok((s, r)) => {
                        scratch = s;
                        r
                    }
                    Err(e) if e.is_panic() => {
                        let why = panic_message(e.into_panic());
                        let m = ctx.manifest.clone();
                        match tokio::task::spawn_blocking(move || Scratch::create(&m, w)).await {
                            Ok(Ok(s)) => scratch = s,
                            Ok(Err(e)) => {
                                return (None, out, Some(format!("worker {w}: {e:#}")));
                            }
                            Err(e) => return (None, out, Some(format!("worker {w}: {e}"))),
                        }
                        Ok(Some(internal_error_result(ctx, i, &why)))
                    }
                    Err(e) => return (None, out, Some(format!("worker {w}: {e}"))),
                }
            }
        };
        match r {
            Ok(Some(JobResult::Mutant(i, m))) => out.extend(mutant_done(ctx, i, *m)),
            Ok(Some(r)) => out.push(r),
            Ok(None) => break, // interrupted
            Err(e) => return (Some(scratch), out, Some(format!("worker {w}: {e:#}"))),
        }
    }
    (Some(scratch), out, None)
}

/// The canary state of mutant `i`'s (file, test): `Some(true)` reached (or
/// no canary), `Some(false)` unreached, `None` still running.
fn pair_state(ctx: &Ctx, i: usize) -> Option<bool> {
    let Entry::Ready(m) = &ctx.plan.entries[i] else {
        return Some(true);
    };
    let states = ctx.canaries.lock().expect("canary lock");
    match states.get(&(m.file.clone(), m.test)) {
        None | Some(CanaryState::Reached) => Some(true),
        Some(CanaryState::Unreached) => Some(false),
        Some(CanaryState::Pending(_)) => None,
    }
}

/// The `unreached` verdict of mutant `i` (its file's canary stayed green).
fn unreached_of(ctx: &Ctx, i: usize) -> MutantResult {
    match &ctx.plan.entries[i] {
        Entry::Ready(m) => unreached_result(ctx, m),
        Entry::Rejected(r) => rejected_result(r),
    }
}

/// A mutant's verdict is in: print and keep it when its canary is done (as
/// `unreached` when the canary stayed green), or hold it until then.
fn mutant_done(ctx: &Ctx, i: usize, r: MutantResult) -> Vec<JobResult> {
    let key = match &ctx.plan.entries[i] {
        Entry::Ready(m) => (m.file.clone(), m.test),
        Entry::Rejected(_) => return vec![JobResult::Mutant(i, Box::new(r))],
    };
    let r = {
        let mut states = ctx.canaries.lock().expect("canary lock");
        match states.get_mut(&key) {
            Some(CanaryState::Pending(held)) => {
                held.push((i, r));
                return Vec::new();
            }
            Some(CanaryState::Unreached) => settle(ctx, i, r, false),
            None | Some(CanaryState::Reached) => r,
        }
    };
    report_line(ctx, &r);
    vec![JobResult::Mutant(i, Box::new(r))]
}

/// A canary finished: record it, and release the verdicts that waited for it.
fn canary_done(ctx: &Ctx, file: &str, test: usize, reached: bool) -> Vec<JobResult> {
    let held = {
        let mut states = ctx.canaries.lock().expect("canary lock");
        let now = if reached {
            CanaryState::Reached
        } else {
            CanaryState::Unreached
        };
        match states.insert((file.to_string(), test), now) {
            Some(CanaryState::Pending(held)) => held,
            _ => Vec::new(),
        }
    };
    held.into_iter()
        .map(|(i, r)| {
            let r = settle(ctx, i, r, reached);
            report_line(ctx, &r);
            JobResult::Mutant(i, Box::new(r))
        })
        .collect()
}

/// The final verdict of a mutant that ran before its canary finished: its
/// own when the canary went red; `unreached` when it stayed green (what the
/// mutant's run showed proves nothing then, and its files go). An internal
/// error stays one.
fn settle(ctx: &Ctx, i: usize, r: MutantResult, reached: bool) -> MutantResult {
    if reached || r.outcome == Outcome::InternalError {
        return r;
    }
    discard_outputs(ctx, &r);
    unreached_of(ctx, i)
}

/// Remove the diff and logs a mutant's run left in the out dir.
fn discard_outputs(ctx: &Ctx, r: &MutantResult) {
    let out = &ctx.opts.out;
    for name in [&r.diff_file, &r.log_file].into_iter().flatten() {
        let _ = std::fs::remove_file(out.join(name));
    }
    let _ = std::fs::remove_file(out.join(format!("{}.check.log", r.id)));
    for k in 1..=ctx.opts.recheck_survivors {
        let _ = std::fs::remove_file(out.join(format!("{}.recheck-{k}.log", r.id)));
    }
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

fn internal_error_result(ctx: &Ctx, index: usize, why: &str) -> JobResult {
    let Entry::Ready(m) = &ctx.plan.entries[index] else {
        unreachable!("only ready mutants become jobs")
    };
    let r = base_result(
        ctx,
        m,
        Outcome::InternalError,
        format!("unguard failed on this mutant ({why}); this is a bug in unguard, please report it. The other mutants ran normally."),
    );
    report_line(ctx, &r);
    JobResult::Mutant(index, Box::new(r))
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

async fn run_canary(
    w: usize,
    scratch: &mut Scratch,
    ctx: &Ctx,
    file: &str,
    test: usize,
    cancel: watch::Receiver<bool>,
) -> Result<Option<JobResult>> {
    let cfg = &ctx.plan.tests[test];
    let original = ctx
        .plan
        .originals
        .get(file)
        .context("original bytes")?
        .clone();
    scratch.write(file, b"")?;
    scratch.purge_stale_bytecode();
    let log_name = if ctx.plan.tests.len() == 1 {
        format!("canary-{}.log", sanitize(file))
    } else {
        format!("canary-{}-{}.log", sanitize(file), test + 1)
    };
    let log = ctx.opts.out.join(&log_name);
    let junit_path = scratch.next_junit_path("canary");
    ctx.progress.status(&format!("canary {file}"));
    let res = run::run(
        Invocation {
            command: &cfg.command,
            cwd: &scratch.tree,
            env: env_for(cfg, w, "canary", scratch),
            substitutions: vec![("{junit}", junit_path.display().to_string())],
            log: &log,
            timeout: test_timeout(ctx, None, test),
            label: format!("canary: {file} emptied"),
        },
        cancel,
    )
    .await;
    scratch.write(file, &original)?;
    let reached = match &res.exit {
        Exit::Interrupted => return Ok(None),
        Exit::SpawnFailed(e) => bail!("canary for {file}: {e}"),
        Exit::Code(0) => false,
        _ => true,
    };
    let line = format!(
        "canary {file}: {} ({})",
        if reached {
            "reached"
        } else {
            "UNREACHED: the suite stays green with this file emptied"
        },
        res.exit.describe()
    );
    ctx.progress.line(&line);
    Ok(Some(JobResult::Canary(CanaryResult {
        file: file.to_string(),
        command: cfg.command.display(),
        reached,
        exit: res.exit.describe(),
        duration_s: res.duration.as_secs_f64(),
        log_file: log_name,
    })))
}

async fn run_mutant(
    w: usize,
    scratch: &mut Scratch,
    ctx: &Ctx,
    index: usize,
    cancel: watch::Receiver<bool>,
) -> Result<Option<JobResult>> {
    let Entry::Ready(m) = &ctx.plan.entries[index] else {
        bail!("job for a rejected mutation");
    };
    let cfg = &ctx.plan.tests[m.test];
    let original = ctx
        .plan
        .originals
        .get(&m.file)
        .context("original bytes")?
        .clone();
    let started = Instant::now();
    ctx.progress.status(&m.id);

    // Apply, then prove on disk that it arrived.
    let mutated = m.mutated(&original)?;
    scratch.write(&m.file, &mutated)?;
    let on_disk = scratch.read(&m.file)?;
    let diff = mutate::unified_diff(&m.file, &original, &on_disk);
    let diff_name = format!("{}.diff", m.id);
    let log_name = format!("{}.log", m.id);
    std::fs::write(ctx.opts.out.join(&diff_name), &diff)?;
    if diff.is_empty() {
        scratch.write(&m.file, &original)?;
        let mut r = base_result(
            ctx,
            m,
            Outcome::NoOp,
            "the mutant did not change the file on disk".into(),
        );
        r.diff_file = Some(diff_name);
        return Ok(Some(JobResult::Mutant(index, Box::new(r))));
    }
    let timeout = test_timeout(ctx, Some(m), m.test);
    let log = ctx.opts.out.join(&log_name);

    // Viability check (e.g. a compiler) before the suite.
    if let Some(check) = &cfg.check {
        scratch.purge_stale_bytecode();
        let check_log = ctx.opts.out.join(format!("{}.check.log", m.id));
        let res = run::run(
            Invocation {
                command: check,
                cwd: &scratch.tree,
                env: env_for(cfg, w, &m.id, scratch),
                substitutions: vec![("{file}", m.file.clone())],
                log: &check_log,
                timeout,
                label: format!("check of mutant {}", m.id),
            },
            cancel.clone(),
        )
        .await;
        match res.exit {
            Exit::Interrupted => {
                scratch.write(&m.file, &original)?;
                return Ok(None);
            }
            Exit::Code(0) => {}
            other => {
                scratch.write(&m.file, &original)?;
                let mut r = base_result(
                    ctx,
                    m,
                    Outcome::Unviable,
                    format!("the mutant fails `test.check` ({}): it does not build, so it proves nothing", other.describe()),
                );
                r.duration_s = started.elapsed().as_secs_f64();
                r.diff_file = Some(diff_name);
                r.log_file = Some(format!("{}.check.log", m.id));
                r.exit = Some(other.describe());
                return Ok(Some(JobResult::Mutant(index, Box::new(r))));
            }
        }
    }

    let first = suite_run(ctx, scratch, w, m, &log, timeout, &cancel).await;
    if first.res.exit == Exit::Interrupted {
        scratch.write(&m.file, &original)?;
        return Ok(None);
    }
    let pats = ctx.patterns.get(&m.id).map(Vec::as_slice).unwrap_or(&[]);
    let ran = first.tests_ran();
    let v = outcome::classify(&first.res, cfg, first.report, pats, timeout.as_secs_f64());
    // Survivors may be re-checked: a suite that goes red on a re-run is flaky
    // here, and the mutant is neither killed nor cleanly survived.
    let mut flip = None;
    if v.outcome == Outcome::Survived {
        for k in 1..=ctx.opts.recheck_survivors {
            let name = format!("{}.recheck-{k}.log", m.id);
            let again = suite_run(
                ctx,
                scratch,
                w,
                m,
                &ctx.opts.out.join(&name),
                timeout,
                &cancel,
            )
            .await;
            if again.res.exit == Exit::Interrupted {
                scratch.write(&m.file, &original)?;
                return Ok(None);
            }
            let v2 = outcome::classify(&again.res, cfg, again.report, pats, timeout.as_secs_f64());
            if v2.outcome != Outcome::Survived {
                flip = Some((k, name, v2));
                break;
            }
        }
    }
    // Restore before the next job.
    scratch.write(&m.file, &original)?;
    let mut r = base_result(ctx, m, v.outcome, v.detail);
    if r.outcome != Outcome::Killed {
        r.tests_ran = ran;
    }
    r.red_tests = v.red_tests;
    r.tests_total = v.tests_total;
    r.duration_s = first.res.duration.as_secs_f64();
    r.exit = Some(first.res.exit.describe());
    r.diff_file = Some(diff_name);
    r.log_file = Some(log_name);
    if let Some((k, name, v2)) = flip {
        r.outcome = Outcome::Flaky;
        r.detail = format!(
            "survived, then re-check {k} of {} went {} ({}): the suite is flaky for this mutant, so neither verdict is proof (log: {name})",
            ctx.opts.recheck_survivors,
            v2.outcome.as_str(),
            v2.detail
        );
        r.red_tests = v2.red_tests;
    }
    Ok(Some(JobResult::Mutant(index, Box::new(r))))
}

/// One run of a mutant's suite, with its JUnit report when configured.
struct SuiteRun {
    res: run::RunResult,
    report: Option<Result<junit::Report, String>>,
}

impl SuiteRun {
    fn tests_ran(&self) -> Vec<String> {
        match &self.report {
            Some(Ok(r)) => r.cases.iter().map(|c| c.id()).collect(),
            _ => Vec::new(),
        }
    }
}

/// Run mutant `m`'s suite in the scratch copy (the mutation is in place).
async fn suite_run(
    ctx: &Ctx,
    scratch: &mut Scratch,
    w: usize,
    m: &Mutant,
    log: &Path,
    timeout: Duration,
    cancel: &watch::Receiver<bool>,
) -> SuiteRun {
    let cfg = &ctx.plan.tests[m.test];
    scratch.purge_stale_bytecode();
    let junit_path = scratch.next_junit_path(&m.id);
    // A report left by an earlier run must never be read as this run's.
    let report_path = junit_report_path(cfg, &junit_path, &scratch.tree);
    if let Some(p) = &report_path {
        let _ = std::fs::remove_file(p);
    }
    let res = run::run(
        Invocation {
            command: &cfg.command,
            cwd: &scratch.tree,
            env: env_for(cfg, w, &m.id, scratch),
            substitutions: vec![
                ("{junit}", junit_path.display().to_string()),
                ("{file}", m.file.clone()),
            ],
            log,
            timeout,
            label: format!("mutant {} ({}:{})", m.id, m.file, m.line),
        },
        cancel.clone(),
    )
    .await;
    let report = report_path.map(|p| junit::read(&p));
    SuiteRun { res, report }
}

fn report_line(ctx: &Ctx, r: &MutantResult) {
    ctx.progress.line(&format!(
        "{:<13} {} ({}:{}) {:.1}s",
        r.outcome.as_str(),
        r.id,
        r.file,
        r.line,
        r.duration_s
    ));
    ctx.progress.inc();
}

/// Create (or reuse) the output directory. An existing directory is only
/// cleared when unguard made it (it holds the `.unguard-out` marker).
pub fn prepare_out_dir(out: &Path) -> Result<()> {
    const MARKER: &str = ".unguard-out";
    if out.exists() {
        let is_ours = out.join(MARKER).exists();
        let empty = std::fs::read_dir(out)?.next().is_none();
        if !is_ours && !empty {
            bail!(
                "output directory {} exists and was not made by unguard; refusing to clear it (choose another --out)",
                out.display()
            );
        }
        if is_ours {
            std::fs::remove_dir_all(out).with_context(|| format!("clearing {}", out.display()))?;
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    std::fs::write(out.join(MARKER), "made by unguard; cleared on every run\n")?;
    Ok(())
}
