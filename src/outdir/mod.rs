//! The output directory (`--out`, `unguard.out/` by default): locked for
//! the whole run, made, or cleared only when unguard made it, and the name
//! of every file a run writes there.
//!
//! Names are injective: no two things a run writes share one. A mutant's
//! files start with its id (`ID.diff`, `ID.log`, `ID@check.log`,
//! `ID@recheck-K.log`, `ID@recheck-K-whole-subset.log`,
//! `ID@recheck-K-whole-suite.log`, `ID@subset-K.log`); ids use letters, digits, `-`, `_` and `.` only, so
//! the `@` tells a mutant's own logs apart, and unguard's own logs start
//! with `@` (`@baseline.log`, `@canary-app+auth.py.log`), which no id does.
//! A canary's file is escaped without loss: `/` becomes `+`, any byte but a
//! letter, digit, `.`, `_` or `-` becomes `%XX`.
//!
//! - [`lock`]: one run per output dir;
//! - [`space`]: room for the results, and a write that fails stops the run.

mod lock;
pub mod space;

use std::path::Path;

pub use space::{release_reserve, write_failure, WriteFailure, RESERVE};

use crate::error::{Context, Error, FlagError, Result};
use crate::results::MutantResult;

/// The file that marks a directory as unguard's own (safe to clear); it
/// also names the run that holds the directory.
pub const MARKER: &str = ".unguard-out";
/// The marker's first line.
const MARKER_HEAD: &str = "made by unguard; cleared on every run\n";

/// Lock the output directory for the rest of this process (or fail at once,
/// naming the run that holds it), then make it, or clear it when unguard
/// made it (it holds the [`MARKER`]); any other non-empty directory is
/// refused. The directory itself is kept (its lock is on it): only what is
/// in it goes.
pub fn prepare(out: &Path) -> Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    if let lock::Locked::Busy = lock::lock(out)? {
        return Err(busy(out));
    }
    let is_ours = out.join(MARKER).exists();
    let empty = std::fs::read_dir(out)
        .with_context(|| format!("reading {}", out.display()))?
        .next()
        .is_none();
    if !is_ours && !empty {
        lock::release(out);
        return Err(FlagError::ForeignOutDir(out.to_path_buf()).into());
    }
    if is_ours {
        clear(out)?;
    }
    // Written whole, then renamed: a run that finds the dir locked reads
    // either the old record or this one, never half of one.
    let tmp = out.join(format!("{MARKER}.tmp"));
    let marker = out.join(MARKER);
    std::fs::write(&tmp, format!("{MARKER_HEAD}{}", lock::holder_record()))
        .and_then(|()| std::fs::rename(&tmp, &marker))
        .with_context(|| format!("writing {}", marker.display()))?;
    Ok(())
}

/// The error of a run that finds `out` locked by another.
fn busy(out: &Path) -> Error {
    let record = std::fs::read_to_string(out.join(MARKER)).unwrap_or_default();
    Error::OutDirBusy(format!(
        "{} is in use by another unguard run ({}); wait for it to finish, or pass --out DIR",
        out.display(),
        lock::describe_holder(&record)
    ))
}

