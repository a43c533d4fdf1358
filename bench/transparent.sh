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
# With each sample, the CPU it cost (ms per GiB): curl's (GNU time, run
# where curl runs), the origin's and the egress helper's (/proc of each),
# their sum, and the machine's idle share over the sample (/proc/stat): on
# a machine without a spare CPU the rates follow the summed CPU (as in the
# proxy rows; docs/performance.md "The egress relay: where the CPU goes").
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
	for p in direct proxy transparent; do : >"$RAW/transparent-$p.txt" >"$RAW/transparent-cpu-$p.txt"; done
	# The rollout's helper: the newest proctor-egress (podman run just started it).
	local helper c0 c1 o0 o1 s0 s1 cl
	helper=$(pgrep -n -x proctor-egress || true)
	local url="http://origin.bench:$UP_PORT/$PROXY_BYTES" fmt='%{speed_download} %{size_download}'
	local tm=(/usr/bin/time -f '%U %S' -o /dev/stderr)
	for ((i = 0; i < PROXY_REPS; i++)); do
		for p in $(printf '%s\n' direct proxy transparent | awk -v s="$i" '{ a[NR] = $0 } END { for (k = 0; k < NR; k++) print a[(k + s) % NR + 1] }'); do
			c0=$(pid_cpu_ms "$helper") o0=$(pid_cpu_ms "$ORIGIN_PID") s0=$(stat_jiffies)
			case $p in
			direct) bps=$("${tm[@]}" curl -s -o /dev/null -w "$fmt" "http://$ORIGIN:$UP_PORT/$PROXY_BYTES" 2>"$WORK/tcpu") ;;
			proxy) bps=$(podman --runtime "$rt" exec "$name" "${tm[@]}" curl -s -o /dev/null -w "$fmt" "$url" 2>"$WORK/tcpu") ;;
			transparent) bps=$(podman --runtime "$rt" exec "$name" "${tm[@]}" curl -s --noproxy '*' -o /dev/null -w "$fmt" "$url" 2>"$WORK/tcpu") ;;
			esac
			c1=$(pid_cpu_ms "$helper") o1=$(pid_cpu_ms "$ORIGIN_PID") s1=$(stat_jiffies)
			[ "${bps#* }" = "$PROXY_BYTES" ] || { log "transparent: $p: short download ($bps)"; continue; }
			echo "${bps% *}" | awk '{ printf "%.1f\n", $1 / 1048576 }' >>"$RAW/transparent-$p.txt"
			cl=$(awk 'NF == 2 { printf "%.0f", ($1 + $2) * 1000 }' "$WORK/tcpu")
			[ "$p" = direct ] && c1=$c0
			# curl origin helper sum (ms per GiB), idle %
			awk -v cl="${cl:-0}" -v oa="$o0" -v ob="$o1" -v ca="$c0" -v cb="$c1" -v a="$s0" -v b="$s1" -v n="$PROXY_BYTES" \
				'BEGIN { g = 1073741824 / n; split(a, x, " "); split(b, y, " "); t = y[1] - x[1] + y[2] - x[2]
					printf "%.0f %.0f %.0f %.0f %.0f\n", cl * g, (ob - oa) * g, (cb - ca) * g, (cl + ob - oa + cb - ca) * g,
						(t > 0 ? 100 * (y[2] - x[2]) / t : 0) }' >>"$RAW/transparent-cpu-$p.txt"
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
		local k col
		for k in 1 2 3 4 5; do
			col=$(echo "curl origin helper sum idle" | cut -d' ' -f$k)
			printf 'transparent\t%s (direct / proxy variables / transparent)\t%s' \
				"$([ "$col" = idle ] && echo "machine idle during the downloads" || echo "CPU per GiB: $col")" \
				"$([ "$col" = idle ] && echo % || echo ms)"
			for p in direct proxy transparent; do
				printf '\t%s' "$(awk -v k="$k" '{ print $k }' "$RAW/transparent-cpu-$p.txt" | sort -n |
					awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }')"
			done
			printf '\n'
		done
	} >"$RESULTS/transparent.tsv"
	log "transparent: $(tr '\t' ' ' <"$RESULTS/transparent.tsv")"
}
transparent_rows
