//! The results model: one value that every report renders from, written to
//! `outcomes.json` (`"schema": "unguard/1"`). Later versions may add fields,
//! never rename or remove these.

pub mod fingerprint;
pub mod inputs;
pub mod row;
pub mod twins;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The value of [`Results::schema`] this version writes.
pub const SCHEMA: &str = "unguard/1";

/// The verdict vocabulary of each row is the verdict rules' own.
pub use crate::outcome::kinds::{Outcome, ReasonKind};

/// The configuration a run is judged by, as recorded in it (`config.rs`, the
/// leaf `spec` and the catalog fill).
pub use crate::config::{Allow, Direction, GateConfig, Thresholds, TimeoutPolicy, TwinsPolicy};

/// Which mutants a run covers, as the plan selected them.
pub use crate::plan::{Selection, Shard};

/// One mutant's row in `outcomes.json`: its verdict and everything every
/// report shows about it (site, diff, tests, logs, timing).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct MutantResult {
    /// The mutation's id (`id:` in the spec), unique within the run.
    pub id: String,
    /// The control the mutation removes or weakens, in the spec's words.
    pub control: String,
    /// The rule the control implements (`rule:`, e.g. a seed's rule number), when
    /// the spec names one.
    #[serde(default)]
    pub rule: Option<String>,
    /// `loosen` (a negative test must kill it) or `tighten` (a positive twin
    /// must kill it); absent where the spec declares no direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// The mutated file, relative to the target root, with `/` separators.
    pub file: String,
    /// The site's line: the first line the mutation changes (1-based), i.e.
    /// the line of the first byte that differs between the original file and
    /// the mutant. A multi-line `find` whose first lines are unchanged (a
    /// comment, context) is at the line it changes, not where it matches.
    /// Every report shows this line. 0 when the mutation never applied.
    pub line: usize,
    /// The verdict.
    pub outcome: Outcome,
    /// JUnit ids (`classname::name`) of the tests that failed or errored.
    pub red_tests: Vec<String>,
    /// Number of tests in the run's JUnit report, when there is one.
    #[serde(default)]
    pub tests_total: Option<usize>,
    /// A kill whose red tests only the runner's summary line counted
    /// (jest's `Tests: 28 failed, 1190 passed, 1218 total`, vitest's,
    /// unittest's `FAILED (failures=2)`), with no per-test report to name
    /// them: how many it counted (`red_tests` is then empty). Absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red_counted: Option<usize>,
    /// Seconds its suite runs took (subset, full suite and re-checks summed; the
    /// failed check's for an unviable mutant); 0 when nothing ran.
    pub duration_s: f64,
    /// Why this verdict, in one or two sentences.
    pub detail: String,
    /// Which verdict rule decided it, as a stable name (`suite-green`,
    /// `killed-by-expected`, `load-error`, …; see docs/reports.md). Absent
    /// in files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<ReasonKind>,
    /// The mutant's `expect.killed_by` patterns, as the spec writes them
    /// (empty when it declares none).
    #[serde(default)]
    pub killed_by: Vec<String>,
    /// How the test command ended (e.g. `exit code 1`).
    #[serde(default)]
    pub exit: Option<String>,
    /// File names inside the output dir.
    #[serde(default)]
    pub diff_file: Option<String>,
    /// Name of the log of the run that decided the verdict (a subset's, the
    /// full suite's, or the check's for an unviable mutant).
    #[serde(default)]
    pub log_file: Option<String>,
    /// Where the mutation is declared: `spec.yaml:line:col`.
    pub spec_pos: String,
    /// The changed region of the first changed site in the original file
    /// (1-based, columns in characters): `start` is on the site's `line`,
    /// at the site's start when that is on the same line, else at the start
    /// of the line; `end` is just after the last changed character, grown to
    /// the site's end when that is on the same line. Unchanged leading and
    /// trailing lines of a multi-line site are not part of it.
    #[serde(default)]
    pub location: Option<Location>,
    /// Text that replaced the `location` region.
    #[serde(default)]
    pub replacement: Option<String>,
    /// Number of sites the mutation replaced.
    #[serde(default)]
    pub sites: usize,
    /// The test command the mutant ran under.
    #[serde(default)]
    pub command: Option<String>,
    /// Unified diff original → mutant (also in `diff_file`).
    #[serde(default)]
    pub diff: Option<String>,
    /// For findings (not killed): every test id in the run's JUnit report, i.e.
    /// the tests that ran and did not catch the mutant. Empty for kills.
    #[serde(default)]
    pub tests_ran: Vec<String>,
    /// Set when `gate.allow` lists this mutant: the written reason. Allowed
    /// mutants are left out of the score and the gate.
    #[serde(default)]
    pub allowed: Option<String>,
    /// Paths this mutant's runs (its check, suite run and re-checks, summed)
    /// created, deleted or changed in the scratch copy, all put back before
    /// the next run; 0 when they left the copy as they found it.
    #[serde(default)]
    pub reset_paths: usize,
    /// The runs of a subset of the tests this mutant had before (or instead
    /// of) the full suite, in order (kill-first; empty under `--full`).
    #[serde(default)]
    pub subset_runs: Vec<SubsetRun>,
    /// Whether the full suite ran with this mutant in place (its verdict
    /// then is the full suite's). False for a kill by a subset, and for a
    /// mutant that never ran.
    #[serde(default)]
    pub full_suite: bool,
    /// Set under `gate.twins: report` for an undetected tightening mutant
    /// (survived, wrong-reason, flaky): a finding, listed apart and left out
    /// of the score and the gate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub twin_reported: bool,
    /// For a verdict a later `--incremental` run may reuse (killed,
    /// survived, no-coverage): `sha256:…` of the mutation (its spec entry
    /// and resolved test command), its file's bytes, the run's settings
    /// that decide verdicts and unguard's version (see
    /// `src/results/inputs.rs`). Absent for other verdicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The inputs its verdict depends on (keys of [`Results::hashes`]):
    /// files relative to the target root, `skeleton:FILE` (a Python file's
    /// code outside function bodies), `config:*` (the test configuration
    /// and lock files), `tests:*` (the list of test files), `tree:*` (every
    /// file of the copy). Empty when the verdict cannot be reused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    /// Set when this verdict was reused from an earlier run
    /// (`--incremental`): nothing ran for it in this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused: Option<Reused>,
    /// The network its runs had: a namespace of their own (loopback only),
    /// or the machine's, shared with the other workers (see its baseline's
    /// `network_note` for why). Left out when shared.
    #[serde(default, skip_serializing_if = "Network::is_shared")]
    pub network: Network,
}

