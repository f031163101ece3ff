//! The Node collector: V8's own coverage (`NODE_V8_COVERAGE`), which needs
//! nothing installed, attributed per test file.
//!
//! For the coverage run only, beside the copy (never in it):
//! - a preload on `NODE_OPTIONS` (appended to the suite's): every Node
//!   process records that it ran and, as a `node --test` child, which test
//!   file it runs; it writes its coverage when it exits or a signal it does
//!   not handle stops it, and hands unguard's variables to the processes it
//!   starts, also those given an environment of their own (an MCP client
//!   starting its server with a few variables);
//! - for `node --test`, a reporter added beside the command's own that
//!   names each test's file.
//!
//! A process's tests: under `node --test`, the baseline's tests named as
//! the reporter named those of its test file (a process a test starts is
//! its test file's too); else the baseline's tests
//! whose JUnit classname is a file the process ran (vitest names tests
//! after their file); else every test (jest). The tests that execute a
//! line are those of the processes that executed it.
//!
//! Lines only for a file V8 ran as written (`.js`, `.mjs`, `.cjs`, its
//! source as long as the file, no source map): a line is executed when a
//! character of code on it is in a range V8 counted (the innermost range
//! decides: a function never called inside a module that ran is not), and
//! a function's first line whenever the code around it ran (its
//! declaration did). A file transformed before it ran (TypeScript, a
//! bundler's or jest's wrapper) is one statement: its tests are those of
//! every process that ran it, and it is never `no-coverage`. A file no
//! process loaded is not in the map (unknown).
//!
//! The map is not used when a process started and never finished (killed
//! by a signal it could not see, `SIGKILL`, or still running), or finished
//! without writing coverage where unguard reads it (`NODE_V8_COVERAGE`
//! changed by the suite, c8).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{BuiltFile, Collected, CoverageMap, Ran};
use crate::error::{Context, Result};
use crate::outcome::reading::model::Report;

/// The preload, written beside the copy.
const PRELOAD: &str = include_str!("node_preload.cjs");
/// The `node --test` reporter, written beside the copy.
const REPORTER: &str = include_str!("node_reporter.mjs");

/// What the Node collector put beside the copy.
#[derive(Debug, Clone)]
pub struct Instrumentation {
    /// The directory holding the preload and the reporter.
    dir: PathBuf,
    /// What the run writes: `v8/` (V8's files), `procs/` (the preload's
    /// records), `tests.jsonl` (the reporter's).
    out: PathBuf,
}

impl Instrumentation {
    /// Write the preload and the reporter beside the copy at `tree`, and
    /// make `out` empty.
    pub fn install(tree: &Path, out: &Path) -> Result<Instrumentation> {
        let holder = tree.parent().unwrap_or(tree);
        let dir = holder.join("unguard-coverage-node");
        let _ = std::fs::remove_dir_all(out);
        for d in [out.join("v8"), out.join("procs"), dir.clone()] {
            std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
        }
        for (name, text) in [("preload.cjs", PRELOAD), ("reporter.mjs", REPORTER)] {
            let p = dir.join(name);
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
        }
        Ok(Instrumentation {
            dir,
            out: out.to_path_buf(),
        })
    }

