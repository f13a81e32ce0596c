# The table builder against readelf: for every ELF file under /usr/bin
# and /usr/lib/x86_64-linux-gnu, the rows symbolizer/cfi builds from
# .eh_frame and .debug_frame give, at every row boundary of either side,
# the same CFA rule, rbp rule and return-address rule as `readelf
# --debug-dump=frames-interp` (binutils' own DWARF reader; see
# tests/oracle/cfi_readelf.c). Every row must agree, and the system must
# have enough unwind info for the figure to mean something.
source "$(dirname "$0")/lib.bash"

ORACLE=$ROOT/build/oracle/cfi_readelf
[ -x "$ORACLE" ] || fail "$ORACLE is not built: run make oracles"
command -v readelf >/dev/null || fail "readelf is missing (apt install binutils)"

"$ORACLE" /usr/bin /usr/lib/x86_64-linux-gnu >"$T/oracle.txt" 2>&1
rc=$?
summary=$(tail -1 "$T/oracle.txt")
echo "$summary"
[ "$rc" -eq 0 ] || { head -40 "$T/oracle.txt"; fail "rows disagree with readelf: $summary"; }
files=$(sed -n 's/.*ELF files, \([0-9]*\) with unwind rows.*/\1/p' <<<"$summary")
rows=$(sed -n 's/.*; \([0-9]*\) rows compared.*/\1/p' <<<"$summary")
at_least "${files:-0}" 500 || fail "only ${files:-0} files with unwind rows: is the system's unwind info being read?"
at_least "${rows:-0}" 1000000 || fail "only ${rows:-0} rows compared"
ok "$files files, $rows rows agree with readelf"
