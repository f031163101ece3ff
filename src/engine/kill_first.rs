//! Kill-first: before the full suite, a mutant runs the tests that can kill
//! it, through its test config's runner adapter ([`super::adapter`]); the
//! full suite runs only when none of them does.
//!
//! - With `expect.killed_by`: the expected killers (one stage). A red
//!   expected killer is `killed`; anything else goes on to the full suite,
//!   classified exactly as without selection (a red test that is not an
//!   expected killer is `wrong-reason` there, never a kill).
//! - Without it: the tests that went red under the file's canary (the
//!   mutant waits for it), those named after the file first
//!   (`canary-near`: `test_urls.py` for `urls.py`), then the rest
//!   (`canary`), then the tests that killed the file's other mutants so
//!   far. The first red test is `killed`.
//! - A kill by a subset is confirmed ([`super::job`]) by its red tests
//!   alone when they ran green alone on the unmutated copy (checked as a
//!   subset is), else, or when they do not go red again alone, by the
//!   whole subset once more: a kill is always red in two runs of a set of
//!   tests that is green on the unmutated copy.
//! - A stage may kill only after the same subset ran green on the unmutated
//!   copy ([`check`], once per distinct subset): a subset that is red on
//!   its own (a test that needs another one to run first) would "kill"
//!   every mutant.
//! - A test that is red in such a check, when only its tests made it red
//!   (no timeout, crash or load error), is red on the unmutated copy: it
//!   cannot prove a kill. It is left out of every later subset and kill
//!   proof of its test config ([`KillFirst::usable`]), and the others are
//!   checked once more without it ([`green_set`]): one such test does not
//!   cost every mutant the full suite.
//! - A hang in any stage is `timeout` under the mutant's timeout.
//!
//! A stage that would run every test of the baseline is skipped (the full
//! suite runs instead), and so is every stage under `--full`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{watch, OnceCell};

use super::suite::{run_suite, SuiteCall};
use super::{Ctx, Pair};
use crate::coverage::Covering;
use crate::error::{Error, Result};
use crate::outcome::reading::model::{Report, TestCase};
use crate::outcome::SubsetStage;
use crate::outdir;
use crate::plan::Entry;
use crate::results::SubsetCheck;
use crate::run::Exit;
use crate::workspace::Scratch;

/// A subset of the tests a mutant runs before the full suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stage {
    /// Where its tests come from.
    pub name: SubsetStage,
    /// JUnit ids, in the baseline's order.
    pub tests: Vec<String>,
    /// Whether it ran green on the unmutated copy before the mutant ran it.
    /// A covering stage is not (one run per distinct set would cost what
    /// it saves): a kill by it counts only once the red tests alone, or
    /// else the whole set, are green on the unmutated copy.
    pub checked: bool,
}

/// What a mutant runs before (or instead of) the full suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Selection {
    /// These stages, then the full suite unless one decides.
    Stages(Vec<Stage>),
    /// No test executes its changed lines (`first..=last` of its file):
    /// `no-coverage`, nothing runs. `measured`: the tests the map names.
    NoCoverage {
        first: usize,
        last: usize,
        measured: usize,
    },
}

type CheckKey = (usize, Vec<String>);

