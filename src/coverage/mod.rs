//! Per-test coverage: which tests execute which statements of the copy,
//! from one instrumented run of unguard's own after a green baseline (see
//! [`crate::engine`]'s coverage run). It decides two things for a mutant
//! without a run of its own: the tests that cover its changed lines run
//! first (kill-first's `covering` stage), and a mutant whose changed lines
//! no test executes is `no-coverage`.
//!
//! "Unknown" is never "no test": a file the run did not measure, a line
//! that is no statement (a comment, an `else:`), or a map the run could
//! not make leaves the mutant to its runs, as without coverage.
//!
//! A map decides nothing for a file unless it is complete there
//! ([`CoverageMap::trust`]): every test that went red under the file's
//! canary must be credited with executing the file beyond its import-time
//! code, and no process of the run may have escaped measurement (a child
//! started with an environment of its own, one killed before it saved its
//! data: the map's [`BlindSpot`]s). Otherwise the file's mutants run as
//! without coverage, and `outcomes.json` says why ([`Distrust`]).
//!
//! Collectors ([`collector`] picks one per runner): [`python`]
//! (coverage.py, through a pytest plugin and a `sitecustomize` for the
//! processes a test starts), [`node`] (V8's own coverage, per test file)
//! and [`go`] (`go test -coverprofile`, per package).

pub mod collector;
pub mod go;
pub mod node;
pub mod python;

use std::collections::HashMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Context, Result};

/// Which tests executed one statement.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Hit {
    /// Code run outside any test (imports, module level, collection):
    /// executed for every test that imports it.
    Everyone,
    /// The tests (indices into [`CoverageMap::tests`]) that executed it;
    /// empty: none did.
    Tests(Vec<u32>),
}

/// One statement of a measured file: its lines (a compound statement's
/// header only) and who executed it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Statement {
    first: usize,
    last: usize,
    hit: Hit,
}

/// The tests that execute a mutant's changed lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Covering {
    /// The file was measured, the lines are statements, and no test
    /// executed any of them.
    NoTest,
    /// Code every test runs (module level): no smaller set of tests.
    Everyone,
    /// These tests (JUnit ids, in the order the map lists them).
    Tests(Vec<String>),
    /// The map cannot tell (file not measured, no statement on the lines).
    Unknown,
}

/// Which tests executed which statements, per file of the copy (paths
/// relative to its root, `/`-separated).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CoverageMap {
    tests: Vec<String>,
    files: HashMap<String, Vec<Statement>>,
    blind: Vec<BlindSpot>,
    /// The collector saw to it that only measured processes can run the
    /// copy's code (see [`CoverageMap::contained`]).
    contained: bool,
}

/// A process of the coverage run whose code the map cannot see.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlindSpot {
    /// The test that was running when it started (JUnit id; empty outside
    /// any test).
    #[serde(default)]
    pub test: String,
    /// Its command line (the first words).
    #[serde(default)]
    pub argv: Vec<String>,
    /// Why it is unseen.
    #[serde(default)]
    pub why: String,
}

impl BlindSpot {
    /// One line: the command, the test, why.
    pub fn describe(&self) -> String {
        let test = if self.test.is_empty() {
            String::new()
        } else {
            format!(" in {}", self.test)
        };
        format!("`{}`{test}: {}", self.argv.join(" "), self.why)
    }
}

/// Why a map decides nothing for one file (`coverage_files[].reason` in
/// `outcomes.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Distrust {
    /// The file had no canary (`--no-canary`): nothing shows the map
    /// complete there.
    NoCanary,
    /// The canary's per-test results could not be read.
    CanaryUnread,
    /// A test went red under the canary that the map does not credit with
    /// executing the file beyond its import-time code (its code ran where
    /// coverage did not see it: a child process, `exec` of the file's text).
    RedTestNotCredited,
    /// A process of the coverage run escaped measurement (an environment of
    /// its own, killed before it saved its data): it could run any file.
    UnmeasuredProcess,
}

/// Why a map decides nothing for a file: the kind and the words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blind {
    /// The kind.
    pub reason: Distrust,
    /// What was seen (the tests, the process).
    pub detail: String,
}

