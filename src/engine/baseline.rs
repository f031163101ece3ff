//! The baselines: each distinct test command runs unmutated and must be
//! green, count its tests and agree with itself; it sets the mutants'
//! timeout, and its JUnit report checks every `killed_by` pattern. Each
//! baseline is a job of its own (see [`super::scheduler`]): baselines of
//! different commands run side by side, and a command's canaries and mutants
//! start as soon as *its* baseline is green, whatever the others are doing.
//! A baseline that is not usable stops the run (exit 4): the [`Board`]
//! keeps the first such error and stops every other job.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{watch, Notify};

use super::suite::{run_suite, SuiteCall, Warmth};
use super::{coverage_run, Ctx, EngineOptions};
use crate::coverage::CoverageMap;
use crate::error::{BaselineError, Error, Result};
use crate::outcome::reading::model::{Report, Status, TestPattern};
use crate::outcome::reading::suite_log::Runner;
use crate::outcome::{self, BaselineVerdict};
use crate::outdir;
use crate::plan::Plan;
use crate::progress::Progress;
use crate::results::{BaselineResult, Network};
use crate::run;
use crate::runner::Handle;
use crate::spec::diag::{Diagnostic, Diagnostics};
use crate::spec::{TestConfig, TimeoutSetting};
use crate::workspace::Scratch;

/// Floor of the automatic timeout (`timeout: auto`; floor and multiplier
/// as cargo-mutants has them).
pub const AUTO_TIMEOUT_MIN: Duration = Duration::from_secs(20);
/// Multiplier of the automatic timeout: mutants get this many times their
/// baseline's duration, at least [`AUTO_TIMEOUT_MIN`].
pub const AUTO_TIMEOUT_FACTOR: u32 = 5;
/// Cap for the baseline run when no fixed timeout is configured.
pub const BASELINE_CAP: Duration = Duration::from_secs(30 * 60);

/// Where one test config's baseline stands.
enum Slot {
    /// Queued or running: its canaries and mutants wait.
    Pending,
    /// Green: its row, the timeout its mutants run under, its JUnit report
    /// (the tests a subset is picked from) and how it runs a subset.
    Green {
        result: Box<BaselineResult>,
        timeout: Duration,
        report: Option<Arc<Report>>,
        adapter: Option<Handle>,
        /// Its coverage run's map, when one was made and is usable.
        coverage: Option<Arc<CoverageMap>>,
    },
}