    /// Take the preload and the reporter away.
    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }

    /// The reporter's options, put after `node --test`'s `--test`.
    pub fn options(&self) -> Vec<String> {
        vec![
            format!(
                "--test-reporter={}",
                self.dir.join("reporter.mjs").display()
            ),
            format!(
                "--test-reporter-destination={}",
                self.out.join("tests.jsonl").display()
            ),
        ]
    }

    /// The run's variables, given the `NODE_OPTIONS` it would have.
    pub fn env(&self, node_options: Option<&str>) -> Vec<(String, String)> {
        let preload = self.dir.join("preload.cjs").display().to_string();
        let require = format!(
            "--require \"{}\"",
            preload.replace('\\', "\\\\").replace('"', "\\\"")
        );
        let options = match node_options.map(str::trim).filter(|o| !o.is_empty()) {
            Some(o) => format!("{o} {require}"),
            None => require.clone(),
        };
        let v8 = self.out.join("v8").display().to_string();
        vec![
            ("NODE_V8_COVERAGE".into(), v8.clone()),
            (
                "UNGUARD_COVERAGE_DIR".into(),
                self.out.display().to_string(),
            ),
            ("UNGUARD_COVERAGE_V8".into(), v8),
            ("UNGUARD_COVERAGE_REQUIRE".into(), require),
            ("NODE_OPTIONS".into(), options),
        ]
    }

    /// The map from what the run wrote, for the copy at `tree`, its tests
    /// named as the baseline's `report` names them.
    pub fn collect(&self, tree: &Path, report: Option<&Report>) -> Collected {
        match self.read(tree, report) {
            Ok(map) => Collected::Map(map),
            Err(why) => Collected::NoMap(why),
        }
    }

    fn read(
        &self,
        tree: &Path,
        report: Option<&Report>,
    ) -> std::result::Result<CoverageMap, String> {
        let procs = read_procs(&self.out.join("procs"))?;
        let coverage = read_v8(&self.out.join("v8"))?;
        for (pid, p) in &procs {
            if !p.done {
                return Err(format!(
                    "a Node process of the run (pid {pid}{}) did not exit (stopped by a signal it could not see, or still running): what it executed is unknown",
                    p.file.as_ref().map(|f| format!(", {}", f.display())).unwrap_or_default()
                ));
            }
            if !p.runner && !coverage.contains_key(pid) {
                return Err(format!(
                    "a Node process of the run (pid {pid}) wrote no coverage where unguard reads it (NODE_V8_COVERAGE changed by the suite or a wrapper such as c8?)"
                ));
            }
        }
        let named = read_reporter(&self.out.join("tests.jsonl"));
        let root = tree.canonicalize().unwrap_or_else(|_| tree.to_path_buf());
        let mut sources = Sources::default();
        let mut all_tests: BTreeSet<String> = BTreeSet::new();
        let mut runs: BTreeMap<String, Vec<FileRun>> = BTreeMap::new();
        for (pid, scripts) in coverage {
            let mut mine: Vec<(String, ScriptRun)> = Vec::new();
            for s in scripts {
                let Some(rel) = copy_path(&s.url, &root) else {
                    continue;
                };
                let Some(text) = sources.get(&root, &rel) else {
                    continue;
                };
                mine.push((rel.clone(), ScriptRun::of(&s, &text, &rel)));
            }
            if mine.is_empty() {
                continue;
            }
            let file = procs.get(&pid).and_then(|p| p.file.clone());
            let ran: Vec<&str> = mine.iter().map(|(r, _)| r.as_str()).collect();
            let tests = tests_of(file.as_deref(), &ran, &named, report);
            match &tests {
                Some(t) => all_tests.extend(t.iter().cloned()),
                None => all_tests.extend(
                    report
                        .into_iter()
                        .flat_map(|r| r.cases.iter().map(|c| c.id())),
                ),
            }
            for (rel, run) in mine {
                runs.entry(rel).or_default().push((tests.clone(), run));
            }
        }
        let mut files: Vec<BuiltFile> = Vec::new();
        for (rel, file_runs) in runs {
            let text = sources.get(&root, &rel).unwrap_or_default();
            files.push((rel, statements(&text, &file_runs)));
        }
        Ok(CoverageMap::build(all_tests.into_iter().collect(), files))
    }
}

/// One process's run of a file: its tests (`None`: every test) and what
/// it showed.
type FileRun = (Option<Vec<String>>, ScriptRun);

/// What the preload recorded of one process.
#[derive(Debug, Default)]
struct Proc {
    /// The `node --test` runner itself (it runs no test file, and writes
    /// no coverage of its own).
    runner: bool,
    /// The test file a `node --test` child runs.
    file: Option<PathBuf>,
    done: bool,
}

#[derive(Deserialize)]
struct StartRecord {
    #[serde(default)]
    runner: bool,
    #[serde(default)]
    file: Option<PathBuf>,
}

fn read_procs(dir: &Path) -> std::result::Result<BTreeMap<u32, Proc>, String> {
    let mut procs: BTreeMap<u32, Proc> = BTreeMap::new();
    for e in std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
    {
        let name = e.file_name().to_string_lossy().to_string();
        let Some((pid, kind)) = name.split_once('.') else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let p = procs.entry(pid).or_default();
        match kind {
            "start" => {
                if let Ok(r) = std::fs::read_to_string(e.path())
                    .map_err(|_| ())
                    .and_then(|t| serde_json::from_str::<StartRecord>(&t).map_err(|_| ()))
                {
                    p.runner = r.runner;
                    p.file = r.file;
                }
            }
            "done" => p.done = true,
            _ => {}
        }
    }
    if procs.is_empty() {
        return Err("no Node process of the run loaded unguard's preload (the suite replaced NODE_OPTIONS?)".into());
    }
    Ok(procs)
}

