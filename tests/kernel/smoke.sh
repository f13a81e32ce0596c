# The smoke suite on Debian 12's own kernel, run INSIDE a guest booted by
# tests/kernel/vm.sh (tests/e2e/90_kernel_61_smoke.sh boots it): one boot,
# several checks, since a boot under TCG costs ~15 s and every check here
# is a few seconds of emulated CPU.
#  0. the kernel is 6.1 at Debian's defaults (perf_event_paranoid=3);
#  1. `ebprof record` system-wide and `-p`, and the plugin in a root
#     collectd writing CSV and a spool, all on one 70/30 workload at once;
#  2. the systemd drop-in's exact capability set (contrib/systemd/ebprof.conf):
#     a. at paranoid 3 without its ExecStartPre: refused, and the message
#        blames the level and CAP_SYS_ADMIN, not the CAP_PERFMON it holds;
#     b. its ExecStartPre takes 3 to 2, and collectd with that set then
#        profiles the known split of a process of another user (nobody),
#        with kernel functions named;
#     c. the alternative it documents: level 3 with CAP_SYS_ADMIN added;
#     d. its ExecStartPre leaves a level of 2 or less alone;
#  3. the README's kernel feature table holds here (68_kernel_features.sh:
#     noprealloc present, procmap_query absent and said once);
#  4. the table unwinder loads under 6.1's verifier and walks whole
#     stacks of code without frame pointers (GCC 12 and clang 14 at -O2
#     -fomit-frame-pointer), kernel ticks included, where the
#     frame-pointer walk of the same process does not.
#  5. off-CPU time loads under 6.1's verifier with its waits timed by the
#     run queue's clock, read in place through the task's BTF pointers
#     (forced, so that it is checked whatever clocksource the guest has),
#     and 50 sleeps of 10 ms show on their stack;
#  6. where transparent huge pages are "always" (Debian's kernels), the
#     plugin turns them off for collectd and back on for what it forks,
#     and none holds collectd's memory after a minute's sampling;
#  7. the ring buffer reader (bpf/ringrd) on 6.1's ring buffer: records
#     that wrap, a full ring, a poll's wake, the data mapped once;
#  8. forks that never exec are named from their parent's maps: the
#     report's parent read through 6.1's task_struct (41_names_forks.sh);
#  9. a CPU taken offline and brought back is sampled again, by `record`
#     and the plugin, its time away not counted as ticks missed
#     (19_record_cpu_hotplug.sh).
# Sourced by bash in the guest's root, which is the host's, read-only
# under a tmpfs overlay: build/ is the host's build.
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/collectd.bash"
[ "${EBPROF_VM:-}" = 1 ] || fail "smoke.sh runs inside a guest: bash tests/kernel/vm.sh -- bash $0"
command -v setpriv >/dev/null || fail "setpriv (util-linux) is not installed"

step() {
	echo "--- $* (at ${SECONDS} s)"
}

# 0. The kernel under test, at its own defaults.
release=$(uname -r)
[[ $release == 6.1.* ]] || fail "expected Debian's 6.1 kernel, booted $release"
paranoid=$(sysctl -n kernel.perf_event_paranoid)
[ "$paranoid" -eq 3 ] || fail "Debian's 6.1 ships perf_event_paranoid=3, the guest has $paranoid"
ok "kernel $release, perf_event_paranoid=$paranoid (Debian's default)"

# split_of FOLDED PROC: "PCT SAMPLES" of burn_seventy in PROC's 70/30 split.
split_of() {
	local pct a b
	read -r pct a b < <($FOLDED_PY "$1" pair "$2" burn_seventy burn_thirty)
	echo "$pct $((a + b))"
}

# csv_split DIR: "PCT" of burn_seventy in the mean self values of the CSV.
csv_split() {
	local a b
	a=$(csv_mean "$1/csv/e2ehost/ebprof-self/gauge-burn_seventy-*")
	b=$(csv_mean "$1/csv/e2ehost/ebprof-self/gauge-burn_thirty-*")
	[ "$a" != nan ] && [ "$b" != nan ] || { echo nan; return; }
	awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", 100 * a / (a + b) }'
}

# daemon NAME PLUGIN-LINES [WRAPPER...]: collectd with csv and ebprof,
# spool every 2 s, started in the background; its directory is $D.
daemon() {
	local name=$1 lines=$2
	shift 2
	D=$(collectd_dir "$name" csv)
	{
		collectd_conf "$D" e2ehost 1
		collectd_csv "$D"
		printf 'LoadPlugin ebprof\n<Plugin ebprof>\n%s\n  SpoolDir "%s/spool"\n  SpoolInterval 2\n</Plugin>\n' \
			"$lines" "$D"
	} >"$D/collectd.conf"
	collectd_start "$D" "$@"
}

