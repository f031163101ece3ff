//! The merge gate: from the results to one exit code, with its reasons.
//!
//! When several codes apply, the most serious wins, in the order of
//! [`ExitCode`]: 130 interrupted · 1 invalid input or internal error ·
//! 4 baseline red · 5 spec errors (no-op, ambiguous, unreached) · 2 gate
//! failed · 3 timeout under `--timeout-is error` · 0.
//!
//! `unguard audit` judges in [`ExitCode::AUDIT_ORDER`] ([`audit`]): 130 · 1 ·
//! 4 · 2 gate failed · 6 nothing proven · 5 mutants in files no test loads ·
//! 7 expected control absent · 3 · 0.

use crate::error::{ExitCode, FlagError, Result};
use crate::results::{
    Allow, Direction, GateConfig, GateResult, MutantResult, Outcome, Summary, TimeoutPolicy,
    TwinsPolicy,
};

/// The gate of a run: `gate:` from unguard.yaml, overridden and extended by
/// the flags. `known` are the spec's mutation ids: an `--allow` must name one.
pub fn with_flags(
    mut gate: GateConfig,
    min_score: Option<f64>,
    max_survived: Option<usize>,
    allow: &[(String, String)],
    known: &[&str],
    spec_path: &std::path::Path,
) -> Result<GateConfig> {
    if let Some(min) = min_score {
        gate.min_score = Some(min);
    }
    if let Some(max) = max_survived {
        gate.max_survived = max;
    }
    for (id, reason) in allow {
        if !known.contains(&id.as_str()) {
            return Err(FlagError::NoSuchMutation {
                flag: "--allow",
                id: id.clone(),
                spec: spec_path.to_path_buf(),
            }
            .into());
        }
        gate.allow.retain(|a| &a.id != id);
        gate.allow.push(Allow {
            id: id.clone(),
            reason: reason.clone(),
        });
    }
    Ok(gate)
}

/// Mark allowed mutants, compute the summary and evaluate the gate: the one
/// place a run and `unguard merge` both get their verdict from.
pub fn judge(
    mutants: &mut [MutantResult],
    config: &GateConfig,
    policy: TimeoutPolicy,
    interrupted: bool,
) -> (Summary, GateResult) {
    let mut notes = Vec::new();
    for m in mutants.iter_mut() {
        m.allowed = config
            .allow
            .iter()
            .find(|a| a.id == m.id)
            .map(|a| a.reason.clone());
        if m.allowed.is_some() && !m.is_allowed() {
            notes.push(match m.outcome {
                Outcome::Killed => format!(
                    "`gate.allow` lists {}, but it was killed: remove the allow entry",
                    m.id
                ),
                other => format!(
                    "`gate.allow` lists {}, but an allow cannot excuse `{}`",
                    m.id,
                    other.as_str()
                ),
            });
        }
    }
    let report_twins = config.twins == TwinsPolicy::Report;
    for m in mutants.iter_mut() {
        m.twin_reported = report_twins && m.direction == Some(Direction::Tighten);
        if m.is_twin_reported() {
            notes.push(format!(
                "{} ({}): a tightening mutant {} — no positive twin proves the accepted class it drops; a finding, not gated (`gate.twins: report`)",
                m.id,
                m.control,
                m.outcome.as_str()
            ));
        }
        m.twin_reported = m.is_twin_reported();
    }
    let summary = Summary::compute(mutants, policy);
    let mut gate = evaluate(&summary, config, policy, interrupted);
    gate.notes = notes;
    (summary, gate)
}

