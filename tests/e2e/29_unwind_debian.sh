# Debian's own binaries, built without frame pointers and stripped: gzip -9
# on a stream, sort on a big file, and a perl loop. ebprof (tables), perf
# --call-graph fp and perf --call-graph dwarf record the same processes at
# the same time, and for each we count the user-mode samples whose
# outermost user frame is _start (a stripped binary's _start has no
# symbol: the return address in it, a few bytes past the ELF entry point).
# ebprof must reach _start in at least 99%; perf's two figures are printed
# beside it (the README's table comes from here).
source "$(dirname "$0")/lib.bash"
source "$ROOT/tests/accuracy/acc.bash"

# entry_range BINARY: the file offsets of its _start: [entry, entry + 0x40).
entry_range() {
	local entry type off va fsz rest
	entry=$(readelf -h "$1" | awk '/Entry point/ { print $4 }')
	while read -r type off va _ fsz rest; do
		[ "$type" = LOAD ] || continue
		if (( entry >= va && entry < va + fsz )); then
			printf '%x %x\n' $((entry - va + off)) $((entry - va + off + 64))
			return
		fi
	done < <(readelf -lW "$1")
}

# sort reads its whole input before it sorts: 8M lines keep it busy ~10 s.
awk 'BEGIN { srand(7); for (i = 0; i < 8000000; i++) print int(rand() * 1e9), i }' >"$T/numbers"
( yes "the quick brown fox jumps over the lazy dog $RANDOM" | head -c 4G | gzip -9 >/dev/null ) &
SUB=$!
BG_PIDS+=("$SUB")
bg sort --parallel=1 -S 1G "$T/numbers"
SO=$BG
bg perl -e 'my $x = 0; for my $i (1 .. 4e9) { $x += $i % 7 } print $x'
PL=$BG
sleep 1
GZ=$(pgrep -x gzip -P "$SUB")
[ -n "$GZ" ] || fail "gzip did not start"

"$PERF" record -q -F 499 --call-graph fp -p "$GZ,$SO,$PL" -o "$T/fp.data" >"$T/fp.log" 2>&1 &
PFP=$!
"$PERF" record -q -F 499 --call-graph dwarf -p "$GZ,$SO,$PL" -o "$T/dwarf.data" \
	>"$T/dwarf.log" 2>&1 &
PDW=$!
"$EBPROF" record --unwind dwarf -p "$GZ" -p "$SO" -p "$PL" -F 499 -d 300 --format folded \
	-o "$T/ebprof.folded" 2>"$T/summary" &
R=$!
wait_sampling "$T/summary"
wait_cpu 3 120 "$GZ" "$SO" "$PL"
kill -INT "$R" "$PFP" "$PDW"
wait "$R" || fail "ebprof record exited $?: $(cat "$T/summary")"
wait "$PFP" "$PDW"
cat "$T/summary"
perf_fold "$T/fp.data" "$T/fp.folded"
perf_fold "$T/dwarf.data" "$T/dwarf.folded"

rc=0
for prog in gzip sort perl; do
	bin=$(command -v "$prog")
	read -r lo hi < <(entry_range "$bin")
	line="$prog:"
	for tool in ebprof fp dwarf; do
		read -r pct hit tot < <($FOLDED_PY "$T/$tool.folded" entry "$prog" "$prog" "$lo" "$hi")
		line="$line $tool $pct% of $tot,"
		[ "$tool" = ebprof ] || continue
		at_least "$tot" 300 || { echo "$prog: only $tot samples"; rc=1; }
		at_least "$pct" 99 || { echo "$prog: _start outermost in only $pct%"; rc=1
			grep "^$prog;" "$T/ebprof.folded" | sort -t' ' -k2 -nr | head -5; }
	done
	echo "outermost user frame _start: ${line%,}"
done
[ "$rc" -eq 0 ] || fail "ebprof did not reach _start in 99% of a Debian binary's samples"
ok "ebprof reaches _start in >= 99% of gzip's, sort's and perl's samples"
