#!/bin/bash
# The agent may not fetch jq itself: the mirror is not on its allowlist.
if apt-get -o Acquire::Retries=0 update -q 2>&1 | grep -q '403'; then echo "mirror refused to the agent, as expected"; fi

items=$(find /etc/apt -maxdepth 1 -type f -printf '%f\n' | sort | sed 's/.*/"&"/' | paste -sd, -); printf '{"host": "rollout", "items": [%s]}\n' "$items" > /srv/inventory.json

cat /srv/inventory.json