/// The network a test command's runs had (`--network-isolation`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Network {
    /// The machine's network, shared with every other run (as before).
    #[default]
    Shared,
    /// A network namespace of its own, holding only a loopback device: no
    /// other run can take its ports, and its confirmations run beside the
    /// other workers.
    Namespace,
}

impl Network {
    /// The machine's network (absent from `outcomes.json`).
    pub fn is_shared(&self) -> bool {
        *self == Network::Shared
    }
}

/// Where a reused verdict comes from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Reused {
    /// The `outcomes.json` it was read from (`--incremental`, as given).
    pub file: String,
    /// The run fingerprint of the run that decided it (a verdict that
    /// run reused in turn names the run that decided it first).
    #[serde(default)]
    pub fingerprint: Option<String>,
    /// When the run that decided it started (RFC 3339, UTC).
    #[serde(default)]
    pub started_at: Option<String>,
}

/// One run of a subset of the suite with a mutant in place.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct SubsetRun {
    /// Where the tests come from: `expected-killers` (`expect.killed_by`),
    /// `canary-near` (red with the file emptied, named after the file),
    /// `canary` (the other tests red with the file emptied) or `siblings`
    /// (killed another mutant of the file).
    pub stage: String,
    /// JUnit ids of the tests it ran.
    pub tests: Vec<String>,
    /// `killed` or `timeout` (final), else `passed-on` (the next stage, or
    /// the full suite, decides).
    pub result: String,
    /// Why, in one sentence.
    pub detail: String,
    /// Seconds the run took.
    pub duration_s: f64,
    /// Its log, inside the output dir.
    pub log_file: String,
}

