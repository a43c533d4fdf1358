#!/bin/bash
# /tests belongs to the verifier: during the agent phase it does not exist.
if [ -e /tests ] || ls /tests >/dev/null 2>&1; then
	echo "the agent sees /tests: $(ls -A /tests 2>&1 | head -n 5)" | tee /srv/tests-view.txt
else
	echo "absent" > /srv/tests-view.txt
fi
wc -w < /srv/input.txt | tr -d ' ' > /srv/count.txt
echo "count: $(cat /srv/count.txt), /tests: $(cat /srv/tests-view.txt)"
