# `ebprof render` reads `perf script` output directly: a real `perf record
# -g` of the 70/30 workload becomes folded stacks with every sample counted
# once, the process name first, caller-first frames, no +0x offsets, and the
# 70/30 split; from a file and from stdin, detected without --input.
source "$(dirname "$0")/lib.bash"

perf record -q -g -F 999 -o "$T/perf.data" -- "$EX/split7030-leaffp" 4 >/dev/null 2>"$T/perf.err" ||
	fail "perf record failed: $(cat "$T/perf.err")"
perf script -i "$T/perf.data" >"$T/perf.txt" 2>/dev/null || fail "perf script failed"
samples=$(grep -c '^[^[:space:]#]' "$T/perf.txt")
at_least "$samples" 400 || fail "perf recorded only $samples samples (a busy machine?)"

"$EBPROF" render --format folded "$T/perf.txt" -o "$T/perf.folded" 2>"$T/err" ||
	fail "render of perf script failed: $(cat "$T/err")"
total=$($FOLDED_PY "$T/perf.folded" total)
[ "$total" -eq "$samples" ] || fail "perf script has $samples samples, the folded output $total"
grep -q '+0x' "$T/perf.folded" && fail "offsets were not stripped: $(grep -m1 '+0x' "$T/perf.folded")"
read -r pct a b < <($FOLDED_PY "$T/perf.folded" pair split7030-leaff burn_seventy burn_thirty)
within "$pct" 70 6 || fail "burn_seventy has $pct% of the split ($a vs $b)"
chain=$($FOLDED_PY "$T/perf.folded" chain split7030-leaff burn_seventy)
[[ $chain == split7030-leaff\;*main\;run_split\;burn_seventy ]] ||
	fail "expected split7030-leaff;...;main;run_split;burn_seventy, got $chain"
ok "perf script: $total samples, burn_seventy $pct%, $chain"

# stdin and the explicit --input give the same
"$EBPROF" render --format folded <"$T/perf.txt" >"$T/stdin.folded" 2>/dev/null
cmp -s "$T/perf.folded" "$T/stdin.folded" || fail "stdin gave a different profile"
"$EBPROF" render --input perf-script --format folded "$T/perf.txt" >"$T/forced.folded" 2>/dev/null
cmp -s "$T/perf.folded" "$T/forced.folded" || fail "--input perf-script gave a different profile"
"$EBPROF" render "$T/perf.txt" -o "$T/perf.svg" && xmllint --noout "$T/perf.svg" ||
	fail "no SVG from perf script"
ok "perf script from stdin, with --input, and to SVG"

# kernel frames keep the _[k] suffix (a timer interrupt lands in the kernel
# now and then; perf script marks those frames [kernel.kallsyms])
if grep -q 'kernel.kallsyms' "$T/perf.txt"; then
	grep -q '_\[k\]' "$T/perf.folded" || fail "kernel frames lost their _[k] suffix"
	ok "kernel frames are marked _[k]"
fi
