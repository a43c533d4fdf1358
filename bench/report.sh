#!/bin/bash
# bench/report.sh - turns bench/results/results.tsv (+ proxy.tsv) into
# results.md (the table, with ratios and the goals checked) and chart.png
# (gnuplot, bench/chart.gp).  Called by run.sh; can be re-run by hand:
#   bench/report.sh RESULTS_DIR DATE PROCTOR_VERSION CRUN_VERSION RUNC_VERSION MODE CRUN_CGROUPS
set -euo pipefail

RESULTS=$1 DATE=${2:-} VP=${3:-} VC=${4:-} VR=${5:-} MODE=${6:-} CG=${7:-}
BENCH=$(cd "$(dirname "$0")" && pwd)
TSV=$RESULTS/results.tsv
PROXY=$RESULTS/proxy.tsv
MD=$RESULTS/results.md

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "-" }'
}

{
	printf '# proctor vs crun vs runc (%s run, %s)\n\n' "$MODE" "$DATE"
	printf 'proctor: `%s`; crun: `%s` (cgroups: %s); runc: `%s`; %s, %s CPUs.\n\n' \
		"$VP" "$VC" "$CG" "$VR" "$(uname -r)" "$(nproc)"
	printf '| metric | unit | proctor | crun | runc | proctor/crun | proctor/runc |\n'
	printf '|---|---|---:|---:|---:|---:|---:|\n'
	tail -n +2 "$TSV" | while IFS=$'\t' read -r section metric unit p c r; do
		case $section in wrapper) rc=- rr=- ;; *) rc=$(ratio "$p" "$c") rr=$(ratio "$p" "$r") ;; esac
		u=$unit
		[ "$unit" = ms ] && u="ms, median"
		[ "$unit" = "ms, mean" ] && u="ms, mean"
		printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$metric" "$u" "$p" "${c:--}" "${r:--}" "$rc" "$rr"
	done
	if [ -s "$PROXY" ]; then
		printf '\n| proxy | unit | direct | tinyproxy | proctor egress | egress/direct | egress/tinyproxy |\n'
		printf '|---|---|---:|---:|---:|---:|---:|\n'
		while IFS=$'\t' read -r _ metric unit d t e; do
			printf '| %s | %s, median | %s | %s | %s | %s | %s |\n' "$metric" "$unit" "$d" "$t" "$e" \
				"$(ratio "$e" "$d")" "$(ratio "$e" "$t")"
		done <"$PROXY"
	fi
	if [ -s "$RESULTS/origin-cc.txt" ]; then
		IFS=$'\t' read -r cc how <"$RESULTS/origin-cc.txt"
		printf '\nProxy origin congestion control: %s (%s).\n' "$cc" "$how"
	fi
	if grep -q . "$RESULTS/layouts.txt" 2>/dev/null; then
		printf '\nCgroup layouts, runtimes left out:\n\n'
		sed 's/^/- /' "$RESULTS/layouts.txt"
	fi
	if [ -s "$RESULTS/transparent.tsv" ]; then
		printf '\n## Transparent egress (proctor, bench/transparent.sh)\n\n'
		printf '| metric | unit | direct | proxy variables | transparent |\n|---|---|---|---|---|\n'
		awk -F '\t' '{ printf "| %s | %s | %s | %s | %s |\n", $2, $3, $4, $5, $6 }' "$RESULTS/transparent.tsv"
	fi
	if [ -s "$RESULTS/rollout.md" ]; then
		printf '\n## Rollouts (proctor)\n\n'
		cat "$RESULTS/rollout.md"
	fi
	printf '\nGoals (this run):\n\n'
	get() { awk -F'\t' -v m="$1" -v col="$2" '$2 == m { print $col }' "$TSV"; }
	check() {
		# check LABEL A OP B
		local label=$1 a=$2 op=$3 b=$4 ok
		if [ -z "$a" ] || [ -z "$b" ] || [ "$a" = - ] || [ "$b" = - ]; then
			printf -- '- %s: not measured\n' "$label"
			return
		fi
		ok=$(awk -v a="$a" -v b="$b" -v op="$op" 'BEGIN { print (op == "<" ? a < b : a <= b) ? "yes" : "NO" }')
		printf -- '- %s: %s (%s vs %s)\n' "$label" "$ok" "$a" "$b"
	}
	check "proctor run median below crun's" "$(get 'run /bin/true (create+start+wait+delete)' 4)" '<' \
		"$(get 'run /bin/true (create+start+wait+delete)' 5)"
	check "proctor exec median below crun's" "$(get 'exec /bin/true into a running container' 4)" '<' \
		"$(get 'exec /bin/true into a running container' 5)"
	check "proctor peak RSS during create at or below crun's" "$(get 'peak RSS during create' 4)" '<=' \
		"$(get 'peak RSS during create' 5)"
	check "proctor peak RSS during exec at or below crun's" "$(get 'peak RSS during exec' 4)" '<=' \
		"$(get 'peak RSS during exec' 5)"
	if [ -s "$PROXY" ]; then
		d=$(awk -F'\t' 'NR == 1 { print $4 }' "$PROXY") e=$(awk -F'\t' 'NR == 1 { print $6 }' "$PROXY")
		if [ "$e" = - ]; then
			printf -- '- egress proxy at 80%% or more of direct throughput: not measured (proxy: not built yet)\n'
		else
			check "egress proxy at 80% or more of direct throughput (80% of direct vs egress, MiB/s)" \
				"$(awk -v d="$d" 'BEGIN { printf "%.1f", d * 0.8 }')" '<=' "$e"
		fi
		t=$(awk -F'\t' 'NR == 2 { print $5 }' "$PROXY") e=$(awk -F'\t' 'NR == 2 { print $6 }' "$PROXY")
		if [ "$e" = - ]; then
			printf -- '- egress proxy ahead of tinyproxy in connections per second: not measured\n'
		else
			check "egress proxy ahead of tinyproxy in connections per second (tinyproxy vs egress)" "$t" '<' "$e"
		fi
	fi
} >"$MD"