/// What the baseline jobs share with the rest of the run: which baselines
/// are green, the first error that stops the run, and a wake-up for the
/// workers that wait for a baseline.
pub(super) struct Board {
    slots: Mutex<Vec<Slot>>,
    /// The first unusable baseline (or a baseline job that failed): the
    /// run's error.
    failure: Mutex<Option<Error>>,
    /// Stops every job of the run (set with `failure`).
    stop: watch::Sender<bool>,
    /// Rung whenever a baseline is settled (green or not).
    pub settled: Notify,
    /// Commands whose baseline counted no tests (warned about once).
    uncounted: Mutex<BTreeSet<String>>,
    /// Per test config: its runs go without unguard's convenience
    /// additions (they turned its baseline red; see [`Baseline::once`]).
    bare: Vec<AtomicBool>,
    /// Per test config: its runs get a network namespace of their own
    /// (its baseline was the same inside one; see [`Baseline::network`]).
    isolated: Vec<AtomicBool>,
    /// Per test config: the modules its warm interpreters import before
    /// they fork its runs (`None`: its runs start as written; see
    /// [`Baseline::warm`]).
    warm: Vec<Mutex<Option<Arc<Vec<String>>>>>,
    /// Several workers run at once: only then can one run take another's
    /// port, and only then is a namespace worth its baseline's second run.
    workers_share: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Board {
    /// A board for `n` test configs; `stop` stops the run's jobs;
    /// `workers_share`: more than one worker runs mutants.
    pub fn new(n: usize, stop: watch::Sender<bool>, workers_share: bool) -> Board {
        Board {
            slots: Mutex::new((0..n).map(|_| Slot::Pending).collect()),
            failure: Mutex::new(None),
            stop,
            settled: Notify::new(),
            uncounted: Mutex::new(BTreeSet::new()),
            bare: (0..n).map(|_| AtomicBool::new(false)).collect(),
            isolated: (0..n).map(|_| AtomicBool::new(false)).collect(),
            warm: (0..n).map(|_| Mutex::new(None)).collect(),
            workers_share,
        }
    }

    /// Whether test config `test`'s runs get a network namespace of their
    /// own (see [`super::suite::SuiteCall::network`]).
    pub fn isolated(&self, test: usize) -> bool {
        self.isolated
            .get(test)
            .is_some_and(|b| b.load(Ordering::Relaxed))
    }

    /// How test config `test`'s runs start: forked from a warm interpreter
    /// (its baseline agreed both ways) or as written.
    pub fn warmth(&self, test: usize) -> Warmth {
        match self.warm.get(test).and_then(|w| lock(w).clone()) {
            Some(names) => Warmth::Preloaded(names, None),
            None => Warmth::Cold,
        }
    }

    /// Whether test config `test`'s runs go without unguard's convenience
    /// additions (see [`super::suite::SuiteCall::bare`]).
    pub fn bare(&self, test: usize) -> bool {
        self.bare
            .get(test)
            .is_some_and(|b| b.load(Ordering::Relaxed))
    }

    /// Per test config: how long its green baseline took (`None` while it
    /// is not green: its jobs cannot start).
    pub fn weights(&self) -> Vec<Option<f64>> {
        lock(&self.slots)
            .iter()
            .map(|s| match s {
                Slot::Green { result, .. } => Some(result.duration_s),
                Slot::Pending => None,
            })
            .collect()
    }

    /// The timeout mutants of test config `test` run under (its baseline
    /// is green: no job of it runs before).
    pub fn timeout(&self, test: usize) -> Duration {
        match lock(&self.slots).get(test) {
            Some(Slot::Green { timeout, .. }) => *timeout,
            _ => BASELINE_CAP,
        }
    }

    /// The JUnit report of test config `test`'s green baseline, and the
    /// adapter that runs a subset of its tests (kill-first).
    pub fn subset_source(&self, test: usize) -> Option<(Arc<Report>, Handle)> {
        match lock(&self.slots).get(test) {
            Some(Slot::Green {
                report: Some(r),
                adapter: Some(a),
                ..
            }) => Some((r.clone(), a.clone())),
            _ => None,
        }
    }

    /// The map of test config `test`'s coverage run, when it is usable.
    pub fn coverage(&self, test: usize) -> Option<Arc<CoverageMap>> {
        match lock(&self.slots).get(test) {
            Some(Slot::Green { coverage, .. }) => coverage.clone(),
            _ => None,
        }
    }

    /// The rows of the green baselines, in test config order.
    pub fn results(&self) -> Vec<BaselineResult> {
        lock(&self.slots)
            .iter()
            .filter_map(|s| match s {
                Slot::Green { result, .. } => Some(BaselineResult::clone(result)),
                Slot::Pending => None,
            })
            .collect()
    }

    /// The error that stopped the run, if a baseline did.
    pub fn take_failure(&self) -> Option<Error> {
        lock(&self.failure).take()
    }

    /// A baseline cannot be used: keep the first such error, stop the run.
    fn fail(&self, e: Error) {
        lock(&self.failure).get_or_insert(e);
        let _ = self.stop.send(true);
        self.settled.notify_waiters();
    }

    /// Record a green baseline; when it is the last one, warn once about
    /// every command whose tests are not counted.
    fn green_now(&self, test: usize, green: Green, progress: &Progress) {
        let all_green = {
            let mut slots = lock(&self.slots);
            slots[test] = Slot::Green {
                result: Box::new(green.result),
                timeout: green.timeout,
                adapter: green.adapter,
                report: green.report.map(Arc::new),
                coverage: green.coverage,
            };
            slots.iter().all(|s| matches!(s, Slot::Green { .. }))
        };
        if all_green {
            let uncounted = lock(&self.uncounted);
            if !uncounted.is_empty() {
                let names: Vec<String> = uncounted.iter().map(|c| format!("`{c}`")).collect();
                progress.line(&format!(
                    "warning: no `test.junit` configured for {}: tests are not counted, and a suite that runs zero tests would look green",
                    names.join(", ")
                ));
            }
        }
        self.settled.notify_waiters();
    }
}

/// Settles a baseline job however it ends: a job that neither turned green
/// nor failed (it panicked) fails the run, so no worker waits for it forever.
struct Settling<'a> {
    board: &'a Board,
    command: String,
    done: bool,
}

impl Drop for Settling<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.board.fail(Error::Internal(format!(
                "the baseline of `{}` did not finish",
                self.command
            )));
        }
    }
}

