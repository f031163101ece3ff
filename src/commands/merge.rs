//! `unguard merge`: join the output dirs of `run --shard k/n` into the
//! results of one unsharded run (same mutants in the same order, same
//! summary and gate; only durations and timestamps differ). Beside the other
//! commands (it reads `results`, renders with `report`, judges with `gate`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::error::{Context, Error, Result};
use crate::gate;
use crate::report::read_outcomes;
use crate::results::{BaselineResult, CanaryResult, MutantResult, Results, Selection};

/// Files of a shard dir that are rendered anew for the merged dir.
const RENDERED: [&str; 4] = ["outcomes.json", "report.md", "report.html", ".unguard-out"];

/// A shard's output dir and the results read from it.
type ShardResults = (PathBuf, Results);

/// Read every shard's outcomes.json and join them.
pub fn merge(dirs: &[PathBuf]) -> Result<Results> {
    let shards = read_shards(dirs)?;
    check_split(&shards)?;
    let first = &shards[0].1;

    // Mutants in the order an unsharded run lists them.
    let order: HashMap<&str, usize> = first
        .selection
        .planned
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let mut mutants = ordered_mutants(&shards, &order)?;
    let interrupted = shards.iter().any(|(_, r)| r.interrupted);
    if !interrupted {
        check_complete(&mutants, order.len())?;
    }
    let (baselines, canaries, sources) = shared_records(&shards);

    let (summary, gate) = gate::judge(
        &mut mutants,
        &first.gate_config,
        first.timeout_policy,
        interrupted,
    );
    Ok(Results {
        schema: first.schema.clone(),
        unguard_version: env!("CARGO_PKG_VERSION").into(),
        fingerprint: first.fingerprint.clone(),
        started_at: shards
            .iter()
            .filter_map(|(_, r)| r.started_at.clone())
            .min(),
        root: first.root.clone(),
        spec: first.spec.clone(),
        timeout_policy: first.timeout_policy,
        jobs: shards.iter().map(|(_, r)| r.jobs).max().unwrap_or(1),
        interrupted,
        // Shards run side by side: the wall time is the longest shard's.
        duration_s: shards.iter().map(|(_, r)| r.duration_s).fold(0.0, f64::max),
        baselines,
        canaries,
        subset_checks: shards
            .iter()
            .flat_map(|(_, r)| r.subset_checks.iter().cloned())
            .collect(),
        coverage_files: shards
            .iter()
            .flat_map(|(_, r)| r.coverage_files.iter().cloned())
            .collect(),
        mutants,
        summary,
        gate,
        gate_config: first.gate_config.clone(),
        thresholds: first.thresholds,
        selection: Selection {
            planned: first.selection.planned.clone(),
            shard: None,
            filters: first.selection.filters.clone(),
        },
        sources,
        // Shards of one run hash one tree: the union of their tables.
        hashes: shards
            .iter()
            .flat_map(|(_, r)| r.hashes.iter().map(|(k, v)| (k.clone(), v.clone())))
            .collect(),
    })
}

/// Each dir's `outcomes.json`, in the order given.
fn read_shards(dirs: &[PathBuf]) -> Result<Vec<ShardResults>> {
    let mut shards = Vec::new();
    for d in dirs {
        // The reader's error names the file and what is wrong with it.
        let results = read_outcomes(d)?;
        shards.push((d.clone(), results));
    }
    Ok(shards)
}

