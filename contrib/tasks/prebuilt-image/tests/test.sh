#!/bin/bash
reward=0
echo "stamp: $(cat /opt/prebuilt/stamp 2>/dev/null || echo missing)"
echo "out: $(cat /srv/out.txt 2>/dev/null || echo missing)"
if [ "$(cat /opt/prebuilt/stamp 2>/dev/null)" = localhost/proctor-task-prebuilt ] &&
	[ "$(cat /srv/out.txt 2>/dev/null)" = "HELLO FROM A PREBUILT IMAGE" ]; then
	reward=1
fi
echo "$reward" > /logs/verifier/reward.txt
