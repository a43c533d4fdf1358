#!/bin/bash
# The verifier reaches db as the agent did and reads the stored count.
got=$(redis-cli -h db GET lines 2>&1)
echo "db lines = ${got:-missing}"
if [ "$got" = "$(wc -l < /srv/input.txt)" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