/// What the undetected mutants are, by kind, for the gate's reason.
fn undetected_parts(summary: &Summary, timeouts_undetected: usize) -> Vec<String> {
    let mut parts = Vec::new();
    if summary.survived > 0 {
        parts.push(format!(
            "{} survived (a control whose removal turns nothing red)",
            summary.survived
        ));
    }
    if summary.no_coverage > 0 {
        parts.push(format!(
            "{} no-coverage (no test executes the mutated lines)",
            summary.no_coverage
        ));
    }
    if summary.wrong_reason > 0 {
        parts.push(format!(
            "{} red for the wrong reason (not proof)",
            summary.wrong_reason
        ));
    }
    if summary.flaky > 0 {
        parts.push(format!(
            "{} flaky (survived, then red on a re-check)",
            summary.flaky
        ));
    }
    if timeouts_undetected > 0 {
        parts.push(format!(
            "{timeouts_undetected} timed out, counted as survived (--timeout-is survived)"
        ));
    }
    parts
}

/// The gate's verdict on a summary: every reason that applies and the most
/// serious exit code (interrupted, internal error, stale spec, gate failed,
/// timeout under `--timeout-is error`, in that order).
pub fn evaluate(
    summary: &Summary,
    config: &GateConfig,
    policy: TimeoutPolicy,
    interrupted: bool,
) -> GateResult {
    let mut reasons = Vec::new();
    let plural = |n: usize, w: &str| format!("{n} {w}");
    let spec_errors = summary.no_op + summary.ambiguous;
    if spec_errors > 0 {
        reasons.push(format!(
            "{} that never applied (spec is stale)",
            plural(spec_errors, "mutation(s)")
        ));
    }
    if summary.unreached > 0 {
        reasons.push(format!(
            "{} in files the suite does not reach (canary stayed green)",
            plural(summary.unreached, "mutant(s)")
        ));
    }
    // Undetected mutants, compared against `max_survived`.
    let timeouts_undetected = if policy == TimeoutPolicy::Survived {
        summary.timeout
    } else {
        0
    };
    let undetected = summary.survived
        + summary.no_coverage
        + summary.wrong_reason
        + summary.flaky
        + timeouts_undetected;
    let mut gate_failed = false;
    if undetected > config.max_survived {
        gate_failed = true;
        let parts = undetected_parts(summary, timeouts_undetected);
        reasons.push(format!(
            "{undetected} undetected mutant(s) where max_survived allows {}: {}",
            config.max_survived,
            parts.join(", ")
        ));
    }
    if let (Some(min), Some(score)) = (config.min_score, summary.score) {
        if score < min {
            gate_failed = true;
            reasons.push(format!(
                "score {score:.1}% is below min_score {min}% ({}/{} detected)",
                summary.detected, summary.scored
            ));
        }
    }
    let timeout_error = summary.timeout > 0 && policy == TimeoutPolicy::Error;
    if timeout_error {
        reasons.push(format!(
            "{} timed out (--timeout-is error)",
            plural(summary.timeout, "mutant(s)")
        ));
    }
    if summary.internal_error > 0 {
        reasons.insert(
            0,
            format!(
                "{} hit an internal error of unguard (a bug: please report it with the log)",
                plural(summary.internal_error, "mutant(s)")
            ),
        );
    }
    if interrupted {
        reasons.insert(0, "interrupted before all mutants ran".into());
    }
    // Every code that applies; the most serious wins.
    let exit = [
        (interrupted, ExitCode::Interrupted),
        (summary.internal_error > 0, ExitCode::Failure),
        (
            spec_errors > 0 || summary.unreached > 0,
            ExitCode::SpecStale,
        ),
        (gate_failed, ExitCode::GateFailed),
        (timeout_error, ExitCode::Timeout),
    ]
    .into_iter()
    .filter(|(applies, _)| *applies)
    .fold(ExitCode::Ok, |worst, (_, code)| worst.worst(code));
    GateResult {
        passed: exit == ExitCode::Ok,
        exit_code: exit.code(),
        reasons,
        notes: Vec::new(),
    }
}

/// What `audit` knows beyond the mutants' verdicts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFindings {
    /// Expected controls with no site, each `id (why it is expected)`; only
    /// controls whose transport the server serves.
    pub expected_absent: Vec<String>,
}

