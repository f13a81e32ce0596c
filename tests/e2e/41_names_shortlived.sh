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
# those and user space unwinds them once the tables are there.
source "$(dirname "$0")/lib.bash"

"$EBPROF" record -F 99 -d 600 --format folded -o "$T/short.folded" 2>"$T/summary" &
REC=$!; BG_PIDS+=("$REC")
sleep 1 # the program is loaded and attached
"$EX/shortlived" 200 30 || fail "the shortlived loop failed"
kill -INT "$REC"
wait "$REC" || fail "ebprof record exited $?: $(cat "$T/summary")"
cat "$T/summary"

total=$($FOLDED_PY "$T/short.folded" total shortlived)
at_least "$total" 200 || fail "only $total samples of the children (want ~600: 6 s of CPU at 99 Hz)"
# Named: in the child's burn_NNN, or, before main, in the dynamic loader's
# start-up (_dl_start down to init_cpu_features: its CPUID probing is slow
# under virtualization, 2-6% of a 30 ms child here, and those frames are
# named too; only burn_NNN cannot be on such a stack yet).
named=$($FOLDED_PY "$T/short.folded" has shortlived '^(burn_[0-9]{3}|_dl_start)$')
loader=$($FOLDED_PY "$T/short.folded" has shortlived '^_dl_start$')
# And at the end, in do_exit once the process's memory is let go
# (exit_mm): no profiler can read its user stack past the pc there, which
# is named (_exit). Its interrupts-off stretches collect the ticks of a
# loaded VM: 0-2% of the samples, 6.9% in one CI run (the collectd test).
exiting=$($FOLDED_PY "$T/short.folded" exiting shortlived)
pct=$(python3 -c "print('%.2f' % ($named + $exiting))")
at_least "$pct" 95 || {
	grep '^shortlived;' "$T/short.folded" | grep -v 'burn_[0-9]\|;_dl_start;\|^shortlived;_exit;.*;do_exit_\[k\]' | sort -t' ' -k2 -n -r | head
	fail "named in only $pct% of the children's $total samples (burn_NNN, or the loader's start-up: $loader%, or the exit once the memory is gone: $exiting%; want >= 95%)"
}
# Each child has its own function: nearly all 200 names appear.
names=$(grep -o ';burn_[0-9]\{3\}' "$T/short.folded" | sort -u | wc -l)
at_least "$names" 150 || fail "only $names distinct burn_NNN names among the children"
read -r whole _ named < <($FOLDED_PY "$T/short.folded" rooted shortlived '^burn_[0-9]{3}$' '^_start$')
at_least "$whole" 95 || {
	grep '^shortlived;' "$T/short.folded" | grep 'burn_[0-9]' | grep -v '^shortlived;_start;' |
		sort -t' ' -k2 -n -r | head
	fail "of $named samples in burn_NNN, only $whole% are whole down from _start (want >= 95%)"
}
ok "short-lived processes: named in $pct% of $total samples (the loader's start-up $loader%, the exit once the memory is gone $exiting%), $names distinct names; whole from _start in $whole%"
