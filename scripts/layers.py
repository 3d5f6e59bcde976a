#!/usr/bin/env python3
"""Prints every circle of `crate::` references among the files of src/ that spans two or
more top-level modules (circles inside one module, e.g. within cli/ or edit/, are not
listed). Run from the project root: `python3 scripts/layers.py`. Exit 1 if any.
The layers it keeps are drawn in docs/architecture.md."""
import os, re, sys

files = {}
for base, _, fs in os.walk("src"):
    for f in fs:
        if f.endswith(".rs"):
            p = os.path.join(base, f)
            files[p] = open(p, encoding="utf-8", errors="replace").read()

def resolve(parts):
    for k in range(len(parts), 0, -1):
        stem = os.path.join("src", *parts[:k])
        for cand in (stem + ".rs", os.path.join(stem, "mod.rs")):
            if cand in files:
                return cand
    return None

edges = {p: {} for p in files}
for p, text in files.items():
    text = re.sub(r"//[^\n]*", "", text)
    refs = [m.group(1) for m in re.finditer(r"crate::((?:[a-z_][a-z0-9_]*::)*[A-Za-z_][A-Za-z0-9_]*)", text)]
    for m in re.finditer(r"use\s+crate::\{([^;]*)\};", text, re.S):
        refs += re.findall(r"([a-z_][a-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)", m.group(1))
    for ref in refs:
        parts = ref.split("::")
        t = resolve(parts)
        if t and t != p:
            edges[p].setdefault(t, set()).add(parts[-1])

index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)
def strong(v):
    index[v] = low[v] = counter[0]; counter[0] += 1; stack.append(v); on.add(v)
    for w in edges[v]:
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        sccs.append(comp)
for v in files:
    if v not in index:
        strong(v)

def top(p):
    part = p.split(os.sep)[1]
    return part[:-3] if part.endswith(".rs") else part

found = [sorted(c) for c in sccs if len(c) > 1 and len({top(p) for p in c}) > 1]
for c in found:
    print("circle across modules: " + ", ".join(x[4:] for x in c))
    for a in c:
        for b, names in sorted(edges[a].items()):
            if b in c and top(a) != top(b):
                print(f"  {a[4:]} -> {b[4:]}: {', '.join(sorted(names)[:6])}")
sys.exit(1 if found else 0)
