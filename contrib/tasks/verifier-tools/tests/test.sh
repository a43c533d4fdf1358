#!/bin/bash
# The verifier's own egress (its token proxy on 127.0.0.1:3129, allowlisted
# to the mirror) installs jq, then grades with it.
reward=0
echo "verifier proxy: ${http_proxy:+set (token)}"
apt-get update -q >/tmp/apt.log 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends jq >>/tmp/apt.log 2>&1 ||
	{ echo "cannot install jq:"; tail -n 5 /tmp/apt.log; }
want=$(find /etc/apt -maxdepth 1 -type f -printf '%f\n' | sort | jq -R . | jq -sc .)
got=$(jq -c 'select(.host == "rollout") | .items' /srv/inventory.json 2>/dev/null)
echo "jq $(jq --version 2>/dev/null); want $want; got ${got:-nothing}"
[ -n "$got" ] && [ "$got" = "$want" ] && reward=1
echo "$reward" > /logs/verifier/reward.txt
