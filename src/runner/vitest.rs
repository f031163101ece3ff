//! `vitest run`: the test files and `-t` (the full names) appended. Its
//! per-test report is the user's JUnit reporter (`--reporter=junit` with
//! `test.junit`), or, without one, unguard's own: vitest's `junit` reporter
//! added beside the command's reporters (`--reporter=default` kept in front
//! when the command names none), written outside the copy. A vitest config
//! that sets its own `reporters` gets no request (a reporter on the
//! command line replaces the config's, which would change the user's
//! output): it runs whole.

use std::path::Path;

use super::package_script::{Script, Target};
use super::words::{configs_set_reporters, exact_regex, plain_words};
use super::{Place, Runner};
use crate::coverage::collector::Collector;
use crate::outcome::reading::suite_log;
use crate::spec::{Command, TestConfig};

/// A `vitest run` command (or package script).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vitest {
    /// Where arguments go.
    target: Target,
    /// Whether the report is unguard's (the command has no JUnit reporter
    /// of its own).
    request: bool,
    /// Whether the command names reporters of its own.
    reporters: bool,
}

impl Vitest {
    /// unguard's reporter options for a report at `report`.
    fn reporter_args(&self, report: &Path) -> Vec<String> {
        let mut args = Vec::new();
        if !self.reporters {
            args.push("--reporter=default".to_string());
        }
        args.push("--reporter=junit".to_string());
        args.push(format!("--outputFile.junit={}", report.display()));
        args
    }
}

impl Runner for Vitest {
    fn name(&self) -> &'static str {
        "vitest"
    }

    // A subset never collects coverage: its thresholds would fail every
    // subset on the unmutated copy (see `pytest::pytest_cov_gate`).
    fn subset(&self, ids: &[String], at: &Place<'_>) -> Option<Command> {
        let (files, names) = vitest_filters(ids)?;
        let mut extra = files;
        extra.extend([
            "-t".to_string(),
            exact_regex(&names),
            "--coverage.enabled=false".to_string(),
        ]);
        if let Some(r) = at.report.filter(|_| self.request) {
            extra.extend(self.reporter_args(r));
        }
        Some(self.target.append(extra))
    }

    fn report_request(&self) -> Option<String> {
        self.request.then(|| {
            format!(
                "vitest --reporter=junit --outputFile.junit=… (a JUnit report for unguard, beside the command's reporters{})",
                self.target.how()
            )
        })
    }

    fn reported(&self, at: &Place<'_>) -> Option<Command> {
        let r = at.report.filter(|_| self.request)?;
        Some(self.target.append(self.reporter_args(r)))
    }

    fn seen_as(&self) -> Option<suite_log::Runner> {
        Some(suite_log::Runner::Vitest)
    }

    fn collector(&self) -> Option<Collector> {
        Some(Collector::Node)
    }
}

/// What vitest's words (after `vitest`) allow: `None` in watch mode or with
/// a test name filter of the user's; else whether the words name a JUnit
/// reporter, and whether they name any reporter.
fn read_words(rest: &[String]) -> Option<(bool, bool)> {
    let once = rest.first().is_some_and(|w| w == "run") || rest.iter().any(|w| w == "--run");
    let named = rest
        .iter()
        .any(|w| w == "-t" || w.starts_with("--testNamePattern") || w.starts_with("-t="));
    if !once || named {
        return None;
    }
    let junit = rest.iter().any(|w| w == "--reporter=junit")
        || rest
            .windows(2)
            .any(|w| w[0] == "--reporter" && w[1] == "junit");
    let reporters = rest.iter().any(|w| w.starts_with("--reporter"));
    Some((junit, reporters))
}

/// Whether unguard may add its report to vitest's `rest` words run in
/// `dir`: no `test.junit`, no `--outputFile` of the user's, and no config
/// file (the default names, or `--config`'s) that sets `reporters`.
fn may_request(cfg: &TestConfig, rest: &[String], dir: &Path) -> bool {
    if cfg.junit.is_some() || rest.iter().any(|w| w.starts_with("--outputFile")) {
        return false;
    }
    let mut defaults = Vec::new();
    for stem in [
        "vitest.config",
        "vite.config",
        "vitest.workspace",
        "vitest.projects",
    ] {
        for ext in ["ts", "mts", "cts", "js", "mjs", "cjs", "json"] {
            defaults.push(format!("{stem}.{ext}"));
        }
    }
    !configs_set_reporters(dir, &defaults, rest)
}

fn is_vitest(w: &str) -> bool {
    w == "vitest" || w.ends_with("/vitest") || w.ends_with("/vitest.mjs")
}

/// The vitest runner of `cfg`'s command in the copy at `tree`: `vitest
/// run` (or `vitest --run`) with no test name filter of the user's, and,
/// as a shell string, no shell operators; with its JUnit reporter, or one
/// unguard may add (see [`may_request`]).
pub fn recognise(cfg: &TestConfig, tree: &Path) -> Option<Vitest> {
    let (words, _) = plain_words(&cfg.command)?;
    let v = words.iter().position(|w| is_vitest(w))?;
    let rest = &words[v + 1..];
    let (junit, reporters) = read_words(rest)?;
    let request = !junit && may_request(cfg, rest, tree);
    (junit || request).then(|| Vitest {
        target: Target::Command(cfg.command.clone()),
        request,
        reporters,
    })
}

