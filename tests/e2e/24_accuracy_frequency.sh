# The frequency sweep: at 49, 99, 499 and 999 Hz, the samples ebprof records
# of a process are within 5% of frequency x the CPU time the process used.
#
# Four recordings run at once, one per frequency, each watching the command
# name of a private copy of spin. Only when all four have their perf events open do two spin
# processes start; each burns SPIN_CPU seconds of CPU and prints the CPU
# time it used (getrusage), then exits, and the recordings are stopped. So
# every recording sees the whole life of the targets, and the expected
# count is exact: frequency x the sum of the printed CPU times.
#
# 5% must stand well above chance at the lowest frequency: 2 x 18 CPU-s at
# 49 Hz is about 1,760 samples, where even a Poisson count (the timer is
# more regular than that) has a 2.4% standard deviation.
source "$(dirname "$0")/lib.bash"
source "$ROOT/tests/accuracy/acc.bash"

SPIN_CPU=${SPIN_CPU:-18}
FREQS=(49 99 499 999)
ncpu=$(nproc)
have_symbols "$EX/spin" spin_burn main
# A command name of our own: the recordings select by name, and another
# test run on the same machine must not add its spin processes to ours.
NAME=spin-$$
cp "$EX/spin" "$T/$NAME"

eb=()
for f in "${FREQS[@]}"; do
	"$EBPROF" record -c "$NAME" -F "$f" -d 600 --format folded -o "$T/f$f.folded" \
		2>"$T/f$f.log" &
	eb+=($!)
	BG_PIDS+=($!)
done

# perf_fds PID: how many perf events the process holds open.
perf_fds() {
	local n=0 fd
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:[perf_event]" ] && n=$((n + 1))
	done
	echo "$n"
}
for i in "${!eb[@]}"; do
	for _ in $(seq 100); do
		[ "$(perf_fds "${eb[$i]}")" -ge "$ncpu" ] && break
		kill -0 "${eb[$i]}" 2>/dev/null || fail "ebprof at ${FREQS[$i]} Hz died: $(cat "$T/f${FREQS[$i]}.log")"
		sleep 0.1
	done
	[ "$(perf_fds "${eb[$i]}")" -ge "$ncpu" ] || fail "ebprof at ${FREQS[$i]} Hz never opened its events"
done
sleep 0.5 # the events are open; give the attach that follows a moment

"$T/$NAME" "$SPIN_CPU" 300 >"$T/spin1.out" &
s1=$!
"$T/$NAME" "$SPIN_CPU" 300 >"$T/spin2.out" &
s2=$!
wait "$s1" "$s2"
sleep 0.2
kill -INT "${eb[@]}"
for i in "${!eb[@]}"; do
	wait "${eb[$i]}" || fail "ebprof at ${FREQS[$i]} Hz exited $?: $(cat "$T/f${FREQS[$i]}.log")"
done
cpu=$(awk '{ s += $1 } END { printf "%.3f", s }' "$T/spin1.out" "$T/spin2.out")
echo "spin: $cpu CPU-seconds in two processes"

rc=0
for f in "${FREQS[@]}"; do
	got=$($FOLDED_PY "$T/f$f.folded" total "$NAME")
	want=$(awk -v f="$f" -v c="$cpu" 'BEGIN { printf "%.0f", f * c }')
	dev=$(awk -v g="$got" -v w="$want" 'BEGIN { printf "%+.1f", 100 * (g - w) / w }')
	if within "$got" "$want" "$(awk -v w="$want" 'BEGIN { print 0.05 * w }')"; then
		echo "ok:   $f Hz: $got samples, expected $want ($f x $cpu CPU-s): $dev%"
	else
		echo "FAIL: $f Hz: $got samples, expected $want ($f x $cpu CPU-s): $dev%, beyond 5%"
		rc=1
	fi
	[ -n "${ACC_TABLE:-}" ] && printf 'frequency sweep\tsamples at %s Hz\t%s\t%s (%s%%)\t-\n' \
		"$f" "$want" "$got" "$dev" >>"$ACC_TABLE"
done
[ "$rc" -eq 0 ] || fail "sample counts do not follow frequency x CPU time (see above)"
ok "sample counts within 5% of frequency x CPU time at ${FREQS[*]} Hz"
