//! Coverage that knows when it is blind (issue 50): a server's code run
//! where coverage.py cannot see it (a child started with an environment of
//! its own, a child killed before it saved its data, code run from the
//! file's text) must never make a mutant `no-coverage`, nor pick its
//! tests. Each shape is a real pytest suite; the mutant is killed, and
//! `coverage_files` says whether the map decided for the file and why not.
//! Children that inherit the environment, end in `os._exit` or are forked
//! are followed: there the map decides.

use crate::common::*;

const PYTEST: &str = "python3 -m pytest -q -p no:cacheprovider --junitxml={junit}";

/// A line-oriented server: `check(n)` refuses more than LIMIT.
const SERVER: &str = r#"import os
import sys

LIMIT = 10


def check(n):
    if n > LIMIT:
        return "refused"
    return "ok"


def main():
    for line in sys.stdin:
        print(check(int(line)), flush=True)
    if os.environ.get("EXIT_HARD"):
        os._exit(0)


if __name__ == "__main__":
    main()
"#;

/// The test module's head: the server's constant imported in-process (its
/// import-time lines are covered; its function bodies run elsewhere).
const HEAD: &str = r#"import os
import subprocess
import sys

from app.server import LIMIT

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def serve(env):
    return subprocess.run([sys.executable, "-m", "app.server"], input=f"{LIMIT + 1}\n", capture_output=True, text=True, env=env, cwd=ROOT).stdout.strip()
"#;

fn fixture(command: &str, env: &str, test: &str) -> Fixture {
    Fixture::git(&[
        ("app/__init__.py", ""),
        ("app/server.py", SERVER),
        ("tests/__init__.py", ""),
        ("tests/test_server.py", &format!("{HEAD}\n\n{test}")),
        (
            "unguard.yaml",
            &format!(
                "version: 1\ntest:\n  command: \"{command}\"\n  junit: \"{{junit}}\"\n  timeout: 60s\n  env: {{{env}}}\nmutations:\n  - id: limit\n    control: \"c\"\n    file: app/server.py\n    find: 'n > LIMIT'\n    replace: 'False'\n"
            ),
        ),
    ])
}

/// Run it; the mutant must be killed, and the map's say for the server
/// file is returned (`used`, `reason`).
fn killed(fx: &Fixture) -> (serde_json::Value, String) {
    let (code, out, err) = fx.run(&["run", "--out", "out", "-j", "1"]);
    let said = ctx(code, &out, &err);
    let o = fx.outcomes("out");
    assert_eq!(
        o["baselines"][0]["coverage"]["collector"], "coverage.py",
        "{said}"
    );
    let m = mutant(&o, "limit");
    assert_eq!(m["outcome"], "killed", "{m:#}: {said}");
    assert_eq!(code, 0, "{said}");
    let files = o["coverage_files"].as_array().cloned().unwrap_or_default();
    assert_eq!(files.len(), 1, "{:#}: {said}", o["coverage_files"]);
    (files[0].clone(), said)
}

fn blind(fx: &Fixture, reason: &str) -> String {
    let (file, said) = killed(fx);
    assert_eq!(file["file"], "app/server.py", "{file:#}");
    assert_eq!(file["used"], false, "{file:#}: {said}");
    assert_eq!(file["reason"], reason, "{file:#}: {said}");
    file["detail"].as_str().unwrap_or_default().to_string()
}

/// What the Python SDK's stdio client does with its default environment: a
/// child that never loads unguard's sitecustomize.
#[test]
fn a_server_started_with_a_minimal_environment_is_not_no_coverage() {
    let fx = fixture(
        PYTEST,
        "",
        "def test_big_is_refused():\n    assert serve({\"PATH\": os.environ.get(\"PATH\", \"\")}) == \"refused\"\n",
    );
    let detail = blind(&fx, "unmeasured-process");
    assert!(detail.contains("-m app.server"), "{detail}");
    assert!(detail.contains("test_big_is_refused"), "{detail}");
}

