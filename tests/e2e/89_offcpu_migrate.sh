# A task that moves between CPUs while it sleeps (pinned alternately to CPU
# 0 and CPU 1 before each sleep) must never show a wait longer than it
# was: its per-task stamp goes with it. The sum of its off-CPU time stays
# within its wall time, and its sleeps are all there.
source "$(dirname "$0")/lib.bash"
source "$ROOT/tests/e2e/offcpu.bash"

[ "$(nproc)" -ge 2 ] || fail "needs two CPUs to migrate between, has $(nproc)"
offcpu_record "$T/g" "--mode offcpu --offcpu-period-us 50" migrate 100 20
wall_us=$(( $(offcpu_value "$T/g.out" wall_ns) / 1000 ))
moving=$(offcpu_us "$T/g.folded" ';offcpu_sleep_migrating;')
echo "migrating sleeper: $moving us off-CPU in $wall_us us of wall time"
[ "$moving" -le $((wall_us + wall_us / 50)) ] ||
	fail "off-CPU $moving us is more than the wall time $wall_us us"
[ "$moving" -ge $((wall_us * 85 / 100)) ] || fail "only $moving us of $wall_us us of sleeps seen"
ok "100 sleeps across CPUs: $moving us off-CPU, wall $wall_us us"
