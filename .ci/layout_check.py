#!/usr/bin/env python3
"""The source tree keeps the shape ARCHITECTURE.md draws (issue 34).

Three checks over `src/`, each printed with what broke it:

1. at most MAX_TOP_FILES `.rs` files directly in `src/` (every stage is a folder);
2. no file over MAX_CODE_LINES lines of non-test code (a file's code ends at its
   top-level `#[cfg(test)]`; blank lines and `//` comment lines do not count);
3. no import cycle between source files. An edge runs from a file to every file
   whose module it names (`use crate::…`, `crate::…::item`, `super::…`,
   `self::…`). A file may use its ancestors' items (a child module belongs to its
   parent's folder), so edges from a file to its own ancestors are not counted;
   every other edge must form a directed acyclic graph.

Usage: python3 .ci/layout_check.py [SRC_DIR]   (exit 1 when a check fails)
"""

import os
import re
import sys

MAX_TOP_FILES = 10
MAX_CODE_LINES = 1000

IDENT = r"(?:r#)?[A-Za-z_][A-Za-z0-9_]*"


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


def referenced_paths(code):
    """Every path that starts at `crate`, `super` or `self`, from `use` and from expressions.

    A name a `use` brought in (`use crate::outdir;` then `outdir::space::failed`) extends
    to the full path, so a module reached through an imported parent counts too.
    """
    paths = []
    # A submodule this file declares (`mod lock;`) is a name like an imported one.
    aliases = {m.group(1): ("self", m.group(1)) for m in re.finditer(rf"\bmod\s+({IDENT})\s*;", code)}
    for m in re.finditer(r"\buse\s+([^;]*);", code):
        for p in use_paths(m.group(1)):
            if p and p[-1] == "self":
                p = p[:-1]
            if p and p[0] in aliases and aliases[p[0]][0] == "self":
                p = aliases[p[0]] + p[1:]  # `pub use child::item;` names the child
            paths.append(p)
            if p and p[-1] not in ("*", "crate", "super", "self"):
                aliases[p[-1]] = p
    body = re.sub(r"\buse\s+[^;]*;", " ", code)
    for m in re.finditer(rf"(?<![A-Za-z0-9_:])({IDENT})((?:\s*::\s*{IDENT})+)", body):
        segments = tuple(s.strip() for s in m.group(0).split("::"))
        if segments[0] in ("crate", "super", "self"):
            paths.append(segments)
        elif segments[0] in aliases:
            paths.append(aliases[segments[0]] + segments[1:])
    return [p for p in paths if p and p[0] in ("crate", "super", "self")]


def resolve(path, here, modules):
    """The file-module a path names: the longest prefix of its absolute form that is a file."""
    if path[0] == "crate":
        absolute = list(path[1:])
    else:
        base = list(here)  # `self` is the module itself, `super` its parent
        rest = list(path)
        if rest[0] == "self":
            rest = rest[1:]
        while rest and rest[0] == "super":
            base = base[:-1]
            rest = rest[1:]
        absolute = base + rest
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


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "src")
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
    edges = {}
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
        for p in referenced_paths(strip_comments_and_strings(code)):
            target = resolve(p, here, modules)
            if target == here or here[: len(target)] == target:
                continue  # itself or an ancestor
            edges.setdefault(here, set()).add(target)

    for comp in find_cycles(edges):
        cycle = one_cycle(comp, edges)
        failures.append(
            "import cycle: "
            + " → ".join(os.path.relpath(modules[m]) for m in cycle)
            + (f" (component of {len(comp)} files)" if len(comp) > len(cycle) - 1 else "")
        )

    if failures:
        print("layout check failed (see ARCHITECTURE.md, \"Checking the layout\"):", file=sys.stderr)
        for f in failures:
            print(f"  {f}", file=sys.stderr)
        return 1
    print(
        f"layout ok: {len(top)} files in src/, none over {MAX_CODE_LINES} code lines, "
        f"{sum(len(v) for v in edges.values())} edges between {len(files) - 1} files, no cycle"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
