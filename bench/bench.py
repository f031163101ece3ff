#!/usr/bin/env python3
"""unguard benchmark: overhead, speed-up and memory, side by side with the hand loop.

    python3 bench/bench.py                 # everything (about 9 minutes on 2 cores)
    python3 bench/bench.py --reps 1 --big-reps 1   # one repetition each (about 4 minutes)
    python3 bench/bench.py --only demo,rss # some sections: demo, big, copy, rss

Writes bench/RESULTS.md (or --results FILE) and prints the same. Sections:

demo  examples/demo-server (9 mutants, one a deliberate 5 s timeout): the hand
      loop (per mutant: cp -r, a Python one-liner replace, git diff --no-index
      --exit-code, timeout <secs> <suite>, rm -rf), unguard run --full -j1 (with
      and without --no-canary) and -j2.
killfirst  test selection (issue 17): the demo at -j1 with kill-first and with
      --full, with and without kill confirmation: Σ killed mutants' time ÷
      (killed × baseline), verdicts compared; --killfirst-real LABEL=DIR adds a
      real target (a checkout with its own unguard.yaml).
scale the 10k repo again with --scale-mutants mutations (100): -j1 and -j2,
      and the fixed costs per run against the cost per mutant.
big   a generated git repo of 10,000 files / 200 MB with a CPU-light suite
      (sh: sleeps 0.2 s, one grep checks one module) and 20 mutations: the same
      contenders, plus the suite alone on a plain copy 20 times, plus a strace
      count of the files written in the scratch tree between mutants.
copy  workspace set-up of that tree (manifest + copy, via the workspace_copy
      bench target) against cp -r into the same temp dir, on the temp dir's
      filesystem and on tmpfs (/dev/shm) when there is one.
rss   10,000 mutations over 100 files of 24 KB: peak RSS and wall of
      `unguard check`, of `unguard run -j2 --no-canary` (a suite of `true`,
      every mutant survives; and a grep suite, every mutant is killed), the
      size of the output dir and the time and RSS of re-rendering its reports.
suites one slow and four fast test commands in one spec (issue 21): -j1 and
      -j2 walls against the bound no schedule beats (the slow command's chain:
      its baseline, then its canary and mutant side by side; or the suite runs
      shared among the workers); with --before-bin, the same against an older
      build that ran every baseline before any mutant. Not in the default set:
      --only suites.

Timings are medians of --reps repetitions on a shared, noisy machine.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY_REPLACE = (
    "import sys; p, a, b = sys.argv[1:]; s = open(p).read(); n = s.count(a); "
    "assert n == 1, f'{n} matches'; open(p, 'w').write(s.replace(a, b))"
)
OUTCOME_WORDS = (
    "killed", "survived", "timeout", "wrong-reason", "unreached", "unviable",
    "no-op", "ambiguous", "flaky", "internal-error",
)


# ------------------------------------------------------------------ helpers

def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(argv, check=False, **kw):
    kw.setdefault("stdout", subprocess.DEVNULL)
    kw.setdefault("stderr", subprocess.PIPE if check else subprocess.DEVNULL)
    p = subprocess.run(argv, **kw)
    if check and p.returncode != 0:
        err = p.stderr.decode(errors="replace")[-2000:] if p.stderr else ""
        raise SystemExit(f"{' '.join(map(str, argv))} exited {p.returncode}\n{err}")
    return p


def timed(argv, **kw):
    t = time.perf_counter()
    p = run(argv, **kw)
    return time.perf_counter() - t, p


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def fmt_s(x):
    return f"{x:.2f} s"


def mb(kb):
    return f"{kb / 1024:.1f} MB"


def rmtree(p):
    shutil.rmtree(p, ignore_errors=True)


def fresh_dir(tmp, prefix):
    return Path(tempfile.mkdtemp(prefix=prefix, dir=tmp))


def parse_duration(s):
    m = re.fullmatch(r"\s*([\d.]+)\s*(ms|s|m)?\s*", str(s))
    if not m:
        return None
    v = float(m.group(1))
    return v / 1000 if m.group(2) == "ms" else v * 60 if m.group(2) == "m" else v


def machine(tmp):
    cpu = "?"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    fs = subprocess.run(["findmnt", "-no", "FSTYPE,OPTIONS", "-T", str(tmp)],
                        capture_output=True, text=True).stdout.strip()
    journal = ""
    src = subprocess.run(["findmnt", "-no", "SOURCE", "-T", str(tmp)],
                         capture_output=True, text=True).stdout.strip()
    jt = Path(f"/sys/fs/ext4/{Path(src).name}/journal_task")
    if jt.exists():
        journal = "no journal" if jt.read_text().strip() == "<none>" else "journal"
    mem = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")), "0")
    rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "src"],
                           capture_output=True, text=True).stdout.strip()
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "kernel": platform.release(),
        "memory": f"{int(mem) // 1024} MB",
        "tmp": f"{tmp} ({fs}{', ' + journal if journal else ''})",
        "load": " ".join(open("/proc/loadavg").read().split()[:3]),
        "unguard": rev + (" + uncommitted changes in src/" if dirty else ""),
        "python": platform.python_version(),
    }


class Report:
    def __init__(self):
        self.lines = []
        self.targets = []

    def h(self, text):
        self.lines += ["", f"## {text}", ""]

    def p(self, text=""):
        self.lines.append(text)

    def table(self, header, rows):
        self.lines.append("| " + " | ".join(header) + " |")
        self.lines.append("|" + "|".join("---" for _ in header) + "|")
        for r in rows:
            self.lines.append("| " + " | ".join(str(c) for c in r) + " |")
        self.lines.append("")

    def target(self, name, value, op, limit, how):
        ok = {"<=": value <= limit, "<": value < limit, ">=": value >= limit}[op]
        self.targets.append((name, f"{value:.3f}", f"{op} {limit}", "PASS" if ok else "FAIL", how))
        return ok


# ------------------------------------------------------------------ contenders

def hand_loop(root, muts, command, tmp, default_timeout):
    """The loop people write by hand. Returns wall, per-mutant suite times and exit codes."""
    suite_times, codes = [], []
    t0 = time.perf_counter()
    for m in muts:
        work = fresh_dir(tmp, "hand-")
        tree = work / "tree"
        run(["cp", "-r", str(root), str(tree)], check=True)
        run([sys.executable, "-c", PY_REPLACE, str(tree / m["file"]), m["find"], m["replace"]],
            check=True)
        d = run(["git", "diff", "--no-index", "--exit-code", "--",
                 str(root / m["file"]), str(tree / m["file"])])
        if d.returncode != 1:
            raise SystemExit(f"hand loop: {m['id']} changed nothing (git diff exit {d.returncode})")
        cmd = command.replace("{junit}", str(work / "junit.xml"))
        secs = m.get("timeout") or default_timeout
        t = time.perf_counter()
        p = run(["timeout", f"{secs:g}", "sh", "-c", cmd], cwd=tree)
        suite_times.append(time.perf_counter() - t)
        codes.append(p.returncode)
        rmtree(work)
    return time.perf_counter() - t0, suite_times, codes


def unguard_run(ug, root, jobs, tmp, extra=(), env=None, confirm=False):
    """One `unguard run`. Without `confirm`, kills are not re-run
    (`--recheck-kills 0`), so the run does what the hand loop does and the
    ratios compare like with like; `section_confirm` measures the default."""
    out = fresh_dir(tmp, "out-") / "out"
    argv = [str(ug), "run", str(root), "-j", str(jobs), "--out", str(out), *extra]
    if not confirm:
        argv += ["--recheck-kills", "0"]
    # Progress lines are printed as each step ends: the mutant phase runs from
    # the last line before the first mutant's to the last mutant's line.
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    ready = last = None
    for line in p.stderr:
        t = time.perf_counter() - t0
        if line.split(" ", 1)[0] in OUTCOME_WORDS:
            last = t
        elif last is None:
            ready = t
    p.wait()
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 2):
        raise SystemExit(f"{' '.join(argv)} exited {p.returncode}")
    res = json.loads((out / "outcomes.json").read_text())
    rmtree(out.parent)
    return {
        "wall": wall,
        "loop": last - ready,
        "mutants": sum(m["duration_s"] for m in res["mutants"]),
        "baseline": sum(b["duration_s"] for b in res["baselines"]),
        "canary": sum(c["duration_s"] for c in res["canaries"]),
        "outcomes": {m["id"]: m["outcome"] for m in res["mutants"]},
        "exit": p.returncode,
    }


def unguard_variants(ug, root, tmp, reps, j2_no_canary=True, base=()):
    variants = {
        "-j1": (1, (*base,), None),
        "-j1 --no-canary": (1, (*base, "--no-canary"), None),
        "-j2": (2, (*base,), None),
        "-j2 --no-canary": (2, (*base, "--no-canary"), None),
    }
    if not j2_no_canary:
        del variants["-j2 --no-canary"]
    runs = {k: [] for k in variants}
    for rep in range(reps):
        for name, (jobs, extra, env) in variants.items():
            log(f"  unguard run {name} (rep {rep + 1}/{reps})")
            runs[name].append(unguard_run(ug, root, jobs, tmp, extra, env))
    return runs


def summarize(runs):
    keys = ("wall", "loop", "mutants", "baseline", "canary")
    return {name: {k: med([r[k] for r in rs]) for k in keys} for name, rs in runs.items()}


def verdict_of(code):
    return "green" if code == 0 else "hung" if code == 124 else "red"


def agree(outcomes, muts, codes):
    expect = {"survived": "green", "timeout": "hung", "killed": "red", "wrong-reason": "red"}
    return all(expect.get(outcomes[m["id"]]) == verdict_of(c) for m, c in zip(muts, codes))


def contender_table(rep, hand, runs, sums, denominator):
    rows = [["hand loop", fmt_s(hand["wall"]), "–", "–", "–", "–", "–",
             f"{hand['wall'] / denominator:.3f}"]]
    for name, s in sums.items():
        own = s["wall"] - s["mutants"] - s["baseline"] - s["canary"]
        own = fmt_s(own) if name.startswith("-j1") else "– (2 workers)"
        rows.append([f"unguard run {name}", fmt_s(s["wall"]), fmt_s(s["baseline"]),
                     fmt_s(s["canary"]), fmt_s(s["mutants"]), fmt_s(s["loop"]), own,
                     f"{s['wall'] / denominator:.3f}"])
    rep.table(["contender", "wall (median)", "baseline", "canary",
               "Σ mutant suites (unguard's timing)", "mutant phase (wall)",
               "unguard's own (wall − all suite runs)", "wall ÷ Σ suite"], rows)
    rep.p("Mutant phase = from the end of the last baseline or canary run to the end of the "
          "last mutant (the progress lines' times): the mutation loop itself, without set-up, "
          "baseline, canary, reports and clean-up.")
    rep.p()


def ratio_targets(rep, label, hand, sums, denominator, how_denominator, parallel_target):
    j1, j1n = sums["-j1"]["wall"], sums["-j1 --no-canary"]["wall"]
    j2 = sums["-j2"]["wall"]
    rep.target(f"{label}: overhead = unguard -j1 wall ÷ Σ suite", j1 / denominator, "<=", 1.03,
               how_denominator)
    rep.target(f"{label}: overhead with --no-canary", j1n / denominator, "<=", 1.03,
               how_denominator)
    rep.target(f"{label}: loop overhead = -j1 mutant phase ÷ Σ suite", sums["-j1"]["loop"] / denominator,
               "<=", 1.03, how_denominator)
    engine = sums["-j1"]["mutants"] + sums["-j1"]["baseline"] + sums["-j1"]["canary"]
    rep.target(f"{label}: unguard's own overhead = -j1 wall ÷ every suite run it made",
               j1 / engine, "<=", 1.03, "suite runs as unguard timed them (baseline, canary, mutants)")
    rep.target(f"{label}: unguard -j1 ÷ hand loop", j1 / hand["wall"], "<", 1.0, "walls")
    if parallel_target:
        rep.target(f"{label}: -j1 ÷ -j2", j1 / j2, ">=", 1.8, "walls")
        rep.target(f"{label}: -j1 ÷ -j2 with --no-canary",
                   j1n / sums["-j2 --no-canary"]["wall"], ">=", 1.8, "walls")
        rep.target(f"{label}: mutant phase -j1 ÷ -j2", sums["-j1"]["loop"] / sums["-j2"]["loop"],
                   ">=", 1.8, "the loop alone (see the Amdahl lines)")
        for name, name2 in (("-j1", "-j2"), ("-j1 --no-canary", "-j2 --no-canary")):
            a, b = sums[name], sums[name2]
            serial = a["wall"] - a["loop"]
            ideal = serial + a["loop"] / 2
            rep.p(f"Amdahl bound, `{name}` → `{name2}`: everything outside the mutant phase "
                  f"({fmt_s(serial)} at -j1: start-up, copy, baseline, canary, reports, "
                  f"clean-up) stays serial and the phase ({fmt_s(a['loop'])}) halves at best: "
                  f"{fmt_s(ideal)}, a ratio of {a['wall'] / ideal:.2f}. Measured: "
                  f"{a['wall'] / b['wall']:.2f}; the phase itself went from {fmt_s(a['loop'])} "
                  f"to {fmt_s(b['loop'])} ({a['loop'] / b['loop']:.2f}×), the rest from "
                  f"{fmt_s(serial)} to {fmt_s(b['wall'] - b['loop'])} (the second copy is made "
                  f"while the baseline runs in the first; two clean-ups).")
            rep.p()
    else:
        rep.p(f"-j1 ÷ -j2 on the demo: {j1 / j2:.2f}; not a target here: the demo's 5 s timeout "
              "mutant alone is half of its suite time.")
        rep.p()


# ------------------------------------------------------------------ sections

def section_demo(rep, ug, tmp, reps):
    import yaml
    root = REPO / "examples/demo-server"
    spec = yaml.safe_load((root / "unguard.yaml").read_text())
    command = spec["test"]["command"]
    muts = [{"id": m["id"], "file": m["file"], "find": m["find"], "replace": m["replace"],
             "timeout": parse_duration(m["timeout"]) if "timeout" in m else None}
            for m in spec["mutations"]]
    hands, runs = [], {}
    for r in range(reps):
        log(f"demo: hand loop (rep {r + 1}/{reps})")
        # auto timeout = max(20 s, 5 × baseline ≈ 0.8 s) = 20 s
        hands.append(hand_loop(root, muts, command, tmp, 20.0))
    # --full: every mutant runs the full suite, as in the hand loop (the
    # overhead targets measure unguard's own cost per suite run); the
    # killfirst section measures selection.
    runs = unguard_variants(ug, root, tmp, reps, j2_no_canary=False, base=("--full",))
    sums = summarize(runs)
    hand = {"wall": med([h[0] for h in hands]), "suite": med([sum(h[1]) for h in hands])}
    ok = all(agree(r["outcomes"], muts, h[2]) for r in runs["-j1"] for h in hands)

    rep.h("Demo: examples/demo-server (9 mutants, one a 5 s timeout)")
    rep.p("unguard runs here with `--full` (every mutant on the full suite, as the hand loop "
          "does); the kill-first section below measures test selection.")
    rep.p()
    rep.p(f"Hand loop per mutant: `cp -r` of the demo, a Python one-liner replace, "
          f"`git diff --no-index --exit-code`, `timeout <secs> sh -c '{command}'`, `rm -rf`. "
          f"Its verdicts (green/red/hung) {'agree' if ok else 'DO NOT agree'} with unguard's.")
    rep.p()
    rep.p(f"Σ suite = the `timeout … suite` steps of the hand loop alone, timed by this script "
          f"(median over reps): **{fmt_s(hand['suite'])}** for 9 mutants "
          f"(unguard's own per-mutant durations, -j1: {fmt_s(sums['-j1']['mutants'])}).")
    rep.p()
    contender_table(rep, hand, runs, sums, hand["suite"])
    ratio_targets(rep, "demo", hand, sums, hand["suite"], "Σ suite from the hand loop", False)
    return sums, hand


def killfirst_run(ug, root, tmp, extra=()):
    """One `unguard run -j1` of `root`: wall and outcomes.json."""
    out = fresh_dir(tmp, "out-") / "out"
    argv = [str(ug), "run", str(root), "-j", "1", "--out", str(out), *extra]
    t0 = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 2):
        raise SystemExit(f"{' '.join(argv)} exited {p.returncode}\n{p.stderr[-3000:]}")
    res = json.loads((out / "outcomes.json").read_text())
    rmtree(out.parent)
    return {"wall": wall, "res": res}


def killed_ratio(res, with_checks=False):
    """Σ killed mutants' duration_s ÷ (killed × baseline), and the kills.
    `with_checks`: the subset checks (runs on the unmutated copy, once per
    distinct subset) added to the numerator."""
    kills = [m for m in res["mutants"] if m["outcome"] == "killed"]
    base = sum(b["duration_s"] for b in res["baselines"])
    if not kills or not base:
        return float("nan"), 0
    num = sum(m["duration_s"] for m in kills)
    if with_checks:
        num += sum(c["duration_s"] for c in res.get("subset_checks", []))
    return num / (len(kills) * base), len(kills)


def killfirst_target(rep, ug, tmp, reps, label, root, goal, hand_wall=None, quick=False):
    variants = {
        "kill-first, --recheck-kills 0": ("--recheck-kills", "0"),
        "kill-first (default: --recheck-kills 1)": (),
        "--full, --recheck-kills 0": ("--full", "--recheck-kills", "0"),
        "--full (default: --recheck-kills 1)": ("--full",),
    }
    if quick:
        # A long suite: the full-suite variant once, without confirmation.
        del variants["--full (default: --recheck-kills 1)"]
    runs = {k: [] for k in variants}
    for r in range(reps):
        for name, extra in variants.items():
            log(f"killfirst: {label} -j1 {name} (rep {r + 1}/{reps})")
            runs[name].append(killfirst_run(ug, root, tmp, extra))
    verdicts = {name: [{m["id"]: m["outcome"] for m in x["res"]["mutants"]} for x in rs]
                for name, rs in runs.items()}
    first = verdicts["--full, --recheck-kills 0"][0]
    same = all(v == first for vs in verdicts.values() for v in vs)
    rows = []
    for name, rs in runs.items():
        ratios = [killed_ratio(x["res"]) for x in rs]
        with_checks = [killed_ratio(x["res"], True)[0] for x in rs]
        base = med([sum(b["duration_s"] for b in x["res"]["baselines"]) for x in rs])
        full_runs = med([sum(1 for m in x["res"]["mutants"] if m.get("full_suite")) for x in rs])
        rows.append([name, fmt_s(med([x["wall"] for x in rs])), fmt_s(base),
                     f"{ratios[0][1]}", f"{med([r for r, _ in ratios]):.3f}",
                     f"{med(with_checks):.3f}", f"{full_runs:g} of {len(rs[0]['res']['mutants'])}"])
    if hand_wall is not None:
        rows.append(["hand loop (full suite per mutant)", fmt_s(hand_wall), "–", "–", "–", "–", "all"])
    rep.h(f"Kill-first: {label}")
    rep.p(f"-j1, medians of {reps} runs. Ratio = Σ killed mutants' `duration_s` (every run of "
          f"the mutant: subsets, full suite, confirmation) ÷ (killed × baseline). The second "
          f"ratio adds every subset check (a subset's run on the unmutated copy, once per "
          f"distinct subset) to the numerator. Verdicts "
          f"{'identical' if same else 'DIFFER'} across all variants and repetitions.")
    rep.p()
    rep.table(["contender", "wall (median)", "baseline", "killed", "Σ killed ÷ (killed × baseline)",
               "same, subset checks included", "mutants that ran the full suite"], rows)
    sel = med([killed_ratio(x["res"])[0] for x in runs["kill-first, --recheck-kills 0"]])
    dflt = med([killed_ratio(x["res"])[0] for x in runs["kill-first (default: --recheck-kills 1)"]])
    rep.target(f"kill-first {label}: Σ killed ÷ (killed × baseline), --recheck-kills 0", sel,
               "<=", goal, "-j1, outcomes.json")
    rep.target(f"kill-first {label}: the same with kill confirmation (default)", dflt,
               "<=", goal, "-j1, outcomes.json")
    rep.target(f"kill-first {label}: verdicts identical to --full", 1.0 if same else 0.0,
               ">=", 1.0, "every variant and repetition")
    if not same:
        for name, vs in verdicts.items():
            diff = {k: v for k, v in vs[0].items() if first.get(k) != v}
            if diff:
                rep.p(f"`{name}` differs: {diff}")
        rep.p()


def section_killfirst(rep, ug, tmp, reps, real):
    root = REPO / "examples/demo-server"
    import yaml
    spec = yaml.safe_load((root / "unguard.yaml").read_text())
    muts = [{"id": m["id"], "file": m["file"], "find": m["find"], "replace": m["replace"],
             "timeout": parse_duration(m["timeout"]) if "timeout" in m else None}
            for m in spec["mutations"]]
    walls = []
    for r in range(reps):
        log(f"killfirst: demo hand loop (rep {r + 1}/{reps})")
        walls.append(hand_loop(root, muts, spec["test"]["command"], tmp, 20.0)[0])
    killfirst_target(rep, ug, tmp, reps, "examples/demo-server", root, 0.5, med(walls))
    for label, path in real:
        killfirst_target(rep, ug, tmp, reps, label, Path(path), 0.3, quick=True)


def section_confirm(rep, ug, tmp, reps):
    """The cost of kill confirmation (`--recheck-kills 1`, the default): the
    demo at -j1 with and without it."""
    root = REPO / "examples/demo-server"
    runs = {"default (--recheck-kills 1)": [], "--recheck-kills 0": []}
    for r in range(reps):
        log(f"confirm: demo -j1 with and without kill confirmation (rep {r + 1}/{reps})")
        runs["default (--recheck-kills 1)"].append(unguard_run(ug, root, 1, tmp, confirm=True))
        runs["--recheck-kills 0"].append(unguard_run(ug, root, 1, tmp))
    on, off = (summarize({k: v})[k] for k, v in runs.items())
    kills = sum(1 for o in runs["--recheck-kills 0"][0]["outcomes"].values() if o == "killed")
    same = all(r["outcomes"] == runs["--recheck-kills 0"][0]["outcomes"]
               for rs in runs.values() for r in rs)
    rep.h("Kill confirmation: what `--recheck-kills 1` (the default) costs")
    rep.p(f"The demo at -j1, medians of {reps} runs. Each of its {kills} kills is run once more "
          f"with the mutation in place; a kill that does not reproduce would be `flaky`. "
          f"Verdicts {'identical' if same else 'DIFFER'} with and without it.")
    rep.p()
    rep.table(["contender", "wall (median)", "mutant phase (wall)"],
              [[f"unguard run -j1, {k}", fmt_s(v["wall"]), fmt_s(v["loop"])]
               for k, v in (("default (--recheck-kills 1)", on), ("--recheck-kills 0", off))])
    extra = on["wall"] - off["wall"]
    rep.p(f"Confirmation adds {fmt_s(extra)} ({on['wall'] / off['wall']:.2f}× the wall, "
          f"{extra / kills if kills else 0:.2f} s per kill): one more suite run per kill, the "
          f"price of never calling a timing flake a kill. `--recheck-kills 0` turns it off.")
    rep.p()


def gen_big(tmp, files=10_000, size=20_000, mutations=20):
    """A git repo of `files` files × `size` bytes, one Python module with the
    controls, a suite that checks it and sleeps 0.2 s, and `mutations` mutations."""
    import random
    root = fresh_dir(tmp, "big-") / "repo"
    rnd = random.Random(7)
    words = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(2, 9)))
             for _ in range(4000)]
    body_lines = ["# " + " ".join(rnd.choices(words, k=10)) + "\n" for _ in range(2000)]
    per_dir = 100
    for i in range(files):
        d = root / "lib" / f"d{i // per_dir:03}"
        if i % per_dir == 0:
            d.mkdir(parents=True)
        out, n = [], 0
        start = (i * 37) % len(body_lines)
        while n < size:
            line = body_lines[(start + len(out)) % len(body_lines)]
            out.append(line)
            n += len(line)
        (d / f"m{i % per_dir:03}.py").write_text(f"# file {i}\n" + "".join(out))
    (root / "app").mkdir()
    (root / "tests").mkdir()
    (root / "app/__init__.py").write_text("")
    (root / "app/guard.py").write_text("".join(
        f"def allow_{i:02}(token):\n    return token == \"secret-{i:02}\"\n\n\n"
        for i in range(mutations)))
    tested = mutations - 2  # the last two controls are untested: they survive
    # CPU-light on purpose (one grep and a sleep): Python's start-up, and the
    # bytecode effect the demo section shows, would otherwise dominate.
    (root / "tests/check.sh").write_text(f"""# Every tested control must still compare its token.