/// The shards are the parts `1/n` … `n/n` of one split of one run, each
/// given once.
fn check_split(shards: &[ShardResults]) -> Result<()> {
    let (first_dir, first) = &shards[0];
    let Some(first_shard) = first.selection.shard else {
        return Err(Error::Usage(format!(
            "{}: not a shard (run with `--shard K/N`); nothing to merge",
            first_dir.display()
        )));
    };
    let n = first_shard.n;
    let mut seen: BTreeMap<usize, &Path> = BTreeMap::new();
    for (dir, r) in shards {
        let Some(s) = r.selection.shard else {
            return Err(Error::Usage(format!(
                "{}: not a shard (run with `--shard K/N`)",
                dir.display()
            )));
        };
        if s.n != n {
            return Err(Error::Usage(format!(
                "{}: shard {s} does not belong to a split into {n} (from {})",
                dir.display(),
                first_dir.display()
            )));
        }
        if let Some(other) = seen.insert(s.k, dir) {
            return Err(Error::Usage(format!(
                "shard {s} given twice: {} and {}",
                other.display(),
                dir.display()
            )));
        }
        check_same_run((first_dir, first), (dir, r))?;
    }
    let missing: Vec<String> = (1..=n)
        .filter(|k| !seen.contains_key(k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(Error::Usage(format!(
            "missing shard(s) {}: pass the output dir of every shard 1/{n} … {n}/{n}",
            missing.join(", ")
        )));
    }
    Ok(())
}

/// Two shards come from the same run: same fingerprint (spec content,
/// resolved test commands, unguard version), spec path, root, selection,
/// filters, timeout policy and gate.
fn check_same_run(
    (first_dir, first): (&Path, &Results),
    (dir, r): (&Path, &Results),
) -> Result<()> {
    let same = |what: &str, a: String, b: String| -> Result<()> {
        if a != b {
            return Err(Error::Usage(format!(
                "{} and {} come from different runs: their {what} differ ({a} vs {b})",
                first_dir.display(),
                dir.display()
            )));
        }
        Ok(())
    };
    let gate_json = |r: &Results| {
        serde_json::to_string(&r.gate_config).context("serializing the gate settings")
    };
    if first.fingerprint != r.fingerprint {
        let shown = |f: &Option<String>| match f {
            Some(f) => f.clone(),
            None => "none: made by an unguard before fingerprints".into(),
        };
        return Err(Error::Usage(format!(
            "{} and {} come from different runs: the spec's content, its resolved test commands or unguard's version differ (fingerprint {} vs {}); run every shard again from the same spec with the same unguard",
            first_dir.display(),
            dir.display(),
            shown(&first.fingerprint),
            shown(&r.fingerprint)
        )));
    }
    same("specs", first.spec.clone(), r.spec.clone())?;
    same("target roots", first.root.clone(), r.root.clone())?;
    same(
        "selected mutants",
        first.selection.planned.join(","),
        r.selection.planned.join(","),
    )?;
    same(
        "filters",
        first.selection.filters.join(" "),
        r.selection.filters.join(" "),
    )?;
    same(
        "timeout policies",
        format!("{:?}", first.timeout_policy),
        format!("{:?}", r.timeout_policy),
    )?;
    same("gate settings", gate_json(first)?, gate_json(r)?)
}

/// Every shard's mutants, each of the selection, in the selection's `order`.
fn ordered_mutants(
    shards: &[ShardResults],
    order: &HashMap<&str, usize>,
) -> Result<Vec<MutantResult>> {
    let mut mutants = Vec::new();
    for (dir, r) in shards {
        for m in &r.mutants {
            if !order.contains_key(m.id.as_str()) {
                return Err(Error::Usage(format!(
                    "{}: mutant {} is not in the shards' selection",
                    dir.display(),
                    m.id
                )));
            }
            mutants.push(m.clone());
        }
    }
    mutants.sort_by_key(|m| order[m.id.as_str()]);
    Ok(mutants)
}

/// An uninterrupted set of shards holds every selected mutant exactly once.
fn check_complete(mutants: &[MutantResult], selected: usize) -> Result<()> {
    let ids: BTreeSet<&str> = mutants.iter().map(|m| m.id.as_str()).collect();
    if ids.len() != mutants.len() {
        return Err(Error::Usage(
            "a mutant appears in more than one shard: the shards come from different runs".into(),
        ));
    }
    if ids.len() != selected {
        return Err(Error::Usage(format!(
            "the shards hold {} of {selected} selected mutants: a shard did not finish",
            ids.len(),
        )));
    }
    Ok(())
}

/// What every shard records for the whole run: baselines (one per
/// command), canaries (one per file and command, sorted) and the source
/// texts; the first shard wins.
fn shared_records(
    shards: &[ShardResults],
) -> (
    Vec<BaselineResult>,
    Vec<CanaryResult>,
    BTreeMap<String, String>,
) {
    let mut baselines: Vec<BaselineResult> = Vec::new();
    let mut canaries = Vec::new();
    let mut sources = BTreeMap::new();
    let mut seen_canaries = BTreeSet::new();
    for (_, r) in shards {
        for b in &r.baselines {
            if !baselines.iter().any(|x| x.command == b.command) {
                baselines.push(b.clone());
            }
        }
        for c in &r.canaries {
            if seen_canaries.insert((c.file.clone(), c.command.clone())) {
                canaries.push(c.clone());
            }
        }
        for (k, v) in &r.sources {
            sources.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    canaries.sort_by(|a, b| (&a.file, &a.command).cmp(&(&b.file, &b.command)));
    (baselines, canaries, sources)
}

/// Copy the diffs and logs of every shard into `out` (first shard wins on a
/// name clash, e.g. each shard's `baseline.log`).
pub fn copy_artifacts(dirs: &[PathBuf], out: &Path) -> Result<()> {
    for d in dirs {
        let reading = || format!("reading {}", d.display());
        for entry in std::fs::read_dir(d).with_context(reading)? {
            let entry = entry.with_context(reading)?;
            let name = entry.file_name();
            let name_str = name.to_string_lossy();
            if RENDERED.contains(&name_str.as_ref()) {
                continue;
            }
            let file_type = entry
                .file_type()
                .with_context(|| format!("reading {}", entry.path().display()))?;
            if !file_type.is_file() {
                continue;
            }
            let dest = out.join(&name);
            if !dest.exists() {
                std::fs::copy(entry.path(), &dest).with_context(|| {
                    format!("copying {} to {}", entry.path().display(), dest.display())
                })?;
            }
        }
    }
    Ok(())
}
