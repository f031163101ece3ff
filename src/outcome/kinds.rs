//! The verdict vocabulary, as `outcomes.json` spells it: the [`Outcome`] of
//! a mutant, the [`ReasonKind`] behind it, and the [`SubsetStage`] a
//! kill-first run took its tests from. Plain names only; the prose of a
//! reason is [`super::reason`]'s.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The verdict for one mutation.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The suite went red (for the expected reason, when one is declared).
    Killed,
    /// The suite stayed green with the control removed: a finding.
    Survived,
    /// No test executes the mutated lines (per-test coverage run): nothing
    /// ran; a finding like survived.
    NoCoverage,
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
    /// Survived, then went red on a re-check (`--recheck-survivors`): the
    /// suite is flaky here, so the verdict is no proof either way. Never
    /// counted as killed.
    Flaky,
    /// unguard itself failed on this mutant (a bug: please report it); the
    /// run went on with the others.
    InternalError,
}

impl Outcome {
    /// The outcome's name as `outcomes.json` and the reports spell it
    /// (`killed`, `wrong-reason`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Killed => "killed",
            Outcome::Survived => "survived",
            Outcome::NoCoverage => "no-coverage",
            Outcome::Timeout => "timeout",
            Outcome::WrongReason => "wrong-reason",
            Outcome::Unreached => "unreached",
            Outcome::Unviable => "unviable",
            Outcome::NoOp => "no-op",
            Outcome::Ambiguous => "ambiguous",
            Outcome::Flaky => "flaky",
            Outcome::InternalError => "internal-error",
        }
    }
}

/// Why a mutant got its outcome: one kind per verdict rule, stable names
/// for tools that read `outcomes.json` (the prose is `detail`). A kill or
/// hang decided by a subset of the tests (kill-first), or a hang confirmed
/// by a second run, keeps the kind of the run that decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReasonKind {
    /// killed: an expected killer (`expect.killed_by`) failed.
    KilledByExpected,
    /// killed: tests failed (no expected killers declared); a per-test
    /// report or the runner's summary line counts them.
    TestsFailed,
    /// killed: the suite exited with a test-failure code, and no report or
    /// summary line counts its tests.
    SuiteFailed,
    /// survived: the suite stayed green with the control removed.
    SuiteGreen,
    /// survived: a tightening mutant stayed green: no positive twin proves
    /// the dropped class is still accepted.
    NoPositiveTwin,
    /// no-coverage: the per-test coverage run shows no test executing the
    /// mutated lines, so the suite was not run.
    NoTestExecutes,
    /// timeout: the suite was still running at the mutant's timeout.
    Hang,
    /// wrong-reason: interrupted before the suite finished.
    Interrupted,
    /// wrong-reason: the test command could not start.
    CouldNotRun,
    /// wrong-reason: the test command died from a signal, or exited with a
    /// shell's 128+N for one: a crash.
    Crash,
    /// wrong-reason: an exit code that is no test failure under the spec's
    /// preset (or `fail_codes`).
    ExitCodeNotTestFailure,
    /// wrong-reason: red, but no JUnit report was written.
    NoJunitReport,
    /// wrong-reason: a test module failed to load or collect, and no test
    /// failed beside it.
    LoadError,
    /// wrong-reason: red, but the report (or the runner's summary line)
    /// shows no failed test (a coverage gate, a plugin).
    NoFailedTest,
    /// wrong-reason: tests failed, but none of the expected killers.
    OtherTestsFailed,
    /// flaky: survived, then a re-check went another way.
    SurvivorNotReproduced,
    /// flaky: killed, then a re-check was not red for the right reason.
    KillNotReproduced,
    /// flaky: timed out, then its confirmation run did not hang.
    HangNotReproduced,
    /// unreached: emptying the file left the suite green.
    CanaryGreen,
    /// unreached: emptying the file turned the suite red, but the expected
    /// killers stayed green or did not run.
    KillersNotReached,
    /// unviable: the mutant fails `test.check`.
    CheckFailed,
    /// no-op: the mutation was written, but the file on disk did not change.
    UnchangedOnDisk,
    /// no-op: the pattern matched nothing.
    NoMatch,
    /// no-op: the replacement equals the text it replaces.
    IdenticalReplacement,
    /// no-op: the file cannot be mutated as text.
    BinaryFile,
    /// no-op: a multi-line `replace` cannot be fitted to the indentation of
    /// the text it replaces.
    Misindented,
    /// ambiguous: the pattern matched another number of times than `count`.
    CountMismatch,
    /// internal-error: unguard failed on this mutant.
    InternalError,
}

