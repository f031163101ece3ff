//! Before the loop: the output dir, the list of files a copy holds, the
//! check that every mutated file is part of it, and the banner.

use std::path::PathBuf;

use crate::error::{Context, Error, Result};
use crate::outdir;
use crate::plan::Plan;
use crate::spec::diag::{Diagnostic, Diagnostics, SnippetCache};
use crate::spec::Spec;
use crate::workspace::{self, Manifest};

/// Lock and make the output dir, set aside the room its results need, and
/// list the target tree; returns the output dir (absolute when it can be)
/// and the manifest.
pub(super) fn out_dir_and_manifest(
    spec: &Spec,
    out: &std::path::Path,
) -> Result<(PathBuf, Manifest)> {
    outdir::prepare(out)?;
    let out = out.canonicalize().unwrap_or_else(|_| out.to_path_buf());
    outdir::space::reserve(&out, reserve_size(spec))?;
    let manifest = manifest(spec, std::slice::from_ref(&out)).inspect_err(|_| {
        outdir::release_reserve(&out);
    })?;
    Ok((out, manifest))
}

/// The room the results of `spec` can take: a record per mutation, and the
/// mutated files' sources, which the results carry.
fn reserve_size(spec: &Spec) -> u64 {
    let files: std::collections::BTreeSet<&str> =
        spec.mutations.iter().map(|m| m.file.as_str()).collect();
    let sources: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(spec.root.join(f)).ok())
        .map(|m| m.len())
        .sum();
    outdir::space::reserve_size(spec.mutations.len(), sources)
}

/// List the target tree as a copy would hold it, leaving out `exclude`
/// (the output dir; nothing for `unguard check`).
pub(super) fn manifest(spec: &Spec, exclude: &[PathBuf]) -> Result<Manifest> {
    workspace::manifest(&spec.root, exclude, &spec.link)
        .with_context(|| format!("listing the files of {}", spec.root.display()))
}

/// Every targeted file must be part of the copy (not ignored by git).
pub(super) fn check_targets_copied(plan: &Plan, manifest: &Manifest) -> Result<()> {
    let mut missing = Diagnostics::default();
    let mut sources = SnippetCache::default();
    for m in plan.ready() {
        if manifest.entries.binary_search(&m.file).is_err() {
            let d = Diagnostic::new(
                &m.pos.path,
                m.pos.line,
                m.pos.col,
                format!(
                    "mutation `{}`: {} is not part of the copied tree (ignored by git?)",
                    m.id, m.file
                ),
            )
            .with_fix("mutate a tracked or untracked-but-not-ignored source file");
            missing.push(sources.snippet(d, &m.pos.path));
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::Diagnostics(missing))
    }
}

/// What the run covers: the shard, an empty selection, and the copy.
pub(super) fn banner(plan: &Plan, manifest: &Manifest, root_display: &str) -> String {
    let mut lines = Vec::new();
    let sel = &plan.selection;
    if let Some(shard) = sel.shard {
        lines.push(format!(
            "unguard: shard {shard}: {} of {} selected mutation(s)",
            plan.entries.len(),
            sel.planned.len()
        ));
    }
    if plan.entries.is_empty() {
        let by: Vec<String> = sel
            .filters
            .iter()
            .cloned()
            .chain(sel.shard.map(|s| format!("--shard {s}")))
            .collect();
        lines.push(format!(
            "unguard: no mutation selected{}",
            if by.is_empty() {
                String::new()
            } else {
                format!(" by {}", by.join(" "))
            }
        ));
    }
    lines.push(format!(
        "unguard: {} mutation(s) in {} ({} files copied{}{}, {} linked: {})",
        plan.entries.len(),
        root_display,
        manifest.entries.len() + manifest.opaque.len(),
        if manifest.from_git { " from git" } else { "" },
        if manifest.opaque.is_empty() {
            String::new()
        } else {
            format!(
                ", {} of them with names that are not UTF-8",
                manifest.opaque.len()
            )
        },
        manifest.links.len(),
        if manifest.links.is_empty() {
            "-".to_string()
        } else {
            manifest.links.join(", ")
        }
    ));
    if let Some(note) = outside_links_note(manifest) {
        lines.push(note);
    }
    lines.join("\n")
}

/// Names the symlinks of the tree that lead outside it: a copy keeps them
/// pointing at their original target, which a suite can write through.
fn outside_links_note(manifest: &Manifest) -> Option<String> {
    const SHOWN: usize = 5;
    let links = &manifest.outside_links;
    if links.is_empty() {
        return None;
    }
    let mut named: Vec<String> = links
        .iter()
        .take(SHOWN)
        .map(|(rel, target)| format!("{rel} -> {}", target.display()))
        .collect();
    if links.len() > SHOWN {
        named.push(format!("and {} more", links.len() - SHOWN));
    }
    Some(format!(
        "note: {} symlink(s) lead outside the target and point at their original target in every copy (a suite can write through them): {}",
        links.len(),
        named.join(", ")
    ))
}
