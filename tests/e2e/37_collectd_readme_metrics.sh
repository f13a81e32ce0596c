# The README's metric table (README.md, "### Metrics") lists exactly what a
# real collectd writes: every plugin instance, and every health metric as
# the csv plugin names its file (TYPE-TYPE_INSTANCE, or TYPE alone). The
# table is parsed generically (backquoted names in the type instance
# column, "—" for none), so a metric added later without its row, or a
# row whose metric is gone, fails here.
source "$(dirname "$0")/collectd.bash"

# readme_metrics: "PLUGIN_INSTANCE FILE" for each health name in the
# table, and "PLUGIN_INSTANCE" alone for each plugin instance.
readme_metrics() {
	python3 - "$ROOT/README.md" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
section = text.split("\n### Metrics\n", 1)[1].split("\n### ", 1)[0]
rows, in_table = [], False
for line in section.splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else None
    if cells and cells[:3] == ["plugin instance", "type", "type instance"]:
        in_table = True
        continue
    if not in_table:
        continue
    if not cells:
        break
    if set(cells[0]) <= set("-: "):
        continue
    rows.append(cells)
if not rows:
    sys.exit("no metric table under ### Metrics in README.md")
for cells in rows:
    inst, typ, tinst = (re.sub(r"`", "", c) for c in cells[:3])
    print(inst)
    if inst != "health":
        continue
    names = re.findall(r"`([^`]+)`", cells[2])
    if not names:
        print(f"{inst} {typ}")
    for n in names:
        print(f"{inst} {typ}-{n}")
PY
}

D=$(collectd_dir readme csv)
bg "$EX/split7030" 30; W=$BG
{
	collectd_conf "$D" e2ehost 1
	collectd_csv "$D"
	printf 'LoadPlugin ebprof\n<Plugin ebprof>\n  Frequency 199\n  PID %s\n</Plugin>\n' "$W"
} >"$D/collectd.conf"
collectd_start "$D"
H=$D/csv/e2ehost
wait_for 30 has_rows 2 "$H/ebprof-health/duration-drain-*" || { show_log "$D"; fail "no health values"; }
sleep 1
collectd_stop "$COLLECTD"

readme_metrics | sort -u >"$T/listed"
[ -s "$T/listed" ] || fail "no metric read from the README's table"
{
	for d in "$H"/ebprof-*; do echo "${d##*/ebprof-}"; done
	for f in "$H"/ebprof-health/*; do
		f=${f##*/}
		echo "health ${f%-[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]}"
	done
} | sort -u >"$T/wrote"
if ! diff -u "$T/listed" "$T/wrote" >"$T/difference"; then
	sed 's/^/    /' "$T/difference" >&2
	fail "the README's metric table and what collectd wrote differ (- README only, + written only)"
fi
ok "the README's table names exactly the $(grep -c '^health ' "$T/wrote") health metrics and $(grep -vc ' ' "$T/wrote") plugin instances collectd wrote"