impl ReasonKind {
    /// Every kind, in declaration order.
    pub const ALL: [ReasonKind; 28] = [
        ReasonKind::KilledByExpected,
        ReasonKind::TestsFailed,
        ReasonKind::SuiteFailed,
        ReasonKind::SuiteGreen,
        ReasonKind::NoPositiveTwin,
        ReasonKind::NoTestExecutes,
        ReasonKind::Hang,
        ReasonKind::Interrupted,
        ReasonKind::CouldNotRun,
        ReasonKind::Crash,
        ReasonKind::ExitCodeNotTestFailure,
        ReasonKind::NoJunitReport,
        ReasonKind::LoadError,
        ReasonKind::NoFailedTest,
        ReasonKind::OtherTestsFailed,
        ReasonKind::SurvivorNotReproduced,
        ReasonKind::KillNotReproduced,
        ReasonKind::HangNotReproduced,
        ReasonKind::CanaryGreen,
        ReasonKind::KillersNotReached,
        ReasonKind::CheckFailed,
        ReasonKind::UnchangedOnDisk,
        ReasonKind::NoMatch,
        ReasonKind::IdenticalReplacement,
        ReasonKind::BinaryFile,
        ReasonKind::Misindented,
        ReasonKind::CountMismatch,
        ReasonKind::InternalError,
    ];

    /// The kind's name in `outcomes.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonKind::KilledByExpected => "killed-by-expected",
            ReasonKind::TestsFailed => "tests-failed",
            ReasonKind::SuiteFailed => "suite-failed",
            ReasonKind::SuiteGreen => "suite-green",
            ReasonKind::NoPositiveTwin => "no-positive-twin",
            ReasonKind::NoTestExecutes => "no-test-executes",
            ReasonKind::Hang => "hang",
            ReasonKind::Interrupted => "interrupted",
            ReasonKind::CouldNotRun => "could-not-run",
            ReasonKind::Crash => "crash",
            ReasonKind::ExitCodeNotTestFailure => "exit-code-not-test-failure",
            ReasonKind::NoJunitReport => "no-junit-report",
            ReasonKind::LoadError => "load-error",
            ReasonKind::NoFailedTest => "no-failed-test",
            ReasonKind::OtherTestsFailed => "other-tests-failed",
            ReasonKind::SurvivorNotReproduced => "survivor-not-reproduced",
            ReasonKind::KillNotReproduced => "kill-not-reproduced",
            ReasonKind::HangNotReproduced => "hang-not-reproduced",
            ReasonKind::CanaryGreen => "canary-green",
            ReasonKind::KillersNotReached => "killers-not-reached",
            ReasonKind::CheckFailed => "check-failed",
            ReasonKind::UnchangedOnDisk => "unchanged-on-disk",
            ReasonKind::NoMatch => "no-match",
            ReasonKind::IdenticalReplacement => "identical-replacement",
            ReasonKind::BinaryFile => "binary-file",
            ReasonKind::Misindented => "misindented",
            ReasonKind::CountMismatch => "count-mismatch",
            ReasonKind::InternalError => "internal-error",
        }
    }

    /// The outcome every reason of this kind gives.
    pub fn outcome(self) -> Outcome {
        use ReasonKind as K;
        match self {
            K::KilledByExpected | K::TestsFailed | K::SuiteFailed => Outcome::Killed,
            K::SuiteGreen | K::NoPositiveTwin => Outcome::Survived,
            K::NoTestExecutes => Outcome::NoCoverage,
            K::Hang => Outcome::Timeout,
            K::Interrupted
            | K::CouldNotRun
            | K::Crash
            | K::ExitCodeNotTestFailure
            | K::NoJunitReport
            | K::LoadError
            | K::NoFailedTest
            | K::OtherTestsFailed => Outcome::WrongReason,
            K::SurvivorNotReproduced | K::KillNotReproduced | K::HangNotReproduced => {
                Outcome::Flaky
            }
            K::CanaryGreen | K::KillersNotReached => Outcome::Unreached,
            K::CheckFailed => Outcome::Unviable,
            K::UnchangedOnDisk
            | K::NoMatch
            | K::IdenticalReplacement
            | K::BinaryFile
            | K::Misindented => Outcome::NoOp,
            K::CountMismatch => Outcome::Ambiguous,
            K::InternalError => Outcome::InternalError,
        }
    }
}