/// The gate of an audit (no `gate:` config: every undetected mutant
/// fails), in [`ExitCode::AUDIT_ORDER`]: a run that proved nothing (no site,
/// or no mutant with a verdict) fails with 6 instead of passing; survivors
/// fail with 2 even beside mutants in files no test loads (5, reported
/// apart); an absent expected control fails with 7.
pub fn audit(
    summary: &Summary,
    policy: TimeoutPolicy,
    interrupted: bool,
    findings: &AuditFindings,
) -> GateResult {
    let reached = Summary {
        unreached: 0,
        ..summary.clone()
    };
    let mut gate = evaluate(&reached, &GateConfig::default(), policy, interrupted);
    let base = ExitCode::from_code(gate.exit_code).unwrap_or(ExitCode::Failure);
    let verdicts = summary.killed
        + summary.survived
        + summary.no_coverage
        + summary.wrong_reason
        + summary.flaky
        + summary.timeout
        + summary.allowed;
    let nothing_proven = verdicts == 0 && !interrupted;
    if nothing_proven {
        gate.reasons.push(if summary.mutants == 0 {
            "nothing proven: the catalog found no site to mutate, so no test ran against a control"
                .to_string()
        } else {
            format!(
                "nothing proven: none of the {} mutant(s) reached a verdict ({} in files no test loads, {} unviable)",
                summary.mutants, summary.unreached, summary.unviable
            )
        });
    }
    if summary.unreached > 0 {
        gate.reasons.push(format!(
            "{} mutant(s) in files no test loads (listed apart: the canary emptied each file and the suite stayed green)",
            summary.unreached
        ));
    }
    for absent in &findings.expected_absent {
        gate.reasons
            .push(format!("expected control absent: {absent}"));
    }
    let exit = [
        (true, base),
        (nothing_proven, ExitCode::NothingProven),
        (summary.unreached > 0, ExitCode::SpecStale),
        (
            !findings.expected_absent.is_empty(),
            ExitCode::ExpectedAbsent,
        ),
    ]
    .into_iter()
    .filter(|(applies, _)| *applies)
    .fold(ExitCode::Ok, |worst, (_, code)| worst.worst_in_audit(code));
    gate.passed = exit == ExitCode::Ok;
    gate.exit_code = exit.code();
    gate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn s(f: impl Fn(&mut Summary)) -> Summary {
        let mut s = Summary::default();
        f(&mut s);
        s
    }

    #[test]
    fn order_of_exit_codes() {
        let d = GateConfig::default();
        let all = s(|s| {
            s.no_op = 1;
            s.survived = 1;
            s.timeout = 1
        });
        assert_eq!(
            evaluate(&all, &d, TimeoutPolicy::Error, true).exit_code,
            130
        );
        assert_eq!(evaluate(&all, &d, TimeoutPolicy::Error, false).exit_code, 5);
        let g = s(|s| {
            s.survived = 1;
            s.timeout = 1
        });
        assert_eq!(evaluate(&g, &d, TimeoutPolicy::Error, false).exit_code, 2);
        let t = s(|s| s.timeout = 1);
        assert_eq!(evaluate(&t, &d, TimeoutPolicy::Error, false).exit_code, 3);
        assert_eq!(
            evaluate(&t, &d, TimeoutPolicy::Survived, false).exit_code,
            2
        );
        assert_eq!(evaluate(&t, &d, TimeoutPolicy::Killed, false).exit_code, 0);
        let w = s(|s| s.wrong_reason = 1);
        assert_eq!(evaluate(&w, &d, TimeoutPolicy::Killed, false).exit_code, 2);
        let u = s(|s| s.unreached = 2);
        assert_eq!(evaluate(&u, &d, TimeoutPolicy::Killed, false).exit_code, 5);
        let ok = s(|s| {
            s.killed = 3;
            s.unviable = 1
        });
        let r = evaluate(&ok, &d, TimeoutPolicy::Killed, false);
        assert!(r.passed && r.exit_code == 0 && r.reasons.is_empty());
    }

    #[test]
    fn max_survived_and_min_score() {
        let one = s(|s| {
            s.killed = 3;
            s.survived = 1;
            s.scored = 4;
            s.detected = 3;
            s.score = Some(75.0);
        });
        let tolerant = GateConfig {
            max_survived: 1,
            ..GateConfig::default()
        };
        assert_eq!(
            evaluate(&one, &tolerant, TimeoutPolicy::Killed, false).exit_code,
            0
        );
        let strict = GateConfig {
            max_survived: 1,
            min_score: Some(80.0),
            ..GateConfig::default()
        };
        let r = evaluate(&one, &strict, TimeoutPolicy::Killed, false);
        assert_eq!(r.exit_code, 2);
        assert!(r.reasons[0].contains("below min_score 80%"), "{r:?}");
        // Wrong-reason and survived-policy timeouts count against max_survived.
        let mixed = s(|s| {
            s.survived = 1;
            s.wrong_reason = 1;
            s.timeout = 1
        });
        let two = GateConfig {
            max_survived: 2,
            ..GateConfig::default()
        };
        assert_eq!(
            evaluate(&mixed, &two, TimeoutPolicy::Killed, false).exit_code,
            0
        );
        assert_eq!(
            evaluate(&mixed, &two, TimeoutPolicy::Survived, false).exit_code,
            2
        );
    }

    #[test]
    fn audit_order_nothing_proven_survivors_unreached_absent() {
        let p = TimeoutPolicy::Killed;
        let none = AuditFindings::default();
        let absent = AuditFindings {
            expected_absent: vec!["transport-security-passed (HTTP served)".into()],
        };
        // No site at all: nothing proven (6), not "passed".
        let empty = Summary::default();
        let g = audit(&empty, p, false, &none);
        assert_eq!((g.exit_code, g.passed), (6, false));
        assert!(g.reasons[0].starts_with("nothing proven"), "{g:?}");
        assert_eq!(audit(&empty, p, false, &absent).exit_code, 6);
        // Only unreached mutants: nothing proven, the files listed as a reason.
        let unreached = s(|s| {
            s.mutants = 2;
            s.unreached = 2
        });
        let g = audit(&unreached, p, false, &none);
        assert_eq!(g.exit_code, 6);
        assert!(g.reasons.iter().any(|r| r.contains("files no test loads")));
        // Survivors beside unreached files: 2, not 5.
        let both = s(|s| {
            s.mutants = 3;
            s.survived = 1;
            s.unreached = 2
        });
        assert_eq!(audit(&both, p, false, &none).exit_code, 2);
        assert_eq!(
            evaluate(&both, &GateConfig::default(), p, false).exit_code,
            5
        );
        // Killed beside unreached: 5; beside an absent expected control: 7.
        let killed_unreached = s(|s| {
            s.mutants = 2;
            s.killed = 1;
            s.unreached = 1
        });
        assert_eq!(audit(&killed_unreached, p, false, &absent).exit_code, 5);
        let killed = s(|s| {
            s.mutants = 1;
            s.killed = 1
        });
        let g = audit(&killed, p, false, &absent);
        assert_eq!((g.exit_code, g.passed), (7, false));
        assert!(g
            .reasons
            .iter()
            .any(|r| r.starts_with("expected control absent: transport-security-passed")));
        let g = audit(&killed, p, false, &none);
        assert_eq!((g.exit_code, g.passed), (0, true));
        // Interrupted and baseline-level codes still win.
        assert_eq!(audit(&empty, p, true, &absent).exit_code, 130);
        let survived_absent = s(|s| {
            s.mutants = 1;
            s.survived = 1
        });
        assert_eq!(audit(&survived_absent, p, false, &absent).exit_code, 2);
        // Across a portfolio's repos: survivors in one outrank another that proved nothing.
        assert_eq!(
            ExitCode::NothingProven.worst_in_audit(ExitCode::GateFailed),
            ExitCode::GateFailed
        );
    }

    fn mutant(id: &str, outcome: Outcome) -> MutantResult {
        serde_json::from_value(serde_json::json!({
            "id": id, "control": "c", "file": "f.py", "line": 1, "outcome": outcome,
            "red_tests": [], "duration_s": 0.0, "detail": "", "spec_pos": "u.yaml:1:1"
        }))
        .unwrap()
    }

    #[test]
    fn allow_excuses_findings_only_and_flags_stale_entries() {
        let mut ms = vec![
            mutant("k", Outcome::Killed),
            mutant("s", Outcome::Survived),
            mutant("w", Outcome::WrongReason),
            mutant("n", Outcome::NoOp),
        ];
        let allow = |ids: &[&str]| GateConfig {
            allow: ids
                .iter()
                .map(|id| crate::results::Allow {
                    id: id.to_string(),
                    reason: "because".into(),
                })
                .collect(),
            ..GateConfig::default()
        };
        let (sum, gate) = judge(&mut ms, &allow(&["s", "w"]), TimeoutPolicy::Killed, false);
        assert_eq!((sum.allowed, sum.survived, sum.wrong_reason), (2, 0, 0));
        assert_eq!((sum.scored, sum.score), (1, Some(100.0)));
        assert_eq!(ms[1].allowed.as_deref(), Some("because"));
        // The no-op still fails with exit 5; an allow cannot hide it.
        assert_eq!(gate.exit_code, ExitCode::SpecStale.code());
        let (sum, gate) = judge(&mut ms, &allow(&["k", "n"]), TimeoutPolicy::Killed, false);
        assert_eq!((sum.allowed, sum.killed, sum.no_op), (0, 1, 1));
        assert_eq!(gate.exit_code, ExitCode::SpecStale.code());
        assert_eq!(gate.notes.len(), 2, "{:?}", gate.notes);
        assert!(gate.notes[0].contains("lists k, but it was killed"));
        assert!(gate.notes[1].contains("cannot excuse `no-op`"));
        // Re-judging clears allows that are no longer configured.
        let (sum, _) = judge(
            &mut ms,
            &GateConfig::default(),
            TimeoutPolicy::Killed,
            false,
        );
        assert_eq!((sum.allowed, sum.survived), (0, 1));
        assert!(ms.iter().all(|m| m.allowed.is_none()));
    }

    #[test]
    fn no_coverage_counts_like_a_survivor() {
        let mut ms = vec![
            mutant("k", Outcome::Killed),
            mutant("c", Outcome::NoCoverage),
        ];
        let d = GateConfig::default();
        let (sum, gate) = judge(&mut ms, &d, TimeoutPolicy::Killed, false);
        // In the score's denominator, not detected; fails the gate with 2.
        assert_eq!((sum.no_coverage, sum.survived), (1, 0));
        assert_eq!((sum.detected, sum.scored, sum.score), (1, 2, Some(50.0)));
        assert_eq!((gate.exit_code, gate.passed), (2, false));
        assert!(
            gate.reasons[0].contains("1 undetected mutant(s) where max_survived allows 0: 1 no-coverage (no test executes the mutated lines)"),
            "{gate:?}"
        );
        assert!(sum.line().contains("1 no-coverage"), "{}", sum.line());
        // `max_survived` tolerates it like a survivor.
        let one = GateConfig {
            max_survived: 1,
            ..GateConfig::default()
        };
        assert_eq!(
            judge(&mut ms, &one, TimeoutPolicy::Killed, false)
                .1
                .exit_code,
            0
        );
        // `gate.allow` excuses it like a survivor: out of score and gate.
        let allowed = GateConfig {
            allow: vec![Allow {
                id: "c".into(),
                reason: "covered by the e2e suite".into(),
            }],
            ..GateConfig::default()
        };
        let (sum, gate) = judge(&mut ms, &allowed, TimeoutPolicy::Killed, false);
        assert_eq!((sum.allowed, sum.no_coverage, sum.scored), (1, 0, 1));
        assert!(gate.passed && gate.notes.is_empty(), "{gate:?}");
        // `gate.twins: report` lifts a tightening one out, like a survivor.
        ms[1].direction = Some(Direction::Tighten);
        let report = GateConfig {
            twins: TwinsPolicy::Report,
            ..GateConfig::default()
        };
        let (sum, gate) = judge(&mut ms, &report, TimeoutPolicy::Killed, false);
        assert_eq!(
            (sum.twins_reported, sum.no_coverage, gate.exit_code),
            (1, 0, 0)
        );
        // An audit whose only mutant has no coverage proved nothing, but
        // fails as a finding (2), not as "nothing proven" (6).
        let only = s(|s| {
            s.mutants = 1;
            s.no_coverage = 1
        });
        let g = audit(
            &only,
            TimeoutPolicy::Killed,
            false,
            &AuditFindings::default(),
        );
        assert_eq!(g.exit_code, 2, "{g:?}");
        assert!(
            !g.reasons.iter().any(|r| r.starts_with("nothing proven")),
            "{g:?}"
        );
    }

    #[test]
    fn gate_twins_report_excuses_tightening_survivors_only() {
        let with = |id: &str, o: Outcome, d: Direction| MutantResult {
            direction: Some(d),
            ..mutant(id, o)
        };
        let mut ms = vec![
            with("k", Outcome::Killed, Direction::Loosen),
            with("t", Outcome::Survived, Direction::Tighten),
            with("w", Outcome::WrongReason, Direction::Tighten),
        ];
        let report = GateConfig {
            twins: TwinsPolicy::Report,
            ..GateConfig::default()
        };
        let (sum, gate) = judge(&mut ms, &report, TimeoutPolicy::Killed, false);
        assert_eq!(
            (sum.twins_reported, sum.survived, sum.wrong_reason),
            (2, 0, 0)
        );
        assert_eq!((gate.exit_code, sum.score), (0, Some(100.0)));
        assert_eq!(gate.notes.len(), 2, "{:?}", gate.notes);
        // By default they count like any survivor.
        let (sum, gate) = judge(
            &mut ms,
            &GateConfig::default(),
            TimeoutPolicy::Killed,
            false,
        );
        assert_eq!(
            (sum.twins_reported, sum.survived, gate.exit_code),
            (0, 1, 2)
        );
        assert!(ms.iter().all(|m| !m.twin_reported));
        // A loosening survivor is never excused by `report`.
        ms.push(with("l", Outcome::Survived, Direction::Loosen));
        let (sum, gate) = judge(&mut ms, &report, TimeoutPolicy::Killed, false);
        assert_eq!(
            (sum.twins_reported, sum.survived, gate.exit_code),
            (2, 1, 2)
        );
    }

    #[test]
    fn flags_override_and_extend_the_spec_gate() {
        let spec = GateConfig {
            min_score: Some(50.0),
            max_survived: 3,
            allow: vec![Allow {
                id: "a".into(),
                reason: "old".into(),
            }],
            twins: TwinsPolicy::Count,
        };
        let p = std::path::Path::new("u.yaml");
        let g = with_flags(
            spec.clone(),
            Some(90.0),
            Some(0),
            &[("a".into(), "new".into())],
            &["a"],
            p,
        )
        .unwrap();
        assert_eq!((g.min_score, g.max_survived), (Some(90.0), 0));
        assert_eq!(g.allow.len(), 1);
        assert_eq!(g.allow[0].reason, "new");
        let kept = with_flags(spec.clone(), None, None, &[], &["a"], p).unwrap();
        assert_eq!(kept, spec);
        let e = with_flags(spec, None, None, &[("zz".into(), "r".into())], &["a"], p).unwrap_err();
        assert_eq!(e.exit_code(), ExitCode::Failure);
        assert!(
            matches!(&e, Error::Flag(FlagError::NoSuchMutation { flag: "--allow", id, .. }) if id == "zz"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "--allow zz: no mutation with that id in u.yaml (see `unguard list`)"
        );
    }
}
