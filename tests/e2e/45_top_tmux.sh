# `ebprof top` on a terminal (tmux), on the 70/30 workload at 999 Hz with
# 5-second intervals (about 1,500 samples a window on a busy machine: the
# binomial error of a share is about 1.2 points, so ±7 holds every run):
#   - the captured screen shows burn_seventy above burn_thirty, ~70:30 of
#     their sum (the workload may get less than a whole CPU on a shared
#     machine, so the share, not the absolute percent, is what is fixed);
#   - a resize redraws at once: header on the first row, key help on the
#     last, every row a known line;
#   - t sorts by total, k hides kernel frames;
#   - q, Ctrl-C and SIGTERM each exit 0 and leave the terminal exactly as
#     it was (stty -g before and after) with the prompt back.
source "$(dirname "$0")/tmux.bash"

bg "$EX/split7030" 300; A=$BG
tmux_start 100 24
TOP="build/ebprof top -p $A -F 999 --drain-interval-ms 5000"

# header VALUE: the first row of the screen.
header() { tmux_screen | head -1; }

# A new interval drawn: the header changed from $1.
new_interval() { [ "$(header)" != "$1" ] && [[ $(header) == "ebprof top: "* ]]; }

# check_rows SCREENFILE: every non-empty row is one the view draws.
check_rows() {
	local bad
	bad=$(grep -Ev '^(ebprof top: .*|sorted by (self|total); kernel frames (shown|hidden).*|  SELF%  TOTAL%  PROCESS +FUNCTION|s: sort by self.*| +[0-9]+\.[0-9] +[0-9]+\.[0-9]  \S.*|)$' "$1")
	[ -z "$bad" ] || fail "rows the view does not draw (garbage) in $(cat "$1"): $bad"
}

# --- figures ---------------------------------------------------------------
tmux_type "stty -g > $T/stty.before; $TOP; echo EXIT=\$?; stty -g > $T/stty.after"
wait_for 15 tmux_has '^ebprof top: 999 Hz' || fail "no header: $(tmux_screen)"
first=$(header)
wait_for 15 new_interval "$first" || fail "no second interval: $(tmux_screen)"
tmux_screen >"$T/screen"
cat "$T/screen"
check_rows "$T/screen"
grep -Eq '^ebprof top: 999 Hz on [0-9]+ CPUs, [0-9.]+ s: [0-9]+ samples in 1 process; lost [0-9]+ since start' "$T/screen" ||
	fail "header lacks rate, samples or losses: $(head -1 "$T/screen")"
read -r s70 line70 < <(awk '$3 == "split7030" && $4 == "burn_seventy" { print $1, NR; exit }' "$T/screen")
read -r s30 line30 < <(awk '$3 == "split7030" && $4 == "burn_thirty" { print $1, NR; exit }' "$T/screen")
[ -n "${s70:-}" ] && [ -n "${s30:-}" ] || fail "burn_seventy or burn_thirty not on the screen"
[ "$line70" -lt "$line30" ] || fail "burn_seventy (row $line70) is not above burn_thirty (row $line30)"
share=$(awk -v a="$s70" -v b="$s30" 'BEGIN { printf "%.1f", 100 * a / (a + b) }')
within "$share" 70 7 || fail "burn_seventy is $share% of the two (want 70±7): $s70 vs $s30"
ok "screen: burn_seventy $s70% above burn_thirty $s30% of one CPU: $share:$(awk -v s="$share" 'BEGIN { print 100 - s }')"

