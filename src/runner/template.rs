//! `test.select`: a template with `{tests}` (the JUnit ids) and/or
//! `{files}` (the test files that hold them, found in the copy), for any
//! other runner; the strict plugin is set up for it too, so a pytest
//! behind a template given `{files}` runs just the selected tests of those
//! files, and collects no other module.

use std::path::Path;

use super::pytest_select::SelectPlugin;
use super::words::{expand, files_of, uses};
use super::{pytest, Place, Plugin, Runner};
use crate::run::child_env::ChildEnv;
use crate::spec::Command;

/// `test.select`'s template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template(pub Command);

impl Runner for Template {
    fn name(&self) -> &'static str {
        "test.select"
    }

    fn subset(&self, ids: &[String], at: &Place<'_>) -> Option<Command> {
        let t = &self.0;
        let files = if uses(t, "{files}") {
            files_of(ids, at.tree)?
        } else {
            Vec::new()
        };
        Some(expand(&expand(t, "{tests}", ids), "{files}", &files))
    }

    fn plugin(&self) -> Option<&'static dyn Plugin> {
        Some(&SelectPlugin)
    }

    // A pytest behind the template: its coverage gate is off, as pytest's.
    fn subset_env(&self, command: &Command, env: &mut ChildEnv, tree: &Path) {
        pytest::gate_off(command, env, tree);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::test_support::{argv, bare};
    use std::path::Path;

    #[test]
    fn a_template_gets_one_word_per_id() {
        let t = Template(Command::Shell("run --junit {junit} {tests}".into()));
        let ids = vec!["a.B::t one".to_string(), "a.B::t2".to_string()];
        let nowhere = Path::new("/nonexistent");
        assert_eq!(
            t.subset(&ids, &bare(nowhere)),
            Some(Command::Shell(
                "run --junit {junit} 'a.B::t one' a.B::t2".into()
            ))
        );
        let t = Template(argv(&["run", "{tests}", "-q"]));
        assert_eq!(
            t.subset(&ids, &bare(nowhere)),
            Some(argv(&["run", "a.B::t one", "a.B::t2", "-q"]))
        );
    }

    #[test]
    fn files_are_the_test_modules_found_in_the_copy() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("tests/unit")).unwrap();
        std::fs::write(d.path().join("tests/unit/test_a.py"), "").unwrap();
        std::fs::write(d.path().join("tests/test_b.py"), "").unwrap();
        let ids: Vec<String> = [
            "tests.unit.test_a.K::t1",
            "tests.test_b::t2[x.y]",
            "tests.unit.test_a::t3",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let t = Template(Command::Shell("pytest -q {files}".into()));
        assert_eq!(
            t.subset(&ids, &bare(d.path())),
            Some(Command::Shell(
                "pytest -q tests/unit/test_a.py tests/test_b.py".into()
            ))
        );
        assert_eq!(
            t.subset(&["nowhere.test_c::t".to_string()], &bare(d.path())),
            None
        );
    }
}