# 1. Three profilers on one workload: record system-wide, record -p, and
# the plugin in collectd as root (Debian's collectd.service).
step "record system-wide, record -p, collectd"
bg "$EX/split7030" 300; W=$BG
"$EBPROF" record -F 999 -d 250 --format folded -o "$T/wide.folded" 2>"$T/wide.err" &
R1=$!
"$EBPROF" record -p "$W" -F 999 -d 250 --format folded -o "$T/pid.folded" 2>"$T/pid.err" &
R2=$!
daemon root "  Frequency 999
  PID $W"
C1=$COLLECTD D1=$D
# Start-up takes seconds under TCG: count the workload's CPU time only
# once all three sample. Under TCG a guest CPU-second holds fewer samples
# (a tick that falls while the host runs something else is lost: 60-90%
# of 999 per second measured), so 12 s of CPU for the 5,000 needed.
sampling() {
	ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'perf_event'
}
wait_for 120 sampling "$R1" && wait_for 120 sampling "$R2" && wait_for 120 sampling "$COLLECTD" ||
	{ show_log "$D"; fail "the three profilers did not start within 120 s"; }
step "all three sample"
wait_cpu 12 240 "$W"
kill -INT "$R1" "$R2"
wait "$R1" || fail "ebprof record (system-wide) failed: $(cat "$T/wide.err")"
wait "$R2" || fail "ebprof record -p failed: $(cat "$T/pid.err")"
collectd_stop "$C1"
grep -q '^ebprof: a CPU-clock event on each of the 1 thread of' "$T/pid.err" ||
	fail "record -p: no event on the process's thread: $(cat "$T/pid.err")"
grep -q "an event on each of the PIDs' 1 thread" "$D1/log" ||
	{ show_log "$D1"; fail "collectd (root): PID filter without an event on the thread"; }
ok "record -p and collectd's PID: an event on the process's thread, none per CPU"
for run in wide pid; do
	read -r pct n < <(split_of "$T/$run.folded" split7030)
	at_least "$n" 5000 || fail "record ($run): $n samples of burn_*, need 5000 for ±3"
	within "$pct" 70 3 || fail "record ($run): burn_seventy $pct% of the split (want 70±3)"
	ok "record ($run): burn_seventy $pct% of $n samples"
done
pct=$(csv_split "$D1")
within "$pct" 70 5 || { show_log "$D1"; fail "collectd (root): burn_seventy $pct% in the CSV (want 70±5)"; }
ls "$D1"/spool/ebprof-*.svg "$D1"/spool/ebprof-*.folded >/dev/null 2>&1 ||
	{ ls -la "$D1/spool" >&2; fail "collectd (root): no SVG or folded file in the spool"; }
xmllint --noout "$D1/spool/latest.svg" || fail "collectd (root): latest.svg is not well-formed"
ok "collectd (root, paranoid 3): burn_seventy $pct% in the CSV; spool: $(ls "$D1/spool" | tr '\n' ' ')"
kill "$W"

# 2. The drop-in's capability set. The workloads run as nobody, as in
# 67_reliability_capabilities.sh: the 70/30 split, and syscalls for
# kernel frames (the 70/30 one is almost never caught in the kernel).
bounding=$(dropin_bounding)
[ "$bounding" != -all ] || fail "no capability read from $DROPIN"
start_nobody_workloads 300
lines="  Frequency 999
  PID $W
  PID $K
  TopFunctions 50"

step "2a. paranoid 3, the drop-in's set without its ExecStartPre"
daemon dropin3 "$lines" setpriv --bounding-set="$bounding" --inh-caps=-all
wait_for 60 grep -q "Initialization of plugin \`ebprof' failed" "$D/log" ||
	{ show_log "$D"; fail "2a: the plugin started at paranoid 3 without CAP_SYS_ADMIN"; }
collectd_stop "$COLLECTD"
msg=$(grep -m1 'ebprof plugin: .*perf_event_open' "$D/log") || { show_log "$D"; fail "2a: no perf_event_open error"; }
[[ $msg == *"although CAP_PERFMON is held"* && $msg == *"perf_event_paranoid is 3"* &&
	$msg == *"CAP_SYS_ADMIN"* && $msg == *"perf_event_paranoid=2"* ]] ||
	fail "2a: the message does not say what this kernel needs: $msg"
