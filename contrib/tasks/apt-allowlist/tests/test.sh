#!/bin/bash
# No network here: the tool must be the one the agent installed.
reward=0
if command -v sqlite3 >/dev/null && dpkg-query -W -f='${Status}\n' sqlite3 | grep -q 'install ok installed'; then
	rows=$(sqlite3 /srv/app.db 'SELECT count(*) || ":" || max(body) FROM notes' 2>&1)
	echo "notes: $rows"
	[ "$rows" = "1:installed through the allowlist" ] && reward=1
else
	echo "sqlite3 is not installed"
fi
echo "$reward" > /logs/verifier/reward.txt
