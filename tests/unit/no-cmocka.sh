#!/bin/sh
# no-cmocka.sh - stands in for the C unit tests (tests/unit/test_*.c) when
# configure did not find cmocka: `make check` then shows one SKIP with the
# reason instead of failing to build them.  Install cmocka (Debian:
# libcmocka-dev) and re-run configure to build and run them.
echo "cmocka was not found by configure: the C unit tests were not built (install libcmocka-dev, re-run configure)" >&2
exit 77
