//! The output directory (`--out`, `unguard.out/` by default): made, or
//! cleared only when unguard made it, and the name of every file a run
//! writes there (diffs and logs per mutant, canary and baseline logs).

use std::path::Path;

use crate::error::{Context, Error, Result};
use crate::results::MutantResult;

/// The file that marks a directory as unguard's own (safe to clear).
pub const MARKER: &str = ".unguard-out";

/// Create (or reuse) the output directory. An existing directory is only
/// cleared when unguard made it (it holds the [`MARKER`]); any other
/// non-empty directory is refused.
pub fn prepare(out: &Path) -> Result<()> {
    if out.exists() {
        let is_ours = out.join(MARKER).exists();
        let empty = std::fs::read_dir(out)
            .with_context(|| format!("reading {}", out.display()))?
            .next()
            .is_none();
        if !is_ours && !empty {
            return Err(Error::Usage(format!(
                "output directory {} exists and was not made by unguard; refusing to clear it (choose another --out)",
                out.display()
            )));
        }
        if is_ours {
            std::fs::remove_dir_all(out).with_context(|| format!("clearing {}", out.display()))?;
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    std::fs::write(out.join(MARKER), "made by unguard; cleared on every run\n")
        .with_context(|| format!("writing {}", out.join(MARKER).display()))?;
    Ok(())
}

/// The unified diff of mutant `id`.
pub fn diff_name(id: &str) -> String {
    format!("{id}.diff")
}

/// The suite's log for mutant `id`.
pub fn log_name(id: &str) -> String {
    format!("{id}.log")
}

/// The `test.check` log for mutant `id`.
pub fn check_log_name(id: &str) -> String {
    format!("{id}.check.log")
}

/// The log of re-check `k` (1-based) of survivor `id`.
pub fn recheck_log_name(id: &str, k: usize) -> String {
    format!("{id}.recheck-{k}.log")
}

/// The log of the canary that empties `file` under test config `test` (of `n_tests`).
pub fn canary_log_name(file: &str, test: usize, n_tests: usize) -> String {
    if n_tests == 1 {
        format!("canary-{}.log", sanitize(file))
    } else {
        format!("canary-{}-{}.log", sanitize(file), test + 1)
    }
}

/// The log of baseline run `k` (1-based) of test config `i` (of `n_tests`).
pub fn baseline_log_name(i: usize, n_tests: usize, k: usize) -> String {
    let stem = if n_tests == 1 {
        "baseline".to_string()
    } else {
        format!("baseline-{}", i + 1)
    };
    if k == 1 {
        format!("{stem}.log")
    } else {
        format!("{stem}.run{k}.log")
    }
}

/// Remove every file a mutant's run left in `out` (its verdict was
/// replaced: what the run showed proves nothing).
pub fn discard_mutant_files(out: &Path, r: &MutantResult, rechecks: usize) {
    for name in [&r.diff_file, &r.log_file].into_iter().flatten() {
        let _ = std::fs::remove_file(out.join(name));
    }
    let _ = std::fs::remove_file(out.join(check_log_name(&r.id)));
    for k in 1..=rechecks {
        let _ = std::fs::remove_file(out.join(recheck_log_name(&r.id, k)));
    }
}

/// A file name from a path: ASCII letters, digits, `.` and `-` stay, the rest become `_`.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(canary_log_name("src/a b.py", 0, 1), "canary-src_a_b.py.log");
        assert_eq!(canary_log_name("src/a.py", 1, 2), "canary-src_a.py-2.log");
        assert_eq!(baseline_log_name(0, 1, 1), "baseline.log");
        assert_eq!(baseline_log_name(1, 2, 3), "baseline-2.run3.log");
        assert_eq!(recheck_log_name("m", 2), "m.recheck-2.log");
    }

    #[test]
    fn refuses_to_clear_a_directory_it_did_not_make() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("precious"), "x").unwrap();
        let e = prepare(&out).unwrap_err();
        assert!(e.to_string().contains("refusing to clear it"), "{e}");
        assert!(out.join("precious").exists());
        std::fs::remove_file(out.join("precious")).unwrap();
        prepare(&out).unwrap();
        std::fs::write(out.join("old.log"), "x").unwrap();
        prepare(&out).unwrap();
        assert!(!out.join("old.log").exists(), "ours: cleared");
        assert!(out.join(MARKER).exists());
    }
}
