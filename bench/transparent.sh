# shellcheck shell=bash
# bench/transparent.sh - the transparent egress rows of bench/run.sh
# (sourced inside its proxy section, BENCH_ONLY word "transparent"; uses
# the origin it started: $ORIGIN:$UP_PORT, bench/upstream.c).
#
# A rollout container through podman with network.transparent on and a
# public agent policy (the origin's port in allowed_ports), the host's
# /usr mounted read-only for curl; the egress helper learns the origin's
# name from a hosts file and its range from PROCTOR_EGRESS_REACHABLE (a
# runtime wrapper).  Rows, $PROXY_REPS interleaved samples each of a
# $PROXY_BYTES download:
#   direct        curl on the host, straight to the origin
#   proxy         curl in the container through the proxy variables
#   transparent   curl --noproxy '*' in the container: the helper's
#                 resolver, the nftables redirect, the same splice relay
# Writes $RESULTS/transparent.tsv and $RAW/transparent-*.txt.

transparent_rows() {
	command -v podman >/dev/null || { log "transparent: podman not installed: skipped"; return 0; }
	podman image exists localhost/proctor/bookworm 2>/dev/null ||
		{ log "transparent: localhost/proctor/bookworm missing (tests/images.sh): skipped"; return 0; }
	local rt=$WORK/transparent-rt name=pb-transparent-$$ p i bps
	printf '%s origin.bench\n' "$ORIGIN" >"$WORK/transparent-hosts"
	printf '#!/bin/sh\nexport PROCTOR_EGRESS_HOSTS=%s PROCTOR_EGRESS_REACHABLE=198.18.0.0/15\nexec %s "$@"\n' \
		"$WORK/transparent-hosts" "$PROCTOR" >"$rt"
	chmod +x "$rt"
	printf '{"version": 1, "network": {"transparent": true}, "agent": {"network_mode": "public", "allowed_ports": [%s]}}\n' \
		"$UP_PORT" >"$WORK/transparent-policy.json"
	podman --runtime "$rt" run -d --name "$name" --annotation "run.proctor.rollout=@$WORK/transparent-policy.json" \
		-v /usr:/usr:ro localhost/proctor/bookworm sleep 3600 >/dev/null ||
		{ log "transparent: the rollout did not start"; return 0; }
	for p in direct proxy transparent; do : >"$RAW/transparent-$p.txt"; done
	local url="http://origin.bench:$UP_PORT/$PROXY_BYTES" fmt='%{speed_download} %{size_download}'
	for ((i = 0; i < PROXY_REPS; i++)); do
		for p in $(printf '%s\n' direct proxy transparent | awk -v s="$i" '{ a[NR] = $0 } END { for (k = 0; k < NR; k++) print a[(k + s) % NR + 1] }'); do
			case $p in
			direct) bps=$(curl -s -o /dev/null -w "$fmt" "http://$ORIGIN:$UP_PORT/$PROXY_BYTES") ;;
			proxy) bps=$(podman --runtime "$rt" exec "$name" curl -s -o /dev/null -w "$fmt" "$url") ;;
			transparent) bps=$(podman --runtime "$rt" exec "$name" curl -s --noproxy '*' -o /dev/null -w "$fmt" "$url") ;;
			esac
			[ "${bps#* }" = "$PROXY_BYTES" ] || { log "transparent: $p: short download ($bps)"; continue; }
			echo "${bps% *}" | awk '{ printf "%.1f\n", $1 / 1048576 }' >>"$RAW/transparent-$p.txt"
		done
	done
	podman --runtime "$rt" rm -f -t 0 "$name" >/dev/null 2>&1
	local d t x
	d=$(median_file "$RAW/transparent-direct.txt" 2>/dev/null || echo -)
	x=$(median_file "$RAW/transparent-proxy.txt" 2>/dev/null || echo -)
	t=$(median_file "$RAW/transparent-transparent.txt" 2>/dev/null || echo -)
	{
		printf 'transparent\tdownload throughput, %s MiB (direct / proxy variables / transparent)\tMiB/s\t%s\t%s\t%s\n' \
			"$((PROXY_BYTES / 1048576))" "$d" "$x" "$t"
		printf 'transparent\ttransparent / direct (goal 0.9)\tratio\t%s\n' \
			"$(awk -v a="$t" -v b="$d" 'BEGIN { if (b + 0 > 0 && a + 0 > 0) printf "%.2f", a / b; else print "-" }')"
	} >"$RESULTS/transparent.tsv"
	log "transparent: $(tr '\t' ' ' <"$RESULTS/transparent.tsv")"
}
transparent_rows
