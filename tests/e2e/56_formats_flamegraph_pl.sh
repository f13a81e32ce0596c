# flamegraph.pl as a second reader of our folded output: a real recording
# (the 70/30 workload plus everything else on the machine, kernel frames
# included) is read by flamegraph.pl without a line refused, and its graph
# has exactly the boxes of ours, drawn by `ebprof render` from the same file:
# the same names with the same sample counts.
source "$(dirname "$0")/lib.bash"
FG=$(flamegraph_pl)
command -v perl >/dev/null || fail "perl is missing"

bg "$EX/split7030" 15; A=$BG
sleep 0.3
"$EBPROF" record -F 999 -d 3 --format folded -o "$T/rec.folded" 2>"$T/summary" ||
	fail "ebprof record exited $?: $(cat "$T/summary")"
total=$($FOLDED_PY "$T/rec.folded" total)
at_least "$total" 1000 || fail "only $total samples recorded system-wide"
lines=$(wc -l <"$T/rec.folded")
grep -q '_\[k\]' "$T/rec.folded" || fail "no kernel frames in a system-wide recording"

perl "$FG" "$T/rec.folded" >"$T/theirs.svg" 2>"$T/fg.err" || fail "flamegraph.pl exited $?: $(cat "$T/fg.err")"
[ -s "$T/fg.err" ] && fail "flamegraph.pl complained about our folded output: $(head -5 "$T/fg.err")"
theirs=$(grep -o '<title>all ([0-9,]* samples' "$T/theirs.svg" | tr -dc 0-9)
[ "$theirs" = "$total" ] || fail "flamegraph.pl counts ${theirs:-no} samples in all, our file has $total"
ok "flamegraph.pl read all $lines lines ($total samples) of a system-wide recording"

"$EBPROF" render "$T/rec.folded" -o "$T/ours.svg" 2>"$T/render.err" || fail "ebprof render failed: $(cat "$T/render.err")"
cmp=$(/usr/bin/python3 "$ROOT/tests/e2e/svgboxes.py" "$T/ours.svg" "$T/theirs.svg") ||
	fail "our graph and flamegraph.pl's differ: $cmp"
ok "our SVG and flamegraph.pl's have the same boxes: $cmp"