/// What the file's canary showed, as evidence for [`CoverageMap::trust`].
#[derive(Debug, Clone, Copy)]
pub enum CanaryEvidence<'a> {
    /// There was no canary.
    None,
    /// It ran, but its per-test results could not be read.
    Unread,
    /// These tests went red under it (JUnit ids).
    Red(&'a [String]),
}

/// The file a collector writes (see `pytest_plugin.py`).
#[derive(Deserialize)]
struct Written {
    tests: Vec<String>,
    files: HashMap<String, Vec<(usize, usize, WrittenHit)>>,
    #[serde(default)]
    blind: Vec<BlindSpot>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum WrittenHit {
    Everyone(String),
    Tests(Vec<u32>),
}

impl CoverageMap {
    /// Read the map a collector wrote at `path`.
    pub fn read(path: &Path) -> Result<CoverageMap> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let written: Written = serde_json::from_str(&text)
            .map_err(|e| crate::error::Error::Internal(format!("{}: {e}", path.display())))?;
        let n = written.tests.len();
        let mut files = HashMap::new();
        for (file, rows) in written.files {
            let mut statements = Vec::with_capacity(rows.len());
            for (first, last, hit) in rows {
                let hit = match hit {
                    WrittenHit::Everyone(s) if s == "*" => Hit::Everyone,
                    WrittenHit::Tests(t) if t.iter().all(|&i| (i as usize) < n) => Hit::Tests(t),
                    _ => {
                        return Err(crate::error::Error::Internal(format!(
                            "{}: a statement of {file} names no test of the map",
                            path.display()
                        )))
                    }
                };
                statements.push(Statement { first, last, hit });
            }
            files.insert(file, statements);
        }
        Ok(CoverageMap {
            tests: written.tests,
            files,
            blind: written.blind,
            contained: false,
        })
    }

    /// The processes of the run the map could not see into.
    pub fn blind(&self) -> &[BlindSpot] {
        &self.blind
    }

    /// The map of a collector under which only measured processes can run
    /// the copy's code (Go: the package's code runs in its test binaries,
    /// each measured, and a test that can start a process leaves the map
    /// unused): it needs no canary to show it complete. A Go file emptied
    /// stops the build before any test runs, so its canary names no test.
    pub fn contained(mut self) -> CoverageMap {
        self.contained = true;
        self
    }

    /// Whether the map credits test `id` with executing a statement of
    /// `file` under its own name (beyond the import-time code every test
    /// shares).
    pub fn credits(&self, file: &str, id: &str) -> bool {
        let Some(i) = self.tests.iter().position(|t| t == id) else {
            return false;
        };
        let i = i as u32;
        self.files.get(file).is_some_and(|statements| {
            statements
                .iter()
                .any(|s| matches!(&s.hit, Hit::Tests(t) if t.contains(&i)))
        })
    }

    /// Whether the map may decide for `file` (`no-coverage`, the covering
    /// tests): it saw every process of the run, and every test that went
    /// red under the file's canary executed the file under its own name.
    /// Without a canary, or one whose tests could not be read, it may not.
    pub fn trust(&self, file: &str, canary: CanaryEvidence<'_>) -> Result<(), Blind> {
        if let Some(spot) = self.blind.first() {
            let more = match self.blind.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            return Err(Blind {
                reason: Distrust::UnmeasuredProcess,
                detail: format!("{}{more}", spot.describe()),
            });
        }
        if self.contained {
            return Ok(());
        }
        let red = match canary {
            CanaryEvidence::None => {
                return Err(Blind {
                    reason: Distrust::NoCanary,
                    detail: "no canary ran for the file, so nothing shows the map complete there"
                        .into(),
                })
            }
            CanaryEvidence::Unread => {
                return Err(Blind {
                    reason: Distrust::CanaryUnread,
                    detail: "the canary's per-test results could not be read".into(),
                })
            }
            CanaryEvidence::Red(red) => red,
        };
        let uncredited: Vec<&String> = red.iter().filter(|t| !self.credits(file, t)).collect();
        match uncredited.as_slice() {
            [] => Ok(()),
            [first, rest @ ..] => Err(Blind {
                reason: Distrust::RedTestNotCredited,
                detail: format!(
                    "{first}{} went red with the file emptied, but coverage saw {} execute none of its code beyond import time (a process coverage did not measure, or code run from the file's text)",
                    if rest.is_empty() { String::new() } else { format!(" and {} more test(s)", rest.len()) },
                    if rest.is_empty() { "it" } else { "them" },
                ),
            }),
        }
    }

