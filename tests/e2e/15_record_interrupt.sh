# Ctrl-C ends a recording early and still writes the whole output, with
# the summary; nothing is left half-written under the output's name.
source "$(dirname "$0")/lib.bash"

bg "$EX/split7030" 20; A=$BG
"$EBPROF" record -p "$A" -F 199 -d 60 -o "$T/int.svg" 2>"$T/summary" &
R=$!
sleep 3
kill -INT "$R"
for _ in $(seq 50); do kill -0 "$R" 2>/dev/null || break; sleep 0.1; done
kill -0 "$R" 2>/dev/null && fail "ebprof record did not stop within 5 s of SIGINT"
wait "$R" || fail "ebprof record exited $? after SIGINT: $(cat "$T/summary")"
[ -s "$T/int.svg" ] || fail "no SVG after SIGINT"
xmllint --noout "$T/int.svg" || fail "the SVG written after SIGINT is not well-formed"
grep -q burn_seventy "$T/int.svg" || fail "the SVG after SIGINT lacks burn_seventy"
ls "$T" | grep -q '\.tmp\.' && fail "a temporary file was left behind"
grep -q samples "$T/summary" || fail "no summary after SIGINT"
ok "SIGINT after 3 s of 60: valid SVG written; $(head -1 "$T/summary")"
