# `ebprof render`'s perf script import and the accuracy suite's collapser
# (tests/accuracy/perf_collapse.py, the reference our differential tests
# compare ebprof with) give the same folded stacks for one real `perf
# record -g`: from the field list that script reads, and from perf's
# default output (symbol offsets and timestamps), which we read too.
# perf_collapse.py writes spaces in names as '_'; we keep them, as folded
# text allows, so our side is compared with spaces mapped the same way.
source "$(dirname "$0")/lib.bash"
COLLAPSE=$ROOT/tests/accuracy/perf_collapse.py
[ -r "$COLLAPSE" ] || fail "$COLLAPSE is missing"

bg "$EX/split7030-leaffp" 8; A=$BG
bg "$EX/recurse-leaffp" 8; B=$BG
sleep 0.3
perf record -q -g -F 499 -p "$A,$B" -o "$T/perf.data" -- sleep 3 >/dev/null 2>"$T/perf.err" ||
	fail "perf record failed: $(cat "$T/perf.err")"
perf script -F comm,pid,tid,ip,sym,dso -i "$T/perf.data" >"$T/fields.txt" 2>/dev/null ||
	fail "perf script -F failed"
perf script -i "$T/perf.data" >"$T/default.txt" 2>/dev/null || fail "perf script failed"

/usr/bin/python3 "$COLLAPSE" <"$T/fields.txt" | sort >"$T/reference.folded" ||
	fail "perf_collapse.py failed"
[ -s "$T/reference.folded" ] || fail "perf_collapse.py wrote nothing"
ours() {
	"$EBPROF" render --format folded "$1" 2>"$T/err" |
		awk '{ n = $NF; $NF = ""; sub(/ $/, ""); gsub(/ /, "_"); c[$0] += n }
		     END { for (k in c) print k, c[k] }' | sort
}
ours "$T/fields.txt" >"$T/fields.folded"
diff -u "$T/reference.folded" "$T/fields.folded" >"$T/diff1" ||
	fail "perf script -F ...: ebprof and perf_collapse.py differ: $(head -20 "$T/diff1")"
ours "$T/default.txt" >"$T/default.folded"
diff -u "$T/reference.folded" "$T/default.folded" >"$T/diff2" ||
	fail "default perf script: ebprof and perf_collapse.py differ: $(head -20 "$T/diff2")"
lines=$(wc -l <"$T/reference.folded")
total=$(awk '{ s += $NF } END { print s }' "$T/reference.folded")
ok "perf script import = perf_collapse.py: $lines stacks, $total samples, both output forms"
