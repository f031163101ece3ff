#!/usr/bin/env python3
"""Every test's wall time from a nextest JUnit report (issue 51).

    python3 bench/test_times.py [JUNIT] [--top N] [--markdown]

JUNIT defaults to target/nextest/ci/junit.xml, which `cargo nextest run
--profile ci` (the README's test command) writes. Prints the N slowest tests
(default 20), the sum of all test times, the run's wall, and the test-seconds
per module (the first path segment after `it::`), slowest first. With
--markdown the same as Markdown tables, for bench/TEST-TIMES.md.
"""

import argparse
import collections
import signal
import sys
import xml.etree.ElementTree as ET


def cases(path):
    root = ET.parse(path).getroot()
    wall = float(root.get("time") or 0)
    out = []
    for suite in root.iter("testsuite"):
        for case in suite.iter("testcase"):
            name = case.get("name") or ""
            binary = case.get("classname") or suite.get("name") or ""
            failed = case.find("failure") is not None or case.find("error") is not None
            skipped = case.find("skipped") is not None
            out.append((float(case.get("time") or 0), binary, name, failed, skipped))
    return wall, out


def module(binary, name):
    """The module a test is in: the first path segment of its name."""
    return name.split("::")[0] if "::" in name else binary


def main():
    # Piped into head: end quietly when the reader has had enough.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    ap = argparse.ArgumentParser()
    ap.add_argument("junit", nargs="?", default="target/nextest/ci/junit.xml")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--no-modules", action="store_true", help="leave out the per-module table")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    try:
        wall, rows = cases(a.junit)
    except (OSError, ET.ParseError) as e:
        sys.exit(f"{a.junit}: {e} (run `cargo nextest run --profile ci` first)")
    rows.sort(key=lambda r: -r[0])
    total = sum(r[0] for r in rows)
    per = collections.Counter()
    count = collections.Counter()
    for t, binary, name, _, _ in rows:
        key = f"{binary} {module(binary, name)}"
        per[key] += t
        count[key] += 1
    failed = sum(1 for r in rows if r[3])
    if a.markdown:
        print(f"{len(rows)} tests, {failed} failed; wall {wall:.0f} s, test-seconds {total:.0f} s\n")
        print(f"| # | test | binary | seconds |\n|---|---|---|---|")
        for i, (t, binary, name, f, _) in enumerate(rows[: a.top], 1):
            print(f"| {i} | `{name}`{' (failed)' if f else ''} | {binary} | {t:.1f} |")
        if a.no_modules:
            return
        print("\n| module | tests | test-seconds |\n|---|---|---|")
        for key, t in per.most_common():
            print(f"| `{key}` | {count[key]} | {t:.0f} |")
    else:
        print(f"{len(rows)} tests, {failed} failed; wall {wall:.0f} s, test-seconds {total:.0f} s")
        for t, binary, name, f, _ in rows[: a.top]:
            print(f"{t:8.1f}  {binary}  {name}{'  FAILED' if f else ''}")
        if a.no_modules:
            return
        print("\nper module:")
        for key, t in per.most_common():
            print(f"{t:8.0f}  {count[key]:4d}  {key}")


if __name__ == "__main__":
    main()
