//! `cargo test` (libtest's lines are what unguard reads): the targets that
//! hold the ids (`--lib`, `--test it`, …), then `--`, the user's libtest
//! options, `--exact` and the names.

use std::path::Path;

use super::words::{has_filter, plain_words, words_to_command};
use super::{Place, Runner};
use crate::spec::Command;

/// A `cargo test` command, split where a subset run edits it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CargoTest {
    /// The command's words, without `--` and what follows it.
    cargo: Vec<String>,
    /// The index of `test` in `cargo`.
    test_at: usize,
    /// The libtest options after `--` (the user's).
    libtest: Vec<String>,
    shell: bool,
    /// The command picks its targets itself (`--lib`, `--test x`, …):
    /// unguard adds none.
    targets_chosen: bool,
}

impl Runner for CargoTest {
    fn name(&self) -> &'static str {
        "cargo test"
    }

    fn subset(&self, ids: &[String], at: &Place<'_>) -> Option<Command> {
        self.command(ids, at.tree)
    }
}

/// cargo's options that select test targets (unguard adds none then).
const CARGO_TARGET_FLAGS: [&str; 11] = [
    "--lib",
    "--bin",
    "--bins",
    "--test",
    "--tests",
    "--example",
    "--examples",
    "--bench",
    "--benches",
    "--all-targets",
    "--doc",
];

/// cargo test's options that take a value as the next word.
const CARGO_VALUED: [&str; 20] = [
    "-p",
    "--package",
    "--exclude",
    "-F",
    "--features",
    "--target",
    "--target-dir",
    "--manifest-path",
    "-j",
    "--jobs",
    "--profile",
    "--bin",
    "--test",
    "--example",
    "--bench",
    "--color",
    "--message-format",
    "--config",
    "-Z",
    "--lockfile-path",
];

/// libtest's options that take a value as the next word.
const LIBTEST_VALUED: [&str; 7] = [
    "--test-threads",
    "--skip",
    "--format",
    "--color",
    "--logfile",
    "-Z",
    "--shuffle-seed",
];

/// The cargo test runner of `command`: `cargo [+toolchain] test`, with
/// no test name filter of the user's (before or after `--`), not
/// `--no-run` or `--list`, and, as a shell string, no shell operators.
pub fn recognise(command: &Command) -> Option<CargoTest> {
    let (words, shell) = plain_words(command)?;
    let c = words
        .iter()
        .position(|w| w == "cargo" || w.ends_with("/cargo"))?;
    let mut test_at = c + 1;
    if words.get(test_at).is_some_and(|w| w.starts_with('+')) {
        test_at += 1;
    }
    if words.get(test_at)? != "test" {
        return None;
    }
    let dd = words[test_at + 1..]
        .iter()
        .position(|w| w == "--")
        .map(|p| p + test_at + 1);
    let (cargo, libtest) = match dd {
        Some(d) => (words[..d].to_vec(), words[d + 1..].to_vec()),
        None => (words.clone(), Vec::new()),
    };
    let own = &cargo[test_at + 1..];
    let stops = own.iter().any(|w| w == "--no-run") || libtest.iter().any(|w| w == "--list");
    if stops || has_filter(own, &CARGO_VALUED) || has_filter(&libtest, &LIBTEST_VALUED) {
        return None;
    }
    let targets_chosen = own
        .iter()
        .any(|w| CARGO_TARGET_FLAGS.contains(&w.split('=').next().unwrap_or(w)));
    Some(CargoTest {
        cargo,
        test_at,
        libtest,
        shell,
        targets_chosen,
    })
}

