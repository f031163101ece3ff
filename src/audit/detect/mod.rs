//! What a repository is, for `unguard audit` and `unguard init`: its
//! languages, the MCP SDK it builds on, and the command that runs its tests
//! (honouring a virtualenv or `node_modules` inside the repo).

pub mod ci_workflow;
pub mod environment;
pub mod invocation;
pub mod package_scripts;
pub mod project_command;
pub mod task_files;
pub mod test_command;
pub mod translate;

use std::path::Path;

pub use test_command::{Runner, TestCommand};

/// What `detect` found.
#[derive(Debug, Clone, Default)]
pub struct Detected {
    /// Python sources outside the tests (`.py`).
    pub python: bool,
    /// TypeScript or JavaScript sources outside the tests.
    pub typescript: bool,
    /// Go sources outside the tests (`.go`).
    pub go: bool,
    /// SDKs seen, e.g. `mcp 2.x (MCPServer)`.
    pub sdks: Vec<String>,
    /// The test command to run: the project's own (CI, Makefile, tox, nox,
    /// package.json) or, failing that, the guess; `None` when nothing runs tests.
    pub test: Option<TestCommand>,
    /// Ignored environment dirs that runs need (linked into every copy).
    pub env_dirs: Vec<String>,
    /// Whether the server code serves an HTTP transport (streamable HTTP,
    /// SSE, an ASGI/Express app): HTTP controls are expected only then.
    pub serves_http: bool,
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
    d.sdks = sdks(root, files);
    d.serves_http = serves_http(root, files);
    for env in [".venv", "venv", "node_modules"] {
        if root.join(env).is_dir() {
            d.env_dirs.push(env.to_string());
        }
    }
    d.test = test_command(root, files, &d);
    d
}

fn test_command(root: &Path, files: &[String], d: &Detected) -> Option<TestCommand> {
    if let Some(own) = crate::audit::detect::project_command::project_command(root, files) {
        return Some(own);
    }
    let has = |name: &str| files.iter().any(|f| f == name);
    if d.python || has("pyproject.toml") || has("setup.py") {
        let env = crate::audit::detect::environment::python_env(root, files);
        let py = format!(
            "{}{}",
            crate::audit::detect::environment::src_first(files),
            env.python
        );
        let where_py = env.reason.clone();
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
        let pytest_installed = env.found && env_has_pytest(root, &env.python);
        let uses_pytest = config.contains("[tool.pytest")
            || config.contains("[pytest]")
            || config.contains("[tool:pytest]")
            || reqs.contains("pytest")
            || pytest_installed
            || (pytest_tests && !env.found);
        if uses_pytest {
            return Some(TestCommand {
                runner: Runner::Pytest,
                command: format!("{py} -m pytest -q -p no:cacheprovider --junitxml={{junit}}"),
                junit: Some("{junit}".into()),
                preset: crate::spec::Preset::Pytest,
                reason: format!("pytest configuration or tests found; {where_py}"),
                setup: env.setup,
                from: None,
            });
        }
        if pytest_tests || files.iter().any(|f| f.starts_with("tests/")) {
            return Some(TestCommand {
                runner: Runner::Unittest,
                command: format!("{py} -m unittest discover -q"),
                junit: None,
                preset: crate::spec::Preset::Generic,
                reason: format!("test files without pytest configuration; {where_py}"),
                setup: env.setup,
                from: None,
            });
        }
    }
    if let Some(js) = js_command(root, files) {
        return Some(js);
    }
    if has("go.mod") {
        return Some(TestCommand {
            runner: Runner::Go,
            // -json: per-test results unguard reads from the log.
            command: "go test -json ./...".into(),
            junit: None,
            preset: crate::spec::Preset::Generic,
            reason: "go.mod found (go test -json: per-test results)".into(),
            setup: None,
            from: None,
        });
    }
    if has("Cargo.toml") {
        return Some(TestCommand {
            runner: Runner::Cargo,
            command: "cargo test -q".into(),
            junit: None,
            preset: crate::spec::Preset::Generic,
            reason: "Cargo.toml found".into(),
            setup: None,
            from: None,
        });
    }
    None
}

