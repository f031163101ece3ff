//! `unguard init` and `audit` run the suite the project's own CI runs
//! (issue 38): the command read from a workflow's `run:` step, a pnpm
//! workspace's `pnpm -r test` and a Makefile's test target, each with the
//! project's selection kept, its provenance (file:line) in init's comment
//! and audit.md, and a green baseline; and a red baseline whose only red
//! tests are marked `live` says so and proposes the command without them.

use crate::common::*;

use std::process::Command;

/// A server module with one catalog site (`additional-properties-false`).
const SERVER: &str =
    "INPUT_SCHEMA = {\"type\": \"object\", \"required\": [\"branch\"], \"additionalProperties\": False}\n";

/// A test that kills the site's mutant.
const TEST: &str = "from inventory import INPUT_SCHEMA\n\
\n\
def test_unknown_arguments_are_refused():\n    \
    assert INPUT_SCHEMA.get(\"additionalProperties\") is False\n";

/// A test that calls a live service (a closed loopback port here: it
/// fails with a connection error, as without network).
const LIVE: &str = "import socket\n\
import pytest\n\
\n\
@pytest.mark.live\n\
def test_the_public_api_answers():\n    \
    socket.create_connection((\"127.0.0.1\", 9), timeout=2)\n";

const PYTEST_INI: &str = "[pytest]\ntimeout = 30\nmarkers =\n    live: calls the real public API\n";

