# record's progress line. On a terminal (tmux), stderr shows one line
# after each drain with the elapsed and total time, the samples so far
# (which must grow), the processes seen and how to stop; when recording
# ends it is gone and the summary follows. With stderr redirected to a
# file, even from a terminal, stderr holds only the summary: no progress
# text, no carriage return.
source "$(dirname "$0")/tmux.bash"

bg "$EX/split7030" 300; A=$BG
tmux_start 120 60
tmux_type "build/ebprof record -p $A -d 8 --drain-interval-ms 500 --format folded -o $T/r.folded; echo EXIT=\$?"

# Sample counts seen in the progress line, in order, until ebprof exits.
counts=()
for _ in $(seq 100); do
	line=$(tmux_screen | grep 'Ctrl-C to stop early' || true)
	if [ -n "$line" ]; then
		[[ $line =~ ^ebprof:\ ([0-9]+)\ s\ of\ 8\ s,\ ([0-9]+)\ samples,\ ([0-9]+)\ process(es)?(,\ lost\ [0-9]+\ \(.*\))?\;\ Ctrl-C\ to\ stop\ early$ ]] ||
			fail "progress line not as documented: '$line'"
		n=${BASH_REMATCH[2]}
		procs=${BASH_REMATCH[3]}
		[ "${#counts[@]}" -eq 0 ] || [ "$n" -ge "${counts[-1]}" ] ||
			fail "sample count went down: ${counts[*]} then $n"
		[ "${#counts[@]}" -gt 0 ] && [ "$n" -eq "${counts[-1]}" ] || counts+=("$n")
		[ "$procs" -le 1 ] || fail "$procs processes seen with one -p: '$line'"
	fi
	tmux_has '^EXIT=' && break
	sleep 0.2
done
tmux_screen >"$T/screen"
cat "$T/screen"
grep -q '^EXIT=0$' "$T/screen" || fail "record did not exit 0: $(cat "$T/screen")"
[ "${#counts[@]}" -ge 4 ] || fail "the sample count grew only ${#counts[@]} times: ${counts[*]:-none}"
[ "${counts[-1]}" -gt "${counts[0]}" ] || fail "the sample count did not grow: ${counts[*]}"
ok "progress line: sample counts ${counts[*]}"
! grep -q 'Ctrl-C to stop early' "$T/screen" || fail "the progress line is still on the screen after the end"
grep -Eq '^ebprof: [0-9.]+ s at 99 Hz on [0-9]+ CPUs: [0-9]+ samples' "$T/screen" ||
	fail "no summary after the progress line"
ok "progress line erased; the summary starts at the left margin"

# stderr to a file, from the same terminal: only the summary.
tmux_type "clear; build/ebprof record -p $A -d 3 --drain-interval-ms 500 --format folded -o $T/r2.folded 2>$T/err; echo EXIT=\$?"
wait_for 15 tmux_has '^EXIT=' || fail "record with stderr redirected did not end"
tmux_has '^EXIT=0$' || fail "record with stderr redirected: $(tmux_screen)"
cat "$T/err"
grep -q $'\r' "$T/err" && fail "carriage return in redirected stderr"
grep -q 'Ctrl-C' "$T/err" && fail "progress text in redirected stderr"
grep -vq '^ebprof: ' "$T/err" && fail "a line that is not the summary in stderr: $(grep -v '^ebprof: ' "$T/err")"
grep -q ' samples, ' "$T/err" && grep -q '^ebprof: lost ' "$T/err" || fail "no summary in stderr"
ok "stderr to a file: $(wc -l <"$T/err") summary lines, no progress"
