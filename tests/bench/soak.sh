#!/usr/bin/env bash
# The long soak (`make soak DURATION=1h`): collectd with ebprof at 999 Hz
# system-wide for DURATION (1h, 90m, 6h, 600s or seconds), with churn
# that keeps producing new binaries, and a CSV of the daemon's memory
# every SOAK_SAMPLE seconds (60). It proves that memory stays flat in a
# collectd that never restarts: from minute 10 to the end, the floor of
# RSS must grow by less than 1 MB (SOAK_MAX_GROWTH_KB, 1024), and so must
# the floor of the heap outside the caches, glibc's heap in use less every
# cache the plugin reports in it (SOAK_MAX_HEAP_GROWTH_KB, 1024): RSS
# alone hides a heap that grows while the unwind tables' mapped arrays
# shrink. Each cache must reach its bound and stay there.
#
#   tests/bench/soak.sh DURATION [OUTDIR]      (OUTDIR: build/soak)
#
# The churn, all under `nice -n 10` and kept to about half a core:
# - SOAK_PROGRAMS (200) distinct executables, each with its own C++
#   shared object, generated from a template (soakgen.py) with a
#   different set of functions each, run one after another; each run
#   starts two threads that come and go, then execs itself once;
# - one new executable and library built every minute and added to the
#   rotation in place of the oldest (whose files are deleted), so new
#   binaries keep coming for the whole run;
# - a shell pipeline loop (fork+exec of sort and wc), and a steady
#   workload (split7030);
# - Python 3 processes one after another, each with functions of its own
#   (soakpy.py), so the Python code-object cache fills to its bound: the
#   2-hour soak of 1 Dec had no Python of its own, and the heap it could
#   not account for was that cache, fed by other jobs' Pythons.
# The spool writes SVG and folded files every 5 s (SpoolInterval 5, read
# interval 1 s). The cache bounds are lowered (SOAK_SYMBOLS, SOAK_PROCESSES,
# SOAK_NAMES, SOAK_WINDOW, SOAK_UNWIND) so that the churn reaches every one of them;
# SOAK_PLUGIN_EXTRA adds lines to the plugin's block (MallocTrim false).
# SOAK_CHURN=0 starts no churn of its own: a second daemon beside a soak
# that runs one (both are system-wide), to compare two configurations
# under one load.
#
# Writes OUTDIR/soak.csv (soaksample.py), OUTDIR/summary.txt, and the
# plots OUTDIR/memory.svg and OUTDIR/caches.svg (soakreport.py). With
# SOAK_LOCK set (a lock file), collectd's start-up, up to the first spool
# window, runs under flock on it; the build and the soak do not hold it.
source "$(dirname "$0")/../e2e/collectd.bash"

parse_duration() {
	case $1 in
	*h) echo $((${1%h} * 3600)) ;;
	*m) echo $((${1%m} * 60)) ;;
	*s) echo "${1%s}" ;;
	*[!0-9]* | '') fail "DURATION \"$1\": give seconds, or a number ending in s, m or h (1h)" ;;
	*) echo "$1" ;;
	esac
}

SECS=$(parse_duration "${1:-1h}")
OUT=${2:-$ROOT/build/soak}
SAMPLE=${SOAK_SAMPLE:-60}
NPROG=${SOAK_PROGRAMS:-200}
MAX_GROWTH_KB=${SOAK_MAX_GROWTH_KB:-1024}
MAX_HEAP_GROWTH_KB=${SOAK_MAX_HEAP_GROWTH_KB:-1024}
CHURN=${SOAK_CHURN:-1}
SYMBOLS=${SOAK_SYMBOLS:-4MiB}
PROCESSES=${SOAK_PROCESSES:-1MiB}
NAMES=${SOAK_NAMES:-2MiB}
WINDOW=${SOAK_WINDOW:-4MiB}
UNWIND=${SOAK_UNWIND:-16MiB}
# Warm-up: the first 10 minutes, or a sixth of a shorter run.
FROM=$((SECS >= 3600 ? 600 : SECS / 6))
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)

bytes_of() { # "4MiB" -> 4194304
	python3 -c 'import re,sys; n,u=re.fullmatch(r"(\d+)([KMG]iB)",sys.argv[1]).groups(); print(int(n)<<{"KiB":10,"MiB":20,"GiB":30}[u])' "$1"
}

# ---- the programs ----
P=$T/progs
mkdir -p "$P"
build_prog() { # K: progK and libK.so in $P
	g++ -O1 -fPIC -shared -o "$P/lib$1.so" "$P/lib$1.cc" &&
		gcc -O1 -fno-omit-frame-pointer -o "$P/prog$1" "$P/prog$1.c" -L"$P" -l:"lib$1.so" \
			-Wl,-rpath,"$P" -pthread
}
export -f build_prog
export P
if [ "$CHURN" = 1 ]; then
	python3 "$HERE/soakgen.py" "$P" "$NPROG" || fail "cannot generate the churn programs"
	seq 0 $((NPROG - 1)) | nice -n 10 xargs -P 2 -I{} bash -c 'build_prog {}' ||
		fail "cannot build the churn programs"
	echo "built $NPROG programs and libraries"
fi

# ---- collectd ----
# The programs are built: the lock (when asked) is for the start-up only.
if [ -n "${SOAK_LOCK:-}" ]; then
	exec 9>"$SOAK_LOCK"
	flock 9