/// Run test config `test`'s baseline in worker `w`'s copy, and check the
/// `killed_by` patterns of its mutants against its report. Green: its
/// canaries and mutants may start. Unusable: the run stops with its error.
/// `false` when the run stops (this baseline's error, or an interrupt).
pub(super) async fn run_job(
    w: usize,
    scratch: &mut Scratch,
    ctx: &Ctx,
    test: usize,
    cancel: &watch::Receiver<bool>,
) -> bool {
    let (plan, board, progress) = (&ctx.plan, &ctx.baselines, &ctx.progress);
    let cfg = &plan.tests[test];
    let mut settling = Settling {
        board,
        command: cfg.command.display(),
        done: false,
    };
    let b = Baseline {
        i: test,
        n_tests: plan.tests.len(),
        worker: w,
        cfg,
        opts: &ctx.opts,
        progress,
        cancel,
        uncounted: &board.uncounted,
        bare: board.bare.get(test),
        isolated: board.isolated.get(test).filter(|_| board.workers_share),
        warm: board.warm.get(test).filter(|_| !ctx.opts.cold),
    };
    let checked = match b.run(scratch).await {
        Ok(green) => check_killed_by(plan, test, green.report.as_ref()).map(|()| green),
        Err(e) => Err(e),
    };
    let checked = match checked {
        Ok(green) => with_coverage(w, scratch, ctx, test, green, cancel).await,
        Err(e) => Err(e),
    };
    settling.done = true;
    match checked {
        Ok(green) => {
            board.green_now(test, green, progress);
            true
        }
        // Stopped by Ctrl-C, or by another baseline's error.
        Err(Error::Interrupted) => {
            board.settled.notify_waiters();
            false
        }
        Err(e) => {
            board.fail(e);
            false
        }
    }
}

/// The coverage run of test config `test` after its green baseline, when
/// it gets one ([`coverage_run::wanted`]): its map and row join `green`.
/// A run that cannot be made is said and left out; only an interrupt stops.
async fn with_coverage(
    w: usize,
    scratch: &mut Scratch,
    ctx: &Ctx,
    test: usize,
    mut green: Green,
    cancel: &watch::Receiver<bool>,
) -> Result<Green> {
    let cfg = &ctx.plan.tests[test];
    green.adapter = crate::runner::for_subsets(cfg, &scratch.tree, green.shown);
    if !coverage_run::wanted(ctx, test, green.adapter.as_ref()) {
        return Ok(green);
    }
    let timeout = ctx.opts.timeout.unwrap_or(green.timeout);
    match coverage_run::measure(
        w,
        scratch,
        ctx,
        test,
        green.adapter.as_ref(),
        green.report.as_ref(),
        timeout,
        cancel,
    )
    .await
    {
        Ok(Some(m)) => {
            green.coverage = m.map;
            green.result.coverage = Some(Box::new(m.row));
        }
        Ok(None) => {}
        Err(Error::Interrupted) => return Err(Error::Interrupted),
        Err(e) => ctx.progress.line(&format!(
            "warning: no coverage run for `{}`: {e}; mutants run without per-test selection",
            cfg.command.display()
        )),
    }
    Ok(green)
}

/// A green baseline: its result row, the timeout its mutants run under, and
/// its JUnit report (when the config has one).
struct Green {
    result: BaselineResult,
    timeout: Duration,
    report: Option<Report>,
    /// The one runner its run showed (see [`crate::runner::shown_alone`]).
    shown: Option<Runner>,
    /// How it runs a subset (set once the baseline is green).
    adapter: Option<Handle>,
    /// Its coverage run's map, when usable.
    coverage: Option<Arc<CoverageMap>>,
}

/// The baseline of test config `i` (of `n_tests`), in worker `worker`'s copy.
struct Baseline<'a> {
    i: usize,
    n_tests: usize,
    worker: usize,
    cfg: &'a TestConfig,
    opts: &'a EngineOptions,
    progress: &'a Progress,
    cancel: &'a watch::Receiver<bool>,
    uncounted: &'a Mutex<BTreeSet<String>>,
    /// This config's flag on the board: its runs go bare.
    bare: Option<&'a AtomicBool>,
    /// This config's flag on the board: its runs get their own network
    /// (`None`: one worker, nothing to keep apart; the check is not made).
    isolated: Option<&'a AtomicBool>,
    /// This config's warm modules on the board (`None`: `--cold`).
    warm: Option<&'a Mutex<Option<Arc<Vec<String>>>>>,
}

