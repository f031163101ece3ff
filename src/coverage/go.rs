//! The Go collector: `go test -coverprofile`, per package.
//!
//! The coverage run is the suite's `go test` command with options of
//! unguard's own at its end: `-coverpkg=./...` (every package of the
//! module is measured in every test binary), `-coverprofile`, `-count=1`
//! (a cached result runs no binary) and `-exec` with a script beside the
//! copy that runs each test binary and keeps its profile, named after the
//! package directory it ran in (`go test` runs a binary there). The tests
//! that execute a block are the baseline's tests of the packages whose
//! binary executed it: a test of the package, or its `init`.
//!
//! A `_test.go` file that imports `os/exec` makes the map unusable: the
//! lines a process it starts runs are in no profile.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{BuiltFile, Collected, CoverageMap, Ran};
use crate::error::{Context, Result};
use crate::outcome::reading::model::Report;

/// The `-exec` script: runs the test binary, then keeps its profile and
/// the directory it ran in under `$UNGUARD_COVERAGE_DIR/profiles`.
const EXEC: &str = r#"#!/bin/sh
# Written by unguard (outside your checkout) for its coverage run only: go
# test's -exec program. It runs the test binary, then keeps its coverage
# profile and the package directory it ran in.
"$@"
rc=$?
for a in "$@"; do
  case $a in
    -test.coverprofile=*)
      d="$UNGUARD_COVERAGE_DIR/profiles"
      cp "${a#-test.coverprofile=}" "$d/$$.cov" 2>/dev/null && pwd > "$d/$$.dir"
      ;;
  esac
done
exit $rc
"#;

/// What the Go collector put beside the copy.
#[derive(Debug, Clone)]
pub struct Instrumentation {
    /// The directory holding the `-exec` script.
    dir: PathBuf,
    /// `profiles/` (the script's) and `merged.out` (go test's own).
    out: PathBuf,
}

impl Instrumentation {
    /// Write the `-exec` script beside the copy at `tree`; make `out` empty.
    pub fn install(tree: &Path, out: &Path) -> Result<Instrumentation> {
        let holder = tree.parent().unwrap_or(tree);
        let dir = holder.join("unguard-coverage-go");
        let _ = std::fs::remove_dir_all(out);
        for d in [out.join("profiles"), dir.clone()] {
            std::fs::create_dir_all(&d).with_context(|| format!("creating {}", d.display()))?;
        }
        let script = dir.join("exec.sh");
        std::fs::write(&script, EXEC).with_context(|| format!("writing {}", script.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
                .with_context(|| format!("making {} executable", script.display()))?;
        }
        Ok(Instrumentation {
            dir,
            out: out.to_path_buf(),
        })
    }

    /// Take the script away.
    pub fn remove(&self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }

    /// The options at the end of the `go test` command.
    pub fn options(&self) -> Vec<String> {
        let script = self.dir.join("exec.sh").display().to_string();
        // go splits -exec's value at spaces, with quotes kept together.
        let script = if script.contains(char::is_whitespace) {
            format!("'{script}'")
        } else {
            script
        };
        vec![
            "-coverpkg=./...".into(),
            format!("-coverprofile={}", self.out.join("merged.out").display()),
            "-count=1".into(),
            format!("-exec={script}"),
        ]
    }

    /// The run's variables.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![(
            "UNGUARD_COVERAGE_DIR".into(),
            self.out.display().to_string(),
        )]
    }

    /// The map from the profiles the run kept, for the copy at `tree`, its
    /// tests named as the baseline's `report` names them.
    pub fn collect(&self, tree: &Path, report: Option<&Report>) -> Collected {
        match self.read(tree, report) {
            Ok(m) => Collected::Map(m),
            Err(why) => Collected::NoMap(why),
        }
    }

    fn read(
        &self,
        tree: &Path,
        report: Option<&Report>,
    ) -> std::result::Result<CoverageMap, String> {
        if let Some(why) = starts_processes(tree) {
            return Err(why);
        }
        let module = module_path(tree)?;
        let root = tree.canonicalize().unwrap_or_else(|_| tree.to_path_buf());
        let dir = self.out.join("profiles");
        let mut blocks: BTreeMap<(String, Block), Option<BTreeSet<String>>> = BTreeMap::new();
        let mut all: BTreeSet<String> = BTreeSet::new();
        let mut profiles = 0;
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_none_or(|x| x != "cov") {
                continue;
            }
            let ran_in = std::fs::read_to_string(path.with_extension("dir")).unwrap_or_default();
            let ran_in = Path::new(ran_in.trim());
            let package = match ran_in
                .strip_prefix(&root)
                .or_else(|_| ran_in.strip_prefix(tree))
            {
                Ok(rel) if rel.as_os_str().is_empty() => module.clone(),
                Ok(rel) => format!("{module}/{}", rel.display()),
                Err(_) => continue,
            };
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let rows =
                parse_profile(&text).map_err(|e| format!("coverage profile of {package}: {e}"))?;
            profiles += 1;
            // The package's tests; none named: every test (its binary ran
            // code the report does not attribute).
            let tests: Option<BTreeSet<String>> = report.and_then(|r| {
                let ids: BTreeSet<String> = r
                    .cases
                    .iter()
                    .filter(|c| c.classname == package)
                    .map(|c| c.id())
                    .collect();
                (!ids.is_empty()).then_some(ids)
            });
            match &tests {
                Some(t) => all.extend(t.iter().cloned()),
                None => all.extend(
                    report
                        .into_iter()
                        .flat_map(|r| r.cases.iter().map(|c| c.id())),
                ),
            }
            for (file, block, count) in rows {
                let Some(rel) = file.strip_prefix(&format!("{module}/")) else {
                    continue;
                };
                let entry = blocks
                    .entry((rel.to_string(), block))
                    .or_insert_with(|| Some(BTreeSet::new()));
                if count > 0 {
                    match (&tests, entry.as_mut()) {
                        (Some(t), Some(set)) => set.extend(t.iter().cloned()),
                        (None, _) => *entry = None,
                        (Some(_), None) => {}
                    }
                }
            }
        }
        if profiles == 0 {
            return Err("no test binary left a coverage profile (go test ran none, or not through unguard's -exec script)".into());
        }
        let mut files: BTreeMap<String, Vec<(usize, usize, Ran)>> = BTreeMap::new();
        for ((file, b), who) in blocks {
            let ran = match who {
                None => Ran::Everyone,
                Some(t) => Ran::Tests(t.into_iter().collect()),
            };
            files
                .entry(file)
                .or_default()
                .push((b.start_line, b.end_line, ran));
        }
        let files: Vec<BuiltFile> = files.into_iter().collect();
        Ok(CoverageMap::build(all.into_iter().collect(), files).contained())
    }
}

