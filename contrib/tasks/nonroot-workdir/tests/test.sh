#!/bin/bash
# Runs as root: the report must have been written by uid 1001 in a /work
# that is still 0700 and owned by 1001.
reward=0
f=/work/build/report.txt
want=$(printf 'builder\n%s\n' "$(sha256sum /etc/task-input | cut -d' ' -f1)")
echo "verifier is uid $(id -u); /work is $(stat -c '%a %u' /work)"
if [ -f "$f" ]; then
	echo "report owner $(stat -c %u "$f"): $(tr '\n' ' ' < "$f")"
	if [ "$(cat "$f")" = "$want" ] && [ "$(stat -c %u "$f")" = 1001 ] &&
		[ "$(stat -c '%a %u' /work)" = "700 1001" ]; then
		reward=1
	fi
else
	echo "no report"
fi
echo "$reward" > /logs/verifier/reward.txt
