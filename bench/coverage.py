#!/usr/bin/env python3
"""Per-test coverage (issue 36): an audit with and without coverage selection, side by side.

    python3 bench/coverage.py TARGET [-j 2] [--file GLOB] [--test-command CMD] [--bin PATH] [--keep]

TARGET is a checkout whose test command unguard detects (or that has its own
unguard.yaml). Runs, one after the other on the same commit and flags:

  A  unguard audit TARGET -j N --out <tmp>/with          (default: coverage on)
  B  unguard audit TARGET -j N --out <tmp>/without --no-coverage   (or --full: --against full)

and prints: both walls and their ratio (the issue's target: A <= 0.25 x B), the
coverage run's time against one baseline (target: <= 2 x), and whether the two
verdict tables agree (they must, but for `survived` rows that A reports as
`no-coverage`). Exit 1 when the tables disagree otherwise.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def audit(bin_path, target, out, jobs, files, extra):
    cmd = [bin_path, "audit", target, "-j", str(jobs), "--out", out] + extra
    for f in files:
        cmd += ["--file", f]
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    outcomes = os.path.join(out, "outcomes.json")
    if not os.path.exists(outcomes):
        sys.exit("no outcomes.json from %s (exit %d):\n%s" % (" ".join(cmd), proc.returncode, proc.stderr[-3000:]))
    with open(outcomes, encoding="utf-8") as f:
        return wall, json.load(f), proc.returncode


def table(o):
    return {m["id"]: m["outcome"] for m in o["mutants"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("target")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--file", action="append", default=[], help="audit only these files (repeatable glob)")
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "unguard"))
    ap.add_argument("--keep", action="store_true", help="keep the two output dirs")
    ap.add_argument("--test-command", help="passed to both audits (audit's own --test-command)")
    ap.add_argument("--against", choices=["no-coverage", "full", "network-off"], default="no-coverage",
                    help="B's flag: --no-coverage (the speed target: default flags otherwise), --full "
                         "(no selection at all: the verdict table the issue compares with), or "
                         "network-off (--network-isolation off: every confirmation alone, issue 53)")
    args = ap.parse_args()
    if not os.path.exists(args.bin):
        sys.exit("no unguard binary at %s (cargo build --release, or --bin)" % args.bin)
    tmp = tempfile.mkdtemp(prefix="ug-bench-coverage-")
    extra = ["--test-command", args.test_command] if args.test_command else []
    try:
        wa, a, ca = audit(args.bin, args.target, os.path.join(tmp, "with"), args.jobs, args.file, extra)
        b_flags = ["--network-isolation", "off"] if args.against == "network-off" else ["--" + args.against]
        wb, b, cb = audit(args.bin, args.target, os.path.join(tmp, "without"), args.jobs, args.file, extra + b_flags)
        ta, tb = table(a), table(b)
        differ = [
            (k, tb.get(k), ta.get(k))
            for k in sorted(set(ta) | set(tb))
            if ta.get(k) != tb.get(k) and not (tb.get(k) == "survived" and ta.get(k) == "no-coverage")
        ]
        cov = next((bl.get("coverage") for bl in a.get("baselines", []) if bl.get("coverage")), None)
        base = a["baselines"][0]["duration_s"] if a.get("baselines") else None
        print("mutants: %d" % len(ta))
        print("A's network: %s" % ", ".join(
            "%s%s" % (bl.get("network", "shared"), " (%s)" % bl["network_note"] if bl.get("network_note") else "")
            for bl in a.get("baselines", [])))
        print("A (defaults):     %.0f s (exit %d)" % (wa, ca))
        print("with --%s: %.0f s (exit %d)" % (args.against, wb, cb))
        print("ratio: %.2f x%s" % (wa / wb if wb else float("nan"),
                                   " (target <= 0.25 x)" if args.against == "no-coverage" else ""))
        if cov:
            print("coverage run: %.1f s, %s; baseline %.1f s: %.2f x (target <= 2 x)" % (
                cov["duration_s"], "used" if cov["used"] else "NOT used: " + cov.get("not_used", ""),
                base, cov["duration_s"] / base if base else float("nan")))
        else:
            print("coverage run: none (no pytest suite, or every mutant has expect.killed_by)")
        print("survived -> no-coverage: %d" % sum(1 for k in ta if ta[k] == "no-coverage"))
        if differ:
            print("tables DIFFER beyond survived -> no-coverage:")
            for k, was, now in differ:
                print("  %s: %s without, %s with" % (k, was, now))
            return 1
        print("tables agree (survived -> no-coverage aside)")
        return 0
    finally:
        if args.keep:
            print("kept: %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
