#!/bin/bash
# Writes next to itself, as pytest's cache and many real tests do; fails
# (reward 0) when /tests is read-only or not writable by this user.
cd /tests || exit 1
echo "verifier uid $(id -u)"
checks=0 passed=0
check() { # NAME COMMAND...
	checks=$((checks + 1))
	if "${@:2}"; then passed=$((passed + 1)); status=passed; else status=failed; fi
	echo "$1: $status"
	tests_json="${tests_json:+$tests_json,}{\"name\":\"$1\",\"status\":\"$status\",\"duration\":0}"
}
writable() { mkdir -p .cache/v && echo run > .cache/v/lastfailed && cp expected.txt generated-expected.txt && echo "# graded" >> test.sh; }
count_ok() { [ "$(cat /srv/count.txt 2>/dev/null)" = "$(cat generated-expected.txt 2>/dev/null)" ]; }
hidden_ok() { [ "$(cat /srv/tests-view.txt 2>/dev/null)" = absent ]; }
check tests-writable writable
check word-count count_ok
check tests-hidden-from-agent hidden_ok
reward=0
[ "$passed" = "$checks" ] && reward=1
printf '{"reward": %s, "checks": %s, "passed": %s}\n' "$reward" "$checks" "$passed" > /logs/verifier/reward.json
printf '{"results":{"tool":{"name":"test.sh"},"summary":{"tests":%s,"passed":%s,"failed":%s},"tests":[%s]}}\n' \
	"$checks" "$passed" "$((checks - passed))" "$tests_json" > /logs/verifier/ctrf.json
echo "stderr line from the verifier" >&2