/// One block of a profile: `startLine.col,endLine.col`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Block {
    start_line: usize,
    start_col: usize,
    end_line: usize,
    end_col: usize,
}

/// The rows of a coverage profile: (file as the module names it, block,
/// count). The first line is `mode: …`.
fn parse_profile(text: &str) -> std::result::Result<Vec<(String, Block, u64)>, String> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || (i == 0 && line.starts_with("mode:")) {
            continue;
        }
        let bad = || format!("line {}: `{line}` is not `file:l.c,l.c stmts count`", i + 1);
        let (file, rest) = line.rsplit_once(':').ok_or_else(bad)?;
        let mut words = rest.split_whitespace();
        let (span, _stmts, count) = (
            words.next().ok_or_else(bad)?,
            words.next().ok_or_else(bad)?,
            words.next().ok_or_else(bad)?,
        );
        let (from, to) = span.split_once(',').ok_or_else(bad)?;
        let pos = |p: &str| -> Option<(usize, usize)> {
            let (l, c) = p.split_once('.')?;
            Some((l.parse().ok()?, c.parse().ok()?))
        };
        let ((sl, sc), (el, ec)) = (pos(from).ok_or_else(bad)?, pos(to).ok_or_else(bad)?);
        let count: u64 = count.parse().map_err(|_| bad())?;
        rows.push((
            file.to_string(),
            Block {
                start_line: sl,
                start_col: sc,
                end_line: el,
                end_col: ec,
            },
            count,
        ));
    }
    Ok(rows)
}

/// The module path `go.mod` at the root of `tree` declares.
fn module_path(tree: &Path) -> std::result::Result<String, String> {
    let text = std::fs::read_to_string(tree.join("go.mod")).map_err(|e| {
        format!("no go.mod at the root of the copy ({e}): profiles name files by module path")
    })?;
    text.lines()
        .find_map(|l| l.trim().strip_prefix("module "))
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .ok_or_else(|| "go.mod declares no module".into())
}

/// Why the map cannot be trusted because a test starts processes: the
/// first `_test.go` of `tree` that imports `os/exec` (file and line).
fn starts_processes(tree: &Path) -> Option<String> {
    let mut stack = vec![tree.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().to_string();
            let path = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                if !name.starts_with('.') && name != "vendor" && name != "testdata" {
                    stack.push(path);
                }
            } else if name.ends_with("_test.go") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                if let Some(n) = text.lines().position(|l| l.contains("\"os/exec\"")) {
                    let rel = path.strip_prefix(tree).unwrap_or(&path);
                    return Some(format!(
                        "{}:{} imports os/exec: the lines a process a test starts runs are in no coverage profile",
                        rel.display(),
                        n + 1
                    ));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_rows_are_blocks_with_counts() {
        let rows = parse_profile(
            "mode: set\nexample.com/m/a/a.go:3.29,4.17 1 1\nexample.com/m/a/a.go:10.24,12.2 1 0\n",
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].0, "example.com/m/a/a.go");
        assert_eq!(
            rows[1].1,
            Block {
                start_line: 10,
                start_col: 24,
                end_line: 12,
                end_col: 2
            }
        );
        assert_eq!((rows[0].2, rows[1].2), (1, 0));
        assert!(parse_profile("mode: set\nexample.com/m/a.go:3.29 1 1\n").is_err());
        assert!(parse_profile("mode: set\nexample.com/m/a.go:3.2,4.1 1 x\n").is_err());
    }

    #[test]
    fn a_test_that_imports_os_exec_is_named() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("p")).unwrap();
        std::fs::write(d.path().join("p/a.go"), "package p\nimport \"os/exec\"\n").unwrap();
        assert_eq!(starts_processes(d.path()), None);
        std::fs::write(
            d.path().join("p/a_test.go"),
            "package p\n\nimport (\n\t\"os/exec\"\n)\n",
        )
        .unwrap();
        let why = starts_processes(d.path()).unwrap();
        assert!(why.starts_with("p/a_test.go:4 imports os/exec"), "{why}");
    }

    #[test]
    fn the_module_path_comes_from_go_mod() {
        let d = tempfile::tempdir().unwrap();
        assert!(module_path(d.path()).is_err());
        std::fs::write(d.path().join("go.mod"), "module example.com/m\n\ngo 1.19\n").unwrap();
        assert_eq!(module_path(d.path()).unwrap(), "example.com/m");
    }
}
