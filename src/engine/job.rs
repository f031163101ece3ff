//! The two kinds of job a worker runs in its scratch copy: a canary (one
//! file emptied, to prove the suite reaches it) and a mutant (applied,
//! proven by diff, checked, run, re-checked). Each puts the original file
//! back at exactly one place, [`Applied::restore`].

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::kill_first::{self, Selection, Stage};
use super::suite::{env_for, put_back, run_suite, SuiteCall, SuiteRun};
use super::{Ctx, Pair};
use crate::error::{Error, Result};
use crate::outcome::reading::model::Report;
use crate::outcome::{self, CanaryFinding, CanaryVerdict, SubsetStage, Verdict};
use crate::plan::{Entry, Mutant};
use crate::results::{row, CanaryResult, MutantResult, Outcome, SubsetRun};
use crate::run::{self, Exit, Invocation};
use crate::workspace::Scratch;
use crate::{mutate, outdir};

/// The stage name of a full-suite kill's red tests run alone to confirm it.
const RED_TESTS: SubsetStage = SubsetStage::RedTests;

/// What a finished job hands to the scheduler.
pub(super) enum JobResult {
    Canary(CanaryResult),
    Mutant(usize, Box<MutantResult>),
}

/// A file of a scratch copy with other bytes than the original in place;
/// [`Applied::restore`] puts the original back, and is the only way to get
/// the copy back. (A job that panics loses its copy: the worker replaces it.)
#[must_use = "the original must be restored"]
struct Applied<'a> {
    scratch: &'a mut Scratch,
    file: &'a str,
    original: &'a [u8],
}

impl<'a> Applied<'a> {
    fn write(
        scratch: &'a mut Scratch,
        file: &'a str,
        original: &'a [u8],
        bytes: &[u8],
    ) -> Result<Applied<'a>> {
        scratch.write(file, bytes)?;
        Ok(Applied {
            scratch,
            file,
            original,
        })
    }

    fn restore(self) -> Result<()> {
        self.scratch.write(self.file, self.original)
    }
}

impl Deref for Applied<'_> {
    type Target = Scratch;
    fn deref(&self) -> &Scratch {
        self.scratch
    }
}

impl DerefMut for Applied<'_> {
    fn deref_mut(&mut self) -> &mut Scratch {
        self.scratch
    }
}

impl Ctx {
    fn original(&self, file: &str) -> Result<&[u8]> {
        self.plan
            .originals
            .get(file)
            .map(|b| b.as_slice())
            .ok_or_else(|| Error::Internal(format!("no original bytes of {file}")))
    }

    /// The timeout of mutant `m` (or of a canary: `None`) under test config `test`.
    pub(super) fn timeout(&self, m: Option<&Mutant>, test: usize) -> Duration {
        self.opts
            .timeout
            .or_else(|| m.and_then(|m| m.timeout))
            .unwrap_or_else(|| self.baselines.timeout(test))
    }
}