impl fmt::Display for ReasonKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the tests of a kill-first run come from (see
/// `engine::kill_first`), named as `subset_runs[].stage` in `outcomes.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubsetStage {
    /// `expect.killed_by`.
    ExpectedKillers,
    /// The tests that execute the mutated lines (per-test coverage).
    Covering,
    /// Red under the file's canary, named after the file.
    CanaryNear,
    /// The other tests red under the file's canary.
    Canary,
    /// The tests that killed other mutants of the file.
    Siblings,
    /// The red tests of the mutant's kill in the earlier run of
    /// `--incremental`: a kill is never reused, it is proven again.
    EarlierKill,
    /// A kill's red tests run alone to confirm it (never a stage of its own
    /// in `subset_runs`).
    RedTests,
}

impl SubsetStage {
    /// The stage's name in `outcomes.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            SubsetStage::ExpectedKillers => "expected-killers",
            SubsetStage::Covering => "covering",
            SubsetStage::CanaryNear => "canary-near",
            SubsetStage::Canary => "canary",
            SubsetStage::Siblings => "siblings",
            SubsetStage::EarlierKill => "earlier-kill",
            SubsetStage::RedTests => "red-tests",
        }
    }

    /// Where its tests come from, in words: the end of a sentence about a
    /// kill by this stage.
    pub fn source(self) -> &'static str {
        match self {
            SubsetStage::ExpectedKillers => "its expected killers",
            SubsetStage::Covering => "the tests that execute its lines",
            SubsetStage::Canary => "the tests its file's canary turned red",
            SubsetStage::CanaryNear => {
                "the tests its file's canary turned red that are named after it"
            }
            SubsetStage::Siblings => "the tests that killed other mutants of its file",
            SubsetStage::EarlierKill => "the tests that killed it in the earlier run",
            SubsetStage::RedTests => "the tests that turned it red",
        }
    }
}

impl fmt::Display for SubsetStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_kinds_serialise_as_their_names() {
        let mut seen = std::collections::HashSet::new();
        for k in ReasonKind::ALL {
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                serde_json::Value::String(k.as_str().into())
            );
            assert!(seen.insert(k.as_str()), "{k} twice");
            let back: ReasonKind = serde_json::from_str(&format!("\"{k}\"")).unwrap();
            assert_eq!(back, k);
        }
    }

    #[test]
    fn no_coverage_is_spelled_alike_in_json_and_reports() {
        let o = Outcome::NoCoverage;
        assert_eq!(serde_json::to_value(o).unwrap(), "no-coverage");
        assert_eq!(o.as_str(), "no-coverage");
        let back: Outcome = serde_json::from_str("\"no-coverage\"").unwrap();
        assert_eq!(back, o);
        assert_eq!(ReasonKind::NoTestExecutes.outcome(), o);
    }
}
