//! `unguard merge`: join the output dirs of `run --shard k/n` into the
//! results of one unsharded run (same mutants in the same order, same
//! summary and gate; only durations and timestamps differ).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use crate::gate;
use crate::report::read_outcomes;
use crate::results::{Results, Selection};

/// Files of a shard dir that are rendered anew for the merged dir.
const RENDERED: [&str; 4] = ["outcomes.json", "report.md", "report.html", ".unguard-out"];

/// Read every shard's outcomes.json and join them.
pub fn merge(dirs: &[PathBuf]) -> Result<Results> {
    let mut shards: Vec<(PathBuf, Results)> = Vec::new();
    for d in dirs {
        shards.push((d.clone(), read_outcomes(d).map_err(anyhow::Error::msg)?));
    }
    let (first_dir, first) = &shards[0];
    let Some(first_shard) = first.selection.shard else {
        bail!(
            "{}: not a shard (run with `--shard K/N`); nothing to merge",
            first_dir.display()
        );
    };
    let n = first_shard.n;
    let mut seen: BTreeMap<usize, &Path> = BTreeMap::new();
    for (dir, r) in &shards {
        let Some(s) = r.selection.shard else {
            bail!("{}: not a shard (run with `--shard K/N`)", dir.display());
        };
        if s.n != n {
            bail!(
                "{}: shard {s} does not belong to a split into {n} (from {})",
                dir.display(),
                first_dir.display()
            );
        }
        if let Some(other) = seen.insert(s.k, dir) {
            bail!(
                "shard {s} given twice: {} and {}",
                other.display(),
                dir.display()
            );
        }
        let same = |what: &str, a: String, b: String| -> Result<()> {
            if a != b {
                bail!(
                    "{} and {} come from different runs: their {what} differ ({a} vs {b})",
                    first_dir.display(),
                    dir.display()
                );
            }
            Ok(())
        };
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
        same(
            "gate settings",
            serde_json::to_string(&first.gate_config)?,
            serde_json::to_string(&r.gate_config)?,
        )?;
    }
    let missing: Vec<String> = (1..=n)
        .filter(|k| !seen.contains_key(k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        bail!(
            "missing shard(s) {}: pass the output dir of every shard 1/{n} … {n}/{n}",
            missing.join(", ")
        );
    }

    // Mutants in the order an unsharded run lists them.
    let order: HashMap<&str, usize> = first
        .selection
        .planned
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let mut mutants = Vec::new();
    for (dir, r) in &shards {
        for m in &r.mutants {
            if !order.contains_key(m.id.as_str()) {
                bail!(
                    "{}: mutant {} is not in the shards' selection",
                    dir.display(),
                    m.id
                );
            }
            mutants.push(m.clone());
        }
    }
    mutants.sort_by_key(|m| order[m.id.as_str()]);
    let interrupted = shards.iter().any(|(_, r)| r.interrupted);
    if !interrupted {
        let ids: BTreeSet<&str> = mutants.iter().map(|m| m.id.as_str()).collect();
        if ids.len() != mutants.len() {
            bail!("a mutant appears in more than one shard: the shards come from different runs");
        }
        if ids.len() != order.len() {
            bail!(
                "the shards hold {} of {} selected mutants: a shard did not finish",
                ids.len(),
                order.len()
            );
        }
    }

    // Baselines and canaries: one per command / (file, command), first shard wins.
    let mut baselines = Vec::new();
    let mut canaries = Vec::new();
    let mut sources = BTreeMap::new();
    let mut seen_canaries = BTreeSet::new();
    for (_, r) in &shards {
        for b in &r.baselines {
            if !baselines
                .iter()
                .any(|x: &crate::results::BaselineResult| x.command == b.command)
            {
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

    let (summary, gate) = gate::judge(
        &mut mutants,
        &first.gate_config,
        first.timeout_policy,
        interrupted,
    );
    Ok(Results {
        schema: first.schema.clone(),
        unguard_version: env!("CARGO_PKG_VERSION").into(),
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
    })
}

/// Copy the diffs and logs of every shard into `out` (first shard wins on a
/// name clash, e.g. each shard's `baseline.log`).
pub fn copy_artifacts(dirs: &[PathBuf], out: &Path) -> Result<()> {
    for d in dirs {
        for entry in std::fs::read_dir(d).with_context(|| format!("reading {}", d.display()))? {
            let entry = entry?;
            let name = entry.file_name();
            let name_str = name.to_string_lossy();
            if RENDERED.contains(&name_str.as_ref()) || !entry.file_type()?.is_file() {
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
