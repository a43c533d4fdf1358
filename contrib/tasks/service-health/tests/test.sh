#!/bin/bash
# The service the agent left running answers, from the verifier's own
# namespaces (it joins the container's network and pid namespaces).
reward=0
answer=$(perl -MIO::Socket::INET -e '
	my $c = IO::Socket::INET->new("127.0.0.1:7070") or exit 1;
	print $c "hello verifier\n"; my $a = <$c>; print $a; exit 0' 2>/dev/null)
echo "service answered: ${answer:-nothing}"
pid=$(cat /srv/service.pid 2>/dev/null)
if [ "$answer" = "OK HELLO VERIFIER" ] && [ -n "$pid" ] && grep -q upper.pl "/proc/$pid/cmdline" 2>/dev/null; then
	echo "pid $pid is the service"
	reward=1
fi
echo "$reward" > /logs/verifier/reward.txt
