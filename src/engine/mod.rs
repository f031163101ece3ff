//! The mutation loop: baselines → canaries → mutants, on N workers with one
//! scratch copy each, every job in one queue (a command's canaries and
//! mutants wait for its own baseline only). Reads the plan, writes the
//! results model; knows nothing about report formats.
//!
//! - [`prepare`]: the output dir, the manifest of the copy, the banner;
//! - [`baseline`]: each test command runs unmutated and must be usable;
//!   the board of the green ones;
//! - [`scheduler`]: the job queue, the workers and the canary board;
//! - [`job`]: one canary or one mutant in a scratch copy;
//! - [`kill_first`]: the tests that can kill a mutant, run before the full
//!   suite, through the runners of [`crate::runner`];
//! - [`suite`]: one run of a test command, as every phase makes it;
//! - [`signals`]: Ctrl-C, SIGTERM and SIGHUP.
//!
//! Every verdict is decided in [`crate::outcome`]; file names in the output
//! dir come from [`crate::outdir`].

mod baseline;
mod coverage_run;
mod incremental;
mod job;
mod kill_first;
mod prepare;
mod scheduler;
mod signals;
mod suite;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use baseline::{AUTO_TIMEOUT_FACTOR, AUTO_TIMEOUT_MIN, BASELINE_CAP};
pub use incremental::{read as read_earlier, Earlier};

use crate::error::{Context, Error, Result};
use crate::outcome;
use crate::outcome::reading::model::TestPattern;
use crate::plan::{Entry, Plan};
use crate::progress::Progress;
use crate::results::{
    BaselineResult, CanaryResult, GateConfig, MutantResult, Results, Selection, Thresholds,
    TimeoutPolicy, SCHEMA,
};
use crate::run::reaper;
use crate::spec::Spec;
use crate::workspace::{Manifest, Pristine};
use job::JobResult;
use scheduler::{CanaryBoard, Copy};
use signals::Interrupts;

/// How one run goes, from the command line and the spec: what `run` and
/// `audit` hand the engine with the plan.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// The output dir (`-o`): outcomes.json, diffs, logs, reports.
    pub out: PathBuf,
    /// Workers asked for (`-j`, default the number of cores); never more than
    /// the mutants ready to run.
    pub jobs: usize,
    /// `--no-canary`: skip the reach proof that empties each mutated file once.
    pub no_canary: bool,
    /// How timeouts count (`--timeout-is`, else `gate.timeout_is`, else killed).
    pub timeout_policy: TimeoutPolicy,
    /// Overrides every timeout (`--timeout`).
    pub timeout: Option<Duration>,
    /// Root as the user wrote it (for the results).
    pub root_display: String,
    /// Runs of each baseline (`--baseline-runs`, ≥ 1): all must agree.
    pub baseline_runs: usize,
    /// Re-runs of each survivor (`--recheck-survivors`); a red one makes it `flaky`.
    pub recheck_survivors: usize,
    /// Re-runs of each kill (`--recheck-kills`); one that is not a kill makes it `flaky`.
    pub recheck_kills: usize,
    /// The gate's configuration (`gate:` with the flags applied), recorded in
    /// the results.
    pub gate: GateConfig,
    /// The score's colouring thresholds (`thresholds:`), recorded in the results.
    pub thresholds: Thresholds,
    /// What the filters selected, recorded in the results.
    pub selection: Selection,
    /// How each run's processes are tied to it (`--isolation`).
    pub isolation: crate::run::isolation::Isolation,
    /// Whether runs may get a network of their own (`--network-isolation`).
    pub network: crate::run::network::NetworkIsolation,
    /// `--full`: every mutant runs the full suite (no kill-first).
    pub full: bool,
    /// `--cold`: no run is forked from a warm interpreter.
    pub cold: bool,
    /// Per-test coverage (off with `--no-coverage`, and under `--full`): a
    /// coverage run after a green baseline picks each mutant's covering
    /// tests and finds the mutants no test executes (`no-coverage`).
    pub coverage: bool,
    /// `--incremental`: the earlier run whose verdicts may be reused.
    pub incremental: Option<Arc<Earlier>>,
}

impl EngineOptions {
    /// The most re-check logs a mutant can leave.
    fn rechecks(&self) -> usize {
        self.recheck_survivors.max(self.recheck_kills)
    }
}

