//! The results model: one value that every report renders from, written to
//! `outcomes.json` (`"schema": "unguard/1"`). Later versions may add fields,
//! never rename or remove these.

use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "unguard/1";

/// The verdict for one mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The suite went red (for the expected reason, when one is declared).
    Killed,
    /// The suite stayed green with the control removed: a finding.
    Survived,
    /// The suite hung and was killed: a result, not noise.
    Timeout,
    /// Red, but not because of the expected tests (collection error, coverage gate,
    /// usage error, …): not proof.
    WrongReason,
    /// Emptying the file did not turn the suite red: the suite does not run this copy.
    Unreached,
    /// The mutant failed `test.check` (does not build): proves nothing.
    Unviable,
    /// The mutation changed nothing (spec error).
    NoOp,
    /// The pattern matched a different number of times than `count` (spec error).
    Ambiguous,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Killed => "killed",
            Outcome::Survived => "survived",
            Outcome::Timeout => "timeout",
            Outcome::WrongReason => "wrong-reason",
            Outcome::Unreached => "unreached",
            Outcome::Unviable => "unviable",
            Outcome::NoOp => "no-op",
            Outcome::Ambiguous => "ambiguous",
        }
    }
}

/// How timeouts count (`--timeout-is`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum TimeoutPolicy {
    /// Detected (counts toward the score); listed separately; exit unaffected.
    Killed,
    /// Not detected: fails the gate (exit 2).
    Survived,
    /// Any timeout makes the run exit 3.
    Error,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MutantResult {
    pub id: String,
    pub control: String,
    #[serde(default)]
    pub rule: Option<String>,
    pub file: String,
    /// 1-based line of the (first) mutated site; 0 when the mutation never applied.
    pub line: usize,
    pub outcome: Outcome,
    /// JUnit ids (`classname::name`) of the tests that failed or errored.
    pub red_tests: Vec<String>,
    /// Number of tests in the run's JUnit report, when there is one.
    #[serde(default)]
    pub tests_total: Option<usize>,
    pub duration_s: f64,
    /// Why this verdict, in one or two sentences.
    pub detail: String,
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
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BaselineResult {
    pub command: String,
    pub duration_s: f64,
    #[serde(default)]
    pub tests_total: Option<usize>,
    /// The timeout mutants of this command run under.
    pub timeout_s: f64,
    pub log_file: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CanaryResult {
    pub file: String,
    pub command: String,
    /// True when emptying the file turned the suite red (or made it hang).
    pub reached: bool,
    pub exit: String,
    pub duration_s: f64,
    pub log_file: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
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
    /// Detected ÷ scored mutants, in percent; `None` when nothing was scored.
    pub score: Option<f64>,
    pub detected: usize,
    pub scored: usize,
}

impl Summary {
    /// Score = killed (+ timeouts under `--timeout-is killed`) ÷ mutants that ran
    /// a verdict (killed, survived, timeout, wrong-reason). Unviable mutants are
    /// left out like cargo-mutants does; no-op, ambiguous and unreached never
    /// ran and are spec/setup errors with their own exit code.
    pub fn compute(mutants: &[MutantResult], policy: TimeoutPolicy) -> Summary {
        let count = |o: Outcome| mutants.iter().filter(|m| m.outcome == o).count();
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
            ..Summary::default()
        };
        s.scored = s.killed + s.survived + s.timeout + s.wrong_reason;
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
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GateResult {
    pub passed: bool,
    pub exit_code: i32,
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Results {
    pub schema: String,
    pub unguard_version: String,
    /// Target root as given on the command line.
    pub root: String,
    pub spec: String,
    pub timeout_policy: TimeoutPolicy,
    pub jobs: usize,
    pub interrupted: bool,
    pub duration_s: f64,
    pub baselines: Vec<BaselineResult>,
    pub canaries: Vec<CanaryResult>,
    pub mutants: Vec<MutantResult>,
    pub summary: Summary,
    pub gate: GateResult,
}
