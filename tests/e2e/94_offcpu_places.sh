# A thread that waits again and again from the same places is walked once
# per place, not once per wait: the switch program keeps its last two
# walks and names where a thread leaves its user code by ip, sp, the word
# at sp and, where bp is a frame pointer, bp and the word above it. Not by
# bp where code built without frame pointers keeps a loop counter there:
# that made every wait of such a loop a new place, walked at each switch
# (a ping-pong: half of its switches walked, 278 ns a switch against 100).
#
# examples/offcpu.c's pingpong keeps six counters live across its read()
# and write(), rbp among them in the -nofp build. Recorded by the tables
# (that build, --unwind dwarf) and by frame pointer (the default build, --unwind fp), at
# most 2% of its waits may be walked, and 90% of its sleep must still be
# on its read()'s stack (what a kept walk would misname otherwise).
source "$(dirname "$0")/lib.bash"

check_places() { # BUILD UNWIND CALLER: the frame above read() in its stack
	local out=$T/$1 trips walks waits loop all
	OFFCPU=$EX/$1
	source "$ROOT/tests/e2e/offcpu.bash"
	offcpu_record "$out" "--mode offcpu --unwind $2" pingpong 2
	trips=$(offcpu_value "$out.out" round_trips)
	at_least "$trips" 20000 || fail "$1: only $trips round trips"
	walks=$(sed -n 's/.* \([0-9]*\) user stacks walked at a new place.*/\1/p' "$out.err")
	[ -n "$walks" ] || { cat "$out.err" >&2; fail "$1: the summary does not count the walks"; }
	waits=$((2 * trips)) # each of the two processes waits once a trip
	echo "$1 ($2): $walks walks for $waits waits of the ping-pong"
	[ $((walks * 50)) -le "$waits" ] ||
		fail "$1 ($2): $walks user stacks walked for $waits waits: more than 2%, the place is not kept"
	loop=$(offcpu_us "$out.folded" ";$3;(read|__libc_read);.*\\[off-cpu: sleep\\]\$")
	# Asleep but for the workload's settling sleep and its wait for the child.
	all=$(($(offcpu_us "$out.folded" '\[off-cpu: sleep\]$') -
		$(offcpu_us "$out.folded" ';(offcpu_settle|nanosleep|clock_nanosleep[^;]*|wait4|__wait4|waitpid);.*\[off-cpu: sleep\]$')))
	at_least "$all" 500000 || fail "$1 ($2): only $all us asleep"
	[ $((loop * 100)) -ge $((all * 90)) ] ||
		{ sort -k2 -nr "$out.folded" | head -5 >&2; fail "$1 ($2): $loop of $all us asleep on $3;read: under 90%"; }
	ok "$1 ($2): $walks walks for $waits waits; $loop of $all us asleep on $3;read"
}

check_places offcpu-nofp dwarf offcpu_pingpong_loop
# glibc's read() sets up no frame: a frame-pointer walk from it skips its
# caller, the loop, and goes on from main (the README's leaf limit).
check_places offcpu fp main
