# Short-lived processes are named: 200 processes, one after the other, each
# burning 30 ms of CPU in its own burn_NNN and exiting long before the
# next drain (examples/shortlived). ebprof records system-wide at 99 Hz, as
# the bpftrace one-liner of tests/bench/shortlived_bpftrace.sh does (which
# names none of them: it resolves stacks at exit, when they are gone).
# The sampler reports each process at its first sample and the symbolizer
# snapshots it then. Judged on the samples recorded, not on wall time: on
# a loaded machine the loop runs longer and nothing else changes.
# The stacks must also be whole, from _start down, though a child's first
# samples come before its unwind tables are loaded: the sampler copies
# those and user space unwinds them once the tables are there, and the
# summary counts them recorded: samples = recorded + filtered + idle +
# lost, exactly.
source "$(dirname "$0")/lib.bash"

"$EBPROF" record -F 99 -d 600 --format folded -o "$T/short.folded" 2>"$T/summary" &
REC=$!; BG_PIDS+=("$REC")
sleep 1 # the program is loaded and attached
"$EX/shortlived" 200 30 || fail "the shortlived loop failed"
kill -INT "$REC"
wait "$REC" || fail "ebprof record exited $?: $(cat "$T/summary")"
cat "$T/summary"
# Those copies are in the summary's accounting as they are in the profile.
summary_accounts "$T/summary" "short-lived"
at_least "${COPIED:-0}" 1 || fail "no sample was copied before its tables: $(grep copied "$T/summary")"
ok "accounting: $ACCOUNTS; $COPIED of them copied before their tables"

total=$($FOLDED_PY "$T/short.folded" total shortlived)
at_least "$total" 200 || fail "only $total samples of the children (want ~600: 6 s of CPU at 99 Hz)"
# Named, >= 95%: in burn_NNN, the loader's start-up or the exit (lib.bash).
shortlived_named "$T/short.folded" "$total"
# Each child has its own function: nearly all 200 names appear.
names=$(grep -o ';burn_[0-9]\{3\}' "$T/short.folded" | sort -u | wc -l)
at_least "$names" 150 || fail "only $names distinct burn_NNN names among the children"
read -r whole _ named < <($FOLDED_PY "$T/short.folded" rooted shortlived '^burn_[0-9]{3}$' '^_start$')
at_least "$whole" 95 || {
	grep '^shortlived;' "$T/short.folded" | grep 'burn_[0-9]' | grep -v '^shortlived;_start;' |
		sort -t' ' -k2 -n -r | head
	fail "of $named samples in burn_NNN, only $whole% are whole down from _start (want >= 95%)"
}
ok "short-lived processes: named in $NAMED% of $total samples ($NAMED_PARTS), $names distinct names; whole from _start in $whole%"
