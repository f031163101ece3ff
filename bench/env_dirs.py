#!/usr/bin/env python3
"""Time how env dirs are laid out in a copy on a workspace with a large store.

Each git-ignored env dir (`node_modules`, `.venv`, ...) becomes a directory of
links in every copy; only its top level and that of its `@scope` dirs are read
and linked, never pnpm's `.pnpm` store (docs/how-a-run-works.md). This script
builds a pnpm-shaped git workspace in a temp dir -- a root `node_modules` whose
`.pnpm` store holds STORE packages of FILES files each, TOP top-level links
into it (a tenth of them scoped), and WS workspace packages each with its own
`node_modules` of links to the store and to the other packages -- then runs
`cargo bench --bench workspace_copy` on it (manifest, pristine copy, worker
copies, reset, drop) and prints the medians. `--root DIR` times an existing
workspace instead (a real `pnpm install`).

    python3 bench/env_dirs.py [--store 5000] [--files 8] [--top 800] [--ws 20]
                              [--reps 5] [--workers 2] [--root DIR] [--debug]

The figure is in docs/performance.md.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build(root, store, files, top, ws):
    """A git workspace with a large pnpm store; returns the file count."""
    run = lambda *a: subprocess.run(a, cwd=root, check=True, stdout=subprocess.DEVNULL)
    run("git", "init", "-q", "-b", "main")
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write("node_modules/\n")
    with open(os.path.join(root, "pnpm-workspace.yaml"), "w") as f:
        f.write("packages:\n  - 'packages/*'\n")
    nm = os.path.join(root, "node_modules")
    made = 0
    names = []
    for i in range(store):
        name = f"@s{i % 10}/dep{i}" if i % 10 == 0 else f"dep{i}"
        names.append(name)
        d = os.path.join(nm, ".pnpm", f"{name.replace('/', '+')}@1.0.0", "node_modules", name)
        os.makedirs(d, exist_ok=True)
        for j in range(files):
            with open(os.path.join(d, f"f{j}.js"), "w") as f:
                f.write(f"module.exports = {i * files + j};\n" * 20)
            made += 1
    for name in names[:top]:
        link = os.path.join(nm, name)
        os.makedirs(os.path.dirname(link), exist_ok=True)
        target = f".pnpm/{name.replace('/', '+')}@1.0.0/node_modules/{name}"
        if "/" in name:
            target = "../" + target
        os.symlink(target, link)
    os.makedirs(os.path.join(nm, ".bin"), exist_ok=True)
    for k in range(ws):
        pkg = os.path.join(root, "packages", f"p{k}")
        os.makedirs(os.path.join(pkg, "src"), exist_ok=True)
        with open(os.path.join(pkg, "package.json"), "w") as f:
            f.write(json.dumps({"name": f"@ws/p{k}", "version": "1.0.0"}))
        with open(os.path.join(pkg, "src", "index.js"), "w") as f:
            f.write("module.exports = 1;\n")
        pnm = os.path.join(pkg, "node_modules")
        os.makedirs(os.path.join(pnm, "@ws"), exist_ok=True)
        for other in range(ws):
            if other != k:
                os.symlink(f"../../../p{other}", os.path.join(pnm, "@ws", f"p{other}"))
        for name in names[k * 30:(k + 1) * 30]:
            link = os.path.join(pnm, name)
            os.makedirs(os.path.dirname(link), exist_ok=True)
            up = "../" * (name.count("/") + 3)
            os.symlink(f"{up}node_modules/.pnpm/{name.replace('/', '+')}@1.0.0/node_modules/{name}", link)
    run("git", "add", "-A")
    run("git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "ws")
    return made


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=int, default=5000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--top", type=int, default=800)
    ap.add_argument("--ws", type=int, default=20)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--root")
    ap.add_argument("--debug", action="store_true",
                    help="time the unoptimised build (`cargo test --bench`): no release build needed")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ug-envdirs-") as tmp:
        root = a.root
        if root is None:
            root = tmp
            n = build(root, a.store, a.files, a.top, a.ws)
            print(f"store: {a.store} packages, {n} files; {a.top} top-level links; "
                  f"{a.ws} workspace packages", file=sys.stderr)
        out = subprocess.run(
            ["cargo", "test" if a.debug else "bench", "-q", "--bench", "workspace_copy", "--", root,
             "--reps", str(a.reps), "--workers", str(a.workers), "--resets", "20"],
            cwd=REPO, check=True, stdout=subprocess.PIPE, text=True).stdout
        rows = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
        med = lambda k: statistics.median(r[k] for r in rows)
        print(json.dumps({
            "reps": len(rows), "workers": a.workers,
            "env_links": rows[0]["env_links"], "entries": rows[0]["entries"],
            "manifest_ms": round(med("manifest_s") * 1000, 1),
            "pristine_ms": round(med("pristine_s") * 1000, 1),
            "create_ms": round(med("create_s") * 1000, 1),
            "reset_ms": round(med("reset_ms"), 2),
            "drop_ms": round(med("drop_s") * 1000, 1),
        }))


if __name__ == "__main__":
    main()