# Chart data: one file per panel, columns label proctor crun runc.
dat() {
	# dat FILE SECTION-REGEX: rows of results.tsv whose section matches
	awk -F'\t' -v re="$2" 'NR > 1 && $1 ~ re {
		label = $1
		if ($1 == "userns") label = ($2 ~ /no userns/) ? "plain" : "userns+netns"
		if ($1 == "podman") label = "podman"
		printf "%s %s %s %s\n", label, ($4 == "" || $4 == "-") ? "NaN" : $4,
		       ($5 == "" || $5 == "-") ? "NaN" : $5, ($6 == "" || $6 == "-") ? "NaN" : $6 }' "$TSV" >"$1"
}
dat "$RESULTS/ops.dat" '^(run|exec|userns)$'
dat "$RESULTS/podman.dat" '^podman$'
awk -F'\t' 'NR > 1 && $1 == "rss" && $2 ~ /^peak RSS during/ {
	label = $2; sub(/peak RSS during /, "", label)
	printf "%s %s %s %s\n", label, $4 / 1024, ($5 == "" || $5 == "-") ? "NaN" : $5 / 1024, ($6 == "" || $6 == "-") ? "NaN" : $6 / 1024 }' \
	"$TSV" >"$RESULTS/rss.dat"
if [ -s "$PROXY" ]; then
	awk -F'\t' 'NR <= 2 { for (i = 4; i <= 6; i++) if ($i == "-" || $i == "") $i = "NaN"
		printf "%s %s %s %s\n", (NR == 1 ? "MiB/s" : "req/s"), $4, $5, $6 }' OFS='\t' "$PROXY" >"$RESULTS/proxy.dat"
else
	: >"$RESULTS/proxy.dat"
fi
if command -v gnuplot >/dev/null; then
	hp=0 he=0
	[ -s "$RESULTS/proxy.dat" ] && hp=1
	awk 'NR == 1 && $4 != "NaN" { found = 1 } END { exit !found }' "$RESULTS/proxy.dat" && he=1
	(cd "$RESULTS" && gnuplot -e "have_proxy=$hp; have_egress=$he" "$BENCH/chart.gp") || echo "report: gnuplot failed; no chart" >&2
else
	echo "report: gnuplot not installed (apt-get install -y gnuplot-nox); no chart" >&2
fi