/// What kill-first shares across a run's workers.
#[derive(Default)]
pub(super) struct KillFirst {
    /// Per (file, test config): the red tests of its mutants killed so far.
    siblings: Mutex<HashMap<Pair, Vec<String>>>,
    /// Per (test config, subset): its run on the unmutated copy, made once.
    checks: Mutex<HashMap<CheckKey, Arc<OnceCell<Arc<SubsetCheck>>>>>,
    /// Every check made, in the order they finished.
    rows: Mutex<Vec<SubsetCheck>>,
    /// Per test config: the tests found red on the unmutated copy by a
    /// check, left out of subsets and kill proofs from then on.
    left_out: Mutex<HashMap<usize, HashSet<String>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl KillFirst {
    /// Mutant of `pair` was killed with these red tests: they are tried
    /// first on its siblings.
    pub fn record_kill(&self, pair: Pair, red: &[String]) {
        let mut map = lock(&self.siblings);
        let known = map.entry(pair).or_default();
        for t in red {
            if !known.contains(t) {
                known.push(t.clone());
            }
        }
    }

    fn siblings(&self, pair: &Pair) -> Vec<String> {
        lock(&self.siblings).get(pair).cloned().unwrap_or_default()
    }

    /// `tests` (of test config `test`) but those left out of subsets and
    /// kill proofs so far, in their order.
    pub fn usable(&self, test: usize, tests: &[String]) -> Vec<String> {
        let map = lock(&self.left_out);
        let Some(out) = map.get(&test) else {
            return tests.to_vec();
        };
        tests
            .iter()
            .filter(|t| !out.contains(*t))
            .cloned()
            .collect()
    }

    /// Leave `red` (of test config `test`) out from now on: the ones not
    /// left out before.
    fn leave_out(&self, test: usize, red: &[String]) -> Vec<String> {
        let mut map = lock(&self.left_out);
        let out = map.entry(test).or_default();
        red.iter()
            .filter(|t| out.insert((*t).clone()))
            .cloned()
            .collect()
    }

    /// Every subset check made, sorted (command, tests) so that a run's
    /// results do not depend on which worker made which.
    pub fn rows(&self) -> Vec<SubsetCheck> {
        let mut rows = lock(&self.rows).clone();
        rows.sort_by(|a, b| (&a.command, &a.tests).cmp(&(&b.command, &b.tests)));
        rows
    }
}

/// Whether mutant `i` waits for its file's canary before it starts:
/// selection is on, it has no `expect.killed_by`, and its config has an
/// adapter (kill-first picks tests from the canary) or a coverage map (the
/// map decides for the file only once the canary shows it complete there).
pub(super) fn needs_canary(ctx: &Ctx, i: usize) -> bool {
    let Entry::Ready(m) = &ctx.plan.entries[i] else {
        return false;
    };
    !ctx.opts.full
        && m.killed_by.is_empty()
        && (ctx.baselines.subset_source(m.test).is_some()
            || ctx.baselines.coverage(m.test).is_some())
}

/// What the coverage map of mutant `i`'s test config says of its changed
/// lines (the first and last line of its file the mutation changes);
/// `None` without a map that may decide for the file (see
/// [`super::coverage_run::trusted`]) or without a change.
pub(super) fn covering(ctx: &Ctx, i: usize) -> Option<(Covering, (usize, usize))> {
    let Entry::Ready(m) = &ctx.plan.entries[i] else {
        return None;
    };
    let map = super::coverage_run::trusted(ctx, &Pair::of(m))?;
    let original = ctx.plan.originals.get(&m.file)?;
    let mutated = m.mutated(original).ok()?;
    let (first, last) = crate::coverage::changed_lines(original, &mutated)?;
    Some((map.covering(&m.file, first, last), (first, last)))
}

/// What mutant `i` runs first: `no-coverage` when no test executes its
/// changed lines; else its stages, each checked green on the unmutated
/// copy (`scratch` holds no mutant now) but a covering stage (see
/// [`Stage::checked`]). No stages without selection. `None` when the run
/// is interrupted.
pub(super) async fn stages(
    w: usize,
    scratch: &mut Scratch,
    ctx: &Ctx,
    i: usize,
    cancel: &watch::Receiver<bool>,
) -> Result<Option<Selection>> {
    let none = Ok(Some(Selection::Stages(Vec::new())));
    let Entry::Ready(m) = &ctx.plan.entries[i] else {
        return none;
    };
    if ctx.opts.full {
        return none;
    }
    let covered = covering(ctx, i);
    let earlier = earlier_kill(ctx, m);
    if let (Some((Covering::NoTest, (first, last))), None) = (&covered, &earlier) {
        let (first, last) = (*first, *last);
        let measured = ctx
            .baselines
            .coverage(m.test)
            .map_or(0, |c| c.tests().len());
        return Ok(Some(Selection::NoCoverage {
            first,
            last,
            measured,
        }));
    }
    let Some((report, _)) = ctx.baselines.subset_source(m.test) else {
        return none;
    };
    let pair = Pair::of(m);
    let candidates = match covered {
        Some((Covering::Tests(ids), _)) if ctx.killed_by(i).is_empty() => {
            by_coverage(&report, &ids)
        }
        _ => candidates(ctx, i, &pair, &report),
    };
    let mut usable = Vec::new();
    for mut stage in earlier.into_iter().chain(candidates) {
        // Tests red on the unmutated copy never prove a kill: out of every
        // stage, the covering one too. A stage left empty is none.
        stage.tests = ctx.kill_first.usable(m.test, &stage.tests);
        if stage.tests.is_empty() {
            continue;
        }
        if !stage.checked {
            usable.push(stage);
            continue;
        }
        match green_set(w, scratch, ctx, m.test, &stage.tests, cancel).await {
            Ok(Some(tests)) => {
                stage.tests = tests;
                usable.push(stage);
            }
            Ok(None) => {}
            Err(Error::Interrupted) => return Ok(None),
            Err(e) => return Err(e),
        }
    }
    Ok(Some(Selection::Stages(usable)))
}

/// The stage that proves mutant `m`'s kill of the earlier run again
/// (`--incremental`): its red tests there that today's baseline has, run
/// first and checked green on the unmutated copy. `None` when it was not
/// killed there, or none of those tests is left.
fn earlier_kill(ctx: &Ctx, m: &crate::plan::Mutant) -> Option<Stage> {
    let red = ctx.reuse.earlier_kill(&m.id)?;
    let (report, _) = ctx.baselines.subset_source(m.test)?;
    let tests = ids_where(&report, |c| red.contains(&c.id()));
    (!tests.is_empty() && tests.len() < report.total()).then_some(Stage {
        name: SubsetStage::EarlierKill,
        tests,
        checked: true,
    })
}

/// The stage of a mutant whose changed lines the tests `ids` execute: those
/// tests, in the baseline's order. Any other test cannot kill it (the full
/// suite confirms a survivor anyway), so it is the only stage.
fn by_coverage(report: &Report, ids: &[String]) -> Vec<Stage> {
    let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let tests = ids_where(report, |c| wanted.contains(c.id().as_str()));
    if tests.is_empty() || tests.len() >= report.total() {
        return Vec::new();
    }
    vec![Stage {
        name: SubsetStage::Covering,
        tests,
        checked: false,
    }]
}

/// The stages mutant `i` would run, before their checks: non-empty, and
/// each smaller than the whole suite.
fn candidates(ctx: &Ctx, i: usize, pair: &Pair, report: &Report) -> Vec<Stage> {
    let killed_by = ctx.killed_by(i);
    let mut stages = Vec::new();
    if !killed_by.is_empty() {
        let tests = ids_where(report, |c| killed_by.iter().any(|p| p.matches(c)));
        stages.push(Stage {
            name: SubsetStage::ExpectedKillers,
            tests,
            checked: true,
        });
    } else {
        let canary = ctx
            .canaries
            .finding(pair)
            .and_then(|f| f.report.clone())
            .map(|r| red_under_canary(report, &r))
            .unwrap_or_default();
        let seen: HashSet<String> = canary.iter().cloned().collect();
        let killers: HashSet<String> = ctx.kill_first.siblings(pair).into_iter().collect();
        let siblings = ids_where(report, |c| {
            let id = c.id();
            killers.contains(&id) && !seen.contains(&id)
        });
        // Canary tests named after the file first: the cheap run that
        // usually holds the killer. Both parts go when together they are
        // every test (the full suite runs instead).
        let (near, rest): (Vec<String>, Vec<String>) = if canary.len() < report.total() {
            canary
                .into_iter()
                .partition(|id| named_after(id, &pair.file))
        } else {
            Default::default()
        };
        stages.push(Stage {
            name: SubsetStage::CanaryNear,
            tests: near,
            checked: true,
        });
        stages.push(Stage {
            name: SubsetStage::Canary,
            tests: rest,
            checked: true,
        });
        stages.push(Stage {
            name: SubsetStage::Siblings,
            tests: siblings,
            checked: true,
        });
    }
    let all = report.total();
    stages.retain(|s| !s.tests.is_empty() && s.tests.len() < all);
    stages
}

/// Whether test `id` is named after source `file`: a word of its module
/// or class path (split at anything but letters and digits, compared
/// without case) is the file's stem, as `tests.unit.test_urls::t` is for
/// `src/app/urls.py` or `src/guard.test.ts::t` for `src/guard.ts`. Stems
/// that name no concern (`__init__`, `index`, `main`, `mod`, `lib`, …)
/// match nothing.
fn named_after(id: &str, file: &str) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file);
    let stem = name.split('.').next().unwrap_or(name).to_lowercase();
    let stem = stem.trim_matches('_');
    if stem.len() < 3
        || [
            "init", "index", "main", "mod", "lib", "test", "tests", "util", "utils",
        ]
        .contains(&stem)
    {
        return false;
    }
    let path = id.rsplit_once("::").map_or(id, |(p, _)| p);
    let path = if path.is_empty() { id } else { path };
    path.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| w.eq_ignore_ascii_case(stem))
}