/// Empty `file` and run test config `test`: red or hung means reached, and
/// its JUnit report says which tests went red. `None` when interrupted.
pub(super) async fn run_canary(
    w: usize,
    scratch: &mut Scratch,
    ctx: &Ctx,
    file: &str,
    test: usize,
    cancel: &watch::Receiver<bool>,
) -> Result<Option<(CanaryResult, CanaryFinding)>> {
    let cfg = &ctx.plan.tests[test];
    let log_name = outdir::canary_log_name(file, test, ctx.plan.tests.len());
    let log = ctx.opts.out.join(&log_name);
    ctx.progress.status(&format!("canary {file}"));
    let mut emptied = Applied::write(scratch, file, ctx.original(file)?, b"")?;
    let run = run_suite(
        &mut emptied,
        SuiteCall {
            cfg,
            worker: w,
            label: "canary",
            substitutions: Vec::new(),
            log: &log,
            timeout: ctx.timeout(None, test),
            header: format!("canary: {file} emptied"),
            read_junit: true,
            select: &[],
            adapter: None,
            progress: &ctx.progress,
            bare: ctx.baselines.bare(test),
            alone: false,
            coverage: None,
            network: ctx.baselines.isolated(test),
            warm: ctx.baselines.warmth(test),
        },
        cancel,
    )
    .await;
    // The original goes back whatever became of the run.
    emptied.restore()?;
    let run = run?;
    let reached = match outcome::canary(&run.res.exit) {
        CanaryVerdict::Interrupted => return Ok(None),
        CanaryVerdict::CouldNotRun(e) => {
            return Err(Error::Internal(format!("canary for {file}: {e}")))
        }
        CanaryVerdict::Reached => true,
        CanaryVerdict::Unreached => false,
    };
    ctx.progress.line(&format!(
        "canary {file}: {} ({})",
        if reached {
            "reached"
        } else {
            "UNREACHED: the suite stays green with this file emptied"
        },
        run.res.exit.describe()
    ));
    let report = run.junit.report().cloned();
    let red_tests = report.as_ref().map(Report::red_ids).unwrap_or_default();
    let result = CanaryResult {
        file: file.to_string(),
        command: cfg.command.display(),
        reached,
        red_tests,
        exit: run.res.exit.describe(),
        duration_s: run.res.duration.as_secs_f64(),
        log_file: log_name,
    };
    Ok(Some((
        result,
        CanaryFinding {
            reached,
            report,
            ran: true,
        },
    )))
}

/// Apply mutant `index`, run it, put the original back. `None` when interrupted.
pub(super) async fn run_mutant(
    w: usize,
    scratch: &mut Scratch,
    ctx: &Ctx,
    index: usize,
    cancel: &watch::Receiver<bool>,
) -> Result<Option<MutantResult>> {
    let Entry::Ready(m) = &ctx.plan.entries[index] else {
        return Err(Error::Internal("job for a rejected mutation".into()));
    };
    let original = ctx.original(&m.file)?;
    let started = Instant::now();
    ctx.progress.status(&m.id);
    // Before the mutant is in place: the subsets it may run are checked
    // on the unmutated copy.
    let Some(selection) = kill_first::stages(w, scratch, ctx, index, cancel).await? else {
        return Ok(None);
    };
    let mutated = m.mutated(original)?;
    let mut applied = Applied::write(scratch, &m.file, original, &mutated)?;
    let verdict = MutantRun {
        w,
        ctx,
        m,
        original,
        started,
        cancel,
        reset: AtomicUsize::new(0),
        spent_us: AtomicU64::new(0),
        selection,
    }
    .run(&mut applied)
    .await;
    applied.restore()?;
    let verdict = verdict?;
    if let Some(r) = &verdict {
        if r.outcome == Outcome::Killed && !ctx.opts.full {
            ctx.kill_first.record_kill(Pair::of(m), &r.red_tests);
        }
    }
    Ok(verdict)
}

/// How a subset run of a mutant ended.
enum Subset {
    Interrupted,
    /// Not a kill nor a hang: the next stage (or the full suite) decides.
    PassedOn(SubsetRun),
    /// Killed (and confirmed) or timeout: the mutant's verdict.
    Final(Box<MutantResult>, SubsetRun),
}

/// A mutant in place in a scratch copy.
struct MutantRun<'a> {
    w: usize,
    ctx: &'a Ctx,
    m: &'a Mutant,
    original: &'a [u8],
    started: Instant,
    cancel: &'a watch::Receiver<bool>,
    /// Paths its runs so far left in the copy (put back since).
    reset: AtomicUsize,
    /// Time its suite runs so far took (microseconds): its `duration_s`.
    spent_us: AtomicU64,
    /// The subsets it runs before the full suite (kill-first), or
    /// `no-coverage`.
    selection: Selection,
}

/// What a confirmation run confirms (see [`MutantRun::confirm_once`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Confirm {
    /// A kill (or a survivor's re-check).
    Kill,
    /// A kill in a network namespace whose log shows a try to reach
    /// beyond loopback: confirmed on the machine's network, alone.
    KillOutside,
    /// A hang.
    Hang,
}

