# Shared by the collectd end-to-end tests (3x_collectd_*.sh): a real
# `collectd -f` per test, each in its own directory under the scratch
# directory $T, with a PluginDir of regular-file copies (collectd's
# PluginDir does not load symlinks). Sourced, not run; sources lib.sh,
# whose EXIT trap kills every daemon and workload started here.
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

PLUGIN_SO=$ROOT/build/ebprof.so
[ -f "$PLUGIN_SO" ] || fail "$PLUGIN_SO is not built: run make"
command -v collectd >/dev/null || fail "collectd is not installed: run make deps"

# collectd_dir NAME [PLUGIN...]: makes $T/NAME with plugins/ (ebprof plus
# the named stock plugins), csv/ and spool/; prints the directory.
collectd_dir() {
	local d=$T/$1
	shift
	mkdir -p "$d/plugins" "$d/csv" "$d/spool"
	cp "$PLUGIN_SO" "$d/plugins/ebprof.so"
	for p in "$@"; do
		cp "/usr/lib/collectd/$p.so" "$d/plugins/$p.so" || fail "no stock $p plugin"
	done
	echo "$d"
}

# collectd_conf DIR HOSTNAME INTERVAL: the global part of a config, on
# stdout. Log lines go to the daemon's stderr, which collectd_start keeps
# in DIR/log (with no log plugin loaded, collectd logs to stderr).
collectd_conf() {
	cat <<EOF
Hostname "$2"
FQDNLookup false
BaseDir "$1"
PIDFile "$1/collectd.pid"
PluginDir "$1/plugins"
TypesDB "/usr/share/collectd/types.db"
Interval $3
EOF
}

# collectd_csv DIR: the csv plugin's block, writing under DIR/csv, on stdout.
collectd_csv() {
	cat <<EOF
LoadPlugin csv
<Plugin csv>
  DataDir "$1/csv"
</Plugin>
EOF
}

# collectd_start DIR [WRAPPER...]: runs collectd -f on DIR/collectd.conf
# in the background (optionally under a wrapper command such as setpriv);
# its PID is in $COLLECTD.
collectd_start() {
	local d=$1
	shift
	"$@" collectd -f -C "$d/collectd.conf" >"$d/log" 2>&1 &
	COLLECTD=$!
	BG_PIDS+=("$COLLECTD")
}

# collectd_stop PID: SIGTERM, then wait up to 10 s for a clean exit; its
# exit status is in $COLLECTD_STATUS (134: it aborted).
collectd_stop() {
	COLLECTD_STATUS=
	kill -TERM "$1" 2>/dev/null || return 0
	for _ in $(seq 100); do
		kill -0 "$1" 2>/dev/null || { wait "$1" 2>/dev/null; COLLECTD_STATUS=$?; return 0; }
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null
	fail "collectd $1 did not stop within 10 s of SIGTERM"
}

# csv_rows FILE-GLOB: data rows (no header) in the newest CSV file matching.
csv_rows() {
	local f
	f=$(ls -t $1 2>/dev/null | head -1)
	[ -n "$f" ] || { echo 0; return; }
	tail -n +2 "$f" | wc -l
}

# csv_mean FILE-GLOB: the mean of the value column, over every row.
csv_mean() {
	cat $1 2>/dev/null | awk -F, '$1 ~ /^[0-9]/ { s += $2; n++ } END { if (n) printf "%.4f", s / n; else print "nan" }'
}

# has_rows MIN FILE-GLOB: true when the CSV has at least MIN rows.
has_rows() {
	[ "$(csv_rows "$2")" -ge "$1" ]
}

# show_log DIR: the daemon's log, indented, for failure reports.
show_log() {
	sed 's/^/    log| /' "$1/log" >&2
}

# The systemd drop-in a hardened collectd runs with.
DROPIN=$ROOT/contrib/systemd/ebprof.conf

# dropin_caps: the capabilities its CapabilityBoundingSet= line grants, in
# lower case without CAP_ (bpf perfmon ...), one a line.
dropin_caps() {
	local line
	line=$(grep '^CapabilityBoundingSet=' "$DROPIN") || fail "no CapabilityBoundingSet= in $DROPIN"
	echo "${line#*=}" | tr ' ' '\n' | sed -n 's/^CAP_//p' | tr 'A-Z' 'a-z'
}

# dropin_bounding: the same as setpriv's --bounding-set (-all,+bpf,...).
dropin_bounding() {
	echo "-all$(printf ',+%s' $(dropin_caps))"
}

# dropin_exec_start_pre: runs the drop-in's ExecStartPre= command lines as
# systemd would ("+": as root, outside the bounding set; "$$" is "$").
dropin_exec_start_pre() {
	local line cmd
	while IFS= read -r line; do
		cmd=${line#ExecStartPre=}
		cmd=${cmd#+}
		eval "${cmd//\$\$/\$}" || fail "the drop-in's ExecStartPre failed: $cmd"
	done < <(grep '^ExecStartPre=' "$DROPIN")
}

# start_nobody_workloads SECONDS: copies of split7030 (the 70/30 split) and
# syscalls (kernel frames: the 70/30 one is almost never caught in the
# kernel) run as nobody, the user a hardened collectd must still profile;
# their PIDs are in $W and $K.
start_nobody_workloads() {
	local w
	cp "$EX/split7030" "$EX/syscalls" "$T/"
	chmod 755 "$T" "$T/split7030" "$T/syscalls"
	for w in split7030 syscalls; do
		setpriv --reuid=65534 --regid=65534 --clear-groups -- "$T/$w" "$1" >/dev/null 2>&1 &
		BG_PIDS+=("$!")
	done
	W="" K=""
	for _ in $(seq 50); do W=$(pgrep -u 65534 -n -x split7030) && break; sleep 0.1; done
	for _ in $(seq 50); do K=$(pgrep -u 65534 -n -x syscalls) && break; sleep 0.1; done
	[ -n "$W" ] && [ -n "$K" ] || fail "the workloads did not start as nobody"
}
