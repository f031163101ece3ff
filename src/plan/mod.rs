//! The plan: every mutation pre-applied in memory, with its site, diff,
//! expected killers and the test command it runs under.

pub mod changes;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::Direction;
use crate::error::{Error, FlagError, Result};
use crate::globs::Globs;
use crate::mutate::{self, ApplyProblem};
use crate::plan::changes::ChangedLines;
use crate::spec::{MutationSpec, Spec, SpecPos, TestConfig};

/// A mutant ready to run: the diff is proven non-empty.
#[derive(Debug, Clone)]
pub struct Mutant {
    /// The mutation's id (`id:` in the spec).
    pub id: String,
    /// The control the mutation removes or weakens, in the spec's words.
    pub control: String,
    /// The rule the control implements (`rule:`), when the spec names one.
    pub rule: Option<String>,
    /// `direction:` `loosen` or `tighten`, when declared.
    pub direction: Option<Direction>,
    /// The mutated file, relative to the target root, with `/` separators.
    pub file: String,
    /// The site's line ([`mutate::Change`]): the first line the mutation
    /// changes, the one line every output shows. With `col`, `end_line` and
    /// `end_col` the changed region of the first changed site.
    pub line: usize,
    /// 1-based column of the changed region's start, in characters.
    pub col: usize,
    /// Just after the changed region.
    pub end_line: usize,
    /// 1-based column just after the changed region, in characters.
    pub end_col: usize,
    /// What replaced the changed region.
    pub replacement: String,
    /// How a multi-line `replace` was re-indented to the code it replaces
    /// (`+8 spaces`), when it was; `check` says so.
    pub reindented: Option<String>,
    /// Number of sites the mutation replaced.
    pub sites: usize,
    /// 1-based line ranges (inclusive) of every site in the original file.
    pub site_lines: Vec<(usize, usize)>,
    /// The mutated file, as an edit of the original in [`Plan::originals`]
    /// (not a copy of the whole file: a plan of 10,000 mutants of 20 KB
    /// files would otherwise hold 200 MB).
    pub edit: Edit,
    /// Unified diff original → mutant.
    pub diff: String,
    /// The test patterns expected to kill it (`expect.killed_by`); empty: any
    /// red test kills.
    pub killed_by: Vec<String>,
    /// Its own `timeout:`, when the spec sets one: it wins over the baseline's
    /// timeout, `--timeout` wins over it.
    pub timeout: Option<Duration>,
    /// Index into [`Plan::tests`].
    pub test: usize,
    /// Whether its file may get a canary (`canary:`, default true); a file
    /// gets none when any of its mutants under the same test config says false.
    pub canary: bool,
    /// Where the mutation is declared (its `id:`).
    pub pos: SpecPos,
}

impl Mutant {
    /// The mutated bytes of the file, from its original bytes.
    pub fn mutated(&self, original: &[u8]) -> Result<Vec<u8>> {
        self.edit.apply(original).ok_or_else(|| {
            Error::Internal(format!(
                "mutant {}: its edit does not fit the original of {} ({} bytes)",
                self.id,
                self.file,
                original.len()
            ))
        })
    }
}

/// One contiguous edit: bytes `start..end` of the original are replaced by
/// `insert`. It spans from the first changed byte to the last, so it is as
/// small as the mutation for a single site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// Byte offset in the original where the edit starts.
    pub start: usize,
    /// Byte offset just after the last byte it replaces (`start` when it only
    /// inserts).
    pub end: usize,
    /// The bytes put in their place.
    pub insert: Vec<u8>,
}

impl Edit {
    /// The edit that turns `original` into `mutated`.
    pub fn between(original: &[u8], mutated: &[u8]) -> Edit {
        let prefix = original
            .iter()
            .zip(mutated)
            .take_while(|(a, b)| a == b)
            .count();
        // The common suffix may not overlap the common prefix in either.
        let room = original.len().min(mutated.len()) - prefix;
        let suffix = original
            .iter()
            .rev()
            .zip(mutated.iter().rev())
            .take(room)
            .take_while(|(a, b)| a == b)
            .count();
        Edit {
            start: prefix,
            end: original.len() - suffix,
            insert: mutated[prefix..mutated.len() - suffix].to_vec(),
        }
    }

    /// `original` with the edit applied; `None` if it does not fit.
    pub fn apply(&self, original: &[u8]) -> Option<Vec<u8>> {
        if self.start > self.end {
            return None;
        }
        let head = original.get(..self.start)?;
        let tail = original.get(self.end..)?;
        let mut out = Vec::with_capacity(head.len() + self.insert.len() + tail.len());
        out.extend_from_slice(head);
        out.extend_from_slice(&self.insert);
        out.extend_from_slice(tail);
        Some(out)
    }
}

