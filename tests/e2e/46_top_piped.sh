# `ebprof top` without a terminal: one plain table per interval on stdout,
# with the figures the screen shows (45_top_tmux.sh): on the 70/30
# workload at 999 Hz with 3-second intervals, every table has the header
# (rate, samples, losses), the column heads, and burn_seventy above
# burn_thirty at ~70:30 of their sum; -n bounds the rows; the run ends
# after -d with status 0, and bad options exit 2 with a message.
source "$(dirname "$0")/lib.bash"

bg "$EX/split7030" 300; A=$BG
sleep 0.3
"$EBPROF" top -p "$A" -F 999 --drain-interval-ms 3000 -d 9 -n 8 >"$T/tables" 2>"$T/err" ||
	fail "ebprof top exited $?: $(cat "$T/err")"
cat "$T/tables"
tables=$(grep -c '^ebprof top: ' "$T/tables")
[ "$tables" -ge 3 ] || fail "expected 3 tables in 9 s at 3 s intervals, got $tables"
grep -q $'\e' "$T/tables" && fail "escape sequences in the piped output"
awk -v want=8 '
	/^ebprof top: / {
		if (n) exit 1
		if ($0 !~ /^ebprof top: 999 Hz on [0-9]+ CPUs, [0-9.]+ s: [0-9]+ samples in 1 process; lost [0-9]+ since start/) exit 2
		n = 1; rows = 0; next
	}
	/^  SELF%  TOTAL%  PROCESS +FUNCTION$/ { heads++; next }
	/^ +[0-9]+\.[0-9] +[0-9]+\.[0-9]  / { rows++; if (rows > want) exit 3; next }
	/^$/ { n = 0; next }
	{ exit 4 }
	END { if (heads == 0) exit 5 }' "$T/tables" ||
	fail "the tables are not header, column heads, at most 8 rows, blank line (awk status $?)"
i=0
while read -r s70 s30; do
	i=$((i + 1))
	[ -n "$s70" ] && [ -n "$s30" ] || fail "table $i lacks burn_seventy above burn_thirty"
	share=$(awk -v a="$s70" -v b="$s30" 'BEGIN { printf "%.1f", 100 * a / (a + b) }')
	within "$share" 70 7 || fail "table $i: burn_seventy is $share% of the two (want 70±7)"
	ok "table $i: burn_seventy $s70% above burn_thirty $s30% of one CPU ($share:$(awk -v s="$share" 'BEGIN { print 100 - s }'))"
done < <(awk '
	/^ebprof top: / { if (started) print s70, s30; started = 1; s70 = ""; s30 = ""; next }
	$3 == "split7030" && $4 == "burn_seventy" { s70 = $1 }
	$3 == "split7030" && $4 == "burn_thirty" { if (s70 != "") s30 = $1 }
	END { if (started) print s70, s30 }' "$T/tables")
[ "$i" -eq "$tables" ] || fail "checked $i of $tables tables"

# Bad options: status 2, a message that names the value.
"$EBPROF" top -F 0 >/dev/null 2>"$T/err"; rc=$?
[ "$rc" -eq 2 ] && grep -q "invalid frequency '0'" "$T/err" || fail "top -F 0: status $rc, $(cat "$T/err")"
"$EBPROF" top --no-kernel --no-user >/dev/null 2>"$T/err"; rc=$?
[ "$rc" -eq 2 ] && grep -q "leave nothing to sample" "$T/err" || fail "top --no-kernel --no-user: status $rc"
"$EBPROF" top extra >/dev/null 2>"$T/err"; rc=$?
[ "$rc" -eq 2 ] && grep -q "unexpected argument 'extra'" "$T/err" || fail "top extra: status $rc"
ok "bad options: status 2 with the value named"