[[ $msg != *"needs CAP_PERFMON"* ]] || fail "2a: the message blames CAP_PERFMON, which is held: $msg"
ok "2a: refused, and said so: ${msg#*ebprof plugin: }"

step "2b. the drop-in's ExecStartPre, then its set"
dropin_exec_start_pre
paranoid=$(sysctl -n kernel.perf_event_paranoid)
[ "$paranoid" -eq 2 ] || fail "2b: the drop-in's ExecStartPre left perf_event_paranoid at $paranoid, want 2"
daemon dropin2 "$lines" setpriv --bounding-set="$bounding" --inh-caps=-all
wait_for 120 has_rows 1 "$D/csv/e2ehost/ebprof-health/frequency-samples-*" ||
	{ show_log "$D"; fail "2b: no values from the plugin with the drop-in's set"; }
wait_cpu 4 120 "$W"
collectd_stop "$COLLECTD"
grep -q 'ebprof plugin: .*\(error\|failed\|cannot\)' "$D/log" && { show_log "$D"; fail "2b: the plugin logged an error"; }
pct=$(csv_split "$D")
samples=$(cat "$D"/csv/e2ehost/ebprof-health/frequency-samples-* | awk -F, '$1 ~ /^[0-9]/ { s += $2 } END { printf "%d", s }')
at_least "$samples" 2000 || fail "2b: only $samples samples (need 2000 for ±5)"
within "$pct" 70 5 || { show_log "$D"; fail "2b: burn_seventy $pct% of nobody's split in the CSV (want 70±5)"; }
ls "$D/csv/e2ehost/ebprof-total" | grep -q '_\[k\]-' ||
	{ ls "$D/csv/e2ehost/ebprof-total" >&2; fail "2b: no kernel function named with the drop-in's set"; }
ok "2b: ExecStartPre took paranoid 3 to 2; the drop-in's set ($(dropin_caps | tr '\n' ' ')) profiles nobody's split: burn_seventy $pct% of ~$samples samples, kernel functions named"

step "2c. paranoid 3, the drop-in's set plus CAP_SYS_ADMIN"
sysctl -qw kernel.perf_event_paranoid=3
daemon sysadmin3 "$lines" setpriv --bounding-set="$bounding,+sys_admin" --inh-caps=-all
wait_for 60 has_rows 2 "$D/csv/e2ehost/ebprof-self/gauge-burn_seventy-*" ||
	{ show_log "$D"; fail "2c: no values at paranoid 3 with CAP_SYS_ADMIN"; }
collectd_stop "$COLLECTD"
ok "2c: paranoid 3 with CAP_SYS_ADMIN added: values flow"

step "2d. ExecStartPre at a level of 2 or less"
sysctl -qw kernel.perf_event_paranoid=1
dropin_exec_start_pre
paranoid=$(sysctl -n kernel.perf_event_paranoid)
[ "$paranoid" -eq 1 ] || fail "2d: the drop-in's ExecStartPre changed perf_event_paranoid 1 to $paranoid"
sysctl -qw kernel.perf_event_paranoid=3
ok "2d: a level of 1 is left alone"
step "3. kernel features: 68_kernel_features.sh"
bash "$ROOT/tests/e2e/68_kernel_features.sh" || fail "68_kernel_features.sh failed on $release"

step "4. whole stacks without frame pointers (--unwind dwarf)"
CHAINS=("main;run_chains;chain_a_leaf" "main;run_chains;chain_b1;chain_b2;chain_b_leaf"
	"main;run_chains;chain_c1;chain_c2;chain_c3;chain_c4;chain_c_leaf")
pids=()
for b in chains-nofp chains-clangnofp syscalls-nofp; do
	bg "$EX/$b" 300; pids+=("$BG")
done
args=()
for p in "${pids[@]}"; do args+=(-p "$p"); done
"$EBPROF" record --unwind dwarf "${args[@]}" -F 999 -d 250 --format folded \
	-o "$T/dwarf.folded" 2>"$T/dwarf.err" &
R=$!
wait_for 120 sampling "$R" || fail "4: ebprof record --unwind dwarf did not start: $(cat "$T/dwarf.err")"
# 10 s of CPU each: the first ~0.2 s, while the tables build (4x slower
# under TCG than on the host), may outrun the copy ring and be walked by
# frame pointer (counted as 'no table yet'); here that stays well under 1%.
wait_cpu 10 300 "${pids[@]}"
kill -INT "$R"
wait "$R" || fail "4: ebprof record --unwind dwarf failed: $(cat "$T/dwarf.err")"
grep -q "user stacks by unwind tables" "$T/dwarf.err" ||
	fail "4: the summary does not say stacks were walked by tables: $(cat "$T/dwarf.err")"
