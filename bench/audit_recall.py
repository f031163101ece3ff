#!/usr/bin/env python3
"""Score `unguard audit` against hand-labelled control sites of real MCP servers.

The dev set is bench/audit-sites/<owner>+<repo>.yaml: per server the commit a
reviewer read and every control site they listed (file, first line of the
statement, control id, why). This script runs `unguard audit --list --json`
on a checkout of each server at that commit and compares:

  * a labelled site is *found* when audit reports the same file and control
    with its line within +-2 lines of the label;
  * a reported site (file, line, control; several mutants on one line are one
    site) is *true* when it matches a label the same way, else *false*.

Recall = found / labelled, precision = true / reported, per server, per
language and per control. `--write` renders bench/AUDIT.md.

Four splits. `tune` (bench/audit-sites/) is the dev set the catalog may be tuned
on. `dev2` (bench/audit-sites-dev2/) is tuned on too: six servers that were the
validation split until 2026-12-06 (their starting points stay in
bench/audit-dev2-start.json), labelled with the validation guide; it takes no
additions. `test` (bench/audit-sites-test/) is frozen: labelled by reviewers who
never ran unguard, before any rule change, and never tuned on; it is the issue's
measure, scored again at its end. `val` (bench/audit-sites-val/) is held out
the same way and scored once at the end of each round of rule changes, so a
round is judged on code it was not tuned on without spending `test`. Held-out
lists take no additions (`added_after_audit` is refused there).
`--split test --freeze` (or `--split val --freeze`) records the score of the
binary at hand, with the `--audit-arg`s given, as the split's starting point
(bench/audit-<split>-start.json, once per split and arguments); `--write`
scores the tune split, the second dev split and every held-out split whose
checkouts are there and shows each beside its starting points.

Checkouts: DIR/<owner>+<repo> for each label file (`--servers DIR`, default
$UNGUARD_SERVERS or bench/.servers). Each must be at the labelled commit; a
checkout at another commit is refused (line numbers would not match). Fetch
them with `git clone https://github.com/<owner>/<repo> DIR/<owner>+<repo> &&
git -C DIR/<owner>+<repo> checkout <commit>`.

Needs PyYAML (`pip install pyyaml`).
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import pathlib
import re
import subprocess
import sys

try:
    import yaml
except ImportError:  # pragma: no cover - a clear message beats a traceback
    sys.exit("audit_recall.py needs PyYAML: pip install pyyaml")

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
SITES = HERE / "audit-sites"
SPLITS = {
    "tune": SITES,
    "dev2": HERE / "audit-sites-dev2",
    "test": HERE / "audit-sites-test",
    "val": HERE / "audit-sites-val",
}
# Splits scored beside the tune split by `--write`: the second dev split, then
# the held-out ones.
SIDE_SPLITS = ("dev2", "test", "val")
# Held-out splits: labelled before the rules were changed for them, never tuned
# on, no additions after an audit.
HELD_OUT = ("test", "val")
def start_file(split: str) -> pathlib.Path:
    """Where a held-out split's starting point is recorded."""
    return HERE / f"audit-{split}-start.json"


def starts(split: str) -> list[dict]:
    """A held-out split's recorded starting points, one per set of audit
    arguments (a file written before there were several holds one dict)."""
    f = start_file(split)
    if not f.exists():
        return []
    doc = json.loads(f.read_text())
    return doc if isinstance(doc, list) else [doc]
TOLERANCE = 2
LANGS = ("python", "typescript", "go")
# Arguments given to every audit (`--audit-arg`).
EXTRA_ARGS: list[str] = []


def load_labels(path: pathlib.Path, split: str = "tune") -> dict:
    doc = yaml.safe_load(path.read_text())
    for key in ("server", "commit", "language", "sites"):
        if key not in doc:
            sys.exit(f"{path}: missing `{key}`")
    if doc["language"] not in LANGS:
        sys.exit(f"{path}: language must be one of {', '.join(LANGS)}")
    for i, s in enumerate(doc["sites"]):
        for key in ("file", "line", "control", "why"):
            if key not in s:
                sys.exit(f"{path}: site {i + 1} has no `{key}`")
        if split != "tune" and s.get("added_after_audit"):
            sys.exit(f"{path}: site {i + 1}: the {split} split takes no additions after an audit")
    doc["path"] = path
    return doc


