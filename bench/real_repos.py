#!/usr/bin/env python3
"""Acceptance bench on real repositories: does the door open?

For each server of the audit dev set (bench/audit-sites/*.yaml, at the
labelled commit) and each repo pinned in EXTRA below, this script:

  1. checks the repo out at its commit under DIR/<owner>+<repo> (`--servers`,
     default bench/.servers; cloned from `--mirror DIR/<owner>+<repo>/repo`
     when given, else from GitHub), never into this repository;
  2. installs its environment with the project's own tools (SETUP);
  3. runs the project's own test command outside unguard (count of tests
     from its output);
  4. asks `unguard init --stdout` which command it detects, and compares it
     with the one the project's CI runs (the `ci` field);
  5. writes a two-mutant spec (out of the checkout): `equivalent` adds a
     comment to a line of an imported file (must survive); `breaks` turns the
     first one-line `return <value>` of a function into a raise/throw (must
     be killed): a function defined once in a non-test source file, with a
     distinctive name, called in the most test files the command runs
     (`tests_under`); else the first `return` of the configured file. It
     runs `unguard run` in git mode on it;
  6. records baseline inside, test counts, whether kill-first subsets were
     usable, and both verdicts in bench/.real-repos/results.json;
  7. with `--audit` (or `--audit-only`), the audit's baseline: the detected
     command run outside, and `unguard audit` until its baseline is known.

`--write` renders bench/REAL-REPOS.md from results.json (rows not run this
time keep their last result). A repo that cannot run here has a `skip`
reason and one row saying why.

    python3 bench/real_repos.py [--only NAME ...] [--servers DIR] [--mirror DIR]
                                [--bin target/debug/unguard] [--jobs 1]
                                [--timeout 900] [--no-setup] [--lane NAME]
                                [--audit | --audit-only] [--write] [--no-run]

Needs PyYAML, git, and per repo its tools (uv, pnpm via npx, npm, go).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

try:
    import yaml
except ImportError:  # pragma: no cover
    sys.exit("real_repos.py needs PyYAML: pip install pyyaml")

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
SITES = HERE / "audit-sites"
STATE = HERE / ".real-repos"

# Repos added to the dev set: pinned, fetched, never vendored.
EXTRA = {
    "modelcontextprotocol/typescript-sdk": {
        "commit": "3924de99df834302d89f5997a1b64ca268282284",
        "language": "typescript",
        "why": "pnpm 10 monorepo: packages import each other through workspace links",
    },
    "modelcontextprotocol/python-sdk": {
        "commit": "57394b0548d1e2dc2dce8d67d84985769df3b8bb",
        "language": "python",
        "why": "pytest with `filterwarnings = error`",
    },
}

# uv (and pip -e) install the project editable: a `.pth` file in `.venv`
# names the checkout's `src/` by absolute path, so inside the copy the
# project's own `uv run pytest` imports the user's checkout and every mutant
# is `unreached` (see REAL-REPOS.md). The Python commands below therefore put
# the copy's sources first (`PYTHONPATH=src`), as unguard's hint says and as
# `unguard init` does.
#
# Per repo: environment set-up, the test command (outside and inside), the
# command its CI runs, the files the two mutants edit (imported by the
# tests), or why it cannot run here.
CONFIG = {
    "modelcontextprotocol/typescript-sdk": {
        # pnpm 10 as pinned by `packageManager` (pnpm 11+ fails to resolve its
        # config deps for other platforms).
        "setup": ["npx --yes pnpm@10.26.1 install --frozen-lockfile"],
        "test": "npx --yes pnpm@10.26.1 --filter @modelcontextprotocol/server test",
        "ci": "pnpm -r --filter '!@modelcontextprotocol/test-e2e' test",
        "ci_at": ".github/workflows/main.yml:60",
        "tests_under": ["packages/server"],
        "equivalent": "packages/core-internal/src/shared/uriTemplate.ts",
        "breaks": "packages/core-internal/src/shared/uriTemplate.ts",
    },
    "modelcontextprotocol/python-sdk": {
        # The `dev` group pins strict-no-cover from GitHub (not reachable
        # here): the same test tools from PyPI instead.
        "setup": [
            "uv sync --frozen --no-dev --all-extras",
            "uv pip install pytest pytest-xdist pytest-examples pytest-pretty inline-snapshot"
            " dirty-equals trio pillow logfire opentelemetry-sdk pytest-flakefinder"
            " 'coverage[toml]' pydantic-settings -e ./examples",
        ],
        # test_permission_error chmods a file unreadable and expects a read
        # error: as root (this machine) the read succeeds, so it is deselected.
        "test": "PYTHONPATH=src uv run --no-sync pytest tests/server -q -p no:cacheprovider"
                " --deselect tests/server/mcpserver/resources/test_file_resources.py::test_permission_error",
        "ci": "uv run --frozen --no-sync coverage run -m pytest -n auto",
        "ci_at": ".github/workflows/shared.yml:113",
        "tests_under": ["tests/server"],
        "equivalent": "src/mcp/server/lowlevel/server.py",
        "breaks": "src/mcp/shared/_httpx_utils.py",
    },
    "keboola/mcp-server": {
        "setup": ["uv sync --frozen --all-extras"],
        "test": "PYTHONPATH=src uv run --no-sync pytest tests -q",
        "ci": "uv run tox (pytest tests --cov=keboola_mcp_server)",
        "ci_at": ".github/workflows/ci.yml:59",
        "tests_under": ["tests"],
        "equivalent": "src/keboola_mcp_server/authorization.py",
        "breaks": "src/keboola_mcp_server/authorization.py",
    },
    "sooperset/mcp-atlassian": {
        "setup": ["uv sync --frozen --all-extras --dev"],
        "test": "PYTHONPATH=src uv run --no-sync pytest tests/unit -q",
        "ci": "uv run pytest -v --cov=src/mcp_atlassian --cov-report=term-missing",
        "ci_at": ".github/workflows/tests.yml:42",
        "tests_under": ["tests/unit"],
        "equivalent": "src/mcp_atlassian/utils/urls.py",
        "breaks": "src/mcp_atlassian/utils/urls.py",
    },
    "cbcoutinho/nextcloud-mcp-server": {
        "setup": ["uv sync --frozen"],
        "test": "PYTHONPATH=. uv run --no-sync pytest -q -m unit -o 'addopts=-p no:asyncio'",
        "ci": "uv run --frozen pytest -q -m unit -n auto -o \"addopts=-p no:asyncio\"",
        "ci_at": ".github/workflows/test.yml:46",
        "tests_under": ["tests/unit"],
        "equivalent": "nextcloud_mcp_server/config.py",
        "breaks": "nextcloud_mcp_server/config.py",
    },
    "makenotion/notion-mcp-server": {
        "setup": ["npm ci --no-audit --no-fund"],
        "test": "npm test",
        "ci": "npm ci && npm run build && npm test",
        "ci_at": ".github/workflows/ci.yml:34",
        "equivalent": "src/openapi-mcp-server/openapi/parser.ts",
        "breaks": "src/openapi-mcp-server/openapi/parser.ts",
    },
    "apify/apify-mcp-server": {
        "skip": "set-up fails: its lockfile pins `@apify/mcpc@0.6.0`, whose tarball the npm registry answers"
                " 404 (`pnpm install --frozen-lockfile`; pnpm 11.11.0, required by `devEngines`, needs"
                " Node 22 and this machine has Node 20, so pnpm 12 with `--pm-on-fail=ignore` was used)",
        "setup": ["pnpm install --frozen-lockfile --pm-on-fail=ignore"],
        "test": "pnpm run test",
        "ci": "pnpm run test",
        "ci_at": ".github/workflows/_check_code.yaml:72",
        "equivalent": "src/utils/generic.ts",
        "breaks": "src/utils/generic.ts",
    },
    "mongodb-js/mongodb-mcp-server": {
        "skip": "set-up fails: the npm registry answers 404 for locked tarballs (`@braintrust/api@0.5.0`,"
                " and with the eval/accuracy packages filtered out `@mongodb-js/devtools-proxy-support@0.7.16`);"
                " pnpm 11.5.1 (`packageManager`) needs Node 22, so `pnpm@10 --config.manage-package-manager-versions=false`"
                " was used. Its `pnpm test` also needs a MongoDB server (integration tests), not available here",
        "setup": ["npx --yes pnpm@10 install --frozen-lockfile --config.manage-package-manager-versions=false"],
        "test": "npx --yes pnpm@10 test",
        "ci": "pnpm test",
        "ci_at": ".github/workflows/code-health.yml:49",
        "equivalent": None,
        "breaks": None,
    },
    "github/github-mcp-server": {
        "skip": "Go: the module proxy cannot be reached from this machine, so `go test` cannot download the modules",
        "ci": "script/test (go test -race ./...)",
        "ci_at": ".github/workflows/go.yml:41",
    },
    "openshift/openshift-mcp-server": {
        "skip": "Go: the module proxy cannot be reached from this machine, so `go test` cannot download the modules",
        "ci": "make test (go test -race -count=1 -v ./...)",
        "ci_at": "?",
    },
}

COUNTS = [
    # Most specific first; the first that matches counts (its last match).
    # vitest: "Tests  120 passed (120)" (its "Test Files  9 passed" is not tests)
    re.compile(r"\bTests\s+(?:\x1b\[[0-9;]*m)*(\d+) passed"),
    # node --test: "# pass 3"
    re.compile(r"^# pass (\d+)", re.M),
    # pytest: "12 passed, 1 skipped in 3.2s"
    re.compile(r"(\d+) passed"),
]


def repos() -> list[dict]:
    out = []
    for p in sorted(SITES.glob("*.yaml")):
        doc = yaml.safe_load(p.read_text())
        out.append({"name": doc["server"], "commit": doc["commit"],
                    "language": doc["language"], "why": "audit dev set"})
    for name, r in EXTRA.items():
        out.append({"name": name, **r})
    for r in out:
        r.update(CONFIG.get(r["name"], {"skip": "no configuration in bench/real_repos.py"}))
    return out


def sh(cmd: str, cwd: pathlib.Path, timeout: int) -> tuple[int, str, float]:
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, shell=True, cwd=cwd, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace", timeout=timeout)
        return p.returncode, p.stdout, time.monotonic() - t
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return -1, out + f"\n[timed out after {timeout}s]", time.monotonic() - t


def checkout(r: dict, servers: pathlib.Path, mirror: pathlib.Path | None) -> pathlib.Path:
    slug = r["name"].replace("/", "+")
    d = servers / slug
    if not d.exists():
        src = str(mirror / slug / "repo") if mirror else f"https://github.com/{r['name']}"
        subprocess.run(["git", "clone", "-q", src, str(d)], check=True)
    subprocess.run(["git", "-C", str(d), "checkout", "-q", r["commit"]], check=True)
    return d


def count(text: str) -> int | None:
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    # pytest's summary line: every test it reports (as a JUnit report counts
    # them), not only the passed ones.
    summary = [l for l in plain.splitlines() if re.search(r"\d+ passed", l) and " in " in l]
    if summary and not re.search(r"\bTests\s+\d+ passed", plain):
        return sum(int(n) for n, _ in re.findall(
            r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?)\b", summary[-1]))
    for rx in COUNTS:
        found = rx.findall(plain)
        if found:
            return int(found[-1])
    return None


def pick(path: pathlib.Path, want: str, language: str) -> tuple[str, str] | None:
    """(find, replace) for mutant `want` on a line of `path` that occurs once."""
    lines = path.read_text().splitlines()
    text = path.read_text()
    if want == "equivalent":
        # An import line, else a declaration ending its statement.
        lines = sorted(lines, key=lambda l: not re.match(r"\s*(import |from \S+ import )", l))
    for line in lines:
        s = line.strip()
        if not s or text.count(s) != 1:
            continue
        if want == "equivalent":
            decl = re.match(r"(export |const |let |var )", s) and s.endswith(";")
            if re.match(r"(import |from \S+ import )", s) and not s.endswith("(") or decl:
                tail = "  # unguard-bench" if language == "python" else " // unguard-bench"
                return s, s + tail
        elif re.match(r"return \S", s) and s != "return" and line[:1].isspace():
            if language == "python":
                return s, 'raise RuntimeError("unguard-bench")'
            return s, 'throw new Error("unguard-bench");'
    return None


TEST_PATH = re.compile(r"(^|/)(tests?|__tests__|spec|e2e|fixtures?|testing)(/|$)|(^|/)test_[^/]*\.py$"
                       r"|_test\.py$|\.(test|spec)\.[cm]?[jt]sx?$|(^|/)conftest\.py$")
SOURCE_EXT = {"python": (".py",), "typescript": (".ts", ".mts", ".cts", ".tsx"),
              "javascript": (".js", ".mjs", ".cjs", ".ts")}
# Names too generic to say a test exercises this definition.
GENERIC = {"main", "run", "get", "set", "call", "init", "setup", "close", "start", "stop",
           "update", "create", "delete", "handle", "parse", "load", "read", "write", "send",
           "default", "constructor", "toString", "toJSON", "__init__", "__call__", "__repr__",
           "__str__", "__eq__", "__hash__", "__enter__", "__exit__", "__aenter__", "__aexit__",
           # Framework methods a source file overrides: a test calling one does
           # not say it reaches this override.
           "model_dump", "model_validate", "model_dump_json", "call_tool", "list_tools",
           "callTool", "listTools", "connect", "dispatch", "execute", "invoke", "request",
           "validate", "process", "handler", "fetch", "toString", "valueOf", "then"}
PY_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(")
TS_DEF = re.compile(r"^(\s*)(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\s*\*?\s*([A-Za-z_$][\w$]*)\s*[<(]"
                    r"|(?:const|let)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>\s*\{)"
                    r"|(?:(?:public|private|protected|static|readonly|override|async|get)\s+)*([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\((?:[^;]*\)\s*(?::\s*[^={;]+)?\{|[^;)]*)\s*$)")
TS_KEYWORDS = {"if", "for", "while", "switch", "catch", "function", "return", "constructor", "super"}


def tracked(tree: pathlib.Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(tree), "ls-files"], stdout=subprocess.PIPE, text=True).stdout
    return [l for l in out.splitlines() if "node_modules/" not in l]


def complete(stmt: str) -> bool:
    """Whether a `return` statement ends on its line (brackets balanced, no
    continuation): replacing it by a raise must leave the file parseable, or
    the mutant is a load failure (`wrong-reason`), not a behavioural break."""
    if "`" in stmt or '"' * 3 in stmt or "'" * 3 in stmt:
        return False
    body = re.sub(r'"(?:\\.|[^"\\])*"' + r"|'(?:\\.|[^'\\])*'", "", stmt)
    depth = 0
    for c in body:
        depth += c in "([{"
        depth -= c in ")]}"
        if depth < 0:
            return False
    return depth == 0 and not re.search(r"([\\,+\-*/&|?:=.<>]|\b(and|or|not|in|if|else))\s*$", body)


def definitions(path: pathlib.Path, language: str) -> list[tuple[str, int, str]]:
    """(name, line index of the first `return <value>` in its body, that line) per definition."""
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    text = "\n".join(lines)
    out = []
    for i, line in enumerate(lines):
        if language == "python":
            m = PY_DEF.match(line)
            if not m:
                continue
            name, ind = m.group(2), len(m.group(1))
            for j in range(i + 1, len(lines)):
                l = lines[j]
                if l.strip() and len(l) - len(l.lstrip()) <= ind and not l.lstrip().startswith((")", "]", "#")):
                    break
                if PY_DEF.match(l):
                    break  # the first return of a nested def is not this one's
                s = l.strip()
                if re.match(r"return \S", s) and complete(s) and text.count(s) == 1:
                    out.append((name, j, s))
                    break
        else:
            m = TS_DEF.match(line)
            if not m:
                continue
            name, ind = m.group(2) or m.group(3) or m.group(4), len(m.group(1))
            if not name or name in TS_KEYWORDS:
                continue
            for j in range(i + 1, len(lines)):
                l = lines[j]
                if l.strip() == "}" and len(l) - len(l.lstrip()) <= ind:
                    break
                if TS_DEF.match(l) and len(l) - len(l.lstrip()) <= ind:
                    break
                s = l.strip()
                if (re.match(r"return \S", s) and len(l) - len(l.lstrip()) > ind
                        and complete(s) and text.count(s) == 1):
                    out.append((name, j, s))
                    break
    return out


def pick_breaks(r: dict, tree: pathlib.Path) -> tuple[str, str, str, str] | None:
    """(file, find, replace, why): the first `return` of a function defined in a
    source file and named in the test files the command runs, made a raise/throw.
    Ranked by how many of those test files name it (the most exercised first)."""
    files = tracked(tree)
    exts = SOURCE_EXT.get(r["language"], (".py",))
    scope = tuple(r.get("tests_under") or [""])
    tests = [f for f in files if TEST_PATH.search(f) and f.endswith(exts) and f.startswith(scope)]
    sources = [f for f in files if not TEST_PATH.search(f) and f.endswith(exts)
               and not f.endswith(".d.ts") and f.startswith(tuple(r.get("sources_under") or [""]))
               and not re.search(r"(^|/)(examples?|docs?|docs_src|scripts?|dist|build|[^/]*tests?[^/]*)/", f)]
    calls: dict[str, int] = {}
    for t in tests:
        try:
            text = (tree / t).read_text(errors="replace")
        except OSError:
            continue
        for w in set(re.findall(r"([A-Za-z_$][\w$]*)\s*\(", text)):
            calls[w] = calls.get(w, 0) + 1
    found = [(f, d) for f in sources for d in definitions(tree / f, r["language"])]
    defined: dict[str, int] = {}
    for f in sources:
        try:
            text = (tree / f).read_text(errors="replace")
        except OSError:
            continue
        for w in (PY_DEF if r["language"] == "python" else TS_DEF).finditer(text):
            pass
        for w in re.findall(r"(?:def|function)\s+([A-Za-z_$][\w$]*)|^\s*(?:(?:public|private|protected|static|async)\s+)*([A-Za-z_$][\w$]*)\s*\(", text, re.M):
            n = w[0] or w[1]
            defined[n] = defined.get(n, 0) + 1
    best = None
    for f, (name, _, s) in found:
        # Distinctive (long, not generic, defined once in the sources) and
        # called by the tests: the tests most likely reach this very body.
        if len(name) < 6 or name in GENERIC or defined.get(name, 0) != 1:
            continue
        n = calls.get(name, 0)
        key = (n, len(name))
        if n and (best is None or key > best[0]):
            best = (key, f, name, s)
    if best is None:
        return None
    (n, _), f, name, s = best
    rep = 'raise RuntimeError("unguard-bench")' if r["language"] == "python" else 'throw new Error("unguard-bench");'
    return f, s, rep, f"first `return` of `{name}` ({f}), called in {n} test file(s)"


def spec(r: dict, tree: pathlib.Path) -> str | None:
    muts = []
    for want in ("equivalent", "breaks"):
        rel = r.get(want)
        chosen = pick_breaks(r, tree) if want == "breaks" else None
        if chosen:
            rel, find, rep, why = chosen
            fr = (find, rep)
        else:
            if not rel or not (tree / rel).is_file():
                return None
            fr = pick(tree / rel, want, r["language"])
            if fr is None:
                return None
            why = (f"fallback: first `return` of {rel}" if want == "breaks"
                   else f"comment after `{fr[0][:60]}` in {rel}")
        r.setdefault("_chosen", {})[want] = why
        q = lambda s: "'" + s.replace("'", "''") + "'"
        muts.append(f"  - id: {want}\n    control: {q('bench: ' + want)}\n"
                    f"    file: {rel}\n    find: {q(fr[0])}\n    replace: {q(fr[1])}\n"
                    + ("    canary: false\n" if want == "equivalent" else ""))
    return (f"version: 1\ntest:\n  command: {json.dumps(r['test'])}\n  timeout: 10m\n"
            "mutations:\n" + "".join(muts))


def detected(bin_: str, tree: pathlib.Path) -> dict:
    """The command `unguard init --stdout` detects and where it says it came from."""
    code, out, secs = sh(f"{bin_} init --stdout --force .", tree, 300)
    if code != 0:
        return {"error": out.strip().splitlines()[-1] if out.strip() else str(code), "secs": round(secs, 1)}
    m = re.search(r"^\s*command: .*?#\s*detected: (.*)$", out, re.M)
    reason = m.group(1).strip() if m else ""
    at = re.search(r"\bfrom (\S+:\d+)", reason)
    try:
        command = str(yaml.safe_load(out)["test"]["command"])
    except Exception:  # noqa: BLE001 - the spec on stdout is what we report
        command = "unparsed"
    return {"command": command, "from": at.group(1) if at else None, "reason": reason,
            "secs": round(secs, 1)}


def audit_baseline(bin_: str, tree: pathlib.Path, command: str, timeout: int) -> dict:
    """The audit's baseline: its detected command outside unguard, then `unguard
    audit` (git mode) until it says whether its baseline is green (the mutants
    that follow are not this bench's business: the run is interrupted)."""
    import signal
    import tempfile
    res: dict = {}
    with tempfile.TemporaryDirectory(prefix="ug-bench-") as tmp:
        code, out, secs = sh(command.replace("{junit}", f"{tmp}/junit.xml"), tree, timeout)
        res["outside"] = {"green": code == 0, "exit": code, "tests": count(out), "secs": round(secs, 1)}
        t = time.monotonic()
        p = subprocess.Popen([bin_, "audit", ".", "-j", "1", "--out", f"{tmp}/out"], cwd=tree,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, errors="replace")
        seen: list[str] = []
        verdict = None
        assert p.stdout is not None
        for line in p.stdout:
            seen.append(line.rstrip())
            m = re.search(r"baseline: green in [\d.]+s(?:, (\d+) tests)?", line)
            if m:
                verdict = {"green": True, "tests": int(m.group(1)) if m.group(1) else None}
                break
            if re.search(r"error: baseline", line):
                verdict = {"green": False, "error": line.strip()[:200]}
                break
            if time.monotonic() - t > timeout:
                verdict = {"green": False, "error": f"no baseline after {timeout}s"}
                break
        if p.poll() is None:
            p.send_signal(signal.SIGINT)  # unguard cleans its copies up on ^C
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        rest = p.stdout.read() if p.stdout else ""
        seen += rest.splitlines()
        if verdict is None:
            verdict = {"green": False, "error": " / ".join(l for l in seen if l.strip())[-300:]}
        verdict["secs"] = round(time.monotonic() - t, 1)
        res["inside"] = verdict
    return res


def run_one(r: dict, a) -> dict:
    row = {"name": r["name"], "commit": r["commit"][:10], "language": r["language"],
           "why": r["why"], "ci": r.get("ci", "")}
    if r.get("skip"):
        row["skip"] = r["skip"]
        return row
    tree = checkout(r, a.servers, a.mirror)
    for cmd in ([] if a.no_setup else r.get("setup", [])):
        code, out, secs = sh(cmd, tree, a.timeout)
        if code != 0:
            row["skip"] = f"set-up `{cmd}` failed: {out.strip().splitlines()[-1][:160] if out.strip() else code}"
            return row
    row["test"] = r["test"]
    code, out, secs = sh(r["test"], tree, a.timeout)
    row["outside"] = {"green": code == 0, "exit": code, "tests": count(out), "secs": round(secs, 1),
                      "tail": out.strip().splitlines()[-3:] if out.strip() else []}
    row["detected"] = detected(a.bin, tree)
    if a.audit and row["detected"].get("command"):
        row["audit"] = audit_baseline(a.bin, tree, row["detected"]["command"], a.timeout)
    text = spec(r, tree)
    row["mutants"] = r.get("_chosen", {})
    if text is None:
        row["inside"] = {"error": "no line to mutate in the configured files"}
        return row
    STATE.mkdir(parents=True, exist_ok=True)
    slug = r["name"].replace("/", "+")
    spec_path = STATE / f"{slug}.yaml"
    spec_path.write_text(text)
    out_dir = STATE / f"{slug}-out"
    shutil.rmtree(out_dir, ignore_errors=True)
    code, out, secs = sh(f"{a.bin} run . -c {spec_path} --out {out_dir} -j {a.jobs}",
                         tree, a.timeout * 2)
    inside = {"exit": code, "secs": round(secs, 1)}
    try:
        res = json.loads((out_dir / "outcomes.json").read_text())
    except (OSError, ValueError):
        res = None
    if res is None:
        inside["error"] = [l for l in out.splitlines() if l.strip()][-3:]
    else:
        b = (res.get("baselines") or [{}])[0]
        inside["tests"] = b.get("tests_total")
        verdicts = {m["id"]: m["outcome"] for m in res.get("mutants", [])}
        inside["verdicts"] = verdicts
        inside["green"] = bool(verdicts) and not any(
            "baseline" in str(m.get("detail", "")) and m["outcome"] == "unviable"
            for m in res.get("mutants", []))
        checks = res.get("subset_checks") or []
        ran = any(m.get("subset_runs") for m in res.get("mutants", []))
        if checks and not all(c["green"] for c in checks):
            inside["subsets"] = "unusable: " + next(c["detail"] for c in checks if not c["green"])[:120]
        elif checks or ran:
            inside["subsets"] = "yes"
        else:
            inside["subsets"] = "no (full suite)"
        if code == 4:
            inside["green"] = False
            inside["error"] = [l for l in out.splitlines() if "baseline" in l][-2:]
    row["inside"] = inside
    return row


def cell(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def same_step(det: dict, ci_at: str) -> bool:
    """Whether the detected command's provenance is the CI step the bench names."""
    at = det.get("from") or ""
    return bool(at) and (at == ci_at or at.split(":")[0] == ci_at.split(":")[0]
                         and abs(int(at.split(":")[1]) - int(ci_at.split(":")[1] or 0)) <= 1)


def det_cell(row: dict, r: dict) -> str:
    det = row.get("detected")
    if not isinstance(det, dict):
        return f"not recorded: `{cell(det)}`" if det else "–"
    if det.get("error"):
        return f"init failed: {cell(det['error'].replace('`', ''))}"
    ci_at = r.get("ci_at", "")
    if ci_at and same_step(det, ci_at):
        return f"yes (from `{det['from']}`)"
    said = (f"from `{det['from']}`" if det.get("from")
            else f"no provenance (its own guess: `{cell(det.get('command', ''))}`)")
    return f"no: {said}; CI runs `{cell(r.get('ci', ''))}` at `{ci_at or '?'}`"