sleep 0.2
n=$(grep -cE 'return token == "secret-({"|".join(f"{i:02}" for i in range(tested))})"$' app/guard.py)
[ "$n" -eq {tested} ]
""")
    spec = ["version: 1", "test:", '  command: "sh tests/check.sh"', "  timeout: 10s",
            "mutations:"]
    for i in range(mutations):
        spec += [f"  - id: allow-{i:02}", f'    control: "control {i:02}"',
                 "    file: app/guard.py", f"    find: 'return token == \"secret-{i:02}\"'",
                 "    replace: 'return True'"]
    (root / "unguard.yaml").write_text("\n".join(spec) + "\n")
    git = ["git", "-C", str(root), "-c", "core.compression=1", "-c", "user.email=bench@unguard",
           "-c", "user.name=bench"]
    run(git[:3] + ["init", "-q"], check=True)
    run(git + ["add", "-A"], check=True)
    # No background auto-gc racing the copies; one pack, as in a clone (no
    # delta search: the generated text would take long to delta-compress).
    run(git + ["-c", "gc.auto=0", "commit", "-qm", "generated"], check=True)
    run(git + ["repack", "-adq", "--window=0", "--depth=0"], check=True)
    muts = [{"id": f"allow-{i:02}", "file": "app/guard.py", "find": f'return token == "secret-{i:02}"',
             "replace": "return True", "timeout": None} for i in range(mutations)]
    return root, muts


def strace_writes(ug, root, tmp):
    """Which files in the scratch tree unguard opens for writing after the copy."""
    if not shutil.which("strace"):
        return None
    trace = fresh_dir(tmp, "strace-")
    out = trace / "out"
    run(["strace", "-f", "-qq", "-e", "trace=openat", "-o", str(trace / "log"),
         str(ug), "run", str(root), "-j1", "--out", str(out)])
    writes = {}
    pat = re.compile(r'openat\(AT_FDCWD, "([^"]*/tree-[^/"]+/([^"]+))", ([A-Z_|]+)(?:, (\d+))?')
    for line in (trace / "log").read_text(errors="replace").splitlines():
        m = pat.search(line)
        if not m or not re.search(r"O_WRONLY|O_RDWR", m.group(3)):
            continue
        if m.group(4) == "0600":  # the copy itself (copy_entry creates files 0600)
            continue
        writes[m.group(2)] = writes.get(m.group(2), 0) + 1
    res = json.loads((out / "outcomes.json").read_text())
    rmtree(trace)
    return writes, len(res["mutants"]), len(res["canaries"])


def section_big(rep, ug, tmp, reps, hand_mutants):
    """`reps`: repetitions of the unguard runs (a copy on this machine's ext4
    is now and then 10× slower, see RESULTS.md: five keep the median honest)."""
    log("big: generating 10,000 files / 200 MB and committing them")
    t = time.perf_counter()
    root, muts = gen_big(tmp)
    gen_s = time.perf_counter() - t
    files = sum(1 for _ in root.rglob("*") if _.is_file() and ".git" not in _.parts)
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)
    git_size = sum(p.stat().st_size for p in (root / ".git").rglob("*") if p.is_file())

    log("big: the suite alone on a plain copy, 20 times")
    plain = fresh_dir(tmp, "plain-") / "tree"
    run(["cp", "-r", str(root), str(plain)], check=True)
    run(["sh", "tests/check.sh"], cwd=plain, check=True)  # warm-up, and green
    suite = []
    for _ in muts:
        s, _p = timed(["timeout", "10", "sh", "-c", "sh tests/check.sh"], cwd=plain)
        suite.append(s)
    rmtree(plain.parent)
    denominator = sum(suite)

    hand_muts = muts[:hand_mutants]
    log(f"big: hand loop over {len(hand_muts)} of {len(muts)} mutants")
    hwall, hsuite, hcodes = hand_loop(root, hand_muts, "sh tests/check.sh", tmp, 10.0)
    scale = len(muts) / len(hand_muts)
    hand = {"wall": hwall * scale, "suite": sum(hsuite) * scale, "measured": hwall,
            "per": hwall / len(hand_muts)}

    runs = unguard_variants(ug, root, tmp, reps)
    sums = summarize(runs)
    ok = all(agree(r["outcomes"], hand_muts, hcodes) for r in runs["-j1"])
    log("big: strace of one -j1 run (files written in the scratch tree)")
    st = strace_writes(ug, root, tmp)

    rep.h("Generated repo: 10,000 files / 200 MB, CPU-light suite, 20 mutants")
    rep.p(f"{files} files, {size / 1e6:.0f} MB in the working tree (+ {git_size / 1e6:.0f} MB "
          f"in .git), generated and committed in {gen_s:.0f} s. Suite: `sh tests/check.sh` "
          f"(sleeps 0.2 s, then one `grep` checks 18 of the 20 controls in `app/guard.py`: "
          f"CPU-light, so -j2 can show parallelism on 2 cores). 20 mutations in "
          f"`app/guard.py`: 18 killed, 2 survive.")
    rep.p()
    rep.p(f"Σ suite = the suite alone on a plain copy, 20 times in a row (timed by this script): "
          f"**{fmt_s(denominator)}** (median run {med(suite):.3f} s; unguard's own per-mutant "
          f"durations, -j1: {fmt_s(sums['-j1']['mutants'])}).")
    rep.p()
    rep.p(f"Hand loop: per mutant `cp -r` of the whole repo (as people do: with .git), the "
          f"one-liner, `git diff --no-index`, `timeout 10 …`, `rm -rf`; measured on "
          f"{len(hand_muts)} of the 20 mutants ({fmt_s(hwall)}, {hand['per']:.2f} s per mutant) "
          f"and scaled to 20 (`--hand-mutants 20` runs them all). Its verdicts "
          f"{'agree' if ok else 'DO NOT agree'} with unguard's.")
    rep.p()
    contender_table(rep, hand, runs, sums, denominator)
    ratio_targets(rep, "10k repo", hand, sums, denominator, "Σ suite alone on a plain copy", True)
    if st:
        writes, nm, nc = st
        expect = {"app/guard.py": 2 * (nm + nc)}
        rep.p(f"Reset between mutants (strace of one -j1 run, `openat` for writing inside the "
              f"scratch tree after the copy): {writes} for {nm} mutants and {nc} canary; "
              f"expected {expect} (apply + restore of the one mutated file, nothing else).")
        rep.p()
        rep.target("10k repo: files rewritten between mutants other than the mutated one",
                   float(sum(v for k, v in writes.items() if k != "app/guard.py")), "<=", 0,
                   "strace")
    return root, sums

def section_scale(rep, ug, tmp, reps, n):
    """The fixed costs (copy, baseline, canary, clean-up) against the number
    of mutants: the 10k repo again, with `n` mutations."""
    log(f"scale: the 10k repo with {n} mutations")
    root, muts = gen_big(tmp, mutations=n)
    runs = {"-j1": [], "-j2": []}
    for r in range(reps):
        for name, jobs in (("-j1", 1), ("-j2", 2)):
            log(f"  unguard run {name} ({n} mutants, rep {r + 1}/{reps})")
            runs[name].append(unguard_run(ug, root, jobs, tmp))
    rmtree(root.parent)
    sums = {k: {f: med([x[f] for x in v]) for f in ("wall", "loop", "mutants", "baseline",
                                                        "canary")} for k, v in runs.items()}
    j1, j2 = sums["-j1"], sums["-j2"]
    per = j1["mutants"] / n
    fixed = j1["wall"] - j1["mutants"]
    rep.h(f"Fixed costs against the number of mutants: the 10k repo with {n} mutants")
    rep.p(f"The same generated repo and suite with {n} mutations in `app/guard.py` "
          f"({n - 2} killed, 2 survive); medians of {reps} runs.")
    rep.p()
    rep.table(["contender", "wall (median)", "baseline", "canary",
               "Σ mutant suites (unguard's timing)", "mutant phase (wall)"],
              [[f"unguard run {k}", fmt_s(v["wall"]), fmt_s(v["baseline"]), fmt_s(v["canary"]),
                fmt_s(v["mutants"]), fmt_s(v["loop"])] for k, v in sums.items()])
    need = fixed / (0.03 * per) if per > 0 else float("inf")
    rep.p(f"At -j1 everything but the mutants' own suite runs costs {fmt_s(fixed)} per run "
          f"(start-up, one copy of 200 MB, the baseline and canary runs, reports, removal), "
          f"whatever the number of mutants, and each mutant costs its suite run "
          f"({per:.3f} s here). Overhead = 1 + {fixed:.2f} / (N × {per:.3f}): at most 1.03 "
          f"from N ≈ {need:.0f} mutants on this repo. The parallel speed-up follows the same "
          f"law: -j2 halves the mutant work, not the copy and the baseline.")
    rep.p()
    rep.target(f"10k repo, {n} mutants: -j1 ÷ -j2", j1["wall"] / j2["wall"], ">=", 1.8, "walls")
    rep.target(f"10k repo, {n} mutants: overhead = unguard -j1 wall ÷ Σ its mutants' suite runs",
               j1["wall"] / j1["mutants"], "<=", 1.03, "suite runs as unguard timed them")


def harness_path():
    p = subprocess.run(["cargo", "bench", "--bench", "workspace_copy", "--no-run",
                        "--message-format=json"], cwd=REPO, capture_output=True, text=True)
    for line in p.stdout.splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j.get("reason") == "compiler-artifact" and j.get("executable") and \
                j["target"]["name"] == "workspace_copy":
            return Path(j["executable"])
    raise SystemExit("cannot build the workspace_copy bench target:\n" + p.stderr[-2000:])


def harness(exe, root, workers, tmpdir):
    p = subprocess.run([str(exe), str(root), "--workers", str(workers)], capture_output=True,
                       text=True, env={**os.environ, "TMPDIR": str(tmpdir)}, check=True)
    j = json.loads(p.stdout.strip().splitlines()[-1])
    return j["manifest_s"] + j["create_s"], j


def section_copy(rep, root, tmp, reps, before_harness):
    exe = harness_path()
    places = [("temp dir", tmp)]
    if Path("/dev/shm").is_dir() and shutil.disk_usage("/dev/shm").free > 2 << 30:
        places.append(("tmpfs /dev/shm", Path(tempfile.mkdtemp(prefix="bench-", dir="/dev/shm"))))
    work_items = [str(root / n) for n in sorted(os.listdir(root)) if n != ".git"]
    rows = []
    for label, where in places:
        res = {k: [] for k in ("cp_tree", "ug1", "ug2", "before1", "before2")}
        for r in range(reps):
            log(f"copy: {label} (rep {r + 1}/{reps})")
            d = fresh_dir(where, "cp-")
            (d / "tree").mkdir()
            res["cp_tree"].append(timed(["cp", "-r", *work_items, str(d / "tree")], check=True)[0])
            rmtree(d)
            res["ug1"].append(harness(exe, root, 1, where)[0])
            res["ug2"].append(harness(exe, root, 2, where)[0])
            if before_harness:
                res["before1"].append(harness(before_harness, root, 1, where)[0])
                res["before2"].append(harness(before_harness, root, 2, where)[0])
        m = {k: med(v) for k, v in res.items()}
        m.update({k + "_range": (min(v), max(v)) for k, v in res.items() if v})
        rows.append((label, m))
        if where != tmp:
            rmtree(where)

    rep.h("Workspace set-up of the 10,000-file tree against cp -r")
    rep.p("unguard = `workspace::manifest` (git index + status) + `Scratch::create` (the copy), "
          "timed inside the process by the `workspace_copy` bench target; `-j2` makes two copies "
          "at once. `cp -r` copies into a fresh directory of the same temp dir. Medians.")
    rep.p()
    header = ["where", "cp -r of the working files", "unguard, 1 copy",
              "unguard, 2 copies at once"]
    if before_harness:
        header += ["before: 1 copy", "before: 2 copies"]
    def cell(m, k):
        lo, hi = m[k + "_range"]
        return f"{fmt_s(m[k])} ({lo:.2f}–{hi:.2f})"

    table = []
    for label, m in rows:
        row = [label, cell(m, "cp_tree"), cell(m, "ug1"), cell(m, "ug2")]
        if before_harness:
            row += [cell(m, "before1"), cell(m, "before2")]
        table.append(row)
    rep.table(header, table)
    rep.p("Median (min–max). Why `cp -r` is so slow in the temp dir: on an ext4 without a "
          "journal, allocating an inode first skips every free inode of the block group that "
          "was deleted less than 60 s ago (360 s while its inode table is dirty), one buffer "
          "lookup each (`recently_deleted()` in fs/ext4/ialloc.c, seen with `perf`). The temp "
          "dir's block group is where every temp file of the machine comes and goes, so a copy "
          "there pays that scan for each of its 10,000 files. unguard marks each scratch dir "
          "`chattr +T` (FS_TOPDIR_FL) and gives the tree inside it a random name, so ext4's "
          "Orlov allocator puts the tree in a lightly used block group of its own; now and "
          "then that group is one a recent copy just freed, and the copy takes a few seconds "
          "instead of a fraction of one (the max column). Elsewhere (tmpfs, a journalled ext4, "
          "XFS, btrfs) the flag is ignored or harmless; where the filesystem can share extents "
          "(btrfs, XFS), files are reflinked (`FICLONE`) instead of copied.")
    rep.p()
    for label, m in rows:
        rep.target(f"set-up ÷ cp -r of the same files ({label})", m["ug1"] / m["cp_tree"], "<=",
                   1.0, "1 copy, manifest included")
    return rows


def vm_hwm(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def measured_run(ug, argv, n):
    """Run unguard; its peak RSS in kB from wait4 (what /usr/bin/time reports: the
    process and the suites it waited for), and VmHWM read from /proc when the
    n-th mutant line has been printed (the loop is done, the reports are next)."""
    t = time.perf_counter()
    p = subprocess.Popen([str(ug), *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    state = {"seen": 0, "loop": None}

    def watch():
        for line in p.stderr:
            if line.split(" ", 1)[0] in OUTCOME_WORDS:
                state["seen"] += 1
                if state["seen"] == n:
                    state["loop"] = vm_hwm(p.pid)

    th = threading.Thread(target=watch, daemon=True)
    th.start()
    while True:
        pid, status, ru = os.wait4(p.pid, 0)
        if pid == p.pid:
            break
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    th.join(5)
    return {"wall": wall, "rss": ru.ru_maxrss, "loop_rss": state["loop"], "exit": p.returncode}


def gen_rss(tmp, files=100, sites=100, kill=False):
    root = fresh_dir(tmp, "rss-") / "repo"
    (root / "src").mkdir(parents=True)
    muts = []
    for f in range(files):
        lines = []
        for i in range(sites):
            lines.append(f"FLAG_{f:03}_{i:03} = 1  # {'x' * 150}\n# filler {'y' * 40}\n")
            muts.append(f"  - id: f{f:03}-{i:03}\n    control: \"flag {f} {i}\"\n"
                        f"    file: src/mod_{f:03}.py\n    find: 'FLAG_{f:03}_{i:03} = 1'\n"
                        f"    replace: 'FLAG_{f:03}_{i:03} = 0'\n")
        (root / f"src/mod_{f:03}.py").write_text("".join(lines))
    command = "command: \"! grep -rqF '= 0  #' src\"" if kill else 'command: ["true"]'
    (root / "unguard.yaml").write_text(
        f"version: 1\ntest:\n  {command}\n  timeout: 10s\nmutations:\n" + "".join(muts))
    run(["git", "-C", str(root), "init", "-q"], check=True)
    run(["git", "-C", str(root), "add", "-A"], check=True)
    run(["git", "-C", str(root), "-c", "user.email=b@u", "-c", "user.name=b", "commit", "-qm", "g"],
        check=True)
    return root, files * sites


def section_rss(rep, ug, tmp, before_bin, killed):
    rows, targets = [], []
    bins = [("now", ug)] + ([("before", before_bin)] if before_bin else [])
    for kill in (False, True) if killed else (False,):
        root, n = gen_rss(tmp, kill=kill)
        suite = "grep suite: every mutant killed" if kill else "`true`: every mutant survives"
        size = sum(p.stat().st_size for p in (root / "src").iterdir())
        for name, b in bins:
            log(f"rss: {n} mutations, {suite}, unguard check ({name})")
            c = measured_run(b, ["check", str(root)], 0)
            rows.append([name, f"unguard check ({n} mutations, {size / 1e6:.1f} MB of sources)",
                         fmt_s(c["wall"]), mb(c["rss"]), "–"])
            if name == "now":
                targets.append((f"peak RSS of `unguard check`, {n} mutations", c["rss"]))
        for name, b in bins:
            if kill and name == "before":
                continue  # one run of the old binary is enough
            log(f"rss: unguard run -j2 --no-canary, {n} mutants, {suite} ({name})")
            out = fresh_dir(tmp, "out-") / "out"
            r = measured_run(b, ["run", str(root), "-j2", "--no-canary", "--out", str(out)], n)
            files = list(out.iterdir())
            out_bytes = sum(f.stat().st_size for f in files)
            oj = (out / "outcomes.json").stat().st_size
            rows.append([name, f"unguard run -j2 --no-canary, {suite}", fmt_s(r["wall"]),
                         mb(r["rss"]), mb(r["loop_rss"]) if r["loop_rss"] else "?"])
            if name == "now":
                targets.append((f"peak RSS of `unguard run`, {n} mutants, {suite}, whole run",
                                r["rss"]))
                if r["loop_rss"]:
                    targets.append((f"peak RSS of `unguard run`, {n} mutants, {suite}, "
                                    f"up to the last mutant (before the reports)", r["loop_rss"]))
                rep_rows = []
                for fmt in ("md", "html", "json"):
                    rr = measured_run(b, ["report", str(out), "--format", fmt], 0)
                    rep_rows.append(f"{fmt} {fmt_s(rr['wall'])} / {mb(rr['rss'])}")
                rows.append([name, f"out dir: {len(files)} files, {out_bytes / 1e6:.0f} MB "
                             f"(outcomes.json {oj / 1e6:.1f} MB); `unguard report` re-render: "
                             + ", ".join(rep_rows), "–", "–", "–"])
            rmtree(out.parent)
        rmtree(root.parent)
    rep.h("Memory: 10,000 mutations over 100 files")
    rep.p("Peak RSS = `ru_maxrss` from wait4, what `/usr/bin/time` reports (the suites are "
          "`true` or `sh`+`grep`, far smaller than unguard, so this is unguard's own peak); "
          "\"up to the last mutant\" is VmHWM read from /proc/PID/status when the last "
          "mutant's line was printed, before the reports are rendered.")
    rep.p()
    rep.table(["binary", "what", "wall", "peak RSS", "peak RSS up to the last mutant"], rows)
    for name, kb in targets:
        rep.target(name, kb / 1024, "<", 100, "MB")


def section_isolation(rep, ug, tmp, reps, before_bin, before_label):
    """What the clean-run guarantees cost in the mutant phase: the 10k repo,
    this build against `before_bin` (a build without the per-run reset walk
    and the per-run process supervisor), -j1 and -j2, interleaved."""
    if before_bin is None:
        log("isolation: skipped (needs --before-bin)")
        return
    log("isolation: the 10k repo, this build against the --before-bin build")
    root, muts = gen_big(tmp)
    bins = [("now", ug), ("before", before_bin)]
    runs = {(b, j): [] for b, _ in bins for j in (1, 2)}
    for r in range(reps):
        for jobs in (1, 2):
            for name, b in (bins if r % 2 == 0 else bins[::-1]):
                log(f"  {name} -j{jobs} (rep {r + 1}/{reps})")
                runs[(name, jobs)].append(unguard_run(b, root, jobs, tmp))
    rmtree(root.parent)
    n_runs = len(muts) + 1  # the mutants and the one canary run in the mutant phase
    rows, ratios = [], {}
    for jobs in (1, 2):
        now = med([x["loop"] for x in runs[("now", jobs)]])
        before = med([x["loop"] for x in runs[("before", jobs)]])
        same = all(x["outcomes"] == runs[("before", jobs)][0]["outcomes"]
                   for x in runs[("now", jobs)])
        ratios[jobs] = now / before
        rows.append([f"-j{jobs}", fmt_s(before), fmt_s(now),
                     f"{1000 * before / n_runs:.0f}", f"{1000 * now / n_runs:.0f}",
                     f"{1000 * (now - before) / n_runs:+.0f}", f"{now / before:.3f}",
                     "yes" if same else "NO"])
    rep.h("Clean runs: the reset walk and per-run process supervision")
    rep.p(f"The 10k repo (10,000 files, 20 mutants, one canary: {n_runs} suite runs in the mutant "
          f"phase), `--recheck-kills 0`, this build against {before_label}, which neither "
          f"compares the scratch copy with its manifest after every run nor runs each suite "
          f"under its own supervisor. Mutant phase = from the last progress line before the "
          f"first mutant to the last mutant's line; medians of {reps} interleaved runs.")
    rep.p()
    rep.table(["jobs", "mutant phase before", "now", "ms per run before", "now",
               "added ms per run", "ratio", "same verdicts"], rows)
    for jobs, r in ratios.items():
        rep.target(f"10k repo -j{jobs}: mutant phase, this build / before", r, "<=", 1.05,
                   "ratio")


SLOW_S = 6.0   # the slow suite's run, seconds
FAST_S = 0.5   # each fast suite's run


def gen_suites(tmp, fast=4, fast_mutants=3):
    """A spec with one slow test command (SLOW_S per run, one mutant) and
    `fast` fast ones (FAST_S per run, `fast_mutants` mutants each: all but
    one killed). Every suite sleeps, then one grep checks its own file."""
    root = fresh_dir(tmp, "suites-") / "target"
    root.mkdir()
    (root / "suite.sh").write_text('sleep "$1"; grep -qx ok "$2" && ! grep -q BAD "$2"\n')
    (root / "s.txt").write_text("ok\n")
    muts = [f"""  - id: slow-kill
    control: the slow suite's control
    file: s.txt
    find: "ok"
    replace: "BAD"
