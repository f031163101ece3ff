//! The coverage run: after a test config's baseline is green, and before
//! its mutants start, the whole suite runs once more with a collector (see
//! [`crate::coverage`]) when some mutant of it has no `expect.killed_by`.
//! Its own run, not the baseline: the user's unmutated command is never
//! changed by it. Its map is used only when the run was green and measured
//! (nearly) every test the baseline passed; otherwise the run goes on as
//! without coverage, and says why once.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use super::suite::{run_suite, Instrumented, SuiteCall};
use super::{Ctx, Pair};
use crate::coverage::collector::Collector;
use crate::coverage::{Blind, CanaryEvidence, Collected, CoverageMap};
use crate::error::{Error, Result};
use crate::outcome::reading::model::{Report, Status};
use crate::outcome::{self, BaselineVerdict};
use crate::outdir;
use crate::plan::Entry;
use crate::results::{CoverageRunResult, FileCoverage};
use crate::runner::Handle;
use crate::workspace::Scratch;

/// The share of the baseline's passing tests the map may miss and still
/// be used (a test that ran no code of the copy under its own name is a
/// sign of another tracer, or of a runner unguard's plugin did not reach).
const MAY_MISS: f64 = 0.10;

/// What the coverage run of one test config gave.
pub(super) struct Measured {
    /// The map, when it is usable.
    pub map: Option<Arc<CoverageMap>>,
    /// Its row in `outcomes.json`.
    pub row: CoverageRunResult,
}

/// The collector that measures the suite `adapter` runs (see
/// [`crate::runner::Runner::collector`]).
fn collector(adapter: Option<&Handle>) -> Option<Collector> {
    adapter.and_then(|a| a.collector())
}

/// Whether test config `test` gets a coverage run: coverage is on, a
/// collector measures its runner (pytest: coverage.py; `node --test`,
/// vitest, jest: V8's coverage; `go test`: its profiles), its runs keep
/// unguard's additions, and one of its mutants has no `expect.killed_by`.
pub(super) fn wanted(ctx: &Ctx, test: usize, adapter: Option<&Handle>) -> bool {
    ctx.opts.coverage
        && !ctx.opts.full
        && collector(adapter).is_some()
        && !ctx.baselines.bare(test)
        && ctx.plan.entries.iter().any(|e| match e {
            Entry::Ready(m) => m.test == test && ctx.patterns_of(&m.id).is_empty(),
            Entry::Rejected(_) => false,
        })
}

/// Run test config `test`'s suite with the collector of its runner
/// (`adapter`) in worker `w`'s copy (`report`: its green baseline's
/// tests; `timeout`: its mutants'). `None` when interrupted.
#[allow(clippy::too_many_arguments)]
pub(super) async fn measure(
    w: usize,
    scratch: &mut Scratch,
    ctx: &Ctx,
    test: usize,
    adapter: Option<&Handle>,
    report: Option<&Report>,
    timeout: Duration,
    cancel: &watch::Receiver<bool>,
) -> Result<Option<Measured>> {
    let cfg = &ctx.plan.tests[test];
    let log_name = outdir::coverage_log_name(test, ctx.plan.tests.len());
    let data = scratch.junit_dir.with_file_name("coverage");
    let (Some(adapter), Some(collector)) = (adapter, collector(adapter)) else {
        return Err(Error::Internal("a coverage run without a collector".into()));
    };
    let inst = collector.install(&scratch.tree, &data)?;
    let instrumented = Instrumented {
        inst: &inst,
        command: adapter.coverage_command(&inst.command_options()),
    };
    ctx.progress.status("coverage run");
    let run = run_suite(
        scratch,
        SuiteCall {
            cfg,
            worker: w,
            label: "coverage",
            substitutions: Vec::new(),
            log: &ctx.opts.out.join(&log_name),
            timeout,
            header: format!(
                "coverage run of `{}` ({})",
                cfg.command.display(),
                collector.name()
            ),
            read_junit: true,
            select: &[],
            adapter: None,
            progress: &ctx.progress,
            bare: false,
            alone: false,
            coverage: Some(&instrumented),
            network: ctx.baselines.isolated(test),
            warm: super::suite::Warmth::Cold,
        },
        cancel,
    )
    .await;
    inst.remove();
    let run = run?;
    let collected = inst.collect(&scratch.tree, report);
    let _ = std::fs::remove_dir_all(&data);
    let green = match outcome::baseline(&run.res.exit, cfg, run.junit.clone()) {
        BaselineVerdict::Interrupted => return Err(Error::Interrupted),
        BaselineVerdict::Green(_) => true,
        BaselineVerdict::Red { .. } => false,
    };
    let mut row = CoverageRunResult {
        collector: collector.name().into(),
        duration_s: run.res.duration.as_secs_f64(),
        tests: 0,
        files: 0,
        used: false,
        not_used: None,
        log_file: log_name.clone(),
    };
    let map = match collected {
        Collected::Map(m) => {
            row.tests = m.tests().len();
            row.files = m.files();
            Some(m)
        }
        Collected::Missing(why) | Collected::NoMap(why) => {
            row.not_used = Some(why);
            None
        }
    };
    let map = map.filter(|m| {
        if !green {
            row.not_used = Some(format!(
                "the suite was not green under coverage ({})",
                run.res.exit.describe()
            ));
            return false;
        }
        match unmeasured(m, report) {
            Some(why) => {
                row.not_used = Some(why);
                false
            }
            None => true,
        }
    });
    row.used = map.is_some();
    ctx.progress.line(&match &row.not_used {
        None => format!(
            "coverage: {} tests measured over {} files in {:.1}s (log {log_name})",
            row.tests, row.files, row.duration_s
        ),
        Some(why) => format!(
            "coverage: not used: {why}; mutants run without per-test selection (log {log_name})"
        ),
    });
    Ok(Some(Measured {
        map: map.map(Arc::new),
        row,
    }))
}

