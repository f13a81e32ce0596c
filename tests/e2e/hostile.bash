# Shared by the hostile-process tests (9x_hostile_*.sh, issue 20): a
# sampled process that tries to hang, blind or exhaust the profiler.
# Sourced, not run; sources lib.bash.
#
# Each test runs `ebprof record` under /usr/bin/time and a KILL timeout,
# and checks that it ended on time, how much memory it took at its peak,
# and that nothing the process should not reach was named.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

ELFPATCH="python3 $ROOT/tests/e2e/elfpatch.py"
HOSTILE_LIB=$ROOT/build/fixtures/libhostile_lib.so
HOSTILE_BIN=$ROOT/build/fixtures/hostile_lib-pie
# Starting the sampler, a last drain and writing the output take well
# under a second; the rest of the margin is for a machine shared with
# other builds.
MARGIN_S=3
MAX_RSS_KB=$((100 * 1024))
[ -x "$HOSTILE_BIN" ] && [ -f "$HOSTILE_LIB" ] || fail "build/fixtures is not built: run make unit"
[ -x /usr/bin/time ] || fail "/usr/bin/time is not installed (the time package; make deps)"

# slow_lib DIR: makes DIR/libslow.so, a library that is slow to read
# but takes no memory: stripped, it names its debug file by
# .gnu_debuglink, and the file of that name beside it (a sparse 256 MiB
# file) has the wrong CRC, which takes reading it whole to find out
# (~0.2 s, twice: in the process's root, then in ours). Mapped below
# another library, it delays the snapshot of that one. Prints the path.
slow_lib() {
	local dir=$1
	if [ ! -f "$T/libslow.so" ]; then
		echo x >"$T/slow.debug"
		(cd "$T" && objcopy --strip-all --add-gnu-debuglink=slow.debug "$HOSTILE_LIB" libslow.so) ||
			fail "cannot build libslow.so"
		rm "$T/slow.debug"
		truncate -s 256M "$T/sparse.debug"
	fi
	mkdir -p "$dir"
	cp "$T/libslow.so" "$dir/libslow.so"
	ln -sf "$T/sparse.debug" "$dir/slow.debug"
	echo "$dir/libslow.so"
}

# fifo_rounds race|slow COUNT: processes that swap a dlclosed library
# for a FIFO (71_hostile_fifo_after_dlclose.sh), one after another. Each
# swaps its own copy, and maps its own copy of the slow library (the
# symbolizer caches a table by file, and a cached one is quick). A slow
# round's process lives long enough for its snapshot to end while it
# runs, and the next one waits for that.
fifo_rounds() {
	local slow=- hot_ms=2 life=0.25 pause=0 i
	[ "$1" = slow ] && hot_ms=30 life=0.8 pause=0.3
	mkdir -p "$T/libs"
	for i in $(seq "$2"); do
		[ "$1" = slow ] && slow=$(slow_lib "$T/libs/slow-$i")
		cp "$HOSTILE_LIB" "$T/libs/libhot-$1-$i.so"
		"$HOSTILE_BIN" fifo "$T/libs/libhot-$1-$i.so" "$slow" "$hot_ms" "$life" >/dev/null ||
			echo "round $1 $i failed" >>"$T/rounds.err"
		sleep "$pause"
	done
}

# release_fifos: wakes anything still blocked opening one of our FIFOs (a
# profiler without the gate, sampling system-wide while the test ran):
# opening a FIFO read-write never blocks, and counts as its writer.
release_fifos() {
	local f
	for f in "$T"/libs/*.so; do
		[ -p "$f" ] && { exec 3<>"$f"; exec 3>&-; }
	done
	return 0
}
trap 'release_fifos; cleanup' EXIT

# record_hostile NAME SECONDS ARGS...: `ebprof record -d SECONDS ARGS
# --format folded -o $T/NAME.folded`, its stderr in $T/NAME.err; fails
# the test unless it starts sampling within LOAD_MAX_S, exits 0 within
# SECONDS + MARGIN_S of that start, and keeps its peak RSS under
# MAX_RSS_KB. The end is timed from the "sampling" line, not from the
# launch: loading (the verifier's check of the unwinder) takes 1-4 s on
# a busy 2-core machine, which is not what these tests are about. A hang
# is killed at SECONDS + 30 and reported. Sets WALL (seconds from launch
# to exit), LOAD (launch to sampling) and RSS_KB.
LOAD_MAX_S=10
record_hostile() {
	local name=$1 secs=$2 rc pid t0 t1 t2
	shift 2
	t0=$(date +%s.%N)
	/usr/bin/time -f "%e %M" -o "$T/$name.time" \
		timeout -s KILL $((secs + 30)) "$EBPROF" record -d "$secs" "$@" \
		--format folded -o "$T/$name.folded" 2>"$T/$name.err" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null && ! grep -qs '^ebprof: sampling' "$T/$name.err"; do
		sleep 0.05
	done
	t1=$(date +%s.%N)
	wait "$pid"
	rc=$?
	t2=$(date +%s.%N)
	read -r WALL RSS_KB < <(tail -n 1 "$T/$name.time")
	[ "$rc" -ne 137 ] || fail "$name: ebprof record hung: killed after $((secs + 30)) s: $(cat "$T/$name.err")"
	[ "$rc" -eq 0 ] || fail "$name: ebprof record exited $rc: $(cat "$T/$name.err")"
	LOAD=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	awk -v l="$LOAD" -v m="$LOAD_MAX_S" 'BEGIN { exit !(l <= m) }' ||
		fail "$name: ebprof record took $LOAD s to start sampling (bound: $LOAD_MAX_S s)"
	awk -v a="$t1" -v b="$t2" -v m=$((secs + MARGIN_S)) 'BEGIN { exit !(b - a <= m) }' ||
		fail "$name: ebprof record -d $secs ended $(awk -v a="$t1" -v b="$t2" \
			'BEGIN { printf "%.2f", b - a }') s after it started sampling" \
			"(more than $MARGIN_S s over; $LOAD s to load)"
	[ "$RSS_KB" -le "$MAX_RSS_KB" ] ||
		fail "$name: ebprof record's peak RSS was $RSS_KB kB (bound: $MAX_RSS_KB kB)"
}

# refused CAUSE NAME: the count of "CAUSE N" in record's line of files not opened.
refused() {
	sed -n "s/.*files of profiled processes not opened: .*$1 \([0-9]*\).*/\1/p" "$T/$2.err" |
		head -1 | grep . || echo 0
}