impl Baseline<'_> {
    /// Run the unmutated suite `opts.baseline_runs` times. Red, hung, or no
    /// tests counted: the run stops (exit 4), since every verdict would be
    /// meaningless; a later run that differs from the first means the
    /// baseline is flaky, and stops the run too.
    async fn run(&self, scratch: &mut Scratch) -> Result<Green> {
        let runs = self.opts.baseline_runs.max(1);
        let mut first = self.once(scratch, 1).await?;
        for k in 2..=runs {
            let again = self.once(scratch, k).await.map_err(|e| match e {
                Error::Baseline(red) => Error::Baseline(red.flaky(k, runs)),
                other => other,
            })?;
            let (a, b) = (first.result.tests_total, again.result.tests_total);
            if a != b {
                let detail = format!(
                    "it ran {} tests, run 1 ran {} (log: {})",
                    counted(b),
                    counted(a),
                    again.result.log_file
                );
                return Err(Error::Baseline(
                    BaselineError::red(detail, None).flaky(k, runs),
                ));
            }
            // The slowest run sets the automatic timeout.
            if again.result.duration_s > first.result.duration_s {
                first.result.duration_s = again.result.duration_s;
                first.timeout = again.timeout;
                first.result.timeout_s = again.result.timeout_s;
            }
        }
        if runs > 1 {
            self.progress.line(&format!(
                "baseline: {runs} runs agree (green, {} tests){}",
                counted(first.result.tests_total),
                self.named()
            ));
        }
        self.network(scratch, &mut first).await?;
        self.warm(scratch, &mut first).await?;
        Ok(first)
    }

    /// Whether this command's runs are forked from a warm interpreter
    /// ([`crate::run::warm`]). Only for a runner that names what may be
    /// forked (pytest, unittest) and a command that is one start of it.
    /// The green baseline runs twice more, forked: first from an
    /// interpreter that has imported nothing of the suite (its child
    /// records the modules it ended with), then from one that imported
    /// those not the project's first. Only when both give the same tests
    /// with the same outcomes as the baseline (and the second was forked
    /// from the full interpreter) do the runs go warm; otherwise one
    /// `note:` line and `baselines[].warm_note` say why.
    async fn warm(&self, scratch: &mut Scratch, green: &mut Green) -> Result<()> {
        let Some(slot) = self.warm else {
            return Ok(());
        };
        if !super::suite::forkable(self.cfg, scratch) {
            return Ok(());
        }
        let area = scratch.junit_dir.with_file_name("warm-modules");
        let _ = std::fs::create_dir_all(&area);
        let first_list = area.join("first.txt");
        let second_list = area.join("second.txt");
        let _ = std::fs::remove_file(&first_list);
        let _ = std::fs::remove_file(&second_list);
        let log_a = green.result.log_file.replacen(".log", ".warm.log", 1);
        let run = self
            .suite_as(
                scratch,
                &log_a,
                Some(green.timeout),
                Warmth::Record(first_list.clone()),
            )
            .await?;
        if !run.res.forked {
            // Not a forkable start (no note: most commands), or it could
            // not be forked: then the log's `# warm:` line says why.
            if let Some(why) = warm_refusal(&self.opts.out.join(&log_a)) {
                self.warm_off(green, &format!("{why}; log {log_a}"));
            }
            return Ok(());
        }
        if let Some(d) = self.differs(green, &run, ("forked", "as written"))? {
            self.warm_off(green, &format!("forked, it differs ({d}; log {log_a})"));
            return Ok(());
        }
        let Ok(text) = std::fs::read_to_string(&first_list) else {
            let why = warm_refusal(&self.opts.out.join(&log_a))
                .unwrap_or_else(|| "the forked run did not say which modules it imported".into());
            self.warm_off(green, &format!("{why}; log {log_a}"));
            return Ok(());
        };
        let names: Arc<Vec<String>> = Arc::new(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect(),
        );
        let log_b = green
            .result
            .log_file
            .replacen(".log", ".warm-preloaded.log", 1);
        let run = self
            .suite_as(
                scratch,
                &log_b,
                Some(green.timeout),
                Warmth::Preloaded(Arc::clone(&names), Some(second_list.clone())),
            )
            .await?;
        let why = if !run.res.forked || !second_list.exists() {
            Some(
                warm_refusal(&self.opts.out.join(&log_b)).unwrap_or_else(|| {
                    "the run with the suite's modules imported first was not forked".into()
                }),
            )
        } else {
            self.differs(green, &run, ("forked", "as written"))?
                .map(|d| {
                    format!("with the suite's third-party modules imported first, it differs ({d})")
                })
        };
        let _ = std::fs::remove_dir_all(&area);
        match why {
            Some(w) => self.warm_off(green, &format!("{w}; log {log_b}")),
            None => {
                *lock(slot) = Some(names);
                green.result.warm = true;
            }
        }
        Ok(())
    }

    /// How `run`, the unmutated suite run once more (in a namespace, or
    /// forked), differs from the green baseline, if it does: the first test
    /// whose outcome differs, else how many went red, else how it ended or
    /// how many tests each counted; `(there, here)` name the two sides.
    fn differs(
        &self,
        green: &Green,
        run: &super::suite::SuiteRun,
        (there, here): (&str, &str),
    ) -> Result<Option<String>> {
        match (green.report.as_ref(), run.junit.report()) {
            (Some(before), Some(now)) => {
                if let Some(d) = outcome_change(before, now, (there, here)) {
                    return Ok(Some(d));
                }
            }
            // The baseline was green: a red test of this run is the change.
            (None, Some(now)) => {
                if let Some(c) = now
                    .cases
                    .iter()
                    .find(|c| matches!(c.status, Status::Failed | Status::Error))
                {
                    return Ok(Some(format!(
                        "`{}` {:?} {there}, green {here}",
                        c.id(),
                        c.status
                    )));
                }
            }
            _ => {}
        }
        Ok(
            match outcome::baseline(&run.res.exit, self.cfg, run.junit.clone()) {
                BaselineVerdict::Interrupted => return Err(Error::Interrupted),
                BaselineVerdict::Red { reason, .. } => Some(match &run.junit {
                    crate::outcome::reading::Reading::Observed(o)
                        if o.red().is_some_and(|n| n > 0) =>
                    {
                        format!("{} test(s) red {there}, green {here}", o.red().unwrap_or(0))
                    }
                    _ => format!("red {there}: {reason}"),
                }),
                BaselineVerdict::Green(_) => {
                    let (a, b) = (green.result.tests_total, run.junit.tests_total());
                    (a != b).then(|| format!("{} tests {there}, {} {here}", counted(b), counted(a)))
                }
            },
        )
    }

    /// Say once why this command's runs start as written.
    fn warm_off(&self, green: &mut Green, why: &str) {
        let note = format!("its runs start as written, not forked from a warm interpreter: {why}");
        self.progress
            .line(&format!("note: `{}`: {note}", self.cfg.command.display()));
        green.result.warm_note = Some(note);
    }

    /// Whether this command's runs get a network namespace of their own.
    /// Only with several workers (one alone shares no port with anyone).
    /// Where the machine gives one ([`run::network::available`]), the green
    /// baseline runs once more inside one, and only the same result there
    /// (green, the same tests with the same outcomes) lets them: a suite
    /// that needs the outside network, or skips tests without it, keeps the
    /// shared network, said in one line and in `outcomes.json`
    /// (`baselines[].network`, `network_note`).
    async fn network(&self, scratch: &mut Scratch, green: &mut Green) -> Result<()> {
        let Some(flag) = self.isolated else {
            return Ok(());
        };
        if let Err(why) = run::network::available() {
            if run::network::mode() != run::network::NetworkIsolation::Off {
                green.result.network_note =
                    Some(format!("no network namespace on this machine: {why}"));
            }
            return Ok(());
        }
        let log_name = green.result.log_file.replacen(".log", ".netns.log", 1);
        let run = self
            .suite(scratch, &log_name, self.is_bare(), Some(green.timeout))
            .await?;
        match self.differs(green, &run, ("there", "outside"))? {
            None => {
                flag.store(true, Ordering::Relaxed);
                green.result.network = Network::Namespace;
            }
            Some(d) => {
                let note = format!(
                    "its baseline is not the same in a network namespace of its own ({d}; log {log_name}): its runs share the machine's network, and confirmations wait for the other workers"
                );
                self.progress
                    .line(&format!("note: `{}`: {note}", self.cfg.command.display()));
                green.result.network_note = Some(note);
            }
        }
        Ok(())
    }

    /// ` (`command`)` when the spec has several commands: their baselines
    /// run side by side, so their lines interleave.
    fn named(&self) -> String {
        if self.n_tests > 1 {
            format!(" (`{}`)", self.cfg.command.display())
        } else {
            String::new()
        }
    }

    /// Whether this config's runs go without unguard's additions.
    fn is_bare(&self) -> bool {
        self.bare.is_some_and(|b| b.load(Ordering::Relaxed))
    }

    /// One run of the unmutated suite into the log `log_name`.
    async fn suite(
        &self,
        scratch: &mut Scratch,
        log_name: &str,
        bare: bool,
        namespace: Option<Duration>,
    ) -> Result<super::suite::SuiteRun> {
        // In a network namespace: the check after a green baseline, under
        // the mutants' timeout (a suite that hangs without the outside
        // network waits no longer than a mutant).
        let run = Check {
            bare,
            network: namespace.is_some(),
            timeout: namespace,
            warm: Warmth::Cold,
        };
        self.check(scratch, log_name, run).await
    }

    /// One forked run of the unmutated suite into `log_name` (the warm
    /// check after a green baseline: as its mutants will run, under their
    /// `timeout`).
    async fn suite_as(
        &self,
        scratch: &mut Scratch,
        log_name: &str,
        timeout: Option<Duration>,
        warm: Warmth,
    ) -> Result<super::suite::SuiteRun> {
        let run = Check {
            bare: self.is_bare(),
            network: self.isolated.is_some_and(|f| f.load(Ordering::Relaxed)),
            timeout,
            warm,
        };
        self.check(scratch, log_name, run).await
    }

    async fn check(
        &self,
        scratch: &mut Scratch,
        log_name: &str,
        run: Check,
    ) -> Result<super::suite::SuiteRun> {
        let (cfg, opts) = (self.cfg, self.opts);
        let Check {
            bare,
            network,
            timeout,
            warm,
        } = run;
        let forked = !matches!(warm, Warmth::Cold);
        let cap = opts.timeout.or(timeout).unwrap_or(match cfg.timeout {
            TimeoutSetting::Fixed(d) => d,
            TimeoutSetting::Auto => BASELINE_CAP,
        });
        run_suite(
            scratch,
            SuiteCall {
                cfg,
                worker: self.worker,
                label: "baseline",
                substitutions: Vec::new(),
                log: &opts.out.join(log_name),
                timeout: cap,
                header: format!(
                    "baseline of `{}`{}{}{}",
                    cfg.command.display(),
                    if bare {
                        " without unguard's additions"
                    } else {
                        ""
                    },
                    if network && !forked {
                        " in a network namespace of its own"
                    } else {
                        ""
                    },
                    if forked {
                        " forked from a warm interpreter"
                    } else {
                        ""
                    }
                ),
                read_junit: true,
                select: &[],
                adapter: None,
                progress: self.progress,
                bare,
                alone: false,
                coverage: None,
                network,
                warm,
            },
            self.cancel,
        )
        .await
    }

    /// Run `k` of the baseline into `log_name`; a first run that hung is run
    /// once more as it was: a hang (a loaded machine, a slow first start) is
    /// never evidence against unguard's additions. The run and its log's name.
    async fn run_once(
        &self,
        scratch: &mut Scratch,
        k: usize,
        log_name: String,
    ) -> Result<(super::suite::SuiteRun, String)> {
        let run = self.suite(scratch, &log_name, self.is_bare(), None).await?;
        if k > 1 || run.res.exit != run::Exit::Timeout {
            return Ok((run, log_name));
        }
        let retry = log_name.replacen(".log", ".retry.log", 1);
        self.progress.line(&format!(
            "baseline: timed out ({log_name}); run once more as it was"
        ));
        let run = self.suite(scratch, &retry, self.is_bare(), None).await?;
        Ok((run, retry))
    }

    /// One run of the baseline (`k` counts from 1). A first run that timed
    /// out is run once more as it was (a hang blames nothing). A red first
    /// run that had unguard's convenience additions is run once more without
    /// them (the isolation stays): green then, the fault is unguard's, so the
    /// additions are dropped for every later run of this command, said in
    /// one warning and recorded in `outcomes.json` (`baselines[].dropped`).
    async fn once(&self, scratch: &mut Scratch, k: usize) -> Result<Green> {
        let (cfg, opts) = (self.cfg, self.opts);
        self.progress
            .line(&format!("baseline: {}", cfg.command.display()));
        let log_name = outdir::baseline_log_name(self.i, self.n_tests, k);
        let (mut run, mut log_name) = self.run_once(scratch, k, log_name).await?;
        let mut dropped = Vec::new();
        let mut verdict = outcome::baseline(&run.res.exit, cfg, run.junit.clone());
        if let BaselineVerdict::Red { reason, tail } = &verdict {
            // Only the first run can blame the additions: a later run that
            // goes red had them too when run 1 was green (a flaky suite);
            // nor can a run that hung.
            if k == 1 && !run.additions.is_empty() && run.res.exit != run::Exit::Timeout {
                let bare_name = log_name.replacen(".log", ".bare.log", 1);
                let again = self.suite(scratch, &bare_name, true, None).await?;
                let bare_verdict = outcome::baseline(&again.res.exit, cfg, again.junit.clone());
                match bare_verdict {
                    BaselineVerdict::Green(_) => {
                        if let Some(flag) = self.bare {
                            flag.store(true, Ordering::Relaxed);
                        }
                        self.progress.line(&format!(
                            "warning: the baseline of `{}` is red with {} and green without it: unguard leaves it out of every run of this command (outcomes.json: baselines[].dropped; logs {log_name}, {bare_name})",
                            cfg.command.display(),
                            run.additions.join(", "),
                        ));
                        dropped = run.additions.clone();
                        run = again;
                        log_name = bare_name;
                        verdict = bare_verdict;
                    }
                    BaselineVerdict::Interrupted => return Err(Error::Interrupted),
                    BaselineVerdict::Red { .. } => {
                        verdict = BaselineVerdict::Red {
                            reason: format!(
                                "{reason} It is red without unguard's additions ({}) too (log: {}).",
                                run.additions.join(", "),
                                opts.out.join(&bare_name).display()
                            ),
                            tail: *tail,
                        };
                    }
                }
            }
        }
        let log = opts.out.join(&log_name);
        // Tests counted by the configured report, or (without `test.junit`)
        // by the report pytest wrote for unguard or the runner's summary line.
        let total = run.junit.tests_total();
        let shown = crate::runner::shown_alone(&run.seen, &run.junit);
        // Red tests that all look like the network: said with the error.
        let network = crate::outcome::network_hint::note(
            &run.junit,
            &log,
            scratch.root(),
            &cfg.command.display(),
        );
        let report = match verdict {
            BaselineVerdict::Interrupted => return Err(Error::Interrupted),
            BaselineVerdict::Red { reason, tail } => {
                let mut msg = format!("{reason}\nlog: {}", log.display());
                if tail {
                    msg.push('\n');
                    msg.push_str(&run::log_tail(&log, 25));
                }
                return Err(Error::Baseline(BaselineError::red(msg, network)));
            }
            BaselineVerdict::Green(report) => report,
        };
        if total.is_none() {
            // Said once for the whole run, naming every such command.
            lock(self.uncounted).insert(cfg.command.display());
        }
        let timeout = match cfg.timeout {
            TimeoutSetting::Fixed(d) => d,
            TimeoutSetting::Auto => AUTO_TIMEOUT_MIN.max(run.res.duration * AUTO_TIMEOUT_FACTOR),
        };
        self.progress.line(&format!(
            "baseline: green in {:.1}s{}; mutant timeout {:.1}s{}",
            run.res.duration.as_secs_f64(),
            total.map(|t| format!(", {t} tests")).unwrap_or_default(),
            opts.timeout.unwrap_or(timeout).as_secs_f64(),
            self.named()
        ));
        Ok(Green {
            result: BaselineResult {
                command: cfg.command.display(),
                duration_s: run.res.duration.as_secs_f64(),
                tests_total: total,
                timeout_s: opts.timeout.unwrap_or(timeout).as_secs_f64(),
                log_file: log_name,
                dropped,
                coverage: None,
                network: Network::Shared,
                network_note: None,
                warm: false,
                warm_note: None,
            },
            timeout,
            report,
            shown,
            adapter: None,
            coverage: None,
        })
    }
}

