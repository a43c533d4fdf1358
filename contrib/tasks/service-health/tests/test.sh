#!/bin/bash
# The service the agent left running answers, from the verifier's own
# namespaces (it joins the container's network and pid namespaces).
reward=0
answer=$(perl -MIO::Socket::INET -e '
	my $c = IO::Socket::INET->new("127.0.0.1:7070") or exit 1;
	print $c "hello verifier\n"; my $a = <$c>; print $a; exit 0' 2>/dev/null)
echo "service answered: ${answer:-nothing}"
pid=$(cat /srv/service.pid 2>/dev/null)
# The agent's pid numbers are those of its own pid namespace, nested in the
# verifier's (docs/rollout.md "Out of the agent's reach"): the last field of
# NSpid is the number the agent saw.  Under plain runc it is the only one.
found=
for s in /proc/[0-9]*/status; do
	[ -n "$pid" ] && [ "$(awk '/^NSpid:/ {print $NF}' "$s" 2>/dev/null)" = "$pid" ] || continue
	grep -q upper.pl "${s%/status}/cmdline" 2>/dev/null && found=1
done
if [ "$answer" = "OK HELLO VERIFIER" ] && [ -n "$found" ]; then
	echo "pid $pid is the service"
	reward=1
fi
echo "$reward" > /logs/verifier/reward.txt