/// The ids of the baseline's tests that `keep` keeps, in its order, once each.
fn ids_where(report: &Report, keep: impl Fn(&TestCase) -> bool) -> Vec<String> {
    report.ids_where(keep)
}

/// The baseline's tests that the canary turned red (see
/// [`Report::red_under`]).
fn red_under_canary(baseline: &Report, canary: &Report) -> Vec<String> {
    baseline.red_under(canary)
}

/// `tests` (of test config `test`) but those left out of subsets and kill
/// proofs, when they run green on the unmutated copy ([`check`]); when that
/// check is red only because some of them are, they are left out too, and
/// the others are checked once more. `None`: no test left, or not green.
pub(super) async fn green_set(
    w: usize,
    scratch: &mut Scratch,
    ctx: &Ctx,
    test: usize,
    tests: &[String],
    cancel: &watch::Receiver<bool>,
) -> Result<Option<Vec<String>>> {
    let mut kept = ctx.kill_first.usable(test, tests);
    for last in [false, true] {
        if kept.is_empty() {
            return Ok(None);
        }
        let made = check(w, scratch, ctx, test, &kept, cancel).await?;
        if made.green {
            return Ok(Some(kept));
        }
        if last || made.left_out.is_empty() {
            return Ok(None);
        }
        kept = ctx.kill_first.usable(test, &kept);
    }
    Ok(None)
}

