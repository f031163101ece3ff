#!/usr/bin/env python3
"""The source tree keeps the shape ARCHITECTURE.md draws (issues 34 and 52).

Checks over `src/`, each printed with what broke it:

1. at most MAX_TOP_FILES `.rs` files directly in `src/` (every stage is a folder);
2. no file over MAX_CODE_LINES lines of non-test code (a file's code ends at its
   top-level `#[cfg(test)]`; blank lines and `//` comment lines do not count);
3. no import cycle between source files. An edge runs from a file to every file
   whose module it names (`use crate::…`, `crate::…::item`, `super::…`,
   `self::…`; inside an inline `mod x { … }`, `self` is `x` and `super` the file).
   A file may use its ancestors' items (a child module belongs to its parent's
   folder), so edges from a file to its own ancestors are not counted; every
   other edge must form a directed acyclic graph;
4. folders only point upstream. A folder (a top-level file counts as one) may use
   a folder only where LAYERS allows it, and LAYERS lists the folders in pipeline
   order, each allowed only folders above it. Every folder may use a LEAF; a leaf
   uses nothing of the crate but leaves (its own parent module included), so no
   cycle runs through one;
5. ARCHITECTURE.md (beside `src/`) names every folder (as `src/a/b/` in backticks) and every file
   of `src/`: by its path, or by its name (a `.rs` file's stem) in backticks in a
   table row or paragraph that names its folder; a top-level file by `name.rs`.

Usage: python3 .ci/layout_check.py [SRC_DIR]   (exit 1 when a check fails)
"""

import os
import re
import sys

MAX_TOP_FILES = 10
MAX_CODE_LINES = 1000

IDENT = r"(?:r#)?[A-Za-z_][A-Za-z0-9_]*"

# Leaves: modules that use nothing of the crate but other leaves; every folder may
# use them. A leaf is a whole top-level file or folder, or one module inside a folder.
LEAVES = [
    "error",  # the one error type and the exit codes
    "globs",  # the one glob type
    "progress",  # the progress bar
    "config",  # what unguard.yaml and the flags configure: gate, thresholds, policies, direction
    "spec::diag",  # file:line:col diagnostics with caret and fix
    "mutate",  # match, replace, count, the diff (pure text functions)
    "run::shell",  # shell quoting
    "run::shell_line",  # shell word splitting
    "run::platform",  # every OS call beyond std
    "outcome::reading::model",  # the report model every reader fills
    "outdir::space",  # room for the results, the failed write that stops a run
]

# Folders in pipeline order, each with the folders (not leaves) it may use: only
# folders above it. A folder not in src/ yet (planned) is allowed.
LAYERS = [
    ("spec", []),
    ("catalog", []),
    ("plan", ["spec"]),
    ("workspace", []),
    ("mutate", []),
    ("run", ["spec"]),
    ("outcome", ["spec", "run"]),
    ("coverage", ["spec", "run", "outcome"]),
    ("runner", ["spec", "run", "outcome", "coverage"]),  # test runners: subsets, reports, collectors
    ("results", ["spec", "catalog", "plan", "outcome", "coverage"]),
    ("outdir", ["results"]),
    ("report", ["results", "outdir"]),
    ("gate", ["results"]),
    ("audit", ["spec", "catalog", "workspace", "run", "runner", "outcome", "results", "report", "gate"]),
    (
        "engine",
        ["spec", "plan", "workspace", "run", "runner", "outcome", "coverage", "results", "outdir", "report", "gate"],
    ),
    ("cli", ["spec", "catalog", "run", "results", "report", "audit"]),
    (
        "commands",
        [
            "spec", "catalog", "plan", "workspace", "run", "runner", "outcome", "coverage",
            "results", "outdir", "report", "gate", "audit", "engine", "cli",
        ],
    ),
]


