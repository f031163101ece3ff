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
     comment to a line of an imported file (must survive), `breaks` turns the
     first `return <value>` of an imported file into a raise/throw (must be
     killed), and runs `unguard run` in git mode on it;
  6. records baseline inside, test counts, whether kill-first subsets were
     usable, and both verdicts in bench/.real-repos/results.json.

`--write` renders bench/REAL-REPOS.md from results.json (rows not run this
time keep their last result). A repo that cannot run here has a `skip`
reason and one row saying why.

    python3 bench/real_repos.py [--only NAME ...] [--servers DIR] [--mirror DIR]
                                [--bin target/debug/unguard] [--jobs 1]
                                [--timeout 900] [--write]

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

# Per repo: environment set-up, the test command (outside and inside), the
# command its CI runs, the files the two mutants edit (imported by the
# tests), or why it cannot run here.
CONFIG = {
    "modelcontextprotocol/typescript-sdk": {
        # pnpm 10 as pinned by `packageManager` (pnpm 11+ fails to resolve its
        # config deps for other platforms).
        "setup": ["npx --yes pnpm@10.26.1 install --frozen-lockfile"],
        "test": "npx --yes pnpm@10.26.1 --filter @modelcontextprotocol/server test",
        "ci": "pnpm test:all (pnpm -r test)",
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
        "test": "uv run --no-sync pytest tests/server -q -p no:cacheprovider",
        "ci": "uv run --frozen --no-sync pytest (scripts/test)",
        "equivalent": "src/mcp/server/lowlevel/server.py",
        "breaks": "src/mcp/shared/_httpx_utils.py",
    },
    "keboola/mcp-server": {
        "setup": ["uv sync --frozen --all-extras"],
        "test": "uv run --no-sync pytest tests -q",
        "ci": "uv run tox (pytest tests --cov=keboola_mcp_server)",
        "equivalent": "src/keboola_mcp_server/authorization.py",
        "breaks": "src/keboola_mcp_server/authorization.py",
    },
    "sooperset/mcp-atlassian": {
        "setup": ["uv sync --frozen --all-extras --dev"],
        "test": "uv run --no-sync pytest tests/unit -q",
        "ci": "uv run pytest -v --cov=src/mcp_atlassian --cov-report=term-missing",
        "equivalent": "src/mcp_atlassian/utils/urls.py",
        "breaks": "src/mcp_atlassian/utils/urls.py",
    },
    "cbcoutinho/nextcloud-mcp-server": {
        "setup": ["uv sync --frozen"],
        "test": "uv run --frozen pytest -q -m unit -o 'addopts=-p no:asyncio'",
        "ci": "uv run --frozen pytest -q -m unit -n auto -o \"addopts=-p no:asyncio\"",
        "equivalent": "nextcloud_mcp_server/config.py",
        "breaks": "nextcloud_mcp_server/config.py",
    },
    "makenotion/notion-mcp-server": {
        "setup": ["npm ci --no-audit --no-fund"],
        "test": "npm test",
        "ci": "npm ci && npm run build && npm test",
        "equivalent": "src/openapi-mcp-server/openapi/parser.ts",
        "breaks": "src/openapi-mcp-server/openapi/parser.ts",
    },
    "apify/apify-mcp-server": {
        "setup": ["npx --yes pnpm@10 install --frozen-lockfile"],
        "test": "npx --yes pnpm@10 run test",
        "ci": "pnpm run test",
        "equivalent": "src/utils/generic.ts",
        "breaks": "src/utils/generic.ts",
    },
    "mongodb-js/mongodb-mcp-server": {
        "setup": ["npx --yes pnpm@10 install --frozen-lockfile"],
        "test": "npx --yes pnpm@10 test",
        "ci": "pnpm test",
        "equivalent": None,
        "breaks": None,
    },
    "github/github-mcp-server": {
        "skip": "Go: the module proxy cannot be reached from this machine, so `go test` cannot download the modules",
        "ci": "script/test (go test -race ./...)",
    },
    "openshift/openshift-mcp-server": {
        "skip": "Go: the module proxy cannot be reached from this machine, so `go test` cannot download the modules",
        "ci": "make test (go test -race -count=1 -v ./...)",
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


def spec(r: dict, tree: pathlib.Path) -> str | None:
    muts = []
    for want in ("equivalent", "breaks"):
        rel = r.get(want)
        if not rel or not (tree / rel).is_file():
            return None
        fr = pick(tree / rel, want, r["language"])
        if fr is None:
            return None
        q = lambda s: "'" + s.replace("'", "''") + "'"
        muts.append(f"  - id: {want}\n    control: {q('bench: ' + want)}\n"
                    f"    file: {rel}\n    find: {q(fr[0])}\n    replace: {q(fr[1])}\n"
                    + ("    canary: false\n" if want == "equivalent" else ""))
    return (f"version: 1\ntest:\n  command: {json.dumps(r['test'])}\n  timeout: 10m\n"
            "mutations:\n" + "".join(muts))


def detected(bin_: str, tree: pathlib.Path) -> str:
    code, out, _ = sh(f"{bin_} init --stdout --force .", tree, 120)
    if code != 0:
        return f"init failed: {out.strip().splitlines()[-1] if out.strip() else code}"
    try:
        doc = yaml.safe_load(out)
        return str(doc["test"]["command"])
    except Exception:  # noqa: BLE001 - the spec on stdout is what we report
        return "unparsed"


def run_one(r: dict, a) -> dict:
    row = {"name": r["name"], "commit": r["commit"][:10], "language": r["language"],
           "why": r["why"], "ci": r.get("ci", "")}
    if r.get("skip"):
        row["skip"] = r["skip"]
        return row
    tree = checkout(r, a.servers, a.mirror)
    for cmd in r.get("setup", []):
        code, out, secs = sh(cmd, tree, a.timeout)
        if code != 0:
            row["skip"] = f"set-up `{cmd}` failed: {out.strip().splitlines()[-1][:160] if out.strip() else code}"
            return row
    row["test"] = r["test"]
    code, out, secs = sh(r["test"], tree, a.timeout)
    row["outside"] = {"green": code == 0, "exit": code, "tests": count(out), "secs": round(secs, 1),
                      "tail": out.strip().splitlines()[-3:] if out.strip() else []}
    row["detected"] = detected(a.bin, tree)
    text = spec(r, tree)
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


def write_md(results: dict) -> None:
    lines = [
        "# Real repositories: unguard in git mode against the projects' own suites",
        "",
        "[← README](../README.md) · generated by `python3 bench/real_repos.py --write`"
        f" on {datetime.date.today().isoformat()}",
        "",
        "Per repo: its own test command run outside unguard, then `unguard run` (git mode) with",
        "two generated mutants: `equivalent` adds a comment to an imported file (must survive),",
        "`breaks` turns the first `return <value>` of an imported file into a raise (must be",
        "killed). *detected = CI*: whether `unguard init` detects the command the project's CI",
        "runs (the bench uses the command in its `CONFIG`, not the detected one). Goal: green",
        "outside ⇒ green inside with the same test count, `breaks` killed, `equivalent` survived,",
        "subsets usable where an adapter applies.",
        "",
        "| repo @ commit | why | test command | outside | inside | tests out / in | subsets | equivalent | breaks | detected = CI |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in repos():
        row = results.get(r["name"])
        if row is None and r.get("skip"):
            row = {"skip": r["skip"], "why": r["why"]}
        head = f"{r['name']} @ {r['commit'][:10]}"
        if row is None:
            lines.append(f"| {head} | {cell(r['why'])} | – | not run yet (time-boxed; `python3 bench/real_repos.py --only {r['name']}`) | – | – | – | – | – | – |")
            continue
        if row.get("skip"):
            lines.append(f"| {head} | {cell(row['why'])} | – | cannot run here: {cell(row['skip'])} | – | – | – | – | – | – |")
            continue
        o, i = row.get("outside", {}), row.get("inside", {})
        outside = ("green" if o.get("green") else f"red (exit {o.get('exit')})")
        if i.get("error"):
            inside = "red: " + cell(" / ".join(i["error"]) if isinstance(i["error"], list) else i["error"])
        else:
            inside = "green" if i.get("green") else f"red (exit {i.get('exit')})"
        v = i.get("verdicts", {})
        det = row.get("detected", "–")
        same = "yes" if det and det.strip() in row.get("ci", "") else f"no: `{cell(det)}`"
        lines.append(
            f"| {head} | {cell(row['why'])} | `{cell(row.get('test', ''))}` | {outside} | {inside} | "
            f"{o.get('tests', '?')} / {i.get('tests', '?')} | {cell(i.get('subsets', '–'))} | "
            f"{v.get('equivalent', '–')} | {v.get('breaks', '–')} | {same} |")
    lines += ["", "Notes", ""]
    for name, row in results.items():
        if row.get("note"):
            lines.append(f"- {name}: {row['note']}")
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
    ap.add_argument("--no-run", action="store_true", help="only render (with --write)")
    a = ap.parse_args()
    a.servers.mkdir(parents=True, exist_ok=True)
    a.servers = a.servers.resolve()
    STATE.mkdir(parents=True, exist_ok=True)
    res_path = STATE / "results.json"
    results = json.loads(res_path.read_text()) if res_path.exists() else {}
    if not a.no_run:
        for r in repos():
            if a.only and r["name"] not in a.only:
                continue
            print(f"== {r['name']}", file=sys.stderr, flush=True)
            row = run_one(r, a)
            if results.get(r["name"], {}).get("note"):
                row["note"] = results[r["name"]]["note"]
            results[r["name"]] = row
            res_path.write_text(json.dumps(results, indent=1))
            print(json.dumps(row), file=sys.stderr, flush=True)
    if a.write:
        write_md(results)


if __name__ == "__main__":
    main()