/// A file and the test config its mutants run under: what one canary
/// covers, and the mutants whose killers kill-first tries on each other.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Pair {
    file: String,
    test: usize,
}

impl Pair {
    fn of(m: &crate::plan::Mutant) -> Pair {
        Pair {
            file: m.file.clone(),
            test: m.test,
        }
    }
}

/// What every job of the mutant phase shares.
struct Ctx {
    plan: Plan,
    /// The run's pristine copy: what every scratch copy is made from and
    /// reset to (a worker whose job panicked gets a fresh one); none when
    /// no mutant is ready.
    pristine: Option<Arc<Pristine>>,
    opts: EngineOptions,
    /// Which baselines are green (and the timeout their mutants run under).
    baselines: baseline::Board,
    patterns: HashMap<String, Vec<TestPattern>>,
    progress: Progress,
    canaries: CanaryBoard,
    kill_first: kill_first::KillFirst,
    /// Per file: whether its coverage map may decide there.
    coverage_trust: coverage_run::TrustBoard,
    /// The verdicts reused from an earlier run, and what recording this
    /// run's needs.
    reuse: incremental::Reuse,
}

impl Ctx {
    /// The (file, test config) of mutant `i`; `None` for a rejected entry.
    fn pair_of(&self, i: usize) -> Option<Pair> {
        match &self.plan.entries[i] {
            Entry::Ready(m) => Some(Pair::of(m)),
            Entry::Rejected(_) => None,
        }
    }

    /// The compiled `killed_by` patterns of mutation `id`.
    fn patterns_of(&self, id: &str) -> &[TestPattern] {
        self.patterns.get(id).map_or(&[], Vec::as_slice)
    }

    /// The compiled `killed_by` patterns of mutant `i`.
    fn killed_by(&self, i: usize) -> &[TestPattern] {
        match &self.plan.entries[i] {
            Entry::Ready(m) => self.patterns_of(&m.id),
            Entry::Rejected(_) => &[],
        }
    }

    /// The `unreached` verdict mutant `i` gets from its file's canary, when
    /// the canary is done and made it so.
    fn unreached_by_canary(&self, i: usize) -> Option<outcome::Verdict> {
        let Entry::Ready(m) = &self.plan.entries[i] else {
            return None;
        };
        let finding = self.canaries.finding(&Pair::of(m))?;
        outcome::canary_unreached(&m.file, self.killed_by(i), &finding)
    }

    fn result_of(&self, i: usize, v: outcome::Verdict) -> MutantResult {
        match &self.plan.entries[i] {
            Entry::Ready(m) => {
                crate::results::row::mutant_result(m, self.plan.tests[m.test].command.display(), v)
            }
            Entry::Rejected(r) => crate::results::row::rejected_result(r),
        }
    }

    /// The `internal-error` verdict of mutant `i` (unguard panicked on it).
    fn internal_error_result(&self, i: usize, why: &str) -> MutantResult {
        self.result_of(i, outcome::internal_error(why))
    }

    /// Print a final verdict and count it in the progress bar.
    fn report_line(&self, r: &MutantResult) {
        self.progress.line(&format!(
            "{:<13} {} ({}:{}) {:.1}s",
            r.outcome.as_str(),
            r.id,
            r.file,
            r.line,
            r.duration_s
        ));
        self.progress.inc();
    }
}

/// The number of workers when `-j` is not given: one per core.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Prepare `opts.out`, list the target tree, check that every mutated file
/// is part of the copy, print the banner, and run the loop. Returns the
/// output dir as used (absolute when it can be) and the results.
pub fn run_plan(spec: &Spec, plan: Plan, mut opts: EngineOptions) -> Result<(PathBuf, Results)> {
    let (out, manifest) = prepare::out_dir_and_manifest(spec, &opts.out)?;
    prepare::check_targets_copied(&plan, &manifest)?;
    eprintln!("{}", prepare::banner(&plan, &manifest, &opts.root_display));
    let (plan, reuse) = incremental::split(spec, plan, &manifest, &opts);
    incremental::write_diffs(&out, &reuse)?;
    opts.out = out.clone();
    let results = execute(spec, plan, manifest, opts, reuse)?;
    Ok((out, results))
}

