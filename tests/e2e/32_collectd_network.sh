# Two collectd daemons on loopback: an agent runs ebprof and sends with the
# network plugin; a central daemon listens and writes CSV. The agent's
# per-function and health values arrive under the agent's host name, with
# no types file on the central side (every type is in the stock types.db).
source "$(dirname "$0")/collectd.bash"

# A free UDP port on 127.0.0.1.
PORT=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

C=$(collectd_dir central csv network)
{
	collectd_conf "$C" central 1
	cat <<EOF2
LoadPlugin network
<Plugin network>
  Listen "127.0.0.1" "$PORT"
</Plugin>
$(collectd_csv "$C")
EOF2
} >"$C/collectd.conf"
rm "$C/plugins/ebprof.so" # the central daemon does not need the plugin
collectd_start "$C"; CENTRAL=$COLLECTD

bg "$EX/split7030" 30; W=$BG
A=$(collectd_dir agent network)
{
	collectd_conf "$A" agent1 1
	cat <<EOF2
LoadPlugin network
<Plugin network>
  Server "127.0.0.1" "$PORT"
</Plugin>
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 499
  PID $W
  TopFunctions 5
</Plugin>
EOF2
} >"$A/collectd.conf"
collectd_start "$A"; AGENT=$COLLECTD

R=$C/csv/agent1
wait_for 20 has_rows 3 "$R/ebprof-self/gauge-burn_seventy-*" ||
	{ show_log "$A"; show_log "$C"; ls -R "$C/csv" >&2; fail "burn_seventy did not arrive at the central daemon within 20 s"; }
wait_for 10 has_rows 3 "$R/ebprof-health/ps_cputime-*" || fail "health values did not arrive"
for f in ebprof-self/gauge-burn_thirty ebprof-total/gauge-burn_seventy "ebprof-self/gauge-[[]other[]]" \
	ebprof-health/frequency-samples ebprof-health/derive-lost-collision; do
	has_rows 1 "$R/$f-*" || fail "$f did not arrive at the central daemon"
done
collectd_stop "$AGENT"
collectd_stop "$CENTRAL"
grep -qi 'error' "$C/log" && { show_log "$C"; fail "the central daemon logged an error"; }
v=$(csv_mean "$R/ebprof-self/gauge-burn_seventy-*")
ok "central daemon on port $PORT got $(ls "$R"/ebprof-self | wc -l) self series from agent1 (burn_seventy ~$v % of a CPU) and $(ls "$R"/ebprof-health | wc -l) health series"
