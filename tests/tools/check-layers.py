#!/usr/bin/python3
"""check-layers.py - fails when a C file includes a header of a layer it
may not include, by the table in src/LAYERS (which says the rule).

Usage: tests/tools/check-layers.py [--root DIR] [--layers FILE]
  --root    the source tree (default: this script's ../..)
  --layers  the table (default: ROOT/src/LAYERS)
Prints one line per violation to stdout,
  FILE:LINE includes HEADER: LAYER_A may not include LAYER_B
(and "FILE is in no layer of src/LAYERS" for a source file no row holds),
then a count on stderr.  Exit status: 0 when there is none, 1 when there
are violations, 2 when the table is malformed (a row naming a layer that
is not listed above it, a path in two rows, ...).
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_DIRS = ("src", "libcrun-compat")


class TableError(Exception):
    pass


def read_table(path):
    """Returns (layers in order, {path: layer}, {layer: set of allowed})."""
    order, paths, allowed = [], {}, {}
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            cols = [c.strip() for c in line.split("|")]
            if len(cols) != 3 or not cols[0] or not cols[1]:
                raise TableError("%s:%d: expected `layer | paths | may include`" % (path, n))
            name, where, may = cols[0], cols[1].split(), cols[2].split()
            if name in allowed:
                raise TableError("%s:%d: layer %s listed twice" % (path, n, name))
            may = [] if may == ["-"] else may
            for m in may:
                if m not in allowed:
                    raise TableError("%s:%d: %s may include %s, which is not a layer listed above it"
                                     % (path, n, name, m))
            for p in where:
                p = p.rstrip("/")
                if p in paths:
                    raise TableError("%s:%d: %s is in %s already" % (path, n, p, paths[p]))
                paths[p] = name
            order.append(name)
            allowed[name] = set(may)
    return order, paths, allowed


def layer_of(rel, paths):
    """The layer of the longest table path that is rel or holds it."""
    best = None
    for p, name in paths.items():
        if rel == p or rel.startswith(p + "/"):
            if best is None or len(p) > len(best[0]):
                best = (p, name)
    return best[1] if best else None


def sources(root):
    for top in SOURCE_DIRS:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if not x.startswith("."))
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, f), root)


def check(root, table):
    order, paths, allowed = read_table(table)
    table_rel = os.path.relpath(table, root)
    problems = []
    for rel in sources(root):
        me = layer_of(rel, paths)
        if me is None:
            problems.append("%s is in no layer of %s" % (rel, table_rel))
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = os.path.normpath(os.path.join(os.path.dirname(rel), m.group(1)))
                if target.startswith("..") or not os.path.isfile(os.path.join(root, target)):
                    continue  # not ours: configure's config.h, a library header
                other = layer_of(target, paths)
                if other is None or other == me or other in allowed[me]:
                    continue
                problems.append("%s:%d includes %s: %s may not include %s" % (rel, n, target, me, other))
    return problems


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Checks the include rule of src/LAYERS.")
    ap.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    ap.add_argument("--layers")
    a = ap.parse_args()
    table = a.layers or os.path.join(a.root, "src", "LAYERS")
    try:
        problems = check(a.root, table)
    except (TableError, OSError) as e:
        print("check-layers: %s" % e, file=sys.stderr)
        return 2
    for p in problems:
        print(p)
    print("check-layers: %d violation%s" % (len(problems), "" if len(problems) == 1 else "s"), file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
