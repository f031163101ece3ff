//! `--in-diff BASE`: which lines of which files changed between the merge
//! base of a git rev and HEAD, and the working tree (index and untracked
//! files included), read with git2.

use std::collections::BTreeMap;
use std::path::Path;

use git2::{Commit, Delta, Diff, DiffOptions, Repository};

use crate::error::{Context, Error, Result};

/// Changed lines per file, relative to the target root.
#[derive(Debug, Default, Clone)]
pub struct ChangedLines {
    /// `None`: the whole file is new (added or untracked).
    files: BTreeMap<String, Option<Vec<(usize, usize)>>>,
}

impl ChangedLines {
    /// Whether `file` changed at all (any line, or added).
    pub fn file_changed(&self, file: &str) -> bool {
        self.files.contains_key(file)
    }

    /// Whether any line of the inclusive range `(first, last)` of `file` changed.
    pub fn touches(&self, file: &str, (first, last): (usize, usize)) -> bool {
        match self.files.get(file) {
            None => false,
            Some(None) => true,
            Some(Some(ranges)) => ranges.iter().any(|(a, b)| *a <= last && first <= *b),
        }
    }

    /// Number of changed files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file changed.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// Lines changed since `base` in the repository that contains `root`.
pub fn since(root: &Path, base: &str) -> Result<ChangedLines> {
    let repo = Repository::discover(root).with_context(|| {
        format!(
            "--in-diff needs a git repository, and {} is not inside one",
            root.display()
        )
    })?;
    let prefix = root_in_workdir(&repo, root)?;
    let tree = diff_base(&repo, base)?
        .tree()
        .context("reading the tree of the --in-diff base")?;
    let mut opts = DiffOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .context_lines(0)
        .ignore_submodules(true);
    if !prefix.is_empty() {
        opts.pathspec(&prefix);
    }
    let diff = repo
        .diff_tree_to_workdir_with_index(Some(&tree), Some(&mut opts))
        .context("computing the diff")?;
    changed_lines(&diff, &prefix)
}

/// Where `root` is in the repository's working tree, with `/` separators
/// (empty: at its top).
fn root_in_workdir(repo: &Repository, root: &Path) -> Result<String> {
    let Some(workdir) = repo.workdir() else {
        return Err(Error::Usage(
            "--in-diff: the repository has no working tree (bare repository)".into(),
        ));
    };
    let workdir = workdir
        .canonicalize()
        .with_context(|| format!("resolving {}", workdir.display()))?;
    let root = root
        .canonicalize()
        .with_context(|| format!("resolving {}", root.display()))?;
    let prefix = root.strip_prefix(&workdir).map_err(|e| {
        Error::Usage(format!(
            "target root outside the repository's working tree: {e}"
        ))
    })?;
    Ok(prefix.to_string_lossy().replace('\\', "/"))
}

/// The commit to diff from: like `git diff BASE...`, the merge base of
/// `base` and HEAD, so commits that landed on BASE after the branch point
/// do not count as this branch's changes.
fn diff_base<'r>(repo: &'r Repository, base: &str) -> Result<Commit<'r>> {
    let base_commit = repo
        .revparse_single(base)
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| {
            Error::Usage(format!(
                "--in-diff {base}: not a revision of this repository ({}); fetch it first (CI checkouts are often shallow: `fetch-depth: 0`)",
                e.message()
            ))
        })?;
    Ok(match repo.head().ok().and_then(|h| h.target()) {
        Some(head) => match repo.merge_base(base_commit.id(), head) {
            Ok(mb) => repo
                .find_commit(mb)
                .context("reading the merge base of --in-diff")?,
            Err(_) => base_commit,
        },
        None => base_commit,
    })
}

/// The files of `diff` under `prefix` (relative to it) and their changed
/// lines: new files whole, modified ones by hunk.
fn changed_lines(diff: &Diff<'_>, prefix: &str) -> Result<ChangedLines> {
    let rel = |p: &Path| -> Option<String> {
        let s = p.to_string_lossy().replace('\\', "/");
        if prefix.is_empty() {
            Some(s)
        } else {
            s.strip_prefix(&format!("{prefix}/")).map(str::to_string)
        }
    };
    let mut changed = ChangedLines::default();
    for delta in diff.deltas() {
        let Some(path) = delta.new_file().path().and_then(rel) else {
            continue;
        };
        match delta.status() {
            Delta::Added | Delta::Untracked | Delta::Copied | Delta::Renamed => {
                changed.files.insert(path, None);
            }
            Delta::Deleted => {}
            _ => {
                changed
                    .files
                    .entry(path)
                    .or_insert_with(|| Some(Vec::new()));
            }
        }
    }
    diff.foreach(
        &mut |_, _| true,
        None,
        Some(&mut |delta, hunk| {
            if let Some(path) = delta.new_file().path().and_then(rel) {
                if let Some(Some(ranges)) = changed.files.get_mut(&path) {
                    let start = hunk.new_start() as usize;
                    let n = hunk.new_lines() as usize;
                    // A pure deletion touches the lines on both sides of the gap.
                    let range = if n == 0 {
                        (start.max(1), start + 1)
                    } else {
                        (start, start + n - 1)
                    };
                    ranges.push(range);
                }
            }
            true
        }),
        None,
    )
    .context("reading the diff")?;
    Ok(changed)
}
