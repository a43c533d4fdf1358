#!/bin/sh
# test_driver_verdict.sh - contrib/rollout/proctor-rollout's keep_verdict
# copies the verdict directory (/logs/verifier) into the job directory
# without following a link or opening a fifo at any level: code the
# verifier ran may still hold the directory and swap a file it checked for
# a link to a host file (check-then-use) or a fifo (the copy would block).
# The swap is played by a hook on the check the old driver made
# (os.path.islink): the old driver then copied the host file's content.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
driver=$here/../../contrib/rollout/proctor-rollout
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo HOST-SECRET >"$dir/host-secret"
mkdir -p "$dir/v/sub" "$dir/job"
echo 0.9 >"$dir/v/reward.txt"
echo log >"$dir/v/sub/log.txt"
ln -s "$dir/host-secret" "$dir/v/sub/link"
ln -s "$dir/host-secret" "$dir/v/link"
ln -s "$dir" "$dir/v/dirlink"
mkfifo "$dir/v/fifo" "$dir/v/sub/fifo"
timeout 20 python3 - "$driver" "$dir" <<'PY'
import importlib.machinery, importlib.util, os, sys, types
driver, d = sys.argv[1], sys.argv[2]
ld = importlib.machinery.SourceFileLoader("proctor_rollout", driver)
m = importlib.util.module_from_spec(importlib.util.spec_from_loader("proctor_rollout", ld))
ld.exec_module(m)
real_islink = os.path.islink
def swapping_islink(p):
    # The verifier's code swaps reward.txt for a link right after a check.
    if p.endswith("/v/reward.txt") and not real_islink(p):
        os.rename(p, p + ".orig")
        os.symlink(os.path.join(d, "host-secret"), p)
        return False
    return real_islink(p)
os.path.islink = swapping_islink
o = types.SimpleNamespace(verdict=os.path.join(d, "v"), job=os.path.join(d, "job"))
names = m.Rollout.keep_verdict(o)
os.path.islink = real_islink
print("copied:", names)
bad = []
for root, dirs, files in os.walk(os.path.join(d, "job")):
    for f in files + dirs:
        p = os.path.join(root, f)
        if os.path.islink(p):
            bad.append(f"a link in the job: {p}")
        elif os.path.isfile(p) and "HOST-SECRET" in open(p).read():
            bad.append(f"the host file's content in {p}")
        elif not os.path.isfile(p) and not os.path.isdir(p):
            bad.append(f"a special file in the job: {p}")
if not os.path.isfile(os.path.join(d, "job", "verifier", "sub", "log.txt")):
    bad.append("sub/log.txt was not copied")
if bad:
    sys.exit("FAIL " + "; ".join(bad))
print("ok: regular files and directories copied, no link followed, no fifo opened")
PY