/// The run of `tests` (of test config `test`) on the unmutated copy: made
/// once per distinct subset, by the first worker that needs it (others
/// wait for it). Green: exit 0, and its report has every test, none red.
pub(super) async fn check(
    w: usize,
    scratch: &mut Scratch,
    ctx: &Ctx,
    test: usize,
    tests: &[String],
    cancel: &watch::Receiver<bool>,
) -> Result<Arc<SubsetCheck>> {
    let cell = lock(&ctx.kill_first.checks)
        .entry((test, tests.to_vec()))
        .or_default()
        .clone();
    let made = cell
        .get_or_try_init(|| async {
            let row = run_check(w, scratch, ctx, test, tests, cancel).await?;
            lock(&ctx.kill_first.rows).push(row.clone());
            Ok::<_, Error>(Arc::new(row))
        })
        .await?;
    Ok(made.clone())
}

async fn run_check(
    w: usize,
    scratch: &mut Scratch,
    ctx: &Ctx,
    test: usize,
    tests: &[String],
    cancel: &watch::Receiver<bool>,
) -> Result<SubsetCheck> {
    let cfg = &ctx.plan.tests[test];
    let Some((_, adapter)) = ctx.baselines.subset_source(test) else {
        return Err(Error::Internal("a subset check without an adapter".into()));
    };
    let k = {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
    };
    let log_name = outdir::subset_check_log_name(k);
    let run = run_suite(
        scratch,
        SuiteCall {
            cfg,
            worker: w,
            label: "subset-check",
            substitutions: Vec::new(),
            log: &ctx.opts.out.join(&log_name),
            timeout: ctx.timeout(None, test),
            header: format!(
                "subset check: {} test(s) through {} on the unmutated copy",
                tests.len(),
                adapter.name()
            ),
            read_junit: true,
            select: tests,
            adapter: Some(&adapter),
            progress: &ctx.progress,
            bare: ctx.baselines.bare(test),
            alone: false,
            coverage: None,
            network: ctx.baselines.isolated(test),
            warm: ctx.baselines.warmth(test),
        },
        cancel,
    )
    .await?;
    if run.res.exit == Exit::Interrupted {
        return Err(Error::Interrupted);
    }
    let detail = why_not_green(&run.res.exit, run.junit.report(), tests);
    let left_out = match detail {
        Some(_) => red_on_their_own(cfg, &run.res.exit, run.junit.report(), tests),
        None => Vec::new(),
    };
    if left_out.is_empty() {
        if let Some(why) = &detail {
            ctx.progress.line(&format!(
                "subset check: {} test(s) not usable to kill ({why}; see {log_name}): their mutants run the full suite",
                tests.len()
            ));
        }
    }
    let others = tests.len() - left_out.len();
    for t in ctx.kill_first.leave_out(test, &left_out) {
        ctx.progress.line(&format!(
            "subset check: {t} is red on the unmutated copy: left out of subsets and kill proofs; {others} other tests kept (see {log_name})"
        ));
    }
    Ok(SubsetCheck {
        command: cfg.command.display(),
        tests: tests.to_vec(),
        green: detail.is_none(),
        detail: detail.unwrap_or_default(),
        left_out,
        duration_s: run.res.duration.as_secs_f64(),
        log_file: log_name,
    })
}