/// Check that every mutated file of `plan` is part of the copy `run` would
/// make (not ignored by git), with the diagnostic `run` refuses it with;
/// lists the tree only: no output dir, no copy, no test.
pub fn check_copyable(spec: &Spec, plan: &Plan) -> Result<()> {
    prepare::check_targets_copied(plan, &prepare::manifest(spec, &[])?)
}

/// Run the loop. The manifest must describe the target tree; the output dir must exist.
fn execute(
    spec: &Spec,
    plan: Plan,
    manifest: Manifest,
    opts: EngineOptions,
    reuse: incremental::Reuse,
) -> Result<Results> {
    crate::run::isolation::set_mode(opts.isolation);
    crate::run::network::set_mode(opts.network);
    // No descriptor unguard inherited reaches a suite (or a supervisor).
    crate::run::platform::no_inherited_fds();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(opts.jobs.clamp(1, 8))
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(execute_async(spec, plan, manifest, opts, reuse))
}

async fn execute_async(
    spec: &Spec,
    plan: Plan,
    manifest: Manifest,
    opts: EngineOptions,
    reuse: incremental::Reuse,
) -> Result<Results> {
    let started = Instant::now();
    let started_at = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now())
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let interrupts = Interrupts::install()?;
    let ready = plan.ready().count();
    // Nothing to run (every selected mutation was rejected, or a filter or
    // shard selected none): no copy, no baseline.
    let workers = if ready == 0 {
        0
    } else {
        opts.jobs.max(1).min(ready)
    };
    let progress = Progress::new(ready as u64);
    let (pristine, copies) = copies(manifest, workers).await?;
    // Every job stops on Ctrl-C, and when a baseline cannot be used.
    let (stop, cancel) = stop_on(interrupts.cancel.clone());
    let (jobs, canaries) = if workers == 0 {
        (Default::default(), Default::default())
    } else {
        scheduler::queue(&plan, opts.no_canary)
    };
    let ctx = Arc::new(Ctx {
        baselines: baseline::Board::new(plan.tests.len(), stop, workers > 1),
        patterns: baseline::killed_by_patterns(&plan),
        plan,
        pristine,
        opts,
        progress,
        canaries,
        kill_first: Default::default(),
        coverage_trust: Default::default(),
        reuse,
    });
    let phase = scheduler::run_phase(&ctx, copies, jobs, &cancel).await;
    // Every worker is done: so are their warm interpreters.
    crate::run::warm::stop_all().await;
    // A baseline that cannot be used (or a baseline job that failed) stops
    // the run: exit 4, and no verdict of the jobs it stopped counts.
    if let Some(e) = ctx.baselines.take_failure() {
        return Err(ctx.stopped(e, interrupts).await);
    }
    // Interrupted before any baseline was green: nothing ran.
    if Interrupts::interrupted() && workers > 0 && ctx.baselines.results().is_empty() {
        return Err(ctx.stopped(Error::Interrupted, interrupts).await);
    }
    // (A write into the output dir that failed stopped the run: the errors
    // it caused are that one, and the finished verdicts are published.)
    if !phase.errors.is_empty() && crate::outdir::write_failure().is_none() {
        ctx.progress.finish();
        return Err(Error::Internal(phase.errors.join("; ")));
    }
    // Verdicts still waiting for a canary that never finished (interrupted):
    // unproven, so they are left out like mutants that never ran.
    for r in ctx.canaries.abandon() {
        crate::outdir::discard_mutant_files(&ctx.opts.out, &r, ctx.opts.rechecks());
    }
    ctx.progress.finish();
    interrupts.stop();
    // Anything reparented to unguard that no run's sweep could attribute.
    reaper::reap_orphans_async().await;
    Ok(assemble(
        spec,
        &ctx,
        Run {
            started,
            started_at,
            workers,
            baselines: ctx.baselines.results(),
            phase: phase.results,
        },
    ))
}

impl Ctx {
    /// The run stops with `e` before its results: the bar goes, the
    /// signal handlers too, and so does any orphan left.
    async fn stopped(&self, e: Error, interrupts: Interrupts) -> Error {
        self.progress.finish();
        interrupts.stop();
        reaper::reap_orphans_async().await;
        e
    }
}