def write_md(results: dict) -> None:
    lines = [
        "# Real repositories: unguard in git mode against the projects' own suites",
        "",
        "[← README](../README.md) · generated by `python3 bench/real_repos.py --write`"
        f" on {datetime.date.today().isoformat()}",
        "",
        "Per repo: its own test command run outside unguard, then `unguard run` (git mode) with",
        "two generated mutants: `equivalent` adds a comment to an imported file (must survive);",
        "`breaks` makes the first one-line `return` of a function a raise/throw — the function is",
        "defined in a non-test source file, has a distinctive name defined once, and is called",
        "in the most test files the command runs (must be killed; the choice is in the notes).",
        "*detected = CI*: whether `unguard init --stdout` detects the step the project's CI runs",
        "(its `from file:line` provenance against the CI step; the bench itself runs the command",
        "in its `CONFIG`). Goal: green outside ⇒ green inside with the same test count, `breaks`",
        "killed, `equivalent` survived, subsets usable where an adapter applies.",
        "",
        "Run with the release build of main at 642dea4, `-j 1`, on a shared 2-core machine (times",
        "are loaded times). The Python commands put the copy's sources first (`PYTHONPATH=src`):",
        "uv installs the project editable, so without it the copy imports the user's checkout",
        "and every mutant is `unreached` (the editable-install trap; python-sdk's note). *subsets*:",
        "`yes` = kill-first subsets were checked green on the unmutated copy and used; `no (full",
        "suite)` = no runner adapter applies to the command (an npm/pnpm script around vitest",
        "without a JUnit reporter).",
        "",
        "| repo @ commit | why | test command | outside | inside | tests out / in | subsets | equivalent | breaks | detected = CI |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    audits = []
    for r in repos():
        row = results.get(r["name"])
        if (row or {}).get("audit"):
            audits.append((r, row))
        if r.get("skip"):
            row = {**(row or {}), "skip": r["skip"], "why": r["why"]}
        elif row is not None and "outside" not in row:
            row = None
        head = f"{r['name']} @ {r['commit'][:10]}"
        if row is None:
            lines.append(f"| {head} | {cell(r['why'])} | – | not run yet (`python3 bench/real_repos.py --only {r['name']}`) | – | – | – | – | – | – |")
            continue
        if row.get("skip"):
            lines.append(f"| {head} | {cell(row['why'])} | – | cannot run here: {cell(row['skip'])} | – | – | – | – | – | {det_cell(row, r)} |")
            continue
        o, i = row.get("outside", {}), row.get("inside", {})
        outside = ("green" if o.get("green") else
                   "timed out" if o.get("exit") == -1 else f"red (exit {o.get('exit')})")
        if i.get("error"):
            err = cell(" / ".join(i["error"]) if isinstance(i["error"], list) else i["error"])
            inside = err if err.startswith("not run") else "red: " + err
        else:
            inside = "green" if i.get("green") else f"red (exit {i.get('exit')})"
        v = i.get("verdicts", {})
        lines.append(
            f"| {head} | {cell(row['why'])} | `{cell(row.get('test', ''))}` | {outside} | {inside} | "
            f"{o.get('tests', '?')} / {i.get('tests', '?')} | {cell(i.get('subsets', '–'))} | "
            f"{v.get('equivalent', '–')} | {v.get('breaks', '–')} | {det_cell(row, r)} |")
    if audits:
        lines += ["", "## The audit's own command: baseline outside and inside", "",
                  "`unguard audit` (git mode, `-j 1`) on the command `init` detects, stopped once its",
                  "baseline is known; outside = that command run by hand (`{junit}` pointed at a",
                  "temp file). Outside counts the tests pytest/vitest report *passed*; inside, the",
                  "tests of the baseline's JUnit report (skipped ones included).", "",
                  "| repo | detected command | outside | inside |", "|---|---|---|---|"]
        for r, row in audits:
            au, det = row["audit"], row.get("detected") or {}
            o, i = au.get("outside", {}), au.get("inside", {})
            ot = f"green, {o.get('tests')} passed" if o.get("green") else f"red (exit {o.get('exit')}), {o.get('tests')} passed"
            it = (f"green, {i.get('tests')} tests" if i.get("green") else f"red: {cell(i.get('error', ''))}")
            lines.append(f"| {r['name']} | `{cell(det.get('command', ''))}` | {ot} ({o.get('secs')}s) | {it} ({i.get('secs')}s) |")
    lines += ["", "## Notes", ""]
    for r in repos():
        row = results.get(r["name"]) or {}
        parts = []
        if row.get("mutants"):
            parts.append("mutants: " + "; ".join(f"`{k}` = {v}" for k, v in row["mutants"].items()) + ".")
        if row.get("note"):
            parts.append(row["note"])
        if parts:
            lines.append(f"- **{r['name']}**: " + " ".join(parts))
    (HERE / "REAL-REPOS.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", help="owner/name of the repos to run (default: all)")
    ap.add_argument("--servers", type=pathlib.Path, default=HERE / ".servers")
    ap.add_argument("--mirror", type=pathlib.Path)
    ap.add_argument("--bin", default=str(ROOT / "target/debug/unguard"))
    ap.add_argument("--jobs", default="1")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--write", action="store_true", help="render bench/REAL-REPOS.md")
    ap.add_argument("--audit", action="store_true",
                    help="also record the audit's baseline outside and inside (slow)")
    ap.add_argument("--audit-only", action="store_true",
                    help="only (re)record detection and the audit's baseline of checked-out repos")
    ap.add_argument("--lane", help="write results-LANE.json (runs side by side)")
    ap.add_argument("--no-setup", action="store_true", help="the environments are in place: skip SETUP")
    ap.add_argument("--no-run", action="store_true", help="only render (with --write)")
    a = ap.parse_args()
    a.servers.mkdir(parents=True, exist_ok=True)
    a.servers = a.servers.resolve()
    STATE.mkdir(parents=True, exist_ok=True)
    # A lane (`--lane NAME`) writes results-NAME.json, so that two runs can go
    # side by side; `--write` folds the lanes into results.json.
    res_path = STATE / (f"results-{a.lane}.json" if a.lane else "results.json")
    main_path = STATE / "results.json"
    results = json.loads(main_path.read_text()) if main_path.exists() else {}
    if a.lane and res_path.exists():
        results.update(json.loads(res_path.read_text()))
    touched: set[str] = set()
    if not a.no_run:
        for r in repos():
            if a.only and r["name"] not in a.only:
                continue
            print(f"== {r['name']}", file=sys.stderr, flush=True)
            if a.audit_only:
                row = dict(results.get(r["name"]) or {"name": r["name"], "commit": r["commit"][:10],
                                                       "why": r["why"], "ci": r.get("ci", "")})
                tree = a.servers / r["name"].replace("/", "+")
                if not tree.is_dir():
                    continue
                row["detected"] = detected(a.bin, tree)
                if r.get("skip"):
                    row["skip"] = r["skip"]
                elif row["detected"].get("command"):
                    row["audit"] = audit_baseline(a.bin, tree, row["detected"]["command"], a.timeout)
            else:
                row = run_one(r, a)
                if "audit" in results.get(r["name"], {}) and "audit" not in row:
                    row["audit"] = results[r["name"]]["audit"]
            if results.get(r["name"], {}).get("note"):
                row["note"] = results[r["name"]]["note"]
            results[r["name"]] = row
            touched.add(r["name"])
            res_path.write_text(json.dumps({k: v for k, v in results.items() if not a.lane or k in touched}, indent=1))
            print(json.dumps(row), file=sys.stderr, flush=True)
    if a.write:
        for lane in sorted(STATE.glob("results-*.json"), key=lambda p: p.stat().st_mtime):
            for name, row in json.loads(lane.read_text()).items():
                results[name] = {**results.get(name, {}), **row}
            lane.unlink()
        main_path.write_text(json.dumps(results, indent=1))
        write_md(results)


if __name__ == "__main__":
    main()