/// How one suite run of a mutant holds the machine and the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Beside the other workers, in the command's network (its own
    /// namespace where the baseline allowed one).
    Shared,
    /// Alone on the machine, in the command's network.
    Alone,
    /// Alone on the machine, on the machine's network.
    AloneOutside,
}

impl MutantRun<'_> {
    fn result(&self, v: Verdict) -> MutantResult {
        let command = self.ctx.plan.tests[self.m.test].command.display();
        let mut r = row::mutant_result(self.m, command, v);
        if self.ctx.baselines.isolated(self.m.test) {
            r.network = crate::results::Network::Namespace;
        }
        r.diff_file = Some(outdir::diff_name(&self.m.id));
        r.reset_paths = self.reset.load(Ordering::Relaxed);
        r
    }

    /// Prove the mutation on disk, check it, run the suite and re-check a
    /// survivor. Touches nothing but the mutated file's copy.
    async fn run(&self, scratch: &mut Scratch) -> Result<Option<MutantResult>> {
        let (ctx, m) = (self.ctx, self.m);
        let on_disk = scratch.read(&m.file)?;
        let diff = mutate::unified_diff(&m.file, self.original, &on_disk);
        let diff_path = ctx.opts.out.join(outdir::diff_name(&m.id));
        outdir::space::write(&diff_path, diff.as_bytes())?;
        if diff.is_empty() {
            return Ok(Some(self.result(outcome::no_op_on_disk())));
        }
        let timeout = ctx.timeout(Some(m), m.test);
        match self.check(scratch, timeout).await? {
            None => {}
            Some(Exit::Interrupted) => return Ok(None),
            Some(failed) => {
                let mut r = self.result(outcome::unviable(&failed));
                r.duration_s = self.started.elapsed().as_secs_f64();
                r.log_file = Some(outdir::check_log_name(&m.id));
                r.exit = Some(failed.describe());
                return Ok(Some(r));
            }
        }
        let stages = match &self.selection {
            Selection::Stages(stages) => stages,
            Selection::NoCoverage {
                first,
                last,
                measured,
            } => {
                let lines: Vec<usize> = (*first..=*last).collect();
                let mut r = self.result(outcome::no_coverage(&m.file, &lines, *measured));
                r.duration_s = self.spent();
                return Ok(Some(r));
            }
        };
        let mut subset_runs = Vec::new();
        for (k, stage) in stages.iter().enumerate() {
            match self.subset(scratch, k + 1, stage, timeout).await? {
                Subset::Interrupted => return Ok(None),
                Subset::PassedOn(run) => subset_runs.push(run),
                Subset::Final(mut r, run) => {
                    subset_runs.push(run);
                    r.subset_runs = subset_runs;
                    return Ok(Some(*r));
                }
            }
        }
        let log_name = outdir::log_name(&m.id);
        let first = self
            .suite(scratch, &log_name, timeout, &[], None, Slot::Shared)
            .await?;
        if first.res.exit == Exit::Interrupted {
            return Ok(None);
        }
        let v = self.classify(&first, timeout);
        let v = match v.outcome {
            Outcome::Survived | Outcome::Killed => {
                match self.recheck(scratch, v, timeout, None, &log_name).await? {
                    Some(v) => v,
                    None => return Ok(None),
                }
            }
            Outcome::Timeout => match self.confirm_hang(scratch, v, timeout, None).await? {
                Some(v) => v,
                None => return Ok(None),
            },
            _ => v,
        };
        let mut r = self.result(v);
        r.duration_s = self.spent();
        r.exit = Some(first.res.exit.describe());
        r.log_file = Some(log_name);
        r.subset_runs = subset_runs;
        r.full_suite = true;
        Ok(Some(r))
    }

    /// The time its suite runs took so far, in seconds.
    fn spent(&self) -> f64 {
        self.spent_us.load(Ordering::Relaxed) as f64 / 1e6
    }

    /// Run stage `stage` (the `k`th) with the mutation in place: a kill
    /// (confirmed as a full-suite kill is) or a hang is final; anything
    /// else passes the mutant on to the next stage or the full suite.
    async fn subset(
        &self,
        scratch: &mut Scratch,
        k: usize,
        stage: &Stage,
        timeout: Duration,
    ) -> Result<Subset> {
        let m = self.m;
        let name = outdir::subset_log_name(&m.id, k);
        let run = self
            .suite(
                scratch,
                &name,
                timeout,
                &stage.tests,
                Some(stage),
                Slot::Shared,
            )
            .await?;
        if run.res.exit == Exit::Interrupted {
            return Ok(Subset::Interrupted);
        }
        let v = self.classify(&run, timeout);
        let mut record = SubsetRun {
            stage: stage.name.to_string(),
            tests: stage.tests.clone(),
            result: "passed-on".into(),
            detail: v.detail(),
            duration_s: run.res.duration.as_secs_f64(),
            log_file: name.clone(),
        };
        if !matches!(v.outcome, Outcome::Killed | Outcome::Timeout) {
            return Ok(Subset::PassedOn(record));
        }
        // A stage not checked on the unmutated copy (covering) proves
        // nothing until its red tests alone, or the whole set, are green
        // there (without the tests found red there).
        let mut stage = stage.clone();
        if !stage.checked {
            let red = self.usable(&v.red_tests);
            match self.green_unmutated(scratch, &stage, &red).await? {
                Some(s) => stage = s,
                None => {
                    record.detail = format!(
                        "{}; its tests are not green on the unmutated copy without the others, so the full suite decides",
                        record.detail
                    );
                    return Ok(Subset::PassedOn(record));
                }
            }
        }
        // Nor does a test red on the unmutated copy: a kill needs another.
        if !self.proves_kill(&v, &stage) {
            record.detail = format!(
                "{}; its red tests are red on the unmutated copy too (left out of kill proofs), so the full suite decides",
                record.detail
            );
            return Ok(Subset::PassedOn(record));
        }
        let left = v.red_tests.len() - self.usable(&v.red_tests).len();
        if left > 0 {
            record.detail = format!(
                "{}; {left} of them red on the unmutated copy too (left out of the kill proof)",
                record.detail
            );
        }
        let stage = &stage;
        let v = match v.outcome {
            Outcome::Killed => match self
                .recheck(scratch, v, timeout, Some(stage), &name)
                .await?
            {
                Some(v) => v,
                None => return Ok(Subset::Interrupted),
            },
            Outcome::Timeout => match self.confirm_hang(scratch, v, timeout, Some(stage)).await? {
                Some(v) => v,
                None => return Ok(Subset::Interrupted),
            },
            _ => return Ok(Subset::PassedOn(record)),
        };
        record.result = v.outcome.as_str().to_string();
        let mut r = self.result(outcome::by_subset(v, stage.name, stage.tests.len()));
        r.duration_s = self.spent();
        r.exit = Some(run.res.exit.describe());
        r.log_file = Some(name);
        Ok(Subset::Final(Box::new(r), record))
    }

    /// `tests` but those found red on the unmutated copy so far (left out
    /// of subsets and kill proofs).
    fn usable(&self, tests: &[String]) -> Vec<String> {
        self.ctx.kill_first.usable(self.m.test, tests)
    }

    /// Whether red (or hung) run `v` of `stage` may stand as a kill: a
    /// hang, a kill counted without named red tests, or a kill with a red
    /// test of the stage that is not left out of kill proofs.
    fn proves_kill(&self, v: &Verdict, stage: &Stage) -> bool {
        v.outcome != Outcome::Killed
            || v.red_tests.is_empty()
            || self
                .usable(&v.red_tests)
                .iter()
                .any(|t| stage.tests.contains(t))
    }

    /// Run `test.check` (e.g. a compiler) when configured: `None` when it
    /// passed or there is none, else how it ended. The copy is put back
    /// after it, as after a suite run.
    async fn check(&self, scratch: &mut Scratch, timeout: Duration) -> Result<Option<Exit>> {
        let (ctx, m) = (self.ctx, self.m);
        let cfg = &ctx.plan.tests[m.test];
        let Some(check) = cfg.check.as_ref() else {
            return Ok(None);
        };
        let _slot = super::suite::shared_slot().await;
        scratch.begin_run()?;
        let log = ctx.opts.out.join(outdir::check_log_name(&m.id));
        let res = run::run(
            Invocation {
                command: check,
                cwd: &scratch.tree,
                env: env_for(cfg, self.w, &m.id, scratch),
                substitutions: vec![("{file}", m.file.clone())],
                log: &log,
                timeout,
                label: format!("check of mutant {}", m.id),
                network: false,
                warm: None,
            },
            self.cancel.clone(),
        )
        .await;
        if res.exit != Exit::Interrupted {
            self.count(put_back(scratch, &log, &[], &ctx.progress)?);
        }
        Ok((res.exit != Exit::Code(0)).then_some(res.exit))
    }

    /// Count paths a run left in the copy.
    fn count(&self, reset: usize) {
        self.reset.fetch_add(reset, Ordering::Relaxed);
    }

    /// Run the suite with the mutation in place (only the `select`ed tests
    /// where the runner can select them).
    async fn suite(
        &self,
        scratch: &mut Scratch,
        log_name: &str,
        timeout: Duration,
        select: &[String],
        stage: Option<&Stage>,
        slot: Slot,
    ) -> Result<SuiteRun> {
        let m = self.m;
        let alone = slot != Slot::Shared;
        let network = slot != Slot::AloneOutside && self.ctx.baselines.isolated(m.test);
        let adapter = match stage {
            Some(_) => self.ctx.baselines.subset_source(m.test).map(|(_, a)| a),
            None => None,
        };
        let run = run_suite(
            scratch,
            SuiteCall {
                cfg: &self.ctx.plan.tests[m.test],
                worker: self.w,
                label: &m.id,
                substitutions: vec![("{file}", m.file.clone())],
                log: &self.ctx.opts.out.join(log_name),
                timeout,
                header: format!("mutant {} ({}:{})", m.id, m.file, m.line),
                read_junit: true,
                select,
                adapter: adapter.as_ref(),
                progress: &self.ctx.progress,
                bare: self.ctx.baselines.bare(m.test),
                alone,
                coverage: None,
                network,
                warm: self.ctx.baselines.warmth(m.test),
            },
            self.cancel,
        )
        .await?;
        self.count(run.reset);
        let us = u64::try_from(run.res.duration.as_micros()).unwrap_or(u64::MAX);
        self.spent_us.fetch_add(us, Ordering::Relaxed);
        Ok(run)
    }

    fn classify(&self, run: &SuiteRun, timeout: Duration) -> Verdict {
        let m = self.m;
        outcome::classify(
            &run.res,
            &self.ctx.plan.tests[m.test],
            &run.junit,
            self.ctx.patterns_of(&m.id),
            timeout.as_secs_f64(),
        )
    }

    /// Re-run a survivor up to `--recheck-survivors` times, a kill up to
    /// `--recheck-kills` times: the first re-run with another outcome makes
    /// it flaky (a red re-check of a survivor, a kill that does not
    /// reproduce). `None` when interrupted.
    ///
    /// A kill is confirmed by its red tests alone where they ran green
    /// alone on the unmutated copy ([`Self::red_alone`]); when they do not
    /// go red again alone, the whole subset (a kill by the full suite: the
    /// whole suite) runs once more and decides, as it does without that
    /// check. A red test that fails only after another test ran in the same
    /// process is thus confirmed the same way with and without `--full`.
    async fn recheck(
        &self,
        scratch: &mut Scratch,
        first: Verdict,
        timeout: Duration,
        stage: Option<&Stage>,
        first_log: &str,
    ) -> Result<Option<Verdict>> {
        let opts = &self.ctx.opts;
        // A kill in a network namespace of its own whose log shows a try to
        // reach beyond loopback (which the machine's network might have let
        // through) is confirmed on the machine's network, alone.
        let of = match first.outcome {
            Outcome::Killed
                if self.ctx.baselines.isolated(self.m.test)
                    && outcome::network_hint::outside_network_error(&opts.out.join(first_log))
                        .is_some() =>
            {
                Confirm::KillOutside
            }
            _ => Confirm::Kill,
        };
        // That one is confirmed even under `--recheck-kills 0`: the
        // namespace is unguard's addition, and must not make a kill alone.
        let rechecks = match (first.outcome, of) {
            (Outcome::Killed, Confirm::KillOutside) => opts.recheck_kills.max(1),
            (Outcome::Killed, _) => opts.recheck_kills,
            _ => opts.recheck_survivors,
        };
        // A survivor's re-check runs the whole suite. A kill is confirmed by
        // its red tests alone where that is evidence (below), else by the
        // same subset (green on the unmutated copy) or the whole suite.
        let select: &[String] = match (first.outcome, stage) {
            (Outcome::Killed, Some(s)) => &s.tests,
            _ => &[],
        };
        let alone = match first.outcome {
            Outcome::Killed if rechecks > 0 => {
                match self.red_alone(scratch, &first.red_tests, stage).await {
                    Ok(a) => a,
                    Err(Error::Interrupted) => return Ok(None),
                    Err(e) => return Err(e),
                }
            }
            _ => None,
        };
        for k in 1..=rechecks {
            let name = outdir::recheck_log_name(&self.m.id, k);
            if let Some(a) = &alone {
                let Some(v) = self
                    .confirm_once(scratch, &name, timeout, &a.tests, Some(a), of)
                    .await?
                else {
                    return Ok(None);
                };
                if v.outcome == first.outcome {
                    continue;
                }
            }
            // An unchecked stage, or one with a test found red on the
            // unmutated copy since its check, is re-run whole only once it
            // is green there (without those tests); else the whole suite
            // confirms.
            let green: Stage;
            let (select, stage) = match stage {
                Some(s) if !s.checked || self.usable(&s.tests).len() < s.tests.len() => {
                    match self.unmutated_green(scratch, &s.tests).await? {
                        Some(tests) => {
                            green = Stage {
                                name: s.name,
                                tests,
                                checked: true,
                            };
                            (&green.tests[..], Some(&green))
                        }
                        None => (&[][..], None),
                    }
                }
                _ => (select, stage),
            };
            let name = match (&alone, stage) {
                (Some(_), Some(_)) => outdir::recheck_whole_subset_log_name(&self.m.id, k),
                (Some(_), None) => outdir::recheck_whole_suite_log_name(&self.m.id, k),
                (None, _) => name,
            };
            let Some(v2) = self
                .confirm_once(scratch, &name, timeout, select, stage, of)
                .await?
            else {
                return Ok(None);
            };
            if v2.outcome != first.outcome {
                return Ok(Some(match first.outcome {
                    Outcome::Killed => outcome::unconfirmed_kill(first, k, rechecks, v2, &name),
                    _ => outcome::flaky(first, k, rechecks, v2, &name),
                }));
            }
        }
        Ok(Some(first))
    }

    /// Confirm a hang (the first run of `stage`, or of the full suite, hit
    /// its timeout): the same tests run once more with the mutation in
    /// place, alone on the machine (a hang that came from another worker's
    /// load, a lock or a port is not this mutant's). A second hang keeps
    /// the verdict; anything else makes it `flaky`. Off with
    /// `--recheck-kills 0`, like the confirmation of a kill (a timeout is
    /// counted as detected by default). `None` when interrupted.
    async fn confirm_hang(
        &self,
        scratch: &mut Scratch,
        first: Verdict,
        timeout: Duration,
        stage: Option<&Stage>,
    ) -> Result<Option<Verdict>> {
        if self.ctx.opts.recheck_kills == 0 {
            return Ok(Some(first));
        }
        let name = outdir::recheck_log_name(&self.m.id, 1);
        let select: &[String] = stage.map_or(&[], |s| &s.tests);
        let again = self
            .confirm_once(scratch, &name, timeout, select, stage, Confirm::Hang)
            .await?;
        Ok(again.map(|v2| outcome::confirmed_hang(first, v2, &name)))
    }

    /// One confirmation run (a re-check): its verdict, `None` when
    /// interrupted. Alone on the machine, but for the re-check of a kill
    /// or survivor whose runs have a network namespace of their own: no
    /// other worker can take its ports then, so it runs beside them (a
    /// hang is confirmed alone whatever the network: a loaded machine
    /// makes hangs too).
    async fn confirm_once(
        &self,
        scratch: &mut Scratch,
        log_name: &str,
        timeout: Duration,
        select: &[String],
        stage: Option<&Stage>,
        of: Confirm,
    ) -> Result<Option<Verdict>> {
        let slot = match of {
            Confirm::Kill if self.ctx.baselines.isolated(self.m.test) => Slot::Shared,
            Confirm::Kill | Confirm::Hang => Slot::Alone,
            Confirm::KillOutside => Slot::AloneOutside,
        };
        let again = self
            .suite(scratch, log_name, timeout, select, stage, slot)
            .await?;
        if again.res.exit == Exit::Interrupted {
            return Ok(None);
        }
        Ok(Some(self.classify(&again, timeout)))
    }

    /// The red tests of a kill by `stage` (`None`: by the full suite), as a
    /// stage of their own, when they are fewer than the stage's and ran
    /// green alone on the unmutated copy (the check, made once per distinct
    /// set, takes the mutant out of the copy and puts it back; a test found
    /// red there is no part of it). `None`: the whole stage (or suite)
    /// confirms. A config without a subset adapter
    /// cannot be checked: its full-suite kills are re-run with their red
    /// tests selected where pytest can (else the whole suite), as before.
    async fn red_alone(
        &self,
        scratch: &mut Scratch,
        red: &[String],
        stage: Option<&Stage>,
    ) -> Result<Option<Stage>> {
        let tests: Vec<String> = match stage {
            Some(s) => s
                .tests
                .iter()
                .filter(|t| red.contains(t))
                .cloned()
                .collect(),
            None => red.to_vec(),
        };
        if tests.is_empty() || stage.is_some_and(|s| tests.len() == s.tests.len()) {
            return Ok(None);
        }
        let name = stage.map_or(RED_TESTS, |s| s.name);
        if self.ctx.baselines.subset_source(self.m.test).is_none() {
            return Ok(stage.is_none().then_some(Stage {
                name,
                tests,
                checked: false,
            }));
        }
        Ok(self
            .unmutated_green(scratch, &tests)
            .await?
            .map(|tests| Stage {
                name,
                tests,
                checked: true,
            }))
    }

    /// `tests` but those found red on the unmutated copy, when they run
    /// green there ([`kill_first::green_set`]: subset checks, made once per
    /// distinct set; the mutant is taken out of the copy for them and put
    /// back). `None`: none left, or not green.
    async fn unmutated_green(
        &self,
        scratch: &mut Scratch,
        tests: &[String],
    ) -> Result<Option<Vec<String>>> {
        let m = self.m;
        let mutated = scratch.read(&m.file)?;
        scratch.write(&m.file, self.original)?;
        let green =
            kill_first::green_set(self.w, scratch, self.ctx, m.test, tests, self.cancel).await;
        scratch.write(&m.file, &mutated)?;
        green
    }

    /// The stage that backs a red (or hung) run of the unchecked `stage`:
    /// when its `red` tests alone (fewer than the stage's) are green on the
    /// unmutated copy, the stage still unchecked (its re-run whole is
    /// checked then); else the stage's tests that are green there together,
    /// checked. `None`: neither.
    async fn green_unmutated(
        &self,
        scratch: &mut Scratch,
        stage: &Stage,
        red: &[String],
    ) -> Result<Option<Stage>> {
        let alone: Vec<String> = stage
            .tests
            .iter()
            .filter(|t| red.contains(t))
            .cloned()
            .collect();
        if !alone.is_empty()
            && alone.len() < stage.tests.len()
            && self.unmutated_green(scratch, &alone).await?.is_some()
        {
            return Ok(Some(Stage {
                tests: self.usable(&stage.tests),
                ..stage.clone()
            }));
        }
        Ok(self
            .unmutated_green(scratch, &stage.tests)
            .await?
            .map(|tests| Stage {
                name: stage.name,
                tests,
                checked: true,
            }))
    }
}
