//! Incremental runs (`--incremental FILE`): the verdicts of an earlier
//! run's `outcomes.json` that nothing could have changed are reused, and
//! only the other mutants run. Every run records what a later one needs
//! ([`record`]): each reusable verdict's fingerprint and inputs, and the
//! hash of every input (see [`crate::results::inputs`]).
//!
//! A verdict is reused only when it is `survived` or `no-coverage`, the
//! earlier run was made by this version of unguard, the mutant's
//! fingerprint (the mutation, its file's bytes, the settings that decide
//! verdicts) is the same, and every input it lists hashes today as it did
//! then. Anything else runs. A `killed` is never reused: it is proven
//! again, its earlier red tests run first on the mutant
//! ([`crate::outcome::SubsetStage::EarlierKill`]), and a kill counts only
//! when they go red again (checked green on the unmutated copy, and
//! confirmed, as every kill by a subset); else the mutant runs as new.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::{Ctx, EngineOptions};
use crate::error::{Error, Result};
use crate::outdir;
use crate::plan::{Entry, Plan};
use crate::results::fingerprint::Fingerprint;
use crate::results::inputs::{self, Hasher};
use crate::results::{MutantResult, Outcome, Results, Reused, SCHEMA};
use crate::spec::Spec;
use crate::workspace::Manifest;

/// An earlier run's results, read for `--incremental`.
#[derive(Debug)]
pub struct Earlier {
    /// The file as given.
    pub file: String,
    /// Its canonical path, when it has one (left out of the tree's hash).
    path: Option<std::path::PathBuf>,
    results: Results,
}

/// Read the `outcomes.json` at `path` for `--incremental`: a usage error
/// naming the file when it cannot be read or is not unguard's results.
pub fn read(path: &Path) -> Result<Earlier> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::Usage(format!(
            "--incremental {shown}: cannot read it ({e}); pass the outcomes.json of an earlier `unguard run`, or leave the flag out to run every mutant"
        ))
    })?;
    let results: Results = serde_json::from_str(&text).map_err(|e| {
        Error::Usage(format!(
            "--incremental {shown}: not an outcomes.json of unguard ({e}); pass the outcomes.json of an earlier `unguard run`"
        ))
    })?;
    if results.schema != SCHEMA {
        return Err(Error::Usage(format!(
            "--incremental {shown}: schema `{}`, this unguard reads `{SCHEMA}`",
            results.schema
        )));
    }
    Ok(Earlier {
        file: shown,
        path: path.canonicalize().ok(),
        results,
    })
}

/// What a run reuses, and what it needs to record its own verdicts.
pub(super) struct Reuse {
    /// Reused rows, by their index in the plan as built.
    rows: BTreeMap<usize, MutantResult>,
    /// For each entry of the plan that runs, its index in the plan as built.
    kept: Vec<usize>,
    /// Today's hash of every input a reused row lists.
    hashes: BTreeMap<String, String>,
    /// The digest of the run's verdict-deciding settings.
    settings: String,
    /// The copy's files, as hashed.
    files: Vec<String>,
    /// Per mutant id: the red tests of its kill in the earlier run, run
    /// first to prove it again.
    earlier_kills: HashMap<String, Vec<String>>,
}

impl Reuse {
    /// The red tests of mutant `id`'s kill in the earlier run, if it was
    /// killed there.
    pub(super) fn earlier_kill(&self, id: &str) -> Option<&[String]> {
        self.earlier_kills.get(id).map(Vec::as_slice)
    }

    /// Put the reused rows among `ran` (keyed by their index in the plan
    /// that ran), in the order of the plan as built.
    pub(super) fn join(&self, ran: BTreeMap<usize, MutantResult>) -> BTreeMap<usize, MutantResult> {
        let mut all: BTreeMap<usize, MutantResult> = ran
            .into_iter()
            .map(|(i, r)| (self.kept.get(i).copied().unwrap_or(i), r))
            .collect();
        all.extend(self.rows.iter().map(|(i, r)| (*i, r.clone())));
        all
    }
}