/// Remove everything in `out` but the marker. An output dir of another run
/// inside it (an audit portfolio's) is left alone while that run holds it.
fn clear(out: &Path) -> Result<()> {
    let reading = || format!("reading {}", out.display());
    for entry in std::fs::read_dir(out).with_context(reading)? {
        let entry = entry.with_context(reading)?;
        if entry.file_name() == MARKER {
            continue;
        }
        let path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        let removed = if is_dir {
            if path.join(MARKER).exists() && lock::busy_elsewhere(&path) {
                return Err(busy(&path));
            }
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        removed.with_context(|| format!("clearing {}", path.display()))?;
    }
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
    format!("{id}@check.log")
}

/// The log of re-check `k` (1-based) of survivor `id`.
pub fn recheck_log_name(id: &str, k: usize) -> String {
    format!("{id}@recheck-{k}.log")
}

/// The log of re-check `k` (1-based) of kill `id` by the whole kill-first
/// subset once more, after its red tests alone did not go red again.
pub fn recheck_whole_subset_log_name(id: &str, k: usize) -> String {
    format!("{id}@recheck-{k}-whole-subset.log")
}

/// The log of re-check `k` (1-based) of kill `id` by the whole suite once
/// more, after its red tests alone did not go red again.
pub fn recheck_whole_suite_log_name(id: &str, k: usize) -> String {
    format!("{id}@recheck-{k}-whole-suite.log")
}

/// The log of subset run `k` (1-based) of mutant `id` (kill-first).
pub fn subset_log_name(id: &str, k: usize) -> String {
    format!("{id}@subset-{k}.log")
}

/// The log of subset check `k` (1-based): a subset of the suite run on the
/// unmutated copy.
pub fn subset_check_log_name(k: usize) -> String {
    format!("@subset-check-{k}.log")
}

/// The log of the canary that empties `file` under test config `test` (of `n_tests`).
pub fn canary_log_name(file: &str, test: usize, n_tests: usize) -> String {
    if n_tests == 1 {
        format!("@canary-{}.log", escape_path(file))
    } else {
        format!("@canary-{}@{}.log", escape_path(file), test + 1)
    }
}

/// The log of the coverage run of test config `i` (of `n_tests`).
pub fn coverage_log_name(i: usize, n_tests: usize) -> String {
    if n_tests == 1 {
        "@coverage.log".to_string()
    } else {
        format!("@coverage-{}.log", i + 1)
    }
}

/// The log of baseline run `k` (1-based) of test config `i` (of `n_tests`).
pub fn baseline_log_name(i: usize, n_tests: usize, k: usize) -> String {
    let stem = if n_tests == 1 {
        "@baseline".to_string()
    } else {
        format!("@baseline-{}", i + 1)
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
        for name in [
            recheck_log_name(&r.id, k),
            recheck_whole_subset_log_name(&r.id, k),
            recheck_whole_suite_log_name(&r.id, k),
        ] {
            let _ = std::fs::remove_file(out.join(name));
        }
    }
    for run in &r.subset_runs {
        let _ = std::fs::remove_file(out.join(&run.log_file));
    }
}

/// The longest escaped path kept whole in a file name (names are at most
/// 255 bytes); a longer one keeps its start and a hash of the whole path.
const ESCAPED_MAX: usize = 200;

/// A file name part from a relative path, without loss: letters, digits,
/// `.`, `_` and `-` stay, `/` becomes `+`, every other byte `%XX`. Too long
/// a result is cut and ends in `,` and a hash of the path (`,` appears
/// nowhere else).
fn escape_path(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'/' => out.push('+'),
            b if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-') => {
                out.push(b as char)
            }
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    if out.len() > ESCAPED_MAX {
        out.truncate(ESCAPED_MAX - 17);
        out.push_str(&format!(",{:016x}", fnv1a(s.as_bytes())));
    }
    out
}

