# The systemd drop-in (contrib/systemd/ebprof.conf) grants collectd only
# the capabilities its CapabilityBoundingSet line lists. collectd runs
# here with exactly that bounding set (read from the file, so the test
# follows it) and profiles a process of another user (nobody):
# - the plugin starts and names that process's functions;
# - kernel frames are named (CAP_SYSLOG reads kallsyms addresses; without
#   it they are one [kernel] frame, checked by dropping it): a second
#   process of nobody's spends its time in read(), because the 70/30 one
#   is almost never caught in the kernel (0 or 1 tick in 2,000);
# - the file grants nothing beyond the list the README explains;
# - its ExecStartPre runs first, as systemd runs it (see the drop-in on
#   perf_event_paranoid; 90_kernel_61_smoke.sh tests both levels on 6.1).
source "$(dirname "$0")/collectd.bash"
command -v setpriv >/dev/null || fail "setpriv (util-linux) is not installed"

# As systemd would: the drop-in's ExecStartPre first (on a kernel at
# Debian's perf_event_paranoid=3 it lowers the level to 2), put back on exit.
PARANOID=$(sysctl -n kernel.perf_event_paranoid)
trap 'sysctl -qw kernel.perf_event_paranoid="$PARANOID"; cleanup' EXIT
dropin_exec_start_pre

caps=$(dropin_caps)
for c in $caps; do
	case $c in
	bpf | perfmon | sys_ptrace | checkpoint_restore | dac_read_search | syslog) ;;
	*) fail "the drop-in grants CAP_${c^^}, which the README does not explain" ;;
	esac
done
bounding=$(dropin_bounding)

start_nobody_workloads 60

# run NAME BOUNDING: collectd with that bounding set, kernel and user stacks.
run() {
	D=$(collectd_dir "$1" csv)
	{
		collectd_conf "$D" e2ehost 1
		cat <<EOF2
$(collectd_csv "$D")
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 499
  PID $W
  PID $K
  TopFunctions 50
</Plugin>
EOF2
	} >"$D/collectd.conf"
	collectd_start "$D" setpriv --bounding-set="$2" --inh-caps=-all
	wait_for 20 has_rows 3 "$D/csv/e2ehost/ebprof-self/gauge-burn_seventy-*" ||
		{ show_log "$D"; fail "$1: nobody's burn_seventy is not named"; }
	sleep 3
	collectd_stop "$COLLECTD"
	grep -q 'ebprof plugin: .*\(error\|failed\|cannot\)' "$D/log" && { show_log "$D"; fail "$1: the plugin logged an error"; }
	return 0
}

run dropin "$bounding"
ls "$D/csv/e2ehost/ebprof-total" | grep -q '_\[k\]-' ||
	{ ls "$D/csv/e2ehost/ebprof-total" >&2; fail "with the drop-in's set, no kernel function is named"; }
ok "drop-in set ($(echo $caps)): nobody's functions named, kernel functions named"
# CAP_SYS_PTRACE also lets it open an event on each thread of nobody's processes.
grep -q "filtered: an event on each of the PIDs' [0-9]* thread" "$D/log" ||
	{ show_log "$D"; fail "with the drop-in's set, the PIDs' threads got no events of their own"; }
ok "drop-in set: $(grep -o "an event on each of the PIDs' [0-9]* threads*" "$D/log")"

run nosyslog "$(echo "$bounding" | sed 's/,+syslog//')"
grep -q 'kptr_restrict' "$D/log" || { show_log "$D"; fail "without CAP_SYSLOG: no warning about hidden kernel addresses"; }
ok "without CAP_SYSLOG: $(grep -o 'kernel addresses are hidden[^:]*' "$D/log")"
