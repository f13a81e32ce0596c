# A real collectd with ebprof and csv profiles the 70/30 workload:
# - the CSV self values of burn_seventy and burn_thirty stand 70:30 (±5);
# - every health metric is written;
# - the spool holds SVG that an XML parser accepts and folded files,
#   retention removes old windows, latest.* point at the newest, and no
#   temporary file is left after shutdown.
# 999 Hz for ~9 s gives several thousand samples even on a busy 2-CPU host,
# so the binomial error of the share is under 1 point and ±5 holds.
source "$(dirname "$0")/collectd.bash"

D=$(collectd_dir split csv)
bg "$EX/split7030" 30; W=$BG
{
	collectd_conf "$D" e2ehost 1
	cat <<EOF
$(collectd_csv "$D")
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 999
  PID $W
  TopFunctions 10
  SpoolDir "$D/spool"
  SpoolInterval 2
  SpoolFormat svg folded
  SpoolRetention 2
</Plugin>
EOF
} >"$D/collectd.conf"
collectd_start "$D"

# Watch the spool while it runs, to know how many windows were written.
seen=$T/seen
: >"$seen"
for _ in $(seq 45); do
	ls "$D/spool" >>"$seen" 2>/dev/null
	sleep 0.2
done
collectd_stop "$COLLECTD"
grep -q 'ebprof plugin: sampling at 999 Hz' "$D/log" || { show_log "$D"; fail "no start-up line"; }

H=$D/csv/e2ehost
self70=$(csv_mean "$H/ebprof-self/gauge-burn_seventy-*")
self30=$(csv_mean "$H/ebprof-self/gauge-burn_thirty-*")
[ "$self70" != nan ] && [ "$self30" != nan ] ||
	{ ls -R "$D/csv" >&2; show_log "$D"; fail "no CSV for burn_seventy or burn_thirty"; }
pct=$(awk -v a="$self70" -v b="$self30" 'BEGIN { printf "%.1f", 100 * a / (a + b) }')
samples=$(cat "$H"/ebprof-health/frequency-samples-* | awk -F, '$1 ~ /^[0-9]/ { s += $2 } END { printf "%d", s }')
at_least "$samples" 2000 || fail "only $samples samples (need 2000 for a ±5 test)"
within "$pct" 70 5 || fail "burn_seventy is $pct% of the split (want 70±5; mean self $self70 vs $self30 % of a CPU)"
ok "CSV self: burn_seventy $self70, burn_thirty $self30 (% of one CPU): $pct% of the split, ~$samples samples"

# Percent of one CPU: the workload is one thread, so the two cannot
# exceed one CPU, and the [other] bucket exists.
awk -v a="$self70" -v b="$self30" 'BEGIN { exit !(a + b <= 105) }' || fail "self values sum to more than one CPU: $self70 + $self30"
has_rows 3 "$H/ebprof-self/gauge-[[]other[]]-*" || fail "no [other] bucket"
has_rows 3 "$H/ebprof-total/gauge-burn_seventy-*" || fail "no total value for burn_seventy"

for m in frequency-samples frequency-events count-stacks percent-unresolved duration-drain \
	ps_cputime derive-lost-kernel_stack derive-lost-user_stack derive-lost-collision \
	derive-lost-stacks_full derive-lost-counts_full derive-lost-missing_stack derive-lost-memory; do
	has_rows 3 "$H/ebprof-health/$m-*" || fail "health metric $m missing or has fewer than 3 rows"
done
ok "every health metric written ($(ls "$H/ebprof-health" | wc -l) files)"

S=$D/spool
svgs=$(ls "$S"/ebprof-*.svg 2>/dev/null | wc -l)
foldeds=$(ls "$S"/ebprof-*.folded 2>/dev/null | wc -l)
windows=$(grep -c '^ebprof-.*\.svg$' <(sort -u "$seen"))
[ "$svgs" -eq 2 ] && [ "$foldeds" -eq 2 ] || { ls -la "$S" >&2; fail "spool holds $svgs SVG and $foldeds folded files, want 2 each (SpoolRetention 2)"; }
[ "$windows" -ge 3 ] || fail "only $windows windows seen in the spool; retention was not exercised"
for f in "$S"/ebprof-*.svg "$S"/latest.svg; do
	xmllint --noout "$f" || fail "$f is not well-formed XML"
done
grep -q 'burn_seventy' "$S/latest.svg" || fail "latest.svg does not mention burn_seventy"
grep -q ';burn_seventy [0-9]*$' "$S/latest.folded" || fail "latest.folded has no burn_seventy stack"
# Newest by stamp, then by sequence: two windows in one second are
# ebprof-STAMP.svg then ebprof-STAMP-1.svg, which a plain sort inverts.
newest=$(ls "$S"/ebprof-*.svg | sed 's/Z\.svg$/Z-0.svg/' | sort -V | tail -1 | sed 's/Z-0\.svg$/Z.svg/')
[ "$(stat -c %i "$S/latest.svg")" = "$(stat -c %i "$newest")" ] || fail "latest.svg is not the newest SVG ($newest)"
leftovers=$(ls -A "$S" | grep -c '^\.' || true)
[ "$leftovers" -eq 0 ] || fail "temporary files left in the spool: $(ls -A "$S")"
ok "spool: $windows windows written, $svgs SVG + $foldeds folded kept, valid XML, latest.* newest, no temporary files"
