# libstdc++ is opened at the first C++ name, not linked: a collectd whose
# plugin profiles only C never maps it (0.7 MB of VmRSS saved on such a
# host), and one that profiles a C++ program maps it and names the
# program's template function as `c++filt` does, in the spool's folded
# files. The plugin's own ELF file must not ask for it either.
source "$(dirname "$0")/collectd.bash"
command -v g++ >/dev/null || fail "g++ is not installed (make deps installs it)"

readelf -d "$PLUGIN_SO" | grep -q 'NEEDED.*libstdc++' &&
	fail "$PLUGIN_SO names libstdc++ as NEEDED: the dynamic loader maps it with the plugin"

g++ -O2 -fno-omit-frame-pointer -o "$T/tmpl" "$(dirname "$0")/tmpl.cpp" || fail "g++ failed"
want=$(c++filt "$(nm "$T/tmpl" | awk '$3 ~ /burn_template/ { print $3 }')")
[ -n "$want" ] || fail "no burn_template symbol in the fixture"

has_libstdcxx() { grep -q 'libstdc++' "/proc/$1/maps"; }
# profile NAME PID: collectd with the plugin on PID alone, its spool's
# folded files every second; waits for 3 of them. Sets $P and $D.
profile() {
	D=$(collectd_dir "$1" csv)
	{
		collectd_conf "$D" e2ehost 1
		collectd_csv "$D"
		printf 'LoadPlugin ebprof\n<Plugin ebprof>\n  Frequency 499\n  PID %s\n' "$2"
		printf '  SpoolDir "%s/spool"\n  SpoolInterval 1\n  SpoolFormat folded\n</Plugin>\n' "$D"
	} >"$D/collectd.conf"
	collectd_start "$D"
	P=$COLLECTD
	folded_files() { [ "$(ls "$D"/spool/ebprof-*.folded 2>/dev/null | wc -l)" -ge 3 ]; }
	wait_for 60 folded_files || { show_log "$D"; fail "$1: fewer than 3 folded files in the spool"; }
}

bg "$EX/split7030" 120; C=$BG
profile c "$C"
grep -q 'burn_seventy' "$D"/spool/ebprof-*.folded || { show_log "$D"; fail "C: burn_seventy is in no folded file"; }
has_libstdcxx "$P" && fail "collectd mapped libstdc++ while its plugin profiled only a C program"
ok "profiling C only: burn_seventy named, no libstdc++ in collectd's maps"
collectd_stop "$P"

bg "$T/tmpl" 120; X=$BG
profile cpp "$X"
cat "$D"/spool/ebprof-*.folded >"$T/cpp.folded"
pct=$($FOLDED_PY "$T/cpp.folded" self tmpl "$want")
at_least "$pct" 90 || {
	sort -t' ' -k2 -n "$T/cpp.folded" | tail -3
	fail "C++: '$want' is the leaf of only $pct% of the samples"
}
has_libstdcxx "$P" || fail "collectd named C++ without mapping libstdc++: the test cannot tell"
ok "profiling C++: '$want' in $pct% of the samples, libstdc++ opened for it"
collectd_stop "$P"
