//! `go test -json` (its per-test events are what unguard reads): the
//! command with `-run '^(TestA|TestB)$'` appended, the top-level test names
//! of the ids (a subtest runs with its parent).

use super::words::{append, plain_words};
use super::{Place, Runner};
use crate::coverage::collector::Collector;
use crate::spec::Command;

/// `go test -json …`: the command, then `-run` with the top-level test names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoTest {
    command: Command,
}

impl Runner for GoTest {
    fn name(&self) -> &'static str {
        "go test"
    }

    fn subset(&self, ids: &[String], _at: &Place<'_>) -> Option<Command> {
        let pattern = go_run_pattern(ids)?;
        Some(append(&self.command, vec!["-run".to_string(), pattern]))
    }

    /// The Go collector, unless the coverage run's options cannot be added
    /// (a command with its own `-exec` or `-args`).
    fn collector(&self) -> Option<Collector> {
        let (words, _) = plain_words(&self.command)?;
        let own = words.iter().any(|w| {
            let flag = w.trim_start_matches('-');
            w.starts_with('-') && (flag == "args" || flag.split('=').next() == Some("exec"))
        });
        (!own).then_some(Collector::Go)
    }

    /// The command with the collector's options at its end.
    fn coverage_command(&self, options: &[String]) -> Option<Command> {
        (!options.is_empty()).then(|| append(&self.command, options.to_vec()))
    }
}

/// The go test runner of `command`: `go test` with `-json` (per-test
/// events in the log), and, as a shell string, no shell operators (a
/// redirection to `{junit}` would take the appended `-run` with it: such a
/// command opts in with `test.select`).
pub fn recognise(command: &Command) -> Option<GoTest> {
    let (words, _) = plain_words(command)?;
    let go = words
        .windows(2)
        .position(|w| w[0] == "go" && w[1] == "test")?;
    let json = words[go + 2..]
        .iter()
        .any(|w| w == "-json" || w == "--json");
    let runs = words[go + 2..]
        .iter()
        .any(|w| w == "-run" || w.starts_with("-run="));
    (json && !runs).then(|| GoTest {
        command: command.clone(),
    })
}

/// `^(TestA|TestB)$` for the ids' top-level test names (`pkg::TestA/case`
/// selects `TestA`, whose run includes its subtests). `None` for a name Go
/// could not have given a test.
fn go_run_pattern(ids: &[String]) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    for id in ids {
        let name = id.rsplit_once("::").map_or(id.as_str(), |(_, n)| n);
        let top = name.split('/').next().unwrap_or(name);
        if top.is_empty() || !top.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        if !names.contains(&top) {
            names.push(top);
        }
    }
    (!names.is_empty()).then(|| format!("^({})$", names.join("|")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::test_support::{argv, bare};
    use std::path::Path;

    #[test]
    fn go_test_json_gets_a_run_pattern_of_top_level_names() {
        let cfg = Command::Shell("go test -json ./...".into());
        let a = recognise(&cfg).expect("go test -json has an adapter");
        let ids = [
            "example.com/srv::TestHost/localhost".to_string(),
            "example.com/srv::TestHost/ip".to_string(),
            "example.com/srv::TestOrigin".to_string(),
        ];
        assert_eq!(
            a.subset(&ids, &bare(Path::new("/nonexistent"))),
            Some(Command::Shell(
                "go test -json ./... -run '^(TestHost|TestOrigin)$'".into()
            ))
        );
        let with_argv = recognise(&argv(&["go", "test", "-json", "./..."])).unwrap();
        assert_eq!(
            with_argv.subset(&ids[2..], &bare(Path::new("/"))),
            Some(argv(&[
                "go",
                "test",
                "-json",
                "./...",
                "-run",
                "^(TestOrigin)$"
            ]))
        );
        // Without -json there are no per-test results to read; a
        // redirection would swallow the appended flag; -run is the user's.
        assert!(recognise(&Command::Shell("go test ./...".into())).is_none());
        assert!(recognise(&Command::Shell("go test -json ./... > {junit}".into())).is_none());
        assert!(recognise(&Command::Shell("go test -json -run TestX ./...".into())).is_none());
        assert!(go_run_pattern(&["p::Test(x)".to_string()]).is_none());
    }
}
