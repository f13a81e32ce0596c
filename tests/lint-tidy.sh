#!/bin/bash
# make lint's clang-tidy step: runs clang-tidy with the arguments given and
# fails on any warning or error in our own sources. clang-tidy itself exits 0
# on warnings. The generated skeleton (build/bpf/*.skel.h) is not ours to
# fix: its warnings are shown but not counted.
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT

clang-tidy --quiet "$@" >"$log" 2>&1
rc=$?
diag='^[^ ]+:[0-9]+:[0-9]+: (warning|error):'
ours=$(grep -E "$diag" "$log" | grep -v -E '(^|/)build/bpf/[^/]+\.skel\.h:')
theirs=$(grep -E "$diag" "$log" | grep -E '(^|/)build/bpf/[^/]+\.skel\.h:')
[ -n "$theirs" ] && printf 'in the generated skeleton (not counted):\n%s\n' "$theirs"
if [ -n "$ours" ]; then
	cat "$log"
	printf '\nclang-tidy: %d finding(s) in our sources:\n%s\n' "$(printf '%s\n' "$ours" | wc -l)" "$ours" >&2
	exit 1
fi
if [ "$rc" -ne 0 ]; then
	cat "$log"
	echo "clang-tidy failed (exit $rc)" >&2
	exit 1
fi
exit 0
