#!/bin/bash
reward=0
cd /srv/backup 2>/dev/null || { echo 0 > /logs/verifier/reward.txt; exit 0; }
echo "debian $(cat /etc/debian_version)"
if sha256sum -c apt.tar.gz.sha256 && tar -tzf apt.tar.gz | grep -qx 'etc/apt/sources.list' &&
	[ "$(cat debian-version)" = 11 ] && [ "$(cut -d. -f1 /etc/debian_version)" = 11 ]; then
	reward=1
fi
echo "$reward" > /logs/verifier/reward.txt
