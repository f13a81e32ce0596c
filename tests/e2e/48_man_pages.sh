# The manual pages: ebprof(1) (cli/ebprof.1) and ebprof-collectd(5)
# (plugin/ebprof-collectd.5).
#   - both lint clean: groff -ww and mandoc -T lint say nothing;
#   - ebprof(1) describes, in each subcommand's section, exactly the
#     options that subcommand's --help lists (parsed from both sides, so
#     an option added without documentation, or documented and gone, fails);
#   - ebprof-collectd(5) describes exactly the keys plugin/config.c
#     accepts, each with its default; collectd with the plugin runs its
#     example block;
#   - make install puts both where man finds them.
source "$(dirname "$0")/collectd.bash"

MAN1=$ROOT/cli/ebprof.1
MAN5=$ROOT/plugin/ebprof-collectd.5

for page in "$MAN1" "$MAN5"; do
	out=$(groff -ww -man -z "$page" 2>&1) || fail "groff failed on $page: $out"
	[ -z "$out" ] || fail "groff -ww warns on $page: $out"
	out=$(mandoc -T lint "$page" 2>&1) || fail "mandoc -T lint fails on $page: $out"
	[ -z "$out" ] || fail "mandoc -T lint warns on $page: $out"
	ok "$(basename "$page"): groff -ww and mandoc -T lint clean"
done

# The options of a --help text and of one section of the page, one a line.
for cmd in record top render diff features; do
	"$EBPROF" "$cmd" --help >"$T/help.$cmd" 2>&1
	[ "$cmd" = features ] || [ -s "$T/help.$cmd" ] || fail "ebprof $cmd --help printed nothing"
done
python3 - "$MAN1" "$T" <<'PY' || fail "ebprof(1) and the --help texts differ (above)"
import re, sys
page, tmp = sys.argv[1], sys.argv[2]
src = open(page).read()

def options(text):
    longs = set(re.findall(r'(?<![\w-])--([a-z][a-z-]*[a-z])', text))
    shorts = set(re.findall(r'(?<![\w-])-([a-zA-Z])\b', text))
    return {'--' + o for o in longs} | {'-' + o for o in shorts}

def section(title):
    m = re.search(r'^\.SS "' + re.escape(title) + r'"\n(.*?)(?=^\.S[SH] )', src, re.S | re.M)
    if not m:
        sys.exit('no section "%s" in %s' % (title, page))
    text = re.sub(r'\\f[BIRP]', '', m.group(1)).replace('\\-', '-')
    return options(text)

sampling = section('Sampling options (record and top)')
bad = False
for cmd in ['record', 'top', 'render', 'diff', 'features']:
    helped = options(open('%s/help.%s' % (tmp, cmd)).read())
    documented = section('ebprof ' + cmd)
    if cmd in ('record', 'top'):
        documented |= sampling
    missing, extra = helped - documented, documented - helped
    if missing:
        print('ebprof %s: in --help, not in the man page: %s' % (cmd, ' '.join(sorted(missing))))
        bad = True
    if extra:
        print('ebprof %s: in the man page, not in --help: %s' % (cmd, ' '.join(sorted(extra))))
        bad = True
    if not missing and not extra:
        print('ok: ebprof %s: %d options in --help and in the man page' % (cmd, len(helped)))
sys.exit(1 if bad else 0)
PY

python3 - "$MAN5" "$ROOT/plugin/config.c" <<'PY' || fail "ebprof-collectd(5) and plugin/config.c differ (above)"
import re, sys
page, config = sys.argv[1], sys.argv[2]
src = open(page).read()
accepted = set(re.findall(r'strcasecmp\(key, "([A-Za-z]+)"\)', open(config).read()))
if len(accepted) < 10:
    sys.exit('found only %d keys in %s: has the parser changed?' % (len(accepted), config))
m = re.search(r'^\.SH OPTIONS\n(.*?)(?=^\.SH )', src, re.S | re.M)
if not m:
    sys.exit('no OPTIONS section in ' + page)
entries = re.split(r'^\.TP\n', m.group(1), flags=re.M)[1:]
documented = {}
for e in entries:
    k = re.match(r'\.BI? ([A-Za-z]+)', e)
    if k:
        documented[k.group(1)] = e
bad = False
for key in sorted(accepted - set(documented)):
    print('plugin key %s: accepted by plugin/config.c, not in the man page' % key); bad = True
for key in sorted(set(documented) - accepted):
    print('plugin key %s: in the man page, not accepted by plugin/config.c' % key); bad = True
for key, e in sorted(documented.items()):
    if 'Default:' not in e:
        print('plugin key %s: no default in the man page' % key); bad = True
if not bad:
    print('ok: %d plugin keys in plugin/config.c and in the man page, each with its default' % len(accepted))
ex = re.search(r'^\.SH EXAMPLE\n.*?^\.EX\n(.*?)^\.EE', src, re.S | re.M)
if not ex:
    sys.exit('no example block')
block = ex.group(1).replace('\\(dq', '"')
used = set(re.findall(r'^\s+([A-Za-z]+) ', block, re.M))
if used - accepted:
    print('example uses unknown keys: %s' % ' '.join(sorted(used - accepted))); bad = True
sys.exit(1 if bad else 0)
PY
PY_BLOCK=$(python3 - "$MAN5" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
print(re.search(r'^\.SH EXAMPLE\n.*?^\.EX\n(.*?)^\.EE', src, re.S | re.M).group(1).replace('\\(dq', '"'), end='')
PY
)
d=$(collectd_dir example)
{ collectd_conf "$d" e2ehost 10; printf '%s\n' "$PY_BLOCK"; } | sed "s|/var/lib/collectd/ebprof|$d/spool|" >"$d/collectd.conf"
# collectd -t does not run the plugins' config callbacks: run the daemon.
# Accepted, it keeps running (timeout's 124); refused, it exits at once.
timeout 6 collectd -f -C "$d/collectd.conf" >"$d/log" 2>&1; rc=$?
[ "$rc" -eq 124 ] || { cat "$d/log"; fail "collectd exited $rc on the man page's example block"; }
! grep -Eq 'ebprof plugin: .*(bad value|unknown option|expected)' "$d/log" ||
	{ cat "$d/log"; fail "the plugin complains about the example block"; }
# The check can fail: the same block with one bad value is refused.
{ collectd_conf "$d" e2ehost 10; printf '%s\n' "$PY_BLOCK" | sed 's/TopFunctions 30/TopFunctions 0/'; } >"$d/bad.conf"
timeout 6 collectd -f -C "$d/bad.conf" >"$d/badlog" 2>&1; rc=$?
[ "$rc" -ne 124 ] && [ "$rc" -ne 0 ] || { cat "$d/badlog"; fail "collectd ran with TopFunctions 0: the example check proves nothing"; }
ok "collectd runs the example block (and refuses it with TopFunctions 0)"

# make install puts both pages where man looks.
make -C "$ROOT" --no-print-directory -s install DESTDIR="$T/root" PREFIX=/usr/local >"$T/install.log" 2>&1 ||
	fail "make install failed: $(cat "$T/install.log")"
for f in usr/local/share/man/man1/ebprof.1 usr/local/share/man/man5/ebprof-collectd.5; do
	[ -f "$T/root/$f" ] || fail "make install did not install /$f"
done
MANPATH=$T/root/usr/local/share/man man -w ebprof >/dev/null 2>&1 || fail "man does not find the installed ebprof(1)"
ok "make install: ebprof(1) and ebprof-collectd(5) under \$PREFIX/share/man, found by man"
