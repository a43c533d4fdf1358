#!/bin/bash
# The verifier's network is public too: it reads the mirror's index and
# downloads a package through its own proxy, whatever the agent did (the
# URI comes from the image's apt sources).
reward=0
uri=$(sed -n 's|^URIs:[[:space:]]*\(http://[^[:space:]]*\).*|\1|p; s|^deb[[:space:]]\{1,\}\(http://[^[:space:]]*\).*|\1|p' \
	/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n 1)
echo "mirror: ${uri:-none}; proxy ${http_proxy:+set}"
mkdir -p /tmp/verifier-fetch
if (cd /tmp/verifier-fetch && apt-get -q update && apt-get -q download hello) >/tmp/verifier-fetch/log 2>&1; then
	echo "the verifier fetched $(ls /tmp/verifier-fetch/*.deb | xargs -n1 basename)"
	fetched=1
else
	echo "the verifier could not fetch from the mirror:"; tail -n 3 /tmp/verifier-fetch/log
fi
out=$(hello 2>&1)
echo "hello says: ${out:-nothing}"
[ "${fetched:-0}" = 1 ] && [ "$out" = "Hello, world!" ] && reward=1
echo "$reward" > /logs/verifier/reward.txt
