//! `jest`: the command with `--testNamePattern` (the anchored, escaped
//! full names) appended. Its per-test report is the user's `jest-junit`
//! (what `test.junit` names; jest-junit's default templates make a test's
//! full name both its classname and name), or, without `test.junit`,
//! unguard's own reporter (`jest_reporter.cjs`, written beside the copy)
//! added beside jest's `default` one; a jest config that sets `reporters`
//! gets none (a reporter on the command line replaces the config's).

use std::path::Path;

use super::package_script::{Script, Target};
use super::words::{configs_set_reporters, exact_regex, plain_words};
use super::{Place, Runner};
use crate::coverage::collector::Collector;
use crate::outcome::reading::suite_log;
use crate::spec::{Command, TestConfig};

/// unguard's jest reporter: JUnit XML, a test's file as its classname and
/// its full name as its name, written to `$UNGUARD_JEST_JUNIT`.
const REPORTER: &str = include_str!("jest_reporter.cjs");
/// The reporter's file name beside the copy.
const REPORTER_FILE: &str = "unguard-jest-junit.cjs";
/// The variable naming the reporter's output file.
const OUTPUT_VAR: &str = "UNGUARD_JEST_JUNIT";

/// A `jest` command (or package script).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jest {
    /// Where arguments go.
    target: Target,
    /// Whether the report is unguard's reporter's (else jest-junit's).
    request: bool,
}

impl Jest {
    fn reporter_args(at: &Place<'_>) -> Vec<String> {
        vec![
            "--reporters=default".to_string(),
            format!("--reporters={}", at.aside.join(REPORTER_FILE).display()),
        ]
    }
}

impl Runner for Jest {
    fn name(&self) -> &'static str {
        "jest"
    }

    fn subset(&self, ids: &[String], at: &Place<'_>) -> Option<Command> {
        let names = if self.request {
            own_full_names(ids)?
        } else {
            jest_full_names(ids)?
        };
        let mut extra = vec![
            format!("--testNamePattern={}", exact_regex(&names)),
            "--coverage=false".to_string(),
        ];
        if self.request && at.report.is_some() {
            extra.extend(Jest::reporter_args(at));
        }
        Some(self.target.append(extra))
    }

    fn report_request(&self) -> Option<String> {
        self.request.then(|| {
            format!(
                "jest --reporters=default --reporters=<unguard's JUnit reporter> (a JUnit report for unguard{})",
                self.target.how()
            )
        })
    }

    fn reported(&self, at: &Place<'_>) -> Option<Command> {
        at.report.filter(|_| self.request)?;
        Some(self.target.append(Jest::reporter_args(at)))
    }

    fn prepare(&self, at: &Place<'_>) -> std::io::Result<Vec<(String, String)>> {
        let Some(report) = at.report.filter(|_| self.request) else {
            return Ok(Vec::new());
        };
        std::fs::create_dir_all(at.aside)?;
        std::fs::write(at.aside.join(REPORTER_FILE), REPORTER)?;
        Ok(vec![(OUTPUT_VAR.into(), report.display().to_string())])
    }

    fn seen_as(&self) -> Option<suite_log::Runner> {
        Some(suite_log::Runner::Jest)
    }

    fn collector(&self) -> Option<Collector> {
        Some(Collector::Node)
    }
}

fn is_jest(w: &str) -> bool {
    w == "jest" || w.ends_with("/jest") || w.ends_with("/jest.js")
}

/// The names of jest's options that filter tests or files (a subset would
/// fight them), or stop it from running tests.
const FILTERS: [&str; 16] = [
    "-t",
    "--testNamePattern",
    "--test-name-pattern",
    "-o",
    "--onlyChanged",
    "--only-changed",
    "--changedSince",
    "--lastCommit",
    "--findRelatedTests",
    "-f",
    "--onlyFailures",
    "--watch",
    "--watchAll",
    "--listTests",
    "--shard",
    "--selectProjects",
];

