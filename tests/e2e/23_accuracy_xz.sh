# A real program no one here wrote: Debian's xz compressing a fixed,
# generated text at -9 in one thread. Its hot code is LZMA's binary-tree
# match finder and the optimum-parse encoder, in liblzma.
#
# Debian builds xz without frame pointers and strips .symtab; liblzma's hot
# functions are static, so neither profiler can name them. What both can do
# is place each sample at an address in liblzma, so compare.py names the
# code by function range from liblzma's .eh_frame (one FDE per function),
# identically for both, and compares self shares of those functions. Callers
# are not compared: a frame-pointer walk through code without frame
# pointers returns garbage, in perf as in ebprof.
source "$(dirname "$0")/lib.bash"
source "$ROOT/tests/accuracy/acc.bash"

XZ=$(command -v xz) || fail "xz is missing (apt install xz-utils)"
LZMA=$(ldd "$XZ" | awk '$1 ~ /^liblzma/ { print $3 }')
LZMA=$(readlink -f "$LZMA")
[ -r "$LZMA" ] || fail "cannot find the liblzma that $XZ uses"

# A fixed input: 3 million words from a 5,000-word vocabulary, seeded, so the
# compressor does the same work every run (about 20 s of CPU at -9).
/usr/bin/python3 - "$T/input.txt" <<'PY'
import random, sys
r = random.Random(1)
words = ["".join(r.choice("abcdefghijklmnop") for _ in range(r.randint(2, 9)))
         for _ in range(5000)]
with open(sys.argv[1], "w") as f:
    f.write(" ".join(r.choice(words) for _ in range(3000000)))
PY
bg "$XZ" -9 -T1 -c "$T/input.txt"; A=$BG
sleep 0.5
record_both 5 "$T/xz" "$A"

$COMPARE diff --ours "$T/xz.ebprof.folded" --perf "$T/xz.perf.folded" --proc xz \
	--label "xz -9 (Debian)" --fde "$LZMA" --min-samples 4000 ||
	fail "xz's profile differs from perf's (see above)"
ok "xz: self shares agree with perf"
