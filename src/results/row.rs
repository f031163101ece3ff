//! A mutant's row of the results model, built from its plan entry and its
//! verdict: the site, the spec position, the verdict's outcome, reason and
//! facts. The verdict rules themselves are [`crate::outcome`]'s.

use crate::outcome::{self, Verdict};
use crate::plan::{Mutant, Rejected};
use crate::results::{Direction, Location, MutantResult, Position, Reused};
use crate::spec::SpecPos;

fn spec_pos(p: &SpecPos) -> String {
    format!("{}:{}:{}", p.path, p.line, p.col)
}

/// Put verdict `v` into row `r`: its outcome, reason (kind and sentence)
/// and the facts of its run.
pub fn with_verdict(mut r: MutantResult, v: Verdict) -> MutantResult {
    r.outcome = v.outcome;
    r.detail = v.detail();
    r.reason = Some(v.reason.kind());
    r.red_tests = v.red_tests;
    r.tests_total = v.tests_total;
    r.red_counted = v.red_counted;
    r.tests_ran = v.tests_ran;
    r
}

/// The result row of a ready mutant `m` run under `command`, with verdict
/// `v` (a tightening mutant's survivor says no positive twin proves it).
pub fn mutant_result(m: &Mutant, command: String, v: Verdict) -> MutantResult {
    let v = match m.direction {
        Some(Direction::Tighten) => outcome::tightening(v),
        _ => v,
    };
    let mut r = with_verdict(
        MutantResult::new(
            &m.id,
            &m.control,
            &m.file,
            spec_pos(&m.pos),
            v.outcome,
            String::new(),
        ),
        v,
    );
    with_site(&mut r, m, command);
    r
}

/// Put ready mutant `m`'s site facts (run under `command`) into row `r`:
/// rule, direction, line and location, expected killers, replacement,
/// sites, command and diff.
fn with_site(r: &mut MutantResult, m: &Mutant, command: String) {
    r.rule = m.rule.clone();
    r.direction = m.direction;
    r.line = m.line;
    r.killed_by = m.killed_by.clone();
    r.location = Some(Location {
        start: Position {
            line: m.line,
            column: m.col,
        },
        end: Position {
            line: m.end_line,
            column: m.end_col,
        },
    });
    r.replacement = Some(m.replacement.clone());
    r.sites = m.sites;
    r.command = Some(command);
    r.diff = Some(m.diff.clone());
}

/// The result row of a mutation that never applied.
pub fn rejected_result(r: &Rejected) -> MutantResult {
    let v = outcome::rejected(&r.problem);
    let mut out = with_verdict(
        MutantResult::new(
            &r.id,
            &r.control,
            &r.file,
            spec_pos(&r.pos),
            v.outcome,
            String::new(),
        ),
        v,
    );
    out.rule = r.rule.clone();
    out.direction = r.direction;
    out
}

/// The row of ready mutant `m` (run under `command`) whose verdict is
/// `earlier`'s, reused from an earlier run that read it from `from`: the
/// verdict and its facts are the earlier row's, the site and spec position
/// today's; nothing of this run's (time, logs, subset runs) is in it.
pub fn reused_result(
    m: &Mutant,
    command: String,
    earlier: &MutantResult,
    from: Reused,
) -> MutantResult {
    let mut r = earlier.clone();
    r.control = m.control.clone();
    r.file = m.file.clone();
    r.spec_pos = spec_pos(&m.pos);
    with_site(&mut r, m, command);
    r.duration_s = 0.0;
    r.log_file = None;
    r.subset_runs = Vec::new();
    r.reset_paths = 0;
    r.allowed = None;
    r.twin_reported = false;
    // A verdict reused before names the run that decided it.
    r.reused = Some(match &earlier.reused {
        Some(origin) => Reused {
            file: from.file,
            ..origin.clone()
        },
        None => from,
    });
    r
}