/// The settings of a run that decide verdicts besides the mutants' own:
/// the spec's top-level `test` block and linked dirs, and the flags that
/// change what runs (canary, kill-first, coverage, re-checks, timeout,
/// isolation, network isolation, `--cold`).
fn settings(spec: &Spec, opts: &EngineOptions) -> String {
    let mut f = Fingerprint::new("settings");
    f.field("test", format!("{:?}", spec.test).as_bytes())
        .field("link", format!("{:?}", spec.link).as_bytes())
        .field("no_canary", &[u8::from(opts.no_canary)])
        .field("full", &[u8::from(opts.full)])
        .field("coverage", &[u8::from(opts.coverage)])
        .field("timeout", format!("{:?}", opts.timeout).as_bytes())
        .field("recheck_survivors", &opts.recheck_survivors.to_le_bytes())
        .field("recheck_kills", &opts.recheck_kills.to_le_bytes())
        .field("isolation", format!("{:?}", opts.isolation).as_bytes())
        .field("network", format!("{:?}", opts.network).as_bytes())
        .field("cold", &[u8::from(opts.cold)]);
    f.finish()
}

/// Why mutant `m` runs again, or `None`: its earlier verdict is reused.
fn rerun_reason(
    earlier: Option<&MutantResult>,
    fingerprint: Option<&str>,
    hashes: &BTreeMap<String, String>,
    hasher: &mut Hasher,
) -> Option<String> {
    let Some(row) = earlier else {
        return Some("not in the earlier run".into());
    };
    if row.outcome == Outcome::Killed {
        return Some(if row.red_tests.is_empty() {
            "a kill is never reused: it runs again".into()
        } else {
            "a kill is never reused: its earlier red tests run first and must go red again".into()
        });
    }
    if !matches!(row.outcome, Outcome::Survived | Outcome::NoCoverage) {
        return Some(format!("`{}` is never reused", row.outcome.as_str()));
    }
    if row.fingerprint.is_none() || row.inputs.is_empty() {
        return Some("the earlier run recorded no inputs for it".into());
    }
    if row.fingerprint.as_deref() != fingerprint {
        return Some(
            "the mutation, its file or the run's settings (test command, flags) changed".into(),
        );
    }
    for input in &row.inputs {
        if hashes.get(input) != Some(&hasher.hash(input)) {
            return Some(format!("{input} changed"));
        }
    }
    None
}

/// The fingerprint of ready mutant `m` of `plan` in this run.
fn fingerprint_of(
    spec: &Spec,
    plan: &Plan,
    settings: &str,
    m: &crate::plan::Mutant,
) -> Option<String> {
    let mspec = spec.mutations.iter().find(|s| s.id == m.id)?;
    let original = plan.originals.get(&m.file)?;
    Some(inputs::of_mutant(settings, mspec, original))
}

