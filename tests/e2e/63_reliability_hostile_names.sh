# Function names are outside input: any program can name its functions
# anything. build/fixtures/hostile_names-pie burns CPU under
#   hostile_entry -> <script>alert(1)</script> -> quotes"'&amp;&<>
#   -> ctl ESC[31m DEL TAB SOH STX CR LF| -> utf8 FF FE C3( E2 82
#   -> a;semicolon and spaces -> long(10 kB of x)end -> burn
# (the assembler refuses SOH, STX, CR and LF, so a copy is patched).
# Profiled with `ebprof record`, and by the plugin inside collectd:
# - the SVG parses (xmllint), holds the names escaped, no <script> but its
#   own, no control character, only valid UTF-8, and no label of 10 kB;
# - the folded file is one line per stack, and the hostile stack has
#   exactly its 9 frames after the process name (';' inside a name does
#   not split it);
# - collectd's identifiers are legal: no '/', at most 127 bytes, no
#   control character, valid UTF-8, and the CSV files are written;
# - write_prometheus serves valid UTF-8 (Prometheus drops a whole scrape
#   for one invalid label value: every metric of the host would be lost).
source "$(dirname "$0")/collectd.bash"
KEEP=${KEEP:-}
command -v xmllint >/dev/null || fail "xmllint is not installed (make deps)"

BIN=$T/hostile_bin
python3 - "$ROOT/build/fixtures/hostile_names-pie" "$BIN" <<'PY' || fail "cannot patch the fixture"
import sys
data = open(sys.argv[1], 'rb').read()
assert data.count(b'\t@@@@|') == 1, 'placeholder not found once'
open(sys.argv[2], 'wb').write(data.replace(b'\t@@@@|', b'\t\x01\x02\r\n|'))
PY
chmod +x "$BIN"
bg "$BIN" 60; W=$BG

"$EBPROF" record -p "$W" -F 499 -d 3 -o "$T/h.svg" 2>"$T/svg.summary" ||
	fail "ebprof record (svg) exited $?: $(cat "$T/svg.summary")"
"$EBPROF" record -p "$W" -F 499 -d 3 --format folded -o "$T/h.folded" 2>"$T/folded.summary" ||
	fail "ebprof record (folded) exited $?: $(cat "$T/folded.summary")"

# --- SVG ---
xmllint --noout "$T/h.svg" || fail "the SVG does not parse"
python3 - "$T/h.svg" <<'PY' || fail "the SVG lets a hostile name through"
import re, sys
raw = open(sys.argv[1], 'rb').read()
text = raw.decode('utf-8')  # raises on invalid UTF-8
assert raw.count(b'<script') == 1, 'more than one <script'
assert b'&lt;script&gt;alert(1)&lt;/script&gt;' in raw, 'the <script> name is not there, escaped'
assert b'&amp;amp;' in raw, '&amp; in a name is not escaped'
bad = [c for c in text if (ord(c) < 0x20 and c not in '\n\t') or ord(c) == 0x7f]
assert not bad, 'control characters: %r' % bad[:5]
labels = re.findall(r'<text[^>]*>([^<]*)</text>', text)
assert labels, 'no labels'
longest = max(len(l) for l in labels)
assert longest < 400, 'a label of %d characters' % longest
titles = [t for t in re.findall(r'<title>([^<]*)</title>', text) if t.startswith('long')]
assert titles, 'the 10 kB name is not in the graph'
print('svg: %d bytes, longest label %d chars, long name title %d chars' %
      (len(raw), longest, len(titles[0])))
PY
ok "SVG parses, names escaped, no control characters, valid UTF-8"

