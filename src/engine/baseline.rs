//! The baseline phase: each distinct test command runs unmutated (in worker
//! 0's copy) and must be green, count its tests and agree with itself; it
//! sets the mutants' timeout, and its JUnit report checks every
//! `killed_by` pattern. A baseline that is not usable stops the run (exit 4).

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::watch;

use super::suite::{run_suite, SuiteCall};
use super::EngineOptions;
use crate::diag::{Diagnostic, Diagnostics};
use crate::error::{Error, Result};
use crate::junit::{self, TestPattern};
use crate::outcome::{self, BaselineVerdict};
use crate::outdir;
use crate::plan::Plan;
use crate::progress::Progress;
use crate::results::BaselineResult;
use crate::run;
use crate::spec::{TestConfig, TimeoutSetting};
use crate::workspace::Scratch;

/// Floor and multiplier of the automatic timeout (as cargo-mutants).
pub const AUTO_TIMEOUT_MIN: Duration = Duration::from_secs(20);
pub const AUTO_TIMEOUT_FACTOR: u32 = 5;
/// Cap for the baseline run when no fixed timeout is configured.
pub const BASELINE_CAP: Duration = Duration::from_secs(30 * 60);

/// What the baselines settle for the mutant phase.
pub(super) struct Baselines {
    /// One row per test config.
    pub results: Vec<BaselineResult>,
    /// Per test config: the timeout its mutants run under.
    pub timeouts: Vec<Duration>,
    /// Per mutant id: its compiled `killed_by` patterns.
    pub patterns: HashMap<String, Vec<TestPattern>>,
}

/// Run every test config's baseline in `scratch`; then check the
/// `killed_by` patterns against their reports.
pub(super) async fn run_all(
    plan: &Plan,
    scratch: &mut Scratch,
    opts: &EngineOptions,
    progress: &Progress,
    cancel: &watch::Receiver<bool>,
) -> Result<Baselines> {
    let mut results = Vec::new();
    let mut timeouts = Vec::new();
    let mut reports = Vec::new();
    for (i, cfg) in plan.tests.iter().enumerate() {
        let b = Baseline {
            i,
            n_tests: plan.tests.len(),
            cfg,
            opts,
            progress,
            cancel,
        };
        let green = b.run(scratch).await?;
        results.push(green.result);
        timeouts.push(green.timeout);
        reports.push(green.report);
    }
    let patterns = killed_by_patterns(plan, &reports)?;
    Ok(Baselines {
        results,
        timeouts,
        patterns,
    })
}

/// A green baseline: its result row, the timeout its mutants run under, and
/// its JUnit report (when the config has one).
struct Green {
    result: BaselineResult,
    timeout: Duration,
    report: Option<junit::Report>,
}

/// The baseline of test config `i` (of `n_tests`).
struct Baseline<'a> {
    i: usize,
    n_tests: usize,
    cfg: &'a TestConfig,
    opts: &'a EngineOptions,
    progress: &'a Progress,
    cancel: &'a watch::Receiver<bool>,
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
            let flaky = |msg: String| {
                Error::Baseline(format!(
                    "flaky baseline: run {k} of {runs} differs from run 1, which was green: {msg}"
                ))
            };
            let again = self.once(scratch, k).await.map_err(|e| match e {
                Error::Baseline(msg) => flaky(msg),
                other => other,
            })?;
            let (a, b) = (first.result.tests_total, again.result.tests_total);
            if a != b {
                return Err(flaky(format!(
                    "it ran {} tests, run 1 ran {} (log: {})",
                    counted(b),
                    counted(a),
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
            self.progress.line(&format!(
                "baseline: {runs} runs agree (green, {} tests)",
                counted(first.result.tests_total)
            ));
        }
        Ok(first)
    }

    /// One run of the baseline (`k` counts from 1).
    async fn once(&self, scratch: &mut Scratch, k: usize) -> Result<Green> {
        let (cfg, opts) = (self.cfg, self.opts);
        let log_name = outdir::baseline_log_name(self.i, self.n_tests, k);
        let log = opts.out.join(&log_name);
        let cap = opts.timeout.unwrap_or(match cfg.timeout {
            TimeoutSetting::Fixed(d) => d,
            TimeoutSetting::Auto => BASELINE_CAP,
        });
        self.progress
            .line(&format!("baseline: {}", cfg.command.display()));
        let run = run_suite(
            scratch,
            SuiteCall {
                cfg,
                worker: 0,
                label: "baseline",
                substitutions: Vec::new(),
                log: &log,
                timeout: cap,
                header: format!("baseline of `{}`", cfg.command.display()),
                read_junit: true,
                select: &[],
                progress: self.progress,
            },
            self.cancel,
        )
        .await?;
        // Tests counted by the configured report, or (without `test.junit`)
        // by the report pytest wrote for unguard or the runner's summary line.
        let total = run.junit.tests_total();
        let report = match outcome::baseline(&run.res.exit, cfg, run.junit) {
            BaselineVerdict::Interrupted => return Err(Error::Interrupted),
            BaselineVerdict::Red { reason, tail } => {
                let mut msg = format!("{reason}\nlog: {}", log.display());
                if tail {
                    msg.push('\n');
                    msg.push_str(&run::log_tail(&log, 25));
                }
                return Err(Error::Baseline(msg));
            }
            BaselineVerdict::Green(report) => report,
        };
        if total.is_none() {
            self.progress.line("warning: no `test.junit` configured: tests are not counted, and a suite that runs zero tests would look green");
        }
        let timeout = match cfg.timeout {
            TimeoutSetting::Fixed(d) => d,
            TimeoutSetting::Auto => AUTO_TIMEOUT_MIN.max(run.res.duration * AUTO_TIMEOUT_FACTOR),
        };
        self.progress.line(&format!(
            "baseline: green in {:.1}s{}; mutant timeout {:.1}s",
            run.res.duration.as_secs_f64(),
            total.map(|t| format!(", {t} tests")).unwrap_or_default(),
            opts.timeout.unwrap_or(timeout).as_secs_f64()
        ));
        Ok(Green {
            result: BaselineResult {
                command: cfg.command.display(),
                duration_s: run.res.duration.as_secs_f64(),
                tests_total: total,
                timeout_s: opts.timeout.unwrap_or(timeout).as_secs_f64(),
                log_file: log_name,
            },
            timeout,
            report,
        })
    }
}

fn counted(n: Option<usize>) -> String {
    n.map_or("uncounted".into(), |n| n.to_string())
}

/// Compile every mutant's `killed_by` patterns; each must name at least one
/// test of its baseline, or the spec is wrong (a typo would make every kill
/// "wrong-reason").
fn killed_by_patterns(
    plan: &Plan,
    baseline_reports: &[Option<junit::Report>],
) -> Result<HashMap<String, Vec<TestPattern>>> {
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
        Err(Error::Diagnostics(diags))
    }
}
