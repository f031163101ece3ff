//! How a repository's tests find their dependencies: the Python environment
//! manager (uv, poetry, pdm, hatch, tox, nox, a plain virtualenv) and its
//! interpreter, and the JavaScript package manager and workspace (pnpm,
//! yarn, npm) a package's `test` script runs from.
//!
//! Nothing here writes the user's environment: an interpreter is looked up
//! (a file test, or a read-only query such as `poetry env info --path` with
//! environment creation off, `hatch env find`) and used as it is; nothing
//! is synced, installed or created. When the environment a repo declares is
//! not there, [`PythonEnv::setup`] / [`JsEnv::setup`] name the command that
//! creates it (`uv sync`, `pnpm install`, …), for the message of a red
//! baseline.

use std::path::{Path, PathBuf};

/// A Python environment manager, from the files that declare it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PyManager {
    /// `uv.lock` or `[tool.uv]`: `uv run`.
    Uv,
    /// `poetry.lock` or `[tool.poetry]`: `poetry run`.
    Poetry,
    /// `pdm.lock` or `[tool.pdm]`: `pdm run`.
    Pdm,
    /// `hatch.toml` or `[tool.hatch.envs]`: `hatch run`.
    Hatch,
    /// `tox.ini` or `[tool.tox]`: the default environment's commands.
    Tox,
    /// `noxfile.py`: the default session's commands.
    Nox,
}

impl PyManager {
    /// The manager's command name (`uv`, `poetry`, …), as in messages.
    pub fn name(self) -> &'static str {
        match self {
            PyManager::Uv => "uv",
            PyManager::Poetry => "poetry",
            PyManager::Pdm => "pdm",
            PyManager::Hatch => "hatch",
            PyManager::Tox => "tox",
            PyManager::Nox => "nox",
        }
    }

    /// The command that creates the environment (run by the user, never by
    /// unguard).
    pub fn setup(self) -> &'static str {
        match self {
            PyManager::Uv => "uv sync",
            PyManager::Poetry => "poetry install",
            PyManager::Pdm => "pdm install",
            PyManager::Hatch => "hatch env create",
            PyManager::Tox => "tox --notest",
            PyManager::Nox => "nox --install-only",
        }
    }
}

/// The interpreter a repo's Python tests run with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonEnv {
    /// The manager the repo declares, if any.
    pub manager: Option<PyManager>,
    /// How to call the interpreter in the command (`.venv/bin/python`,
    /// an absolute path outside the repo, or `python3`).
    pub python: String,
    /// Whether `python` is an environment of the repo (not PATH's).
    pub found: bool,
    /// Where the interpreter comes from, for the user.
    pub reason: String,
    /// The set-up command, when the declared environment is missing.
    pub setup: Option<String>,
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap_or_default()
}

/// The manager a Python repo declares: lock files first, then tool tables.
pub fn py_manager(root: &Path, files: &[String]) -> Option<PyManager> {
    let has = |name: &str| files.iter().any(|f| f == name) || root.join(name).is_file();
    let pyproject = read(root, "pyproject.toml");
    let table = |t: &str| pyproject.contains(&format!("[tool.{t}"));
    if has("uv.lock") || table("uv") {
        Some(PyManager::Uv)
    } else if has("poetry.lock") || table("poetry") {
        Some(PyManager::Poetry)
    } else if has("pdm.lock") || table("pdm") {
        Some(PyManager::Pdm)
    } else if has("hatch.toml") || table("hatch.envs") {
        Some(PyManager::Hatch)
    } else if has("tox.ini") || table("tox") {
        Some(PyManager::Tox)
    } else if has("noxfile.py") {
        Some(PyManager::Nox)
    } else {
        None
    }
}