def module_path(src, path):
    """`src/a/b.rs` → ('a', 'b'); `src/a/mod.rs` → ('a',); lib.rs → ()."""
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] == "mod" or rel == ["lib"]:
        rel = rel[:-1]
    return tuple(rel)


def strip_comments_and_strings(text):
    """Blank out comments, string and char literals so paths in them are not read."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and (i == 0 or not re.match(r"[A-Za-z0-9_]", text[i - 1])):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i : j + 1]))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:]):
            m = re.match(r"'(\\.[^']*|[^\\'])'", text[i:])
            out.append(" " * len(m.group(0)))
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def code_part(text):
    """The file up to its top-level `#[cfg(test)]` (the unit tests are not code)."""
    m = re.search(r"^#\[cfg\(test\)\]", text, re.M)
    return text[: m.start()] if m else text


def use_paths(tree, prefix=()):
    """Expand one `use` tree (`a::{b, c::{d as e, *}}`) into its paths."""
    tree = tree.strip()
    if not tree:
        return []
    depth, brace = 0, -1
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0 and brace < 0:
                brace = i
            depth += 1
        elif ch == "}":
            depth -= 1
    if brace < 0:
        words = tree.split(" as ")[0].strip()
        return [prefix + tuple(s.strip() for s in words.split("::") if s.strip())]
    head = tuple(s.strip() for s in tree[:brace].split("::") if s.strip())
    inner = tree[brace + 1 : tree.rfind("}")]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    paths = []
    for part in parts:
        paths.extend(use_paths(part, prefix + head))
    return paths


def inline_modules(code):
    """Every inline `mod x { … }`: (start, end, name), `end` past its closing brace."""
    spans = []
    for m in re.finditer(rf"\bmod\s+({IDENT})\s*\{{", code):
        depth, j = 0, m.end() - 1
        while j < len(code):
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        spans.append((m.start(), j + 1, m.group(1)))
    return spans


def referenced_paths(code, here=()):
    """Every module path the code names, absolute (without `crate`): from `use` and
    from expressions, starting at `crate`, `super`, `self` or a name brought in.

    `self` and `super` count from the module the path is written in: inside an
    inline `mod x { … }` of file `a/b.rs`, `self` is `a::b::x` and `super` is `a::b`.
    A name a `use` brought in (`use crate::outdir;` then `outdir::space::failed`)
    extends to the full path, so a module reached through an imported parent counts too.
    """
    spans = inline_modules(code)

    def base_at(pos):
        return tuple(here) + tuple(name for start, end, name in spans if start < pos < end)

    def absolute(path, pos):
        if path[0] == "crate":
            return tuple(path[1:])
        base, rest = list(base_at(pos)), list(path)
        if rest[0] == "self":
            rest = rest[1:]
        while rest and rest[0] == "super":
            base, rest = base[:-1], rest[1:]
        return tuple(base + rest)

    paths = []
    # A submodule this file declares (`mod lock;`) is a name like an imported one.
    aliases = {m.group(1): base_at(m.start()) + (m.group(1),) for m in re.finditer(rf"\bmod\s+({IDENT})\s*;", code)}
    for m in re.finditer(r"\buse\s+([^;]*);", code):
        for p in use_paths(m.group(1)):
            if p and p[-1] == "self":
                p = p[:-1]
            if not p:
                continue
            if p[0] in ("crate", "super", "self"):
                p = absolute(p, m.start())
            elif p[0] in aliases:
                p = aliases[p[0]] + p[1:]  # `pub use child::item;` names the child
            else:
                continue  # another crate
            paths.append(p)
            if p and p[-1] not in ("*", "crate", "super", "self"):
                aliases[p[-1]] = p
    body = re.sub(r"\buse\s+[^;]*;", lambda u: " " * len(u.group(0)), code)
    for m in re.finditer(rf"(?<![A-Za-z0-9_:])({IDENT})((?:\s*::\s*{IDENT})+)", body):
        segments = tuple(s.strip() for s in m.group(0).split("::"))
        if segments[0] in ("crate", "super", "self"):
            paths.append(absolute(segments, m.start()))
        elif segments[0] in aliases:
            paths.append(aliases[segments[0]] + segments[1:])
    return paths


def resolve(absolute, modules):
    """The file-module an absolute path names: its longest prefix that is a file."""
    for k in range(len(absolute), -1, -1):
        if tuple(absolute[:k]) in modules:
            return tuple(absolute[:k])
    return ()


def find_cycles(edges):
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return comps


def one_cycle(comp, edges):
    """A shortest cycle inside one component, to print."""
    members = set(comp)
    start = comp[0]
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(edges.get(v, ())):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if w in members and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def is_leaf(module, leaves):
    return any(module[: len(leaf)] == leaf for leaf in leaves)


def folder_of(module):
    return module[0] if module else ""


def check_layers(src, files, file_edges, all_edges, leaves=None, layers=None):
    """Rule 4: the failures, each naming the folders, the file and the module it uses."""
    leaves = [tuple(l.split("::")) for l in (LEAVES if leaves is None else leaves)]
    layers = LAYERS if layers is None else layers
    failures = []
    order = {name: i for i, (name, _) in enumerate(layers)}
    allowed = dict(layers)
    for name, uses in layers:
        for u in uses:
            if order.get(u, len(layers)) >= order[name]:
                failures.append(f"LAYERS: `{name}` may use `{u}`, which is not above it (the table points upstream only)")
    modules = {m: p for p, m in files.items()}
    rel = lambda m: os.path.relpath(modules[m], os.path.dirname(src)) if m in modules else "::".join(m)
    # A leaf uses only leaves, its own parent modules included.
    for here, targets in sorted(all_edges.items()):
        if not is_leaf(here, leaves):
            continue
        for t in sorted(targets):
            if t and not is_leaf(t, leaves):
                failures.append(
                    f"leaf {rel(here)} uses {rel(t)}, which is not a leaf (a leaf uses only leaves; see LEAVES)"
                )
    seen_folders = sorted({folder_of(m) for m in files.values() if m})
    for f in seen_folders:
        if f not in allowed and not is_leaf((f,), leaves):
            failures.append(f"folder `{f}` is in neither LAYERS nor LEAVES of .ci/layout_check.py: place it in the pipeline")
    folder_edges = {}
    for here, targets in sorted(file_edges.items()):
        for t in sorted(targets):
            a, b = folder_of(here), folder_of(t)
            if a == b or not a or not b or is_leaf(t, leaves) or is_leaf(here, leaves):
                continue
            folder_edges.setdefault(a, {}).setdefault(b, []).append((here, t))
    graph = {a: set(bs) for a, bs in folder_edges.items()}
    for comp in find_cycles(graph):
        failures.append(
            f"folder cycle ({len(comp)} folders: {', '.join(comp)}): " + " → ".join(one_cycle(comp, graph))
        )
    for a, bs in sorted(folder_edges.items()):
        if a not in allowed:
            continue
        for b, uses in sorted(bs.items()):
            if b not in allowed[a]:
                shown = "; ".join(f"{rel(h)} uses {'::'.join(t)}" for h, t in uses[:3])
                more = f" and {len(uses) - 3} more" if len(uses) > 3 else ""
                where = "below it" if order.get(b, -1) > order[a] else "not in its row of LAYERS"
                failures.append(f"folder edge {a} → {b} ({where}): {shown}{more}")
    return failures


def blocks(doc):
    """A table row each, else a paragraph each."""
    out = []
    for para in re.split(r"\n\s*\n", doc):
        rows = [l for l in para.splitlines() if l.lstrip().startswith("|")]
        out.extend(rows)
        rest = "\n".join(l for l in para.splitlines() if not l.lstrip().startswith("|"))
        if rest.strip():
            out.append(rest)
    return out


def check_documented(src, doc_path):
    """Rule 5: every folder and file of src/ named in ARCHITECTURE.md."""
    if not os.path.exists(doc_path):
        return [f"{doc_path}: missing (every folder and file of src/ is named there)"]
    with open(doc_path, encoding="utf-8") as f:
        doc = f.read()
    parts = [(b, set(re.findall(r"`([^`\n]+)`", b))) for b in blocks(doc)]
    failures = []
    for root, dirs, names in sorted(os.walk(src)):
        dirs.sort()
        rel = os.path.relpath(root, src).replace(os.sep, "/")
        folder = "src/" if rel == "." else f"src/{rel}/"
        if rel != "." and f"`{folder}`" not in doc:
            failures.append(f"{folder}: folder not named in {os.path.basename(doc_path)} (as `{folder}`)")
        for name in sorted(names):
            path = folder + name
            stem = name[:-3] if name.endswith(".rs") else name
            if name == "mod.rs" and rel != "." or path in doc or (rel != "." and path[4:] in doc):
                continue
            if rel == "." and name in {w for _, words in parts for w in words}:
                continue
            if rel != "." and any(folder in b and (stem in words or name in words) for b, words in parts):
                continue
            failures.append(
                f"{path}: file not named in {os.path.basename(doc_path)} "
                f"(as `{path}`, or as `{stem}` in the row or paragraph naming `{folder}`)"
            )
    return failures


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    src = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "src")
    src = os.path.normpath(src)
    files = {}
    for root, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(root, name)
                files[path] = module_path(src, path)
    failures = []

    top = sorted(p for p in files if os.path.dirname(p) == src)
    if len(top) > MAX_TOP_FILES:
        failures.append(
            f"{len(top)} .rs files directly in {src}/ (at most {MAX_TOP_FILES}; every stage is a folder): "
            + ", ".join(os.path.basename(p) for p in top)
        )

    modules = {m: p for p, m in files.items() if not p.endswith("main.rs")}
    edges, all_edges = {}, {}
    for path, here in sorted(files.items()):
        if path.endswith("main.rs"):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        code = code_part(text)
        lines = [l for l in code.splitlines() if l.strip() and not l.strip().startswith("//")]
        if len(lines) > MAX_CODE_LINES:
            failures.append(
                f"{os.path.relpath(path)}: {len(lines)} lines of non-test code (at most {MAX_CODE_LINES}; split it)"
            )
        for p in referenced_paths(strip_comments_and_strings(code), here):
            target = resolve(p, modules)
            if target == here:
                continue
            all_edges.setdefault(here, set()).add(target)
            if here[: len(target)] == target:
                continue  # an ancestor
            edges.setdefault(here, set()).add(target)

    for comp in find_cycles(edges):
        cycle = one_cycle(comp, edges)
        failures.append(
            "import cycle: "
            + " → ".join(os.path.relpath(modules[m]) for m in cycle)
            + (f" (component of {len(comp)} files)" if len(comp) > len(cycle) - 1 else "")
        )

    lib_files = {p: m for p, m in files.items() if not p.endswith("main.rs")}
    failures.extend(check_layers(src, lib_files, edges, all_edges))
    failures.extend(check_documented(src, os.path.join(os.path.dirname(os.path.abspath(src)), "ARCHITECTURE.md")))

    if failures:
        print("layout check failed (see ARCHITECTURE.md, \"Checking the layout\"):", file=sys.stderr)
        for f in failures:
            print(f"  {f}", file=sys.stderr)
        return 1
    present = [name for name, _ in LAYERS if os.path.isdir(os.path.join(src, name)) or os.path.isfile(os.path.join(src, name + ".rs"))]
    print(
        f"layout ok: {len(top)} files in src/, none over {MAX_CODE_LINES} code lines, "
        f"{sum(len(v) for v in edges.values())} edges between {len(files) - 1} files, no cycle; "
        f"{len(present)} folders point upstream only, {len(LEAVES)} leaves; every file named in ARCHITECTURE.md"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
