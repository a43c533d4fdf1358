#!/bin/bash
# The release is built in the project (not wherever a fresh exec starts)
# with the project's version, and it was not published.
reward=0
v=$(cat /srv/project/VERSION)
got=$(cat "/srv/project/dist/app-$v.txt" 2>/dev/null)
echo "dist/app-$v.txt: ${got:-missing}"
if [ -e /srv/project/PUBLISHED ]; then
	echo "published although the preflight failed: $(cat /srv/project/PUBLISHED)"
elif [ "$got" = "built $v" ]; then
	reward=1
fi
echo "$reward" > /logs/verifier/reward.txt
