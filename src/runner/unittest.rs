//! `python -m unittest` / `python -m xmlrunner`: the command with its
//! discovery arguments replaced by dotted ids (`pkg.mod.Class.test`).

use super::words::plain_words;
use super::{Place, Runner};
use crate::run::shell::quote;
use crate::spec::Command;

/// `python -m unittest` (or xmlrunner): the command up to the module, the
/// options kept, then the ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unittest {
    prefix: Vec<String>,
    shell: bool,
}

impl Runner for Unittest {
    fn name(&self) -> &'static str {
        "unittest"
    }

    fn forkable(&self) -> &'static [&'static str] {
        &["unittest"]
    }

    fn subset(&self, ids: &[String], _at: &Place<'_>) -> Option<Command> {
        let dotted: Vec<String> = ids.iter().map(|i| dotted(i)).collect::<Option<_>>()?;
        let mut argv = self.prefix.clone();
        if self.shell {
            argv.extend(dotted.iter().map(|d| quote(d)));
            Some(Command::Shell(argv.join(" ")))
        } else {
            argv.extend(dotted);
            Some(Command::Argv(argv))
        }
    }
}

/// Options of `python -m unittest` (and xmlrunner) kept in a subset run;
/// the second list takes a value.
const UNITTEST_FLAGS: [&str; 9] = [
    "-v",
    "-q",
    "-b",
    "-c",
    "-f",
    "--locals",
    "--buffer",
    "--catch",
    "--failfast",
];
const UNITTEST_VALUED: [&str; 3] = ["-o", "--output", "--output-file"];

/// The unittest runner of `command`: it runs `python -m unittest` or
/// `python -m xmlrunner` (after optional `VAR=value` words), with nothing
/// after it but discovery and the options above. A shell command with
/// operators (`&&`, `;`, `|`, redirections) has none.
pub fn recognise(command: &Command) -> Option<Unittest> {
    let (words, shell) = plain_words(command)?;
    let m = words
        .windows(2)
        .position(|w| w[0] == "-m" && (w[1] == "unittest" || w[1] == "xmlrunner"))?;
    let mut prefix = words[..m + 2].to_vec();
    let mut rest = words[m + 2..].iter();
    while let Some(w) = rest.next() {
        if UNITTEST_FLAGS.contains(&w.as_str()) {
            prefix.push(w.clone());
        } else if UNITTEST_VALUED.contains(&w.as_str()) {
            prefix.push(w.clone());
            prefix.push(rest.next()?.clone());
        } else if w == "discover" || w.starts_with('-') {
            // discovery and its options (-s, -t, -p with values) go.
            if matches!(w.as_str(), "-s" | "-t" | "-p" | "-k") {
                rest.next();
            }
        }
        // a start dir, pattern or test name of the full run: dropped.
    }
    Some(Unittest { prefix, shell })
}

/// A JUnit id as unittest names the test: `pkg.mod.Class::test` →
/// `pkg.mod.Class.test`. `None` for what unittest cannot select (a
/// parametrized id, a module-level error entry).
fn dotted(id: &str) -> Option<String> {
    let (class, name) = id.split_once("::")?;
    if class.is_empty() || name.contains(['[', ' ', '(']) || name.contains("::") {
        return None;
    }
    Some(format!("{class}.{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::test_support::{argv, bare};
    use std::path::Path;

    #[test]
    fn unittest_discovery_is_replaced_by_dotted_ids() {
        let a = recognise(&Command::Shell(
            "PYTHONPATH=src python3 -m unittest discover -s tests -t . -v".into(),
        ))
        .unwrap();
        let ids = vec!["tests.test_a.A::test_x".to_string()];
        let tree = Path::new("/nonexistent");
        assert_eq!(
            a.subset(&ids, &bare(tree)),
            Some(Command::Shell(
                "PYTHONPATH=src python3 -m unittest -v tests.test_a.A.test_x".into()
            ))
        );
        let x = recognise(&argv(&[
            "python",
            "-m",
            "xmlrunner",
            "-o",
            "out",
            "discover",
        ]))
        .unwrap();
        assert_eq!(
            x.subset(&ids, &bare(tree)),
            Some(argv(&[
                "python",
                "-m",
                "xmlrunner",
                "-o",
                "out",
                "tests.test_a.A.test_x"
            ]))
        );
        // A parametrized id cannot be selected by unittest.
        assert_eq!(a.subset(&["m.C::t[1]".to_string()], &bare(tree)), None);
        assert!(recognise(&Command::Shell("cd x && python -m unittest".into())).is_none());
        assert!(recognise(&Command::Shell("make test".into())).is_none());
    }
}