/// Whether the environment of the interpreter `python` (as the command
/// calls it, relative to `root` or absolute) has pytest installed.
fn env_has_pytest(root: &Path, python: &str) -> bool {
    let python = root.join(python.trim_matches('\''));
    let lib = python
        .parent()
        .and_then(|b| b.parent())
        .map(|v| v.join("lib"));
    lib.and_then(|l| std::fs::read_dir(l).ok())
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| e.path().join("site-packages/pytest").is_dir())
}

/// The package's `test` script, run by its package manager from its
/// workspace root (see [`crate::audit::detect::environment::js_env`]).
fn js_command(root: &Path, files: &[String]) -> Option<TestCommand> {
    if !files.iter().any(|f| f == "package.json") {
        return None;
    }
    let js = crate::audit::detect::environment::js_env(root)?;
    // The line of the `test` script, for the provenance.
    let from = read(root, "package.json")
        .lines()
        .position(|l| l.trim_start().starts_with("\"test\""))
        .map(|n| format!("package.json:{}", n + 1));
    Some(TestCommand {
        runner: Runner::Npm,
        command: js.command(),
        junit: None,
        preset: crate::spec::Preset::Generic,
        reason: match &from {
            Some(at) => format!("{} ({at})", js.reason()),
            None => js.reason(),
        },
        setup: js.setup.clone(),
        from,
    })
}

/// The MCP SDKs the sources import, with the API they use and the version
/// a lock file or requirement pins: `mcp 1.x (low-level Server), 1.9.4 from
/// uv.lock`. Python files count only for the Python SDK and TypeScript or
/// JavaScript files only for the TypeScript SDK, by their import lines.
pub fn sdks(root: &Path, files: &[String]) -> Vec<String> {
    let mut py_apis: Vec<&str> = Vec::new();
    let mut py_seen = false;
    let mut ts_seen = false;
    let mut go_sdks: Vec<&str> = Vec::new();
    for f in files
        .iter()
        .filter(|f| {
            [".py", ".ts", ".mts", ".js", ".mjs", ".cjs", ".go"]
                .iter()
                .any(|e| f.ends_with(e))
        })
        .take(2000)
    {
        let t = read(root, f);
        if f.ends_with(".py") {
            for line in t.lines().map(str::trim_start) {
                let mut words = line.split_whitespace();
                let module = match words.next() {
                    Some("from") | Some("import") => words.next().unwrap_or(""),
                    _ => continue,
                };
                let module = module.trim_end_matches(',');
                if module != "mcp" && !module.starts_with("mcp.") {
                    continue;
                }
                py_seen = true;
                for (needle, api) in [
                    ("MCPServer", "MCPServer"),
                    ("FastMCP", "FastMCP"),
                    ("lowlevel", "low-level Server"),
                    ("import Server", "low-level Server"),
                ] {
                    if line.contains(needle) && !py_apis.contains(&api) {
                        py_apis.push(api);
                    }
                }
            }
        } else if f.ends_with(".go") {
            for (module, name) in [
                ("\"github.com/modelcontextprotocol/go-sdk/", "go-sdk"),
                ("\"github.com/mark3labs/mcp-go/", "mcp-go"),
            ] {
                if t.contains(module) && !go_sdks.contains(&name) {
                    go_sdks.push(name);
                }
            }
        } else if t.contains("@modelcontextprotocol/sdk") {
            ts_seen = true;
        }
    }
    let mut out = Vec::new();
    if py_seen {
        let pinned = pinned_version(root, &["uv.lock", "poetry.lock", "pdm.lock"], "mcp");
        let major = |v: &str| v.split('.').next().map(|m| format!("{m}.x"));
        for api in if py_apis.is_empty() {
            vec!["import mcp"]
        } else {
            py_apis
        } {
            let line = match api {
                "MCPServer" => "mcp 2.x (MCPServer)".to_string(),
                "FastMCP" => "mcp 1.x (FastMCP)".to_string(),
                other => match pinned.as_ref().and_then(|(v, _)| major(v)) {
                    Some(m) => format!("mcp {m} ({other})"),
                    None => format!("mcp ({other})"),
                },
            };
            out.push(match &pinned {
                Some((v, from)) => format!("{line}, {v} from {from}"),
                None => line,
            });
        }
    }
    if ts_seen {
        let pinned = pinned_version(
            root,
            &["package-lock.json", "pnpm-lock.yaml", "yarn.lock"],
            "@modelcontextprotocol/sdk",
        );
        out.push(match pinned {
            Some((v, from)) => format!("@modelcontextprotocol/sdk (TypeScript), {v} from {from}"),
            None => "@modelcontextprotocol/sdk (TypeScript)".into(),
        });
    }
    for name in go_sdks {
        let module = match name {
            "go-sdk" => "github.com/modelcontextprotocol/go-sdk",
            _ => "github.com/mark3labs/mcp-go",
        };
        out.push(match go_module_version(root, module) {
            Some(v) => format!("{name} (Go), {v} from go.mod"),
            None => format!("{name} (Go)"),
        });
    }
    out
}

