//! Both directions of a control (seed 002 rule 5): a negative test proves a
//! control refuses, its positive twin proves the control does not refuse
//! everything. A loosening mutant (`direction: loosen`) is killed by the
//! negative test, a tightening mutant (`direction: tighten`, one accepted
//! class dropped) by the positive twin. This module folds the mutants of one
//! control into "negative proven" and "positive proven", for the PR comment,
//! the HTML report, the audit's grouped report and the portfolio matrix.

use serde::Serialize;

use crate::results::{Direction, MutantResult, Outcome};

/// How one direction of a control fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Proof {
    /// A mutant of this direction survived (or no test executes it, or it
    /// was red for the wrong reason, or flaky): the test of this direction
    /// is missing.
    Unproven,
    /// The suite hung with a mutant of this direction.
    Hung,
    /// Mutants exist but none reached a verdict (unreached, unviable, spec error).
    NoVerdict,
    /// Every mutant of this direction was killed.
    Proven,
    /// No mutant of this direction: nothing says either way.
    None,
}

impl Proof {
    /// The proof of one direction from its mutants' outcomes.
    pub fn of(outcomes: &[Outcome]) -> Proof {
        let any = |os: &[Outcome]| outcomes.iter().any(|o| os.contains(o));
        if outcomes.is_empty() {
            Proof::None
        } else if any(&[
            Outcome::Survived,
            Outcome::NoCoverage,
            Outcome::WrongReason,
            Outcome::Flaky,
        ]) {
            Proof::Unproven
        } else if any(&[Outcome::Timeout]) {
            Proof::Hung
        } else if outcomes.iter().all(|o| *o == Outcome::Killed) {
            Proof::Proven
        } else {
            Proof::NoVerdict
        }
    }

    /// The word alone (`unproven`, `proven`, `no mutant`, …), for plain text.
    pub fn as_str(self) -> &'static str {
        match self {
            Proof::Unproven => "unproven",
            Proof::Hung => "hung",
            Proof::NoVerdict => "no verdict",
            Proof::Proven => "proven",
            Proof::None => "no mutant",
        }
    }

    /// Icon and word, for a table cell.
    pub fn cell(self) -> &'static str {
        match self {
            Proof::Unproven => "❌ unproven",
            Proof::Hung => "⏱️ hung",
            Proof::NoVerdict => "⚠️ no verdict",
            Proof::Proven => "✅ proven",
            Proof::None => "— no mutant",
        }
    }

    /// The icon alone, for a dense cell (the portfolio matrix).
    pub fn icon(self) -> &'static str {
        match self {
            Proof::Unproven => "❌",
            Proof::Hung => "⏱️",
            Proof::NoVerdict => "⚠️",
            Proof::Proven => "✅",
            Proof::None => "—",
        }
    }
}

/// One control with both directions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ControlTwins {
    /// The control's text, as the spec states it.
    pub control: String,
    /// Loosening mutants: proven when a negative test killed every one.
    pub negative: Proof,
    /// Tightening mutants: proven when a positive twin killed every one.
    pub positive: Proof,
    /// Ids of the loosening mutants, in spec order.
    pub loosen: Vec<String>,
    /// Ids of the tightening mutants, in spec order.
    pub tighten: Vec<String>,
}

/// Per control (its `control` text, in order of first appearance), both
/// directions; only controls with at least one mutant that declares a
/// direction.
pub fn by_control(mutants: &[MutantResult]) -> Vec<ControlTwins> {
    let mut order: Vec<&str> = Vec::new();
    for m in mutants.iter().filter(|m| m.direction.is_some()) {
        if !order.contains(&m.control.as_str()) {
            order.push(&m.control);
        }
    }
    order
        .into_iter()
        .map(|control| {
            let side = |d: Direction| -> Vec<&MutantResult> {
                mutants
                    .iter()
                    .filter(|m| m.control == control && m.direction == Some(d))
                    .collect()
            };
            let (loosen, tighten) = (side(Direction::Loosen), side(Direction::Tighten));
            let outcomes = |ms: &[&MutantResult]| ms.iter().map(|m| m.outcome).collect::<Vec<_>>();
            let ids = |ms: &[&MutantResult]| ms.iter().map(|m| m.id.clone()).collect::<Vec<_>>();
            ControlTwins {
                control: control.to_string(),
                negative: Proof::of(&outcomes(&loosen)),
                positive: Proof::of(&outcomes(&tighten)),
                loosen: ids(&loosen),
                tighten: ids(&tighten),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(id: &str, control: &str, d: Option<Direction>, o: Outcome) -> MutantResult {
        let mut r = MutantResult::new(id, control, "f.py", "u.yaml:1:1".into(), o, String::new());
        r.direction = d;
        r
    }

    #[test]
    fn both_directions_per_control() {
        use Direction::*;
        let ms = vec![
            m("a", "hosts", Some(Loosen), Outcome::Killed),
            m("b", "hosts", Some(Tighten), Outcome::Survived),
            m("c", "fidelity", None, Outcome::Survived),
            m("d", "origins", Some(Tighten), Outcome::Killed),
            m("e", "hosts", Some(Tighten), Outcome::Killed),
        ];
        let t = by_control(&ms);
        assert_eq!(t.len(), 2, "{t:?}");
        assert_eq!(
            (t[0].control.as_str(), t[0].negative, t[0].positive),
            ("hosts", Proof::Proven, Proof::Unproven)
        );
        assert_eq!(t[0].tighten, ["b", "e"]);
        assert_eq!(
            (t[1].control.as_str(), t[1].negative, t[1].positive),
            ("origins", Proof::None, Proof::Proven)
        );
        assert_eq!(Proof::of(&[Outcome::Killed, Outcome::Timeout]), Proof::Hung);
        assert_eq!(Proof::of(&[Outcome::NoOp]), Proof::NoVerdict);
    }

    #[test]
    fn a_direction_no_test_executes_is_unproven_like_a_survivor() {
        use Direction::*;
        let ms = vec![
            m("a", "hosts", Some(Loosen), Outcome::NoCoverage),
            m("b", "hosts", Some(Tighten), Outcome::Killed),
            m("c", "hosts", Some(Tighten), Outcome::NoCoverage),
            m("d", "hosts", Some(Tighten), Outcome::Timeout),
        ];
        let t = by_control(&ms);
        assert_eq!(
            (t[0].negative, t[0].positive),
            (Proof::Unproven, Proof::Unproven),
            "{t:?}"
        );
        // Like a survivor, it outranks a hang beside it.
        assert_eq!(
            Proof::of(&[Outcome::Timeout, Outcome::NoCoverage]),
            Proof::Unproven
        );
    }
}