/// One test both calls the server in-process (so the canary's red test is
/// credited with the file) and starts it as a child with an environment of
/// its own, where the line-length check runs: only the record of the
/// unmeasured child keeps that mutant from `no-coverage`.
#[test]
fn a_test_that_calls_in_process_and_starts_an_unmeasured_child_is_not_no_coverage() {
    let server = SERVER.replace(
        "    for line in sys.stdin:\n",
        "    for line in sys.stdin:\n        if len(line) > 8:\n            print(\"too long\", flush=True)\n            continue\n",
    );
    let fx = fixture(
        PYTEST,
        "",
        "def test_long_lines_are_refused():\n    assert check(LIMIT + 1) == \"refused\"\n    out = subprocess.run([sys.executable, \"-m\", \"app.server\"], input=\"1\" * 20 + \"\\n\", capture_output=True, text=True, env={\"PATH\": os.environ.get(\"PATH\", \"\")}, cwd=ROOT)\n    assert out.stdout.strip() == \"too long\", out\n",
    );
    fx.write("app/server.py", &server);
    fx.write(
        "tests/test_server.py",
        &fx.read("tests/test_server.py").replace(
            "from app.server import LIMIT",
            "from app.server import LIMIT, check",
        ),
    );
    fx.write(
        "unguard.yaml",
        &fx.read("unguard.yaml")
            .replace("find: 'n > LIMIT'", "find: 'len(line) > 8'"),
    );
    fx.git_cmd(&["add", "-A"]);
    fx.commit("mixed");
    blind(&fx, "unmeasured-process");
}

/// The test's own `env=` puts its own PYTHONPATH first: the child inherits
/// the data directory but not the sitecustomize.
#[test]
fn a_child_whose_pythonpath_the_test_replaced_is_seen_as_unmeasured() {
    let fx = fixture(
        PYTEST,
        "",
        "def test_big_is_refused():\n    assert serve({**os.environ, \"PYTHONPATH\": ROOT}) == \"refused\"\n",
    );
    blind(&fx, "unmeasured-process");
}

/// A child that inherits the environment is measured, but one stopped with
/// SIGKILL never saves its data: the map is blind for what it ran.
#[test]
fn a_server_stopped_with_sigkill_leaves_the_map_blind() {
    let fx = fixture(
        PYTEST,
        "",
        "def test_big_is_refused():\n    p = subprocess.Popen([sys.executable, \"-m\", \"app.server\"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)\n    p.stdin.write(f\"{LIMIT + 1}\\n\")\n    p.stdin.flush()\n    answer = p.stdout.readline().strip()\n    p.kill()\n    p.wait()\n    assert answer == \"refused\"\n",
    );
    let detail = blind(&fx, "unmeasured-process");
    assert!(detail.contains("left no coverage data"), "{detail}");
}

/// The file's code run from its text (`exec`): coverage sees `<server>`,
/// not the file. The test red under the canary is not credited with the
/// file's code, so the map decides nothing there.
#[test]
fn code_run_from_the_files_text_is_not_no_coverage() {
    let fx = fixture(
        PYTEST,
        "",
        "def test_big_is_refused():\n    ns = {}\n    with open(os.path.join(ROOT, \"app\", \"server.py\")) as f:\n        exec(compile(f.read(), \"<server>\", \"exec\"), ns)\n    assert ns[\"check\"](LIMIT + 1) == \"refused\"\n",
    );
    let detail = blind(&fx, "red-test-not-credited");
    assert!(detail.contains("test_big_is_refused"), "{detail}");
}

