#!/usr/bin/env python3
"""check-rollout-seam.py - the lifecycle holds no rollout rule of its own
(issue 14 item 2): in src/lifecycle/*.c, outside comments and string
literals, every identifier naming the rollout (rollout, verifier, token,
phase, pr_procs, pr_hidden, pr_policy, pr_network) must be a function
or struct that src/rollout/lifecycle.h declares, or pr_rollout_free (the
handle's free); a struct member (c->rollout, g->rollout_policy) may only
appear on a line that calls one of those, as what is handed to it.  The only rollout header
included is lifecycle.h.  Exit 1 and one line per hit
(FILE:LINE: identifier) otherwise.  --root DIR checks a copy
(tests/unit/test_rollout_seam.sh)."""
import os
import re
import sys

WORDS = re.compile(r"rollout|verifier|token|phase|pr_procs|pr_hidden|pr_policy|pr_network", re.I)
INCLUDE = re.compile(r'^\s*#\s*include\s+"\.\./rollout/([^"]+)"')
INCLUDES_OK = {"lifecycle.h"}
# Files that may still carry rollout branches (none: keep it so).
PENDING = set()


def header_names(root):
    """The functions and structs src/rollout/lifecycle.h declares."""
    with open(os.path.join(root, "src", "rollout", "lifecycle.h")) as f:
        text = strip(f.read())
    names = set(re.findall(r"\b(pr_rollout_\w+)\s*\(", text))
    names |= set(re.findall(r"\bstruct\s+(pr_rollout_\w+)\s*\{", text))
    return names | {"pr_rollout_free"}


def strip(text):
    """Blanks comments and string/char literals, keeping line breaks."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def check_file(path, name, allowed):
    hits = []
    with open(path) as f:
        raw = f.read()
    for no, line in enumerate(raw.split("\n"), 1):
        m = INCLUDE.match(line)
        if m and m.group(1) not in INCLUDES_OK:
            hits.append(f"{name}:{no}: includes ../rollout/{m.group(1)}")
    for no, line in enumerate(strip(raw).split("\n"), 1):
        if line.lstrip().startswith("#"):
            continue
        calls = any(i in allowed for i in re.findall(r"[A-Za-z_]\w*", line))
        for m in re.finditer(r"(->|\.)?\s*([A-Za-z_]\w*)", line):
            ident = m.group(2)
            if not WORDS.search(ident) or ident in allowed:
                continue
            if m.group(1) and calls:
                continue  # a handle or option handed to the header
            hits.append(f"{name}:{no}: {ident}")
    return hits


def main(argv):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    if len(argv) == 3 and argv[1] == "--root":
        root = argv[2]
    d = os.path.join(root, "src", "lifecycle")
    allowed = header_names(root)
    bad, pending = [], []
    for f in sorted(os.listdir(d)):
        if not f.endswith(".c"):
            continue
        hits = check_file(os.path.join(d, f), "src/lifecycle/" + f, allowed)
        (pending if f in PENDING else bad).extend(hits)
    for h in bad:
        print(h)
    if pending:
        print(f"check-rollout-seam: {len(pending)} pending in {', '.join(sorted(PENDING))}", file=sys.stderr)
    print(f"check-rollout-seam: {len(bad)} violations", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
