# A known change, recorded for real: splitpct 70 (burn_first 70%, burn_second
# 30%) then splitpct 50. `ebprof diff` must draw burn_first blue, down about
# 28.6% (70 -> 50), and burn_second red, up about 66.7% (30 -> 50), with
# their callers unchanged once normalized.
source "$(dirname "$0")/lib.bash"

record_pct() {
	bg "$EX/splitpct-leaffp" "$1" 5
	sleep 0.3
	"$EBPROF" record -p "$BG" -F 999 -d 3 --format folded -o "$T/$1.folded" 2>"$T/$1.err" ||
		fail "recording splitpct $1: $(cat "$T/$1.err")"
	kill "$BG" 2>/dev/null
}
record_pct 70
record_pct 50

"$EBPROF" diff --normalize "$T/70.folded" "$T/50.folded" -o "$T/diff.svg" 2>"$T/err" ||
	fail "ebprof diff failed: $(cat "$T/err")"
xmllint --noout "$T/diff.svg" || fail "the diff SVG is not well-formed"
grep -q 'before normalized' "$T/diff.svg" || fail "the graph does not say it is normalized"

# "<title>NAME (N samples, P%; before B, after A, +X.XX%; self ...)</title><rect ... fill="#rrggbb"",
# the widest frame of that name: a sample taken on a function's first
# instruction, before it sets up its frame, skips its caller and makes a
# one-sample frame of the same name elsewhere in the graph.
frame() {
	grep -o "<title>$1 ([^<]*</title><rect[^>]*fill=\"#[0-9a-f]*\"" "$T/diff.svg" |
		sort -t'(' -k2 -n -r | head -1
}
first=$(frame burn_first)
second=$(frame burn_second)
[ -n "$first" ] && [ -n "$second" ] || fail "burn_first or burn_second not drawn"
pct_first=$(sed -n 's/.*after [0-9]*, \([-+][0-9.]*\)%; self.*/\1/p' <<<"$first")
pct_second=$(sed -n 's/.*after [0-9]*, \([-+][0-9.]*\)%; self.*/\1/p' <<<"$second")
fill_first=${first##*fill=\"}; fill_first=${fill_first%\"}
fill_second=${second##*fill=\"}; fill_second=${fill_second%\"}
within "$pct_first" -28.6 8 || fail "burn_first changed by $pct_first%, want about -28.6%: $first"
within "$pct_second" 66.7 15 || fail "burn_second changed by $pct_second%, want about +66.7%: $second"
[[ $fill_first == \#????ff* && $fill_first != '#ffffff' ]] ||
	fail "burn_first shrank but is not blue: $fill_first"
[[ $fill_second == \#ff* && $fill_second != '#ffffff' ]] ||
	fail "burn_second grew but is not red: $fill_second"
ok "diff: burn_first $pct_first% ($fill_first, blue), burn_second $pct_second% ($fill_second, red)"
