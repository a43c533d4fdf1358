#!/bin/bash
set -euo pipefail
n=$(wc -l < /srv/input.txt)
redis-cli -h db SET lines "$n"
# The isolated service has no name and no address here.
if getent hosts grader; then echo "grader resolves" >&2; exit 1; fi
echo "grader: unreachable"