/// The tests of a red subset check that alone made it red: its exit is a
/// test failure (no timeout, signal or crash), its report has every test of
/// the subset and no load error, and its red tests are all of the subset.
/// Empty when anything else may have made it red (today's rule then: the
/// whole subset is not usable).
fn red_on_their_own(
    cfg: &crate::spec::TestConfig,
    exit: &Exit,
    report: Option<&Report>,
    tests: &[String],
) -> Vec<String> {
    let failed = match exit {
        Exit::Code(c) => {
            *c != 0
                && cfg.fail_codes.is_test_failure(*c)
                && crate::outcome::crash_signal(cfg, *c).is_none()
        }
        _ => false,
    };
    let Some(report) = report.filter(|r| failed && r.load_errors().is_empty()) else {
        return Vec::new();
    };
    let ran: HashSet<String> = report.cases.iter().map(TestCase::id).collect();
    let red = report.red_ids();
    let all_ran = tests.iter().all(|t| ran.contains(t));
    let only_subset = red.iter().all(|t| tests.contains(t));
    if all_ran && only_subset {
        red
    } else {
        Vec::new()
    }
}

/// Why a subset's run on the unmutated copy cannot back a kill; `None`
/// when it is green and ran every test of the subset.
fn why_not_green(exit: &Exit, report: Option<&Report>, tests: &[String]) -> Option<String> {
    if let Some(red) = report.and_then(|r| r.red_ids().first().cloned()) {
        return Some(format!(
            "{red} is red on the unmutated copy ({})",
            exit.describe()
        ));
    }
    if *exit != Exit::Code(0) {
        return Some(format!("{} on the unmutated copy", exit.describe()));
    }
    let Some(report) = report else {
        return Some("no JUnit report to show which tests ran".into());
    };
    let ran: HashSet<String> = report.cases.iter().map(TestCase::id).collect();
    let missing: Vec<&String> = tests.iter().filter(|t| !ran.contains(*t)).collect();
    missing.first().map(|t| {
        format!(
            "{} of its tests did not run (e.g. {t}): the runner did not select them",
            missing.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::reading::junit::parse;

    #[test]
    fn canary_errors_of_a_module_select_its_tests() {
        let baseline = parse(
            r#"<testsuite>
            <testcase classname="tests.test_a" name="t1"/>
            <testcase classname="tests.test_a.K" name="t2"/>
            <testcase classname="tests.test_b" name="t3"/>
            <testcase classname="tests.test_c" name="t4"/>
            </testsuite>"#,
        )
        .unwrap();
        let canary = parse(
            r#"<testsuite>
            <testcase classname="" name="tests.test_a"><error message="x"/></testcase>
            <testcase classname="tests.test_b" name="t3"><failure message="y"/></testcase>
            <testcase classname="tests.test_c" name="t4"/>
            </testsuite>"#,
        )
        .unwrap();
        assert_eq!(
            red_under_canary(&baseline, &canary),
            ["tests.test_a::t1", "tests.test_a.K::t2", "tests.test_b::t3"]
        );
    }

    #[test]
    fn tests_named_after_a_file() {
        let f = "src/app/urls.py";
        assert!(named_after("tests.unit.test_urls.K::test_x", f));
        assert!(named_after("tests/urls.test.ts::block > t", f));
        assert!(!named_after("tests.unit.test_url_parts::test_urls", f));
        assert!(!named_after("tests.test_http::t", f));
        // A stem that names no concern matches nothing.
        assert!(!named_after("tests.test_main::t", "src/main.py"));
        assert!(!named_after("pkg.test_init::t", "pkg/__init__.py"));
    }

    #[test]
    fn a_subset_is_usable_only_green_and_whole() {
        let r = |x: &str| parse(x).unwrap();
        let ids = vec!["m::a".to_string(), "m::b".to_string()];
        let both = r(
            r#"<testsuite><testcase classname="m" name="a"/><testcase classname="m" name="b"/></testsuite>"#,
        );
        assert_eq!(why_not_green(&Exit::Code(0), Some(&both), &ids), None);
        assert!(why_not_green(&Exit::Code(1), Some(&both), &ids).is_some());
        assert!(why_not_green(&Exit::Code(0), None, &ids).is_some());
        let one = r(r#"<testsuite><testcase classname="m" name="a"/></testsuite>"#);
        assert!(why_not_green(&Exit::Code(0), Some(&one), &ids)
            .unwrap()
            .contains("did not run"));
    }

    #[test]
    fn only_red_tests_of_the_subset_itself_are_left_out() {
        use crate::runner::test_support::{argv, config};
        let r = |x: &str| parse(x).unwrap();
        let mut pytest = config(argv(&["pytest"]), Some("{junit}"));
        pytest.fail_codes = crate::spec::FailCodes::Only(vec![1]);
        let ids = vec!["m::a".to_string(), "m::b".to_string()];
        let b_red = r(
            r#"<testsuite><testcase classname="m" name="a"/><testcase classname="m" name="b"><failure message="x"/></testcase></testsuite>"#,
        );
        let left =
            |exit: Exit, report: &Report| red_on_their_own(&pytest, &exit, Some(report), &ids);
        assert_eq!(left(Exit::Code(1), &b_red), ["m::b"]);
        // A timeout, a crash, a signal or an exit that is no test failure
        // (pytest's 2: interrupted, collection errors) keeps the whole
        // subset unusable.
        assert!(left(Exit::Timeout, &b_red).is_empty());
        assert!(left(Exit::Signal(9), &b_red).is_empty());
        assert!(left(Exit::Code(137), &b_red).is_empty());
        assert!(left(Exit::Code(2), &b_red).is_empty());
        assert!(red_on_their_own(&pytest, &Exit::Code(1), None, &ids).is_empty());
        // A shell's report of a crash (128 + N) is no test failure even
        // where every non-zero exit is one.
        let generic = config(argv(&["sh", "-c", "x"]), Some("{junit}"));
        let crashed = red_on_their_own(&generic, &Exit::Code(139), Some(&b_red), &ids);
        assert!(crashed.is_empty());
        assert_eq!(
            red_on_their_own(&generic, &Exit::Code(3), Some(&b_red), &ids),
            ["m::b"]
        );
        // So do a module that failed to load, a red test the subset does
        // not hold, and a test of the subset that did not run.
        let load = r(
            r#"<testsuite><testcase classname="m" name="a"/><testcase classname="m" name="b"><failure message="x"/></testcase><testcase classname="" name="tests.test_c"><error message="x"/></testcase></testsuite>"#,
        );
        let with_module = [ids.clone(), vec!["tests.test_c".to_string()]].concat();
        assert!(red_on_their_own(&pytest, &Exit::Code(1), Some(&load), &with_module).is_empty());
        let outside = r(
            r#"<testsuite><testcase classname="m" name="a"/><testcase classname="m" name="b"/><testcase classname="m" name="c"><failure message="x"/></testcase></testsuite>"#,
        );
        assert!(left(Exit::Code(1), &outside).is_empty());
        let missing = r(
            r#"<testsuite><testcase classname="m" name="b"><failure message="x"/></testcase></testsuite>"#,
        );
        assert!(left(Exit::Code(1), &missing).is_empty());
    }
}
