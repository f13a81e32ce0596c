# Through the real sampler: a C++ program stripped of every symbol, whose
# names live only in a separate debug file found through .gnu_debuglink,
# shows its template function demangled exactly as `c++filt -i` prints it.
source "$(dirname "$0")/lib.bash"
command -v g++ >/dev/null || fail "g++ is not installed (make deps installs it)"

g++ -O2 -g -fno-omit-frame-pointer -o "$T/tmpl" "$(dirname "$0")/tmpl.cpp" || fail "g++ failed"
mangled=$(nm "$T/tmpl" | awk '$3 ~ /burn_template/ { print $3 }')
[ -n "$mangled" ] || fail "no burn_template symbol in the fixture"
want=$(c++filt -i "$mangled")
objcopy --only-keep-debug "$T/tmpl" "$T/tmpl.debug"
objcopy --strip-all --add-gnu-debuglink="$T/tmpl.debug" "$T/tmpl" "$T/tmpl-stripped"
nm "$T/tmpl-stripped" 2>&1 | grep -q burn_template && fail "the stripped copy still has symbols"

bg "$T/tmpl-stripped" 8; A=$BG
sleep 0.3
"$EBPROF" record -p "$A" -F 499 -d 3 --format folded -o "$T/cpp.folded" 2>"$T/summary" ||
	fail "ebprof record exited $?: $(cat "$T/summary")"
pct=$($FOLDED_PY "$T/cpp.folded" self tmpl-stripped "$want")
at_least "$pct" 90 || {
	sort -t' ' -k2 -n "$T/cpp.folded" | tail -3
	fail "'$want' (c++filt -i of $mangled) is the leaf of only $pct% of samples"
}
ok "stripped C++ binary named from its debug file: '$want' in $pct% of samples"