/// The reporters jest's words (after `jest`) name, or `None` with a filter
/// of the user's.
fn read_words(rest: &[String]) -> Option<Vec<&str>> {
    let named = rest
        .iter()
        .any(|w| FILTERS.contains(&w.split('=').next().unwrap_or(w)));
    if named {
        return None;
    }
    let mut reporters = Vec::new();
    for (k, w) in rest.iter().enumerate() {
        if let Some(r) = w.strip_prefix("--reporters=") {
            reporters.push(r);
        } else if w == "--reporters" {
            reporters.extend(rest.get(k + 1).map(String::as_str));
        }
    }
    Some(reporters)
}

/// Whether unguard may add its reporter to jest's `rest` words run in
/// `dir`: no `test.junit`, no reporters on the command line, and no jest
/// config (the default files, `--config`'s, `package.json`'s `jest` key)
/// that sets `reporters`.
fn may_request(cfg: &TestConfig, rest: &[String], reporters: &[&str], dir: &Path) -> bool {
    if cfg.junit.is_some() || !reporters.is_empty() {
        return false;
    }
    let defaults: Vec<String> = ["js", "ts", "mjs", "cjs", "json"]
        .iter()
        .map(|ext| format!("jest.config.{ext}"))
        .collect();
    let in_package = std::fs::read_to_string(dir.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("jest").map(|j| j.to_string().contains("reporters")))
        .unwrap_or(false);
    !in_package && !configs_set_reporters(dir, &defaults, rest)
}

/// A jest runner from its words after `jest`, run in `dir`: with
/// jest-junit writing `test.junit` (it is among `--reporters`, or the
/// command names none and the config's run), or with unguard's reporter.
fn from_words(cfg: &TestConfig, rest: &[String], dir: &Path, target: Target) -> Option<Jest> {
    let reporters = read_words(rest)?;
    let junit = cfg.junit.is_some()
        && (reporters.is_empty()
            || reporters
                .iter()
                .any(|r| *r == "jest-junit" || r.ends_with("/jest-junit")));
    let request = !junit && may_request(cfg, rest, &reporters, dir);
    (junit || request).then_some(Jest { target, request })
}

/// The jest runner of `cfg`'s command (see [`from_words`]); as a shell
/// string, no shell operators.
pub fn recognise(cfg: &TestConfig, tree: &Path) -> Option<Jest> {
    let (words, _) = plain_words(&cfg.command)?;
    let j = words.iter().position(|w| is_jest(w))?;
    from_words(
        cfg,
        &words[j + 1..],
        tree,
        Target::Command(cfg.command.clone()),
    )
}

/// The jest runner of a package script whose words are `jest …`.
pub fn through_script(script: &Script, cfg: &TestConfig, tree: &Path) -> Option<Jest> {
    let (first, rest) = script.words.split_first()?;
    if !is_jest(first) {
        return None;
    }
    from_words(
        cfg,
        rest,
        &tree.join(&script.dir),
        Target::Script(script.clone()),
    )
}

/// The full names of the ids unguard's reporter wrote (`file::full name`).
fn own_full_names(ids: &[String]) -> Option<Vec<String>> {
    ids.iter()
        .map(|id| {
            let (_, name) = id.split_once("::")?;
            (!name.is_empty()).then(|| name.to_string())
        })
        .collect()
}