/// A src-layout repo with a `.venv` (system site-packages: pytest), a
/// killing test and a `live` test that fails offline.
fn live_repo(extra: &[(&str, &str)]) -> Fixture {
    let mut files: Vec<(&str, &str)> = vec![
        ("src/inventory/__init__.py", SERVER),
        ("tests/test_inventory.py", TEST),
        ("tests/test_live.py", LIVE),
        ("pytest.ini", PYTEST_INI),
        (".gitignore", ".venv/\nout*/\n__pycache__/\n"),
    ];
    files.extend_from_slice(extra);
    let fx = Fixture::git(&files);
    let out = Command::new(python())
        .args(["-m", "venv", "--system-site-packages", ".venv"])
        .current_dir(fx.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fx
}

/// `.github/workflows/ci.yml`: the test step is on line 17.
const CI: &str = r#"name: CI
on:
  pull_request:
  push:
    branches: [main]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: pip install ruff && ruff check .
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: pip install -e '.[dev]'
      - run: |
          PYTHONPATH=src pytest tests/ -m "not live" --cov=src
      - uses: codecov/codecov-action@v4
"#;

/// `unguard init --stdout` in `fx`: the `command:` line of the spec.
fn init_command_line(fx: &Fixture) -> String {
    let (code, out, err) = fx.run(&["init", ".", "--stdout"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    out.lines()
        .find(|l| l.trim_start().starts_with("command:"))
        .unwrap_or_else(|| panic!("no command line:\n{out}"))
        .to_string()
}

/// Audit `fx` (green, every mutant killed); returns (stderr, audit.md).
fn audit_green(fx: &Fixture) -> (String, String) {
    let (code, out, err) = fx.run(&["audit", ".", "--out", "out-a", "--timeout", "60s"]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
    let v = fx.verdicts("out-a");
    assert!(
        !v.is_empty() && v.values().all(|o| o == "killed"),
        "{v:?}\n{err}"
    );
    (err, fx.read("out-a/audit.md"))
}

#[test]
fn the_ci_workflows_pytest_selection_is_run_with_the_local_venv() {
    let fx = live_repo(&[(".github/workflows/ci.yml", CI)]);
    let want = "PYTHONPATH=src .venv/bin/python -m pytest tests/ -m \"not live\" -q -p no:cacheprovider --junitxml={junit}";
    let line = init_command_line(&fx);
    let quoted = serde_json::to_string(want).unwrap();
    assert!(line.contains(&quoted), "{line}");
    assert!(
        line.contains("from .github/workflows/ci.yml:17 `PYTHONPATH=src pytest tests/"),
        "{line}"
    );
    let (err, md) = audit_green(&fx);
    assert!(
        err.contains("(the project's own, from .github/workflows/ci.yml:17)"),
        "{err}"
    );
    assert!(md.contains(&format!("Test command: `{want}`")), "{md}");
    assert!(md.contains(".github/workflows/ci.yml:17"), "{md}");
}

#[test]
fn a_makefile_test_target_is_followed_into_its_recipe() {
    let fx = live_repo(&[(
        "Makefile",
        "PYTEST ?= pytest\n\n.PHONY: test\ntest:\n\tPYTHONPATH=src $(PYTEST) -m 'not live' tests\n",
    )]);
    let want = "PYTHONPATH=src .venv/bin/python -m pytest -m 'not live' tests -q -p no:cacheprovider --junitxml={junit}";
    let line = init_command_line(&fx);
    assert!(
        line.contains(&serde_json::to_string(want).unwrap()),
        "{line}"
    );
    assert!(line.contains("from Makefile:5"), "{line}");
    let (_, md) = audit_green(&fx);
    assert!(md.contains(&format!("Test command: `{want}`")), "{md}");
    assert!(md.contains("Makefile:5"), "{md}");
}

/// The CI step runs the repository's own test script (`script/test`, as
/// many Go and Ruby projects do): it is followed into the command it runs.
#[test]
fn a_test_script_of_the_repository_is_followed_into_its_command() {
    let ci = "name: CI\non: [pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: script/test\n";
    let script = "#!/bin/sh\n# Run the unit tests.\nset -e\ncd \"$(dirname \"$0\")/..\"\nPYTHONPATH=src exec pytest -m 'not live' tests\n";
    let fx = live_repo(&[(".github/workflows/ci.yml", ci), ("script/test", script)]);
    let want = "PYTHONPATH=src .venv/bin/python -m pytest -m 'not live' tests -q -p no:cacheprovider --junitxml={junit}";
    let line = init_command_line(&fx);
    assert!(
        line.contains(&serde_json::to_string(want).unwrap()),
        "{line}"
    );
    assert!(line.contains(".github/workflows/ci.yml:8"), "{line}");
    assert!(line.contains("script/test:5"), "{line}");
    let (_, md) = audit_green(&fx);
    assert!(md.contains(&format!("Test command: `{want}`")), "{md}");
}

#[test]
fn a_pnpm_workspace_runs_each_packages_tests_as_its_ci_does() {
    if Command::new("npm").arg("--version").output().is_err() {
        skip::missing("`npm` is not installed (apt: npm)");
        return;
    }
    let check = "#!/bin/sh\ngrep -q '\"additionalProperties\": false' src/schema.ts || { echo 'schema accepts unknown keys'; exit 1; }\n";
    let fx = Fixture::git(&[
        ("package.json", "{\"name\": \"mono\", \"private\": true}"),
        ("pnpm-workspace.yaml", "packages:\n  - 'packages/*'\n"),
        (
            ".github/workflows/test.yml",
            "on: [pull_request]\njobs:\n  test:\n    steps:\n      - uses: pnpm/action-setup@v4\n      - run: pnpm install --frozen-lockfile\n      - run: pnpm -r test\n",
        ),
        (
            "packages/server/package.json",
            "{\"name\": \"@acme/server\", \"scripts\": {\"test\": \"schema-check\"}}",
        ),
        (
            "packages/server/src/schema.ts",
            "export const inputSchema = { \"type\": \"object\", \"additionalProperties\": false };\n",
        ),
        (
            "packages/client/package.json",
            "{\"name\": \"@acme/client\", \"scripts\": {\"test\": \"true\"}}",
        ),
        ("packages/docs/package.json", "{\"name\": \"@acme/docs\"}"),
        (".gitignore", "node_modules/\nout*/\n"),
    ]);
    let bin = fx.path().join("node_modules/.bin/schema-check");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::write(&bin, check).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let want =
        "npm test --silent --prefix packages/client && npm test --silent --prefix packages/server";
    let line = init_command_line(&fx);
    assert!(
        line.contains(&serde_json::to_string(want).unwrap()),
        "{line}"
    );
    assert!(
        line.contains("from .github/workflows/test.yml:7 `pnpm -r test`"),
        "{line}"
    );
    let (_, md) = audit_green(&fx);
    assert!(md.contains(&format!("Test command: `{want}`")), "{md}");
}

#[test]
fn a_baseline_red_only_in_live_tests_names_the_flag_and_the_command() {
    let fx = live_repo(&[]);
    let (code, out, err) = fx.run(&["audit", ".", "--out", "out-a", "--timeout", "60s"]);
    assert_eq!(code, 4, "{}", ctx(code, &out, &err));
    assert!(
        err.contains("tests.test_live::test_the_public_api_answers (marked `live`)"),
        "{err}"
    );
    assert!(
        err.contains("deselect them with `-m \"not live\"`"),
        "{err}"
    );
    let proposed = "--junitxml={junit} -m \"not live\"";
    let line = err
        .lines()
        .find(|l| l.contains("audit without them: unguard audit . --test-command '"))
        .unwrap_or_else(|| panic!("no proposal:\n{err}"));
    assert!(line.contains(proposed), "{line}");
    // The proposal, as given, is green.
    let cmd = line
        .split("--test-command '")
        .nth(1)
        .and_then(|c| c.strip_suffix('\''))
        .unwrap()
        .replace("'\\''", "'");
    let (code, out, err) = fx.run(&[
        "audit",
        ".",
        "--out",
        "out-b",
        "--timeout",
        "60s",
        "--test-command",
        &cmd,
    ]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
}

/// The pytest step of the reusable workflow below (line 9).
const SHARED: &str = r#"name: Shared checks
on:
  workflow_call:
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: PYTHONPATH=src pytest tests/ -m "not live"
"#;

#[test]
fn a_reusable_workflow_called_on_pull_requests_is_followed_into() {
    let fx = live_repo(&[
        (
            ".github/workflows/main.yml",
            "name: CI\non:\n  pull_request:\njobs:\n  checks:\n    uses: ./.github/workflows/shared.yml\n",
        ),
        (".github/workflows/shared.yml", SHARED),
        // Triggered only by workflow_call and called by no one: never read.
        (
            ".github/workflows/a-nightly.yml",
            "on:\n  workflow_call:\njobs:\n  t:\n    steps:\n      - run: pytest tests/test_live.py\n",
        ),
    ]);
    let want = "PYTHONPATH=src .venv/bin/python -m pytest tests/ -m \"not live\" -q -p no:cacheprovider --junitxml={junit}";
    let line = init_command_line(&fx);
    assert!(
        line.contains(&serde_json::to_string(want).unwrap()),
        "{line}"
    );
    assert!(
        line.contains("from .github/workflows/main.yml:6 → .github/workflows/shared.yml:9 `PYTHONPATH=src pytest"),
        "{line}"
    );
    let (_, md) = audit_green(&fx);
    assert!(
        md.contains(".github/workflows/main.yml:6 → .github/workflows/shared.yml:9"),
        "{md}"
    );
}

#[test]
fn a_pnpm_filter_is_kept_as_the_projects_selection() {
    let fx = Fixture::git(&[
        (
            "package.json",
            "{\"name\": \"mono\", \"private\": true, \"scripts\": {\"test:all\": \"pnpm -r test\"}}",
        ),
        ("pnpm-workspace.yaml", "packages:\n  - 'packages/*'\n"),
        (
            ".github/workflows/main.yml",
            "on: [pull_request]\njobs:\n  test:\n    steps:\n      - run: pnpm install\n      - run: pnpm -r --filter '!@acme/e2e' test\n      - run: pnpm --filter=@acme/server -F @acme/client test\n",
        ),
        (
            "packages/server/package.json",
            "{\"name\": \"@acme/server\", \"scripts\": {\"test\": \"vitest run\"}}",
        ),
        ("packages/server/src/index.ts", "export const x = 1;\n"),
        (
            "packages/e2e/package.json",
            "{\"name\": \"@acme/e2e\", \"scripts\": {\"test\": \"vitest run\"}}",
        ),
    ]);
    let line = init_command_line(&fx);
    assert!(
        line.contains(&serde_json::to_string("pnpm -r --filter '!@acme/e2e' test").unwrap()),
        "{line}"
    );
    assert!(
        line.contains("from .github/workflows/main.yml:6 `pnpm -r --filter '!@acme/e2e' test`"),
        "{line}"
    );
}

#[test]
fn tox_configured_in_pyproject_toml_is_read_like_tox_ini() {
    let ci = "on: pull_request\njobs:\n  t:\n    steps:\n      - run: uv run tox\n";
    let native = "[project]\nname = \"inventory\"\n\n[tool.tox]\nenv_list = [\"py\", \"lint\"]\n\n[tool.tox.env_run_base]\ncommands = [\n    [\n        \"pytest\",\n        { replace = \"posargs\", default = [\"tests\", \"-m\", \"not live\", \"--cov=inventory\"], extend = true },\n    ],\n]\n\n[tool.tox.env.lint]\ncommands = [[\"ruff\", \"check\"]]\n";
    let fx = live_repo(&[(".github/workflows/ci.yml", ci), ("pyproject.toml", native)]);
    let line = init_command_line(&fx);
    assert!(
        line.contains(".venv/bin/python -m pytest tests -m 'not live' -q -p no:cacheprovider --junitxml={junit}"),
        "{line}"
    );
    assert!(
        line.contains("from .github/workflows/ci.yml:5 `uv run tox`, which runs pyproject.toml:10"),
        "{line}"
    );
    let (_, md) = audit_green(&fx);
    assert!(
        md.contains("ci.yml:5 `uv run tox`, which runs pyproject.toml:10"),
        "{md}"
    );
    let legacy = "[project]\nname = \"inventory\"\n\n[tool.tox]\nlegacy_tox_ini = \"\"\"\n[tox]\nenvlist = py\n\n[testenv]\ncommands =\n    pytest {posargs:tests} -m 'not live'\n\"\"\"\n";
    let fx = live_repo(&[("pyproject.toml", legacy)]);
    let line = init_command_line(&fx);
    assert!(
        line.contains(".venv/bin/python -m pytest tests -m 'not live' -q"),
        "{line}"
    );
    assert!(line.contains("pyproject.toml:11"), "{line}");
}

#[test]
fn the_unit_suite_is_preferred_over_gated_and_other_suites() {
    let fx = live_repo(&[
        // A job that runs on a pull request only with a label.
        (
            ".github/workflows/a.yml",
            "name: Extras\non: [pull_request]\njobs:\n  checks:\n    if: contains(github.event.pull_request.labels.*.name, 'full-ci')\n    steps:\n      - run: pytest tests/\n",
        ),
        // A command that selects the contract suite.
        (
            ".github/workflows/b.yml",
            "name: Verify\non: [pull_request]\njobs:\n  verify:\n    steps:\n      - run: pytest -m contract tests/\n",
        ),
        // A workflow named for the accuracy suite.
        (
            ".github/workflows/c.yml",
            "name: Accuracy\non: [pull_request]\njobs:\n  run:\n    steps:\n      - run: pytest tests/\n",
        ),
        // A job that runs only on another event than a pull request.
        (
            ".github/workflows/d.yml",
            "on: [pull_request, push]\njobs:\n  full:\n    if: github.event_name == 'push'\n    steps:\n      - run: pytest tests/\n",
        ),
        (
            ".github/workflows/test.yml",
            "on: [pull_request]\njobs:\n  unit:\n    steps:\n      - run: PYTHONPATH=src pytest tests/ -m \"not live\"\n",
        ),
    ]);
    let line = init_command_line(&fx);
    assert!(
        line.contains(
            "from .github/workflows/test.yml:5 `PYTHONPATH=src pytest tests/ -m \"not live\"`"
        ),
        "{line}"
    );
    // With nothing else, the other suite is still the project's command.
    let fx = live_repo(&[(
        ".github/workflows/b.yml",
        "name: Verify\non: [pull_request]\njobs:\n  verify:\n    steps:\n      - run: pytest -m contract tests/\n",
    )]);
    assert!(
        init_command_line(&fx).contains("from .github/workflows/b.yml:6"),
        "the contract step, taken when nothing else is"
    );
}

#[test]
fn the_network_flag_joins_the_projects_own_marker_expression() {
    let fx = live_repo(&[(
        ".github/workflows/ci.yml",
        "on: [pull_request]\njobs:\n  unit:\n    steps:\n      - run: PYTHONPATH=src pytest tests/ -m \"not slow\"\n",
    )]);
    let (code, out, err) = fx.run(&["audit", ".", "--out", "out-a", "--timeout", "60s"]);
    assert_eq!(code, 4, "{}", ctx(code, &out, &err));
    let line = err
        .lines()
        .find(|l| l.contains("audit without them: unguard audit . --test-command '"))
        .unwrap_or_else(|| panic!("no proposal:\n{err}"));
    // pytest keeps only the last `-m`: the two expressions are joined.
    assert!(line.contains("-m \"(not slow) and not live\" -q"), "{line}");
    assert_eq!(line.matches(" -m \"").count(), 1, "{line}");
    let cmd = line
        .split("--test-command '")
        .nth(1)
        .and_then(|c| c.strip_suffix('\''))
        .unwrap()
        .replace("'\\''", "'");
    let (code, out, err) = fx.run(&[
        "audit",
        ".",
        "--out",
        "out-b",
        "--timeout",
        "60s",
        "--test-command",
        &cmd,
    ]);
    assert_eq!(code, 0, "{}", ctx(code, &out, &err));
}
