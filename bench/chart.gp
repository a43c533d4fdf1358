# bench/chart.gp - the chart of bench/results (run from that directory by
# bench/report.sh; have_proxy=0|1 is set on the command line).
# Panels: container operations (ms), podman end to end (ms), peak RSS (MiB),
# proxy throughput (MiB/s) and short requests (req/s).  Bars are medians.
if (!exists("have_proxy")) have_proxy = 0
if (!exists("have_egress")) have_egress = 0
set terminal pngcairo size 1500,900 font "sans,10" noenhanced
set output "chart.png"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top left
set yrange [0:*]
set linetype 1 lc rgb "#1b9e77"
set linetype 2 lc rgb "#d95f02"
set linetype 3 lc rgb "#7570b3"

set multiplot layout 2,3 title "proctor vs crun vs runc: medians, lower is better except for the proxy panels"

set title "container operations (ms)"
plot "ops.dat" using 2:xtic(1) title "proctor", "" using 3 title "crun", "" using 4 title "runc"

set title "podman run --rm /bin/true (ms)"
plot "podman.dat" using 2:xtic(1) title "proctor", "" using 3 title "crun", "" using 4 title "runc"

set title "peak RSS of the runtime process (MiB)"
plot "rss.dat" using 2:xtic(1) title "proctor", "" using 3 title "crun", "" using 4 title "runc"

# The egress column is left out until tests/tools/egress-harness exists.
if (have_proxy) { set key top right }
if (have_proxy && have_egress) {
  set title "proxy: 1 GiB download (MiB/s, higher is better)"
  plot "proxy.dat" every ::0::0 using 2:xtic(1) title "direct", "" every ::0::0 using 3 title "tinyproxy", \
       "" every ::0::0 using 4 title "proctor egress"
  set title "proxy: short requests, new connection each (req/s, higher is better)"
  plot "proxy.dat" every ::1::1 using 2:xtic(1) title "direct", "" every ::1::1 using 3 title "tinyproxy", \
       "" every ::1::1 using 4 title "proctor egress"
}
if (have_proxy && !have_egress) {
  set title "proxy: download throughput (MiB/s, higher is better; egress: not built yet)"
  plot "proxy.dat" every ::0::0 using 2:xtic(1) title "direct", "" every ::0::0 using 3 title "tinyproxy"
  set title "proxy: short requests (req/s, higher is better; egress: not built yet)"
  plot "proxy.dat" every ::1::1 using 2:xtic(1) title "direct", "" every ::1::1 using 3 title "tinyproxy"
}
unset multiplot
