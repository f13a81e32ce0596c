# The symbolizer's memory stays bounded while short-lived processes come
# and go: each one is snapshot at its first sample and its record dropped
# once a drain has used it. One recording (of the children only, -c, so
# that other work on the host cannot add its own symbol tables) sees 200
# children, then 400 more; its resident memory after the 600 is within a
# few MB of what it was after the first 200, and it holds only the records
# of the last drain or two at the end.
source "$(dirname "$0")/lib.bash"

rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

"$EBPROF" record -c shortlived -F 199 -d 600 --drain-interval-ms 500 --format folded \
	-o "$T/short.folded" 2>"$T/summary" &
REC=$!; BG_PIDS+=("$REC")
sleep 1
"$EX/shortlived" 200 10 || fail "the shortlived loop failed"
sleep 1.2 # two drains: the last children's records are used and dropped
first=$(rss_kb "$REC")
"$EX/shortlived" 400 10 || fail "the shortlived loop failed"
sleep 1.2
second=$(rss_kb "$REC")
kill -INT "$REC"
wait "$REC" || fail "ebprof record exited $?: $(cat "$T/summary")"
cat "$T/summary"

total=$($FOLDED_PY "$T/short.folded" total shortlived)
at_least "$total" 300 || fail "only $total samples of 600 children (want ~1200)"
growth=$((second - first))
echo "RSS after 200 children: $first kB; after 600: $second kB (+$growth kB)"
[ "$growth" -le 3072 ] || fail "RSS grew by $growth kB over 400 more short-lived processes"
held=$(sed -n 's/.*; \([0-9]*\) process records held.*/\1/p' "$T/summary")
[ -n "$held" ] || fail "the summary does not say how many process records are held"
[ "$held" -le 10 ] || fail "$held process records held after the children exited"
ok "memory bounded: +$growth kB RSS from 200 to 600 short-lived processes, $held records held"