/// One script of a V8 coverage file.
#[derive(Debug, Deserialize)]
struct Script {
    url: String,
    functions: Vec<Function>,
    /// Set when Node read a source map for it (the code that ran is not the file).
    #[serde(skip)]
    mapped: bool,
}

#[derive(Debug, Deserialize)]
struct Function {
    ranges: Vec<Range>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Range {
    start_offset: usize,
    end_offset: usize,
    count: u64,
}

#[derive(Deserialize)]
struct V8File {
    result: Vec<Script>,
    #[serde(rename = "source-map-cache", default)]
    source_maps: HashMap<String, serde_json::Value>,
}

/// Parse one V8 coverage file (`coverage-<pid>-….json`).
fn parse_v8(text: &str) -> std::result::Result<Vec<Script>, String> {
    let f: V8File = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut scripts = f.result;
    for s in &mut scripts {
        s.mapped = f.source_maps.contains_key(&s.url);
    }
    Ok(scripts)
}

/// Every V8 coverage file of the run, by process id.
fn read_v8(dir: &Path) -> std::result::Result<BTreeMap<u32, Vec<Script>>, String> {
    let mut by_pid: BTreeMap<u32, Vec<Script>> = BTreeMap::new();
    for e in std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
    {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name
            .strip_prefix("coverage-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let text = std::fs::read_to_string(e.path()).map_err(|e| format!("{name}: {e}"))?;
        let scripts = parse_v8(&text).map_err(|e| format!("V8 coverage file {name}: {e}"))?;
        by_pid.entry(pid).or_default().extend(scripts);
    }
    Ok(by_pid)
}

/// The reporter's (test file, test name) pairs.
fn read_reporter(path: &Path) -> Vec<(PathBuf, String)> {
    #[derive(Deserialize)]
    struct Named {
        file: Option<PathBuf>,
        name: String,
    }
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Named>(l).ok())
        .filter_map(|n| Some((n.file?, n.name)))
        .collect()
}

/// The baseline's tests a process ran: those of its `node --test` test
/// `file` (by the names the reporter gave), else those whose classname is
/// a file it `ran`; `None` (every test) when neither names one.
fn tests_of(
    file: Option<&Path>,
    ran: &[&str],
    named: &[(PathBuf, String)],
    report: Option<&Report>,
) -> Option<Vec<String>> {
    let report = report?;
    let mut ids: BTreeSet<String> = BTreeSet::new();
    if let Some(file) = file {
        let names: HashSet<&str> = named
            .iter()
            .filter(|(f, _)| f == file)
            .map(|(_, n)| n.as_str())
            .collect();
        ids.extend(
            report
                .cases
                .iter()
                .filter(|c| names.contains(c.name.as_str()))
                .map(|c| c.id()),
        );
    }
    if ids.is_empty() {
        let ran: HashSet<&str> = ran.iter().copied().collect();
        ids.extend(
            report
                .cases
                .iter()
                .filter(|c| ran.contains(c.classname.trim_start_matches("./")))
                .map(|c| c.id()),
        );
    }
    (!ids.is_empty()).then(|| ids.into_iter().collect())
}

/// The copy-relative path of a script's `file://` URL, when it is a file
/// of the copy at `root` (outside `node_modules`).
fn copy_path(url: &str, root: &Path) -> Option<String> {
    let path = PathBuf::from(percent_decode(url.strip_prefix("file://")?));
    let rel = path.strip_prefix(root).ok()?;
    let rel = rel.to_str()?.replace('\\', "/");
    (!rel.split('/').any(|p| p == "node_modules") && !rel.is_empty()).then_some(rel)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The copy's files, read once each.
#[derive(Default)]
struct Sources(HashMap<String, Option<String>>);

impl Sources {
    fn get(&mut self, root: &Path, rel: &str) -> Option<String> {
        self.0
            .entry(rel.to_string())
            .or_insert_with(|| std::fs::read_to_string(root.join(rel)).ok())
            .clone()
    }
}

/// What one process's run of one file showed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ScriptRun {
    /// Run as written: the lines (1-based) it executed.
    Lines(BTreeSet<usize>),
    /// Transformed before it ran: whether any of it ran.
    Whole(bool),
}

impl ScriptRun {
    /// What `script` (the file `rel`, whose text is `text`) shows.
    fn of(script: &Script, text: &str, rel: &str) -> ScriptRun {
        let source = text.strip_prefix('\u{feff}').unwrap_or(text);
        let len: usize = source.chars().map(char::len_utf16).sum();
        let top = script
            .functions
            .iter()
            .filter_map(|f| f.ranges.first())
            .find(|r| r.start_offset == 0 && r.end_offset >= len);
        let plain = [".js", ".mjs", ".cjs"].iter().any(|e| rel.ends_with(e));
        let ran = script
            .functions
            .iter()
            .filter_map(|f| f.ranges.first())
            .any(|r| r.count > 0);
        match top {
            Some(t) if plain && !script.mapped && t.end_offset == len => {
                ScriptRun::Lines(executed_lines(source, &script.functions))
            }
            _ => ScriptRun::Whole(ran),
        }
    }
}

/// The lines of `source` V8's `functions` show executed: a character of
/// code on the line in a range with a count (the innermost range that
/// holds it decides), or a function's first line when the code around the
/// function ran.
fn executed_lines(source: &str, functions: &[Function]) -> BTreeSet<usize> {
    let len: usize = source.chars().map(char::len_utf16).sum();
    let mut ranges: Vec<(usize, usize, bool, Range)> = Vec::new();
    for (fi, f) in functions.iter().enumerate() {
        for (ri, r) in f.ranges.iter().enumerate() {
            ranges.push((fi, ri, ri == 0 && r.start_offset > 0, *r));
        }
    }
    // Outer ranges first, so inner ones overwrite them.
    ranges.sort_by_key(|(fi, ri, _, r)| {
        (
            std::cmp::Reverse(r.end_offset.saturating_sub(r.start_offset)),
            *fi,
            *ri,
        )
    });
    let mut count = vec![0u64; len + 1];
    let mut headers: Vec<usize> = Vec::new();
    for (_, _, function, r) in &ranges {
        let (s, e) = (r.start_offset.min(len), r.end_offset.min(len));
        if *function && count[s] > 0 {
            headers.push(s);
        }
        count[s..e].iter_mut().for_each(|c| *c = r.count);
    }
    let mut lines = BTreeSet::new();
    let mut line = 1;
    let mut offset = 0;
    let headers: HashSet<usize> = headers.into_iter().collect();
    for ch in source.chars() {
        if ch == '\n' {
            line += 1;
        } else if !ch.is_whitespace() && (count[offset] > 0 || headers.contains(&offset)) {
            lines.insert(line);
        }
        offset += ch.len_utf16();
    }
    lines
}

/// Whether a line of JavaScript holds code (not blank, not a comment
/// line, not only closing brackets).
fn is_code(line: &str) -> bool {
    let t = line.trim();
    !(t.is_empty()
        || t.starts_with("//")
        || t.starts_with("/*")
        || t.starts_with('*')
        || t.chars().all(|c| "})];,".contains(c)))
}

/// The statements of one file of the copy (`text`) from every process's
/// run of it (with that process's tests; `None`: every test).
fn statements(text: &str, runs: &[FileRun]) -> Vec<(usize, usize, Ran)> {
    let union = |who: Vec<&Option<Vec<String>>>| -> Ran {
        if who.iter().any(|t| t.is_none()) {
            return Ran::Everyone;
        }
        let mut ids: Vec<String> = who.into_iter().flatten().flatten().cloned().collect();
        ids.sort();
        ids.dedup();
        Ran::Tests(ids)
    };
    let source = text.strip_prefix('\u{feff}').unwrap_or(text);
    let n = source.lines().count().max(1);
    if runs.iter().any(|(_, r)| matches!(r, ScriptRun::Whole(_))) {
        // Transformed somewhere: the file as one statement, never
        // `no-coverage` (the processes that loaded it, or everyone).
        let who: Vec<&Option<Vec<String>>> = runs
            .iter()
            .filter(|(_, r)| !matches!(r, ScriptRun::Whole(false)))
            .map(|(t, _)| t)
            .collect();
        let ran = match union(who) {
            Ran::Tests(t) if t.is_empty() => Ran::Everyone,
            r => r,
        };
        return vec![(1, n, ran)];
    }
    source
        .lines()
        .enumerate()
        .filter(|(_, l)| is_code(l))
        .map(|(i, _)| {
            let line = i + 1;
            let who: Vec<&Option<Vec<String>>> = runs
                .iter()
                .filter(|(_, r)| matches!(r, ScriptRun::Lines(l) if l.contains(&line)))
                .map(|(t, _)| t)
                .collect();
            (line, line, union(who))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str =
        "function a(x){ return x+1 }\nfunction b(x){ return x+2 }\nmodule.exports={a,b}\n";

    fn v8(text: &str) -> Vec<Script> {
        parse_v8(text).unwrap()
    }

    #[test]
    fn v8_ranges_give_the_lines_a_process_executed() {
        // As Node 20 writes it for SRC: `a` called twice, `b` never (its
        // line still holds its declaration, which ran).
        let s = v8(
            r#"{"result":[{"scriptId":"1","url":"file:///r/src/g.js","functions":[
            {"functionName":"","ranges":[{"startOffset":0,"endOffset":77,"count":1}],"isBlockCoverage":true},
            {"functionName":"a","ranges":[{"startOffset":0,"endOffset":27,"count":2}],"isBlockCoverage":true},
            {"functionName":"b","ranges":[{"startOffset":28,"endOffset":55,"count":0}],"isBlockCoverage":false}]}]}"#,
        );
        assert_eq!(
            ScriptRun::of(&s[0], SRC, "src/g.js"),
            ScriptRun::Lines([1, 2, 3].into())
        );
        // A block never entered inside a function that ran, and the first
        // line of a function never called in code that ran.
        let src = "function f(x) {\n  if (x) {\n    throw new Error('no');\n  }\n  return 1;\n}\nfunction g() {\n  return 2;\n}\n";
        let len = src.len();
        let text = format!(
            r#"{{"result":[{{"url":"file:///r/f.js","functions":[
            {{"ranges":[{{"startOffset":0,"endOffset":{len},"count":1}}]}},
            {{"ranges":[{{"startOffset":0,"endOffset":71,"count":3}},{{"startOffset":25,"endOffset":57,"count":0}}]}},
            {{"ranges":[{{"startOffset":72,"endOffset":100,"count":0}}]}}]}}]}}"#
        );
        let s = v8(&text);
        assert_eq!(
            ScriptRun::of(&s[0], src, "f.js"),
            ScriptRun::Lines([1, 2, 5, 6, 7].into())
        );
    }

    #[test]
    fn a_transformed_file_is_one_statement_never_no_coverage() {
        // Longer than the file (a wrapper), or TypeScript: file-level.
        let s = v8(r#"{"result":[{"url":"file:///r/src/g.ts","functions":[
            {"ranges":[{"startOffset":0,"endOffset":500,"count":1}]},
            {"ranges":[{"startOffset":40,"endOffset":80,"count":0}]}]}]}"#);
        let run = ScriptRun::of(&s[0], SRC, "src/g.ts");
        assert_eq!(run, ScriptRun::Whole(true));
        let st = statements(SRC, &[(Some(vec!["test::t".into()]), run)]);
        assert_eq!(st, vec![(1, 3, Ran::Tests(vec!["test::t".into()]))]);
        // Loaded by a process whose tests are unknown, or with no tests: everyone.
        let st = statements(SRC, &[(Some(vec![]), ScriptRun::Whole(true))]);
        assert_eq!(st, vec![(1, 3, Ran::Everyone)]);
        // A source map: the code that ran is not the file's.
        let s = v8(r#"{"result":[{"url":"file:///r/src/g.js","functions":[
            {"ranges":[{"startOffset":0,"endOffset":77,"count":1}]}]}],
            "source-map-cache":{"file:///r/src/g.js":{"lineLengths":[1]}}}"#);
        assert_eq!(
            ScriptRun::of(&s[0], SRC, "src/g.js"),
            ScriptRun::Whole(true)
        );
    }

    #[test]
    fn lines_no_process_executed_name_no_test() {
        let t = |s: &str| Some(vec![s.to_string()]);
        let runs = vec![
            (t("test::one"), ScriptRun::Lines([1, 3].into())),
            (t("test::two"), ScriptRun::Lines([3].into())),
        ];
        let st = statements(SRC, &runs);
        assert_eq!(
            st,
            vec![
                (1, 1, Ran::Tests(vec!["test::one".into()])),
                (2, 2, Ran::Tests(vec![])),
                (
                    3,
                    3,
                    Ran::Tests(vec!["test::one".into(), "test::two".into()])
                ),
            ]
        );
    }

    #[test]
    fn urls_of_the_copy_are_relative_paths_outside_node_modules() {
        let root = Path::new("/w/my copy");
        assert_eq!(
            copy_path("file:///w/my%20copy/src/g.js", root).as_deref(),
            Some("src/g.js")
        );
        assert_eq!(
            copy_path("file:///w/my%20copy/node_modules/x/i.js", root),
            None
        );
        assert_eq!(copy_path("node:internal/x", root), None);
        assert_eq!(copy_path("file:///elsewhere/g.js", root), None);
    }
}
