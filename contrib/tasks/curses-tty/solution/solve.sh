#!/bin/bash
# podman sets the terminal's size just after the exec starts: commands that
# read it wait (at most 5 s) until it is not 0x0.
tty | tee /srv/tty/name

if (exec 9</dev/tty) && echo probe > /dev/tty; then echo ok > /srv/tty/devtty; fi

for _ in $(seq 50); do [ "$(stty size)" != "0 0" ] && break; sleep 0.1; done; stty size | tee /srv/tty/stty

for _ in $(seq 50); do [ "$(stty size)" != "0 0" ] && break; sleep 0.1; done; dialog --print-maxsize --stdout > /srv/tty/maxsize; cat /srv/tty/maxsize
