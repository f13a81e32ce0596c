# The spool behind a real web server: Debian's nginx, with
# contrib/nginx-ebprof.conf as shipped (only its spool path changed to this
# test's), serves a spool that the plugin inside collectd wrote while
# profiling the 70/30 workload. Over 127.0.0.1:
# - latest.svg and a timestamped SVG come back byte for byte as
#   image/svg+xml, with the snippet's Content-Security-Policy and nosniff;
#   latest.folded as text/plain;
# - /flamegraphs/ lists the history (every timestamped file);
# - nothing else is served: a planted file, a hidden temporary file, a
#   symlink to /etc/passwd under one of our names, a subdirectory, a path
#   that climbs out; and no method but GET/HEAD (403 or 405).
source "$(dirname "$0")/neighbours.bash"

# --- a spool written by the plugin ---
spool_collectd spool
[ -f "$S/latest.svg" ] && [ -f "$S/latest.folded" ] || fail "no latest.* in the spool"

# Things a shared spool directory may hold that must never be served.
echo secret >"$S/secret.txt"
echo partial >"$S/.ebprof-1234-1.tmp"
ln -s /etc/passwd "$S/ebprof-20200101T000000Z.svg"
mkdir "$S/sub" && echo nested >"$S/sub/ebprof-20200101T000001Z.svg"
nginx_spool "$S"
only_loopback "$NGINX" nginx

# fetch PATH [METHOD]: "STATUS" then "Header: value" lines, body in $T/body.
fetch() {
	/usr/bin/python3 - "$NGINX_ORIGIN$1" "${2:-GET}" "$T/body" <<'PY'
import sys, urllib.error, urllib.request
req = urllib.request.Request(sys.argv[1], method=sys.argv[2], data=b'x' if sys.argv[2] == 'POST' else None)
try:
    r = urllib.request.urlopen(req, timeout=5)
except urllib.error.HTTPError as e:
    r = e
print(r.status)
for k, v in r.headers.items():
    print('%s: %s' % (k, v))
open(sys.argv[3], 'wb').write(r.read())
PY
}
header() { grep -i "^$1: " <<<"$2" | head -1 | cut -d' ' -f2-; }

CSP=$(sed -n 's/.*add_header Content-Security-Policy "\([^"]*\)".*/\1/p' "$SNIPPET")
[ -n "$CSP" ] || fail "no Content-Security-Policy in $SNIPPET"
newest=$(basename "$(ls "$S"/ebprof-2*Z*.svg | grep -v 20200101 | sort | tail -1)")
for f in latest.svg "$newest" latest.folded; do
	r=$(fetch "/flamegraphs/$f")
	[ "$(head -1 <<<"$r")" = 200 ] || fail "GET $f: $(head -1 <<<"$r")"
	cmp -s "$T/body" "$S/$f" || fail "GET $f: the body is not the spool file"
	case $f in
	*.svg) want=image/svg+xml ;;
	*) want=text/plain ;;
	esac
	[ "$(header Content-Type "$r")" = "$want" ] || fail "GET $f: Content-Type $(header Content-Type "$r"), want $want"
	[ "$(header Content-Security-Policy "$r")" = "$CSP" ] || fail "GET $f: CSP '$(header Content-Security-Policy "$r")'"
	[ "$(header X-Content-Type-Options "$r")" = nosniff ] || fail "GET $f: no nosniff"
done
grep -q 'burn_seventy' "$S/latest.svg" || fail "latest.svg has no burn_seventy"
ok "latest.svg, $newest (image/svg+xml) and latest.folded (text/plain) served whole, with CSP '$CSP'"

r=$(fetch /flamegraphs/)
[ "$(head -1 <<<"$r")" = 200 ] || fail "GET /flamegraphs/: $(head -1 <<<"$r")"
n=0
for f in "$S"/ebprof-2*Z*.svg "$S"/ebprof-2*Z*.folded; do
	[[ $f == *20200101* ]] && continue
	grep -q "href=\"$(basename "$f")\"" "$T/body" || fail "the listing misses $(basename "$f")"
	n=$((n + 1))
done
grep -q 'ebprof-1234' "$T/body" && fail "the listing shows the hidden temporary file"
ok "the listing shows all $n timestamped files"

for path in secret.txt .ebprof-1234-1.tmp ebprof-20200101T000000Z.svg sub/ebprof-20200101T000001Z.svg \
	sub/ ../../../etc/passwd %2e%2e/%2e%2e/etc/passwd; do
	r=$(fetch "/flamegraphs/$path")
	case $(head -1 <<<"$r") in
	400 | 403 | 404) ;;
	*) fail "GET /flamegraphs/$path was served: $(head -1 <<<"$r")" ;;
	esac
	grep -q 'root:' "$T/body" && fail "GET /flamegraphs/$path leaked /etc/passwd"
done
for m in POST PUT DELETE; do
	for path in latest.svg ""; do
		r=$(fetch "/flamegraphs/$path" $m)
		case $(head -1 <<<"$r") in
		403 | 405) ;;
		*) fail "$m /flamegraphs/$path: $(head -1 <<<"$r"), want 403 or 405" ;;
		esac
	done
done
cmp -s "$T/body" "$S/latest.svg" && fail "a refused method returned the file"
ok "a planted file, a temporary file, a symlink, a subdirectory, a climb out, POST, PUT and DELETE are refused"
