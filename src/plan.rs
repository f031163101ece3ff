//! The plan: every mutation pre-applied in memory, with its site, diff,
//! expected killers and the test command it runs under.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::mutate::{self, ApplyProblem};
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
    pub sites: usize,
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

/// Build the plan from the user's tree as it is now (uncommitted edits included).
/// `only` restricts it to the given ids (unknown ids are an error).
pub fn build(spec: &Spec, only: &[String]) -> Result<Plan, String> {
    for id in only {
        if !spec.mutations.iter().any(|m| &m.id == id) {
            return Err(format!(
                "--only {id}: no mutation with that id in {} (see `unguard list`)",
                spec.spec_path.display()
            ));
        }
    }
    let mut originals: BTreeMap<String, Arc<Vec<u8>>> = BTreeMap::new();
    let mut tests: Vec<TestConfig> = Vec::new();
    let mut entries = Vec::new();
    for m in &spec.mutations {
        if !only.is_empty() && !only.contains(&m.id) {
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
                    sites: a.sites,
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
        entries.push(entry);
    }
    Ok(Plan {
        entries,
        tests,
        originals,
    })
}