/// The version `go.mod` requires of `module` (`require x v1.2.3`, alone or
/// in a block).
fn go_module_version(root: &Path, module: &str) -> Option<String> {
    read(root, "go.mod").lines().find_map(|l| {
        let l = l.trim().trim_start_matches("require").trim();
        let mut words = l.split_whitespace();
        (words.next() == Some(module))
            .then(|| words.next().map(str::to_string))
            .flatten()
    })
}

/// The version of `package` the first of `locks` that names it pins.
fn pinned_version(root: &Path, locks: &[&str], package: &str) -> Option<(String, String)> {
    for lock in locks {
        let text = read(root, lock);
        if text.is_empty() {
            continue;
        }
        let v = match *lock {
            // TOML locks: `name = "mcp"` then `version = "1.9.4"`.
            "uv.lock" | "poetry.lock" | "pdm.lock" => {
                let mut lines = text.lines();
                let name = format!("name = \"{package}\"");
                lines.find(|l| l.trim() == name).and_then(|_| {
                    lines
                        .next()
                        .and_then(|l| l.trim().strip_prefix("version = \""))
                        .map(|v| v.trim_end_matches('"').to_string())
                })
            }
            "package-lock.json" => {
                let doc: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                doc["packages"][format!("node_modules/{package}")]["version"]
                    .as_str()
                    .map(str::to_string)
            }
            // pnpm-lock.yaml `/@modelcontextprotocol/sdk@1.2.3:` or
            // `'@modelcontextprotocol/sdk@1.2.3':`; yarn.lock `version "1.2.3"`.
            _ => text.lines().find_map(|l| {
                let l = l.trim().trim_start_matches(['/', '\'', '"']);
                let rest = l.strip_prefix(package)?.strip_prefix('@')?;
                let v: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
                    .collect();
                (!v.is_empty() && v.starts_with(|c: char| c.is_ascii_digit())).then_some(v)
            }),
        };
        if let Some(v) = v {
            return Some((v, lock.to_string()));
        }
    }
    None
}

/// Markers of an HTTP transport in server code (not in tests).
const HTTP_MARKERS: &[&str] = &[
    "streamable_http_app",
    "sse_app",
    "streamable-http",
    "transport=\"sse\"",
    "transport='sse'",
    "transport=\"http\"",
    "transport_security",
    "uvicorn",
    "starlette",
    "fastapi",
    "aiohttp",
    "StreamableHTTPServerTransport",
    "SSEServerTransport",
    "express(",
    "createServer(",
    "fastify",
    "from \"hono\"",
    "NewStreamableHTTPHandler",
    "NewSSEHandler",
    "NewStreamableHTTPServer",
    "NewSSEServer",
    "http.ListenAndServe",
];

/// Whether a non-test source file serves an HTTP transport (see [`HTTP_MARKERS`]).
pub fn serves_http(root: &Path, files: &[String]) -> bool {
    files
        .iter()
        .filter(|f| {
            let name = f.rsplit('/').next().unwrap_or(f);
            [".py", ".ts", ".mts", ".js", ".mjs", ".go"]
                .iter()
                .any(|e| f.ends_with(e))
                && !name.ends_with("_test.go")
                && !f
                    .split('/')
                    .any(|c| c == "tests" || c == "test" || c == "__tests__")
                && !name.starts_with("test_")
                && !name.contains(".test.")
                && !name.contains(".spec.")
        })
        .take(2000)
        .any(|f| {
            let t = read(root, f);
            HTTP_MARKERS.iter().any(|m| t.contains(m))
        })
}
