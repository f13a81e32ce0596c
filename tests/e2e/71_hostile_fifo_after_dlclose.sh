# Issue 20, finding 1: a process dlopens a library, runs in it, dlcloses
# it and puts a FIFO at its path. The profiler's snapshot of the process
# (taken at its first sample) lists the library; by the time the
# snapshot opens it, /proc/PID/map_files/ has lost it and the path is a
# FIFO. A blocking open() there hung `ebprof record` for good (SIGINT and
# SIGTERM ignored) and collectd's read and shutdown with it.
#
# Two kinds of rounds, each a new process (the snapshot is per process):
# - race: the library is swapped 2 ms after the first sample, racing
#   the snapshot (the issue's own set-up);
# - slow: a library that is slow to read (its debug link leads to a
#   256 MiB file to checksum) is mapped below it, so the snapshot reaches
#   the FIFO every time.
# record must end on time, within its memory bound, and count the FIFO
# as refused (not a regular file).
source "$(dirname "$0")/hostile.bash"

# The workload starts once the sampler is up; record filters on its name.
(sleep 1; fifo_rounds race 10; fifo_rounds slow 6) &
BG_PIDS+=("$!")
record_hostile fifo 11 -c hostile_work -F 999
wait
[ ! -s "$T/rounds.err" ] || fail "the workload failed: $(cat "$T/rounds.err")"
total=$($FOLDED_PY "$T/fifo.folded" total hostile_work)
at_least "$total" 200 || fail "only $total samples of the workload: $(cat "$T/fifo.err")"
fifos=$(refused "not a regular file" fifo)
at_least "$fifos" 4 ||
	fail "the FIFO was refused only $fifos times in 6 slow rounds: $(cat "$T/fifo.err")"
ok "FIFO after dlclose, 16 processes: record ended in $WALL s (-d 11; $LOAD s of it to load), peak RSS $RSS_KB kB, $fifos FIFOs refused, $total samples"
