#!/usr/bin/env bash
# Runs each fuzz target for SECONDS on its seed corpus, one at a time (the
# targets share the machine with everything else), and prints one summary
# line per target: executions, coverage, corpus size, findings.
#
#   tests/fuzz/run.sh SECONDS build/fuzz/fuzz_NAME...
#
# Seeds come from tests/fuzz/corpus/NAME (checked in, text) and, for the
# ELF target, the fixture binaries the build makes. What a run discovers
# goes to build/fuzz/corpus/NAME, which later runs start from; a crash
# leaves its input as build/fuzz/crash-NAME-* and fails the run. Logs go
# to FUZZ_LOG_DIR (default build/fuzz), so a smoke run beside a long one
# keeps its own.
set -u
secs=$1; shift
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NICE=${FUZZ_NICE-nice -n 19}
logdir=${FUZZ_LOG_DIR:-$ROOT/build/fuzz}
mkdir -p "$logdir"
rc=0
for bin in "$@"; do
	name=$(basename "$bin")
	short=${name#fuzz_}
	work=$ROOT/build/fuzz/corpus/$short
	mkdir -p "$work"
	seeds=("$ROOT/tests/fuzz/corpus/$short")
	if [ "$short" = elfsym ] || [ "$short" = cfi ]; then
		# Binary seeds are built, not checked in: real ELF files of each kind
		# (the cfifix fixtures carry every kind of call frame rule).
		elfseeds=$ROOT/build/fuzz/seeds-elfsym
		mkdir -p "$elfseeds"
		for f in "$ROOT"/build/fixtures/*; do
			[ -f "$f" ] && [ "$(stat -c %s "$f")" -lt 65536 ] && cp "$f" "$elfseeds/"
		done
		# ...and a stripped one carrying MiniDebugInfo, for the xz path.
		f=$ROOT/build/fixtures/libsymfix.so
		if [ -f "$f" ] && [ ! -f "$elfseeds/minidebug.so" ]; then
			tmp=$(mktemp -d)
			objcopy --only-keep-debug "$f" "$tmp/debug" &&
				objcopy -S --remove-section .comment "$tmp/debug" "$tmp/mini" &&
				xz -k "$tmp/mini" &&
				strip -o "$tmp/stripped" "$f" &&
				objcopy --add-section .gnu_debugdata="$tmp/mini.xz" "$tmp/stripped" \
					"$elfseeds/minidebug.so"
			rm -rf "$tmp"
		fi
		# ...and copies that declare huge sizes (issue 20): tables, notes,
		# MiniDebugInfo and header counts the bounds must stop before libelf
		# allocates them. The headers say so; the files stay small.
		f=$ROOT/build/fixtures/libsymfix.so
		patch="python3 $ROOT/tests/e2e/elfpatch.py"
		if [ -f "$f" ] && [ ! -f "$elfseeds/huge-symtab.so" ]; then
			for sec in .symtab .strtab .dynsym .dynstr .note.gnu.build-id; do
				cp "$f" "$elfseeds/huge-${sec#.}.so" &&
					$patch claim-size "$elfseeds/huge-${sec#.}.so" "$sec" $((3 << 30))
			done
			cp "$f" "$elfseeds/huge-sections.so" &&
				$patch claim-sections "$elfseeds/huge-sections.so" 40000000
			[ -f "$elfseeds/minidebug.so" ] && cp "$elfseeds/minidebug.so" "$elfseeds/huge-debugdata.so" &&
				$patch claim-size "$elfseeds/huge-debugdata.so" .gnu_debugdata $((1 << 30))
		fi
		seeds+=("$elfseeds")
	fi
	extra=()
	# pconf logs every error on stderr through the collectd stub.
	[ "$short" = config ] && extra+=(-close_fd_mask=2)
	log=$logdir/$name.log
	$NICE "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$ROOT/build/fuzz/crash-$short-" \
		"${extra[@]}" "$work" "${seeds[@]}" >"$log" 2>&1
	status=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1)
	corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -1)
	if [ "$status" -eq 0 ]; then
		verdict="no findings"
	else
		verdict="FINDING (exit $status): see $log"
		rc=1
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -5 | sed 's/^/    /'
	fi
	printf '%-16s %5ss  execs %-10s %-10s %-9s %-18s %s\n' "$short" "$secs" \
		"${execs:-?}" "${cov:-cov: ?}" "${ft:-ft: ?}" "${corp:-corp: ?}" "$verdict"
done
exit $rc