/// A subset of the suite run once on the unmutated copy: only a subset that
/// was green there may kill a mutant.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct SubsetCheck {
    /// The test command the subset ran through (`tests` selects from it).
    pub command: String,
    /// JUnit ids of the tests in the subset.
    pub tests: Vec<String>,
    /// Whether the subset passed on the unmutated copy (only then may it kill).
    pub green: bool,
    /// Why it cannot be used, when it is not green.
    pub detail: String,
    /// The tests that made it red, when only its own tests did (no timeout,
    /// crash or load error): each is red on the unmutated copy, so it is
    /// left out of every later subset and kill proof of the command, and
    /// the others are checked again without them.
    #[serde(default)]
    pub left_out: Vec<String>,
    /// Seconds the run took.
    pub duration_s: f64,
    /// Its log, inside the output dir.
    pub log_file: String,
}

impl MutantResult {
    /// How many tests went red, and whether only a summary line counted
    /// them (see [`MutantResult::red_counted`]).
    pub fn red_count(&self) -> (usize, bool) {
        match self.red_counted {
            Some(n) if self.red_tests.is_empty() => (n, true),
            _ => (self.red_tests.len(), false),
        }
    }

    /// `N/M` (`N/M (summary)` when only the summary line counted the red
    /// tests), `N` without a count of the tests that ran.
    pub fn red_of_total(&self) -> String {
        let (n, summary) = self.red_count();
        let from = if summary { " (summary)" } else { "" };
        match self.tests_total {
            Some(total) => format!("{n}/{total}{from}"),
            None => format!("{n}{from}"),
        }
    }

    /// The row of mutation `id` with its verdict; everything a run adds
    /// (site, tests, files, timing) starts empty.
    pub fn new(
        id: &str,
        control: &str,
        file: &str,
        spec_pos: String,
        outcome: Outcome,
        detail: String,
    ) -> MutantResult {
        MutantResult {
            id: id.to_string(),
            control: control.to_string(),
            rule: None,
            direction: None,
            file: file.to_string(),
            line: 0,
            outcome,
            red_tests: Vec::new(),
            tests_total: None,
            red_counted: None,
            duration_s: 0.0,
            detail,
            reason: None,
            killed_by: Vec::new(),
            exit: None,
            diff_file: None,
            log_file: None,
            spec_pos,
            location: None,
            replacement: None,
            sites: 0,
            command: None,
            diff: None,
            tests_ran: Vec::new(),
            allowed: None,
            reset_paths: 0,
            subset_runs: Vec::new(),
            full_suite: false,
            twin_reported: false,
            fingerprint: None,
            inputs: Vec::new(),
            reused: None,
            network: Network::Shared,
        }
    }

    /// Whether the gate skips this mutant: allowed, and its outcome is one an
    /// allow can excuse (an allow never hides a spec error).
    pub fn is_allowed(&self) -> bool {
        self.allowed.is_some()
            && matches!(
                self.outcome,
                Outcome::Survived
                    | Outcome::NoCoverage
                    | Outcome::WrongReason
                    | Outcome::Timeout
                    | Outcome::Flaky
            )
    }

    /// Whether `gate.twins: report` lifts this mutant out of score and gate:
    /// a tightening mutant no test caught, not already allowed.
    pub fn is_twin_reported(&self) -> bool {
        self.twin_reported
            && !self.is_allowed()
            && self.direction == Some(Direction::Tighten)
            && matches!(
                self.outcome,
                Outcome::Survived | Outcome::NoCoverage | Outcome::WrongReason | Outcome::Flaky
            )
    }
}

