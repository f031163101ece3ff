//! What a repository is, for `unguard audit` and `unguard init`: its
//! languages, the MCP SDK it builds on, and the command that runs its tests
//! (honouring a virtualenv or `node_modules` inside the repo).

use std::path::Path;

use crate::spec::Command;

/// The test runner unguard will drive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runner {
    Pytest,
    Unittest,
    Npm,
    Cargo,
    Go,
}

impl Runner {
    pub fn name(&self) -> &'static str {
        match self {
            Runner::Pytest => "pytest",
            Runner::Unittest => "unittest",
            Runner::Npm => "npm test",
            Runner::Cargo => "cargo test",
            Runner::Go => "go test",
        }
    }
}

/// The test command as it goes into a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCommand {
    pub runner: Runner,
    pub command: String,
    /// `{junit}` when the command writes a JUnit report there.
    pub junit: Option<String>,
    /// `pytest` or `generic` (which exit codes mean "tests failed").
    pub preset: crate::spec::Preset,
    /// Why this command (shown to the user).
    pub reason: String,
}

impl TestCommand {
    pub fn spec_command(&self) -> Command {
        Command::Shell(self.command.clone())
    }
}

/// What `detect` found.
#[derive(Debug, Clone, Default)]
pub struct Detected {
    pub python: bool,
    pub typescript: bool,
    pub go: bool,
    /// SDKs seen, e.g. `mcp 2.x (MCPServer)`.
    pub sdks: Vec<String>,
    pub test: Option<TestCommand>,
    /// Ignored environment dirs that runs need (linked into every copy).
    pub env_dirs: Vec<String>,
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap_or_default()
}

/// Look at `root` and the repo-relative `files` (the manifest).
pub fn detect(root: &Path, files: &[String]) -> Detected {
    let mut d = Detected {
        python: files.iter().any(|f| f.ends_with(".py")),
        typescript: files
            .iter()
            .any(|f| (f.ends_with(".ts") || f.ends_with(".mts")) && !f.ends_with(".d.ts")),
        go: files.iter().any(|f| f.ends_with(".go")),
        ..Detected::default()
    };
    // SDKs: from imports in the sources (bounded scan).
    let mut text = String::new();
    for f in files
        .iter()
        .filter(|f| {
            f.ends_with(".py") || f.ends_with(".ts") || f.ends_with(".js") || f.ends_with(".go")
        })
        .take(2000)
    {
        let t = read(root, f);
        if t.contains("mcp") || t.contains("modelcontextprotocol") {
            text.push_str(&t);
            text.push('\n');
        }
    }
    if text.contains("MCPServer") {
        d.sdks.push("mcp 2.x (MCPServer)".into());
    }
    if text.contains("FastMCP") {
        d.sdks.push("mcp 1.x (FastMCP)".into());
    }
    if text.contains("@modelcontextprotocol/sdk") {
        d.sdks.push("@modelcontextprotocol/sdk (TypeScript)".into());
    }
    if text.contains("github.com/modelcontextprotocol/go-sdk") {
        d.sdks.push("go-sdk (Go)".into());
    }
    if text.contains("github.com/mark3labs/mcp-go") {
        d.sdks.push("mcp-go (Go)".into());
    }
    for env in [".venv", "venv", "node_modules"] {
        if root.join(env).is_dir() {
            d.env_dirs.push(env.to_string());
        }
    }
    d.test = test_command(root, files, &d);
    d
}

fn test_command(root: &Path, files: &[String], d: &Detected) -> Option<TestCommand> {
    let has = |name: &str| files.iter().any(|f| f == name);
    if d.python || has("pyproject.toml") || has("setup.py") {
        let venv_python = [".venv/bin/python", "venv/bin/python"]
            .into_iter()
            .find(|p| root.join(p).exists());
        let py = venv_python.unwrap_or("python3");
        let where_py = match venv_python {
            Some(p) => format!("the repo's virtualenv ({p})"),
            None => "python3 from PATH (no .venv/ or venv/ in the repo)".into(),
        };
        let config = ["pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini"]
            .iter()
            .map(|f| read(root, f))
            .collect::<String>();
        let reqs: String = files
            .iter()
            .filter(|f| f.contains("requirements") && f.ends_with(".txt"))
            .map(|f| read(root, f))
            .collect();
        let pytest_tests = files.iter().any(|f| {
            let name = f.rsplit('/').next().unwrap_or(f);
            name.starts_with("test_") && name.ends_with(".py") || name == "conftest.py"
        });
        let pytest_installed = venv_python
            .map(|p| {
                let lib = root
                    .join(p)
                    .parent()
                    .and_then(|b| b.parent())
                    .map(|v| v.join("lib"));
                lib.and_then(|l| std::fs::read_dir(l).ok())
                    .into_iter()
                    .flatten()
                    .flatten()
                    .any(|e| e.path().join("site-packages/pytest").is_dir())
            })
            .unwrap_or(false);
        let uses_pytest = config.contains("[tool.pytest")
            || config.contains("[pytest]")
            || config.contains("[tool:pytest]")
            || reqs.contains("pytest")
            || pytest_installed
            || (pytest_tests && venv_python.is_none());
        if uses_pytest {
            return Some(TestCommand {
                runner: Runner::Pytest,
                command: format!("{py} -m pytest -q -p no:cacheprovider --junitxml={{junit}}"),
                junit: Some("{junit}".into()),
                preset: crate::spec::Preset::Pytest,
                reason: format!("pytest configuration or tests found; {where_py}"),
            });
        }
        if pytest_tests || files.iter().any(|f| f.starts_with("tests/")) {
            return Some(TestCommand {
                runner: Runner::Unittest,
                command: format!("{py} -m unittest discover -q"),
                junit: None,
                preset: crate::spec::Preset::Generic,
                reason: format!("test files without pytest configuration; {where_py}"),
            });
        }
    }
    if has("package.json") {
        let pkg = read(root, "package.json");
        let v: serde_json::Value = serde_json::from_str(&pkg).unwrap_or_default();
        if v["scripts"]["test"].is_string() {
            return Some(TestCommand {
                runner: Runner::Npm,
                command: "npm test --silent".into(),
                junit: None,
                preset: crate::spec::Preset::Generic,
                reason: "package.json has a `test` script".into(),
            });
        }
    }
    if has("go.mod") {
        return Some(TestCommand {
            runner: Runner::Go,
            // -json: per-test results unguard reads from the log.
            command: "go test -json ./...".into(),
            junit: None,
            preset: crate::spec::Preset::Generic,
            reason: "go.mod found (go test -json: per-test results)".into(),
        });
    }
    if has("Cargo.toml") {
        return Some(TestCommand {
            runner: Runner::Cargo,
            command: "cargo test -q".into(),
            junit: None,
            preset: crate::spec::Preset::Generic,
            reason: "Cargo.toml found".into(),
        });
    }
    None
}
