//! The results model: one value that every report renders from, written to
//! `outcomes.json` (`"schema": "unguard/1"`). Later versions may add fields,
//! never rename or remove these.

pub mod fingerprint;
pub mod merge;
pub mod row;
pub mod twins;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "unguard/1";

/// The verdict vocabulary of each row is the verdict rules' own.
pub use crate::outcome::kinds::{Outcome, ReasonKind};

/// Which way a mutation moves a control (seed 002 rule 5). Absent where it
/// does not apply (data-fidelity operators, most hand-written specs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// The mutant removes or widens the control: something refused is now
    /// accepted. A *negative* test ("this is refused") must kill it.
    Loosen,
    /// The mutant narrows the control by one accepted class (one list entry,
    /// one origin, the exact port, one token form), never everything: a
    /// *positive* twin ("this is accepted") must kill it.
    Tighten,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Loosen => "loosen",
            Direction::Tighten => "tighten",
        }
    }
    /// `loosen` or `tighten`, as written in a spec or the catalog.
    pub fn named(s: &str) -> Option<Direction> {
        match s {
            "loosen" => Some(Direction::Loosen),
            "tighten" => Some(Direction::Tighten),
            _ => None,
        }
    }
}

/// How undetected tightening mutants count (`gate.twins`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TwinsPolicy {
    /// Like any other survivor: against `max_survived` and the score (the default).
    #[default]
    Count,
    /// Listed as findings (a control whose positive twin is missing), left
    /// out of the score and the gate.
    Report,
}

impl TwinsPolicy {
    fn is_count(&self) -> bool {
        *self == TwinsPolicy::Count
    }
}

/// How timeouts count (`--timeout-is`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TimeoutPolicy {
    /// Detected (counts toward the score); listed separately; exit unaffected.
    Killed,
    /// Not detected: fails the gate (exit 2).
    Survived,
    /// Any timeout makes the run exit 3.
    Error,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct MutantResult {
    pub id: String,
    pub control: String,
    #[serde(default)]
    pub rule: Option<String>,
    /// `loosen` (a negative test must kill it) or `tighten` (a positive twin
    /// must kill it); absent where the spec declares no direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    pub file: String,
    /// The site's line: the first line the mutation changes (1-based), i.e.
    /// the line of the first byte that differs between the original file and
    /// the mutant. A multi-line `find` whose first lines are unchanged (a
    /// comment, context) is at the line it changes, not where it matches.
    /// Every report shows this line. 0 when the mutation never applied.
    pub line: usize,
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
    pub duration_s: f64,
    /// Why this verdict, in one or two sentences.
    pub detail: String,
    /// Which verdict rule decided it, as a stable name (`suite-green`,
    /// `killed-by-expected`, `load-error`, …; see docs/reports.md). Absent
    /// in files written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<ReasonKind>,
    #[serde(default)]
    pub killed_by: Vec<String>,
    /// How the test command ended (e.g. `exit code 1`).
    #[serde(default)]
    pub exit: Option<String>,
    /// File names inside the output dir.
    #[serde(default)]
    pub diff_file: Option<String>,
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
    pub duration_s: f64,
    /// Its log, inside the output dir.
    pub log_file: String,
}

/// A subset of the suite run once on the unmutated copy: only a subset that
/// was green there may kill a mutant.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct SubsetCheck {
    pub command: String,
    pub tests: Vec<String>,
    pub green: bool,
    /// Why it cannot be used, when it is not green.
    pub detail: String,
    pub duration_s: f64,
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
        }
    }

    /// Whether the gate skips this mutant: allowed, and its outcome is one an
    /// allow can excuse (an allow never hides a spec error).
    pub fn is_allowed(&self) -> bool {
        self.allowed.is_some()
            && matches!(
                self.outcome,
                Outcome::Survived | Outcome::WrongReason | Outcome::Timeout | Outcome::Flaky
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
                Outcome::Survived | Outcome::WrongReason | Outcome::Flaky
            )
    }
}