/// A position in a source file; line and column are 1-based, columns count characters.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

/// A region of a source file, from `start` up to just before `end`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
pub struct Location {
    /// The region's first character.
    pub start: Position,
    /// Just after the region's last character.
    pub end: Position,
}

/// The run of one test command on the unmutated copy before any mutant: it
/// must be green, and its duration sets the mutants' timeout.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct BaselineResult {
    /// The test command as run.
    pub command: String,
    /// Seconds the run took.
    pub duration_s: f64,
    /// Number of tests in its JUnit report, when there is one.
    #[serde(default)]
    pub tests_total: Option<usize>,
    /// The timeout mutants of this command run under.
    pub timeout_s: f64,
    /// Its log, inside the output dir.
    pub log_file: String,
    /// What unguard adds to the command's runs for its own convenience
    /// (e.g. `PYTEST_ADDOPTS=--junitxml=…`) that turned this baseline red
    /// while the command without it was green: left out of every run of
    /// this command from then on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
    /// Its coverage run (per-test coverage), when one was made: the map
    /// that picks each mutant's covering tests and finds `no-coverage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Box<CoverageRunResult>>,
    /// The network this command's runs after the baseline had (left out
    /// when shared).
    #[serde(default, skip_serializing_if = "Network::is_shared")]
    pub network: Network,
    /// Why they shared the machine's network, when they did and the
    /// machine or the suite was the reason (`None` under
    /// `--network-isolation off`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_note: Option<String>,
    /// This command's runs after the baseline were forked from a warm
    /// Python interpreter (one per worker; the baseline ran both ways and
    /// agreed). Left out when they started as written.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warm: bool,
    /// Why they started as written although the command is a start of
    /// pytest or unittest that could be forked (`None` under `--cold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_note: Option<String>,
}

/// The coverage run of one test command: one run of the whole suite with
/// a collector, after its green baseline, recording which tests execute
/// which lines of the copy.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct CoverageRunResult {
    /// The collector (`coverage.py`).
    pub collector: String,
    /// Seconds the run took.
    pub duration_s: f64,
    /// Tests the map names (each executed code of the copy under its name).
    pub tests: usize,
    /// Files of the copy the run executed.
    pub files: usize,
    /// Whether the map was used (selection and `no-coverage`).
    pub used: bool,
    /// Why it was not, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_used: Option<String>,
    /// Its log, inside the output dir.
    pub log_file: String,
}

/// Whether the coverage map of one test command decided for one mutated
/// file (`no-coverage`, the covering tests), and why not when it did not.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct FileCoverage {
    /// The file, relative to the target root.
    pub file: String,
    /// The test command.
    pub command: String,
    /// Whether the map decided for its mutants.
    pub used: bool,
    /// Why it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<crate::coverage::Distrust>,
    /// What was seen (the tests, the process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The canary of one mutated file under one test command: the suite run with
/// the file emptied, to prove the suite reaches it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct CanaryResult {
    /// The emptied file, relative to the target root.
    pub file: String,
    /// The test command it ran under.
    pub command: String,
    /// True when emptying the file turned the suite red (or made it hang).
    pub reached: bool,
    /// JUnit ids of the tests that went red with the file emptied (when the
    /// suite writes a report): a mutant whose `killed_by` tests are not
    /// among them is `unreached`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub red_tests: Vec<String>,
    /// How the run ended (e.g. `exit code 1`).
    pub exit: String,
    /// Seconds the run took.
    pub duration_s: f64,
    /// Its log, inside the output dir.
    pub log_file: String,
}

