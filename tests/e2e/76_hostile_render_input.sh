# Issue 20, findings 5, 6 and 8: what `ebprof render` and `ebprof diff`
# do with input that is not a sane profile.
# 5. render /dev/zero grew to 6.8 GB in 20 s: it is binary input, said
#    at once. An endless stdin (no newline, ever) keeps memory bounded. A
#    50 MB line of 25M frames took 2.4 GB and wrote a 4 GB SVG: a stack
#    deeper than --max-depth is skipped and reported.
# 6. A count that would wrap the total made every later line malformed:
#    the output now does not depend on the order of the lines; diff
#    --normalize printed a "before" total above 2^64.
# 8. render DIR said "Input/output error".
source "$(dirname "$0")/hostile.bash"

# peak CMD...: runs CMD (stdin kept), its stderr in $T/peak.err; prints
# its exit status and peak RSS in kB ("RC KB").
peak() {
	/usr/bin/time -f "%M" -o "$T/peak.kb" "$@" >/dev/null 2>"$T/peak.err"
	echo "$? $(tail -n 1 "$T/peak.kb")"
}

# --- 5: binary input, endless input, a huge line ---
start=$SECONDS
kb=$(timeout 10 /usr/bin/time -f "%M" -o "$T/zero.kb" "$EBPROF" render /dev/zero -o "$T/zero.svg" 2>"$T/zero.err"; echo "rc=$?")
[ "${kb#rc=}" = 1 ] || fail "render /dev/zero: exit ${kb#rc=} (want 1, promptly): $(cat "$T/zero.err")"
[ $((SECONDS - start)) -le 2 ] || fail "render /dev/zero took $((SECONDS - start)) s"
grep -q "binary input (a NUL byte at offset 0)" "$T/zero.err" || fail "render /dev/zero said: $(cat "$T/zero.err")"
[ ! -e "$T/zero.svg" ] || fail "render /dev/zero wrote an output"
ok "render /dev/zero: 'binary input' at once"

read -r rc kb < <(head -c 1G /dev/zero | tr '\0' 'x' | peak "$EBPROF" render -o "$T/endless.svg")
[ "$rc" -eq 0 ] || fail "1 GB without a newline: exit $rc: $(cat "$T/peak.err")"
grep -q "skipped 1 malformed line(s) of 1, the first at line 1: 1 longer than 67108864 bytes (--max-line)" \
	"$T/peak.err" || fail "the endless line is not reported: $(cat "$T/peak.err")"
[ "$kb" -le $((200 * 1024)) ] || fail "1 GB without a newline took $kb kB (bound 200 MB)"
ok "1 GB on stdin without a newline: peak RSS $kb kB, the line skipped and reported"

