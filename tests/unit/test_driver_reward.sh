#!/bin/sh
# test_driver_reward.sh - contrib/rollout/proctor-rollout reads the reward
# the verifier left without following a symbolic link: code the verifier
# ran could leave /logs/verifier/reward.txt as a link to a file the agent
# writes after the session (its overlay's upper dir is named in its
# mountinfo) or to any host file (a fresh attacker's trial of 2026-12-04:
# the driver graded 1.0 from such a link).  A regular file and
# reward.json are read as before.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
driver=$here/../../contrib/rollout/proctor-rollout
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo 1 >"$dir/agent-file"
mkdir "$dir/v"
python3 - "$driver" "$dir" <<'PY'
import importlib.machinery, importlib.util, os, sys, types
driver, d = sys.argv[1], sys.argv[2]
ld = importlib.machinery.SourceFileLoader("proctor_rollout", driver)
m = importlib.util.module_from_spec(importlib.util.spec_from_loader("proctor_rollout", ld))
ld.exec_module(m)
reward = m.Rollout.reward
o = types.SimpleNamespace(verdict=os.path.join(d, "v"))
txt, js = os.path.join(d, "v", "reward.txt"), os.path.join(d, "v", "reward.json")
def check(what, want):
    got = reward(o)
    if got != want:
        sys.exit(f"FAIL {what}: {got!r}, want {want!r}")
    print(f"ok {what}: {got!r}")
check("no reward", (None, None, None))
open(txt, "w").write("0.5\n")
check("regular reward.txt", (0.5, "reward.txt", None))
os.remove(txt)
os.symlink(os.path.join(d, "agent-file"), txt)
check("reward.txt a link to the agent's file", (0.0, "unreadable", None))
os.remove(txt)
open(js, "w").write('{"reward": 0.7}')
check("regular reward.json", (0.7, "reward.json", {"reward": 0.7}))
os.remove(js)
os.symlink(os.path.join(d, "agent-file"), js)
check("reward.json a link", (0.0, "unreadable", None))
PY