/// FNV-1a, 64 bits: stable across builds and platforms.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            canary_log_name("src/a b.py", 0, 1),
            "@canary-src+a%20b.py.log"
        );
        assert_eq!(canary_log_name("src/a.py", 1, 2), "@canary-src+a.py@2.log");
        assert_eq!(baseline_log_name(0, 1, 1), "@baseline.log");
        assert_eq!(baseline_log_name(1, 2, 3), "@baseline-2.run3.log");
        assert_eq!(recheck_log_name("m", 2), "m@recheck-2.log");
        assert_eq!(check_log_name("m"), "m@check.log");
    }

    #[test]
    fn names_never_collide() {
        // Ids that spell other files' names under the old scheme.
        let ids = [
            "baseline",
            "baseline.run2",
            "canary-app_a_b.py",
            "m",
            "m.check",
            "m.recheck-1",
            "outcomes",
            "report",
        ];
        let files = [
            "app/a_b.py",
            "app/a/b.py",
            "app+a_b.py",
            "app%2Fa_b.py",
            "é.py",
        ];
        let mut all = Vec::new();
        for id in ids {
            all.extend([diff_name(id), log_name(id), check_log_name(id)]);
            for k in 1..=3 {
                all.extend([
                    recheck_log_name(id, k),
                    recheck_whole_subset_log_name(id, k),
                    recheck_whole_suite_log_name(id, k),
                    subset_log_name(id, k),
                ]);
            }
        }
        for n in [1, 2] {
            for t in 0..n {
                all.extend(files.iter().map(|f| canary_log_name(f, t, n)));
                all.extend((1..=3).map(|k| baseline_log_name(t, n, k)));
            }
        }
        all.extend(
            [
                MARKER,
                RESERVE,
                "outcomes.json",
                "report.md",
                "report.html",
                "audit.md",
            ]
            .map(String::from),
        );
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n, "a name is made twice");
        let long = "d/".repeat(150) + "x.py";
        let other = "d/".repeat(150) + "y.py";
        let (a, b) = (canary_log_name(&long, 0, 1), canary_log_name(&other, 0, 1));
        assert!(a.len() <= 255 && a != b, "{a}");
    }

    /// Every file a mutant's runs can leave in the out dir goes when its
    /// verdict is replaced (`unreached`): the recheck logs of a kill
    /// confirmed whole among them. Another mutant's files and the run's own
    /// stay.
    #[test]
    fn discard_removes_every_file_a_mutant_can_leave() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path();
        let mut r = crate::report::tests::mutant("m", crate::results::Outcome::Killed);
        r.diff_file = Some(diff_name("m"));
        r.log_file = Some(log_name("m"));
        r.subset_runs = vec![crate::results::SubsetRun {
            stage: "expected-killers".into(),
            tests: vec!["t::a".into()],
            result: "killed".into(),
            detail: "d".into(),
            duration_s: 0.1,
            log_file: subset_log_name("m", 1),
        }];
        let rechecks = 2;
        let mut own = vec![diff_name("m"), log_name("m"), check_log_name("m")];
        own.push(subset_log_name("m", 1));
        for k in 1..=rechecks {
            own.extend([
                recheck_log_name("m", k),
                recheck_whole_subset_log_name("m", k),
                recheck_whole_suite_log_name("m", k),
            ]);
        }
        let others = [
            diff_name("m2"),
            log_name("m2"),
            recheck_whole_suite_log_name("m2", 1),
            baseline_log_name(0, 1, 1),
            canary_log_name("f.py", 0, 1),
            subset_check_log_name(1),
        ];
        for f in own.iter().chain(&others) {
            std::fs::write(out.join(f), "x").unwrap();
        }
        discard_mutant_files(out, &r, rechecks);
        let left: Vec<&String> = own.iter().filter(|f| out.join(f).exists()).collect();
        assert!(left.is_empty(), "left behind: {left:?}");
        for f in &others {
            assert!(out.join(f).exists(), "{f} removed");
        }
    }

    #[test]
    fn refuses_to_clear_a_directory_it_did_not_make() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("precious"), "x").unwrap();
        let e = prepare(&out).unwrap_err();
        assert!(
            matches!(&e, Error::Flag(FlagError::ForeignOutDir(p)) if *p == out),
            "{e:?}"
        );
        assert!(e.to_string().contains("refusing to clear it"), "{e}");
        assert!(out.join("precious").exists());
        std::fs::remove_file(out.join("precious")).unwrap();
        prepare(&out).unwrap();
        std::fs::write(out.join("old.log"), "x").unwrap();
        std::fs::create_dir(out.join("sub")).unwrap();
        prepare(&out).unwrap();
        assert!(!out.join("old.log").exists(), "ours: cleared");
        assert!(!out.join("sub").exists(), "ours: cleared");
        let marker = std::fs::read_to_string(out.join(MARKER)).unwrap();
        assert!(marker.starts_with(MARKER_HEAD), "{marker}");
        assert!(
            marker.contains(&format!("pid: {}", std::process::id())),
            "{marker}"
        );
        assert!(!out.join(format!("{MARKER}.tmp")).exists());
    }
}
