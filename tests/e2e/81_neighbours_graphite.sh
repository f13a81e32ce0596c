# Graphite, for real: collectd's write_graphite sends to Debian's
# carbon-cache (graphite-carbon), which writes whisper files, while ebprof
# profiles the 70/30 workload; graphite-web's render API (Django's server,
# the Debian graphite-web code) reads them back. All on 127.0.0.1, data in
# the scratch directory.
# - whisper-fetch (carbon's own tool) reads the burn_seventy and
#   burn_thirty files under dashboards.md's names: 70:30 within 5 points;
# - each name in dashboards.md's write_graphite row renders datapoints;
# - every Graphite query plugin/dashboards.md shows is rendered as written: the top
#   functions are burn_seventy then burn_thirty (70:30), no sample is lost,
#   the plugin's own CPU is above 0 and under 5 % of a CPU.
source "$(dirname "$0")/neighbours.bash"
command -v carbon-cache >/dev/null || fail "carbon-cache is not installed (make deps: graphite-carbon)"
command -v whisper-fetch >/dev/null || fail "whisper-fetch is not installed (make deps: python3-whisper)"
/usr/bin/python3 -c 'import graphite.settings' 2>/dev/null || fail "graphite-web is not installed (make deps)"

G=$T/graphite-server
mkdir -p "$G/conf" "$G/whisper" "$G/log/webapp"
LINE=$(free_port) PICKLE=$(free_port) CACHEQ=$(free_port) WEB=$(free_port)
cat >"$G/conf/carbon.conf" <<EOF
[cache]
STORAGE_DIR = $G/
LOCAL_DATA_DIR = $G/whisper/
CONF_DIR = $G/conf/
LOG_DIR = $G/log/
PID_DIR = $G/
DATABASE = whisper
ENABLE_LOGROTATION = False
MAX_CACHE_SIZE = inf
MAX_UPDATES_PER_SECOND = inf
MAX_CREATES_PER_MINUTE = inf
LINE_RECEIVER_INTERFACE = 127.0.0.1
LINE_RECEIVER_PORT = $LINE
ENABLE_UDP_LISTENER = False
PICKLE_RECEIVER_INTERFACE = 127.0.0.1
PICKLE_RECEIVER_PORT = $PICKLE
CACHE_QUERY_INTERFACE = 127.0.0.1
CACHE_QUERY_PORT = $CACHEQ
EOF
# One-second points for an hour: collectd's Interval is 1 s here.
printf '[all]\npattern = .*\nretentions = 1s:1h\n' >"$G/conf/storage-schemas.conf"
start_service carbon carbon-cache --config="$G/conf/carbon.conf" --nodaemon \
	--pidfile="$G/carbon.pid" --logdir="$G/log" start
CARBON=$SERVICE

# graphite-web reads the settings module GRAPHITE_SETTINGS_MODULE names
# (instead of /etc/graphite/local_settings.py); CARBONLINK lets it see the
# points carbon still holds in memory.
cat >"$G/ebprof_graphite_settings.py" <<EOF
SECRET_KEY = 'ebprof-e2e-only'
STORAGE_DIR = '$G'
WHISPER_DIR = '$G/whisper/'
LOG_DIR = '$G/log/webapp'
INDEX_FILE = '$G/index'
CARBONLINK_HOSTS = ['127.0.0.1:$CACHEQ']
ALLOWED_HOSTS = ['127.0.0.1']
EOF
start_service graphite-web env PYTHONPATH="$G" \
	GRAPHITE_SETTINGS_MODULE=ebprof_graphite_settings DJANGO_SETTINGS_MODULE=graphite.settings \
	/usr/bin/python3 -m django runserver --noreload "127.0.0.1:$WEB"
WEBPID=$SERVICE
wait_http 30 "$WEBPID" graphite-web "http://127.0.0.1:$WEB/render?target=none&format=json"
ss -Hltn | grep -q "127.0.0.1:$LINE " || { service_alive "$CARBON" carbon; fail "carbon not listening"; }
only_loopback "$CARBON" carbon
only_loopback "$WEBPID" graphite-web

split_collectd graphite write_graphite "LoadPlugin write_graphite
<Plugin write_graphite>
  <Node \"carbon\">
    Host \"127.0.0.1\"
    Port \"$LINE\"
    Protocol \"tcp\"
    Prefix \"collectd.\"
  </Node>
</Plugin>"

