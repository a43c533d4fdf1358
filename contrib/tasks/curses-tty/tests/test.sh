#!/bin/bash
# What the agent's terminal looked like (the task asks for 30x100).  dialog
# also writes curses' own escape sequences around its answer: grep it out.
reward=0
cd /srv/tty 2>/dev/null || { echo 0 > /logs/verifier/reward.txt; exit 0; }
name=$(cat name 2>/dev/null) devtty=$(cat devtty 2>/dev/null) size=$(cat stty 2>/dev/null)
maxsize=$(grep -ao 'MaxSize: [0-9]*, [0-9]*' maxsize 2>/dev/null)
echo "name=$name devtty=$devtty stty=$size maxsize=$maxsize"
if [[ "$name" =~ ^/dev/pts/[0-9]+$ ]] && [ "$devtty" = ok ] && [ "$size" = "30 100" ] &&
	[ "$maxsize" = "MaxSize: 30, 100" ]; then
	reward=1
fi
echo "$reward" > /logs/verifier/reward.txt
