# Wall-clock profiles: on-CPU samples (each 1/F s) and off-CPU samples in
# one profile. Three threads run and sleep in different shares (30/70,
# 60/40, 10/90 ms) for 3 s each, each in a function of its own; for each,
# the time on its stacks, on-CPU plus off-CPU, must be its lifetime (as
# the thread measured it, from just before its creation) within 2%, and
# both parts must be there. Meanwhile short threads (offcpu_mixed_d) are
# made one after another on a CPU two spinners keep busy, at nice 10: each
# waits tens of ms for its first run. That wait, from the wake-up of a new
# task to its first run (stamped on sched_wakeup_new), is on the stack the
# thread starts from, its clone3 frame, runnable; with it the short
# threads' time, on-CPU plus off-CPU, must be their lifetimes' sum within
# 2% (without it a quarter is missing); both 2% allow for the steal and
# the missed ticks that record reports besides. And no sleep is lost whole: each
# round of a, b and c sleeps at a stack depth of its own (offcpu_round),
# and each must show most of its sleep (a switch-in that the kernel ran
# no switch program for lost such a sleep silently, in ~1 run in 5).
source "$(dirname "$0")/lib.bash"
source "$ROOT/tests/e2e/offcpu.bash"

offcpu_record "$T/w" "--mode wall -F 999 --offcpu-period-us 50" mixed 3
# Time the hypervisor held a CPU back has no on-CPU samples (a tick falls
# due, fires once when the CPU runs again): record says how much, and a
# thread may be short by up to that (once, in CI, 61 ms of b's 3 s).
steal_us=$(sed -n 's/^ebprof: steal: the hypervisor held these CPUs for \([0-9]*\) ms .*/\1/p' "$T/w.err")
[ -n "$steal_us" ] || { cat "$T/w.err" >&2; fail "no steal line in wall mode"; }
steal_us=$((steal_us * 1000))
# Ticks that fell due and never ran (a hold the hypervisor does not report
# as steal: this host's /proc/stat shows none, yet in one CI run b was
# 65 ms short on-CPU) are counted too: a thread may be short by their time.
missed_us=$(sed -n 's/^ebprof: ticks missed: [0-9]* (\([0-9]*\) ms .*/\1/p' "$T/w.err")
[ -n "$missed_us" ] || { cat "$T/w.err" >&2; fail "no ticks missed line in wall mode"; }
missed_us=$((missed_us * 1000))
echo "steal during the recording: $steal_us us; ticks missed: $missed_us us;" \
	"$(grep '^ebprof: lost' "$T/w.err")"
grep '^ebprof: user stacks by' "$T/w.err"
held_us=$((steal_us + missed_us))
for t in a b c; do
	life_us=$(( $(offcpu_value "$T/w.out" "lifetime_${t}_ns") / 1000 ))
	all=$(offcpu_us "$T/w.folded" ";offcpu_mixed_$t;")
	off=$(offcpu_us "$T/w.folded" ";offcpu_mixed_$t;.*\\[off-cpu: [a-z]*\\]\$")
	on=$((all - off))
	runnable=$(offcpu_us "$T/w.folded" ";offcpu_mixed_$t;.*\\[off-cpu: runnable\\]\$")
	echo "thread $t: on-CPU $on us + off-CPU $off us ($runnable us runnable) = $all us;" \
		"lifetime $life_us us (the kernel's schedstat: $(( $(offcpu_value "$T/w.out" "ran_${t}_ns") / 1000 ))" \
		"us on a CPU, $(( $(offcpu_value "$T/w.out" "waited_${t}_ns") / 1000 )) us runnable)"
	within "$all" "$life_us" "$((life_us / 50 + held_us))" ||
		fail "thread $t: on + off = $all us, not its lifetime $life_us us (2%, and $held_us us of steal and missed ticks)"
	# Both parts are there (their split depends on the machine's load:
	# a thread waiting for a CPU is off it, runnable).
	at_least "$on" $((life_us / 100)) || fail "thread $t: only $on us on-CPU"
	at_least "$off" $((life_us / 10)) || fail "thread $t: only $off us off-CPU"
	# Every round's sleep, at its own depth: at least 80% of its length.
	cycles=$(offcpu_value "$T/w.out" "cycles_$t")
	sleep_ms=$(case $t in a) echo 70 ;; b) echo 40 ;; c) echo 45 ;; esac)
	short=$(awk -v re=";offcpu_mixed_$t;" -v n="$cycles" -v want=$((sleep_ms * 800)) '
		{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		  if (s ~ re && s ~ /\[off-cpu: sleep\]$/) { d = gsub(/;offcpu_round/, "", s) - 1; at[d] += c } }
		END { for (i = 0; i < n && i < 100; i++) if (at[i] < want) printf "%d (%d us) ", i, at[i] }' "$T/w.folded")
	[ -z "$short" ] || fail "thread $t: the sleeps of rounds $short are missing (of $cycles rounds)"
done
unseen=$(sed -n 's/.* \([0-9]*\) waits whose switch-in the program missed.*/\1/p' "$T/w.err")
untimed=$(grep -o '[0-9]* untimed' "$T/w.err" | tr -dc 0-9)
switches=$(sed -n 's/^ebprof: off-CPU: \([0-9]*\) context switches.*/\1/p' "$T/w.err")
echo "every round's sleep there; $unseen waits timed after a switch-in the program missed," \
	"$untimed untimed, of $switches context switches"
# A missed switch-in is timed by the scheduler's stamp of it, or else by
# the task's run time since it left: on 6.18.44 (a Firecracker guest on
# kvm-clock, whose waits are timed by bpf_ktime_get_ns(), so the stamp is
# not read) 4 to 9 waits a run were untimed before the run time was kept.
[ "$untimed" = 0 ] || fail "$untimed waits untimed of $switches context switches"

# The short threads: their lives from creation, summed.
life_us=$(( $(offcpu_value "$T/w.out" lifetime_d_ns) / 1000 ))
n_d=$(offcpu_value "$T/w.out" threads_d)
body=$(offcpu_us "$T/w.folded" ";offcpu_mixed_d;")
body_off=$(offcpu_us "$T/w.folded" ";offcpu_mixed_d;.*\\[off-cpu: [a-z]*\\]\$")
# A new task's first wait: its one user frame, the kernel's fork return.
first=$(offcpu_us "$T/w.folded" "^[^;]*;clone3?;(ret_from_fork[^;]*;)?\\[off-cpu: runnable\\]\$")
all=$((body + first))
echo "short threads ($n_d): on-CPU $((body - body_off)) us + off-CPU $body_off us in offcpu_mixed_d + $first us before their first run = $all us; lifetimes $life_us us"
at_least "$n_d" 5 || fail "only $n_d short threads were made"
at_least "$first" $((life_us / 20)) ||
	fail "the short threads' first waits came to $first us of $life_us us: not counted, or not under load"
within "$all" "$life_us" "$((life_us / 50 + held_us))" ||
	fail "short threads: on + off = $all us, not their lifetimes' $life_us us (2%, and $held_us us of steal and missed ticks)"
ok "wall mode: on-CPU + off-CPU = each thread's lifetime from its creation within 2%"
