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

# record_hostile NAME SECONDS ARGS...: `ebprof record -d SECONDS ARGS
# --format folded -o $T/NAME.folded`, its stderr in $T/NAME.err; fails
# the test unless it exits 0 within SECONDS + MARGIN_S with a peak RSS
# under MAX_RSS_KB. A hang is killed at SECONDS + 30 and reported. Sets
# WALL (seconds) and RSS_KB.
record_hostile() {
	local name=$1 secs=$2 rc
	shift 2
	/usr/bin/time -f "%e %M" -o "$T/$name.time" \
		timeout -s KILL $((secs + 30)) "$EBPROF" record -d "$secs" "$@" \
		--format folded -o "$T/$name.folded" 2>"$T/$name.err"
	rc=$?
	read -r WALL RSS_KB < <(tail -n 1 "$T/$name.time")
	[ "$rc" -ne 137 ] || fail "$name: ebprof record hung: killed after $((secs + 30)) s: $(cat "$T/$name.err")"
	[ "$rc" -eq 0 ] || fail "$name: ebprof record exited $rc: $(cat "$T/$name.err")"
	awk -v w="$WALL" -v m=$((secs + MARGIN_S)) 'BEGIN { exit !(w <= m) }' ||
		fail "$name: ebprof record -d $secs took $WALL s (more than $MARGIN_S s over)"
	[ "$RSS_KB" -le "$MAX_RSS_KB" ] ||
		fail "$name: ebprof record's peak RSS was $RSS_KB kB (bound: $MAX_RSS_KB kB)"
}

# refused CAUSE NAME: the count of "CAUSE N" in record's line of files not opened.
refused() {
	sed -n "s/.*files of profiled processes not opened: .*$1 \([0-9]*\).*/\1/p" "$T/$2.err" |
		head -1 | grep . || echo 0
}