"""]
    for k in range(fast):
        f = f"f{k}.txt"
        (root / f).write_text("ok\n" + "".join(f"x{i}\n" for i in range(fast_mutants)))
        for i in range(fast_mutants):
            # x0 -> BAD is killed; the other lines are checked by no one.
            find, repl = (f"x{i}", "BAD") if i == 0 else (f"x{i}", f"y{i}")
            muts.append(f"""  - id: fast{k}-{i}
    control: fast suite {k}, control {i}
    file: {f}
    find: "{find}"
    replace: "{repl}"
    test:
      command: "sh suite.sh {FAST_S} {f}"
""")
    # The top-level command is the slow one (older builds require one).
    (root / "unguard.yaml").write_text(
        f"version: 1\ntest:\n  command: \"sh suite.sh {SLOW_S} s.txt\"\nmutations:\n" + "".join(muts))
    run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    run(["git", "add", "-A"], cwd=root, check=True)
    run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "suites"],
        cwd=root, check=True)
    return root, 1 + fast * fast_mutants


def suites_run(ug, root, jobs, tmp):
    """One `unguard run -jN --recheck-kills 0`: wall, and the slow command's
    chain as this run timed it (its baseline, then the longer of its canary
    and its mutant, which can run side by side)."""
    out = fresh_dir(tmp, "out-") / "out"
    argv = [str(ug), "run", str(root), "-j", str(jobs), "--out", str(out), "--recheck-kills", "0"]
    t0 = time.perf_counter()
    p = run(argv)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 2):
        raise SystemExit(f"{' '.join(argv)} exited {p.returncode}: {p.stderr}")
    res = json.loads((out / "outcomes.json").read_text())
    rmtree(out.parent)
    slow = next(b for b in res["baselines"] if f"{SLOW_S}" in b["command"])
    slow_mut = next(m for m in res["mutants"] if m["id"] == "slow-kill")
    slow_canary = [c["duration_s"] for c in res["canaries"] if c["file"] == "s.txt"]
    return {
        "wall": wall,
        "chain": slow["duration_s"] + max([slow_mut["duration_s"]] + slow_canary),
        "work": sum(b["duration_s"] for b in res["baselines"])
        + sum(c["duration_s"] for c in res["canaries"])
        + sum(m["duration_s"] for m in res["mutants"]),
        "outcomes": {m["id"]: m["outcome"] for m in res["mutants"]},
    }


def section_suites(rep, ug, tmp, reps, before_bin, before_label):
    """Several test commands in one spec: does a slow baseline hold back
    the other commands' jobs? -j1 and -j2, this build (and `before_bin`)."""
    log("suites: one slow and four fast test commands")
    root, n = gen_suites(tmp)
    bins = [("now", ug)] + ([("before", before_bin)] if before_bin else [])
    runs = {(b, j): [] for b, _ in bins for j in (1, 2)}
    for r in range(reps):
        for jobs in (1, 2):
            for name, b in (bins if r % 2 == 0 else bins[::-1]):
                log(f"  {name} -j{jobs} (rep {r + 1}/{reps})")
                runs[(name, jobs)].append(suites_run(b, root, jobs, tmp))
    rmtree(root.parent)
    rows = []
    first = runs[("now", 1)][0]["outcomes"]
    bound = {}
    for (name, jobs), rs in runs.items():
        same = all(x["outcomes"] == first for x in rs)
        wall, work, chain = (med([x[k] for x in rs]) for k in ("wall", "work", "chain"))
        bound[(name, jobs)] = max(chain, work / jobs)
        rows.append([f"{name} -j{jobs}", fmt_s(wall), fmt_s(work), fmt_s(chain),
                     fmt_s(bound[(name, jobs)]), f"{wall / bound[(name, jobs)]:.2f}",
                     "yes" if same else "NO"])
    rep.h("Several test commands: one slow baseline beside four fast suites (issue 21)")
    rep.p(f"One spec, five test commands: a slow one ({SLOW_S:g} s per run: its baseline, its "
          f"canary, one mutant) and four fast ones ({FAST_S:g} s per run: a baseline, a canary and "
          f"3 mutants each): {n} mutants, `--recheck-kills 0`. Σ suite runs = every baseline, "
          f"canary and mutant run as unguard timed it. Slow chain = the slow command's baseline, "
          f"then the longer of its canary and its mutant (they can run side by side). No schedule "
          f"on N workers ends before the bound = max(slow chain, Σ suite runs ÷ N). Medians of "
          f"{reps} runs"
          + (f"; \"before\" is {before_label}, which ran every baseline, one after another, "
             f"in worker 0 before any canary or mutant, and then the queue in spec order."
             if before_bin else "."))
    rep.p()
    rep.table(["build, jobs", "wall (median)", "Σ suite runs", "slow chain", "bound",
               "wall ÷ bound", "same verdicts"], rows)
    now2 = med([x["wall"] for x in runs[("now", 2)]])
    rep.target("several commands -j2: wall ÷ max(slow chain, Σ suite runs ÷ 2)",
               now2 / bound[("now", 2)], "<=", 1.1, "walls")
    if before_bin:
        before2 = med([x["wall"] for x in runs[("before", 2)]])
        rep.target("several commands -j2: before ÷ now", before2 / now2, ">=", 1.15, "walls")


