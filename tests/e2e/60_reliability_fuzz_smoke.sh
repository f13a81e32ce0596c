# Every fuzz target builds and survives a short run on its seed corpus and
# what earlier runs found (build/fuzz/corpus): a regression in any parser
# of outside input fails `make check` here, long before `make fuzz`.
# FUZZ_SMOKE_SECONDS per target (default 15).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
secs=${FUZZ_SMOKE_SECONDS:-15}

make -s fuzz-build >/dev/null || { echo "FAIL: make fuzz-build" >&2; exit 1; }
targets=()
for src in tests/fuzz/fuzz_*.c; do
	b=build/fuzz/$(basename "$src" .c)
	[ -x "$b" ] && targets+=("$b") # fuzz_file.c is a helper, not a target
done
[ "${#targets[@]}" -ge 7 ] || { echo "FAIL: want 7 fuzz targets, found ${targets[*]}" >&2; exit 1; }
FUZZ_NICE= FUZZ_LOG_DIR=build/fuzz/smoke tests/fuzz/run.sh "$secs" "${targets[@]}" || { echo "FAIL: a fuzz target found a crash (inputs in build/fuzz/crash-*)" >&2; exit 1; }
echo "ok: ${#targets[@]} fuzz targets ran ${secs}s each without a finding"
