# Shared by the tests that meet ebprof's neighbours for real
# (8*_neighbours_*.sh): Prometheus, Graphite, InfluxDB, a browser, nginx
# and dpkg. Each service runs as the test's child, on 127.0.0.1, on a port
# the kernel picked, with its data under the scratch directory $T, in its
# own process group, and the EXIT trap stops the group even when the test
# fails. Sourced, not run; sources collectd.bash (and with it lib.bash).
source "$(dirname "${BASH_SOURCE[0]}")/collectd.bash"

DASHBOARDS=$ROOT/plugin/dashboards.md
SERVICES=()

# The example host of plugin/dashboards.md: the tests run collectd under this name, so the
# queries and names it shows run here exactly as written.
EXAMPLE_HOST=web01.example.com

stop_services() {
	local g
	for g in "${SERVICES[@]}"; do
		kill -TERM -- "-$g" 2>/dev/null
	done
	for g in "${SERVICES[@]}"; do
		for _ in $(seq 50); do
			kill -0 -- "-$g" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL -- "-$g" 2>/dev/null
	done
}
trap 'stop_services; cleanup' EXIT
# bash runs no EXIT trap when a signal kills it: turn them into an exit.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# free_port [udp]: a port on 127.0.0.1 that nothing uses now.
free_port() {
	/usr/bin/python3 - "${1:-tcp}" <<'PY'
import socket, sys
kind = socket.SOCK_DGRAM if sys.argv[1] == 'udp' else socket.SOCK_STREAM
s = socket.socket(socket.AF_INET, kind)
s.bind(('127.0.0.1', 0))
print(s.getsockname()[1])
PY
}

# start_service NAME COMMAND...: starts COMMAND in its own process group, output
# in $T/NAME.log; its PID (and group) in $SERVICE.
start_service() {
	local name=$1
	shift
	setsid "$@" >"$T/$name.log" 2>&1 &
	SERVICE=$!
	SERVICES+=("$SERVICE")
}

# service_alive PID NAME: fails the test, with the service's log, if it died.
service_alive() {
	kill -0 "$1" 2>/dev/null && return 0
	sed 's/^/    '"$2"'| /' "$T/$2.log" >&2
	fail "$2 exited"
}

# wait_http SECONDS PID NAME URL: waits until URL answers 2xx; fails the test
# with the service's log as soon as PID dies, or after SECONDS.
wait_http() {
	local tries=$(( $1 * 5 ))
	for _ in $(seq "$tries"); do
		http_ok "$4" && return 0
		service_alive "$2" "$3"
		sleep 0.2
	done
	sed 's/^/    '"$3"'| /' "$T/$3.log" >&2
	fail "$3 did not answer $4 within $1 s"
}

# http_ok URL: true when URL answers 2xx.
http_ok() {
	/usr/bin/python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$1" 2>/dev/null
}

# only_loopback PID NAME: fails unless every socket PID listens on is bound
# to 127.0.0.1 (or ::1).
only_loopback() {
	local bad
	bad=$(ss -Hltunp 2>/dev/null | grep "pid=$1," | awk '{ print $5 }' |
		grep -vE '^(127\.0\.0\.1|\[::1\]):[0-9]+$' || true)
	[ -z "$bad" ] || fail "$2 listens beyond loopback: $bad"
}

# dashboard_names PREFIX: every code span (`...`) of the lines of $DASHBOARDS that
# start with PREFIX (a table row), one a line.
# dashboard_queries PREFIX: the first code span of each such line (a list of
# queries, each maybe followed by a remark), one a line.
# Both fail the test if there are none.
dashboard_names() { dashboard_spans "$1" all; }
dashboard_queries() { dashboard_spans "$1" first; }
dashboard_spans() {
	/usr/bin/python3 - "$DASHBOARDS" "$1" "$2" <<'PY' || fail "plugin/dashboards.md has no line starting with '$1'"
import re, sys
found = 0
for line in open(sys.argv[1], encoding='utf-8'):
    if line.startswith(sys.argv[2]):
        spans = re.findall(r'`([^`]+)`', line[len(sys.argv[2]):])
        for span in spans[:1] if sys.argv[3] == 'first' else spans:
            print(span)
            found += 1
sys.exit(0 if found else 1)
PY
}

# split_collectd NAME PLUGINS WRITER_BLOCK: starts the 70/30 workload
# (build/examples/split7030, 60 s, at nice -10 so that a host shared with
# other builds still gives it most of a CPU: dashboards.md's "~70 and ~30 % of
# one CPU" assume it has one) and a collectd named $EXAMPLE_HOST with
# ebprof profiling it at 999 Hz, Interval 1, plus the stock PLUGINS (a
# quoted, space-separated list) configured by WRITER_BLOCK. Sets $D, $W
# and $COLLECTD.
split_collectd() {
	local name=$1 plugins=$2 block=$3
	bg nice -n -10 "$EX/split7030" 60; W=$BG
	# shellcheck disable=SC2086
	D=$(collectd_dir "$name" $plugins)
	{
		collectd_conf "$D" "$EXAMPLE_HOST" 1
		echo "$block"
		cat <<EOF
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 999
  PID $W
  TopFunctions 10
</Plugin>
EOF
	} >"$D/collectd.conf"
	collectd_start "$D"
}