impl CargoTest {
    /// `cargo test <targets> <the user's options> -- <the user's libtest
    /// options> --exact <names>`. `None` for an id that names no libtest
    /// test (a binary's crash).
    fn command(&self, ids: &[String], tree: &Path) -> Option<Command> {
        let mut classes: Vec<&str> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        for id in ids {
            let (class, name) = id.split_once("::")?;
            if name.is_empty() || name.starts_with('<') {
                return None;
            }
            if !classes.contains(&class) {
                classes.push(class);
            }
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
        let targets = if self.targets_chosen {
            Vec::new()
        } else {
            cargo_targets(&classes, tree)
        };
        let mut argv = self.cargo[..=self.test_at].to_vec();
        argv.extend(targets);
        argv.extend(self.cargo[self.test_at + 1..].iter().cloned());
        argv.push("--".into());
        argv.extend(self.libtest.iter().cloned());
        if !self.libtest.iter().any(|w| w == "--exact") {
            argv.push("--exact".into());
        }
        argv.extend(names);
        Some(words_to_command(argv, self.shell))
    }
}

/// The cargo options that run just the test targets `classes` (as
/// [`crate::outcome::reading::libtest_text`] names them: `src/lib.rs`, `tests/it.rs`,
/// `Doc-tests x`): `--lib`, `--bins`, `--bin x`, `--test x`, `--tests`,
/// `--doc`. A target the manifest (`tree/Cargo.toml`) may have renamed
/// (`[[bin]]`, `[[test]]`) gets its whole kind. Empty (every target runs)
/// for a path that is none of these, or doc tests with other targets
/// (cargo cannot mix `--doc` with them).
fn cargo_targets(classes: &[&str], tree: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(tree.join("Cargo.toml")).unwrap_or_default();
    let mut flags: Vec<Vec<String>> = Vec::new();
    for class in classes {
        let named = |dir: &str, table: &str, one: &str, all: &str| -> Option<Vec<String>> {
            let rest = class.strip_prefix(dir)?;
            let name = rest
                .strip_suffix("/main.rs")
                .or_else(|| rest.strip_suffix(".rs"))?;
            if name.is_empty() || name.contains('/') {
                return None;
            }
            Some(if manifest.contains(table) {
                vec![all.to_string()]
            } else {
                vec![one.to_string(), name.to_string()]
            })
        };
        let flag = match *class {
            "src/lib.rs" => Some(vec!["--lib".to_string()]),
            "src/main.rs" => Some(vec!["--bins".to_string()]),
            c if c.starts_with("Doc-tests ") => Some(vec!["--doc".to_string()]),
            _ => named("src/bin/", "[[bin]]", "--bin", "--bins")
                .or_else(|| named("tests/", "[[test]]", "--test", "--tests")),
        };
        let Some(flag) = flag else {
            return Vec::new();
        };
        if !flags.contains(&flag) {
            flags.push(flag);
        }
    }
    if flags.len() > 1 && flags.iter().any(|f| f[0] == "--doc") {
        return Vec::new();
    }
    flags.concat()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::test_support::argv;

    #[test]
    fn cargo_test_gets_targets_and_exact_names_after_dash_dash() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        let a = recognise(&Command::Shell("cargo test --offline".into())).unwrap();
        let ids = [
            "src/lib.rs::tests::refuses_a_foreign_host".to_string(),
            "tests/it.rs::serves_localhost".to_string(),
        ];
        assert_eq!(
            a.command(&ids, d.path()),
            Some(Command::Shell(
                "cargo test --lib --test it --offline -- --exact tests::refuses_a_foreign_host serves_localhost".into()
            ))
        );
        // The user's libtest options stay; a renamed test target gets its
        // whole kind; doc tests cannot be mixed with other targets.
        let a = recognise(&argv(&[
            "cargo",
            "+stable",
            "test",
            "--",
            "--test-threads",
            "1",
        ]))
        .unwrap();
        std::fs::write(
            d.path().join("Cargo.toml"),
            "[[test]]\nname = \"y\"\npath = \"tests/it.rs\"\n",
        )
        .unwrap();
        assert_eq!(
            a.command(&ids[1..], d.path()),
            Some(argv(&[
                "cargo",
                "+stable",
                "test",
                "--tests",
                "--",
                "--test-threads",
                "1",
                "--exact",
                "serves_localhost"
            ]))
        );
        let doc = "Doc-tests x::src/lib.rs - f (line 3)".to_string();
        assert_eq!(
            a.command(&[doc, ids[0].clone()], d.path()),
            Some(argv(&[
                "cargo",
                "+stable",
                "test",
                "--",
                "--test-threads",
                "1",
                "--exact",
                "src/lib.rs - f (line 3)",
                "tests::refuses_a_foreign_host"
            ]))
        );
        // The user's own targets and --exact are kept as they are.
        let a = recognise(&Command::Shell("cargo test --test it -- --exact".into())).unwrap();
        assert_eq!(
            a.command(&ids[1..], d.path()),
            Some(Command::Shell(
                "cargo test --test it -- --exact serves_localhost".into()
            ))
        );
        // A crashed binary names no test to select.
        assert_eq!(
            a.command(
                &["tests/it.rs::<2 tests unreported: the test binary crashed>".to_string()],
                d.path()
            ),
            None
        );
        // A filter of the user's (before or after --), --no-run, operators: none.
        for c in [
            "cargo test guard",
            "cargo test -- guard",
            "cargo test -p a guard",
            "cargo test --no-run",
            "cargo test && true",
            "cargo build",
        ] {
            assert!(recognise(&Command::Shell(c.into())).is_none(), "{c}");
        }
        assert!(recognise(&Command::Shell(
            "cargo test -p a --features x -- --skip slow --test-threads 1".into()
        ))
        .is_some());
    }
}
