//! `unguard audit --portfolio FILE`: the list of repositories to audit, one
//! after another, and the worst of their exit codes.

use std::path::{Path, PathBuf};

use crate::error::{Error, ExitCode, Result};

/// One repository of the portfolio: where it is, the name of its column,
/// its output dir (`OUT/<n>-<name>`) and how it is audited.
#[derive(Debug, Clone, PartialEq)]
pub struct Repo {
    /// The repository: the entry's path joined to the portfolio file's
    /// directory.
    pub path: PathBuf,
    /// Its column in the matrix: the last component of its path.
    pub name: String,
    /// Its output dir, `OUT/<n>-<name>`.
    pub out: PathBuf,
    /// Its test command (instead of the detected one).
    pub test_command: Option<String>,
    /// Globs of files not to scan (as `--skip-file`).
    pub exclude: Vec<String>,
    /// Only these catalog controls (as `--control`).
    pub controls: Vec<String>,
}

/// An entry of the portfolio file: a path, or a mapping with the path and
/// what differs for this repository.
#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
enum Entry {
    Path(String),
    Full(FullEntry),
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FullEntry {
    path: String,
    #[serde(default)]
    test_command: Option<String>,
    #[serde(default)]
    exclude: Vec<String>,
    #[serde(default)]
    controls: Vec<String>,
}

const FIX: &str = "= fix: the portfolio is a YAML list of repository paths (`- ../server-a`) \
or of mappings `{path, test_command, exclude, controls}` (`- path: ../server-b` with \
`test_command: uv run --no-sync pytest`, `exclude: [\"scripts/**\"]`, `controls: [auth-required]`)";

/// Read the portfolio (a YAML list of repositories, paths relative to the
/// file) and name each repo's output dir under `out`.
pub fn load(portfolio: &Path, out: &Path) -> Result<Vec<Repo>> {
    let text = std::fs::read_to_string(portfolio)
        .map_err(|e| Error::Usage(format!("--portfolio {}: {e}", portfolio.display())))?;
    let entries: Vec<Entry> = serde_saphyr::from_str(&text)
        .map_err(|e| Error::Usage(format!("{}: {e}\n  {FIX}", portfolio.display())))?;
    if entries.is_empty() {
        return Err(Error::Usage(format!(
            "{}: the portfolio lists no repository",
            portfolio.display()
        )));
    }
    let base = portfolio.parent().unwrap_or(Path::new("."));
    Ok(entries
        .into_iter()
        .enumerate()
        .map(|(i, entry)| {
            let full = match entry {
                Entry::Path(path) => FullEntry {
                    path,
                    test_command: None,
                    exclude: Vec::new(),
                    controls: Vec::new(),
                },
                Entry::Full(f) => f,
            };
            let path = base.join(&full.path);
            let name = path
                .file_name()
                .map_or_else(|| full.path.clone(), |n| n.to_string_lossy().into_owned());
            let out = out.join(format!("{}-{}", i + 1, name));
            Repo {
                path,
                name,
                out,
                test_command: full.test_command,
                exclude: full.exclude,
                controls: full.controls,
            }
        })
        .collect())
}

/// The exit code of a whole portfolio: the worst of its repos'
/// (in `audit`'s order, [`ExitCode::AUDIT_ORDER`]).
pub fn worst(codes: impl IntoIterator<Item = ExitCode>) -> ExitCode {
    codes
        .into_iter()
        .fold(ExitCode::Ok, ExitCode::worst_in_audit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repos_are_relative_to_the_file_and_numbered() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("p.yaml");
        std::fs::write(&f, "- ../server-a\n- b\n").unwrap();
        let repos = load(&f, Path::new("out")).unwrap();
        assert_eq!(repos.len(), 2);
        assert_eq!(repos[0].path, d.path().join("../server-a"));
        assert_eq!(repos[0].name, "server-a");
        assert_eq!(repos[1].out, Path::new("out/2-b"));
        std::fs::write(&f, "[]").unwrap();
        assert!(load(&f, Path::new("out"))
            .unwrap_err()
            .to_string()
            .ends_with("the portfolio lists no repository"));
        std::fs::write(&f, "a: b").unwrap();
        assert!(load(&f, Path::new("out"))
            .unwrap_err()
            .to_string()
            .contains("= fix: the portfolio is a YAML list"));
        std::fs::write(&f, "- path: x\n  tests: y\n").unwrap();
        assert!(
            load(&f, Path::new("out"))
                .unwrap_err()
                .to_string()
                .contains("{path, test_command"),
            "an unknown key is refused"
        );
    }

    #[test]
    fn entries_carry_their_own_command_excludes_and_controls() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("p.yaml");
        std::fs::write(
            &f,
            "- a\n- path: b\n  test_command: make check\n  exclude: ['scripts/**']\n  controls: [auth-required]\n",
        )
        .unwrap();
        let repos = load(&f, Path::new("out")).unwrap();
        assert_eq!(repos[0].test_command, None);
        assert_eq!(repos[1].test_command.as_deref(), Some("make check"));
        assert_eq!(repos[1].exclude, ["scripts/**"]);
        assert_eq!(repos[1].controls, ["auth-required"]);
        assert_eq!(repos[1].out, Path::new("out/2-b"));
    }

    #[test]
    fn worst_of_the_repos() {
        use ExitCode::*;
        assert_eq!(worst([Ok, GateFailed, Timeout]), GateFailed);
        assert_eq!(worst([SpecStale, BaselineRed]), BaselineRed);
        assert_eq!(worst([SpecStale, GateFailed, ExpectedAbsent]), GateFailed);
        assert_eq!(worst([]), Ok);
    }
}