# --- resize: redrawn at once, before the next interval ----------------------
for size in "60 14" "120 30"; do
	read -r cols rows <<<"$size"
	h=$(header)
	wait_for 10 new_interval "$h" || fail "no new interval before the resize"
	tmux_cmd resize-window -x "$cols" -y "$rows"
	sleep 0.8 # the next drain is 4 s away: only the resize can redraw
	tmux_screen >"$T/resized"
	check_rows "$T/resized"
	[ "$(wc -l <"$T/resized")" -eq "$rows" ] || fail "the pane is not $rows rows: $(cat "$T/resized")"
	[[ $(head -1 "$T/resized") == "ebprof top: 999 Hz"* ]] || fail "at ${cols}x$rows the first row is not the header: $(cat "$T/resized")"
	[[ $(tail -1 "$T/resized") == "s: sort by self"* ]] || fail "at ${cols}x$rows the last row is not the key help: $(cat "$T/resized")"
	[ "$(grep -c '^ebprof top: ' "$T/resized")" -eq 1 ] || fail "two headers after the resize: $(cat "$T/resized")"
	[ "$(awk -v w="$cols" 'length($0) > w' "$T/resized" | wc -l)" -eq 0 ] || fail "rows wider than $cols"
	ok "resized to ${cols}x$rows: redrawn, header on top, key help at the bottom, no stray rows"
done

# --- keys -------------------------------------------------------------------
tmux_cmd send-keys t
wait_for 3 tmux_has '^sorted by total' || fail "t did not sort by total: $(tmux_screen)"
tmux_screen >"$T/total"
awk '/^ +[0-9]/ { if (seen && $2 > max) bad = 1; if (!seen || $2 > max) max = $2; seen = 1 } END { exit bad }' "$T/total" ||
	fail "sorted by total, but the totals are not descending: $(cat "$T/total")"
ok "t: sorted by total ($(awk '/^ +[0-9]/ { print $4; exit }' "$T/total") first)"
tmux_cmd send-keys k
wait_for 3 tmux_has 'kernel frames hidden' || fail "k did not hide kernel frames: $(tmux_screen)"
h=$(header)
wait_for 10 new_interval "$h" || fail "no interval with kernel frames hidden"
tmux_screen >"$T/nokernel"
! grep -q '_\[k\]' "$T/nokernel" || fail "kernel frames shown after k: $(cat "$T/nokernel")"
ok "k: no kernel frame on the screen"
tmux_cmd send-keys k s
wait_for 3 tmux_has '^sorted by self; kernel frames shown' || fail "k and s did not restore the view"

# --- q, Ctrl-C, SIGTERM: exit 0, terminal as it was --------------------------
check_exit() {
	wait_for 5 tmux_has '^EXIT=' || fail "$1: ebprof top did not exit: $(tmux_screen)"
	tmux_has '^EXIT=0$' || fail "$1: exit status $(tmux_screen | grep '^EXIT=')"
	wait_for 5 tmux_has '^PROMPT\$ ?$' || fail "$1: no prompt after exit: $(tmux_screen)"
	cmp -s "$T/stty.before" "$T/stty.after" ||
		fail "$1: terminal modes changed: $(cat "$T/stty.before") vs $(cat "$T/stty.after")"
	! tmux_has 'SELF%' || fail "$1: the view is still on the screen: $(tmux_screen)"
	ok "$1: exit 0, prompt back, stty -g unchanged"
}
tmux_cmd send-keys q
check_exit q

tmux_cmd send-keys C-l; tmux_cmd clear-history
rm -f "$T/stty.after"
tmux_type "clear; stty -g > $T/stty.before; $TOP; echo EXIT=\$?; stty -g > $T/stty.after"
wait_for 15 tmux_has '^ebprof top: 999 Hz' || fail "no header for Ctrl-C: $(tmux_screen)"
tmux_cmd send-keys C-c
check_exit Ctrl-C

rm -f "$T/stty.after"
tmux_type "clear; stty -g > $T/stty.before; sh -c 'echo \$\$ > $T/top.pid; exec $TOP'; echo EXIT=\$?; stty -g > $T/stty.after"
wait_for 15 tmux_has '^ebprof top: 999 Hz' || fail "no header for SIGTERM: $(tmux_screen)"
kill -TERM "$(cat "$T/top.pid")"
check_exit SIGTERM