# --- folded ---
python3 - "$T/h.folded" <<'PY' || fail "the folded file is broken by a hostile name"
import re, sys
raw = open(sys.argv[1], 'rb').read()
lines = raw.split(b'\n')
assert lines[-1] == b'', 'no final newline'
hostile = 0
for line in lines[:-1]:
    assert re.fullmatch(rb'[^\n]* [0-9]+', line), 'not a stack line: %r' % line[:80]
    assert not re.search(rb'[\x00-\x08\x0a-\x1f\x7f]', line), 'control byte in %r' % line[:80]
    frames = line.rsplit(b' ', 1)[0].split(b';')
    if b'hostile_entry' in frames:
        tail = frames[frames.index(b'hostile_entry') + 1:]
        if tail and tail[-1] == b'burn':
            assert len(tail) == 7, 'hostile stack has %d frames after the entry: %r' % (
                len(tail), [f[:20] for f in tail])
            assert tail[0] == b'<script>alert(1)</script>'
            assert tail[4] == b'a_semicolon and spaces'
            assert tail[5].startswith(b'long') and len(tail[5]) == 10007
            hostile += int(line.rsplit(b' ', 1)[1])
assert hostile > 0, 'no complete hostile stack'
print('folded: %d lines, %d samples on the hostile stack' % (len(lines) - 1, hostile))
PY
ok "folded: one line per stack, hostile frames kept whole"

# --- collectd ---
D=$(collectd_dir hostile csv write_prometheus)
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
{
	collectd_conf "$D" e2ehost 1
	cat <<EOF2
LoadPlugin write_prometheus
<Plugin write_prometheus>
  Host "127.0.0.1"
  Port "$PORT"
</Plugin>
$(collectd_csv "$D")
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 499
  PID $W
  TopFunctions 20
</Plugin>
EOF2
} >"$D/collectd.conf"
collectd_start "$D"
wait_for 20 has_rows 3 "$D/csv/e2ehost/ebprof-self/gauge-burn-*" ||
	{ show_log "$D"; ls "$D/csv/e2ehost/ebprof-self" >&2; fail "no CSV for burn"; }
kill -0 "$COLLECTD" || { show_log "$D"; fail "collectd died"; }
python3 - "$PORT" <<'PY' || { show_log "$D"; fail "write_prometheus serves what Prometheus refuses"; }
import sys, urllib.request
raw = urllib.request.urlopen('http://127.0.0.1:%s/metrics' % sys.argv[1]).read()
raw.decode('utf-8')  # raises on invalid UTF-8
assert b'<script>alert(1)<_script>' in raw, 'the hostile names are not in the scrape'
print('write_prometheus: %d bytes, valid UTF-8' % len(raw))
PY
collectd_stop "$COLLECTD"
[ -n "$KEEP" ] && cp -r "$D/csv" "$KEEP"
python3 - "$D/csv/e2ehost" <<'PY' || { show_log "$D"; fail "an identifier is not legal"; }
import os, re, sys
base = sys.argv[1]
names = []
for plugin_dir in os.listdir(base):
    for f in os.listdir(os.path.join(base, plugin_dir)):
        m = re.fullmatch(rb'(.*)-\d{4}-\d\d-\d\d', os.fsencode(f))
        assert m, f
        names.append(m.group(1))
hostile = [n for n in names if n.startswith((b'gauge-<script', b'gauge-quotes', b'gauge-ctl',
                                             b'gauge-utf8', b'gauge-a', b'gauge-long'))]
for n in names:
    ti = n.split(b'-', 1)[-1]  # "type-instance", or a type alone
    assert len(ti) <= 127, 'type instance of %d bytes' % len(ti)
    assert not re.search(rb'[\x00-\x1f\x7f/]', ti), 'bad byte in %r' % ti[:60]
    ti.decode('utf-8')  # raises on invalid UTF-8
assert len(hostile) >= 4, 'only %d hostile names reached the CSV: %r' % (len(hostile), names)
print('collectd: %d identifiers, %d from hostile names, longest %d bytes' %
      (len(names), len(hostile), max(len(n) for n in names)))
PY
grep -q "ebprof plugin:.*error" "$D/log" && { show_log "$D"; fail "the plugin logged an error"; }
ok "collectd identifiers legal, daemon kept running"