/// How [`Baseline::check`] runs the suite.
struct Check {
    bare: bool,
    network: bool,
    timeout: Option<Duration>,
    warm: Warmth,
}

/// The reason a warm run's log gives for starting cold (`# warm: started
/// cold: …`, or the client's `# unguard: ran cold (…)`).
fn warm_refusal(log: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(log).ok()?;
    text.lines().find_map(|l| {
        l.strip_prefix("# warm: started cold: ")
            .or_else(|| l.strip_prefix("# unguard: ran cold ("))
            .map(|r| r.trim_end_matches(')').to_string())
    })
}

/// The first test whose outcome differs between two reports of the same
/// suite (or that only one of them ran), in a few words; `None`: the same.
fn outcome_change(
    outside: &Report,
    inside: &Report,
    (there, here): (&str, &str),
) -> Option<String> {
    let map = |r: &Report| -> BTreeMap<String, Status> {
        r.cases.iter().map(|c| (c.id(), c.status)).collect()
    };
    let (a, b) = (map(outside), map(inside));
    if let Some((id, s)) = b.iter().find(|(id, s)| a.get(*id) != Some(*s)) {
        return Some(match a.get(id) {
            Some(was) => format!("`{id}` {s:?} {there}, {was:?} {here}"),
            None => format!("`{id}` ran only {there}"),
        });
    }
    a.keys()
        .find(|id| !b.contains_key(*id))
        .map(|id| format!("`{id}` did not run {there}"))
}