/// A mutation that could not be turned into a mutant.
#[derive(Debug, Clone)]
pub struct Rejected {
    /// The mutation's id (`id:` in the spec).
    pub id: String,
    /// The control the mutation removes or weakens, in the spec's words.
    pub control: String,
    /// The rule the control implements (`rule:`), when the spec names one.
    pub rule: Option<String>,
    /// `direction:` `loosen` or `tighten`, when declared.
    pub direction: Option<Direction>,
    /// The file it targets, relative to the target root.
    pub file: String,
    /// Why it could not be applied (no-op, ambiguous, binary, …): its verdict.
    pub problem: ApplyProblem,
    /// Where the mutation is declared (its `id:`).
    pub pos: SpecPos,
}

/// One entry per declared mutation, in spec order.
#[derive(Debug, Clone)]
pub enum Entry {
    /// Applied in memory with a non-empty diff: it runs.
    Ready(Mutant),
    /// Did not apply: it gets its verdict without running.
    Rejected(Rejected),
}

/// Every mutation the filters select, pre-applied to the original files in
/// memory, and the test configs they run under.
#[derive(Debug)]
pub struct Plan {
    /// The selected mutations, in spec order (this shard's only, when sharded).
    pub entries: Vec<Entry>,
    /// Distinct test configurations; each gets its own baseline.
    pub tests: Vec<TestConfig>,
    /// Original bytes of every targeted file, by relative path.
    pub originals: BTreeMap<String, Arc<Vec<u8>>>,
    /// What the filters selected (recorded in the results).
    pub selection: Selection,
}

/// Which mutations to run: `--only`, `--skip`, `--file`, `--in-diff`, `--shard`.
#[derive(Debug, Default)]
pub struct Filters {
    /// `--only`: run only these ids (empty: no such filter).
    pub only: Vec<String>,
    /// `--skip`: leave these ids out.
    pub skip: Vec<String>,
    /// `--file`: globs over the mutated file's path (relative to the target
    /// root), each as given and compiled ([`Globs`]: `*` stays inside one
    /// directory, `**` crosses them).
    pub files: Vec<(String, Globs)>,
    /// `--in-diff BASE`: the rev and the lines changed since it.
    pub in_diff: Option<(String, ChangedLines)>,
    /// `--shard K/N`: keep every N-th selected mutation, starting at the K-th.
    pub shard: Option<Shard>,
}

impl Filters {
    /// The filters as flags, for the results.
    fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        out.extend(self.only.iter().map(|i| format!("--only {i}")));
        out.extend(self.skip.iter().map(|i| format!("--skip {i}")));
        out.extend(self.files.iter().map(|g| format!("--file {}", g.0)));
        if let Some((base, _)) = &self.in_diff {
            out.push(format!("--in-diff {base}"));
        }
        out
    }

    fn keeps(&self, e: &Entry) -> bool {
        let (id, file) = match e {
            Entry::Ready(m) => (&m.id, &m.file),
            Entry::Rejected(r) => (&r.id, &r.file),
        };
        if !self.only.is_empty() && !self.only.contains(id) {
            return false;
        }
        if self.skip.contains(id) {
            return false;
        }
        if !self.files.is_empty() && !self.files.iter().any(|(_, g)| g.is_match(file)) {
            return false;
        }
        if let Some((_, changed)) = &self.in_diff {
            return match e {
                Entry::Ready(m) => m.site_lines.iter().any(|r| changed.touches(file, *r)),
                // A mutation that no longer applies in a changed file: the
                // change probably broke it, so it belongs to this diff.
                Entry::Rejected(_) => changed.file_changed(file),
            };
        }
        true
    }
}

impl Entry {
    /// The mutation's id.
    pub fn id(&self) -> &str {
        match self {
            Entry::Ready(m) => &m.id,
            Entry::Rejected(r) => &r.id,
        }
    }
    /// The file it targets, relative to the target root.
    pub fn file(&self) -> &str {
        match self {
            Entry::Ready(m) => &m.file,
            Entry::Rejected(r) => &r.file,
        }
    }
}

impl Plan {
    /// The mutants that run, in spec order.
    pub fn ready(&self) -> impl Iterator<Item = &Mutant> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Ready(m) => Some(m),
            Entry::Rejected(_) => None,
        })
    }
    /// The mutations that did not apply, in spec order.
    pub fn rejected(&self) -> impl Iterator<Item = &Rejected> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Rejected(r) => Some(r),
            Entry::Ready(_) => None,
        })
    }
}

