# Wall-clock profiles: on-CPU samples (each 1/F s) and off-CPU samples in
# one profile. Three threads run and sleep in different shares (30/70,
# 60/40, 10/90 ms) for 3 s each, each in a function of its own; for each,
# the time on its stacks, on-CPU plus off-CPU, must be its lifetime (as
# the thread measured it) within 2%, and both parts must be there.
source "$(dirname "$0")/lib.bash"
source "$ROOT/tests/e2e/offcpu.bash"

offcpu_record "$T/w" "--mode wall -F 999 --offcpu-period-us 50" mixed 3
for t in a b c; do
	life_us=$(( $(offcpu_value "$T/w.out" "lifetime_${t}_ns") / 1000 ))
	all=$(offcpu_us "$T/w.folded" ";offcpu_mixed_$t;")
	off=$(offcpu_us "$T/w.folded" ";offcpu_mixed_$t;.*\\[off-cpu: [a-z]*\\]\$")
	on=$((all - off))
	echo "thread $t: on-CPU $on us + off-CPU $off us = $all us; lifetime $life_us us"
	within "$all" "$life_us" "$((life_us / 50))" ||
		fail "thread $t: on + off = $all us, not its lifetime $life_us us (2%)"
	# Both parts are there (their split depends on the machine's load:
	# a thread waiting for a CPU is off it, runnable).
	at_least "$on" $((life_us / 100)) || fail "thread $t: only $on us on-CPU"
	at_least "$off" $((life_us / 10)) || fail "thread $t: only $off us off-CPU"
done
ok "wall mode: on-CPU + off-CPU = each thread's lifetime within 2%"
