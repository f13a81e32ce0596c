# Hosts that cannot, or may not, be profiled fully. Each case gives one
# clear message, and collectd keeps running its other plugins (the load
# plugin's CSV keeps growing):
# 1. no capabilities at all, as nobody (the CLI): names CAP_BPF/CAP_PERFMON;
# 2. kernel.perf_event_paranoid=3 (Debian's "no perf_event_open for
#    unprivileged users"): as root values flow; without CAP_PERFMON and
#    CAP_SYS_ADMIN init fails naming the capabilities (CAP_PERFMON alone
#    at 3, which Debian's kernels refuse: 90_kernel_61_smoke.sh);
# 3. kernel.kptr_restrict=2: kernel frames become one "[kernel]" frame,
#    user frames still resolve, and the plugin warns once;
# 4. no BTF: a mount namespace with an empty tmpfs over /sys/kernel/btf
#    (what the sampler checks; there is no environment variable for it):
#    init fails saying the kernel needs CONFIG_DEBUG_INFO_BTF.
# Every sysctl changed here is restored on exit, whatever happens.
source "$(dirname "$0")/collectd.bash"
command -v setpriv >/dev/null || fail "setpriv (util-linux) is not installed"

PARANOID=$(sysctl -n kernel.perf_event_paranoid)
KPTR=$(sysctl -n kernel.kptr_restrict)
restore() {
	sysctl -qw kernel.perf_event_paranoid="$PARANOID"
	sysctl -qw kernel.kptr_restrict="$KPTR"
	cleanup
}
trap restore EXIT

# daemon NAME 'EBPROF LINES' WRAPPER...: collectd with load, csv and ebprof;
# checks that it runs and the load CSV grows; leaves $D, stops collectd.
daemon() {
	local name=$1 lines=$2 before after
	shift 2
	D=$(collectd_dir "$name" csv load)
	{
		collectd_conf "$D" e2ehost 1
		printf 'LoadPlugin load\nLoadPlugin csv\n<Plugin csv>\n  DataDir "%s/csv"\n</Plugin>\n' "$D"
		printf 'LoadPlugin ebprof\n<Plugin ebprof>\n%s\n</Plugin>\n' "$lines"
	} >"$D/collectd.conf"
	collectd_start "$D" "$@"
	L="$D/csv/e2ehost/load/load-*"
	wait_for 15 has_rows 2 "$L" || { show_log "$D"; fail "$name: the load plugin wrote nothing"; }
	before=$(csv_rows "$L")
	sleep 3
	after=$(csv_rows "$L")
	kill -0 "$COLLECTD" 2>/dev/null || { show_log "$D"; fail "$name: collectd died"; }
	[ "$after" -gt "$before" ] || fail "$name: the load CSV stopped growing ($before -> $after rows)"
	collectd_stop "$COLLECTD"
}

# expect_init_failure NEEDLE: the log has the failed init and the advice.
expect_init_failure() {
	grep -q "Initialization of plugin \`ebprof' failed" "$D/log" ||
		{ show_log "$D"; fail "no failed init reported"; }
	grep -q "ebprof plugin: .*$1" "$D/log" || { show_log "$D"; fail "the log does not say '$1'"; }
	[ ! -e "$D/csv/e2ehost/ebprof-self" ] || fail "ebprof values written after a failed init"
}

# 1. No capabilities, not root.
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
	"$EBPROF" record -d 1 -o /dev/null 2>"$T/nobody.err" && fail "ebprof record ran as nobody"
grep -q 'needs CAP_BPF and CAP_PERFMON' "$T/nobody.err" ||
	fail "as nobody, the error does not name the capabilities: $(cat "$T/nobody.err")"
ok "no capabilities (nobody): $(tail -1 "$T/nobody.err")"

# 2. perf_event_paranoid=3.
sysctl -qw kernel.perf_event_paranoid=3
bg "$EX/split7030" 60; W=$BG
daemon paranoid "  Frequency 199
  PID $W"
has_rows 2 "$D/csv/e2ehost/ebprof-self/gauge-burn_seventy-*" ||
	{ show_log "$D"; fail "paranoid=3 with CAP_PERFMON: no values"; }
ok "perf_event_paranoid=3, root: values flow"
daemon paranoid-nocap "  Frequency 199" setpriv --bounding-set=-perfmon,-sys_admin
expect_init_failure 'CAP_PERFMON'
ok "perf_event_paranoid=3 without CAP_PERFMON: $(grep -m1 'ebprof plugin: cannot' "$D/log")"
sysctl -qw kernel.perf_event_paranoid="$PARANOID"

# 3. kptr_restrict=2.
sysctl -qw kernel.kptr_restrict=2
"$EBPROF" record -p "$W" -F 199 -d 2 --format folded -o "$T/kptr.folded" 2>"$T/kptr.err" ||
	fail "ebprof record failed under kptr_restrict=2: $(cat "$T/kptr.err")"
grep -q 'kernel addresses hidden' "$T/kptr.err" ||
	fail "the CLI summary does not mention kptr_restrict: $(cat "$T/kptr.err")"
grep -q 'burn_seventy' "$T/kptr.folded" || fail "user frames did not resolve under kptr_restrict=2"
if grep '_\[k\]' "$T/kptr.folded" | grep -qv '\[kernel\]_\[k\]'; then
	fail "a kernel frame other than [kernel] under kptr_restrict=2"
fi
daemon kptr "  Frequency 199
  PID $W"
has_rows 2 "$D/csv/e2ehost/ebprof-self/gauge-burn_seventy-*" ||
	{ show_log "$D"; fail "kptr_restrict=2: no values"; }
n=$(grep -c 'ebprof plugin: .*kptr_restrict' "$D/log")
[ "$n" -eq 1 ] || { show_log "$D"; fail "kptr_restrict=2: $n warnings in the log, want 1"; }
ok "kptr_restrict=2: user frames resolve, kernel as [kernel]; $(grep 'kptr_restrict' "$D/log")"
sysctl -qw kernel.kptr_restrict="$KPTR"

# 4. No BTF.
daemon nobtf "  Frequency 199" unshare -m --propagation private \
	sh -c 'mount -t tmpfs -o size=1m tmpfs /sys/kernel/btf && exec "$@"' sh
expect_init_failure 'CONFIG_DEBUG_INFO_BTF'
ok "no BTF: $(grep -m1 'ebprof plugin: cannot' "$D/log")"