/// Split `plan` into the verdicts `opts.incremental` lets this run reuse
/// and the plan of the mutants that run; says what it reuses and why the
/// others run. Without `--incremental` every mutant runs.
pub(super) fn split(
    spec: &Spec,
    plan: Plan,
    manifest: &Manifest,
    opts: &EngineOptions,
) -> (Plan, Reuse) {
    let settings = settings(spec, opts);
    let earlier = opts.incremental.as_deref();
    let skip = earlier
        .and_then(|e| e.path.as_ref())
        .and_then(|p| p.strip_prefix(&manifest.root).ok())
        .map(|p| p.to_string_lossy().replace('\\', "/"));
    let files: Vec<String> = manifest
        .entries
        .iter()
        .filter(|f| Some(f.as_str()) != skip.as_deref())
        .cloned()
        .collect();
    let mut reuse = Reuse {
        rows: BTreeMap::new(),
        kept: (0..plan.entries.len()).collect(),
        hashes: BTreeMap::new(),
        settings,
        files,
        earlier_kills: HashMap::new(),
    };
    let Some(earlier) = earlier else {
        return (plan, reuse);
    };
    let version = env!("CARGO_PKG_VERSION");
    let r = &earlier.results;
    if r.unguard_version != version {
        eprintln!(
            "incremental: {} was written by unguard {}, this is {version}: every mutant runs",
            earlier.file, r.unguard_version
        );
        return (plan, reuse);
    }
    let by_id: HashMap<&str, &MutantResult> =
        r.mutants.iter().map(|m| (m.id.as_str(), m)).collect();
    let mut hasher = Hasher::new(&manifest.root, reuse.files.clone());
    let from = Reused {
        file: earlier.file.clone(),
        fingerprint: r.fingerprint.clone(),
        started_at: r.started_at.clone(),
    };
    let mut reruns: Vec<(String, String)> = Vec::new();
    let mut kept = Vec::new();
    let mut entries = Vec::new();
    for (i, e) in plan.entries.iter().enumerate() {
        let Entry::Ready(m) = e else {
            kept.push(i);
            entries.push(e.clone());
            continue;
        };
        let fp = fingerprint_of(spec, &plan, &reuse.settings, m);
        let row = by_id.get(m.id.as_str()).copied();
        if let Some(r) = row.filter(|r| r.outcome == Outcome::Killed && !r.red_tests.is_empty()) {
            reuse
                .earlier_kills
                .insert(m.id.clone(), r.red_tests.clone());
        }
        match rerun_reason(row, fp.as_deref(), &r.hashes, &mut hasher) {
            Some(why) => {
                reruns.push((m.id.clone(), why));
                kept.push(i);
                entries.push(e.clone());
            }
            None => {
                let Some(row) = row else { continue };
                for input in &row.inputs {
                    reuse.hashes.insert(input.clone(), hasher.hash(input));
                }
                let command = plan.tests[m.test].command.display();
                let mut r = crate::results::row::reused_result(m, command, row, from.clone());
                r.diff_file = Some(outdir::diff_name(&m.id));
                reuse.rows.insert(i, r);
            }
        }
    }
    say(earlier, reuse.rows.len(), &reruns);
    reuse.kept = kept;
    let plan = Plan { entries, ..plan };
    (plan, reuse)
}

/// One line for what is reused, one per mutant that runs again (at most
/// ten, then how many more).
fn say(earlier: &Earlier, reused: usize, reruns: &[(String, String)]) {
    let when = earlier
        .results
        .started_at
        .as_deref()
        .map(|s| format!(" (run of {s})"))
        .unwrap_or_default();
    eprintln!(
        "incremental: {reused} verdict(s) reused from {}{when}; {} mutant(s) run",
        earlier.file,
        reruns.len()
    );
    const SHOWN: usize = 10;
    for (id, why) in reruns.iter().take(SHOWN) {
        eprintln!("  runs again: {id}: {why}");
    }
    if reruns.len() > SHOWN {
        eprintln!("  … and {} more", reruns.len() - SHOWN);
    }
}

