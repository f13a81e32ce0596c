# Issue 20, finding 4: a process runs in a library whose .symtab header
# claims 3 GiB (a sparse file). libelf allocated and read all of it: the
# profiler reached 3.1 GB of memory. Tables over the bound (256 MiB) are
# skipped and counted; the library's exported functions are still named
# from its .dynsym. Found while fixing it: a header announcing 40
# million sections made libelf allocate a descriptor for each up front
# (8 GB, from a 2.5 GB sparse file); such a file is not read at all, and
# its frames are named by file and offset. The check for a Python
# interpreter, which examines every file mapped executable, keeps the same
# bounds and says how many files it read in part or not at all.
source "$(dirname "$0")/hostile.bash"

# run_in NAME: runs in $T/NAME/libhostile_lib.so (patched) while record watches.
run_in() {
	local lib=$T/$1/libhostile_lib.so
	"$HOSTILE_BIN" burn "$lib" 8 >"$T/$1.out" &
	P=$!; BG_PIDS+=("$P")
	wait_for 5 grep -q ready "$T/$1.out" || fail "$1: the workload did not start"
	record_hostile "$1" 3 -p "$P" -F 999
	kill "$P"
	total=$($FOLDED_PY "$T/$1.folded" total hostile_work)
	at_least "$total" 1000 || fail "$1: only $total samples: $(cat "$T/$1.err")"
}

patched() { # NAME: a fresh copy of the library to patch
	mkdir -p "$T/$1"
	cp "$HOSTILE_LIB" "$T/$1/libhostile_lib.so"
	echo "$T/$1/libhostile_lib.so"
}

$ELFPATCH claim-section "$(patched symtab)" .symtab $((3 << 30)) || fail "cannot patch .symtab"
[ "$(stat -c %s "$T/symtab/libhostile_lib.so")" -gt $((3 << 30)) ] || fail "the library is not 3 GiB"
run_in symtab
pct=$($FOLDED_PY "$T/symtab.folded" has hostile_work 'hostile_hot$')
at_least "$pct" 90 || fail "hostile_hot named in only $pct% of the samples (from .dynsym)"
grep -q "1 symbol tables over --max-symbol-table" "$T/symtab.err" ||
	fail "the skipped table is not reported: $(cat "$T/symtab.err")"
grep -q "1 read in part or not at all for their declared sizes" "$T/symtab.err" ||
	fail "the Python check does not report the table it passed over: $(cat "$T/symtab.err")"
ok ".symtab claiming 3 GiB: record ended in $WALL s (-d 3), peak RSS $RSS_KB kB, hostile_hot named in $pct% (from .dynsym)"

lib=$(patched sections)
shoff=$(python3 -c 'import struct,sys; print(struct.unpack_from("<Q", open(sys.argv[1],"rb").read(64), 0x28)[0])' "$lib")
$ELFPATCH claim-sections "$lib" 40000000 && truncate -s $((shoff + 40000000 * 64)) "$lib" ||
	fail "cannot patch the section count"
run_in sections
pct=$($FOLDED_PY "$T/sections.folded" has hostile_work 'libhostile_lib.so\+0x')
at_least "$pct" 90 || fail "the library's frames are named by file+offset in only $pct%"
grep -q "1 ELF files with too many or too large headers" "$T/sections.err" ||
	fail "the refused file is not reported: $(cat "$T/sections.err")"
grep -q "1 read in part or not at all for their declared sizes" "$T/sections.err" ||
	fail "the Python check does not report the file it refused: $(cat "$T/sections.err")"
ok "40 million section headers: record ended in $WALL s (-d 3), peak RSS $RSS_KB kB, the file refused and reported"
