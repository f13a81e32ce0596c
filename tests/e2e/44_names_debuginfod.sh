# Issue 18, part 2: names from debug files fetched from debuginfod.
# Debian's libc.so.6 is named by .dynsym alone: malloc's internals
# (_int_malloc, _int_free) have no name in it. The test starts Debian's
# debuginfod on loopback, serving libc6-dbg's debug files unpacked in a
# private directory (the .deb that `make deps` keeps), and points ebprof's
# local debug root at an empty directory (EBPROF_DEBUG_ROOT), so that a
# name can only come from the fetch. A malloc loop (tests/fixtures/
# mallocfix.c) is profiled three times:
#  1. with the server: _int_malloc is named, one debug file is fetched;
#  2. with the URL on a closed port: the same code is grouped
#     ([libc.so.6+0x...]), no _int_malloc, and the failure is counted;
#  1b. with the server and --inline: the fetched file's DWARF is opened
#     for inlined functions once it has arrived (the summary counts libc's
#     file among those with DWARF, its debug sections held), not given
#     up on because libc's exported functions were named before it came;
#  3. with a server that accepts and never answers: the fetch is still in
#     flight when record ends, and record ends on time (6 s of recording
#     end in under 20 s, well before the 36 s that waiting out the 30 s
#     fetch bound would take; 7 s on a quiet machine, 13 s on a loaded
#     one) with no stalled drain: drains
#     do not wait for it; and the interrupted fetch is not cached as a miss.
source "$(dirname "$0")/lib.bash"

FIX=$ROOT/build/fixtures
[ -x "$FIX/mallocfix-pie" ] || fail "build/fixtures is not built: run make unit"
command -v debuginfod >/dev/null || fail "debuginfod is not installed: run make deps"
libc=$(dpkg-query -W -f='${Version}' libc6)
deb=$(ls /var/cache/ebprof-tests/libc6-dbg_"${libc//:/%3a}"_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "no libc6-dbg $libc in /var/cache/ebprof-tests: run make deps"
mkdir -p "$T/dbg" "$T/empty" "$T/cache1" "$T/cache2" "$T/cache3"
dpkg -x "$deb" "$T/dbg" || fail "dpkg -x $deb failed"
LIBC=$(ldd "$FIX/mallocfix-pie" | awk '$1 ~ /^libc\.so/ { print $3 }')
id=$(readelf -n "$LIBC" | awk '/Build ID/ { print $3 }')
[ -f "$T/dbg/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] ||
	fail "libc6-dbg $libc has no debug file for $LIBC (build-id $id)"
readelf -SW "$LIBC" | grep -q ' \.symtab ' && fail "$LIBC has a .symtab: nothing to fetch"

free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# record NAME URL [OPTION...]: profiles a fresh mallocfix for 6 s with
# DEBUGINFOD_URLS set to URL, and OPTIONs; $T/NAME.folded, $T/NAME.summary, and its wall time in
# $T/NAME.secs.
record() {
	local name=$1 url=$2 pid start
	"$FIX/mallocfix-pie" "mfix-$name" 40 >"$T/$name.out" &
	pid=$!; BG_PIDS+=("$pid")
	wait_for 5 grep -q ready "$T/$name.out" || fail "mallocfix did not start"
	start=$(date +%s.%N)
	DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$T/cache-$name EBPROF_DEBUG_ROOT=$T/empty \
		"$EBPROF" record -p "$pid" -F 499 -d 6 "${@:3}" --format folded -o "$T/$name.folded" \
		2>"$T/$name.summary" || fail "ebprof record ($name) exited $?: $(cat "$T/$name.summary")"
	awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", e - s }' >"$T/$name.secs"
	kill "$pid"
}

# leaves NAME: samples by user leaf frame, most first.
leaves() {
	/usr/bin/python3 - "$T/$1.folded" <<'PY'
import sys
from collections import Counter
c = Counter()
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    user = [f for f in stack.split(";")[1:] if not f.endswith("_[k]")]
    if user:
        c[user[-1]] += int(n)
for f, n in c.most_common():
    print(n, f)
PY
}

# 1. With the server.
PORT=$(free_port)
debuginfod -F -p "$PORT" -d "$T/index.sqlite" -t 0 -g 0 "$T/dbg" >"$T/debuginfod.log" 2>&1 &
SRV=$!; BG_PIDS+=("$SRV")
wait_for 30 grep -q "fts traversed source paths" "$T/debuginfod.log" ||
	fail "debuginfod did not index $T/dbg: $(tail -3 "$T/debuginfod.log")"
wait_for 10 /usr/bin/python3 -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5).read(1)" "http://127.0.0.1:$PORT/buildid/$id/debuginfo" 2>/dev/null ||
	fail "debuginfod does not serve libc's debug file (build-id $id)"
record served "http://127.0.0.1:$PORT"
leaves served >"$T/served.leaves"
# libc's debug file is the one the server has; another dynsym-only file
# sampled now and then (the vDSO) is asked for too, and rightly not found.
grep -Eq "debuginfod: 1 debug files fetched, [0-9]+ not found, 0 failed" "$T/served.summary" ||
	fail "the summary does not count one fetch: $(grep debuginfod "$T/served.summary")"
named=$(awk '$2 == "_int_malloc" || $2 == "_int_free" { n += $1 } END { print n + 0 }' "$T/served.leaves")
total=$(awk '{ n += $1 } END { print n + 0 }' "$T/served.leaves")
echo "served: $named of $total samples named _int_malloc/_int_free; top: $(head -3 "$T/served.leaves" | tr '\n' ' ')"
at_least "$named" $((total / 5)) || fail "libc's internal functions are not named from the fetched file"
ok "with the server: libc's internals named from the fetched debug file ($named of $total samples)"

# 1b. With the server and --inline: the fixture's own DWARF and libc's
# fetched debug file (MBs of debug sections) are both opened.
record inline "http://127.0.0.1:$PORT" --inline
line=$(grep 'inlined frames:' "$T/inline.summary")
echo "inline: $line"
grep -qE 'files with DWARF [2-9]' <<<"$line" &&
	awk '{ for (i = 1; i < NF; i++) if ($(i + 1) == "MiB" && $(i + 2) == "of" &&
		$(i + 3) == "debug") held = $i } END { exit !(held >= 1) }' <<<"$line" ||
	fail "with --inline, the fetched debug file's DWARF was not used: $line"