# ------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--reps", type=int, default=3, help="repetitions (demo, copy)")
    ap.add_argument("--big-reps", type=int, default=5,
                    help="repetitions of the unguard runs on the 10k repo")
    ap.add_argument("--only", default="demo,confirm,killfirst,big,scale,copy,rss")
    ap.add_argument("--scale-mutants", type=int, default=100,
                    help="scale: mutations in the second run of the 10k repo")
    ap.add_argument("--hand-mutants", type=int, default=5,
                    help="hand loop on the 10k repo: mutants measured (scaled to 20)")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--results", default=str(REPO / "bench/RESULTS.md"))
    ap.add_argument("--before-bin",
                    help="an older unguard binary for the rss, isolation and suites sections")
    ap.add_argument("--before-harness", help="an older workspace_copy bench binary")
    ap.add_argument("--before-label", default="an older build",
                    help="what the --before-* binaries are, for RESULTS.md")
    ap.add_argument("--killfirst-real", action="append", default=[], metavar="LABEL=DIR",
                    help="killfirst: also a real target (a git checkout with its unguard.yaml)")
    ap.add_argument("--rss-killed", action="store_true",
                    help="rss: also a 10,000-mutant run where every mutant is killed")
    args = ap.parse_args()
    only = set(args.only.split(","))

    if not args.no_build:
        log("cargo build --release")
        subprocess.run(["cargo", "build", "--release", "-q"], cwd=REPO, check=True)
    ug = REPO / "target/release/unguard"
    tmp = Path(tempfile.mkdtemp(prefix="unguard-bench-"))
    started = time.perf_counter()
    rep = Report()
    info = machine(tmp)
    try:
        if "demo" in only:
            section_demo(rep, ug, tmp, args.reps)
        if "confirm" in only:
            section_confirm(rep, ug, tmp, args.reps)
        if "killfirst" in only:
            real = [tuple(x.split("=", 1)) for x in args.killfirst_real]
            section_killfirst(rep, ug, tmp, args.reps, real)
        root = None
        if "big" in only:
            root, _ = section_big(rep, ug, tmp, args.big_reps, args.hand_mutants)
        if "scale" in only:
            section_scale(rep, ug, tmp, args.reps, args.scale_mutants)
        if "copy" in only:
            if root is None:
                root, _ = gen_big(tmp)
            section_copy(rep, root, tmp, args.reps,
                         Path(args.before_harness) if args.before_harness else None)
        if root is not None:
            rmtree(root.parent)
        if "isolation" in only:
            section_isolation(rep, ug, tmp, args.big_reps,
                              Path(args.before_bin) if args.before_bin else None,
                              args.before_label)
        if "suites" in only:
            section_suites(rep, ug, tmp, args.reps,
                           Path(args.before_bin) if args.before_bin else None,
                           args.before_label)
        if "rss" in only:
            section_rss(rep, ug, tmp, Path(args.before_bin) if args.before_bin else None,
                        args.rss_killed)
    finally:
        rmtree(tmp)
    info["load"] += " → " + " ".join(open("/proc/loadavg").read().split()[:3])

    head = ["# unguard benchmark results", "",
            f"Written by `python3 bench/bench.py --reps {args.reps} --big-reps {args.big_reps}"
            f"{' --only ' + args.only if args.only != 'demo,confirm,killfirst,big,scale,copy,rss' else ''}"
            f"{' --before-bin …' if args.before_bin else ''}"
            f"{' --before-harness …' if args.before_harness else ''}` "
            f"in {time.perf_counter() - started:.0f} s. Medians of {args.reps} repetitions "
            f"({args.big_reps} for the unguard runs on the 10k repo) on a shared machine (other builds ran at the same time): read ratios, not "
            f"milliseconds.", ""]
    head += ["| machine | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in info.items()] + [""]
    if args.before_bin or args.before_harness:
        head += [f"\"before\" columns and rows: {args.before_label}.", ""]
    head += ["## Targets", "", "| target | value | goal | | how |", "|---|---|---|---|---|"]
    head += [f"| {n} | {v} | {g} | **{ok}** | {how} |" for n, v, g, ok, how in rep.targets]
    text = "\n".join(head + rep.lines).rstrip() + "\n"
    Path(args.results).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
