#!/bin/sh
# The agent's report must match what the verifier sees itself: only lo, no
# proxy, nothing reachable.
reward=0
want=$(printf 'lo\nproxy=none\negress=blocked')
echo "verifier sees interfaces: $(ls /sys/class/net | tr '\n' ' '), proxy=${http_proxy:-none}"
if [ -f /home/tester/net-report ]; then
	echo "report: $(tr '\n' '|' < /home/tester/net-report)"
	if [ "$(cat /home/tester/net-report)" = "$want" ] && [ "$(stat -c %u /home/tester/net-report)" = 1000 ] &&
		[ "$(ls /sys/class/net)" = lo ] && [ -z "${http_proxy:-}" ]; then
		reward=1
	fi
fi
echo "$reward" > /logs/verifier/reward.txt
