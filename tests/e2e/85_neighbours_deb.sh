# The Debian package, installed into this machine for real:
# - `make deb` builds it; lintian (with --pedantic and experimental tags)
#   reports nothing, and it depends on libstdc++6 (opened, not linked);
# - `dpkg -i` installs it; the files the README promises are where it
#   says; `make install` then refuses to overwrite the package's plugin;
# - the installed /usr/bin/ebprof records the 70/30 workload;
# - a collectd with PluginDir /usr/lib/collectd loads the installed
#   plugin through the installed example snippet (`LoadPlugin ebprof`,
#   only PID and Frequency set for the test) and writes 70:30 to CSV;
# - `dpkg -r` leaves none of the files `dpkg -L` listed, and `dpkg -P`
#   leaves no trace in dpkg's database.
# The machine is put back as it was by the EXIT trap, even on failure: the
# package purged, and a `make install`ed plugin or command that was in the
# way moved aside first and restored after. The test refuses to run where
# an ebprof package is already installed (it would remove it).
source "$(dirname "$0")/neighbours.bash"
for tool in dpkg-deb lintian; do
	command -v "$tool" >/dev/null || fail "$tool is not installed (make deps)"
done
installed() { dpkg-query -W -f='${Status}' ebprof 2>/dev/null | grep -q 'installed'; }
installed && fail "an ebprof package is installed here ($(dpkg-query -W -f='${Version}' ebprof));" \
	"this test installs and purges its own: remove it first (dpkg -P ebprof)"

SAVED=$T/saved
put_back() {
	installed && dpkg -P ebprof >/dev/null
	local f
	while read -r f; do
		[ -n "$f" ] && mv -f "$SAVED$f" "$f" && echo "restored $f"
	done < <(cat "$T/saved.list" 2>/dev/null)
}
# Daemons and workloads first (collectd runs the package's plugin), then
# the package, then the scratch directory (which holds what was moved).
trap 'stop_services; for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; done; put_back; cleanup' EXIT

# --- build and lint ---
deb=$(make -s --no-print-directory -C "$ROOT" deb | tail -1)
[ -f "$deb" ] || fail "make deb made no package ($deb)"
lintian -EvIL +pedantic "$deb" >"$T/lintian" 2>&1 || true
tags=$(grep -E '^[EWIPXCO]: ' "$T/lintian" || true)
[ -z "$tags" ] || { cat "$T/lintian" >&2; fail "lintian reports $(wc -l <<<"$tags") tag(s)"; }
ok "$(basename "$deb"): $(stat -c %s "$deb") bytes, lintian (pedantic, experimental) reports no tag"
# Opened at the first C++ name rather than linked: dpkg-shlibdeps cannot see it.
dpkg-deb -f "$deb" Depends | grep -q 'libstdc++6' ||
	fail "the package does not depend on libstdc++6, which the demangler opens: $(dpkg-deb -f "$deb" Depends)"

# --- a make-installed copy in the way is moved aside ---
for f in /usr/lib/collectd/ebprof.so /usr/local/bin/ebprof /usr/bin/ebprof; do
	[ -e "$f" ] || continue
	dpkg-query -S "$f" >/dev/null 2>&1 && fail "$f belongs to a package: $(dpkg-query -S "$f")"
	mkdir -p "$SAVED$(dirname "$f")"
	mv "$f" "$SAVED$f"
	echo "$f" >>"$T/saved.list"
	echo "moved aside a make-installed $f"
done

# --- install ---
dpkg -i "$deb" >"$T/dpkg-i.log" 2>&1 || { cat "$T/dpkg-i.log" >&2; fail "dpkg -i failed"; }
dpkg -L ebprof >"$T/files"
for f in /usr/bin/ebprof /usr/lib/collectd/ebprof.so /usr/share/man/man1/ebprof.1.gz \
	/usr/share/man/man5/ebprof-collectd.5.gz \
	/usr/share/doc/ebprof/copyright /usr/share/doc/ebprof/README.md.gz \
	/usr/share/doc/ebprof/examples/ebprof.conf /usr/share/doc/ebprof/examples/systemd/ebprof.conf \
	/usr/share/doc/ebprof/examples/nginx-ebprof.conf; do
	grep -qx "$f" "$T/files" && [ -f "$f" ] || fail "the package does not install $f"