/// Followed where that needs no change to the user's environment: a child
/// that inherits it and ends in `os._exit` (coverage.py's own `_exit`
/// patch saves its data first), and a fork-based multiprocessing worker.
#[test]
fn children_that_inherit_the_environment_are_followed_even_through_exit_and_fork() {
    let fx = fixture(
        PYTEST,
        "",
        "def test_big_is_refused():\n    assert serve({**os.environ, \"EXIT_HARD\": \"1\"}) == \"refused\"\n",
    );
    let (file, said) = killed(&fx);
    assert_eq!(file["used"], true, "{file:#}: {said}");

    let fx = fixture(
        PYTEST,
        "",
        "def ask(q):\n    from app.server import check\n    q.put(check(LIMIT + 1))\n\n\ndef test_big_is_refused():\n    import multiprocessing\n    ctx = multiprocessing.get_context(\"fork\")\n    q = ctx.Queue()\n    p = ctx.Process(target=ask, args=(q,))\n    p.start()\n    p.join()\n    assert q.get(timeout=10) == \"refused\"\n",
    );
    let (file, said) = killed(&fx);
    assert_eq!(file["used"], true, "{file:#}: {said}");
}

/// The real `mcp` SDK: an `MCPServer` served over stdio and called through
/// `stdio_client` with its default environment, the test module importing
/// the server's constant.
#[test]
fn an_mcp_server_called_through_the_sdks_stdio_client_is_not_no_coverage() {
    let Some(venv) = sdk_venv() else {
        return;
    };
    // coverage.py where the suite runs: the SDK example's venv has none,
    // so the suite's PYTHONPATH lends it the test machine's.
    let shim = tempfile::tempdir().unwrap();
    let found = std::process::Command::new("python3")
        .args([
            "-c",
            "import coverage, os; print(os.path.dirname(coverage.__file__))",
        ])
        .output()
        .unwrap();
    let package = String::from_utf8_lossy(&found.stdout).trim().to_string();
    assert!(
        found.status.success() && !package.is_empty(),
        "coverage.py for the tests: pip install -r tests/requirements.txt"
    );
    std::os::unix::fs::symlink(&package, shim.path().join("coverage")).unwrap();
    let fx = Fixture::git(&[
        ("app/__init__.py", ""),
        (
            "app/server.py",
            "from mcp.server.mcpserver import MCPServer\n\nLIMIT = 10\nserver = MCPServer(\"guard\")\n\n\n@server.tool()\ndef read(n: int) -> str:\n    if n > LIMIT:\n        raise ValueError(\"refused\")\n    return \"ok\"\n\n\nif __name__ == \"__main__\":\n    server.run()\n",
        ),
        ("tests/__init__.py", ""),
        (
            "tests/test_stdio.py",
            "import os\nimport sys\n\nimport anyio\nfrom mcp import ClientSession\nfrom mcp.client.stdio import StdioServerParameters, stdio_client\n\nfrom app.server import LIMIT\n\nROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n\n\ndef call(n):\n    async def go():\n        params = StdioServerParameters(command=sys.executable, args=[\"-m\", \"app.server\"], cwd=ROOT)\n        async with stdio_client(params) as (r, w):\n            async with ClientSession(r, w) as s:\n                await s.initialize()\n                return await s.call_tool(\"read\", {\"n\": n})\n\n    return anyio.run(go)\n\n\ndef test_big_is_refused():\n    assert call(LIMIT + 1).is_error\n\n\ndef test_small_is_allowed():\n    assert not call(1).is_error\n",
        ),
        (
            "unguard.yaml",
            &format!(
                "version: 1\ntest:\n  command: \"{} -m pytest -q -p no:cacheprovider --junitxml={{junit}}\"\n  junit: \"{{junit}}\"\n  timeout: 120s\n  env: {{PYTHONPATH: {:?}}}\nmutations:\n  - id: limit\n    control: \"c\"\n    file: app/server.py\n    find: 'n > LIMIT'\n    replace: 'False'\n",
                venv.join("bin/python").display(),
                shim.path().display().to_string()
            ),
        ),
    ]);
    let detail = blind(&fx, "unmeasured-process");
    assert!(detail.contains("-m app.server"), "{detail}");
}