for b in chains-nofp chains-clangnofp; do
	read -r pct _ tot < <($FOLDED_PY "$T/dwarf.folded" exact "${b:0:15}" "${CHAINS[@]}")
	at_least "$tot" 500 || fail "4: $b: only $tot samples in the chains' leaves"
	at_least "$pct" 99 || {
		cat "$T/dwarf.err"
		grep "^${b:0:15};" "$T/dwarf.folded" | grep -v ";_start;" | sort -t' ' -k2 -nr | head -5
		fail "4: $b: the exact chain from _start in only $pct% of $tot samples (want >= 99%)"
	}
	ok "4: $b: exact chain from _start in $pct% of $tot samples"
done
read -r pct _ tot < <($FOLDED_PY "$T/dwarf.folded" exact syscalls-nofp "main;read_zero_loop")
read -r kpct _ _ < <($FOLDED_PY "$T/dwarf.folded" has syscalls-nofp '_\[k\]$')
at_least "$tot" 500 || fail "4: syscalls-nofp: only $tot samples under read_zero_loop"
at_least "$kpct" 80 || fail "4: syscalls-nofp: only $kpct% of samples have kernel frames"
at_least "$pct" 99 || {
	cat "$T/dwarf.err"
	grep "^syscalls-nofp;" "$T/dwarf.folded" | grep -v ";_start;" | sort -t' ' -k2 -nr | head -5
	fail "4: syscalls-nofp: main;read_zero_loop whole in only $pct% of $tot samples (want >= 99%)"
}
ok "4: syscalls-nofp: kernel frames in $kpct% of samples, the user chain whole in $pct% of $tot"
"$EBPROF" record --unwind fp -p "${pids[0]}" -F 999 -d 3 --format folded -o "$T/fp.folded" \
	2>"$T/fp.err" || fail "4: ebprof record --unwind fp failed: $(cat "$T/fp.err")"
read -r fpct _ ftot < <($FOLDED_PY "$T/fp.folded" exact chains-nofp "${CHAINS[@]}")
at_least 5 "$fpct" || fail "4: by frame pointer the chains are whole in $fpct% of $ftot samples: the check cannot tell"
ok "4: by frame pointer the same chains are whole in $fpct% of $ftot samples"
kill "${pids[@]}"

step "5. off-CPU time, timed by the run queue's clock"
source "$ROOT/tests/e2e/offcpu.bash"
EBPROF_OFFCPU_CLOCK=rq offcpu_record "$T/off" "--mode offcpu --offcpu-period-us 100" sleep 50 10
grep -q "timed by the run queue's clock" "$T/off.err" ||
	fail "5: the waits were not timed by the run queue's clock: $(cat "$T/off.err")"
wall_us=$(( $(offcpu_value "$T/off.out" wall_ns) / 1000 ))
known=$(offcpu_us "$T/off.folded" ';offcpu_sleep_known;.*\[off-cpu: sleep\]$')
within "$known" "$wall_us" "$((wall_us / 10))" ||
	fail "5: offcpu_sleep_known's stack shows $known us of sleep, not ~$wall_us us (10%)"
ok "5: 50 sleeps of 10 ms: $known us on their stack (wall $wall_us us), timed by the run queue's clock"

step "6. collectd without huge pages where Debian has them always: 39_collectd_huge_pages.sh"
grep -q '\[always\]' /sys/kernel/mm/transparent_hugepage/enabled ||
	fail "6: Debian's 6.1 has transparent huge pages always, the guest: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
bash "$ROOT/tests/e2e/39_collectd_huge_pages.sh" || fail "39_collectd_huge_pages.sh failed on $release"

step "7. the ring buffer read through one mapping of its data"
"$ROOT/build/tests/root/test_ringrd_kernel" >"$T/ringrd.log" 2>&1 ||
	fail "7: test_ringrd_kernel failed on $release: $(cat "$T/ringrd.log")"
ok "7: $(grep -c '^\[       OK' "$T/ringrd.log") checks of test_ringrd_kernel pass"

step "8. forks named from their parent's maps: 41_names_forks.sh"
bash "$ROOT/tests/e2e/41_names_forks.sh" || fail "41_names_forks.sh failed on $release"

step "9. a CPU offline and back: 19_record_cpu_hotplug.sh"
bash "$ROOT/tests/e2e/19_record_cpu_hotplug.sh" || fail "19_record_cpu_hotplug.sh failed on $release"

step "done"
