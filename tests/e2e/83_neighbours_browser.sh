# The flame graph in a real browser: Debian's chromium, headless, driven
# through chromium-driver by tests/e2e/browser.py, opens an SVG the plugin
# wrote to its spool, served by nginx with contrib's snippet (so the SVG's
# script runs under the snippet's Content-Security-Policy). Through the
# page's own UI it clicks a frame (it fills the width, its ancestors stay),
# searches a regex with '/' and the prompt ("Matched: x%" equals the share
# computed from the window's folded file), resets the zoom, hovers a frame
# (the details line agrees with the folded counts), and finds no error on
# the console. A screenshot of each step is kept in
# build/test-logs/83_neighbours_browser/.
source "$(dirname "$0")/neighbours.bash"
command -v chromium >/dev/null || fail "chromium is not installed (make deps)"
command -v chromedriver >/dev/null || fail "chromedriver is not installed (make deps: chromium-driver)"
/usr/bin/python3 -c 'import selenium' 2>/dev/null || fail "selenium is not installed (make deps: python3-selenium)"

SHOTS=$ROOT/build/test-logs/83_neighbours_browser
rm -rf "$SHOTS"
mkdir -p "$SHOTS"

spool_collectd browser
# The window with the most samples among those with both files (the SVG
# and the folded file of one window share the stamp); not the last one,
# which collectd's shutdown cut short.
stamp= best=0
for f in "$S"/ebprof-*.svg; do
	b=$(basename "$f" .svg)
	[ -f "$S/$b.folded" ] || continue
	n=$(awk '{ s += $NF } END { print s + 0 }' "$S/$b.folded")
	[ "$n" -gt "$best" ] && { stamp=$b; best=$n; }
done
[ -n "$stamp" ] || fail "no window with both an SVG and a folded file"
grep -q ';burn_thirty ' "$S/$stamp.folded" || fail "$stamp.folded has no burn_thirty stack"
cp "$S/$stamp.svg" "$S/$stamp.folded" "$SHOTS/"
nginx_spool "$S"

# Chromium and its driver run in their own process group (start_service),
# so the EXIT trap stops them even if the driver script dies.
start_service browser /usr/bin/python3 "$ROOT/tests/e2e/browser.py" \
	"$NGINX_ORIGIN/flamegraphs/$stamp.svg" "$S/$stamp.folded" "$SHOTS" "$T/chromium-profile"
BROWSER=$SERVICE
rc=0
wait "$BROWSER" || rc=$?
cat "$T/browser.log"
[ "$rc" -eq 0 ] || fail "the browser run failed (exit $rc)"
ok "screenshots and the window's files in $SHOTS: $(cd "$SHOTS" && ls *.png | tr '\n' ' ')"