/// Build the plan from the user's tree as it is now (uncommitted edits
/// included), keeping the mutations the filters select. Ids named by
/// `--only`/`--skip` that the spec does not declare are an error.
pub fn build(spec: &Spec, filters: &Filters) -> Result<Plan> {
    check_named_ids(spec, filters)?;
    let mut originals: BTreeMap<String, Arc<Vec<u8>>> = BTreeMap::new();
    let mut tests: Vec<TestConfig> = Vec::new();
    let mut entries = Vec::new();
    for m in &spec.mutations {
        if (!filters.only.is_empty() && !filters.only.contains(&m.id))
            || filters.skip.contains(&m.id)
        {
            continue;
        }
        let original = match originals.get(&m.file) {
            Some(o) => o.clone(),
            None => {
                let bytes = std::fs::read(spec.root.join(&m.file))
                    .map_err(|e| Error::io(format!("{}: cannot read {}", m.id, m.file), e))?;
                let arc = Arc::new(bytes);
                originals.insert(m.file.clone(), arc.clone());
                arc
            }
        };
        let entry = plan_entry(m, &original, &mut tests);
        if filters.keeps(&entry) {
            entries.push(entry);
        }
    }
    let planned: Vec<String> = entries.iter().map(|e| e.id().to_string()).collect();
    if let Some(shard) = filters.shard {
        // Deterministic: the i-th selected mutation (0-based) goes to shard i mod n + 1.
        entries = entries
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % shard.n == shard.k - 1)
            .map(|(_, e)| e)
            .collect();
    }
    // Keep only what the selected entries use.
    originals.retain(|f, _| entries.iter().any(|e| e.file() == f));
    let tests = keep_used_tests(tests, &mut entries);
    Ok(Plan {
        entries,
        tests,
        originals,
        selection: Selection {
            planned,
            shard: filters.shard,
            filters: filters.describe(),
        },
    })
}

/// Every id `--only` and `--skip` name must be declared in the spec, and
/// every `--file` glob must match the file of a declared mutation (a typo
/// would otherwise select nothing and pass the gate). Checked on the whole
/// spec, before sharding: an empty shard is not an error.
fn check_named_ids(spec: &Spec, filters: &Filters) -> Result<()> {
    for (text, g) in &filters.files {
        if !spec.mutations.iter().any(|m| g.is_match(&m.file)) {
            let mut files: Vec<String> = spec.mutations.iter().map(|m| m.file.clone()).collect();
            files.sort_unstable();
            files.dedup();
            return Err(FlagError::NoSuchFile {
                glob: text.clone(),
                spec: spec.spec_path.clone(),
                files,
            }
            .into());
        }
    }
    for (flag, ids) in [("--only", &filters.only), ("--skip", &filters.skip)] {
        for id in ids {
            if !spec.mutations.iter().any(|m| &m.id == id) {
                return Err(FlagError::NoSuchMutation {
                    flag,
                    id: id.clone(),
                    spec: spec.spec_path.clone(),
                }
                .into());
            }
        }
    }
    Ok(())
}

/// Apply `m` to the `original` bytes of its file: a mutant ready to run
/// (its test config added to `tests` if new), or why it cannot be.
fn plan_entry(m: &MutationSpec, original: &[u8], tests: &mut Vec<TestConfig>) -> Entry {
    let a = match mutate::apply(&m.pattern, &m.replace, m.count, original) {
        Ok(a) => a,
        Err(problem) => {
            return Entry::Rejected(Rejected {
                id: m.id.clone(),
                control: m.control.clone(),
                rule: m.rule.clone(),
                direction: m.direction,
                file: m.file.clone(),
                problem,
                pos: m.pos.clone(),
            })
        }
    };
    let diff = mutate::unified_diff(&m.file, original, &a.mutated);
    debug_assert!(!diff.is_empty());
    let test = match tests.iter().position(|t| t == &m.test) {
        Some(i) => i,
        None => {
            tests.push(m.test.clone());
            tests.len() - 1
        }
    };
    Entry::Ready(Mutant {
        id: m.id.clone(),
        control: m.control.clone(),
        rule: m.rule.clone(),
        direction: m.direction,
        file: m.file.clone(),
        line: a.change.line,
        col: a.change.col,
        end_line: a.change.end_line,
        end_col: a.change.end_col,
        replacement: a.change.replacement,
        reindented: a.reindented,
        sites: a.sites,
        site_lines: a.site_lines,
        edit: Edit::between(original, &a.mutated),
        diff,
        killed_by: m.killed_by.clone(),
        timeout: m.timeout,
        test,
        canary: m.canary,
        pos: m.pos.clone(),
    })
}

