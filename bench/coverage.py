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
import re
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


def overheads(out):
    """Per run log of `out`: the run's wall (unguard's last line) minus the time pytest says its
    tests took (its summary line): (forked, cold) lists, baseline logs aside."""
    forked, cold = [], []
    for name in os.listdir(out):
        if not name.endswith(".log") or name.startswith("@baseline") or name.startswith("@coverage"):
            continue
        try:
            with open(os.path.join(out, name), encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        wall = re.findall(r"^# unguard: exit code \d+ after ([0-9.]+)s$", text, re.M)
        own = re.findall(r"^=*\s*\d+ (?:passed|failed|deselected)[^\n]* in ([0-9.]+)s", text, re.M)
        if not wall or not own:
            continue
        (forked if "\n# warm: forked" in text else cold).append(float(wall[-1]) - float(own[-1]))
    return forked, cold


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


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
    ap.add_argument("--against", choices=["no-coverage", "full", "network-off", "cold", "before-53"],
                    default="no-coverage",
                    help="B's flag: --no-coverage (the speed target: default flags otherwise), --full "
                         "(no selection at all: the verdict table the issue compares with), "
                         "network-off (--network-isolation off: every confirmation alone, issue 53), "
                         "cold (--cold: no warm interpreter, issue 53), or before-53 (--cold and "
                         "--network-isolation off: the defaults before issue 53)")
    args = ap.parse_args()
    if not os.path.exists(args.bin):
        sys.exit("no unguard binary at %s (cargo build --release, or --bin)" % args.bin)
    tmp = tempfile.mkdtemp(prefix="ug-bench-coverage-")
    extra = ["--test-command", args.test_command] if args.test_command else []
    try:
        wa, a, ca = audit(args.bin, args.target, os.path.join(tmp, "with"), args.jobs, args.file, extra)
        b_flags = {
            "network-off": ["--network-isolation", "off"],
            "before-53": ["--cold", "--network-isolation", "off"],
        }.get(args.against, ["--" + args.against])
        wb, b, cb = audit(args.bin, args.target, os.path.join(tmp, "without"), args.jobs, args.file, extra + b_flags)
        fa, _ = overheads(os.path.join(tmp, "with"))
        _, cb_runs = overheads(os.path.join(tmp, "without"))
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
        print("A's warm runs: %s" % ", ".join(
            "forked" if bl.get("warm") else "cold (%s)" % bl.get("warm_note", "not a pytest/unittest start")
            for bl in a.get("baselines", [])))
        print("A (defaults):     %.0f s (exit %d)" % (wa, ca))
        print("with --%s: %.0f s (exit %d)" % (args.against, wb, cb))
        target = {"no-coverage": " (target <= 0.25 x)", "before-53": " (target <= 0.35 x)"}
        print("ratio: %.2f x%s" % (wa / wb if wb else float("nan"), target.get(args.against, "")))
        if cov:
            print("coverage run: %.1f s, %s; baseline %.1f s: %.2f x (target <= 2 x)" % (
                cov["duration_s"], "used" if cov["used"] else "NOT used: " + cov.get("not_used", ""),
                base, cov["duration_s"] / base if base else float("nan")))
        else:
            print("coverage run: none (no pytest suite, or every mutant has expect.killed_by)")
        if fa or cb_runs:
            print("a run's overhead over its tests' own time (median of %d forked runs / %d cold runs): "
                  "%.2f s forked, %.2f s cold (target forked <= 0.5 s)" % (
                      len(fa), len(cb_runs), median(fa), median(cb_runs)))
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
