//! `node --test` with a JUnit reporter: the command with
//! `--test-name-pattern` inserted after `--test`. Behind a package script
//! only when the script's words after `node` are all options (what unguard
//! adds at the end of the script then still comes before any test file:
//! node reads an option after a file as a file).

use super::package_script::Script;
use super::words::{exact_regex, last_name, plain_words, words_to_command};
use super::{Place, Runner};
use crate::coverage::collector::Collector;
use crate::spec::Command;

/// `node --test …` with a JUnit reporter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeTest {
    /// The command's words, and the index of `--test` among them.
    Direct {
        /// The command's words.
        words: Vec<String>,
        /// The index of `--test` among them.
        at: usize,
        /// Whether the command is a shell string.
        shell: bool,
    },
    /// A package script `node --test [options]`: options are passed on.
    Script(Script),
}

impl NodeTest {
    /// The command with `options` right after `--test`.
    fn with(&self, options: Vec<String>) -> Command {
        match self {
            NodeTest::Direct { words, at, shell } => {
                let mut argv = words.clone();
                for (k, o) in options.into_iter().enumerate() {
                    argv.insert(*at + 1 + k, o);
                }
                words_to_command(argv, *shell)
            }
            NodeTest::Script(s) => s.append(options),
        }
    }
}

impl Runner for NodeTest {
    fn name(&self) -> &'static str {
        "node --test"
    }

    fn subset(&self, ids: &[String], _at: &Place<'_>) -> Option<Command> {
        let names: Vec<String> = ids.iter().map(|i| last_name(i).to_string()).collect();
        Some(self.with(vec![format!("--test-name-pattern={}", exact_regex(&names))]))
    }

    fn collector(&self) -> Option<Collector> {
        Some(Collector::Node)
    }

    fn coverage_command(&self, options: &[String]) -> Option<Command> {
        (!options.is_empty()).then(|| self.with(options.to_vec()))
    }
}

/// The words after `node` of a `node --test` run that unguard can select
/// in: a JUnit reporter (what unguard reads per test), and no name pattern
/// of the user's.
fn selectable(opts: &[String]) -> bool {
    let junit = opts.iter().any(|w| w == "--test-reporter=junit")
        || opts
            .windows(2)
            .any(|w| w[0] == "--test-reporter" && w[1] == "junit");
    let named = opts.iter().any(|w| w.starts_with("--test-name-pattern"));
    junit && !named
}

/// The `node --test` runner of `command`: `node` then `--test` among its
/// options (see [`selectable`]), and, as a shell string, no shell operators.
pub fn recognise(command: &Command) -> Option<NodeTest> {
    let (words, shell) = plain_words(command)?;
    let node = words
        .iter()
        .position(|w| w == "node" || w.ends_with("/node"))?;
    let at = node + 1 + words[node + 1..].iter().position(|w| w == "--test")?;
    selectable(&words[node + 1..]).then_some(NodeTest::Direct { words, at, shell })
}

/// The `node --test` runner of a package script: `node --test` and
/// options only.
pub fn through_script(script: &Script) -> Option<NodeTest> {
    let (node, opts) = script.words.split_first()?;
    let only_options = opts.iter().all(|w| w.starts_with('-'));
    (node == "node" && opts.iter().any(|w| w == "--test") && only_options && selectable(opts))
        .then(|| NodeTest::Script(script.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::package_script;
    use crate::runner::test_support::bare;
    use std::path::Path;

    #[test]
    fn node_test_gets_a_name_pattern_after_dash_dash_test() {
        let a = recognise(&Command::Shell(
            "node --test --test-reporter=junit --test-reporter-destination={junit} test/".into(),
        ))
        .expect("node --test with junit has an adapter");
        let ids = ["test::refuses a.b (x)".to_string(), "test::t2".to_string()];
        assert_eq!(
            a.subset(&ids, &bare(Path::new("/"))),
            Some(Command::Shell(
                "node --test '--test-name-pattern=^(refuses a\\.b \\(x\\)|t2)$' --test-reporter=junit --test-reporter-destination={junit} test/".into()
            ))
        );
        // No per-test report, or a pattern of the user's: no adapter.
        assert!(recognise(&Command::Shell("node --test test/".into())).is_none());
        assert!(recognise(&Command::Shell(
            "node --test --test-reporter=junit --test-name-pattern=x".into()
        ))
        .is_none());
    }

    #[test]
    fn a_script_of_node_test_options_gets_the_pattern_passed_on() {
        let d = tempfile::tempdir().unwrap();
        let write = |script: &str| {
            std::fs::write(
                d.path().join("package.json"),
                format!("{{\"scripts\": {{\"test\": \"{script}\"}}}}"),
            )
            .unwrap()
        };
        write("node --test --test-reporter=junit --test-reporter-destination=out.xml");
        let s = package_script::resolve(&Command::Shell("npm test".into()), d.path()).unwrap();
        let r = through_script(&s).expect("options only");
        assert_eq!(
            r.subset(&["t::a b".to_string()], &bare(Path::new("/"))),
            Some(Command::Shell(
                "npm test -- '--test-name-pattern=^(a b)$'".into()
            ))
        );
        // A test file in the script: an option added after it is read as a file.
        write("node --test --test-reporter=junit test/");
        let s = package_script::resolve(&Command::Shell("npm test".into()), d.path()).unwrap();
        assert!(through_script(&s).is_none());
    }
}
