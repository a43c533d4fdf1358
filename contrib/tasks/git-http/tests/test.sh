#!/bin/bash
# Clone over HTTP from the server the agent left running.
reward=0
dir=$(mktemp -d)
if git clone -q http://127.0.0.1:8000/project.git "$dir/clone" 2>&1; then
	msg=$(git -C "$dir/clone" log -1 --format=%s main 2>/dev/null)
	readme=$(cat "$dir/clone/README" 2>/dev/null)
	echo "cloned: commit '$msg', README '$readme'"
	[ "$msg" = "initial import" ] && [ "$readme" = "served by the agent" ] && reward=1
else
	echo "clone failed"
fi
rm -rf "$dir"
echo "$reward" > /logs/verifier/reward.txt