/// Why `map` cannot be trusted to name every test that executes a line:
/// it misses more than [`MAY_MISS`] of the tests the baseline passed.
fn unmeasured(map: &CoverageMap, report: Option<&Report>) -> Option<String> {
    let report = report?;
    let seen: HashSet<&str> = map.tests().iter().map(String::as_str).collect();
    let passed: Vec<String> = report
        .cases
        .iter()
        .filter(|c| c.status == Status::Passed)
        .map(|c| c.id())
        .collect();
    let missing = passed.iter().filter(|t| !seen.contains(t.as_str())).count();
    (missing as f64 > MAY_MISS * passed.len() as f64).then(|| {
        format!(
            "{missing} of the {} tests the baseline passed ran no code of the copy under their own name (another tracer, or a runner the plugin did not reach)",
            passed.len()
        )
    })
}

/// Per (file, test config): whether its coverage map may decide there
/// (see [`CoverageMap::trust`]), judged once, when the file's canary is
/// done; every judgement is a `coverage_files` row of `outcomes.json`.
#[derive(Default)]
pub(super) struct TrustBoard(Mutex<BTreeMap<Pair, Option<Blind>>>);

impl TrustBoard {
    /// Whether the map of `pair`'s test config was judged complete for the
    /// pair's file and blind for none of its other files (what a reused
    /// verdict may rest on).
    pub fn complete(&self, pair: &Pair) -> bool {
        let board = self.0.lock().unwrap_or_else(|p| p.into_inner());
        matches!(board.get(pair), Some(None))
            && board
                .iter()
                .all(|(p, blind)| p.test != pair.test || blind.is_none())
    }

    /// Every judgement made, in (file, test config) order.
    pub fn rows(&self, ctx: &Ctx) -> Vec<FileCoverage> {
        let board = self.0.lock().unwrap_or_else(|p| p.into_inner());
        board
            .iter()
            .map(|(pair, blind)| FileCoverage {
                file: pair.file.clone(),
                command: ctx.plan.tests[pair.test].command.display(),
                used: blind.is_none(),
                reason: blind.as_ref().map(|b| b.reason),
                detail: blind.as_ref().map(|b| b.detail.clone()),
            })
            .collect()
    }
}

/// The coverage map of `pair`'s test config, when it may decide for the
/// pair's file: the file's canary is done and showed the map complete
/// there. `None` without a map, while the canary runs, or when the map is
/// blind there (judged once, and recorded).
pub(super) fn trusted(ctx: &Ctx, pair: &Pair) -> Option<Arc<CoverageMap>> {
    let map = ctx.baselines.coverage(pair.test)?;
    let finding = ctx.canaries.finding(pair)?;
    let mut board = ctx
        .coverage_trust
        .0
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let blind =
        board.entry(pair.clone()).or_insert_with(|| {
            let red = finding.report.as_ref().map(|canary| {
                match ctx.baselines.subset_source(pair.test) {
                    Some((baseline, _)) => baseline.red_under(canary),
                    None => canary.red_ids(),
                }
            });
            let evidence = match (&red, finding.ran) {
                (_, false) => CanaryEvidence::None,
                // Red without a red test named: nothing to check the map by.
                (Some(red), true) if !red.is_empty() => CanaryEvidence::Red(red),
                _ => CanaryEvidence::Unread,
            };
            map.trust(&pair.file, evidence).err()
        });
    blind.is_none().then_some(map)
}
