# The smoke suite on Debian 12's own kernel: boots the newest
# linux-image-6.1.0-*-amd64-unsigned in qemu (tests/kernel/vm.sh; fetched
# once into build/kernels/) and runs tests/kernel/smoke.sh inside it:
# record system-wide and -p on the 70/30 workload, the plugin in collectd
# with CSV and spool, the systemd drop-in's capability set at
# perf_event_paranoid 3 and 2, the unwinder and off-CPU time under 6.1's
# verifier, and collectd without huge pages where Debian has them always.
# One boot for all of it: ~5 minutes.
source "$(dirname "$0")/lib.bash"

bash "$ROOT/tests/kernel/vm.sh" -t 900 -- bash "$ROOT/tests/kernel/smoke.sh" 2>&1 | tee "$T/guest"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || fail "the smoke suite failed in the 6.1 guest (exit $rc)"
grep -q '^--- done' "$T/guest" || fail "the smoke suite did not run to its end"