    /// The tests measured (each ran code of the copy under its own name).
    pub fn tests(&self) -> &[String] {
        &self.tests
    }

    /// How many files of the copy the run executed.
    pub fn files(&self) -> usize {
        self.files.len()
    }

    /// Whether the run executed any statement of `file`.
    pub fn measured(&self, file: &str) -> bool {
        self.files.contains_key(file)
    }

    /// The tests that execute lines `first..=last` of `file` (1-based,
    /// lines of the original file): the union over every statement those
    /// lines touch.
    pub fn covering(&self, file: &str, first: usize, last: usize) -> Covering {
        let Some(statements) = self.files.get(file) else {
            return Covering::Unknown;
        };
        let mut touched = statements
            .iter()
            .filter(|s| s.first <= last && s.last >= first)
            .peekable();
        if touched.peek().is_none() {
            return Covering::Unknown;
        }
        let mut tests: Vec<u32> = Vec::new();
        for s in touched {
            match &s.hit {
                Hit::Everyone => return Covering::Everyone,
                Hit::Tests(t) => tests.extend(t),
            }
        }
        if tests.is_empty() {
            return Covering::NoTest;
        }
        tests.sort_unstable();
        tests.dedup();
        Covering::Tests(
            tests
                .into_iter()
                .map(|i| self.tests[i as usize].clone())
                .collect(),
        )
    }
}

/// How a coverage run ended.
#[derive(Debug)]
pub enum Collected {
    /// The map, read.
    Map(CoverageMap),
    /// The collector's tool is not where the suite runs (the words say
    /// what to install).
    Missing(String),
    /// No usable map (the words say why).
    NoMap(String),
}

/// Who executed one statement, as a collector that does not write the
/// JSON map found it (see [`CoverageMap::build`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ran {
    /// Code every test runs, or code run where the collector cannot tell
    /// which test ran it: no smaller set of tests.
    Everyone,
    /// These tests (JUnit ids); empty: none did.
    Tests(Vec<String>),
}

/// One measured file for [`CoverageMap::build`]: its path (relative to the
/// copy, `/`-separated) and its statements (first line, last line, who ran it).
pub type BuiltFile = (String, Vec<(usize, usize, Ran)>);

impl CoverageMap {
    /// The map of `files`; `tests` are the tests measured (those the
    /// statements name are added to them).
    pub fn build(tests: Vec<String>, files: Vec<BuiltFile>) -> CoverageMap {
        let mut index: HashMap<String, u32> = HashMap::new();
        let mut all = Vec::new();
        let mut intern = |t: String, all: &mut Vec<String>| -> u32 {
            *index.entry(t.clone()).or_insert_with(|| {
                all.push(t);
                (all.len() - 1) as u32
            })
        };
        for t in tests {
            intern(t, &mut all);
        }
        let mut map = HashMap::new();
        for (file, rows) in files {
            let statements = rows
                .into_iter()
                .map(|(first, last, ran)| Statement {
                    first,
                    last,
                    hit: match ran {
                        Ran::Everyone => Hit::Everyone,
                        Ran::Tests(t) => {
                            let mut ids: Vec<u32> =
                                t.into_iter().map(|t| intern(t, &mut all)).collect();
                            ids.sort_unstable();
                            ids.dedup();
                            Hit::Tests(ids)
                        }
                    },
                })
                .collect();
            map.insert(file, statements);
        }
        CoverageMap {
            tests: all,
            files: map,
            blind: Vec::new(),
            contained: false,
        }
    }
}

