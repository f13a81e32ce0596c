# InfluxDB, for real: collectd's network plugin sends to the collectd
# listener of Debian's InfluxDB 1.6 (influxd, all on 127.0.0.1, data in the
# scratch directory) while ebprof profiles the 70/30 workload, and the
# `influx` client reads it back:
# - each series key in dashboards.md's InfluxDB row is in SHOW SERIES;
# - every InfluxQL query plugin/dashboards.md shows runs as written: the top
#   functions are burn_seventy then burn_thirty (70:30 within 5 points), no
#   sample is lost, the plugin's own CPU is above 0 and under 5 % of a CPU.
source "$(dirname "$0")/neighbours.bash"
command -v influxd >/dev/null || fail "influxd is not installed (make deps: influxdb)"
command -v influx >/dev/null || fail "influx is not installed (make deps: influxdb-client)"

I=$T/influxdb
mkdir -p "$I"
HTTP=$(free_port) RPC=$(free_port) UDP=$(free_port udp)
# batch-timeout 1s: the listener writes a batch every second, not every 10.
cat >"$I/influxdb.conf" <<EOF
reporting-disabled = true
bind-address = "127.0.0.1:$RPC"
[meta]
  dir = "$I/meta"
[data]
  dir = "$I/data"
  wal-dir = "$I/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[http]
  bind-address = "127.0.0.1:$HTTP"
  log-enabled = false
[[collectd]]
  enabled = true
  bind-address = "127.0.0.1:$UDP"
  database = "collectd"
  batch-timeout = "1s"
  typesdb = "/usr/share/collectd/types.db"
EOF
start_service influxd influxd -config "$I/influxdb.conf"
INFLUXD=$SERVICE
wait_http 30 "$INFLUXD" influxd "http://127.0.0.1:$HTTP/ping"
only_loopback "$INFLUXD" influxd

split_collectd influx network "LoadPlugin network
<Plugin network>
  Server \"127.0.0.1\" \"$UDP\"
</Plugin>"

# influxql QUERY: the influx client's CSV output, without header lines.
influxql() {
	influx -host 127.0.0.1 -port "$HTTP" -database collectd -format csv -execute "$1" |
		grep -v '^name,'
}
rows_of() { [ "$(influxql "$1" 2>/dev/null | awk -F, '$NF != ""' | wc -l)" -ge "$2" ]; }

wait_for 40 rows_of "SELECT value FROM ebprof_value WHERE type_instance = 'burn_thirty'" 6 ||
	{ service_alive "$INFLUXD" influxd; show_log "$D"; fail "no 6 points of burn_thirty in InfluxDB after 40 s"; }

# --- the series keys in dashboards.md's InfluxDB row ---
series=$(influxql 'SHOW SERIES' | sed 's/^"\(.*\)"$/\1/') || fail "SHOW SERIES failed"
n=0
while read -r key; do
	grep -qxF -- "$key" <<<"$series" ||
		{ grep ebprof <<<"$series" | head -20 >&2; fail "dashboards.md's InfluxDB series is not there: $key"; }
	n=$((n + 1))
done < <(dashboard_names '| `network` → InfluxDB' | grep -E '^ebprof_[a-z]+,host=')
[ "$n" -ge 4 ] || fail "only $n series keys in dashboards.md's InfluxDB row"
ok "all $n series keys in dashboards.md's InfluxDB row exist"

# --- dashboards.md's queries ---
mapfile -t queries < <(dashboard_queries '- InfluxDB:')
[ ${#queries[@]} -eq 3 ] || fail "expected 3 InfluxDB queries in plugin/dashboards.md, found ${#queries[@]}"

top=$(influxql "${queries[0]}") || fail "query failed: ${queries[0]}"
echo "top functions:"; sed 's/^/    /' <<<"$top"
# name,time,top,type_instance; sort by the value.
sorted=$(sort -t, -k3 -rn <<<"$top")
first=$(sed -n 1p <<<"$sorted"); second=$(sed -n 2p <<<"$sorted")
[ "$(cut -d, -f4 <<<"$first")" = burn_seventy ] || fail "the top function is not burn_seventy: $first"
[ "$(cut -d, -f4 <<<"$second")" = burn_thirty ] || fail "the second function is not burn_thirty: $second"
grep -q '\[other\]' <<<"$top" && fail "[other] is not excluded: $top"
check_split "InfluxDB top" "$(cut -d, -f3 <<<"$first")" "$(cut -d, -f3 <<<"$second")"

# The two rate queries bucket by 10 s: they need two buckets.
wait_for 30 rows_of "${queries[1]}" 1 || fail "no lost-samples rate after 30 s: ${queries[1]}"
lost=$(influxql "${queries[1]}" | awk -F, '$NF != ""')
awk -F, '$NF != 0 { exit 1 }' <<<"$lost" || fail "samples lost: $lost (${queries[1]})"
ok "samples lost per second: 0 ($(wc -l <<<"$lost") buckets)"

# Its derivative needs two points of each measurement in a bucket too.
wait_for 30 rows_of "${queries[2]}" 2 || fail "no plugin CPU rate after 30 s: ${queries[2]}"
cpu=$(influxql "${queries[2]}" | awk -F, '$NF != ""')
grep -q '^ebprof_user,' <<<"$cpu" && grep -q '^ebprof_syst,' <<<"$cpu" ||
	fail "plugin CPU query gave not user and syst series: '$cpu'"
c=$(awk -F, '{ last[$1] = $NF } END { printf "%.4f", last["ebprof_user"] + last["ebprof_syst"] }' <<<"$cpu")
awk -v c="$c" 'BEGIN { exit !(c > 0 && c < 5) }' || fail "plugin CPU $c % of a CPU (want >0, <5)"
ok "the plugin's own CPU: $c % of one CPU (user + system, last bucket)"

service_alive "$INFLUXD" influxd
collectd_stop "$COLLECTD"