WSP=$G/whisper/collectd/web01_example_com
has_points() { [ -f "$WSP/ebprof-self/gauge-burn_thirty.wsp" ] &&
	[ "$(whisper-fetch --from=$(( $(date +%s) - 60 )) "$WSP/ebprof-self/gauge-burn_thirty.wsp" |
		grep -vc None)" -ge "$1" ]; }
wait_for 40 has_points 6 ||
	{ service_alive "$CARBON" carbon; show_log "$D"; ls -R "$G/whisper" | head -30 >&2
		fail "carbon wrote no 6 points of burn_thirty in 40 s"; }
only_loopback "$COLLECTD" collectd

# --- whisper files, read with whisper's own tool ---
wmean() {
	whisper-fetch --from=$(( $(date +%s) - 120 )) "$WSP/ebprof-self/gauge-$1.wsp" |
		awk '$2 != "None" { s += $2; n++ } END { if (n) printf "%.2f", s / n; else print "nan" }'
}
check_split "whisper files" "$(wmean burn_seventy)" "$(wmean burn_thirty)"

# render TARGET: "name mean-of-non-null-points count" per series, from the
# last two minutes.
render() {
	/usr/bin/python3 - "http://127.0.0.1:$WEB/render" "$1" <<'PY'
import json, sys, urllib.error, urllib.parse, urllib.request
q = urllib.parse.urlencode({'target': sys.argv[2], 'from': '-2min', 'format': 'json'})
try:
    series = json.load(urllib.request.urlopen(sys.argv[1] + '?' + q, timeout=10))
except urllib.error.HTTPError as e:
    sys.exit('graphite-web refused %s: %s' % (sys.argv[2], e.read().decode()[:2000]))
for s in series:
    v = [p[0] for p in s['datapoints'] if p[0] is not None]
    print(s['target'], '%.4f' % (sum(v) / len(v)) if v else 'nan', len(v))
PY
}

# --- the names in dashboards.md's write_graphite row ---
n=0
while read -r name; do
	[[ $name == collectd.* ]] || continue # the Prefix setting, not a name
	out=$(render "$name") || fail "render failed for $name"
	[ -n "$out" ] && [ "$(awk '{ print $3 }' <<<"$out")" -gt 0 ] ||
		{ ls -R "$WSP" | head -40 >&2; fail "dashboards.md's Graphite name has no datapoints: $name"; }
	n=$((n + 1))
done < <(dashboard_names '| `write_graphite`')
[ "$n" -ge 3 ] || fail "only $n names in dashboards.md's write_graphite row"
ok "all $n names in dashboards.md's write_graphite row have datapoints"

# --- dashboards.md's queries ---
mapfile -t queries < <(dashboard_queries '- Graphite:')
[ ${#queries[@]} -eq 3 ] || fail "expected 3 Graphite queries in plugin/dashboards.md, found ${#queries[@]}"

top=$(render "${queries[0]}") || fail "query failed: ${queries[0]}"
echo "top functions:"; sed 's/^/    /' <<<"$top"
sorted=$(sort -k2 -rn <<<"$top")
first=$(sed -n 1p <<<"$sorted"); second=$(sed -n 2p <<<"$sorted")
[[ $first == *.gauge-burn_seventy\ * ]] || fail "the top function is not burn_seventy: $first"
[[ $second == *.gauge-burn_thirty\ * ]] || fail "the second function is not burn_thirty: $second"
grep -q 'other' <<<"$top" && fail "[other] is not excluded: $top"
check_split "Graphite highestAverage" "$(cut -d' ' -f2 <<<"$first")" "$(cut -d' ' -f2 <<<"$second")"

lost=$(render "${queries[1]}") || fail "query failed: ${queries[1]}"
[ "$(wc -l <<<"$lost")" -eq 1 ] && [ "$(cut -d' ' -f3 <<<"$lost")" -gt 0 ] ||
	fail "lost-samples query gave not one series with points: '$lost'"
[ "$(cut -d' ' -f2 <<<"$lost")" = 0.0000 ] || fail "samples lost: $lost (${queries[1]})"
ok "samples lost per second: 0 ($(cut -d' ' -f3 <<<"$lost") points)"

cpu=$(render "${queries[2]}") || fail "query failed: ${queries[2]}"
[ "$(wc -l <<<"$cpu")" -eq 1 ] || fail "plugin CPU query gave not one series: '$cpu'"
c=$(cut -d' ' -f2 <<<"$cpu")
awk -v c="$c" 'BEGIN { exit !(c > 0 && c < 5) }' || fail "plugin CPU $c % of a CPU (want >0, <5)"
ok "the plugin's own CPU: $c % of one CPU"

service_alive "$CARBON" carbon
collectd_stop "$COLLECTD"