ok "with the server and --inline: libc's fetched DWARF is used for inlined functions"
kill "$SRV"; wait "$SRV" 2>/dev/null

# 2. The server stopped: its port is closed.
record down "http://127.0.0.1:$PORT"
leaves down >"$T/down.leaves"
grep -qE "debuginfod: 0 debug files fetched, 0 not found, [1-9][0-9]* failed" "$T/down.summary" ||
	fail "the failure is not counted: $(grep debuginfod "$T/down.summary")"
grep -q "_int_malloc\|_int_free" "$T/down.leaves" && fail "_int_malloc named without a server"
grouped=$(awk '$2 ~ /^\[libc\.so\.6\+0x[0-9a-f]+\]$/ { n += $1 } END { print n + 0 }' "$T/down.leaves")
total=$(awk '{ n += $1 } END { print n + 0 }' "$T/down.leaves")
echo "down: $grouped of $total samples in grouped libc frames; $(grep debuginfod "$T/down.summary")"
at_least "$grouped" $((total / 5)) || fail "libc's internal functions are not grouped without the server"
ok "server down: grouped names, the failure counted"

# 3. A server that accepts and never answers.
PORT=$(free_port)
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
conns = []
while True:
    c, _ = s.accept(); conns.append(c)
' "$PORT" &
BG_PIDS+=("$!")
wait_for 5 /usr/bin/python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])))' "$PORT" 2>/dev/null ||
	fail "the silent server did not start"
record silent "http://127.0.0.1:$PORT"
secs=$(cat "$T/silent.secs")
echo "silent: record of 6 s took $secs s; $(grep debuginfod "$T/silent.summary")"
grep -Eq "debuginfod: 0 debug files fetched, 0 not found, 0 failed .*, [1-9][0-9]* still in flight" \
	"$T/silent.summary" || fail "the fetch was not in flight at the end"
grep -q "^ebprof: the symbolizer stalled" "$T/silent.summary" &&
	fail "the symbolizer stalled (waiting for the fetch?): $(grep "^ebprof: the symbolizer stalled" "$T/silent.summary")"
awk -v s="$secs" 'BEGIN { exit !(s < 20) }' ||
	fail "record took $secs s for 6 s: it waited for the fetch"
grep -q "\[libc\.so\.6+0x" "$T/silent.folded" || fail "no grouped libc frames while the fetch hangs"
# libdebuginfod marks a fetch its callback ended as a miss in its cache
# (an empty file); ebprof's own abort is no miss, so the marker is gone.
[ -e "$T/cache-silent/$id/debuginfo" ] &&
	fail "the interrupted fetch left a negative-cache file: the next run would not ask"
ok "a fetch that hangs does not hold up the drains ($secs s for 6 s)"