fi
D=$(collectd_dir soak csv)
{
	collectd_conf "$D" soakhost 1
	collectd_csv "$D"
	cat <<EOF
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 999
  TopFunctions 50
  SpoolDir "$D/spool"
  SpoolInterval 5
  SpoolFormat svg folded
  SpoolRetention 5
  SymbolCacheMemory "$SYMBOLS"
  ProcessMemory "$PROCESSES"
  NameCacheMemory "$NAMES"
  SpoolWindowMemory "$WINDOW"
  UnwindMemory "$UNWIND"
${SOAK_PLUGIN_EXTRA:-}
</Plugin>
EOF
} >"$D/collectd.conf"
# SOAK_WRAPPER: a command to run collectd under (heaptrack -o FILE, to
# attribute the heap to call sites); $COLLECTD is then the daemon itself,
# found by its command line (collectd -f writes no PID file), not the wrapper.
# shellcheck disable=SC2086
collectd_start "$D" ${SOAK_WRAPPER:-}
WRAPPER_PID=$COLLECTD
wait_for 30 test -f "$D/spool/latest.svg" || { show_log "$D"; fail "no spool window within 30 s"; }
if [ -n "${SOAK_WRAPPER:-}" ]; then
	for p in $(pgrep -x collectd); do
		grep -qF "$D/collectd.conf" "/proc/$p/cmdline" 2>/dev/null && COLLECTD=$p
	done
	[ "$COLLECTD" != "$WRAPPER_PID" ] || fail "no collectd under $SOAK_WRAPPER"
	BG_PIDS+=("$COLLECTD")
fi
[ -n "${SOAK_LOCK:-}" ] && flock -u 9

# ---- the churn ----
churn() {
	# The rotation: $P/rotation lists the programs run, one K a line.
	seq 0 $((NPROG - 1)) >"$P/rotation"
	bg nice -n 10 bash -c '
		while :; do
			while read -r k; do
				[ -x "$0/prog$k" ] && "$0/prog$k" 60 >/dev/null 2>&1
				sleep 0.1
			done <"$0/rotation"
		done' "$P"
	bg nice -n 10 sh -c 'while :; do for i in 1 2 3 4; do echo $i | sort | wc -l >/dev/null; done; sleep 0.2; done'
	# Python processes, each with code objects of its own (soakpy.py).
	bg nice -n 10 bash -c 'k=0; while :; do python3 "$0/soakpy.py" $k 300; k=$((k + 1)); sleep 0.2; done' "$HERE"
	bg nice -n 10 "$EX/split7030" 1000000
	new_prog() { # every minute: a new program in, the oldest out
		local next=$NPROG
		while sleep 60; do
			python3 "$HERE/soakgen.py" "$P" 1 "$next" && nice -n 10 bash -c "build_prog $next" || continue
			{ tail -n +2 "$P/rotation"; echo "$next"; } >"$P/rotation.new"
			old=$(head -1 "$P/rotation")
			mv "$P/rotation.new" "$P/rotation"
			rm -f "$P/prog$old" "$P/lib$old.so" "$P/prog$old.c" "$P/lib$old.cc"
			next=$((next + 1))
		done
	}
	new_prog >/dev/null 2>&1 &
	BG_PIDS+=("$!")
}
[ "$CHURN" = 1 ] && churn

# ---- the samples ----
CSV=$OUT/soak.csv
H=$D/csv/soakhost/ebprof-health
python3 "$HERE/soaksample.py" header >"$CSV"
start=$SECONDS
end=$((start + SECS))
echo "soak: ${SECS}s, a sample every ${SAMPLE}s, into $CSV"
while :; do
	kill -0 "$COLLECTD" 2>/dev/null || { show_log "$D"; fail "collectd died during the soak"; }
	python3 "$HERE/soaksample.py" "$COLLECTD" "$H" $((SECONDS - start)) >>"$CSV" ||
		fail "cannot sample collectd"
	[ "$SECONDS" -ge "$end" ] && break
	sleep $((SAMPLE < end - SECONDS ? SAMPLE : end - SECONDS))
done
collectd_stop "$COLLECTD"
[ "$WRAPPER_PID" = "$COLLECTD" ] || wait "$WRAPPER_PID" 2>/dev/null
grep -q 'ebprof plugin: .*\(error\|failed\)' "$D/log" && { show_log "$D"; fail "the plugin logged an error"; }
cp "$D/collectd.conf" "$OUT/collectd.conf"
long=$([ "$SECS" -ge 1200 ] && echo 1 || echo 0)
python3 "$HERE/soakreport.py" "$CSV" "$OUT" "$FROM" $((long * MAX_GROWTH_KB)) $((long * MAX_HEAP_GROWTH_KB)) \
	cache_symbols="$(bytes_of "$SYMBOLS")" cache_processes="$(bytes_of "$PROCESSES")" \
	cache_names="$(bytes_of "$NAMES")" cache_window="$(bytes_of "$WINDOW")" \
	unwind_tables="$(bytes_of "$UNWIND")" cache_python=$((8 << 20)) ||
	fail "RSS grew by ${MAX_GROWTH_KB} kB, or the heap outside the caches by ${MAX_HEAP_GROWTH_KB} kB, or more after the warm-up: see $OUT/summary.txt"
ok "soak ${SECS}s: $OUT/soak.csv, summary.txt, memory.svg, caches.svg"