/// The interpreter of `root`'s environment: the repo's own `.venv`/`venv`
/// (linked into every copy), else the manager's environment wherever it
/// keeps it, else `python3` from PATH.
pub fn python_env(root: &Path, files: &[String]) -> PythonEnv {
    let manager = py_manager(root, files);
    let in_repo = [".venv", "venv"]
        .into_iter()
        .find(|v| root.join(v).join("bin/python").exists());
    let label = |what: String| match manager {
        Some(m) => format!("{} project; {what}", m.name()),
        None => what,
    };
    if let Some(v) = in_repo {
        return PythonEnv {
            manager,
            python: format!("{v}/bin/python"),
            found: true,
            reason: label(format!(
                "the repo's virtualenv ({v}/bin/python), used as it is"
            )),
            setup: None,
        };
    }
    if let Some((python, whence)) = manager.and_then(|m| managed_python(m, root)) {
        return PythonEnv {
            manager,
            python: shell_word(&python),
            found: true,
            reason: label(format!("{whence} ({python}), used as it is")),
            setup: None,
        };
    }
    PythonEnv {
        manager,
        python: "python3".into(),
        found: false,
        reason: match manager {
            Some(m) => format!(
                "{} project, but its environment is not set up: python3 from PATH",
                m.name()
            ),
            None => "python3 from PATH (no .venv/ or venv/ in the repo)".into(),
        },
        setup: manager.map(|m| m.setup().to_string()),
    }
}

/// A path as one shell word (single-quoted when it needs to be).
fn shell_word(s: &str) -> String {
    if s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+@".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The manager's environment outside `.venv`: its interpreter and where it
/// was found. Looked up, never created.
fn managed_python(m: PyManager, root: &Path) -> Option<(String, String)> {
    let python_in = |env: &Path| {
        let p = env.join("bin/python");
        p.exists().then(|| p.display().to_string())
    };
    match m {
        PyManager::Uv => {
            let env = std::env::var_os("UV_PROJECT_ENVIRONMENT")?;
            let env = root.join(env);
            Some((python_in(&env)?, "UV_PROJECT_ENVIRONMENT".into()))
        }
        PyManager::Poetry => {
            let out = probe(
                root,
                "poetry",
                &["env", "info", "--path", "--no-interaction"],
                &[],
            )?;
            let env = PathBuf::from(out.lines().next()?.trim());
            Some((
                python_in(&env)?,
                "poetry's environment (`poetry env info --path`)".into(),
            ))
        }
        PyManager::Pdm => {
            let p = read(root, ".pdm-python").trim().to_string();
            (!p.is_empty() && Path::new(&p).exists())
                .then(|| (p, "pdm's interpreter (.pdm-python)".to_string()))
        }
        PyManager::Hatch => {
            let out = probe(root, "hatch", &["env", "find"], &[])?;
            let env = out
                .lines()
                .map(|l| PathBuf::from(l.trim()))
                .find(|e| e.join("bin/python").exists())?;
            Some((
                python_in(&env)?,
                "hatch's default environment (`hatch env find`)".into(),
            ))
        }
        PyManager::Tox | PyManager::Nox => {
            let dir = if m == PyManager::Tox { ".tox" } else { ".nox" };
            let env = tool_env(&root.join(dir))?;
            let rel = format!("{dir}/{}/bin/python", env.file_name()?.to_string_lossy());
            Some((rel, format!("the {} environment", m.name())))
        }
    }
}

/// The tox/nox environment to use: the first (by name) with pytest
/// installed, else the first.
fn tool_env(dir: &Path) -> Option<PathBuf> {
    let mut envs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("bin/python").exists())
        .collect();
    envs.sort();
    let has_pytest = |env: &PathBuf| {
        std::fs::read_dir(env.join("lib"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.path().join("site-packages/pytest").is_dir())
    };
    envs.iter()
        .find(|e| has_pytest(e))
        .or(envs.first())
        .cloned()
}

/// The stdout of a read-only query of a tool in `root`, or `None` when the
/// tool is missing or fails.
fn probe(root: &Path, tool: &str, args: &[&str], env: &[(&str, &str)]) -> Option<String> {
    let out = std::process::Command::new(tool)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `PYTHONPATH=...` for a src layout: the copy's `src/` first on the import
/// path, so that an editable install in the environment (a `.pth` or an
/// import hook pointing at the user's checkout) cannot shadow the mutated
/// copy. Empty for a flat layout (`python -m` puts the copy's root first).
pub fn src_first(files: &[String]) -> &'static str {
    if files
        .iter()
        .any(|f| f.starts_with("src/") && f.ends_with(".py"))
    {
        "PYTHONPATH=\"$PWD/src${PYTHONPATH:+:$PYTHONPATH}\" "
    } else {
        ""
    }
}

/// A JavaScript package manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsTool {
    /// `pnpm-lock.yaml` or `pnpm-workspace.yaml`.
    Pnpm,
    /// `yarn.lock` (yarn classic).
    Yarn,
    /// `package-lock.json`, or no lock file at all.
    Npm,
}