# split_of SEVENTY THIRTY: the first's share of the two, in percent.
split_of() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a + b > 0) printf "%.1f", 100 * a / (a + b); else print "nan" }'
}

# check_split WHERE SEVENTY THIRTY: the 70/30 workload's two values (percent
# of one CPU, as the plugin reports them) must stand 70:30 within 5 points,
# and add up to at most one CPU (the workload is one thread). Their sum is
# the CPU the workload got: ~100 on an idle host, less on a shared one (50
# to 80 % of a CPU measured from /proc/PID/stat on the 2-core test host
# under other builds, even at nice -10), so only its bounds are asserted,
# as in 31_collectd_split7030.
check_split() {
	local pct
	pct=$(split_of "$2" "$3")
	within "$pct" 70 5 || fail "$1: burn_seventy $2, burn_thirty $3: $pct% of the split (want 70±5)"
	awk -v a="$2" -v b="$3" 'BEGIN { exit !(a + b > 5 && a + b <= 105) }' ||
		fail "$1: burn_seventy $2 + burn_thirty $3 is not within one CPU (want 5..105)"
	ok "$1: burn_seventy $2, burn_thirty $3 (% of one CPU): $pct% of the split"
}

# spool_collectd NAME: a spool written by the plugin: collectd profiles the
# 70/30 workload with SpoolInterval 1 (svg and folded) until three windows
# are out, then stops (writing the last). Sets $D and $S (the spool).
spool_collectd() {
	D=$(collectd_dir "$1" csv)
	S=$D/spool
	bg "$EX/split7030" 30; W=$BG
	{
		collectd_conf "$D" "$EXAMPLE_HOST" 1
		cat <<EOF
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 499
  PID $W
  SpoolDir "$S"
  SpoolInterval 1
  SpoolFormat svg folded
</Plugin>
EOF
	} >"$D/collectd.conf"
	collectd_start "$D"
	wait_for 30 spool_has 3 || { show_log "$D"; fail "the plugin wrote fewer than 3 SVG windows in 30 s"; }
	collectd_stop "$COLLECTD"
}
spool_has() { [ "$(ls "$S"/ebprof-*.svg 2>/dev/null | wc -l)" -ge "$1" ]; }

# nginx_spool SPOOL: Debian's nginx on a free 127.0.0.1 port, serving SPOOL
# at /flamegraphs/ through contrib/nginx-ebprof.conf as shipped (only its
# spool path replaced), as the snippet says: inside a server {} block.
# Sets $NGINX (its PID), $NGINX_ORIGIN (http://127.0.0.1:PORT) and $SNIPPET.
nginx_spool() {
	local spool=$1 n=$T/nginx port
	command -v nginx >/dev/null || fail "nginx is not installed (make deps)"
	SNIPPET=$ROOT/contrib/nginx-ebprof.conf
	# nginx's workers run as nobody: the scratch directories must be
	# traversable, as /var/lib/collectd is.
	chmod o+x "$T" "$(dirname "$spool")"
	mkdir -p "$n"
	port=$(free_port)
	sed "s#/var/lib/collectd/ebprof/#$spool/#g" "$SNIPPET" >"$n/ebprof.conf"
	grep -q "alias $spool/;" "$n/ebprof.conf" || fail "the snippet's spool path was not found to point at $spool"
	cat >"$n/nginx.conf" <<EOF
daemon off;
pid $n/nginx.pid;
error_log $n/error.log;
events { worker_connections 64; }
http {
	include /etc/nginx/mime.types;
	access_log $n/access.log;
	client_body_temp_path $n/body;
	proxy_temp_path $n/proxy;
	fastcgi_temp_path $n/fastcgi;
	uwsgi_temp_path $n/uwsgi;
	scgi_temp_path $n/scgi;
	server {
		listen 127.0.0.1:$port;
		include $n/ebprof.conf;
	}
}
EOF
	nginx -t -q -e "$n/error.log" -p "$n" -c "$n/nginx.conf" ||
		{ cat "$n/error.log" >&2; fail "nginx refuses the snippet"; }
	start_service nginx nginx -e "$n/error.log" -p "$n" -c "$n/nginx.conf"
	NGINX=$SERVICE
	NGINX_ORIGIN=http://127.0.0.1:$port
	wait_http 20 "$NGINX" nginx "$NGINX_ORIGIN/flamegraphs/latest.svg"
}