def binary(arg: str | None) -> str:
    if arg:
        return arg
    for b in ("target/release/unguard", "target/debug/unguard"):
        if (ROOT / b).exists():
            return str(ROOT / b)
    sys.exit("no unguard binary: run `cargo build --release` or pass --bin")


def head(checkout: pathlib.Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def tightening_twins(bin_: str) -> dict[str, str]:
    """Tightening operators with a `twin_of`: their sites are the twin control's
    sites seen from the other direction (seed 002 rule 5), so they score as it."""
    out = subprocess.run([bin_, "catalog", "--markdown"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"unguard catalog --markdown failed:\n{out.stderr}")
    twins = {}
    for line in out.stdout.splitlines():
        m = re.match(r"^- `([\w-]+)`:.*\btighten \(twin of `([\w-]+)`\)", line)
        if m:
            twins[m.group(1)] = m.group(2)
    return twins


def reported_sites(
    bin_: str, checkout: pathlib.Path, extra: list[str], twins: dict[str, str]
) -> list[dict]:
    out = subprocess.run(
        [bin_, "audit", "--list", "--json", *extra, str(checkout)],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        sys.exit(f"unguard audit --list failed on {checkout}:\n{out.stderr}")
    doc = json.loads(out.stdout)
    seen = {}
    for s in doc["sites"]:
        s["control"] = twins.get(s["control"], s["control"])
        key = (s["file"], s["line"], s["control"])
        seen.setdefault(key, s)
    return list(seen.values())


def near(a: dict, b: dict) -> bool:
    return (
        a["file"] == b["file"]
        and a["control"] == b["control"]
        and abs(int(a["line"]) - int(b["line"])) <= TOLERANCE
    )


class Score:
    """Counts for one row of a table."""

    def __init__(self) -> None:
        self.labelled = 0
        self.found = 0
        self.reported = 0
        self.true = 0

    def add(self, other: "Score") -> None:
        self.labelled += other.labelled
        self.found += other.found
        self.reported += other.reported
        self.true += other.true

    @staticmethod
    def pct(n: int, d: int) -> str:
        return "n/a" if d == 0 else f"{100.0 * n / d:.0f} %"

    def recall(self) -> str:
        return self.pct(self.found, self.labelled)

    def precision(self) -> str:
        return self.pct(self.true, self.reported)

    def cells(self) -> list[str]:
        return [
            str(self.labelled),
            str(self.found),
            self.recall(),
            str(self.reported),
            str(self.true),
            self.precision(),
        ]


def score_server(labels: dict, reported: list[dict]):
    sites = labels["sites"]
    per_control: dict[str, Score] = collections.defaultdict(Score)
    total = Score()
    missed = []
    for s in sites:
        hit = any(near(s, r) for r in reported)
        per_control[s["control"]].labelled += 1
        total.labelled += 1
        if hit:
            per_control[s["control"]].found += 1
            total.found += 1
        else:
            missed.append(s)
    false = []
    for r in reported:
        ok = any(near(s, r) for s in sites)
        per_control[r["control"]].reported += 1
        total.reported += 1
        if ok:
            per_control[r["control"]].true += 1
            total.true += 1
        else:
            false.append(r)
    return total, per_control, missed, false


def table(head_: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head_) + " |", "|" + "---|" * len(head_)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


COLS = ["labelled", "found", "recall", "reported", "true", "precision"]
ORIG = "precision on the original lists"
ORIG_RECALL = "recall on the original lists"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--servers", default=os.environ.get("UNGUARD_SERVERS", str(HERE / ".servers")))
    ap.add_argument("--bin", help="the unguard binary (default: target/release or target/debug)")
    ap.add_argument("--write", action="store_true", help="render bench/AUDIT.md")
    ap.add_argument("--only", action="append", default=[], help="score only this server (owner/repo)")
    ap.add_argument("--show", action="store_true", help="print every missed and false site")
    ap.add_argument(
        "--split", choices=list(SPLITS), default="tune", help="which label set to score and print"
    )
    ap.add_argument(
        "--audit-arg",
        action="append",
        default=[],
        help="pass this argument to every `unguard audit` (e.g. --audit-arg=--guards)",
    )
    ap.add_argument(
        "--freeze",
        action="store_true",
        help="record a held-out split's starting point (once per split and audit arguments)",
    )
    args = ap.parse_args()
    EXTRA_ARGS.extend(args.audit_arg)
    bin_ = binary(args.bin)
    twins = tightening_twins(bin_)
    servers = pathlib.Path(args.servers)
    if args.freeze:
        if args.split not in HELD_OUT:
            sys.exit(f"--freeze records a held-out split's start: --split {' or '.join(HELD_OUT)}")
        return freeze(args.split, bin_, twins, servers)
    results = score_split(args.split, bin_, twins, servers, args.only)
    held_out = {}
    if args.write and args.split == "tune":
        for split in SIDE_SPLITS:
            held_out[split] = (
                score_split(split, bin_, twins, servers, [])
                if have_checkouts(split, servers)
                else None
            )
    lang_rows, server_rows, control_rows = rows(results)
    print(table(["language", *COLS, ORIG_RECALL, ORIG], lang_rows))
    print()
    print(table(["server", "language", "commit", *COLS], server_rows))
    print()
    print(table(["control", *COLS], control_rows))
    if args.show:
        for labels, _, _, missed, false in results:
            print(f"\n## {labels['server']}")
            for r in false:
                print(f"FALSE  {r['file']}:{r['line']}  {r['control']}  {r['text'][:90]}")
            for s in missed:
                print(f"MISSED {s['file']}:{s['line']}  {s['control']}  {s['why'][:90]}")
    if args.write:
        if args.split != "tune":
            sys.exit("--write renders the tune split and the held-out ones: run it without --split")
        write_audit_md(results, lang_rows, server_rows, control_rows, bin_, held_out)
    return 0


def have_checkouts(split: str, servers: pathlib.Path) -> bool:
    """Whether every server of a split has a checkout under `servers`."""
    files = sorted(SPLITS[split].glob("*.yaml")) if SPLITS[split].is_dir() else []
    return bool(files) and all((servers / f.stem).is_dir() for f in files)


def score_split(split: str, bin_: str, twins: dict, servers: pathlib.Path, only: list[str]) -> list:
    sites = SPLITS[split]
    label_files = sorted(sites.glob("*.yaml"))
    if not label_files:
        sys.exit(f"no label files in {sites}")
    results = []
    for lf in label_files:
        labels = load_labels(lf, split)
        if only and labels["server"] not in only:
            continue
        checkout = servers / lf.stem
        if not checkout.is_dir():
            sys.exit(f"{labels['server']}: no checkout at {checkout} (see --servers)")
        at = head(checkout)
        if at != labels["commit"]:
            sys.exit(
                f"{labels['server']}: {checkout} is at {at or '?'}, the labels are for "
                f"{labels['commit']}: git -C {checkout} checkout {labels['commit']}"
            )
        reported = reported_sites(
            bin_, checkout, [*labels.get("audit_args", []), *EXTRA_ARGS], twins
        )
        labels["_reported"] = reported
        total, per_control, missed, false = score_server(labels, reported)
        results.append((labels, total, per_control, missed, false))
    return results


def rows(results: list):
    """Per-language, per-server and per-control table rows of scored results."""
    # The same score on the reviewers' original lists (sites added after
    # audit reported them left out), so the additions can be judged.
    by_lang_orig: dict[str, Score] = collections.defaultdict(Score)
    for labels, *_ in results:
        orig = dict(labels, sites=[s for s in labels["sites"] if not s.get("added_after_audit")])
        reported = labels["_reported"]
        by_lang_orig[labels["language"]].add(score_server(orig, reported)[0])
    by_lang: dict[str, Score] = collections.defaultdict(Score)
    by_control: dict[str, Score] = collections.defaultdict(Score)
    for labels, total, per_control, _, _ in results:
        by_lang[labels["language"]].add(total)
        for c, sc in per_control.items():
            by_control[c].add(sc)

    server_rows = [
        [f"`{lab['server']}`", lab["language"], f"`{lab['commit'][:10]}`", *tot.cells()]
        for lab, tot, *_ in results
    ]
    lang_rows = [
        [lang, *by_lang[lang].cells(), by_lang_orig[lang].recall(), by_lang_orig[lang].precision()]
        for lang in LANGS
        if lang in by_lang
    ]
    control_rows = [
        [f"`{c}`", *sc.cells()]
        for c, sc in sorted(by_control.items(), key=lambda kv: (-kv[1].labelled, kv[0]))
    ]
    return lang_rows, server_rows, control_rows


def freeze(split: str, bin_: str, twins: dict, servers: pathlib.Path) -> int:
    """Record a held-out split's starting point: the score of `bin_` (with the
    `--audit-arg`s given) before any rule is changed for it. Written once per
    split and audit arguments; a second freeze is refused."""
    recorded = starts(split)
    if any(r.get("audit_args", []) == EXTRA_ARGS for r in recorded):
        sys.exit(
            f"{start_file(split)}: the starting point with audit arguments {EXTRA_ARGS} "
            "is recorded once"
        )
    results = score_split(split, bin_, twins, servers, [])
    lang_rows, server_rows, _ = rows(results)
    version = subprocess.run([bin_, "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    doc = {
        "date": datetime.date.today().isoformat(),
        "version": version,
        "repo_commit": commit,
        "audit_args": list(EXTRA_ARGS),
        "languages": [dict(zip(["language", *COLS, ORIG_RECALL, ORIG], r)) for r in lang_rows],
        "servers": [dict(zip(["server", "language", "commit", *COLS], r)) for r in server_rows],
    }
    out = doc if not recorded else [*recorded, doc]
    start_file(split).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    print(table(["language", *COLS, ORIG_RECALL, ORIG], lang_rows))
    print()
    print(table(["server", "language", "commit", *COLS], server_rows))
    print(f"\nwrote {start_file(split)}")
    return 0


def write_audit_md(results, lang_rows, server_rows, control_rows, bin_, held_out) -> None:
    version = subprocess.run([bin_, "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    out = []
    out.append("# Audit measured on real MCP servers\n")
    out.append(
        "Written by `python3 bench/audit_recall.py --write` "
        f"({datetime.date.today().isoformat()}, {version}, repo at `{commit}`; "
        "uncommitted changes are not shown in the commit).\n"
    )
    out.append(
        "The dev set is `bench/audit-sites/*.yaml`: for each server, the commit a reviewer read "
        "and every control site they listed (file, first line of the statement, control id, "
        "one line of why). A labelled site is **found** when `unguard audit --list` reports the "
        f"same file and control within ±{TOLERANCE} lines. A reported site (file, line, control; "
        "several mutants on one line count once) not on the list is **false**. Sites added to a "
        "list after audit reported them are marked and listed below with their reason. "
        "A tightening operator's site (one accepted class dropped, `twin of` in the catalog) "
        "scores as the control it is the twin of. "
        "Recall is found ÷ labelled; precision is true ÷ reported.\n"
    )
    out.append("## Per language\n")
    out.append(table(["language", *COLS, ORIG_RECALL, ORIG], lang_rows) + "\n")
    out.append(
        f"*{ORIG_RECALL}* and *{ORIG}*: the same reported sites scored against the reviewers' "
        "lists as first committed, without the sites added after audit reported them (listed "
        "below). Added sites are found by construction, so recall on the original lists is the "
        "one to compare across versions.\n"
    )
    out.append("## Per server\n")
    out.append(table(["server", "language", "commit", *COLS], server_rows) + "\n")
    for split in SIDE_SPLITS:
        if SPLITS[split].is_dir():
            out.extend(held_out_md(split, held_out.get(split), EXTRA_ARGS))
    out.append("## Per control\n")
    out.append(table(["control", *COLS], control_rows) + "\n")
    args_used = [(lab["server"], lab.get("audit_args")) for lab, *_ in results if lab.get("audit_args")]
    if args_used:
        out.append("Audit ran with the defaults, except:\n")
        for server, a in args_used:
            out.append(f"- `{server}`: `{' '.join(a)}`")
        out.append("")
    out.append("## False sites\n")
    any_false = False
    for labels, _, _, _, false in results:
        for r in false:
            any_false = True
            text = r["text"][:80].replace("|", "\\|").replace("`", "'")
            out.append(f"- `{labels['server']}` {r['file']}:{r['line']} `{r['control']}`: {text}")
    if not any_false:
        out.append("None.")
    out.append("\n## Sites added to the lists after audit reported them\n")
    added = [
        (labels["server"], s)
        for labels, *_ in results
        for s in labels["sites"]
        if s.get("added_after_audit")
    ]
    if not added:
        out.append("None.")
    for server, s in added:
        out.append(f"- `{server}` {s['file']}:{s['line']} `{s['control']}`: {s['why']}")
    out.append("\n## Missed sites per server\n")
    for labels, _, _, missed, _ in results:
        counts = collections.Counter(s["control"] for s in missed)
        summary = ", ".join(f"`{c}` {n}" for c, n in counts.most_common())
        out.append(f"- `{labels['server']}` ({len(missed)}): {summary or 'none'}")
    (HERE / "AUDIT.md").write_text("\n".join(out) + "\n")
    print(f"\nwrote {HERE / 'AUDIT.md'}")


HELD_OUT_TEXT = {
    "test": (
        "Test split (frozen, never tuned on)",
        "`bench/audit-sites-test/*.yaml`: servers outside the dev set, labelled by reviewers who "
        "never ran unguard, committed before any rule change. Scored the same way; its lists take "
        "no additions, so every figure is on the original lists. It is the issue's measure: "
        "scored again at the issue's end.",
    ),
    "val": (
        "Validation split (held out, scored once per round)",
        "`bench/audit-sites-val/*.yaml`: six more servers (two per language, none in the other "
        "splits, none an SDK, a library or a fork), labelled by reviewers who never ran unguard "
        "and committed before it was first scored. Like the test split it takes no additions and "
        "nobody tunes on its sites; it is scored at the end of a round of rule changes, so a "
        "round is judged on code it was not tuned on without spending the test split. (The "
        "servers now in `dev2` were the validation split until 2026-12-06; these replaced them.)",
    ),
    "dev2": (
        "Second dev split (the former validation split, tuned on since 2026-12-06)",
        "`bench/audit-sites-dev2/*.yaml`: six servers outside the tune and test splits, labelled "
        "with the validation guide (which names schema constraints and `isError` results as "
        "sites) by reviewers who never ran unguard. They were held out and scored three times "
        "(starting points below, now, and once mid-round); since 2026-12-06 rules may be tuned "
        "on them, so their figures no longer measure unseen code. They take no additions.",
    ),
}


def held_out_md(split: str, results, audit_args: list[str]) -> list[str]:
    """A held-out split: its starting points and today's score, per language
    and per server (original lists only: the split takes no additions)."""
    title, text = HELD_OUT_TEXT[split]
    out = [f"## {title}\n", text + "\n"]
    for start in starts(split):
        args = " ".join(["audit", *start.get("audit_args", [])])
        out.append(
            f"Starting point, `{args}` ({start['date']}, {start['version']}, repo at "
            f"`{start['repo_commit']}`, before any rule change):\n"
        )
        out.append(
            table(
                ["language", *COLS],
                [[r["language"], *(r[c] for c in COLS)] for r in start["languages"]],
            )
            + "\n"
        )
    if results is None:
        out.append("Not scored in this run (no checkouts of the split's servers).\n")
        return out
    lang_rows, server_rows, _ = rows(results)
    args = " ".join(["audit", *audit_args])
    out.append(f"Now, `{args}`:\n")
    out.append(table(["language", *COLS], [r[: 1 + len(COLS)] for r in lang_rows]) + "\n")
    out.append(table(["server", "language", "commit", *COLS], server_rows) + "\n")
    return out


if __name__ == "__main__":
    sys.exit(main())
