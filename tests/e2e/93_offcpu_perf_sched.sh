# Off-CPU totals against perf sched: the mixed workload (three threads
# running and sleeping 30/70, 60/40 and 5/45 ms for 3 s; two spinners
# pinned to CPU 0 with short threads made behind them) is recorded by
# `ebprof record --mode offcpu` and by `perf sched record -a` at once. For
# each thread, ebprof's off-CPU time on its function's stacks must be the
# time perf's sched_switch events show it off the CPU (from each switch-out
# to its next switch-in) within 3%, and the spinners' runnable time too.
#
# Not `perf sched timehist`'s wait times: they leave out an exiting
# thread's last wait (42-71 ms a thread here). perf also drops a switch
# event now and then without counting it lost. Both kinds of drop are
# mended with the thread's own sched_stat_runtime events, counted from
# its last switch either way: a switch-out seen twice with no switch-in
# between came back its run time before the second; a switch-in seen
# twice with no switch-out between left its run time after the first.
# The mends are counted in the test's output.
source "$(dirname "$0")/lib.bash"
source "$ROOT/tests/e2e/offcpu.bash"

command -v perf >/dev/null || fail "perf is not installed (tests/deps.sh installs linux-perf)"
perf sched record -a -o "$T/sched.data" >"$T/perf.out" 2>&1 &
perf_pid=$!
BG_PIDS+=("$perf_pid")
wait_for 60 test -s "$T/sched.data" || { cat "$T/perf.out" >&2; fail "perf sched record did not start"; }
sleep 0.5
offcpu_record "$T/o" "--mode offcpu --offcpu-period-us 50" mixed 3
kill -INT "$perf_pid"
wait "$perf_pid" # its status after SIGINT is the signal's: the file says if it wrote
grep -q 'Captured and wrote' "$T/perf.out" || { cat "$T/perf.out" >&2; fail "perf sched record wrote nothing"; }

# Per thread id: off-CPU ms in all ("TID ms"), and by the state it left
# the CPU in ("TID,R ms": R runnable, S sleep, D io), from perf's events.
perf sched script -i "$T/sched.data" -F time,event,trace 2>"$T/script.err" | awk '
function field(name,   s) { s = $0; sub(".* " name "=", "", s); sub(/ .*/, "", s); return s }
/ sched:sched_stat_runtime: / { rt[field("pid")] += field("runtime"); next }
/ sched:sched_switch: / {
	t = $1; sub(/:$/, "", t)
	p = field("prev_pid"); n = field("next_pid")
	if (p != 0) {
		if (p in out) {
			# Its switch-in is missing: it came back when its run began.
			back = t - rt[p] / 1e9
			off[p] += back - out[p]; bys[p "," st[p]] += back - out[p]; mended++
		}
		out[p] = t; st[p] = substr(field("prev_state"), 1, 1); rt[p] = 0
		delete ina[p]
	}
	if (n in out) { d = t - out[n]; off[n] += d; bys[n "," st[n]] += d; delete out[n] }
	else if (n in ina) {
		# Its switch-out is missing: it left when its run ended. The
		# state it left in is unknown, so only the total gets it.
		left = ina[n] + rt[n] / 1e9
		if (t > left) off[n] += t - left
		mended_in++
	}
	if (n != 0) ina[n] = t
	rt[n] = 0
}
END {
	for (k in off) printf "%s %.0f\n", k, off[k] * 1e6
	for (k in bys) printf "%s %.0f\n", k, bys[k] * 1e6
	printf "mended %d\n", mended
	printf "mended_in %d\n", mended_in
}' >"$T/perf.off" || fail "perf sched script failed: $(cat "$T/script.err")"
perf_us() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' "$T/perf.off"; }
echo "perf: $(perf_us mended) switch-ins and $(perf_us mended_in) switch-outs mended from run times"

for t in a b c; do
	tid=$(offcpu_value "$T/o.out" "tid_$t")
	ours=$(offcpu_us "$T/o.folded" ";offcpu_mixed_$t;")
	theirs=$(perf_us "$tid")
	echo "thread $t ($tid): ebprof $ours us off-CPU, perf sched $theirs us"
	at_least "$theirs" 1000000 || fail "perf saw thread $t off the CPU for only $theirs us"
	within "$ours" "$theirs" "$((theirs * 3 / 100))" ||
		fail "thread $t: ebprof's $ours us off-CPU is not perf sched's $theirs us (3%)"
done
l0=$(offcpu_value "$T/o.out" tid_loader0)
l1=$(offcpu_value "$T/o.out" tid_loader1)
ours=$(offcpu_us "$T/o.folded" ";offcpu_loader;.*\\[off-cpu: runnable\\]\$")
theirs=$(( $(perf_us "$l0,R") + $(perf_us "$l1,R") ))
echo "spinners ($l0, $l1): ebprof $ours us runnable, perf sched $theirs us"
at_least "$theirs" 1000000 || fail "the spinners waited only $theirs us for the CPU"
within "$ours" "$theirs" "$((theirs * 3 / 100))" ||
	fail "spinners: ebprof's $ours us runnable is not perf sched's $theirs us (3%)"
ok "off-CPU time per thread matches perf sched within 3%"
