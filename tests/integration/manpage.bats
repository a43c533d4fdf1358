#!/usr/bin/env bats
# docs/proctor.1 covers the CLI: it renders with man(1), every command of
# `proctor --help` has a section, and every flag of `proctor --help` and
# `proctor CMD --help` appears in the man page (each command's flags in
# that command's section).

load helpers

MANPAGE=$(cd "$(dirname "$BATS_TEST_FILENAME")/../.." && pwd)/docs/proctor.1

setup_file() {
	[ -n "${PROCTOR:-}" ] && [ -x "$PROCTOR" ] || {
		echo "PROCTOR must name the runtime binary under test" >&2
		return 1
	}
}
teardown_file() { :; }
setup() {
	runtime_is proctor || skip "the man page documents proctor"
	[ -f "$MANPAGE" ] || fail_with "missing $MANPAGE"
}
teardown() { :; }

# The man page source with roff escapes and font changes removed, so flags
# read as typed: \- -> -, \fB..\fP dropped.
man_text() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' "$MANPAGE"; }

# The text of one command's section (from ".SS proctor CMD" to the next
# .SS or .SH).
man_section() {
	man_text | awk -v want="proctor $1" '
		/^\.S[SH] / { t = $0; sub(/^\.S[SH] +/, "", t); gsub(/"/, "", t); insec = (t == want); next }
		insec { print }'
}

commands() { "$PROCTOR" --help | awk '/^COMMANDS:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }'; }

# Long flags (--x) and short flags (-x) a help text shows; short flags are
# only those printed as ", -X" after a long one.
long_flags() { grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }
short_flags() { grep -oE -- ', -[a-zA-Z]\b' | sed 's/^, //' | sort -u; }

@test "man ./docs/proctor.1 renders" {
	command -v man >/dev/null || require_or_skip "man is not installed"
	run env MANWIDTH=80 man -l "$MANPAGE"
	assert_status 0
	[[ "${lines[0]}" == *"proctor(1)"* ]] || fail_with "first line: ${lines[0]}"
	assert_output_contains NAME
	assert_output_contains "proctor - an OCI container runtime"
	assert_output_contains SYNOPSIS
	assert_output_contains "GLOBAL OPTIONS"
	# No roff warnings or unrendered markup.
	run env MANWIDTH=80 sh -c "man -l '$MANPAGE' 2>&1 >/dev/null"
	[ -z "$output" ] || fail_with "man warnings: $output"
	run env MANWIDTH=80 man -l "$MANPAGE"
	[[ "$output" != *'\f'* && "$output" != *'**'* ]] || fail_with "unrendered markup"
}

@test "every global flag of proctor --help is in the man page" {
	local f missing=()
	for f in $("$PROCTOR" --help | long_flags) $("$PROCTOR" --help | short_flags); do
		man_text | grep -qF -- "$f" || missing+=("$f")
	done
	[ ${#missing[@]} -eq 0 ] || fail_with "global flags missing from docs/proctor.1: ${missing[*]}"
}

@test "every command of proctor --help has a section in the man page" {
	local c missing=() n=0
	for c in $(commands); do
		n=$((n + 1))
		man_text | grep -qE "^\.S[SH] \"?proctor $c\"?$" || missing+=("$c")
	done
	[ "$n" -ge 16 ] || fail_with "only $n commands in proctor --help"
	[ ${#missing[@]} -eq 0 ] || fail_with "commands missing from docs/proctor.1: ${missing[*]}"
}

@test "every flag of proctor CMD --help is in that command's man page section" {
	local c f help missing=()
	for c in $(commands); do
		help=$("$PROCTOR" "$c" --help 2>&1)
		# A command whose --help prints no OPTIONS block has no flags.
		[[ "$help" == *"OPTIONS:"* ]] || continue
		help=$(printf '%s\n' "$help" | sed -n '/^OPTIONS:/,$p')
		for f in $(printf '%s\n' "$help" | long_flags) $(printf '%s\n' "$help" | short_flags); do
			[ "$f" = --help ] && continue
			man_section "$c" | grep -qE -- "(^|[^a-z-])$f([^a-z0-9-]|$)" || missing+=("$c $f")
		done
	done
	[ ${#missing[@]} -eq 0 ] || fail_with "flags missing from their section of docs/proctor.1: ${missing[*]}"
}

@test "the committed man page is what docs/proctor.1.md generates" {
	command -v go-md2man >/dev/null || require_or_skip "go-md2man is not installed"
	src=${MANPAGE%.1}.1.md
	go-md2man -in "$src" -out "$BATS_TEST_TMPDIR/proctor.1"
	diff -u "$MANPAGE" "$BATS_TEST_TMPDIR/proctor.1"
}