python3 -c '
import sys
sys.stdout.write(";".join("abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(25000000)) + " 7\nok;main 1\n")' >"$T/deep.folded"
[ "$(stat -c %s "$T/deep.folded")" -gt 50000000 ] || fail "the deep line is not 50 MB"
read -r rc kb < <(peak "$EBPROF" render "$T/deep.folded" -o "$T/deep.svg")
[ "$rc" -eq 0 ] || fail "the 25M-frame line: exit $rc: $(cat "$T/peak.err")"
grep -q "1 deeper than 524288 frames (--max-depth)" "$T/peak.err" ||
	fail "the deep stack is not reported: $(cat "$T/peak.err")"
[ "$kb" -le $((300 * 1024)) ] || fail "the 25M-frame line took $kb kB (bound 300 MB)"
[ "$(stat -c %s "$T/deep.svg")" -lt $((1 << 20)) ] || fail "the SVG of the rest is $(stat -c %s "$T/deep.svg") bytes"
grep -q '>ok<\|ok (1 samples' "$T/deep.svg" || fail "the valid line is not drawn"
ok "a 50 MB line of 25M frames: skipped and reported, peak RSS $kb kB, SVG $(stat -c %s "$T/deep.svg") bytes"

# --- 6: huge counts, in either order; exact normalized totals ---
printf 'a;b 18446744073709551615\nc;d 5\ne 2\n' >"$T/wrap1.folded"
printf 'c;d 5\ne 2\na;b 18446744073709551615\n' >"$T/wrap2.folded"
"$EBPROF" render --format folded "$T/wrap1.folded" -o "$T/wrap1.out" 2>"$T/wrap1.err" &&
	"$EBPROF" render --format folded "$T/wrap2.folded" -o "$T/wrap2.out" 2>"$T/wrap2.err" ||
	fail "render of huge counts failed: $(cat "$T/wrap1.err" "$T/wrap2.err")"
cmp -s "$T/wrap1.out" "$T/wrap2.out" ||
	fail "the order of the lines changed the result: $(cat "$T/wrap1.out") vs $(cat "$T/wrap2.out")"
[ "$(cat "$T/wrap1.out")" = "$(printf 'c;d 5\ne 2')" ] || fail "valid lines lost: $(cat "$T/wrap1.out")"
grep -q "skipped 1 malformed line(s) of 3" "$T/wrap1.err" || fail "the huge count is not reported"
ok "a count above 2^53 is skipped wherever it comes; the valid lines stay"

printf 'app;a 1\napp;b 2\n' >"$T/before.folded"
printf 'app;a 3002399751580330\napp;b 6004799503160661\n' >"$T/after.folded"
"$EBPROF" diff --normalize "$T/before.folded" "$T/after.folded" -o "$T/diff.svg" 2>"$T/diff.err" ||
	fail "diff --normalize failed: $(cat "$T/diff.err")"
grep -q "before 9007199254740991, after 9007199254740991, +0.00%" "$T/diff.svg" ||
	fail "the normalized BEFORE total is not exact: $(grep -o 'before [0-9]*, after [0-9]*' "$T/diff.svg" | head -3)"
grep -q "18446744073709551616" "$T/diff.svg" && fail "a total above 2^64 was printed"
ok "diff --normalize of 2^53 - 1 samples: exact totals"

# --- 8: a directory ---
"$EBPROF" render "$T" -o "$T/dir.svg" 2>"$T/dir.err" && fail "render DIR succeeded"
grep -q "cannot read $T: Is a directory" "$T/dir.err" || fail "render DIR said: $(cat "$T/dir.err")"
"$EBPROF" diff "$T" "$T/after.folded" -o "$T/dir.svg" 2>"$T/dir.err" && fail "diff DIR succeeded"
grep -q "Is a directory" "$T/dir.err" || fail "diff DIR said: $(cat "$T/dir.err")"
ok "render and diff of a directory: 'Is a directory'"

# --- an output that is not a regular file ---
# `-o /dev/null` (or a FIFO) is written in place: the atomic rename used
# for files would have replaced the device with a regular file (it did,
# to this machine's /dev/null, through the benchmark's `-o /dev/null`).
printf 'main;work 3\nmain;idle 1\n' >"$T/small.folded"
mkfifo "$T/pipe"
cat "$T/pipe" >"$T/from-pipe.svg" &
reader=$!
BG_PIDS+=("$reader")
"$EBPROF" render "$T/small.folded" -o "$T/pipe" 2>"$T/pipe.err" ||
	fail "render -o FIFO: exit $?: $(cat "$T/pipe.err")"
[ -p "$T/pipe" ] || { kill "$reader"; fail "render -o FIFO replaced the FIFO with $(stat -c %F "$T/pipe")"; }
wait "$reader"
grep -q '</svg>' "$T/from-pipe.svg" || fail "the FIFO's reader got no SVG"
ls "$T"/pipe.tmp.* >/dev/null 2>&1 && fail "a temporary file was left beside the FIFO"
ok "render -o FIFO: written through the pipe, which is still a FIFO"