/// The test configs the ready `entries` run under, in their order; each
/// entry's index renumbered to match.
fn keep_used_tests(tests: Vec<TestConfig>, entries: &mut [Entry]) -> Vec<TestConfig> {
    let used: Vec<usize> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Ready(m) => Some(m.test),
            Entry::Rejected(_) => None,
        })
        .collect();
    let mut remap = vec![usize::MAX; tests.len()];
    let mut kept_tests = Vec::new();
    for (i, t) in tests.into_iter().enumerate() {
        if used.contains(&i) {
            remap[i] = kept_tests.len();
            kept_tests.push(t);
        }
    }
    for e in entries {
        if let Entry::Ready(m) = e {
            m.test = remap[m.test];
        }
    }
    kept_tests
}

impl Plan {
    /// Every mutation that cannot be applied, as rendered diagnostics (its
    /// position in the spec, a caret snippet and the fix), one per line
    /// group; and how many there are.
    pub fn rejected_report(&self) -> (usize, String) {
        let mut sources = crate::spec::diag::SnippetCache::default();
        let mut text = String::new();
        let mut n = 0;
        for r in self.rejected() {
            n += 1;
            let d = crate::spec::diag::Diagnostic::new(
                &r.pos.path,
                r.pos.line,
                r.pos.col,
                format!(
                    "{}: mutation `{}` on {}: {}",
                    r.problem.kind(),
                    r.id,
                    r.file,
                    r.problem.detail()
                ),
            )
            .with_fix(r.problem.fix());
            text.push_str(&format!("{}\n", sources.snippet(d, &r.pos.path)));
        }
        (n, text)
    }
}

/// One shard of a run split over machines: shard `k` of `n`, 1-based.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
pub struct Shard {
    /// This shard's number, from 1 to `n`.
    pub k: usize,
    /// How many shards the run is split into.
    pub n: usize,
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// Which mutants this run covers.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Selection {
    /// Ids selected by the filters, in spec order, before sharding: what an
    /// unsharded run with the same filters covers.
    pub planned: Vec<String>,
    /// Set when this run is one shard; `unguard merge` joins the shards.
    #[serde(default)]
    pub shard: Option<Shard>,
    /// The filters as given (`--only a`, `--in-diff main`, …).
    #[serde(default)]
    pub filters: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(original: &str, mutated: &str) -> Edit {
        let e = Edit::between(original.as_bytes(), mutated.as_bytes());
        assert_eq!(
            e.apply(original.as_bytes()).as_deref(),
            Some(mutated.as_bytes()),
            "{original:?} -> {mutated:?} via {e:?}"
        );
        e
    }

    #[test]
    fn edit_reproduces_the_mutated_file_exactly() {
        roundtrip("if x:\n    deny()\n", "if False:\n    deny()\n");
        // Prefix and suffix would overlap without the cap.
        roundtrip("aaa", "aa");
        roundtrip("aa", "aaa");
        roundtrip("abcabc", "abcXabc");
        roundtrip("abc", "");
        roundtrip("", "abc");
        roundtrip("same", "same");
        // Two sites far apart: one edit spanning both.
        roundtrip("a = 1\nmiddle\nb = 1\n", "a = 0\nmiddle\nb = 0\n");
        // Every pair of short strings over a small alphabet.
        let words: Vec<String> = (0..4u32)
            .flat_map(|n| {
                (0..3usize.pow(n)).map(move |mut i| {
                    let mut s = String::new();
                    for _ in 0..n {
                        s.push([b'a', b'b', b'\n'][i % 3] as char);
                        i /= 3;
                    }
                    s
                })
            })
            .collect();
        for a in &words {
            for b in &words {
                roundtrip(a, b);
            }
        }
    }

    #[test]
    fn edit_of_a_one_line_mutation_is_small() {
        let original: String = (0..1000).map(|i| format!("line_{i} = {i}\n")).collect();
        let mutated = original.replace("line_500 = 500\n", "line_500 = 0\n");
        let e = roundtrip(&original, &mutated);
        assert!(e.insert.len() <= 3, "{e:?}");
        assert!(e.end - e.start <= 3, "{e:?}");
    }

    #[test]
    fn edit_that_does_not_fit_is_refused() {
        let e = Edit::between(b"0123456789", b"01234X6789");
        assert_eq!(e.apply(b"0123"), None);
        let bad = Edit {
            start: 3,
            end: 2,
            insert: vec![],
        };
        assert_eq!(bad.apply(b"0123"), None);
    }
}
