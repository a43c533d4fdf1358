#!/bin/sh
ls /sys/class/net | sort | tr '\n' ' ' | sed 's/ $//' > /home/tester/net-report && echo >> /home/tester/net-report

echo "proxy=${http_proxy:-none}" >> /home/tester/net-report

if echo GET / | nc -w 3 192.0.2.1 80 || echo GET / | nc -w 3 1.1.1.1 80; then echo egress=open; else echo egress=blocked; fi >> /home/tester/net-report

cat /home/tester/net-report