/// Counts of mutants per outcome, and the score. An allowed or twin-reported
/// mutant counts only under `allowed` or `twins_reported`, not under its
/// outcome.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Summary {
    /// Every mutant of the run, whatever its outcome.
    pub mutants: usize,
    /// Mutants the suite killed.
    pub killed: usize,
    /// Mutants that survived.
    pub survived: usize,
    /// Mutants whose mutated lines no test executes (per-test coverage
    /// run): not run, and counted like survivors.
    #[serde(default)]
    pub no_coverage: usize,
    /// Mutants whose suite hung (timeout).
    pub timeout: usize,
    /// Mutants red for the wrong reason.
    pub wrong_reason: usize,
    /// Mutants in files the suite does not reach (canary stayed green).
    pub unreached: usize,
    /// Mutants that failed `test.check`.
    pub unviable: usize,
    /// Mutations that changed nothing.
    pub no_op: usize,
    /// Mutations whose pattern matched a number of times other than `count`.
    pub ambiguous: usize,
    /// Survivors that went red on a re-check.
    #[serde(default)]
    pub flaky: usize,
    /// Mutants on which unguard itself failed.
    #[serde(default)]
    pub internal_error: usize,
    /// Detected ÷ scored mutants, in percent; `None` when nothing was scored.
    pub score: Option<f64>,
    /// Mutants that count as detected: killed, plus timeouts under
    /// `--timeout-is killed`.
    pub detected: usize,
    /// Mutants the score is over: killed, survived, no-coverage, timeout,
    /// wrong-reason and flaky.
    pub scored: usize,
    /// Survived / no-coverage / wrong-reason / timeout / flaky mutants
    /// excused by `gate.allow`; they are counted here instead of under their
    /// outcome.
    #[serde(default)]
    pub allowed: usize,
    /// Undetected tightening mutants under `gate.twins: report`: findings
    /// counted here instead of under their outcome, out of score and gate.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub twins_reported: usize,
    /// Mutants whose verdict was reused from an earlier run
    /// (`--incremental`), counted under their outcome too.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reused: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Summary {
    /// Score = killed (+ timeouts under `--timeout-is killed`) ÷ mutants with
    /// a verdict (killed, survived, no-coverage, timeout, wrong-reason, flaky).
    /// A no-coverage mutant never ran, but no test executes its lines, so it
    /// counts as not detected, like a survivor. Unviable mutants are
    /// left out like cargo-mutants does; no-op, ambiguous and unreached never
    /// ran and are spec/setup errors with their own exit code.
    /// Allowed mutants are counted as `allowed` and left out of the score.
    pub fn compute(mutants: &[MutantResult], policy: TimeoutPolicy) -> Summary {
        let count = |o: Outcome| {
            mutants
                .iter()
                .filter(|m| m.outcome == o && !m.is_allowed() && !m.is_twin_reported())
                .count()
        };
        let mut s = Summary {
            mutants: mutants.len(),
            killed: count(Outcome::Killed),
            survived: count(Outcome::Survived),
            no_coverage: count(Outcome::NoCoverage),
            timeout: count(Outcome::Timeout),
            wrong_reason: count(Outcome::WrongReason),
            unreached: count(Outcome::Unreached),
            unviable: count(Outcome::Unviable),
            no_op: count(Outcome::NoOp),
            ambiguous: count(Outcome::Ambiguous),
            flaky: count(Outcome::Flaky),
            internal_error: count(Outcome::InternalError),
            allowed: mutants.iter().filter(|m| m.is_allowed()).count(),
            twins_reported: mutants.iter().filter(|m| m.is_twin_reported()).count(),
            reused: mutants.iter().filter(|m| m.reused.is_some()).count(),
            ..Summary::default()
        };
        s.scored = s.killed + s.survived + s.no_coverage + s.timeout + s.wrong_reason + s.flaky;
        s.detected = s.killed
            + if policy == TimeoutPolicy::Killed {
                s.timeout
            } else {
                0
            };
        s.score = (s.scored > 0).then(|| 100.0 * s.detected as f64 / s.scored as f64);
        s
    }

    /// One line: `8 mutants: 5 killed, 1 survived, … · score 75.0% (6/8)`.
    pub fn line(&self) -> String {
        let parts: Vec<String> = [
            (self.killed, "killed"),
            (self.survived, "survived"),
            (self.no_coverage, "no-coverage"),
            (self.timeout, "timeout"),
            (self.wrong_reason, "wrong-reason"),
            (self.unreached, "unreached"),
            (self.unviable, "unviable"),
            (self.no_op, "no-op"),
            (self.ambiguous, "ambiguous"),
            (self.flaky, "flaky"),
            (self.internal_error, "internal-error"),
            (self.allowed, "allowed"),
            (self.twins_reported, "twin-reported"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect();
        let score = match self.score {
            Some(s) => format!("score {s:.1}% ({}/{})", self.detected, self.scored),
            None => "no score (no mutant ran)".into(),
        };
        let noun = match (self.mutants, self.reused) {
            (1, 0) => "mutant".to_string(),
            (_, 0) => "mutants".to_string(),
            (1, _) => "mutant (reused)".to_string(),
            (_, r) => format!("mutants ({r} reused)"),
        };
        if parts.is_empty() {
            format!("{} {noun}; {score}", self.mutants)
        } else {
            format!("{} {noun}: {}; {score}", self.mutants, parts.join(", "))
        }
    }
}

/// The gate's verdict: exit code and the reasons behind it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct GateResult {
    /// True when the exit code is 0.
    pub passed: bool,
    /// The exit code of the run (see docs/exit-codes.md).
    pub exit_code: i32,
    /// Why the gate failed (or why the exit code is not 0), one sentence each.
    pub reasons: Vec<String>,
    /// Remarks that do not fail the gate (e.g. a stale `allow` entry).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// Everything one run found, as written to `outcomes.json`: every report
/// renders from this value, and `unguard merge` joins shards of it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Results {
    /// Always `unguard/1` for this version of the model.
    pub schema: String,
    /// The version of unguard that wrote it.
    pub unguard_version: String,
    /// `sha256:…` of what decides the verdicts: the spec's content as loaded
    /// (mutations and their resolved test commands) and unguard's version
    /// (see `src/results/fingerprint.rs`). `unguard merge` joins only shards with the
    /// same fingerprint. Absent in results of versions before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// When the run started (RFC 3339, UTC).
    #[serde(default)]
    pub started_at: Option<String>,
    /// Target root as given on the command line.
    pub root: String,
    /// The spec file: `--config` as given, else `unguard.yaml` under the root.
    pub spec: String,
    /// How timeouts count (`--timeout-is`).
    pub timeout_policy: TimeoutPolicy,
    /// Number of workers (mutants run side by side).
    pub jobs: usize,
    /// True when the run was stopped (Ctrl-C, SIGTERM, SIGHUP) before every
    /// mutant ran.
    pub interrupted: bool,
    /// Seconds the whole run took.
    pub duration_s: f64,
    /// The baseline of every test command mutants ran under.
    pub baselines: Vec<BaselineResult>,
    /// The canary of every mutated file and test command, sorted by file.
    pub canaries: Vec<CanaryResult>,
    /// Every subset of the suite run on the unmutated copy (kill-first).
    #[serde(default)]
    pub subset_checks: Vec<SubsetCheck>,
    /// Per mutated file and test command with a coverage map: whether the
    /// map decided for the file's mutants, and why not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coverage_files: Vec<FileCoverage>,
    /// One row per mutation, in spec order.
    pub mutants: Vec<MutantResult>,
    /// Counts per outcome and the score.
    pub summary: Summary,
    /// The gate's verdict and exit code.
    pub gate: GateResult,
    /// The gate configuration the run was judged by.
    #[serde(default)]
    pub gate_config: GateConfig,
    /// The score's colouring thresholds.
    #[serde(default)]
    pub thresholds: Thresholds,
    /// Which mutants the run covers (filters, shard).
    #[serde(default)]
    pub selection: Selection,
    /// Original text of every mutated file, by path (lossy UTF-8), so a report
    /// can show the code without the tree.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
    /// The hash of every input a mutant lists (`mutants[].inputs`), as this
    /// run found it: what a later `--incremental` run compares against.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hashes: BTreeMap<String, String>,
}
