# The default output: an interactive SVG of a recording, well-formed, with
# the workload's functions, the zoom and search script, and bad arguments
# refused with a message that names them.
source "$(dirname "$0")/lib.bash"

bg "$EX/split7030" 6; A=$BG
(cd "$T" && "$EBPROF" record -p "$A" -d 2 2>"$T/summary") || fail "record failed: $(cat "$T/summary")"
[ -s "$T/ebprof.svg" ] || fail "no default ebprof.svg"
xmllint --noout "$T/ebprof.svg" || fail "SVG is not well-formed"
for want in burn_seventy burn_thirty '<script' 'Matched' ; do
	grep -q "$want" "$T/ebprof.svg" || fail "SVG lacks $want"
done
ok "default SVG output is well-formed and interactive"

for bad in "-F 0" "-F abc" "-d -3" "-p 0" "-p 999999999" "--format png" "-c waytoolongprocessname"; do
	# shellcheck disable=SC2086
	if "$EBPROF" record $bad -o "$T/x.svg" 2>"$T/err"; then fail "record accepted '$bad'"; fi
	grep -qi "invalid\|no process\|expected" "$T/err" || fail "unclear error for '$bad': $(cat "$T/err")"
done
ok "bad arguments are refused with a reason"