/// A stop signal for the run's jobs: set by the returned sender (a
/// baseline that cannot be used) or when `interrupt` is (Ctrl-C).
fn stop_on(
    mut interrupt: tokio::sync::watch::Receiver<bool>,
) -> (
    tokio::sync::watch::Sender<bool>,
    tokio::sync::watch::Receiver<bool>,
) {
    let (stop, stopped) = tokio::sync::watch::channel(*interrupt.borrow());
    let forward = stop.clone();
    tokio::spawn(async move {
        loop {
            if *interrupt.borrow_and_update() {
                let _ = forward.send(true);
                return;
            }
            if interrupt.changed().await.is_err() {
                return;
            }
        }
    });
    (stop, stopped)
}

/// Run `make` on a blocking thread; an error of an interrupted run is the interrupt.
async fn blocking<T: Send + 'static>(
    make: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let made = tokio::task::spawn_blocking(make)
        .await
        .map_err(|e| Error::Internal(format!("copy task: {e}")))?;
    match made {
        Err(_) if Interrupts::interrupted() => Err(Error::Interrupted),
        other => other,
    }
}

/// Make the run's pristine copy, then start making every worker's copy
/// from it in the background (each worker starts on its first job as soon
/// as its own copy is made).
async fn copies(manifest: Manifest, workers: usize) -> Result<(Option<Arc<Pristine>>, Vec<Copy>)> {
    if workers == 0 {
        return Ok((None, Vec::new()));
    }
    let manifest = Arc::new(manifest);
    let pristine = Arc::new(blocking(move || Pristine::create(manifest)).await?);
    let copies = (0..workers).map(|w| Copy::start(&pristine, w)).collect();
    Ok((Some(pristine), copies))
}

/// What a finished mutant phase hands to [`assemble`].
struct Run {
    started: Instant,
    started_at: String,
    workers: usize,
    baselines: Vec<BaselineResult>,
    phase: Vec<JobResult>,
}

/// The results model: verdicts in spec order (rejected entries keep their
/// place), judged by the gate.
fn assemble(spec: &Spec, ctx: &Ctx, run: Run) -> Results {
    let mut canaries: Vec<CanaryResult> = Vec::new();
    let mut results: BTreeMap<usize, MutantResult> = BTreeMap::new();
    for r in run.phase {
        match r {
            JobResult::Canary(c) => canaries.push(c),
            JobResult::Mutant(i, m) => {
                results.insert(i, *m);
            }
        }
    }
    canaries.sort_by(|a, b| (&a.file, &a.command).cmp(&(&b.file, &b.command)));
    for (i, e) in ctx.plan.entries.iter().enumerate() {
        if let Entry::Rejected(r) = e {
            results.insert(i, crate::results::row::rejected_result(r));
        }
    }
    let interrupted = Interrupts::interrupted();
    let opts = &ctx.opts;
    let mut mutants: Vec<MutantResult> = ctx.reuse.join(results).into_values().collect();
    let hashes = incremental::record(spec, ctx, &ctx.reuse, &mut mutants);
    let (summary, gate) =
        crate::gate::judge(&mut mutants, &opts.gate, opts.timeout_policy, interrupted);
    let sources = ctx
        .plan
        .originals
        .iter()
        .map(|(path, bytes)| (path.clone(), String::from_utf8_lossy(bytes).into_owned()))
        .collect();
    Results {
        schema: SCHEMA.into(),
        unguard_version: env!("CARGO_PKG_VERSION").into(),
        fingerprint: Some(crate::results::fingerprint::of_run(spec)),
        started_at: Some(run.started_at),
        root: opts.root_display.clone(),
        spec: spec.spec_path.display().to_string(),
        timeout_policy: opts.timeout_policy,
        jobs: run.workers,
        interrupted,
        duration_s: run.started.elapsed().as_secs_f64(),
        baselines: run.baselines,
        canaries,
        subset_checks: ctx.kill_first.rows(),
        coverage_files: ctx.coverage_trust.rows(ctx),
        mutants,
        summary,
        gate,
        gate_config: opts.gate.clone(),
        thresholds: opts.thresholds,
        selection: opts.selection.clone(),
        sources,
        hashes,
    }
}