fn counted(n: Option<usize>) -> String {
    n.map_or("uncounted".into(), |n| n.to_string())
}

/// Compile every mutant's `killed_by` patterns (checked against their
/// baseline's report by [`check_killed_by`] once it is green).
pub(super) fn killed_by_patterns(plan: &Plan) -> HashMap<String, Vec<TestPattern>> {
    plan.ready()
        .map(|m| {
            let pats = m.killed_by.iter().map(|k| TestPattern::new(k)).collect();
            (m.id.clone(), pats)
        })
        .collect()
}

/// Every `killed_by` pattern of test config `test`'s mutants must name at
/// least one test of its baseline's `report` (when it has one), or the
/// spec is wrong (a typo would make every kill "wrong-reason").
fn check_killed_by(plan: &Plan, test: usize, report: Option<&Report>) -> Result<()> {
    let Some(report) = report else {
        return Ok(());
    };
    let mut diags = Diagnostics::default();
    for m in plan.ready().filter(|m| m.test == test) {
        for p in m.killed_by.iter().map(|k| TestPattern::new(k)) {
            if !report.cases.iter().any(|c| p.matches(c)) {
                let sample: Vec<String> = report.cases.iter().take(3).map(|c| c.id()).collect();
                diags.push(
                    Diagnostic::new(
                        &m.pos.path,
                        m.pos.line,
                        m.pos.col,
                        format!(
                        "mutation `{}`: killed_by `{}` names no test of the baseline ({} tests)",
                        m.id,
                        p.raw(),
                        report.total()
                    ),
                    )
                    .with_fix(format!(
                        "use a JUnit id like `{}` or a pytest node id",
                        sample.first().cloned().unwrap_or_default()
                    )),
                );
            }
        }
    }
    if diags.is_empty() {
        Ok(())
    } else {
        Err(Error::Diagnostics(diags))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::reading::model::TestCase;

    fn report(cases: &[(&str, Status)]) -> Report {
        Report {
            cases: cases
                .iter()
                .map(|(name, status)| TestCase {
                    classname: "t".into(),
                    name: (*name).into(),
                    status: *status,
                })
                .collect(),
        }
    }

    #[test]
    fn the_same_tests_with_the_same_outcomes_are_no_change_in_any_order() {
        let a = report(&[("a", Status::Passed), ("b", Status::Skipped)]);
        let b = report(&[("b", Status::Skipped), ("a", Status::Passed)]);
        assert_eq!(outcome_change(&a, &b, ("there", "outside")), None);
    }

    #[test]
    fn a_changed_outcome_or_a_test_run_on_one_side_only_is_named() {
        let outside = report(&[("a", Status::Passed), ("b", Status::Passed)]);
        let skipped = report(&[("a", Status::Passed), ("b", Status::Skipped)]);
        assert_eq!(
            outcome_change(&outside, &skipped, ("there", "outside")).as_deref(),
            Some("`t::b` Skipped there, Passed outside")
        );
        let fewer = report(&[("a", Status::Passed)]);
        assert_eq!(
            outcome_change(&outside, &fewer, ("there", "outside")).as_deref(),
            Some("`t::b` did not run there")
        );
        assert_eq!(
            outcome_change(&fewer, &outside, ("there", "outside")).as_deref(),
            Some("`t::b` ran only there")
        );
    }
}
