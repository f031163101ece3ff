//! `unguard audit` on repositories as they are: each environment manager's
//! environment found and used as it is (never synced, installed into or
//! created; byte-identical afterwards), the copy's sources first on the
//! import path, a JavaScript workspace package run from a copy of its
//! workspace root, the set-up command named when the environment is
//! missing, SDKs from imports and lock files, the honest gate (nothing
//! proven, expected control absent, survivors before unreached files), the
//! command that ran in audit.md, and a portfolio of differently run repos.
//!
//! Every environment is set up offline from what is installed: virtualenvs
//! with the system site-packages (pytest) made by the manager itself (`uv
//! venv`, `poetry env use`, `hatch env create`, `tox --notest`, `nox
//! --install-only`, `pdm use`), and the repo's dependency (a stub `mcp`
//! package) written into that environment only, as an install would.

use crate::common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether `tool` is on PATH; when not, a visible skip (a failure under
/// CI, where `.ci/run` installs every manager).
fn have(tool: &str) -> bool {
    let found = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        skip::missing(&format!(
            "`{tool}` is not installed: `.ci/run` installs it (PyPI/npm)"
        ));
    }
    found
}

/// A server module with one catalog site (`additional-properties-false`)
/// that imports the repo's dependency `mcp` (only in its environment).
const SERVER: &str = "from mcp.server.fastmcp import FastMCP\n\
\n\
mcp = FastMCP(\"inventory\")\n\
\n\
INPUT_SCHEMA = {\"type\": \"object\", \"required\": [\"branch\"], \"additionalProperties\": False}\n";

/// A test that kills the site's mutant.
const TEST: &str = "from inventory import INPUT_SCHEMA\n\
\n\
def test_unknown_arguments_are_refused():\n    \
    assert INPUT_SCHEMA.get(\"additionalProperties\") is False\n";

/// The `mcp` package stub an install would put into the environment.
const MCP_STUB: &[(&str, &str)] = &[
    ("mcp/__init__.py", ""),
    ("mcp/server/__init__.py", ""),
    (
        "mcp/server/fastmcp.py",
        "class FastMCP:\n    def __init__(self, name, **settings):\n        self.name = name\n        self.settings = settings\n",
    ),
];

/// The site-packages dir of the environment at `env`.
fn site_packages(env: &Path) -> PathBuf {
    let lib = env.join("lib");
    let py = std::fs::read_dir(&lib)
        .unwrap_or_else(|e| panic!("{}: {e}", lib.display()))
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("python"))
        .expect("lib/pythonX.Y");
    py.path().join("site-packages")
}