/// The lines of `original` (1-based, first and last) that a mutation to
/// `mutated` changes; a pure insertion touches the line it is inserted
/// at. `None` when the bytes are equal.
pub fn changed_lines(original: &[u8], mutated: &[u8]) -> Option<(usize, usize)> {
    if original == mutated {
        return None;
    }
    let head = original
        .iter()
        .zip(mutated)
        .take_while(|(a, b)| a == b)
        .count();
    let room = original.len().min(mutated.len()) - head;
    let tail = original
        .iter()
        .rev()
        .zip(mutated.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    let line_at = |offset: usize| 1 + original[..offset].iter().filter(|&&b| b == b'\n').count();
    let first = line_at(head);
    let end = original.len() - tail;
    let last = if end > head { line_at(end - 1) } else { first };
    Some((first, last.max(first)))
}

/// Queries for incremental runs (`--incremental`): which files what tests
/// executed.
impl CoverageMap {
    /// Whether the map names test `id` (it executed code of the copy).
    pub fn knows_test(&self, id: &str) -> bool {
        self.tests.iter().any(|t| t == id)
    }

    /// The files a statement of which one of `tests` (JUnit ids) executed
    /// under its own name; `None` for every test of the map. Sorted.
    pub fn files_run_by(&self, tests: Option<&[String]>) -> Vec<String> {
        let wanted: Option<Vec<u32>> = tests.map(|ids| {
            (0..self.tests.len() as u32)
                .filter(|&i| ids.contains(&self.tests[i as usize]))
                .collect()
        });
        let mut out: Vec<String> = self
            .files
            .iter()
            .filter(|(_, statements)| {
                statements.iter().any(|s| match (&s.hit, &wanted) {
                    (Hit::Tests(t), None) => !t.is_empty(),
                    (Hit::Tests(t), Some(w)) => t.iter().any(|i| w.contains(i)),
                    (Hit::Everyone, _) => false,
                })
            })
            .map(|(f, _)| f.clone())
            .collect();
        out.sort();
        out
    }

    /// Every file the run measured (it executed some of its code), sorted.
    pub fn measured_files(&self) -> Vec<String> {
        let mut out: Vec<String> = self.files.keys().cloned().collect();
        out.sort();
        out
    }

    /// Per file, the lines (first and last, 1-based) of the statements run
    /// outside any test (imports, module level): code every test may
    /// depend on. Sorted by file; files without such code left out.
    pub fn run_by_everyone(&self) -> Vec<(String, Vec<(usize, usize)>)> {
        let mut out: Vec<(String, Vec<(usize, usize)>)> = self
            .files
            .iter()
            .filter_map(|(f, statements)| {
                let lines: Vec<(usize, usize)> = statements
                    .iter()
                    .filter(|s| s.hit == Hit::Everyone)
                    .map(|s| (s.first, s.last))
                    .collect();
                (!lines.is_empty()).then(|| (f.clone(), lines))
            })
            .collect();
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> CoverageMap {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("map.json");
        std::fs::write(
            &p,
            r#"{"tests": ["t::a", "t::b"], "files": {"app/g.py": [[1, 1, "*"], [5, 5, [0, 1]], [6, 6, [1]], [11, 12, []], [14, 14, []]]}}"#,
        )
        .unwrap();
        CoverageMap::read(&p).unwrap()
    }

    #[test]
    fn lines_map_to_the_tests_that_executed_their_statements() {
        let m = map();
        assert_eq!(
            m.covering("app/g.py", 6, 6),
            Covering::Tests(vec!["t::b".into()])
        );
        assert_eq!(
            m.covering("app/g.py", 5, 6),
            Covering::Tests(vec!["t::a".into(), "t::b".into()])
        );
        // The second line of a two-line condition is that statement's.
        assert_eq!(m.covering("app/g.py", 12, 12), Covering::NoTest);
        assert_eq!(m.covering("app/g.py", 1, 1), Covering::Everyone);
        // No statement on the line (a comment, an `else:`): unknown.
        assert_eq!(m.covering("app/g.py", 8, 9), Covering::Unknown);
        assert_eq!(m.covering("app/other.py", 1, 1), Covering::Unknown);
    }

    #[test]
    fn a_map_decides_for_a_file_only_where_it_is_complete() {
        let m = map();
        // t::a and t::b executed lines of g.py under their own names (lines
        // 5 and 6); line 1 is import-time code, nobody's own.
        assert!(m.credits("app/g.py", "t::a") && m.credits("app/g.py", "t::b"));
        assert!(!m.credits("app/g.py", "t::c") && !m.credits("app/h.py", "t::a"));
        let red = ["t::a".to_string(), "t::b".to_string()];
        assert_eq!(m.trust("app/g.py", CanaryEvidence::Red(&red)), Ok(()));
        let reason = |e: Result<(), Blind>| e.unwrap_err().reason;
        let more = ["t::a".to_string(), "t::c".to_string()];
        assert_eq!(
            reason(m.trust("app/g.py", CanaryEvidence::Red(&more))),
            Distrust::RedTestNotCredited
        );
        assert_eq!(
            reason(m.trust("app/g.py", CanaryEvidence::None)),
            Distrust::NoCanary
        );
        assert_eq!(
            reason(m.trust("app/g.py", CanaryEvidence::Unread)),
            Distrust::CanaryUnread
        );
        // A map that could not see a process decides nothing anywhere.
        let mut blind = map();
        blind.blind.push(BlindSpot {
            test: "t::a".into(),
            argv: vec!["python3".into(), "-m".into(), "srv".into()],
            why: "an env of its own".into(),
        });
        let e = blind
            .trust("app/g.py", CanaryEvidence::Red(&red))
            .unwrap_err();
        assert_eq!(e.reason, Distrust::UnmeasuredProcess);
        assert!(e.detail.contains("python3 -m srv` in t::a"), "{}", e.detail);
        // A contained map (Go) needs no canary, but no blind spot either.
        let go = map().contained();
        assert_eq!(go.trust("app/g.py", CanaryEvidence::Unread), Ok(()));
        assert_eq!(go.trust("app/g.py", CanaryEvidence::None), Ok(()));
    }

    #[test]
    fn a_map_naming_a_test_it_does_not_list_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("map.json");
        std::fs::write(
            &p,
            r#"{"tests": ["t::a"], "files": {"g.py": [[1, 1, [3]]]}}"#,
        )
        .unwrap();
        assert!(CoverageMap::read(&p).is_err());
    }

    #[test]
    fn a_built_map_answers_as_a_read_one() {
        let m = CoverageMap::build(
            vec!["t::a".into()],
            vec![(
                "src/g.js".into(),
                vec![
                    (1, 1, Ran::Everyone),
                    (3, 3, Ran::Tests(vec!["t::b".into(), "t::a".into()])),
                    (4, 4, Ran::Tests(vec![])),
                ],
            )],
        );
        assert_eq!(m.tests(), ["t::a", "t::b"]);
        assert_eq!(
            m.covering("src/g.js", 3, 3),
            Covering::Tests(vec!["t::a".into(), "t::b".into()])
        );
        assert_eq!(m.covering("src/g.js", 4, 4), Covering::NoTest);
        assert_eq!(m.covering("src/g.js", 1, 4), Covering::Everyone);
        assert_eq!(m.covering("src/g.js", 2, 2), Covering::Unknown);
    }

    #[test]
    fn changed_lines_are_the_original_lines_the_bytes_differ_on() {
        let o = b"a\nif x:\n    raise E\nb\n";
        assert_eq!(
            changed_lines(o, b"a\nif False:\n    raise E\nb\n"),
            Some((2, 2))
        );
        assert_eq!(changed_lines(o, b"a\nif x:\n    pass\nb\n"), Some((3, 3)));
        assert_eq!(
            changed_lines(o, b"a\nif x and y:\n    pass\nb\n"),
            Some((2, 3))
        );
        // A deletion of a whole line, and an insertion.
        assert_eq!(changed_lines(o, b"a\nif x:\nb\n"), Some((3, 3)));
        assert_eq!(
            changed_lines(o, b"a\nif x:\n    raise E\n    z\nb\n"),
            Some((4, 4))
        );
        assert_eq!(changed_lines(o, o), None);
    }
    #[test]
    fn files_run_by_tests_and_by_everyone() {
        let m = map();
        assert!(m.knows_test("t::a") && !m.knows_test("t::c"));
        assert_eq!(m.files_run_by(Some(&["t::b".into()])), ["app/g.py"]);
        assert!(m.files_run_by(Some(&["t::c".into()])).is_empty());
        assert_eq!(m.files_run_by(None), ["app/g.py"]);
        assert_eq!(
            m.run_by_everyone(),
            [("app/g.py".to_string(), vec![(1, 1)])]
        );
        assert_eq!(m.measured_files(), ["app/g.py"]);
    }
}
