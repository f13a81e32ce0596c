# `ebprof render` turns folded text into a well-formed SVG: our own output,
# flamegraph.pl-style input, merged files, and hostile names that must be
# escaped. Malformed lines are reported, not silently dropped.
source "$(dirname "$0")/lib.bash"

printf '%s\n' 'app;main;work;spin 70' 'app;main;rest 30' 'app;main;read_[k] 5' \
	'bad line without count' >"$T/a.folded"
printf '%s\n' \
	'evil;main;<script>alert(1)</script> 3' \
	"evil;main;a\"b'c&d<e>f 2" \
	"evil;main;$(printf 'ctl\001\002x') 1" \
	"evil;main;$(printf 'bad\xff\xfeutf8') 1" \
	"evil;main;$(head -c 10000 /dev/zero | tr '\0' 'L') 1" >"$T/b.folded"

"$EBPROF" render "$T/a.folded" "$T/b.folded" -o "$T/r.svg" 2>"$T/err" ||
	fail "render failed: $(cat "$T/err")"
grep -q "skipped 1 malformed line" "$T/err" || fail "malformed line not reported: $(cat "$T/err")"
xmllint --noout "$T/r.svg" || fail "rendered SVG is not well-formed"
grep -q '<script>alert' "$T/r.svg" && fail "a hostile name reached the SVG unescaped"
grep -q 'spin' "$T/r.svg" || fail "frames missing from the SVG"
ok "render: merged, well-formed, hostile names escaped"

# folded in, folded out: a merge that keeps every count
"$EBPROF" render --format folded "$T/a.folded" "$T/a.folded" -o "$T/m.folded" 2>/dev/null
total=$($FOLDED_PY "$T/m.folded" total)
[ "$total" -eq 210 ] || fail "merging two copies gave $total samples, want 210"
grep -q '^app;main;read_\[k\] 10$' "$T/m.folded" || fail "kernel suffix lost in the round trip"
ok "render --format folded merges exactly (210 samples)"

# stdin
"$EBPROF" render <"$T/a.folded" >"$T/s.svg" 2>/dev/null && xmllint --noout "$T/s.svg" ||
	fail "render from stdin failed"
"$EBPROF" render "$T/missing.folded" -o "$T/x.svg" 2>"$T/err" && fail "a missing file succeeded"
grep -q "cannot open" "$T/err" || fail "unclear error for a missing file: $(cat "$T/err")"
ok "render reads stdin and names a missing file"

# One big folded file drawn as an SVG is read in two passes that keep only
# the frames drawn (render/prune.h); stdin cannot be rewound and is read
# whole. The two graphs must be the same file, byte for byte, and the
# malformed-line report the same.
/usr/bin/python3 "$ROOT/tests/bench/gen_folded.py" 50000 "$T/big.folded" || fail "gen_folded.py failed"
echo 'a line without a count' >>"$T/big.folded"
"$EBPROF" render "$T/big.folded" -o "$T/pruned.svg" 2>"$T/pruned.err" || fail "render of a file failed"
"$EBPROF" render -o "$T/whole.svg" <"$T/big.folded" 2>"$T/whole.err" || fail "render of stdin failed"
cmp -s "$T/pruned.svg" "$T/whole.svg" || fail "the two-pass SVG differs from the whole tree's"
grep -q "skipped 1 malformed line(s) of 50001" "$T/pruned.err" ||
	fail "the two-pass read did not report the bad line: $(cat "$T/pruned.err")"
sed 's/.*: skipped/skipped/' "$T/pruned.err" | cmp -s - <(sed 's/.*: skipped/skipped/' "$T/whole.err") ||
	fail "the reports differ: $(cat "$T/pruned.err" "$T/whole.err")"
ok "a 50k-stack file read in two passes gives the whole tree's SVG, byte for byte"
