# pprof that tools can follow: a real recording of the 70/30 workload as
# pprof carries, for each user frame, the mapping of the file its code is
# in (path, build-id, range, file offset) and the function's address, so a
# tool that symbolizes by build-id finds the same functions:
# - the executable's and libc's mappings have the files' paths and the
#   build-ids `readelf -n` prints;
# - burn_seventy's and burn_thirty's addresses, turned into file offsets
#   through their mapping, are where `nm` and the program headers put
#   those symbols in the file;
# - every address lies in its mapping (our reader checks), protoc decodes
#   the file with the published schema, and the samples are unchanged.
source "$(dirname "$0")/lib.bash"
PPROF_PY="/usr/bin/python3 $ROOT/tests/e2e/pprof.py"
BIN=$(readlink -f "$EX/split7030")
LIBC=$(readlink -f /usr/lib/x86_64-linux-gnu/libc.so.6)

bg "$EX/split7030" 20; W=$BG
"$EBPROF" record -p "$W" -F 499 -d 2 --format pprof -o "$T/r.pb.gz" 2>"$T/summary" ||
	fail "record --format pprof failed: $(cat "$T/summary")"
gzip -dc "$T/r.pb.gz" | protoc --decode perftools.profiles.Profile -I "$ROOT/tests/pprof" \
	profile.proto >"$T/r.txt" 2>&1 || fail "protoc cannot decode it: $(head -5 "$T/r.txt")"
$PPROF_PY "$T/r.pb.gz" locations >"$T/locations" || fail "our pprof reader refused it"
sed 's/^/    /' "$T/locations"

build_id() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }
for f in "$BIN" "$LIBC"; do
	want=$(build_id "$f")
	[ -n "$want" ] || fail "readelf finds no build-id in $f"
	got=$(awk -v f="$f" '$3 == f { print $4 }' "$T/locations" | sort -u)
	[ "$got" = "$want" ] || fail "the mapping of $f has build-id '$got', readelf says $want"
done
ok "mappings: $(basename "$BIN") and $(basename "$LIBC") with their files' build-ids"

# addr2offset FUNCTION: the function's file offset through its location's
# mapping, and through nm and the program headers.
/usr/bin/python3 - "$T/locations" "$BIN" <<'PY' || fail "an address does not lead back to its function"
import re, subprocess, sys
locations, binary = sys.argv[1], sys.argv[2]
loads = []
for line in subprocess.run(['readelf', '-lW', binary], capture_output=True, text=True).stdout.splitlines():
    m = re.match(r'\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)', line)
    if m:
        loads.append(tuple(int(x, 16) for x in m.groups()))  # offset, vaddr, filesz
symbols = {}
for line in subprocess.run(['nm', binary], capture_output=True, text=True).stdout.splitlines():
    parts = line.split()
    if len(parts) == 3:
        symbols[parts[2]] = int(parts[0], 16)
def file_offset(vaddr):
    for off, va, size in loads:
        if va <= vaddr < va + size:
            return vaddr - va + off
    sys.exit('no segment holds 0x%x' % vaddr)
seen = 0
for line in open(locations):
    fn, addr, path, _, start, _, offset, _ = line.split()
    if path != binary or fn not in ('burn_seventy', 'burn_thirty', 'main'):
        continue
    got = int(addr, 16) - int(start, 16) + int(offset, 16)
    want = file_offset(symbols[fn])
    assert got == want, '%s: the location gives file offset 0x%x, the file has it at 0x%x' % (fn, got, want)
    print('%s: address 0x%s -> file offset 0x%x, as in the file' % (fn, addr, got))
    seen += 1
assert seen >= 2, 'only %d of burn_seventy, burn_thirty, main located in %s' % (seen, binary)
PY
ok "burn_seventy's and burn_thirty's addresses lead back to their symbols in the file"

grep -q '^  build_id: [1-9]' "$T/r.txt" || fail "protoc shows no build_id field"
grep -q '^  address: [1-9]' "$T/r.txt" || fail "protoc shows no address field"
$PPROF_PY "$T/r.pb.gz" folded | grep -q ';burn_seventy [0-9]*$' || fail "the samples lost burn_seventy"
ok "protoc decodes $(grep -c '^mapping {' "$T/r.txt") mappings and $(grep -c '^location {' "$T/r.txt") locations"