/// Record, in `mutants` (every row of the run) and the returned table,
/// what a later incremental run needs: each reusable verdict's fingerprint
/// and inputs, and the hash of every input, hashed in the run's pristine
/// copy (the tree as the mutants saw it). Reused rows keep theirs.
pub(super) fn record(
    spec: &Spec,
    ctx: &Ctx,
    reuse: &Reuse,
    mutants: &mut [MutantResult],
) -> BTreeMap<String, String> {
    let mut hashes = reuse.hashes.clone();
    let Some(pristine) = &ctx.pristine else {
        return hashes;
    };
    let mut hasher = Hasher::new(&pristine.tree, reuse.files.clone());
    let ready: HashMap<&str, &crate::plan::Mutant> =
        ctx.plan.ready().map(|m| (m.id.as_str(), m)).collect();
    for row in mutants.iter_mut().filter(|r| r.reused.is_none()) {
        let Some(m) = ready.get(row.id.as_str()) else {
            continue;
        };
        // A map blind anywhere (a process it did not see, a canary's red
        // test it did not credit) names no inputs: the whole tree is.
        let map = ctx
            .baselines
            .coverage(m.test)
            .filter(|_| ctx.coverage_trust.complete(&super::Pair::of(m)));
        let read = |f: &str| hasher.read(f);
        let found = inputs::of_verdict(row, map.as_deref(), &reuse.files, &read);
        if found.is_empty() {
            continue;
        }
        row.fingerprint = fingerprint_of(spec, &ctx.plan, &reuse.settings, m);
        if row.fingerprint.is_none() {
            continue;
        }
        for input in &found {
            hashes.insert(input.clone(), hasher.hash(input));
        }
        row.inputs = found;
    }
    hashes
}

/// Write the diff of every reused mutant into the output dir, as a run
/// of it would.
pub(super) fn write_diffs(out: &Path, reuse: &Reuse) -> Result<()> {
    for r in reuse.rows.values() {
        if let Some(diff) = &r.diff {
            let name = outdir::diff_name(&r.id);
            outdir::space::write(&out.join(&name), diff.as_bytes())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_reused_only_when_its_outcome_fingerprint_and_every_input_match() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        std::fs::write(dir.path().join("b.py"), "y = 1\n").unwrap();
        let files = vec!["a.py".to_string(), "b.py".to_string()];
        let mut hasher = Hasher::new(dir.path(), files);
        let mut row = MutantResult::new(
            "m",
            "c",
            "a.py",
            "u:1:1".into(),
            Outcome::Killed,
            "d".into(),
        );
        row.fingerprint = Some("sha256:f".into());
        row.inputs = vec!["a.py".into(), "b.py".into()];
        let mut hashes: BTreeMap<String, String> = row
            .inputs
            .iter()
            .map(|i| (i.clone(), hasher.hash(i)))
            .collect();
        let fp = Some("sha256:f");
        // A kill is never reused, however much matches.
        let kill = rerun_reason(Some(&row), fp, &hashes, &mut hasher);
        assert!(kill.unwrap().contains("never reused"));
        row.outcome = Outcome::Survived;
        assert_eq!(rerun_reason(Some(&row), fp, &hashes, &mut hasher), None);
        assert!(rerun_reason(None, fp, &hashes, &mut hasher).is_some());
        let other = rerun_reason(Some(&row), Some("sha256:g"), &hashes, &mut hasher);
        assert!(other.unwrap().contains("changed"));
        hashes.insert("b.py".into(), "sha256:old".into());
        assert_eq!(
            rerun_reason(Some(&row), fp, &hashes, &mut hasher).as_deref(),
            Some("b.py changed")
        );
        hashes.remove("b.py");
        assert!(rerun_reason(Some(&row), fp, &hashes, &mut hasher).is_some());
        let good: BTreeMap<String, String> = row
            .inputs
            .iter()
            .map(|i| (i.clone(), hasher.hash(i)))
            .collect();
        for o in [
            Outcome::Timeout,
            Outcome::Flaky,
            Outcome::WrongReason,
            Outcome::Unviable,
        ] {
            let r = MutantResult {
                outcome: o,
                ..row.clone()
            };
            assert!(
                rerun_reason(Some(&r), fp, &good, &mut hasher).is_some(),
                "{o:?}"
            );
        }
        for o in [Outcome::Survived, Outcome::NoCoverage] {
            let r = MutantResult {
                outcome: o,
                ..row.clone()
            };
            assert_eq!(
                rerun_reason(Some(&r), fp, &good, &mut hasher),
                None,
                "{o:?}"
            );
        }
        let bare = MutantResult {
            inputs: vec![],
            ..row.clone()
        };
        assert!(rerun_reason(Some(&bare), fp, &good, &mut hasher).is_some());
    }
}
