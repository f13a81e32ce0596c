# Issue 18: a stripped library's internal functions, grouped by function.
# Most libraries on a host are stripped of .symtab (Debian's liblzma is):
# their internal functions have no name, and naming each sampled address
# by itself split one function into dozens of frames. The fixture
# library (tests/fixtures/groupfix.c) splits its CPU time 40/30/20/10 by
# the clock between four static functions; one process runs it as built
# (names from .symtab), another a copy stripped of .symtab (.dynsym and
# .eh_frame kept). In the stripped one each function must be one frame,
# "[libgroupfix.so+0xSTART]" with START its first byte (its FDE's start,
# nm's value), and each frame's share must match the named build's share
# of that function within 2 points.
source "$(dirname "$0")/lib.bash"

FIX=$ROOT/build/fixtures
[ -x "$FIX/groupfix-pie" ] && [ -f "$FIX/libgroupfix.so" ] ||
	fail "build/fixtures is not built: run make unit"
mkdir -p "$T/named" "$T/stripped"
cp "$FIX/libgroupfix.so" "$T/named/libgroupfix.so"
strip --strip-all -o "$T/stripped/libgroupfix.so" "$FIX/libgroupfix.so" || fail "strip failed"
sections=$(readelf -SW "$T/stripped/libgroupfix.so")
grep -q ' \.symtab ' <<<"$sections" && fail "the stripped copy still has .symtab"
grep -q ' \.eh_frame ' <<<"$sections" || fail "the stripped copy has no .eh_frame"

"$FIX/groupfix-pie" "$T/named/libgroupfix.so" grp-named 60 >"$T/named.out" &
A=$!; BG_PIDS+=("$A")
"$FIX/groupfix-pie" "$T/stripped/libgroupfix.so" grp-stripped 60 >"$T/stripped.out" &
B=$!; BG_PIDS+=("$B")
wait_for 5 grep -q ready "$T/named.out" "$T/stripped.out" || fail "the workloads did not start"
"$EBPROF" record -p "$A" -p "$B" -F 999 -d 50 --format folded -o "$T/g.folded" \
	2>"$T/summary" &
R=$!
wait_sampling "$T/summary"
wait_cpu 6 45 "$A" "$B"
kill -INT "$R"
wait "$R" || fail "ebprof record exited $?: $(cat "$T/summary")"

# The four functions' first bytes, from the unstripped copy's .symtab (a
# shared object's text is mapped at file offset = address: checked).
readelf -lW "$T/named/libgroupfix.so" | awk '$1 == "LOAD" && $7 ~ /E/ { exit !($2 == $3) }' ||
	fail "libgroupfix.so's text is not at file offset = address"
nm "$T/named/libgroupfix.so" | awk '$3 ~ /^group_(forty|thirty|twenty|ten)$/ { print $1, $3 }' \
	>"$T/functions"
[ "$(wc -l <"$T/functions")" -eq 4 ] || fail "the fixture does not have its four functions"

/usr/bin/python3 - "$T/g.folded" "$T/functions" <<'PY' || fail "the stripped library's frames are not grouped by function (above)"
import re, sys
from collections import Counter

starts = {}
for line in open(sys.argv[2]):
    value, name = line.split()
    starts[int(value, 16)] = name

def leaves(proc):
    """Self samples by user leaf (the last frame that is not a kernel one)."""
    count, total = Counter(), 0
    for line in open(sys.argv[1]):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if frames[0] != proc:
            continue
        user = [f for f in frames[1:] if not f.endswith("_[k]")]
        total += int(n)
        if user:
            count[user[-1]] += int(n)
    return count, total

named, named_total = leaves("grp-named")
stripped, stripped_total = leaves("grp-stripped")
print(f"samples: grp-named {named_total}, grp-stripped {stripped_total}")
if min(named_total, stripped_total) < 4000:
    sys.exit("FAIL: too few samples for a 2-point test")
unnamed = {f: n for f, n in stripped.items() if re.fullmatch(r"\[libgroupfix\.so\+0x[0-9a-f]+\]", f)}
# Frames of one function split by address would each hold a few percent;
# a stray sample in the PLT may add a frame under 0.5%.
hot = {f: n for f, n in unnamed.items() if 100 * n / stripped_total >= 0.5}
print(f"distinct unnamed frames: {len(unnamed)}, of which {len(hot)} hold 0.5% or more: {sorted(hot)}")
if len(hot) != len(starts):
    sys.exit(f"FAIL: {len(hot)} frames for {len(starts)} hot functions")
bad = False
for frame, n in sorted(hot.items(), key=lambda kv: -kv[1]):
    start = int(frame[frame.index("+0x") + 3:-1], 16)
    name = starts.get(start)
    if name is None:
        print(f"FAIL: {frame} is not the first byte of a hot function")
        bad = True
        continue
    ours = 100 * n / stripped_total
    want = 100 * named[name] / named_total
    ok = abs(ours - want) <= 2
    bad |= not ok
    print(f"{'ok' if ok else 'FAIL'}: {frame} = {name}: {ours:.1f}% stripped, {want:.1f}% named")
sys.exit(1 if bad else 0)
PY
ok "stripped library: one frame per internal function, shares as named"
