//! The run's job queue, shared by N workers, each in its own scratch
//! copy: every test command's baseline first; then, per command, its
//! canaries and its mutants in spec order. A command's canaries and mutants
//! can start once *its* baseline is green (see [`super::baseline::Board`]),
//! so one slow baseline holds back its own command's jobs only, and no
//! worker idles while another command's jobs are ready. Among the commands
//! whose jobs can start, a worker takes one of the command whose baseline
//! took longest (its jobs are the long ones: started first, they end the
//! run soonest). A file's mutants may run beside its canary; their verdicts
//! wait on the [`CanaryBoard`] until the canary is done, and become
//! `unreached` when it stayed green.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use super::job::{self, JobResult};
use super::{Ctx, Pair};
use crate::error::Result;
use crate::outcome::{self, CanaryFinding};
use crate::outdir;
use crate::plan::{Entry, Plan};
use crate::results::MutantResult;
use crate::workspace::{Pristine, Scratch};

pub(super) enum Job {
    /// Test config `.0`'s baseline.
    Baseline(usize),
    Canary {
        file: String,
        test: usize,
    },
    Mutant(usize),
}

enum CanaryState {
    /// Not finished: verdicts of its mutants wait here, unprinted.
    Pending(Vec<(usize, MutantResult)>),
    Done(Arc<CanaryFinding>),
}

/// Every canary's state, and the verdicts that wait for one.
#[derive(Default)]
pub(super) struct CanaryBoard(Mutex<HashMap<Pair, CanaryState>>, tokio::sync::Notify);

/// What became of a verdict offered to the board.
pub(super) enum Offer {
    /// Its canary is still running: held.
    Held,
    /// Its canary is done (or there is none): final against this finding.
    Ready(Box<MutantResult>, Arc<CanaryFinding>),
}

impl CanaryBoard {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Pair, CanaryState>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the pair's canary showed; `None` while it runs. A pair without
    /// a canary counts as reached.
    pub fn finding(&self, pair: &Pair) -> Option<Arc<CanaryFinding>> {
        match self.lock().get(pair) {
            None => Some(Arc::new(CanaryFinding::no_canary())),
            Some(CanaryState::Done(f)) => Some(f.clone()),
            Some(CanaryState::Pending(_)) => None,
        }
    }

    /// A mutant's verdict is in: hold it while its canary runs.
    pub fn offer(&self, pair: &Pair, i: usize, r: MutantResult) -> Offer {
        match self.lock().get_mut(pair) {
            Some(CanaryState::Pending(held)) => {
                held.push((i, r));
                Offer::Held
            }
            Some(CanaryState::Done(f)) => Offer::Ready(Box::new(r), f.clone()),
            None => Offer::Ready(Box::new(r), Arc::new(CanaryFinding::no_canary())),
        }
    }

    /// A canary finished: record it and return the verdicts that waited.
    pub fn finish(&self, pair: Pair, finding: Arc<CanaryFinding>) -> Vec<(usize, MutantResult)> {
        let held = match self.lock().insert(pair, CanaryState::Done(finding)) {
            Some(CanaryState::Pending(held)) => held,
            _ => Vec::new(),
        };
        self.1.notify_waiters();
        held
    }

    /// A canary job failed (the run fails with it): nobody waits for it
    /// any longer.
    pub fn give_up(&self, pair: Pair) {
        self.lock().insert(
            pair,
            CanaryState::Done(Arc::new(CanaryFinding::no_canary())),
        );
        self.1.notify_waiters();
    }

    /// What the pair's canary showed, once it is done (kill-first picks
    /// tests from it); `None` when the run stops first.
    pub async fn wait(
        &self,
        pair: &Pair,
        cancel: &mut watch::Receiver<bool>,
    ) -> Option<Arc<CanaryFinding>> {
        loop {
            // Registered before the board is looked at: a canary that
            // finishes in between still wakes this waiter.
            let done = self.1.notified();
            tokio::pin!(done);
            done.as_mut().enable();
            if let Some(f) = self.finding(pair) {
                return Some(f);
            }
            if *cancel.borrow() {
                return None;
            }
            tokio::select! {
                _ = &mut done => {}
                changed = cancel.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                }
            }
        }
    }

    /// Verdicts still waiting for a canary that never finished (interrupted).
    pub fn abandon(&self) -> Vec<MutantResult> {
        let mut out = Vec::new();
        for state in self.lock().values_mut() {
            if let CanaryState::Pending(held) = state {
                out.extend(held.drain(..).map(|(_, r)| r));
            }
        }
        out
    }
}