/// The full names (the describe blocks and the test, joined by spaces:
/// what `--testNamePattern` matches) of jest-junit ids. jest-junit's
/// default templates give a test the same classname and name, `{classname}
/// {title}`, its full name (with a leading space at the top level); `None`
/// for an id of other templates, whose full name unguard cannot know.
fn jest_full_names(ids: &[String]) -> Option<Vec<String>> {
    ids.iter()
        .map(|id| {
            let half = id.len().checked_sub(2)? / 2;
            let (class, name) = (id.get(..half)?, id.get(half + 2..)?);
            let name = name.trim();
            (class.trim() == name && id.get(half..half + 2) == Some("::") && !name.is_empty())
                .then(|| name.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::package_script;
    use crate::runner::test_support::{bare, config};

    #[test]
    fn jest_gets_the_full_names_of_jest_junits_default_ids() {
        let cmd = Command::Shell(
            "JEST_JUNIT_OUTPUT_FILE={junit} npx jest --ci --reporters=default --reporters=jest-junit"
                .into(),
        );
        let a = recognise(&config(cmd, Some("{junit}")), Path::new("/nonexistent"))
            .expect("jest with jest-junit has an adapter");
        // jest-junit's defaults: classname and name are both `{classname}
        // {title}` (a top-level test's starts with a space).
        let ids = [
            "host allow-list inner (x.y) refuses a foreign host::host allow-list inner (x.y) refuses a foreign host".to_string(),
            " serves a local origin:: serves a local origin".to_string(),
        ];
        assert_eq!(
            a.subset(&ids, &bare(Path::new("/"))),
            Some(Command::Shell(
                "JEST_JUNIT_OUTPUT_FILE={junit} npx jest --ci --reporters=default --reporters=jest-junit '--testNamePattern=^(host allow\\-list inner \\(x\\.y\\) refuses a foreign host|serves a local origin)$' --coverage=false".into()
            ))
        );
        // Other templates (the file as classname): unknown full names.
        assert_eq!(
            a.subset(&["test/a.test.js::t".to_string()], &bare(Path::new("/"))),
            None
        );
        // No report, another reporter only, the user's filter, operators: none.
        let none = |c: &str, junit: Option<&str>| {
            recognise(
                &config(Command::Shell(c.into()), junit),
                Path::new("/nonexistent"),
            )
            .is_none()
        };
        assert!(none("jest --reporters=jest-junit", None));
        assert!(none("jest --reporters default", Some("junit.xml")));
        assert!(none(
            "jest --reporters=jest-junit -t host",
            Some("junit.xml")
        ));
        assert!(none(
            "jest --reporters=jest-junit --onlyChanged",
            Some("junit.xml")
        ));
        assert!(none(
            "jest --reporters=jest-junit && echo",
            Some("junit.xml")
        ));
        // Reporters from the config: the report is what `test.junit` names.
        assert!(!none("node_modules/.bin/jest --ci", Some("junit.xml")));
    }

    #[test]
    fn without_test_junit_unguards_reporter_goes_beside_jests_default() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("package.json"),
            r#"{"scripts": {"test": "NODE_OPTIONS=--experimental-vm-modules jest --ci"}}"#,
        )
        .unwrap();
        let cfg = config(Command::Shell("npm test".into()), None);
        let s = package_script::resolve(&cfg.command, d.path()).unwrap();
        let r = through_script(&s, &cfg, d.path()).expect("jest behind npm test");
        let aside = d.path().join("aside");
        let report = Path::new("/r.xml");
        let at = Place {
            tree: d.path(),
            report: Some(report),
            aside: &aside,
        };
        let env = r.prepare(&at).unwrap();
        assert_eq!(env, [(OUTPUT_VAR.to_string(), "/r.xml".to_string())]);
        let reporter = aside.join(REPORTER_FILE);
        assert!(reporter.is_file());
        assert_eq!(
            r.reported(&at),
            Some(Command::Shell(format!(
                "npm test -- --reporters=default --reporters={}",
                reporter.display()
            )))
        );
        let sub = r.subset(&["test/a.test.js::host refuses a.b".to_string()], &at);
        assert_eq!(
            sub,
            Some(Command::Shell(format!(
                "npm test -- '--testNamePattern=^(host refuses a\\.b)$' --coverage=false --reporters=default --reporters={}",
                reporter.display()
            )))
        );
        // A config's reporters: jest would drop them for the command line's.
        std::fs::write(
            d.path().join("jest.config.js"),
            "module.exports = { reporters: ['default', 'jest-junit'] };",
        )
        .unwrap();
        assert!(through_script(&s, &cfg, d.path()).is_none());
    }
}
