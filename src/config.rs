//! The configuration model: what `unguard.yaml`, the flags and the catalog set
//! (the gate, the score's thresholds, how timeouts and tightening mutants count,
//! the direction a mutation moves a control). A leaf: `spec` and `catalog` fill
//! it, `results` records it in `outcomes.json` (re-exported there), `gate` and the
//! reports read it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    /// `loosen` or `tighten`, as serialized in `outcomes.json`.
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

/// The gate's configuration (`gate:` in unguard.yaml, overridden by flags).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct GateConfig {
    /// Minimum score in percent; `None`: no score requirement.
    #[serde(default)]
    pub min_score: Option<f64>,
    /// Undetected mutants (survived + no-coverage + wrong-reason + flaky +
    /// timeouts under `timeout_is: survived`) the gate tolerates. Default 0.
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

/// One `gate.allow` entry: a mutant excused from score and gate.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Allow {
    /// The mutant's id.
    pub id: String,
    /// Why it is excused, as written in the spec.
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