/// The jobs of a run not taken yet.
#[derive(Default)]
pub(super) struct Queue {
    /// Test configs whose baseline has not started.
    baselines: VecDeque<usize>,
    /// Per test config: its canaries, then its mutants in spec order.
    jobs: Vec<VecDeque<Job>>,
}

impl Queue {
    fn is_empty(&self) -> bool {
        self.baselines.is_empty() && self.jobs.iter().all(VecDeque::is_empty)
    }

    /// The next job that can start: a baseline; else the next job of the
    /// command with the longest green baseline (`weight`: `None` while a
    /// command's baseline is not green). `None` when none can start now.
    fn take(&mut self, weight: impl Fn(usize) -> Option<f64>) -> Option<Job> {
        if let Some(test) = self.baselines.pop_front() {
            return Some(Job::Baseline(test));
        }
        let mut best: Option<(usize, f64)> = None;
        for (test, jobs) in self.jobs.iter().enumerate() {
            if jobs.is_empty() {
                continue;
            }
            if let Some(w) = weight(test) {
                if best.is_none_or(|(_, b)| w > b) {
                    best = Some((test, w));
                }
            }
        }
        self.jobs[best?.0].pop_front()
    }
}

/// The queue of a run: every test config's baseline; one canary per (file,
/// test config) that has mutants and allows one, then every ready mutant
/// in spec order, per test config.
pub(super) fn queue(plan: &Plan, no_canary: bool) -> (Queue, CanaryBoard) {
    let mut q = Queue {
        baselines: (0..plan.tests.len()).collect(),
        jobs: (0..plan.tests.len()).map(|_| VecDeque::new()).collect(),
    };
    let board = CanaryBoard::default();
    if !no_canary {
        let mut pairs: BTreeMap<Pair, bool> = BTreeMap::new();
        for m in plan.ready() {
            let e = pairs.entry(Pair::of(m)).or_insert(true);
            *e &= m.canary;
        }
        let mut states = board.lock();
        for (pair, enabled) in pairs {
            if enabled {
                let (file, test) = (pair.file.clone(), pair.test);
                states.insert(pair, CanaryState::Pending(Vec::new()));
                q.jobs[test].push_back(Job::Canary { file, test });
            }
        }
    }
    for (i, e) in plan.entries.iter().enumerate() {
        if let Entry::Ready(m) = e {
            q.jobs[m.test].push_back(Job::Mutant(i));
        }
    }
    (q, board)
}

/// A worker's scratch copy, being made in the background.
pub(super) struct Copy(tokio::task::JoinHandle<Result<Scratch>>);

impl Copy {
    /// Start making worker `w`'s copy (from the pristine copy) in the background.
    pub fn start(pristine: &Arc<Pristine>, w: usize) -> Copy {
        let p = pristine.clone();
        Copy(tokio::task::spawn_blocking(move || Scratch::create(&p, w)))
    }

    async fn ready(self) -> Result<Scratch> {
        self.0
            .await
            .map_err(|e| crate::error::Error::Internal(format!("copy task: {e}")))?
    }
}

/// What the job phase leaves: the results, and internal errors (a
/// worker stops at its first one: its scratch state is unknown).
pub(super) struct PhaseOutput {
    pub results: Vec<JobResult>,
    pub errors: Vec<String>,
}

/// What one worker leaves.
struct WorkerOutput {
    /// Its copy, unless it was lost (removed when this is dropped).
    scratch: Option<Scratch>,
    results: Vec<JobResult>,
    error: Option<String>,
}

