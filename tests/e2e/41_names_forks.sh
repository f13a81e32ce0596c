# Forks that never exec are named from their parent's maps, not their own
# read (render/forkmaps.h): 200 children of one loop, one after the other,
# each a fork that burns 30 ms of CPU and exits (examples/shortlived
# --fork). The sampler's report says each is a fork of the loop, not
# exec'd; the capture reads the loop's maps once a second at most and
# lends them to every fork sampled meanwhile. One child in four maps zlib
# after its fork, which the loop never had: its crc32 samples are named
# only if a pc outside the borrowed maps has the child's own read, as any
# process's would. ebprof records system-wide at 99 Hz, tables and all,
# and the summary's sample accounting still holds exactly.
source "$(dirname "$0")/lib.bash"

"$EBPROF" record -F 99 -d 600 --format folded -o "$T/forks.folded" 2>"$T/summary" &
REC=$!; BG_PIDS+=("$REC")
sleep 1 # the program is loaded and attached
"$EX/shortlived" --fork 200 30 || fail "the shortlived --fork loop failed"
kill -INT "$REC"
wait "$REC" || fail "ebprof record exited $?: $(cat "$T/summary")"
cat "$T/summary"
summary_accounts "$T/summary" "forks"
ok "accounting: $ACCOUNTS"

line=$(grep "ebprof: new processes:" "$T/summary") || fail "no new-process line in the summary"
read -r parent kept < <(sed -n "s/.*forks not exec'd: \([0-9]*\) with maps read from their parent, \([0-9]*\) with their parent's kept.*/\1 \2/p" <<<"$line")
[ -n "${kept:-}" ] || fail "the summary does not say how forks were read: $line"
# ~190 of the 200 are sampled (30 ms at 99 Hz); the loop runs ~6 s, one read of it a second.
at_least "$((parent + kept))" 150 || fail "only $((parent + kept)) of 200 forks had their parent's maps: $line"
at_least "$kept" $((4 * parent)) || fail "$parent reads of the parent for $kept forks that needed none (want 4x fewer): $line"
ok "forks with their parent's maps: $kept kept from an earlier fork, $parent read from the parent"

total=$($FOLDED_PY "$T/forks.folded" total shortlived-fork)
at_least "$total" 200 || fail "only $total samples of the forks (want ~600: 6 s of CPU at 99 Hz)"
# Named: under main (the child's code, zlib's, the clock's system call), or
# in the exit, where the user stack may be gone with the memory.
all=$($FOLDED_PY "$T/forks.folded" has shortlived-fork '^(main|do_exit_\[k\])$')
unknown=$($FOLDED_PY "$T/forks.folded" has shortlived-fork '^\[unknown\]$')
at_least "$all" 95 && at_least 1.5 "$unknown" || {
	grep '^shortlived-fork;' "$T/forks.folded" | grep -v ';main;\|;do_exit_\[k\]' | sort -t' ' -k2 -n -r | head
	fail "forks named under main or in their exit in only $all% of their $total samples (want >= 95%), [unknown] in $unknown% (want <= 1.5%)"
}
zlib=$($FOLDED_PY "$T/forks.folded" has shortlived-fork '^crc32.*$')
# A quarter of the children, less their dlopen: ~24%.
at_least "$zlib" 15 || fail "only $zlib% of the forks' samples in zlib's crc32 (want ~24%: one child in four)"
read -r whole _ _ < <($FOLDED_PY "$T/forks.folded" rooted shortlived-fork '^(burn_[0-9]{3}|crc32.*)$' '^_start$')
at_least "$whole" 95 || fail "of the forks' samples in burn_NNN or crc32, only $whole% are whole down from _start"
ok "forks named in $all% of $total samples ($zlib% in zlib, mapped after the fork; [unknown] $unknown%); whole from _start in $whole%"