/// A position in a source file; line and column are 1-based, columns count characters.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
pub struct Location {
    pub start: Position,
    pub end: Position,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct BaselineResult {
    pub command: String,
    pub duration_s: f64,
    #[serde(default)]
    pub tests_total: Option<usize>,
    /// The timeout mutants of this command run under.
    pub timeout_s: f64,
    pub log_file: String,
    /// What unguard adds to the command's runs for its own convenience
    /// (e.g. `PYTEST_ADDOPTS=--junitxml=…`) that turned this baseline red
    /// while the command without it was green: left out of every run of
    /// this command from then on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct CanaryResult {
    pub file: String,
    pub command: String,
    /// True when emptying the file turned the suite red (or made it hang).
    pub reached: bool,
    /// JUnit ids of the tests that went red with the file emptied (when the
    /// suite writes a report): a mutant whose `killed_by` tests are not
    /// among them is `unreached`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub red_tests: Vec<String>,
    pub exit: String,
    pub duration_s: f64,
    pub log_file: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Summary {
    pub mutants: usize,
    pub killed: usize,
    pub survived: usize,
    pub timeout: usize,
    pub wrong_reason: usize,
    pub unreached: usize,
    pub unviable: usize,
    pub no_op: usize,
    pub ambiguous: usize,
    #[serde(default)]
    pub flaky: usize,
    #[serde(default)]
    pub internal_error: usize,
    /// Detected ÷ scored mutants, in percent; `None` when nothing was scored.
    pub score: Option<f64>,
    pub detected: usize,
    pub scored: usize,
    /// Survived / wrong-reason / timeout mutants excused by `gate.allow`; they
    /// are counted here instead of under their outcome.
    #[serde(default)]
    pub allowed: usize,
    /// Undetected tightening mutants under `gate.twins: report`: findings
    /// counted here instead of under their outcome, out of score and gate.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub twins_reported: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Summary {
    /// Score = killed (+ timeouts under `--timeout-is killed`) ÷ mutants that ran
    /// a verdict (killed, survived, timeout, wrong-reason, flaky). Unviable mutants are
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
            ..Summary::default()
        };
        s.scored = s.killed + s.survived + s.timeout + s.wrong_reason + s.flaky;
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
        let noun = if self.mutants == 1 {
            "mutant"
        } else {
            "mutants"
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
    pub passed: bool,
    pub exit_code: i32,
    /// Why the gate failed (or why the exit code is not 0), one sentence each.
    pub reasons: Vec<String>,
    /// Remarks that do not fail the gate (e.g. a stale `allow` entry).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// The gate's configuration (`gate:` in unguard.yaml, overridden by flags).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct GateConfig {
    /// Minimum score in percent; `None`: no score requirement.
    #[serde(default)]
    pub min_score: Option<f64>,
    /// Undetected mutants (survived + wrong-reason + flaky + timeouts under
    /// `timeout_is: survived`) the gate tolerates. Default 0.
    #[serde(default)]
    pub max_survived: usize,
    /// Mutants excused from score and gate, each with a written reason.
    #[serde(default)]
    pub allow: Vec<Allow>,
    /// `gate.twins`: how undetected tightening mutants count (`count`, the
    /// default, or `report`).
    #[serde(default, skip_serializing_if = "TwinsPolicy::is_count")]
    pub twins: TwinsPolicy,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Allow {
    pub id: String,
    pub reason: String,
}

/// Stryker-style colouring thresholds for the score, in percent.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Thresholds {
    /// At or above: good (green).
    pub high: f64,
    /// Below: bad (red); in between: warning.
    pub low: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            high: 80.0,
            low: 60.0,
        }
    }
}

impl Thresholds {
    /// `high`, `medium` or `low` for a score; `none` without one.
    pub fn level(&self, score: Option<f64>) -> &'static str {
        match score {
            None => "none",
            Some(s) if s >= self.high => "high",
            Some(s) if s >= self.low => "medium",
            Some(_) => "low",
        }
    }
}

/// One shard of a run split over machines: shard `k` of `n`, 1-based.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// Which mutants this run covers.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Selection {
    /// Ids selected by the filters, in spec order, before sharding: what an
    /// unsharded run with the same filters covers.
    pub planned: Vec<String>,
    /// Set when this run is one shard; `unguard merge` joins the shards.
    #[serde(default)]
    pub shard: Option<Shard>,
    /// The filters as given (`--only a`, `--in-diff main`, …).
    #[serde(default)]
    pub filters: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Results {
    /// Always `unguard/1` for this version of the model.
    pub schema: String,
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
    pub spec: String,
    pub timeout_policy: TimeoutPolicy,
    pub jobs: usize,
    pub interrupted: bool,
    pub duration_s: f64,
    pub baselines: Vec<BaselineResult>,
    pub canaries: Vec<CanaryResult>,
    /// Every subset of the suite run on the unmutated copy (kill-first).
    #[serde(default)]
    pub subset_checks: Vec<SubsetCheck>,
    pub mutants: Vec<MutantResult>,
    pub summary: Summary,
    pub gate: GateResult,
    #[serde(default)]
    pub gate_config: GateConfig,
    #[serde(default)]
    pub thresholds: Thresholds,
    #[serde(default)]
    pub selection: Selection,
    /// Original text of every mutated file, by path (lossy UTF-8), so a report
    /// can show the code without the tree.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
}
