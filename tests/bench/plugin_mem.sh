#!/bin/bash
# The plugin's memory on this kernel: collectd alone and collectd with the
# plugin (MEM_HZ Hz, default 999; Interval 1, csv), side by side on the
# 70/30 workload; after SECONDS (default 60), each one's VmRSS and PSS, the
# plugin's heap gauges and its largest mappings by PSS. On the host:
#   [MEM_HZ=99] bash tests/bench/plugin_mem.sh [SECONDS [PLUGIN.so]]
# and in Debian 12's 6.1 (tests/kernel/vm.sh, TCG: about 90 s):
#   bash tests/kernel/vm.sh -t 800 -m 2048 -- bash tests/bench/plugin_mem.sh 60
# PLUGIN.so (default build/ebprof.so) lets one guest boot measure two
# builds in turn. After make (the plugin and the examples).
SECS=${1:-60}
HZ=${MEM_HZ:-999}
cd "$(dirname "$0")/../.."
source tests/e2e/collectd.bash
[ -n "${2:-}" ] && PLUGIN_SO=$(realpath "$2")
echo "plugin $PLUGIN_SO"
rss() { awk '/^VmRSS/{print $2}' "/proc/$1/status"; }
pss() { awk '/^Pss:/{print $2}' "/proc/$1/smaps_rollup"; }
thp() { awk '/^AnonHugePages:/{print $2}' "/proc/$1/smaps_rollup"; }
bg "$EX/split7030" 900
DA=$(collectd_dir alone csv)
{ collectd_conf "$DA" e2ehost 1; collectd_csv "$DA"; } >"$DA/collectd.conf"
collectd_start "$DA"; A=$COLLECTD
DP=$(collectd_dir plug csv)
{ collectd_conf "$DP" e2ehost 1; collectd_csv "$DP"
  printf 'LoadPlugin ebprof\n<Plugin ebprof>\n  Frequency %s\n  SpoolDir "%s/spool"\n</Plugin>\n' "$HZ" "$DP"; } >"$DP/collectd.conf"
collectd_start "$DP"; P=$COLLECTD
sampling() { ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'perf_event'; }
wait_for 300 sampling "$P" || { cat "$DP/log"; fail "the plugin did not start"; }
echo "kernel $(uname -r); $HZ Hz; sampling at ${SECONDS} s; waiting ${SECS} s"
sleep "$SECS"
echo "alone: VmRSS $(rss $A) kB, PSS $(pss $A) kB"
echo "plugin: VmRSS $(rss $P) kB, PSS $(pss $P) kB, in huge pages $(thp $P) kB"
for f in kernel_symbols cache_symbols cache_processes cache_names cache_window cache_interval cache_unwind cache_python cache_forks heap_in_use heap_free heap_mapped; do
	g=$(ls -t $DP/csv/e2ehost/*/bytes-$f-* 2>/dev/null | head -1)
	[ -n "$g" ] && echo "$f $(tail -1 "$g" | cut -d, -f2)"
done
awk '/^[0-9a-f]/{name=$6} /^Pss:/{if ($2 > 200) print $2, name}' "/proc/$P/smaps" | sort -rn | head -12
[ -n "${MEM_HOLD:-}" ] && { echo "holding: collectd $P"; sleep "$MEM_HOLD"; }
collectd_stop "$P"; collectd_stop "$A"