done
grep -q '^/etc' "$T/files" && fail "the package installs under /etc: $(grep '^/etc' "$T/files")"
dpkg -V ebprof || fail "dpkg -V finds the installed files changed"
ok "dpkg -i: $(wc -l <"$T/files") paths, the plugin in /usr/lib/collectd, ebprof in /usr/bin, examples in /usr/share/doc/ebprof/examples"

if make -s --no-print-directory -C "$ROOT" install >"$T/make-install.log" 2>&1; then
	fail "make install overwrote the package's plugin"
fi
grep -q 'belongs to the Debian package ebprof' "$T/make-install.log" ||
	{ cat "$T/make-install.log" >&2; fail "make install failed without saying why"; }
dpkg -V ebprof || fail "make install changed the package's files"
ok "make install refuses: $(head -1 "$T/make-install.log" | cut -c1-90)..."

# --- the installed command ---
bg nice -n -10 "$EX/split7030" 60; W=$BG
/usr/bin/ebprof record -p "$W" -F 499 -d 2 --format folded -o "$T/r.folded" 2>"$T/record.log" ||
	{ cat "$T/record.log" >&2; fail "/usr/bin/ebprof record failed"; }
grep -q ';burn_seventy [0-9]*$' "$T/r.folded" || fail "/usr/bin/ebprof recorded no burn_seventy"
ok "/usr/bin/ebprof record: $(awk '{ s += $NF } END { print s }' "$T/r.folded") samples"

# --- collectd with the installed plugin and snippet ---
D=$T/collectd
mkdir -p "$D/csv"
{
	collectd_conf "$D" "$EXAMPLE_HOST" 1 | sed 's#^PluginDir .*#PluginDir "/usr/lib/collectd"#'
	collectd_csv "$D"
	sed -e 's/^  Frequency 99$/  Frequency 999\n  PID '"$W"'/' /usr/share/doc/ebprof/examples/ebprof.conf
} >"$D/collectd.conf"
grep -q "^  PID $W" "$D/collectd.conf" || fail "the installed snippet has no 'Frequency 99' line to set"
grep -q '^LoadPlugin ebprof' "$D/collectd.conf" || fail "the installed snippet does not load the plugin"
collectd_start "$D"
H=$D/csv/$EXAMPLE_HOST/ebprof-self
wait_for 30 has_rows 5 "$H/gauge-burn_thirty-*" || { show_log "$D"; fail "no burn_thirty in the CSV after 30 s"; }
collectd_stop "$COLLECTD"
grep -q 'ebprof plugin: sampling at 999 Hz' "$D/log" || { show_log "$D"; fail "no start-up line from the plugin"; }
grep -q "plugin_load: plugin \"ebprof\" successfully loaded" "$D/log" || { show_log "$D"; fail "ebprof.so not loaded"; }
check_split "collectd with the installed plugin" "$(csv_mean "$H/gauge-burn_seventy-*")" \
	"$(csv_mean "$H/gauge-burn_thirty-*")"
kill "$W" 2>/dev/null

# --- remove, purge ---
nfiles=$(while read -r f; do [ -f "$f" ] && echo "$f"; done <"$T/files" | wc -l)
dpkg -r ebprof >"$T/dpkg-r.log" 2>&1 || { cat "$T/dpkg-r.log" >&2; fail "dpkg -r failed"; }
left=$(while read -r f; do [ -f "$f" ] || [ -L "$f" ] && echo "$f"; done <"$T/files")
[ -z "$left" ] || fail "dpkg -r left files behind: $left"
[ -d /usr/share/doc/ebprof ] && fail "dpkg -r left /usr/share/doc/ebprof"
dpkg -P ebprof >"$T/dpkg-p.log" 2>&1 || { cat "$T/dpkg-p.log" >&2; fail "dpkg -P failed"; }
dpkg -L ebprof >/dev/null 2>&1 && fail "dpkg still lists files of ebprof after purge"
installed && fail "ebprof is still installed after dpkg -P"
ok "dpkg -r removed all $nfiles files; dpkg -P left no trace"
