# Prometheus, for real: Debian's prometheus server scrapes collectd's
# write_prometheus (both on 127.0.0.1) while ebprof profiles the 70/30
# workload, and every PromQL expression plugin/dashboards.md shows is run against
# the server's HTTP API, as it is written there:
# - each name in dashboards.md's write_prometheus row selects a series;
# - the "top functions" query returns burn_seventy then burn_thirty, at
#   ~70 and ~30 % of one CPU (70:30 within 5 points);
# - the "samples lost" query returns one series, 0 (a single busy thread at
#   999 Hz loses nothing);
# - the "plugin CPU" query returns one series, above 0 and under 5 % of a
#   CPU.
source "$(dirname "$0")/neighbours.bash"
command -v prometheus >/dev/null || fail "prometheus is not installed (make deps)"

EXPORTER=$(free_port)
split_collectd prom write_prometheus "LoadPlugin write_prometheus
<Plugin write_prometheus>
  Host \"127.0.0.1\"
  Port \"$EXPORTER\"
</Plugin>"

# collectd exports its host name as the "instance" label: honor_labels
# keeps it, instead of renaming it exported_instance (as plugin/dashboards.md says).
PORT=$(free_port)
mkdir -p "$T/prometheus"
cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: collectd
    honor_labels: true
    static_configs:
      - targets: ['127.0.0.1:$EXPORTER']
EOF
start_service prometheus prometheus --config.file="$T/prometheus.yml" \
	--storage.tsdb.path="$T/prometheus" --web.listen-address="127.0.0.1:$PORT"
PROM=$SERVICE
API=http://127.0.0.1:$PORT/api/v1
wait_http 30 "$PROM" prometheus "http://127.0.0.1:$PORT/-/ready"
only_loopback "$PROM" prometheus
only_loopback "$COLLECTD" collectd

# promql EXPR: the instant query's result, one "labels value" line per series.
promql() {
	/usr/bin/python3 - "$API" "$1" <<'PY'
import json, sys, urllib.error, urllib.parse, urllib.request
url = sys.argv[1] + '/query?' + urllib.parse.urlencode({'query': sys.argv[2]})
try:
    reply = json.load(urllib.request.urlopen(url, timeout=5))
except urllib.error.HTTPError as e:
    sys.exit('prometheus refused %s: %s' % (sys.argv[2], e.read().decode()))
assert reply['status'] == 'success', reply
for r in reply['data']['result']:
    print(json.dumps(r['metric'], sort_keys=True), r['value'][1])
PY
}
has_series() { [ -n "$(promql "$1" 2>/dev/null)" ]; }

# Wait until Prometheus has scraped several reads of both functions.
wait_for 40 has_series "count_over_time(collectd_ebprof_gauge{type=\"burn_thirty\"}[1m]) >= 5" ||
	{ service_alive "$PROM" prometheus; show_log "$D"; fail "no burn_thirty series in Prometheus after 40 s"; }

# --- the names in dashboards.md's write_prometheus row ---
n=0
while read -r name; do
	has_series "$name" || { promql '{__name__=~"collectd_ebprof.*"}' | head -20 >&2
		fail "dashboards.md's Prometheus name selects nothing: $name"; }
	n=$((n + 1))
done < <(dashboard_names '| `write_prometheus`')
[ "$n" -ge 4 ] || fail "only $n names in dashboards.md's write_prometheus row"
ok "all $n names in dashboards.md's write_prometheus row select a series"

# --- dashboards.md's queries ---
mapfile -t queries < <(dashboard_queries '- Prometheus:')
[ ${#queries[@]} -eq 3 ] || fail "expected 3 Prometheus queries in plugin/dashboards.md, found ${#queries[@]}"

top=$(promql "${queries[0]}") || fail "query failed: ${queries[0]}"
echo "top functions:"; sed 's/^/    /' <<<"$top"
# topk's result is not ordered by the API: sort by value.
sorted=$(awk '{ print $NF, $0 }' <<<"$top" | sort -rn | cut -d' ' -f2-)
first=$(sed -n 1p <<<"$sorted"); second=$(sed -n 2p <<<"$sorted")
grep -q '"type": "burn_seventy"' <<<"$first" || fail "the top function is not burn_seventy: $first"
grep -q '"type": "burn_thirty"' <<<"$second" || fail "the second function is not burn_thirty: $second"
grep -q '"instance": "web01.example.com"' <<<"$first" || fail "no instance label of the host: $first"
check_split "Prometheus topk" "${first##* }" "${second##* }"

lost=$(promql "${queries[1]}") || fail "query failed: ${queries[1]}"
[ "$(wc -l <<<"$lost")" -eq 1 ] && [ -n "$lost" ] || fail "lost-samples query gave not one series: '$lost'"
[ "${lost##* }" = 0 ] || fail "samples lost: ${lost##* } per second (${queries[1]})"
ok "samples lost per second: 0"

cpu=$(promql "${queries[2]}") || fail "query failed: ${queries[2]}"
[ "$(wc -l <<<"$cpu")" -eq 1 ] && [ -n "$cpu" ] || fail "plugin CPU query gave not one series: '$cpu'"
awk -v c="${cpu##* }" 'BEGIN { exit !(c > 0 && c < 5) }' || fail "plugin CPU ${cpu##* } % of a CPU (want >0, <5)"
ok "the plugin's own CPU: ${cpu##* } % of one CPU"

service_alive "$PROM" prometheus
collectd_stop "$COLLECTD"
