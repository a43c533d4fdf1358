# require.bash - sourced by the suites' helpers.
#
# require_or_skip MESSAGE: a test that cannot run because something the
# test environment should provide is missing (an engine, a test image, a
# tool) skips when run by hand on a partial setup, and fails when
# PROCTOR_REQUIRE_ALL=1: tests/run-all.sh (the README's test command, what
# CI runs) sets it after installing everything, so a broken install step
# shows up as failures instead of a green run of skipped tests.  Host or
# kernel features a machine may lack (huge pages, a block device, time
# namespaces) skip with plain `skip`.
require_or_skip() {
	if [ "${PROCTOR_REQUIRE_ALL:-0}" = 1 ]; then
		echo "required by PROCTOR_REQUIRE_ALL=1: $*" >&2
		return 1
	fi
	skip "$*"
}
