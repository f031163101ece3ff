//! The plan: every mutation pre-applied in memory, with its site, diff,
//! expected killers and the test command it runs under.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::changes::ChangedLines;
use crate::mutate::{self, ApplyProblem};
use crate::results::{Selection, Shard};
use crate::spec::{Spec, SpecPos, TestConfig};

/// A mutant ready to run: the diff is proven non-empty.
#[derive(Debug, Clone)]
pub struct Mutant {
    pub id: String,
    pub control: String,
    pub rule: Option<String>,
    pub file: String,
    pub line: usize,
    pub col: usize,
    /// Just after the first site.
    pub end_line: usize,
    pub end_col: usize,
    /// What replaced the first site.
    pub replacement: String,
    pub sites: usize,
    /// 1-based line ranges (inclusive) of every site in the original file.
    pub site_lines: Vec<(usize, usize)>,
    pub mutated: Arc<Vec<u8>>,
    pub diff: String,
    pub killed_by: Vec<String>,
    pub timeout: Option<Duration>,
    /// Index into [`Plan::tests`].
    pub test: usize,
    pub canary: bool,
    pub pos: SpecPos,
}

/// A mutation that could not be turned into a mutant.
#[derive(Debug, Clone)]
pub struct Rejected {
    pub id: String,
    pub control: String,
    pub rule: Option<String>,
    pub file: String,
    pub problem: ApplyProblem,
    pub pos: SpecPos,
}

/// One entry per declared mutation, in spec order.
#[derive(Debug, Clone)]
pub enum Entry {
    Ready(Mutant),
    Rejected(Rejected),
}

#[derive(Debug)]
pub struct Plan {
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
    pub only: Vec<String>,
    pub skip: Vec<String>,
    /// Globs over the mutated file's path (relative to the target root).
    pub files: Vec<glob::Pattern>,
    /// `--in-diff BASE`: the rev and the lines changed since it.
    pub in_diff: Option<(String, ChangedLines)>,
    pub shard: Option<Shard>,
}

impl Filters {
    /// The filters as flags, for the results.
    fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        out.extend(self.only.iter().map(|i| format!("--only {i}")));
        out.extend(self.skip.iter().map(|i| format!("--skip {i}")));
        out.extend(self.files.iter().map(|g| format!("--file {}", g.as_str())));
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
        let opts = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: false,
        };
        if !self.files.is_empty() && !self.files.iter().any(|g| g.matches_with(file, opts)) {
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
    pub fn id(&self) -> &str {
        match self {
            Entry::Ready(m) => &m.id,
            Entry::Rejected(r) => &r.id,
        }
    }
    pub fn file(&self) -> &str {
        match self {
            Entry::Ready(m) => &m.file,
            Entry::Rejected(r) => &r.file,
        }
    }
}

impl Plan {
    pub fn ready(&self) -> impl Iterator<Item = &Mutant> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Ready(m) => Some(m),
            Entry::Rejected(_) => None,
        })
    }
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
pub fn build(spec: &Spec, filters: &Filters) -> Result<Plan, String> {
    for (flag, ids) in [("--only", &filters.only), ("--skip", &filters.skip)] {
        for id in ids {
            if !spec.mutations.iter().any(|m| &m.id == id) {
                return Err(format!(
                    "{flag} {id}: no mutation with that id in {} (see `unguard list`)",
                    spec.spec_path.display()
                ));
            }
        }
    }
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
                    .map_err(|e| format!("{}: cannot read {}: {e}", m.id, m.file))?;
                let arc = Arc::new(bytes);
                originals.insert(m.file.clone(), arc.clone());
                arc
            }
        };
        let applied = mutate::apply(&m.pattern, &m.replace, m.count, &original);
        let entry = match applied {
            Ok(a) => {
                let diff = mutate::unified_diff(&m.file, &original, &a.mutated);
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
                    file: m.file.clone(),
                    line: a.line,
                    col: a.col,
                    end_line: a.end_line,
                    end_col: a.end_col,
                    replacement: a.replacement,
                    sites: a.sites,
                    site_lines: a.site_lines,
                    mutated: Arc::new(a.mutated),
                    diff,
                    killed_by: m.killed_by.clone(),
                    timeout: m.timeout,
                    test,
                    canary: m.canary,
                    pos: m.pos.clone(),
                })
            }
            Err(problem) => Entry::Rejected(Rejected {
                id: m.id.clone(),
                control: m.control.clone(),
                rule: m.rule.clone(),
                file: m.file.clone(),
                problem,
                pos: m.pos.clone(),
            }),
        };
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
    for e in &mut entries {
        if let Entry::Ready(m) = e {
            m.test = remap[m.test];
        }
    }
    Ok(Plan {
        entries,
        tests: kept_tests,
        originals,
        selection: Selection {
            planned,
            shard: filters.shard,
            filters: filters.describe(),
        },
    })
}