impl JsTool {
    /// The tool's command name (`pnpm`, `yarn`, `npm`).
    pub fn name(self) -> &'static str {
        match self {
            JsTool::Pnpm => "pnpm",
            JsTool::Yarn => "yarn",
            JsTool::Npm => "npm",
        }
    }
}

/// Where a package's `test` script runs from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsEnv {
    /// The package manager the workspace root declares.
    pub tool: JsTool,
    /// The workspace root (the dir to copy and run from): the package
    /// itself when it is not part of a workspace.
    pub root: PathBuf,
    /// The package's path under the workspace root (`packages/server`);
    /// empty when the package is the root.
    pub package_dir: String,
    /// The package's name (for the workspace filter).
    pub package_name: String,
    /// The set-up command, when `node_modules` is missing at the root.
    pub setup: Option<String>,
}

impl JsEnv {
    /// The test command, run from [`JsEnv::root`]. A workspace package's
    /// script runs through npm in the package's dir of the copy (npm puts
    /// the `node_modules/.bin` of the package and of every dir above it,
    /// the workspace root's included, on PATH): `pnpm run` keeps task state
    /// in `node_modules`, which is the user's (linked), and refuses it.
    pub fn command(&self) -> String {
        match (self.package_dir.is_empty(), self.tool) {
            (true, JsTool::Yarn) => "yarn --silent test".into(),
            (true, _) => "npm test --silent".into(),
            (false, JsTool::Npm) => format!(
                "npm test --silent --workspace={}",
                shell_word(&self.package_dir)
            ),
            (false, _) => format!(
                "npm test --silent --prefix {}",
                shell_word(&self.package_dir)
            ),
        }
    }

    /// Why this command, for `init`'s comment and the audit report.
    pub fn reason(&self) -> String {
        if self.package_dir.is_empty() {
            format!("package.json has a `test` script; {}", self.tool.name())
        } else {
            format!(
                "package `{}` of a {} workspace: its `test` script, run in {} of a copy of the whole workspace (its dependencies live at the root {})",
                self.package_name,
                self.tool.name(),
                self.package_dir,
                self.root.display()
            )
        }
    }
}

fn is_workspace_root(dir: &Path) -> bool {
    if dir.join("pnpm-workspace.yaml").is_file() {
        return true;
    }
    let pkg: serde_json::Value =
        serde_json::from_str(&read(dir, "package.json")).unwrap_or_default();
    !pkg["workspaces"].is_null()
}

