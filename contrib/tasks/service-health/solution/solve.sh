#!/bin/bash
# One command per exec: the first writes the server, the second starts it in
# the background, the third checks it from a fresh exec.
cat > /srv/upper.pl <<'PL'
use IO::Socket::INET;
my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1:7070', Listen => 16, ReuseAddr => 1) or die "listen: $!";
while (my $c = $s->accept) {
    while (my $l = <$c>) { chomp $l; print $c 'OK ' . uc($l) . "\n"; }
    close $c;
}
PL

nohup perl /srv/upper.pl >/srv/upper.log 2>&1 & echo $! > /srv/service.pid

perl -MIO::Socket::INET -e 'for (1..50) { if (my $c = IO::Socket::INET->new("127.0.0.1:7070")) { print $c "ping\n"; print scalar <$c>; exit 0 } select(undef,undef,undef,0.1) } exit 1'