/// The vitest runner of a package script whose words are `vitest run …`.
pub fn through_script(script: &Script, cfg: &TestConfig, tree: &Path) -> Option<Vitest> {
    let (first, rest) = script.words.split_first()?;
    if !is_vitest(first) {
        return None;
    }
    let (junit, reporters) = read_words(rest)?;
    let request = !junit && may_request(cfg, rest, &tree.join(&script.dir));
    (junit || request).then(|| Vitest {
        target: Target::Script(script.clone()),
        request,
        reporters,
    })
}

/// The test files and full test names (as `-t` matches them: the
/// describe blocks and the test joined by spaces) of vitest JUnit ids
/// (`test/a.test.ts::block > test`). `None` for an id without its file.
fn vitest_filters(ids: &[String]) -> Option<(Vec<String>, Vec<String>)> {
    let mut files: Vec<String> = Vec::new();
    let mut names = Vec::new();
    for id in ids {
        let (file, name) = id.split_once("::")?;
        if file.is_empty() || name.is_empty() {
            return None;
        }
        if !files.iter().any(|f| f == file) {
            files.push(file.to_string());
        }
        names.push(name.replace(" > ", " "));
    }
    Some((files, names))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::package_script;
    use crate::runner::test_support::{argv, bare, config};

    #[test]
    fn vitest_gets_files_and_full_names() {
        let a = recognise(
            &config(
                argv(&[
                    "npx",
                    "vitest",
                    "run",
                    "--reporter=junit",
                    "--outputFile={junit}",
                ]),
                Some("{junit}"),
            ),
            Path::new("/nonexistent"),
        )
        .expect("vitest run with junit has an adapter");
        let ids = [
            "test/a.test.ts::block > inner > t1".to_string(),
            "test/b.test.ts::t2".to_string(),
        ];
        assert_eq!(
            a.subset(&ids, &bare(Path::new("/"))),
            Some(argv(&[
                "npx",
                "vitest",
                "run",
                "--reporter=junit",
                "--outputFile={junit}",
                "test/a.test.ts",
                "test/b.test.ts",
                "-t",
                "^(block inner t1|t2)$",
                "--coverage.enabled=false"
            ]))
        );
        // Watch mode, or the user's own -t: no runner.
        let none = |c: &str| {
            recognise(
                &config(Command::Shell(c.into()), None),
                Path::new("/nonexistent"),
            )
            .is_none()
        };
        assert!(none("vitest --reporter=junit"));
        assert!(none("vitest run --reporter=junit -t x"));
    }

    #[test]
    fn without_a_junit_reporter_unguards_is_added_beside_the_users() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("package.json"),
            r#"{"scripts": {"test": "NODE_ENV=test vitest run", "v": "vitest run --reporter=verbose"}}"#,
        )
        .unwrap();
        let cfg = config(Command::Shell("npm test".into()), None);
        let s = package_script::resolve(&cfg.command, d.path()).unwrap();
        let r = through_script(&s, &cfg, d.path()).expect("vitest run behind npm test");
        assert!(r.report_request().is_some());
        let report = Path::new("/tmp/u/r.xml");
        let at = Place {
            tree: d.path(),
            report: Some(report),
            aside: d.path(),
        };
        assert_eq!(
            r.reported(&at),
            Some(Command::Shell(
                "npm test -- --reporter=default --reporter=junit --outputFile.junit=/tmp/u/r.xml"
                    .into()
            ))
        );
        assert_eq!(
            r.subset(&["a.test.ts::b > c".to_string()], &at),
            Some(Command::Shell(
                "npm test -- a.test.ts -t '^(b c)$' --coverage.enabled=false --reporter=default --reporter=junit --outputFile.junit=/tmp/u/r.xml".into()
            ))
        );
        // The user's reporters stay: unguard's junit goes beside them.
        let cfg = config(Command::Shell("npm run v".into()), None);
        let s = package_script::resolve(&cfg.command, d.path()).unwrap();
        let r = through_script(&s, &cfg, d.path()).unwrap();
        assert_eq!(
            r.reported(&at),
            Some(Command::Shell(
                "npm run v -- --reporter=junit --outputFile.junit=/tmp/u/r.xml".into()
            ))
        );
        // A direct command too; not with `test.junit`, nor with a config's reporters.
        let direct = config(Command::Shell("npx vitest run".into()), None);
        assert!(recognise(&direct, d.path())
            .unwrap()
            .report_request()
            .is_some());
        let junit = config(Command::Shell("npx vitest run".into()), Some("out.xml"));
        assert!(recognise(&junit, d.path()).is_none());
        std::fs::write(
            d.path().join("vitest.config.ts"),
            "export default { test: { reporters: ['dot'] } }",
        )
        .unwrap();
        assert!(recognise(&direct, d.path()).is_none());
        assert!(through_script(&s, &cfg, d.path()).is_none());
    }
}
