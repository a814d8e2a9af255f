#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The layering test: every arrow in user/ points to its own layer or down.

An arrow is an #include of a project header (read from the sources) or a
call of a function another file defines (read from the objects with nm).
The layers of user/lib, bottom to top, and what each may use:

  base      nothing of libxrl (log, strict text, host:port, JSON, sha256)
  model     base (pure values: words, units, addresses, one rule)
  text      model, base (grammar engine, command table, config reader)
  maps      model, base (pins, maps, links, rules, stats, events, attach)
  fleet     maps, model, base
  deciders  maps, model, base (the CrowdSec follower, its HTTP client)
  features  fleet, maps, text, model, base (upgrade, replay, restore)
  libxrl.h  the umbrella the programs include; no library file includes it

include/ (the data path's shared headers) is below every layer. The programs
(user/rlctl, user/rld, user/bashcomp) sit on top and may use any layer, but
not each other. Besides the arrows: no circle of includes between headers,
no circle of calls between files (a circle inside one layer is a room that
should be one file or a missing layer below), no two library sources with
the same name (the archive keeps one member per name), and no source file
under user/, bpf/ or include/ over MAX_LINES lines (a file that grows past it holds
more than one job: split it by job).

Usage: layers.py [--tree DIR] [--objects DIR]  (DIR: the build, .output)
Without --objects (or when it holds no objects) only the includes are read.
Prints "ok   NAME" / "FAIL NAME" per check and "N passed, N failed".
"""
import argparse
import os
import re
import subprocess
import sys

LAYERS = ["base", "model", "text", "maps", "fleet", "deciders", "features"]
ALLOWED = {
    "common": {"common"},
    "base": {"base", "common"},
    "model": {"model", "base", "common"},
    "text": {"text", "model", "base", "common"},
    "maps": {"maps", "model", "base", "common", "skel"},
    "fleet": {"fleet", "maps", "model", "base", "common", "skel"},
    "deciders": {"deciders", "maps", "model", "base", "common", "skel"},
    "features": {"features", "fleet", "maps", "text", "model", "base", "common", "skel"},
    "api": set(LAYERS) | {"common"},
}
PROGRAMS = {"rlctl", "rld", "bashcomp"}
MAX_LINES = 700
for p in PROGRAMS:
    ALLOWED[p] = set(LAYERS) | {"api", "common", "skel", p}

# "header" and <header>: an angle-bracket include of a project header
# (found through -Iuser/lib or -Iinclude) is an arrow too
INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<([^>]+)>)', re.M)


def layer_of(rel):
    """The layer of a path relative to the tree, or None outside user/."""
    parts = rel.split("/")
    if parts[0] == "include":
        return "common"
    if parts[0] != "user" or len(parts) < 3:
        return None
    if parts[1] == "lib":
        if len(parts) == 3:
            return "api" if parts[2] == "libxrl.h" else "lib-root"
        return parts[2] if parts[2] in LAYERS else "lib-" + parts[2]
    return parts[1] if parts[1] in PROGRAMS else None


def sources(tree):
    out = []
    for top in ("user", "include"):
        for d, _, files in os.walk(os.path.join(tree, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(d, f), tree))
    return sorted(out)


def resolve(tree, rel, name):
    """Where #include "name" in rel leads: the file's own folder, then the
    -I folders (include/, user/lib/); generated headers are named apart."""
    for d in (os.path.dirname(rel), "include", "user/lib"):
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.exists(os.path.join(tree, cand)):
            return cand
    if name in ("xdp_rl.skel.h", "xrl_emit.skel.h"):
        return "<skel>"
    if name == "xrl_version.h":
        return "<version>"
    return None


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def arrow_ok(src_layer, dst_layer):
    if dst_layer in ("<skel>",):
        dst_layer = "skel"
    if dst_layer in ("<version>",):
        return src_layer == "base"
    return dst_layer in ALLOWED.get(src_layer, set())


class Result:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, problems):
        if problems:
            self.failed += 1
            print("FAIL " + name)
            for p in problems[:60]:
                print("    " + p)
            if len(problems) > 60:
                print("    ... and %d more" % (len(problems) - 60))
        else:
            self.passed += 1
            print("ok   " + name)


def read_includes(tree, files):
    inc = {}
    unresolved = []
    for rel in files:
        with open(os.path.join(tree, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        inc[rel] = []
        for quoted, angled in INCLUDE.findall(text):
            if angled:
                # a system header unless the project's -I folders hold it
                dst = next((os.path.normpath(os.path.join(d, angled)) for d in ("include", "user/lib")
                            if os.path.exists(os.path.join(tree, d, angled))), None)
                if dst:
                    inc[rel].append(dst)
                continue
            dst = resolve(tree, rel, quoted)
            if dst is None:
                unresolved.append('%s: #include "%s" names no file of the tree' % (rel, quoted))
                continue
            inc[rel].append(dst)
    return inc, unresolved


def read_calls(objdir, tree):
    """file -> set of files whose functions or data it uses, from nm."""
    objs = []
    for part in ("lib", "rlctl", "rld"):
        for d, _, files in os.walk(os.path.join(objdir, part)):
            for f in files:
                if f.endswith(".o"):
                    objs.append(os.path.join(d, f))
    if not objs:
        return None
    defined, undefined = {}, {}
    for o in objs:
        rel = os.path.relpath(o, objdir)[:-2] + ".c"
        src = os.path.join("user", rel)
        if not os.path.exists(os.path.join(tree, src)):
            continue  # an object of a source that is gone
        res = subprocess.run(["nm", o], capture_output=True, text=True, check=True)
        undefined[src] = set()
        for line in res.stdout.splitlines():
            f = line.split()
            if len(f) == 2 and f[0] == "U":
                undefined[src].add(f[1])
            elif len(f) == 3 and f[1] in "TDBRCVW":
                defined.setdefault(f[2], src)
    calls = {}
    for src, syms in undefined.items():
        calls[src] = {defined[s] for s in syms if s in defined and defined[s] != src}
    return calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", default=".")
    ap.add_argument("--objects", default=None,
                    help="the build's objects (.output): lib/, rlctl/, rld/ below it")
    a = ap.parse_args()
    tree = a.tree
    r = Result()

    files = sources(tree)
    lib = [f for f in files if f.startswith("user/lib/")]
    inc, unresolved = read_includes(tree, files)
    r.check("every project #include names a file of the tree", unresolved)

    r.check("every library file lives in a layer folder",
            ["%s: not in %s" % (f, ", ".join("user/lib/%s/" % l for l in LAYERS))
             for f in lib if layer_of(f) not in LAYERS and f != "user/lib/libxrl.h"])

    names = {}
    for f in lib:
        if f.endswith(".c"):
            names.setdefault(os.path.basename(f), []).append(f)
    r.check("no two library sources share a name",
            ["%s" % ", ".join(v) for v in names.values() if len(v) > 1])

    long_files = []
    for top in ("user", "bpf", "include"):
        for d, _, fs in os.walk(os.path.join(tree, top)):
            for f in sorted(fs):
                if f.endswith((".c", ".h")):
                    path = os.path.join(d, f)
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        n = sum(1 for _ in fh)
                    if n > MAX_LINES:
                        long_files.append("%s: %d lines" % (os.path.relpath(path, tree), n))
    r.check("no file under user/, bpf/ or include/ over %d lines" % MAX_LINES, sorted(long_files))

    up = []
    for src in files:
        sl = layer_of(src)
        if sl is None:
            continue
        for dst in inc[src]:
            dl = layer_of(dst) if not dst.startswith("<") else dst
            if dl == sl and not dst.startswith("<"):
                continue
            if not arrow_ok(sl, dl):
                up.append('%s (%s) includes %s (%s)' % (src, sl, dst, dl))
    r.check("every #include points to its own layer or down", up)

    hdr_graph = {f: {d for d in inc[f] if not d.startswith("<")} for f in files}
    r.check("no circle of includes", [" -> ".join(c) for c in cycles(hdr_graph)])

    calls = read_calls(a.objects, tree) if a.objects and os.path.isdir(a.objects) else None
    if calls is None:
        print("skip calls: no objects given (--objects .output)")
    else:
        bad = []
        for src, dsts in sorted(calls.items()):
            sl = layer_of(src)
            for dst in sorted(dsts):
                dl = layer_of(dst)
                if dl != sl and not arrow_ok(sl, dl):
                    bad.append("%s (%s) calls into %s (%s)" % (src, sl, dst, dl))
        r.check("every call points to its own layer or down", bad)
        r.check("no circle of calls between files", [" <-> ".join(c) for c in cycles(calls)])

    print("%d passed, %d failed" % (r.passed, r.failed))
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