/// The JavaScript environment of the package at `pkg` (canonical), when it
/// has a `test` script: the nearest workspace root at or above it (not
/// past the git repository's top), and the package manager its lock file
/// or workspace file names.
pub fn js_env(pkg: &Path) -> Option<JsEnv> {
    let manifest: serde_json::Value = serde_json::from_str(&read(pkg, "package.json")).ok()?;
    if !manifest["scripts"]["test"].is_string() {
        return None;
    }
    let mut root = pkg.to_path_buf();
    let mut dir = Some(pkg);
    while let Some(d) = dir {
        if is_workspace_root(d) {
            root = d.to_path_buf();
            break;
        }
        if d.join(".git").exists() {
            break;
        }
        dir = d.parent();
    }
    let tool =
        if root.join("pnpm-workspace.yaml").is_file() || root.join("pnpm-lock.yaml").is_file() {
            JsTool::Pnpm
        } else if root.join("yarn.lock").is_file() {
            JsTool::Yarn
        } else {
            JsTool::Npm
        };
    let package_dir = pkg
        .strip_prefix(&root)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let setup = (!root.join("node_modules").is_dir()).then(|| format!("{} install", tool.name()));
    Some(JsEnv {
        tool,
        root,
        package_dir,
        package_name: manifest["name"].as_str().unwrap_or_default().to_string(),
        setup,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(root: &Path, list: &[(&str, &str)]) -> Vec<String> {
        for (f, text) in list {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        list.iter().map(|(f, _)| f.to_string()).collect()
    }

    #[test]
    fn managers_from_lock_files_and_tool_tables() {
        type Files<'a> = &'a [(&'a str, &'a str)];
        let cases: &[(Files, Option<PyManager>)] = &[
            (&[("uv.lock", ""), ("tox.ini", "")], Some(PyManager::Uv)),
            (&[("poetry.lock", "")], Some(PyManager::Poetry)),
            (
                &[("pyproject.toml", "[tool.pdm.dev-dependencies]\n")],
                Some(PyManager::Pdm),
            ),
            (
                &[("pyproject.toml", "[tool.hatch.envs.default]\n")],
                Some(PyManager::Hatch),
            ),
            (&[("tox.ini", "[tox]\n")], Some(PyManager::Tox)),
            (&[("noxfile.py", "")], Some(PyManager::Nox)),
            (
                &[(
                    "pyproject.toml",
                    "[build-system]\nrequires = [\"hatchling\"]\n",
                )],
                None,
            ),
        ];
        for (list, want) in cases {
            let d = tempfile::tempdir().unwrap();
            let f = files(d.path(), list);
            assert_eq!(py_manager(d.path(), &f), *want, "{list:?}");
        }
    }

    #[test]
    fn a_missing_environment_names_its_setup_command() {
        let d = tempfile::tempdir().unwrap();
        let f = files(d.path(), &[("uv.lock", ""), ("app.py", "")]);
        let env = python_env(d.path(), &f);
        assert_eq!((env.python.as_str(), env.found), ("python3", false));
        assert_eq!(env.setup.as_deref(), Some("uv sync"));
        files(d.path(), &[(".venv/bin/python", "")]);
        let env = python_env(d.path(), &f);
        assert_eq!((env.python.as_str(), env.setup), (".venv/bin/python", None));
        assert!(env.reason.starts_with("uv project; "), "{}", env.reason);
        let d = tempfile::tempdir().unwrap();
        let f = files(d.path(), &[("tox.ini", ""), (".tox/py311/bin/python", "")]);
        assert_eq!(python_env(d.path(), &f).python, ".tox/py311/bin/python");
    }

    #[test]
    fn src_layout_goes_first_on_the_import_path() {
        assert_eq!(src_first(&["app.py".into()]), "");
        assert!(src_first(&["src/pkg/app.py".into()]).starts_with("PYTHONPATH=\"$PWD/src"));
        assert_eq!(shell_word("/a b/python"), "'/a b/python'");
    }

    #[test]
    fn a_workspace_package_runs_from_the_root_with_its_filter() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        files(
            &root,
            &[
                ("pnpm-workspace.yaml", "packages: ['packages/*']\n"),
                ("package.json", "{\"name\": \"mono\"}"),
                (
                    "packages/server/package.json",
                    "{\"name\": \"@acme/server\", \"scripts\": {\"test\": \"vitest\"}}",
                ),
            ],
        );
        std::fs::create_dir(root.join(".git")).unwrap();
        let env = js_env(&root.join("packages/server")).unwrap();
        assert_eq!(env.root, root);
        assert_eq!(env.package_dir, "packages/server");
        assert_eq!(env.command(), "npm test --silent --prefix packages/server");
        assert_eq!(env.setup.as_deref(), Some("pnpm install"));
        assert!(js_env(&root).is_none(), "the root has no test script");
    }
}
