#!/usr/bin/env python3
"""Incremental runs (issue 37): a pull request that changes one of ten mutated files.

    python3 bench/incremental.py [-j 2] [--bin PATH] [--keep]

Generates a pytest target: ten modules of ten guards each, one mutant per guard
(100 mutants, no expect.killed_by, so the coverage run makes its map), a test
module per module. Then, in one go:

  A  unguard run -j N --out <tmp>/main                     the full run of main
  (one function body of app/mod_3.py changes, as a pull request would)
  B  unguard run -j N --out <tmp>/pr --incremental <tmp>/main/outcomes.json
  C  unguard run -j N --out <tmp>/full                     a full run of the changed tree

and prints the walls, B / A (issue 37's target: <= 0.15), how many mutants B ran,
and whether B's verdicts equal C's. A kill is never reused (issue 50): every kill of
another file is proven again by its earlier red tests (stage `earlier-kill`), and only
mod_3's ten may run anything else. Exit 1 when the verdicts differ, or when another
file's mutant ran more than its earlier red tests.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

FILES = 10
GUARDS = 10
CHANGED = 3


def module(k):
    out = ["LIMITS = %r\n" % [10 * (i + 1) for i in range(GUARDS)]]
    for i in range(GUARDS):
        out.append(
            "\n\ndef check_%d(n):\n    if n > LIMITS[%d]:\n        raise ValueError(n)\n    return n\n" % (i, i)
        )
    return "".join(out)


def tests(k):
    out = ["import pytest\nfrom app import mod_%d as m\n" % k]
    for i in range(GUARDS):
        limit = 10 * (i + 1)
        out.append(
            "\n\ndef test_check_%d():\n    assert m.check_%d(%d) == %d\n    with pytest.raises(ValueError):\n        m.check_%d(%d)\n"
            % (i, i, limit, limit, i, limit + 1)
        )
    return "".join(out)


def spec():
    s = [
        "version: 1\n",
        "test:\n",
        '  command: "python3 -m pytest -q -p no:cacheprovider --junitxml={junit}"\n',
        '  junit: "{junit}"\n',
        "mutations:\n",
    ]
    for k in range(FILES):
        for i in range(GUARDS):
            s.append(
                "  - id: m%d-g%d\n    control: guard %d of module %d\n    file: app/mod_%d.py\n"
                "    find: 'n > LIMITS[%d]'\n    replace: 'False'\n" % (k, i, i, k, k, i)
            )
    return "".join(s)


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def make_target(root):
    write(root, "pyproject.toml", '[project]\nname = "bench-incremental"\nversion = "0"\n')
    write(root, "app/__init__.py", "")
    write(root, "tests/__init__.py", "")
    for k in range(FILES):
        write(root, "app/mod_%d.py" % k, module(k))
        write(root, "tests/test_mod_%d.py" % k, tests(k))
    write(root, "unguard.yaml", spec())
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]
    subprocess.run(git + ["init", "-q"], cwd=root, check=True)
    subprocess.run(git + ["add", "-A"], cwd=root, check=True)
    subprocess.run(git + ["commit", "-qm", "main"], cwd=root, check=True)


def run(bin_path, root, out, jobs, extra):
    cmd = [bin_path, "run", root, "-j", str(jobs), "--out", out] + extra
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    path = os.path.join(out, "outcomes.json")
    if not os.path.exists(path):
        sys.exit("no outcomes.json from %s (exit %d):\n%s" % (" ".join(cmd), proc.returncode, proc.stderr[-3000:]))
    with open(path, encoding="utf-8") as f:
        return wall, json.load(f)


def table(o):
    return {m["id"]: m["outcome"] for m in o["mutants"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "unguard"))
    ap.add_argument("--keep", action="store_true", help="keep the target and the output dirs")
    args = ap.parse_args()
    if not os.path.exists(args.bin):
        sys.exit("no unguard binary at %s (cargo build --release, or --bin)" % args.bin)
    tmp = tempfile.mkdtemp(prefix="ug-bench-incremental-")
    root = os.path.join(tmp, "target")
    try:
        make_target(root)
        wa, a = run(args.bin, root, os.path.join(tmp, "main"), args.jobs, [])
        # The pull request: one function body of one mutated file.
        changed = "app/mod_%d.py" % CHANGED
        with open(os.path.join(root, changed), encoding="utf-8") as f:
            text = f.read()
        write(root, changed, text.replace("    return n\n", "    checked = n\n    return checked\n", 1))
        wb, b = run(args.bin, root, os.path.join(tmp, "pr"), args.jobs,
                    ["--incremental", os.path.join(tmp, "main", "outcomes.json")])
        wc, c = run(args.bin, root, os.path.join(tmp, "full"), args.jobs, [])
        ran = sorted(m["id"] for m in b["mutants"] if "reused" not in m)
        reproven = [m["id"] for m in b["mutants"] if "reused" not in m
                    and (m.get("subset_runs") or [{}])[0].get("stage") == "earlier-kill"
                    and not m.get("full_suite")]
        others = [m["id"] for m in b["mutants"] if "reused" not in m
                  and not m["id"].startswith("m%d-" % CHANGED) and m["id"] not in reproven]
        tb, tc = table(b), table(c)
        differ = sorted(k for k in set(tb) | set(tc) if tb.get(k) != tc.get(k))
        print("mutants: %d in %d files (%s)" % (len(a["mutants"]), FILES, ", ".join(
            "%d %s" % (n, o) for o, n in sorted(
                {o: list(table(a).values()).count(o) for o in set(table(a).values())}.items()))))
        print("A full run of main:                 %6.1f s" % wa)
        print("B --incremental, %s changed: %6.1f s, ran %d mutant(s) (%d kills proven again by "
              "their earlier red tests alone), reused %d" % (
                  changed, wb, len(ran), len(reproven), b["summary"].get("reused", 0)))
        print("C full run of the changed tree:     %6.1f s" % wc)
        print("B / A: %.3f (target <= 0.15); B / C: %.3f" % (wb / wa, wb / wc))
        print("B ran other files' mutants beyond their earlier red tests: %s" % (", ".join(others) if others else "none"))
        print("B's verdicts %s C's" % ("DIFFER from" if differ else "equal"))
        for k in differ:
            print("  %s: %s incremental, %s full" % (k, tb.get(k), tc.get(k)))
        return 1 if differ or others else 0
    finally:
        if args.keep:
            print("kept: %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
