# A process that only looks like CPython, or a CPython whose version has no
# layout here, is profiled natively with one warning per reason (two
# processes of one kind: still one), never a crash or a Python name.
#   - fake312: exports Py_Version = 3.12 and _PyEval_EvalFrameDefault;
#   - fake311: says 3.11 but has no _PyRuntime or PyCode_Type.
source "$(dirname "$0")/lib.bash"

cat >"$T/fake.c" <<'CEOF'
#include <stdlib.h>
const unsigned int Py_Version = PYV;
volatile unsigned long sink;
__attribute__((noinline)) void _PyEval_EvalFrameDefault(void)
{
	for (unsigned long i = 0; i < 100000; i++)
		sink += i;
}
int main(int argc, char **argv)
{
	(void)argc;
	for (long end = atol(argv[1]) * 20000L; end-- > 0;)
		_PyEval_EvalFrameDefault();
	return 0;
}
CEOF
cc -O1 -rdynamic -DPYV=0x030c00f0u -o "$T/fake312" "$T/fake.c" || fail "cannot build fake312"
cc -O1 -rdynamic -DPYV=0x030b02f0u -o "$T/fake311" "$T/fake.c" || fail "cannot build fake311"
bg "$T/fake312" 30; A=$BG
bg "$T/fake312" 30; B=$BG
bg "$T/fake311" 30; C=$BG
sleep 0.3
"$EBPROF" record -p "$A" -p "$B" -p "$C" -F 199 -d 2 --format folded -o "$T/fake.folded" \
	2>"$T/summary" || fail "ebprof record exited $?: $(cat "$T/summary")"
n312=$(grep -c 'warning: .*fake312: Python 3.12 .*has no layout here' "$T/summary")
n311=$(grep -c 'warning: .*fake311: exports Py_Version 3.11 but not _PyRuntime' "$T/summary")
[ "$n312" -eq 1 ] || fail "fake312: $n312 warnings, want 1: $(cat "$T/summary")"
[ "$n311" -eq 1 ] || fail "fake311: $n311 warnings, want 1: $(cat "$T/summary")"
! grep -q '_\[p\]' "$T/fake.folded" || fail "a Python frame in a process that is not Python"
for p in fake312 fake311; do
	pct=$($FOLDED_PY "$T/fake.folded" has "$p" '^_PyEval_EvalFrameDefault$')
	at_least "$pct" 90 || fail "$p: its native frames are named in $pct% of samples, want >= 90"
done
ok "look-alikes: one warning each, native frames named"
