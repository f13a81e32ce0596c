# A real collectd with ebprof in Mode wall and the csv plugin: a thread that
# sleeps 10 ms 400 times (4 s) shows in collectd's CSV as off-CPU time next
# to the CPU metrics, in percent of one thread (100 = one thread waiting all
# the time). Summed over the reads (Interval 1), the off-CPU time under
# offcpu_sleep_known and in the sleep state is the 4 s it slept (within
# 10%, reads cut the first and last second); no value exceeds one thread
# by more than 10%; the off-CPU health metrics are written.
source "$(dirname "$0")/collectd.bash"
source "$ROOT/tests/e2e/offcpu.bash"

D=$(collectd_dir offcpu csv)
{
	collectd_conf "$D" e2ehost 1
	cat <<EOF2
$(collectd_csv "$D")
LoadPlugin ebprof
<Plugin ebprof>
  Mode "wall"
  Frequency 199
  OffCPUPeriod 100
  Process "offcpu"
  TopFunctions 20
</Plugin>
EOF2
} >"$D/collectd.conf"
collectd_start "$D"
wait_for 60 grep -q 'ebprof plugin: sampling on- and off-CPU time, timed by .*, at 199 Hz' "$D/log" ||
	{ show_log "$D"; fail "no start-up line in wall mode, naming the waits' clock"; }
"$OFFCPU" sleep 400 10 >"$T/w.out" || fail "workload failed"
sleep 2.5
collectd_stop "$COLLECTD"
slept_s=$(awk '$1 == "wall_ns" { printf "%.3f", $2 / 1e9 }' "$T/w.out")

H=$D/csv/e2ehost
# sum_s GLOB: the seconds a percent-of-one-thread gauge adds up to, one row a second.
sum_s() {
	cat $1 2>/dev/null | awk -F, '$1 ~ /^[0-9]/ { s += $2 } END { printf "%.3f", s / 100 }'
}
max_pct() {
	cat $1 2>/dev/null | awk -F, '$1 ~ /^[0-9]/ && $2 > m { m = $2 } END { printf "%.1f", m }'
}
known=$(sum_s "$H/ebprof-offcpu_total/gauge-offcpu_sleep_known-*")
sleep_state=$(sum_s "$H/ebprof-offcpu_state/gauge-sleep-*")
peak=$(max_pct "$H/ebprof-offcpu_total/gauge-offcpu_sleep_known-*")
echo "CSV: offcpu_sleep_known $known s, sleep state $sleep_state s, peak $peak%; slept $slept_s s"
within "$known" "$slept_s" "$(awk -v s="$slept_s" 'BEGIN { print s / 10 }')" ||
	{ ls -R "$H" >&2; show_log "$D"; fail "offcpu_sleep_known adds up to $known s in the CSV, not $slept_s s"; }
at_least "$sleep_state" "$known" || fail "the sleep state ($sleep_state s) holds less than one of its waits ($known s)"
awk -v p="$peak" 'BEGIN { exit !(p > 50 && p <= 110) }' ||
	fail "offcpu_sleep_known peaks at $peak% of one thread: not a percent of one thread"
has_rows 3 "$H/ebprof-offcpu_self/gauge-[[]other[]]-*" || fail "no off-CPU [other] bucket"
has_rows 3 "$H/ebprof-offcpu_state/gauge-runnable-*" || fail "no runnable state series"
has_rows 3 "$H/ebprof-offcpu_state/gauge-io-*" || fail "no io state series"
for m in derive-lost-offcpu_throttled derive-lost-offcpu_untimed frequency-samples; do
	has_rows 3 "$H/ebprof-health/$m-*" || fail "health metric $m missing or has fewer than 3 rows"
done
# Wall mode keeps the CPU metrics: the [other] bucket of on-CPU self time.
has_rows 3 "$H/ebprof-self/gauge-[[]other[]]-*" || fail "no on-CPU metrics in wall mode"
ok "collectd CSV: $known s off-CPU under offcpu_sleep_known for $slept_s s of sleep"

# The README's off-CPU metric table (after the main one under ### Metrics)
# names exactly the plugin instances wall mode adds.
python3 - "$ROOT/README.md" >"$T/listed" <<'PY' || fail "no off-CPU metric table in the README"
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
section = text.split("\n### Metrics\n", 1)[1].split("\n### ", 1)[0]
tables, rows, in_table = [], [], False
for line in section.splitlines() + [""]:
    cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else None
    if cells and cells[:3] == ["plugin instance", "type", "type instance"]:
        in_table, rows = True, []
        continue
    if in_table and not cells:
        tables.append(rows)
        in_table = False
        continue
    if in_table and not set(cells[0]) <= set("-: "):
        rows.append(re.sub("`", "", cells[0]))
if len(tables) < 2:
    sys.exit("want the metric table and the off-CPU table")
offcpu = [t for t in tables if t and all(r.startswith("offcpu_") for r in t)]
if len(offcpu) != 1:
    sys.exit("no table of offcpu_* plugin instances")
print("\n".join(sorted(set(offcpu[0]))))
PY
for d in "$H"/ebprof-offcpu_*; do echo "${d##*/ebprof-}"; done | sort -u >"$T/wrote"
diff -u "$T/listed" "$T/wrote" >&2 || fail "the README's off-CPU table and what collectd wrote differ"
ok "the README's off-CPU table names exactly the $(wc -l <"$T/wrote") plugin instances wall mode adds"
