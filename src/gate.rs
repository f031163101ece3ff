//! The merge gate: from the results to one exit code, with its reasons.
//!
//! When several codes apply, the first in this order wins:
//! 130 interrupted · 1 invalid input · 4 baseline red · 5 spec errors
//! (no-op, ambiguous, unreached) · 2 gate failed · 3 timeout under
//! `--timeout-is error` · 0.

use crate::results::{GateResult, Summary, TimeoutPolicy};

pub const EXIT_OK: i32 = 0;
pub const EXIT_USAGE: i32 = 1;
pub const EXIT_GATE: i32 = 2;
pub const EXIT_TIMEOUT: i32 = 3;
pub const EXIT_BASELINE: i32 = 4;
pub const EXIT_SPEC: i32 = 5;
pub const EXIT_INTERRUPTED: i32 = 130;

pub fn evaluate(summary: &Summary, policy: TimeoutPolicy, interrupted: bool) -> GateResult {
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
    let mut gate_failed = false;
    if summary.survived > 0 {
        gate_failed = true;
        reasons.push(format!(
            "{} survived: a control whose removal turns nothing red",
            plural(summary.survived, "mutant(s)")
        ));
    }
    if summary.wrong_reason > 0 {
        gate_failed = true;
        reasons.push(format!(
            "{} red for the wrong reason: not proof",
            plural(summary.wrong_reason, "mutant(s)")
        ));
    }
    if summary.timeout > 0 && policy == TimeoutPolicy::Survived {
        gate_failed = true;
        reasons.push(format!(
            "{} timed out, counted as survived (--timeout-is survived)",
            plural(summary.timeout, "mutant(s)")
        ));
    }
    let timeout_error = summary.timeout > 0 && policy == TimeoutPolicy::Error;
    if timeout_error {
        reasons.push(format!(
            "{} timed out (--timeout-is error)",
            plural(summary.timeout, "mutant(s)")
        ));
    }
    if interrupted {
        reasons.insert(0, "interrupted before all mutants ran".into());
    }
    let exit_code = if interrupted {
        EXIT_INTERRUPTED
    } else if spec_errors > 0 || summary.unreached > 0 {
        EXIT_SPEC
    } else if gate_failed {
        EXIT_GATE
    } else if timeout_error {
        EXIT_TIMEOUT
    } else {
        EXIT_OK
    };
    GateResult {
        passed: exit_code == EXIT_OK,
        exit_code,
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(f: impl Fn(&mut Summary)) -> Summary {
        let mut s = Summary::default();
        f(&mut s);
        s
    }

    #[test]
    fn order_of_exit_codes() {
        let all = s(|s| {
            s.no_op = 1;
            s.survived = 1;
            s.timeout = 1
        });
        assert_eq!(evaluate(&all, TimeoutPolicy::Error, true).exit_code, 130);
        assert_eq!(evaluate(&all, TimeoutPolicy::Error, false).exit_code, 5);
        let g = s(|s| {
            s.survived = 1;
            s.timeout = 1
        });
        assert_eq!(evaluate(&g, TimeoutPolicy::Error, false).exit_code, 2);
        let t = s(|s| s.timeout = 1);
        assert_eq!(evaluate(&t, TimeoutPolicy::Error, false).exit_code, 3);
        assert_eq!(evaluate(&t, TimeoutPolicy::Survived, false).exit_code, 2);
        assert_eq!(evaluate(&t, TimeoutPolicy::Killed, false).exit_code, 0);
        let w = s(|s| s.wrong_reason = 1);
        assert_eq!(evaluate(&w, TimeoutPolicy::Killed, false).exit_code, 2);
        let u = s(|s| s.unreached = 2);
        assert_eq!(evaluate(&u, TimeoutPolicy::Killed, false).exit_code, 5);
        let ok = s(|s| {
            s.killed = 3;
            s.unviable = 1
        });
        let r = evaluate(&ok, TimeoutPolicy::Killed, false);
        assert!(r.passed && r.exit_code == 0 && r.reasons.is_empty());
    }
}