/// Run the queue on all workers; each removes its copy as soon as the
/// queue is empty (while the others may still be running).
pub(super) async fn run_phase(
    ctx: &Arc<Ctx>,
    copies: Vec<Copy>,
    jobs: Queue,
    cancel: &watch::Receiver<bool>,
) -> PhaseOutput {
    let queue = Arc::new(Mutex::new(jobs));
    let mut handles = Vec::new();
    for (w, copy) in copies.into_iter().enumerate() {
        let (ctx, queue, cancel) = (ctx.clone(), queue.clone(), cancel.clone());
        handles.push(tokio::spawn(async move {
            let out = match copy.ready().await {
                Ok(s) => worker(w, s, &ctx, &queue, cancel).await,
                Err(e) => WorkerOutput {
                    scratch: None,
                    results: Vec::new(),
                    // A copy stopped by the interrupt is no error of the run.
                    error: (!*cancel.borrow()).then(|| format!("worker {w}: {e}")),
                },
            };
            if let Some(s) = out.scratch {
                let _ = tokio::task::spawn_blocking(move || drop(s)).await;
            }
            (out.results, out.error)
        }));
    }
    let mut out = PhaseOutput {
        results: Vec::new(),
        errors: Vec::new(),
    };
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

/// Take jobs until the queue is empty, the run is cancelled or a job fails.
async fn worker(
    w: usize,
    scratch: Scratch,
    ctx: &Arc<Ctx>,
    queue: &Mutex<Queue>,
    cancel: watch::Receiver<bool>,
) -> WorkerOutput {
    let mut out = WorkerOutput {
        scratch: Some(scratch),
        results: Vec::new(),
        error: None,
    };
    let mut cancel = cancel;
    // A worker without a copy takes no job (it would be lost).
    while !*cancel.borrow() && out.scratch.is_some() {
        let Some(job) = next_job(ctx, queue, &mut cancel).await else {
            break;
        };
        let Some(scratch) = out.scratch.take() else {
            break;
        };
        let done = match job {
            Job::Baseline(test) => {
                let mut scratch = scratch;
                let green = super::baseline::run_job(w, &mut scratch, ctx, test, &cancel).await;
                out.scratch = Some(scratch);
                Ok(green.then(Vec::new))
            }
            Job::Canary { file, test } => {
                let mut scratch = scratch;
                let r = job::run_canary(w, &mut scratch, ctx, &file, test, &cancel).await;
                out.scratch = Some(scratch);
                if r.is_err() {
                    ctx.canaries.give_up(Pair {
                        file: file.clone(),
                        test,
                    });
                }
                r.map(|c| {
                    c.map(|(c, finding)| {
                        let mut done = released(ctx, Pair { file, test }, Arc::new(finding));
                        done.push(JobResult::Canary(c));
                        done
                    })
                })
            }
            Job::Mutant(i) => {
                let (scratch, r) = isolated_mutant(w, scratch, ctx, i, &cancel).await;
                out.scratch = scratch;
                r.map(|m| m.map(|m| mutant_done(ctx, i, m).into_iter().collect()))
            }
        };
        match done {
            Ok(Some(results)) => out.results.extend(results),
            Ok(None) => break, // interrupted
            Err(e) => {
                out.error = Some(format!("worker {w}: {e}"));
                break;
            }
        }
    }
    out
}

/// The next job that can start (see [`Queue::take`]), waiting while every
/// job left waits for a baseline that is still running. `None` when the
/// queue is empty or the run stops.
async fn next_job(
    ctx: &Ctx,
    queue: &Mutex<Queue>,
    cancel: &mut watch::Receiver<bool>,
) -> Option<Job> {
    loop {
        // Registered before the queue is looked at: a baseline settled
        // in between still wakes this worker.
        let settled = ctx.baselines.settled.notified();
        tokio::pin!(settled);
        settled.as_mut().enable();
        {
            let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
            if q.is_empty() {
                return None;
            }
            let weights = ctx.baselines.weights();
            if let Some(job) = q.take(|test| weights.get(test).copied().flatten()) {
                return Some(job);
            }
        }
        tokio::select! {
            _ = &mut settled => {}
            changed = cancel.changed() => {
                if changed.is_err() {
                    return None;
                }
            }
        }
        if *cancel.borrow() {
            return None;
        }
    }
}

/// Run mutant `i` in its own task, so a panic (a bug in unguard) costs this
/// mutant only: it is reported as an internal error, and the worker goes on
/// with a fresh copy (the old one's state is unknown; dropping it removed
/// it). A mutant that its canary already made `unreached` is not run at all.
async fn isolated_mutant(
    w: usize,
    scratch: Scratch,
    ctx: &Arc<Ctx>,
    i: usize,
    cancel: &watch::Receiver<bool>,
) -> (Option<Scratch>, Result<Option<MutantResult>>) {
    // Kill-first picks this mutant's tests from its canary: wait for it.
    if super::kill_first::needs_canary(ctx, i) {
        if let Some(pair) = ctx.pair_of(i) {
            if ctx
                .canaries
                .wait(&pair, &mut cancel.clone())
                .await
                .is_none()
            {
                return (Some(scratch), Ok(None));
            }
        }
    }
    if let Some(v) = ctx.unreached_by_canary(i) {
        return (Some(scratch), Ok(Some(ctx.result_of(i, v))));
    }
    let (c, cc) = (ctx.clone(), cancel.clone());
    let task = tokio::spawn(async move {
        let mut s = scratch;
        let r = job::run_mutant(w, &mut s, &c, i, &cc).await;
        (s, r)
    });
    match task.await {
        Ok((s, r)) => (Some(s), r),
        Err(e) if e.is_panic() => {
            let why = panic_message(e.into_panic());
            let fresh = match &ctx.pristine {
                Some(p) => Copy::start(p, w).ready().await,
                None => Err(crate::error::Error::Internal("no pristine copy".into())),
            };
            match fresh {
                Ok(s) => (Some(s), Ok(Some(ctx.internal_error_result(i, &why)))),
                Err(e) => (None, Err(e)),
            }
        }
        Err(e) => (None, Err(crate::error::Error::Internal(e.to_string()))),
    }
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// A mutant's verdict is in: final (and printed) when its canary is done,
/// held until then otherwise.
fn mutant_done(ctx: &Ctx, i: usize, r: MutantResult) -> Option<JobResult> {
    let Some(pair) = ctx.pair_of(i) else {
        return Some(JobResult::Mutant(i, Box::new(r)));
    };
    match ctx.canaries.offer(&pair, i, r) {
        Offer::Held => None,
        Offer::Ready(r, finding) => Some(settle(ctx, i, *r, &finding)),
    }
}

/// A canary finished: the verdicts that waited for it become final.
fn released(ctx: &Ctx, pair: Pair, finding: Arc<CanaryFinding>) -> Vec<JobResult> {
    ctx.canaries
        .finish(pair, finding.clone())
        .into_iter()
        .map(|(i, r)| settle(ctx, i, r, &finding))
        .collect()
}

/// The final verdict of mutant `i` given what its canary showed: its own,
/// or `unreached` (its files removed) when the canary stayed green or its
/// expected killers did not go red under it; printed.
fn settle(ctx: &Ctx, i: usize, r: MutantResult, canary: &CanaryFinding) -> JobResult {
    let r = match outcome::after_canary(r.outcome, &r.file, ctx.killed_by(i), canary) {
        None => r,
        Some(v) => {
            outdir::discard_mutant_files(&ctx.opts.out, &r, ctx.opts.rechecks());
            ctx.result_of(i, v)
        }
    };
    ctx.report_line(&r);
    JobResult::Mutant(i, Box::new(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(q: &mut Queue, weights: &[Option<f64>]) -> Vec<String> {
        std::iter::from_fn(|| q.take(|t| weights[t]))
            .map(|j| match j {
                Job::Baseline(t) => format!("b{t}"),
                Job::Canary { file, .. } => format!("c:{file}"),
                Job::Mutant(i) => format!("m{i}"),
            })
            .collect()
    }

    fn queue_of(per_test: Vec<Vec<Job>>) -> Queue {
        Queue {
            baselines: (0..per_test.len()).collect(),
            jobs: per_test.into_iter().map(VecDeque::from).collect(),
        }
    }

    #[test]
    fn baselines_first_then_the_longest_green_command_and_never_a_pending_one() {
        let canary = |f: &str, test| Job::Canary {
            file: f.into(),
            test,
        };
        let mut q = queue_of(vec![
            vec![canary("a", 0), Job::Mutant(0)],
            vec![canary("b", 1), Job::Mutant(1), Job::Mutant(2)],
            vec![Job::Mutant(3)],
        ]);
        // Command 2's baseline is not green: its mutant waits.
        let took = ids(&mut q, &[Some(1.0), Some(5.0), None]);
        assert_eq!(took, ["b0", "b1", "b2", "c:b", "m1", "m2", "c:a", "m0"]);
        assert!(!q.is_empty());
        assert_eq!(ids(&mut q, &[Some(1.0), Some(5.0), Some(0.1)]), ["m3"]);
        assert!(q.is_empty());
    }

    #[test]
    fn equal_baselines_keep_the_spec_order() {
        let mut q = queue_of(vec![vec![Job::Mutant(0)], vec![Job::Mutant(1)]]);
        let took = ids(&mut q, &[Some(2.0), Some(2.0)]);
        assert_eq!(took, ["b0", "b1", "m0", "m1"]);
    }
}