/// Install the dependency into the environment at `env` (as its manager would).
fn install_dependency(env: &Path) {
    let sp = site_packages(env);
    for (rel, text) in MCP_STUB {
        let p = sp.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// Run a set-up command in `dir` (must succeed).
fn setup(dir: &Path, argv: &[&str], env: &[(&str, String)]) {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("PDM_CHECK_UPDATE", "false")
        .env("UV_OFFLINE", "1")
        .output()
        .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    assert!(
        out.status.success(),
        "{argv:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A flat-layout Python repo: `inventory.py`, its test, pytest with a
/// timeout, plus `extra` files; `.gitignore`d env dirs.
fn py_repo(extra: &[(&str, &str)]) -> Fixture {
    let mut files: Vec<(&str, &str)> = vec![
        ("inventory.py", SERVER),
        ("tests/test_inventory.py", TEST),
        (".gitignore", ".venv/\n.tox/\n.nox/\nout*/\n__pycache__/\n"),
    ];
    files.extend_from_slice(extra);
    Fixture::git(&files)
}

const PYTEST_TIMEOUT: &str = "\n[tool.pytest.ini_options]\ntimeout = 30\n";

/// Audit `fx` with `env` set (what the user's shell has), expecting every
/// mutant killed and `env_dir` untouched; returns stderr.
fn audit_green(fx: &Fixture, env: &[(&str, String)], env_dir: &Path, jobs: &str) -> String {
    let before = tree_state(env_dir, &[]);
    let out_dir = format!("out-j{jobs}");
    let out = fx
        .unguard(&[
            "audit",
            ".",
            "-j",
            jobs,
            "--out",
            &out_dir,
            "--timeout",
            "30s",
        ])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    let (code, stdout, stderr) = (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(code, 0, "{}", ctx(code, &stdout, &stderr));
    let verdicts = fx.verdicts(&out_dir);
    assert!(
        !verdicts.is_empty() && verdicts.values().all(|o| o == "killed"),
        "{verdicts:?}\n{stderr}"
    );
    assert_eq!(
        tree_state(env_dir, &[]),
        before,
        "the user's environment {} changed",
        env_dir.display()
    );
    stdout + &stderr
}

#[test]
fn uv_project_with_an_editable_install_is_audited_from_the_copy() {
    if !have("uv") {
        return;
    }
    let fx = Fixture::git(&[
        (
            "pyproject.toml",
            &format!(
                "[project]\nname = \"inventory\"\nversion = \"0.1.0\"\ndependencies = []\n\n\
                 [build-system]\nrequires = [\"hatchling\"]\nbuild-backend = \"hatchling.build\"\n\n\
                 [tool.hatch.build]\ndev-mode-dirs = [\"src\"]\n\n\
                 [tool.hatch.build.targets.wheel]\npackages = [\"src/inventory\"]\n{PYTEST_TIMEOUT}"
            ),
        ),
        ("uv.lock", "version = 1\n"),
        ("src/inventory/__init__.py", SERVER),
        ("tests/test_inventory.py", TEST),
        (".gitignore", ".venv/\nout*/\n__pycache__/\n"),
    ]);
    let dir = fx.path();
    setup(
        dir,
        &["uv", "venv", "-q", "--system-site-packages", ".venv"],
        &[],
    );
    // The project installed editable, as `uv sync` does: a .pth that puts
    // the user's src/ on the path of every interpreter of this venv.
    setup(
        dir,
        &[
            "uv",
            "pip",
            "install",
            "-q",
            "--python",
            ".venv/bin/python",
            "--offline",
            "--no-build-isolation",
            "-e",
            ".",
        ],
        &[],
    );
    install_dependency(&dir.join(".venv"));
    let err = audit_green(&fx, &[], &dir.join(".venv"), "1");
    assert!(err.contains("uv project"), "{err}");
    assert!(err.contains("PYTHONPATH=\"$PWD/src"), "{err}");
    // -j 2: the same verdicts.
    audit_green(&fx, &[], &dir.join(".venv"), "2");
    assert_eq!(fx.verdicts("out-j1"), fx.verdicts("out-j2"));
}

#[test]
fn poetry_environment_outside_the_repo_is_used_as_it_is() {
    if !have("poetry") {
        return;
    }
    let fx = py_repo(&[(
        "pyproject.toml",
        &format!(
            "[project]\nname = \"inventory\"\nversion = \"0.1.0\"\ndependencies = []\n\n\
             [tool.poetry]\npackage-mode = false\n{PYTEST_TIMEOUT}"
        ),
    )]);
    let home = tempfile::tempdir().unwrap();
    let venvs = home.path().join("venvs");
    let env = [
        ("POETRY_VIRTUALENVS_PATH", venvs.display().to_string()),
        (
            "POETRY_VIRTUALENVS_OPTIONS_SYSTEM_SITE_PACKAGES",
            "true".into(),
        ),
        (
            "POETRY_CACHE_DIR",
            venvs.join("cache").display().to_string(),
        ),
    ];
    setup(fx.path(), &["poetry", "env", "use", "-n", "python3"], &env);
    let venv = std::fs::read_dir(&venvs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("bin/python").exists())
        .expect("poetry's venv");
    install_dependency(&venv);
    let err = audit_green(&fx, &env, &venv, "1");
    assert!(err.contains(&venv.display().to_string()), "{err}");
}

#[test]
fn hatch_default_environment_is_used_as_it_is() {
    if !have("hatch") {
        return;
    }
    let fx = py_repo(&[(
        "pyproject.toml",
        &format!(
            "[project]\nname = \"inventory\"\nversion = \"0.1.0\"\ndependencies = []\n\n\
             [tool.hatch.envs.default]\nskip-install = true\nsystem-packages = true\n{PYTEST_TIMEOUT}"
        ),
    )]);
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("hatch");
    let env = [("HATCH_DATA_DIR", data.display().to_string())];
    setup(fx.path(), &["hatch", "env", "create"], &env);
    let out = Command::new("hatch")
        .args(["env", "find"])
        .current_dir(fx.path())
        .env("HATCH_DATA_DIR", &data)
        .output()
        .unwrap();
    let venv = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    install_dependency(&venv);
    let err = audit_green(&fx, &env, &venv, "1");
    assert!(err.contains("hatch project"), "{err}");
}

#[test]
fn pdm_interpreter_from_pdm_python_is_used_as_it_is() {
    if !have("pdm") {
        return;
    }
    let fx = py_repo(&[(
        "pyproject.toml",
        &format!(
            "[project]\nname = \"inventory\"\nversion = \"0.1.0\"\ndependencies = []\n\n\
             [tool.pdm]\ndistribution = false\n{PYTEST_TIMEOUT}"
        ),
    )]);
    let home = tempfile::tempdir().unwrap();
    let venv = home.path().join("pdm-env");
    setup(
        fx.path(),
        &[
            "python3",
            "-m",
            "venv",
            "--system-site-packages",
            &venv.display().to_string(),
        ],
        &[],
    );
    // `pdm use` records the interpreter in .pdm-python (an ignored file).
    setup(
        fx.path(),
        &[
            "pdm",
            "use",
            "-f",
            &venv.join("bin/python").display().to_string(),
        ],
        &[],
    );
    install_dependency(&venv);
    let err = audit_green(&fx, &[], &venv, "1");
    assert!(err.contains("pdm project"), "{err}");
}

#[test]
fn tox_and_nox_environments_are_used_as_they_are() {
    if !have("tox") || !have("nox") {
        return;
    }
    let tox = py_repo(&[
        (
            "tox.ini",
            "[tox]\nenvlist = py\nskipsdist = true\n\n[testenv]\nskip_install = true\n\
             system_site_packages = true\ncommands = python -m pytest -q\n\n[pytest]\ntimeout = 30\n",
        ),
    ]);
    setup(tox.path(), &["tox", "--notest"], &[]);
    install_dependency(&tox.path().join(".tox/py"));
    let err = audit_green(&tox, &[], &tox.path().join(".tox"), "1");
    assert!(err.contains(".tox/py/bin/python -m pytest"), "{err}");

    let nox = py_repo(&[
        (
            "noxfile.py",
            "import nox\n\n\n@nox.session(venv_params=[\"--system-site-packages\"])\n\
             def tests(session):\n    session.run(\"python\", \"-m\", \"pytest\", \"-q\")\n",
        ),
        ("pytest.ini", "[pytest]\ntimeout = 30\n"),
    ]);
    setup(nox.path(), &["nox", "--install-only"], &[]);
    install_dependency(&nox.path().join(".nox/tests"));
    let err = audit_green(&nox, &[], &nox.path().join(".nox"), "1");
    assert!(err.contains(".nox/tests/bin/python -m pytest"), "{err}");
}

/// A JavaScript workspace (`kind`: pnpm, yarn or npm) whose package
/// `packages/server` has a TypeScript site and a `test` script whose
/// runner lives in the root's `node_modules/.bin` only.
fn js_workspace(kind: &str, with_node_modules: bool) -> Fixture {
    let root_pkg = match kind {
        "pnpm" => "{\"name\": \"mono\", \"private\": true}",
        _ => "{\"name\": \"mono\", \"private\": true, \"workspaces\": [\"packages/*\"]}",
    };
    let mut files = vec![
        ("package.json", root_pkg),
        (
            "packages/server/package.json",
            "{\"name\": \"@acme/server\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"schema-check\"}}",
        ),
        (
            "packages/server/src/schema.ts",
            "export const inputSchema = { \"type\": \"object\", \"additionalProperties\": false };\n",
        ),
        (".gitignore", "node_modules/\nout*/\n"),
    ];
    match kind {
        "pnpm" => files.push(("pnpm-workspace.yaml", "packages:\n  - 'packages/*'\n")),
        "yarn" => files.push(("yarn.lock", "# yarn lockfile v1\n")),
        _ => {}
    }
    let fx = Fixture::git(&files);
    if with_node_modules {
        // The dev dependency's bin, hoisted to the workspace root.
        let bin = fx.path().join("node_modules/.bin/schema-check");
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::fs::write(
            &bin,
            "#!/bin/sh\ngrep -q '\"additionalProperties\": false' src/schema.ts || { echo 'schema accepts unknown keys'; exit 1; }\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    fx
}

#[test]
fn a_workspace_package_runs_from_a_copy_of_its_workspace_root() {
    if !have("npm") {
        return;
    }
    for kind in ["pnpm", "yarn", "npm"] {
        let fx = js_workspace(kind, true);
        let before = tree_state(&fx.path().join("node_modules"), &[]);
        let (code, out, err) = fx.run(&[
            "audit",
            "packages/server",
            "--out",
            "out-ws",
            "--timeout",
            "30s",
        ]);
        assert_eq!(code, 0, "{kind}: {}", ctx(code, &out, &err));
        let v = fx.verdicts("out-ws");
        assert_eq!(
            v.get("additional-properties-false").map(String::as_str),
            Some("killed"),
            "{kind}: {v:?}"
        );
        assert!(
            err.contains(&format!("of a {kind} workspace")),
            "{kind}: {err}"
        );
        assert_eq!(
            tree_state(&fx.path().join("node_modules"), &[]),
            before,
            "{kind}: the workspace's node_modules changed"
        );
    }
}

#[test]
fn a_missing_environment_names_the_command_that_sets_it_up() {
    let fx = py_repo(&[
        ("uv.lock", "version = 1\n"),
        (
            "pyproject.toml",
            &format!("[project]\nname = \"inventory\"\nversion = \"0.1.0\"\n{PYTEST_TIMEOUT}"),
        ),
    ]);
    let (code, out, err) = fx.run(&["audit", ".", "--out", "out-a", "--timeout", "30s"]);
    assert_eq!(code, 4, "{}", ctx(code, &out, &err));
    assert!(
        err.contains("the repo's environment is not set up: run `uv sync` in"),
        "{err}"
    );
    let fx = js_workspace("pnpm", false);
    let (code, out, err) = fx.run(&["audit", "packages/server", "--out", "out-a"]);
    assert_eq!(code, 4, "{}", ctx(code, &out, &err));
    assert!(err.contains("run `pnpm install` in"), "{err}");
}

#[test]
fn sdks_come_from_imports_and_lock_files() {
    let sdks = |fx: &Fixture| -> Vec<String> {
        let (code, out, err) = fx.run(&["audit", "--list", "--json", "."]);
        assert_eq!(code, 0, "{err}");
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        doc["sdks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    // A stdio server on mcp 1.x's low-level Server, pinned by uv.lock.
    let py = Fixture::git(&[
        (
            "server.py",
            "import mcp.server.stdio\nfrom mcp.server.lowlevel import Server\n\nserver = Server(\"x\")\n",
        ),
        (
            "uv.lock",
            "version = 1\n\n[[package]]\nname = \"mcp\"\nversion = \"1.9.4\"\nsource = { registry = \"https://pypi.org/simple\" }\n",
        ),
    ]);
    assert_eq!(
        sdks(&py),
        ["mcp 1.x (low-level Server), 1.9.4 from uv.lock"]
    );
    // A TypeScript server whose own class is named *MCPServer is not mcp 2.x.
    let ts = Fixture::git(&[
        (
            "src/index.ts",
            "import { McpServer } from \"@modelcontextprotocol/sdk/server/mcp.js\";\n\
             export class WeatherMCPServer { server = new McpServer({ name: \"w\", version: \"1\" }); }\n",
        ),
        (
            "package-lock.json",
            "{\"packages\": {\"node_modules/@modelcontextprotocol/sdk\": {\"version\": \"1.17.2\"}}}",
        ),
    ]);
    assert_eq!(
        sdks(&ts),
        ["@modelcontextprotocol/sdk (TypeScript), 1.17.2 from package-lock.json"]
    );
}

/// A Python server with a killed site, serving `transport` (`stdio` or HTTP).
fn server_with_transport(http: bool) -> Fixture {
    let run = if http {
        "def app():\n    return mcp.streamable_http_app()\n"
    } else {
        "def main():\n    mcp.run()  # stdio\n"
    };
    Fixture::git(&[
        ("inventory.py", &format!("{SERVER}\n\n{run}")),
        ("tests/test_inventory.py", TEST),
        ("tests/conftest.py", &MCP_STUB_CONFTEST()),
        ("pytest.ini", "[pytest]\ntimeout = 30\n"),
    ])
}

/// A conftest that provides the `mcp` stub (no environment needed).
#[allow(non_snake_case)]
fn MCP_STUB_CONFTEST() -> String {
    "import sys, types\n\
     class FastMCP:\n    def __init__(self, name, **settings):\n        self.settings = settings\n    \
     def streamable_http_app(self):\n        return None\n    def run(self):\n        pass\n\
     for name in ['mcp', 'mcp.server', 'mcp.server.fastmcp']:\n    sys.modules[name] = types.ModuleType(name)\n\
     sys.modules['mcp.server.fastmcp'].FastMCP = FastMCP\n"
        .to_string()
}

#[test]
fn gate_nothing_proven_fails_with_6() {
    let fx = Fixture::git(&[
        ("calc.py", "def add(a, b):\n    return a + b\n"),
        (
            "tests/test_calc.py",
            "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        ),
        ("pytest.ini", "[pytest]\ntimeout = 30\n"),
    ]);
    let (code, out, err) = fx.run(&["audit", ".", "--out", "out-g"]);
    assert_eq!(code, 6, "{}", ctx(code, &out, &err));
    assert!(
        out.contains("gate: failed (exit 6): nothing proven"),
        "{out}"
    );
    assert_eq!(fx.outcomes("out-g")["gate"]["exit_code"], 6);
}

#[test]
fn gate_expected_http_control_absent_fails_with_7_only_when_http_is_served() {
    let http = server_with_transport(true);
    let (code, out, err) = http.run(&["audit", ".", "--out", "out-g", "--timeout", "30s"]);
    assert_eq!(code, 7, "{}", ctx(code, &out, &err));
    assert!(
        out.contains("expected control absent: transport-security-passed"),
        "{out}"
    );
    assert_eq!(
        http.verdicts("out-g")
            .get("additional-properties-false")
            .map(String::as_str),
        Some("killed")
    );
    // The same server on stdio only: no Host header, no finding.
    let stdio = server_with_transport(false);
    let (code, out, err) = stdio.run(&["audit", ".", "--out", "out-g", "--timeout", "30s"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    let md = stdio.read("out-g/audit.md");
    assert!(
        md.contains("expected of servers that serve HTTP; no HTTP transport seen here"),
        "{md}"
    );
}

#[test]
fn gate_survivors_exit_2_beside_files_no_test_loads_each_canaried_once() {
    let fx = Fixture::git(&[
        // A survivor: the test does not look at the schema.
        ("inventory.py", SERVER),
        (
            "tests/test_inventory.py",
            "import inventory\n\ndef test_loads():\n    assert inventory.mcp is not None\n",
        ),
        ("tests/conftest.py", &MCP_STUB_CONFTEST()),
        // No test imports this module: two sites, one canary.
        (
            "admin.py",
            "A = {\"type\": \"object\", \"additionalProperties\": False}\n\
             B = {\"type\": \"object\", \"required\": [\"x\"], \"additionalProperties\": False}\n",
        ),
        ("pytest.ini", "[pytest]\ntimeout = 30\n"),
    ]);
    let (code, out, err) = fx.run(&[
        "audit",
        ".",
        "--out",
        "out-g",
        "-j",
        "1",
        "--timeout",
        "30s",
    ]);
    assert_eq!(code, 2, "{}", ctx(code, &out, &err));
    let v = fx.verdicts("out-g");
    assert_eq!(v.values().filter(|o| *o == "survived").count(), 1, "{v:?}");
    assert_eq!(v.values().filter(|o| *o == "unreached").count(), 2, "{v:?}");
    let md = fx.read("out-g/audit.md");
    assert!(
        md.contains("### files no test loads (1)\n\n- admin.py: "),
        "{md}"
    );
    let canaries = fx.outcomes("out-g")["canaries"].clone();
    let admin = canaries
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["file"] == "admin.py")
        .count();
    assert_eq!(
        admin, 1,
        "one canary run for the unreached file: {canaries}"
    );
    // -j 2: the same verdicts.
    let (code, _, err) = fx.run(&[
        "audit",
        ".",
        "--out",
        "out-g2",
        "-j",
        "2",
        "--timeout",
        "30s",
    ]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(fx.verdicts("out-g2"), v);
}

/// A repo whose detected suite (all of `tests/`) is red and whose
/// `tests/test_inventory.py` alone is green.
fn green_only_with_its_own_command() -> Fixture {
    Fixture::git(&[
        ("inventory.py", SERVER),
        ("tests/test_inventory.py", TEST),
        ("tests/conftest.py", &MCP_STUB_CONFTEST()),
        (
            "tests/test_broken.py",
            "def test_broken():\n    assert False\n",
        ),
        ("pytest.ini", "[pytest]\ntimeout = 30\n"),
    ])
}

/// The portfolio matrix in `out`, and its row for `control`.
fn portfolio_row<'a>(out: &'a str, control: &str) -> (&'a str, &'a str) {
    let matrix = out
        .split("## unguard audit portfolio")
        .nth(1)
        .unwrap_or_else(|| panic!("{out}"));
    let row = matrix
        .lines()
        .find(|l| l.contains(control))
        .unwrap_or_else(|| panic!("{out}"));
    (matrix, row)
}

#[test]
fn portfolio_entries_run_each_repo_their_way_and_a_red_baseline_is_stopped() {
    // Green only with its own command (the detected pytest run is red).
    let own = green_only_with_its_own_command();
    let red = Fixture::git(&[
        ("inventory.py", SERVER),
        ("tests/test_inventory.py", TEST),
        ("pytest.ini", "[pytest]\ntimeout = 30\n"),
    ]);
    let fleet = tempfile::tempdir().unwrap();
    let list = fleet.path().join("fleet.yaml");
    let cmd = "python3 -m pytest -q -p no:cacheprovider tests/test_inventory.py";
    std::fs::write(
        &list,
        format!(
            "- path: {}\n  test_command: {cmd}\n  exclude: [\"tests/test_broken.py\"]\n  controls: [additional-properties-false]\n- {}\n",
            own.path().display(),
            red.path().display()
        ),
    )
    .unwrap();
    let out_dir = fleet.path().join("out");
    let (code, out, err) = own.run(&[
        "audit",
        "--portfolio",
        &list.display().to_string(),
        "--out",
        &out_dir.display().to_string(),
        "--timeout",
        "30s",
    ]);
    assert_eq!(
        code,
        4,
        "the red repo's baseline: {}",
        ctx(code, &out, &err)
    );
    let first = std::fs::read_dir(&out_dir)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("1-"))
        .expect("the first repo's out dir")
        .path();
    assert_eq!(
        verdicts_in(&first)
            .get("additional-properties-false")
            .map(String::as_str),
        Some("killed")
    );
    let md = std::fs::read_to_string(first.join("audit.md")).unwrap();
    assert!(
        md.contains(&format!(
            "Test command: `{cmd}` (given with --test-command)"
        )),
        "{md}"
    );
    // Only the listed control is in the matrix; the red repo's cell is `stopped`.
    let (matrix, row) = portfolio_row(&out, "additional-properties-false");
    assert!(
        row.contains("✅ proven") && row.contains("stopped"),
        "{row}"
    );
    assert!(!matrix.contains("n/a"), "{matrix}");
}

#[test]
fn audit_md_names_the_given_command_and_a_red_baseline_is_stopped() {
    let green = green_only_with_its_own_command();
    // The detected command (the whole suite) is red; the given one is green.
    let cmd = "python3 -m pytest -q -p no:cacheprovider tests/test_inventory.py";
    let (code, out, err) = green.run(&[
        "audit",
        ".",
        "--out",
        "out-c",
        "--timeout",
        "30s",
        "--test-command",
        cmd,
    ]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    let md = green.read("out-c/audit.md");
    assert!(
        md.contains(&format!(
            "Test command: `{cmd}` (given with --test-command)"
        )),
        "{md}"
    );
    assert!(out.contains(&format!("Test command: `{cmd}`")), "{out}");
    // A portfolio (plain paths): the repo whose detected suite is red shows
    // `stopped` in its column, the other its verdict.
    let ok = server_with_transport(false);
    let fleet = tempfile::tempdir().unwrap();
    let list = fleet.path().join("fleet.yaml");
    std::fs::write(
        &list,
        format!("- {}\n- {}\n", ok.path().display(), green.path().display()),
    )
    .unwrap();
    let (code, out, err) = green.run(&[
        "audit",
        "--portfolio",
        &list.display().to_string(),
        "--out",
        &fleet.path().join("out").display().to_string(),
        "--control",
        "additional-properties-false",
    ]);
    assert_eq!(code, 4, "{}", ctx(code, &out, &err));
    let (matrix, row) = portfolio_row(&out, "additional-properties-false");
    assert!(
        row.contains("✅ proven") && row.contains("stopped"),
        "{row}"
    );
    assert!(!matrix.contains("n/a"), "{matrix}");
}
