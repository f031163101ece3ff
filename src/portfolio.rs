//! `unguard audit --portfolio FILE`: the list of repositories to audit, one
//! after another, and the worst of their exit codes.

use std::path::{Path, PathBuf};

use crate::error::{Error, ExitCode, Result};

/// One repository of the portfolio: where it is, the name of its column
/// and its output dir (`OUT/<n>-<name>`).
#[derive(Debug, Clone, PartialEq)]
pub struct Repo {
    pub path: PathBuf,
    pub name: String,
    pub out: PathBuf,
}

/// Read the portfolio (a YAML list of repository paths, relative to the
/// file) and name each repo's output dir under `out`.
pub fn load(portfolio: &Path, out: &Path) -> Result<Vec<Repo>> {
    let text = std::fs::read_to_string(portfolio)
        .map_err(|e| Error::Usage(format!("--portfolio {}: {e}", portfolio.display())))?;
    let repos: Vec<String> = serde_saphyr::from_str(&text).map_err(|e| {
        Error::Usage(format!(
            "{}: {e}\n  = fix: the portfolio is a YAML list of repository paths, e.g. `- ../server-a`",
            portfolio.display()
        ))
    })?;
    if repos.is_empty() {
        return Err(Error::Usage(format!(
            "{}: the portfolio lists no repository",
            portfolio.display()
        )));
    }
    let base = portfolio.parent().unwrap_or(Path::new("."));
    Ok(repos
        .iter()
        .enumerate()
        .map(|(i, repo)| {
            let path = base.join(repo);
            let name = path
                .file_name()
                .map_or_else(|| repo.clone(), |n| n.to_string_lossy().into_owned());
            let out = out.join(format!("{}-{}", i + 1, name));
            Repo { path, name, out }
        })
        .collect())
}

/// The exit code of a whole portfolio: the worst of its repos'.
pub fn worst(codes: impl IntoIterator<Item = ExitCode>) -> ExitCode {
    codes.into_iter().fold(ExitCode::Ok, ExitCode::worst)
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
    }

    #[test]
    fn worst_of_the_repos() {
        use ExitCode::*;
        assert_eq!(worst([Ok, GateFailed, Timeout]), GateFailed);
        assert_eq!(worst([SpecStale, BaselineRed]), BaselineRed);
        assert_eq!(worst([]), Ok);
    }
}
