# Issue 20, finding 2: inside its own mount namespace (`unshare -m`, a
# tmpfs over /mnt), a process runs in a library at /mnt/..., dlcloses it,
# and puts at that path an absolute symlink to a file that exists only
# on the host (mode 0600, under the host's /mnt, which the tmpfs hides
# from the process). Opening /proc/PID/root/<path> follows an absolute
# target from the host's root: the profile named the process's frames
# with the host-only file's symbols. The gate resolves the path inside
# the process's root, where the target does not exist, and checks the
# mapped inode: no host-only name may appear.
#
# The host-only library is the same code as the process's, its function
# renamed, so that an address in one is a function in the other. A slow
# library mapped below the process's makes its snapshot reach the
# symlink (see 71_hostile_fifo_after_dlclose.sh), and the process lives
# on for 3 s, so that its root is still there to resolve the path in (at
# 8c143fc this named its frames host_only_secret_function).
source "$(dirname "$0")/hostile.bash"
command -v unshare >/dev/null || fail "unshare (util-linux) is not installed"

HOST=/mnt/ebprof-host-only.$$
[ ! -e "$HOST" ] || fail "$HOST exists"
mkdir -p "$HOST"
trap 'rm -rf "$HOST"; cleanup' EXIT
cc -O1 -g -fno-omit-frame-pointer -fno-inline -fPIC -shared -DFIXTURE_SHARED \
	-DHOT_NAME=host_only_secret_function -o "$HOST/secret.so" "$ROOT/tests/fixtures/hostile_lib.c" ||
	fail "cannot build the host-only library"
chmod 600 "$HOST/secret.so"
nm -D "$HOST/secret.so" | grep -q host_only_secret_function || fail "the host-only library lacks its name"
mkdir -p "$T/libs"

# round I: one process in its own namespace; the library is a copy on its tmpfs.
round() {
	local slow
	slow=$(slow_lib "$T/libs/slow-$1")
	unshare -m --propagation private sh -c '
		mount -t tmpfs none /mnt || exit 1
		cp "$1" /mnt/libctr.so || exit 1
		[ ! -e "$2" ] || { echo "the host file leaked into the namespace"; exit 1; }
		exec "$3" symlink /mnt/libctr.so "$2" "$4" 30 3' \
		round "$HOSTILE_LIB" "$HOST/secret.so" "$HOSTILE_BIN" "$slow" >/dev/null ||
		echo "round $1 failed" >>"$T/rounds.err"
	sleep 0.3
}

(sleep 1; for i in 1 2 3; do round "$i"; done) &
BG_PIDS+=("$!")
record_hostile ctr 12 -c hostile_work -F 999
wait
[ ! -s "$T/rounds.err" ] || fail "the workload failed: $(cat "$T/rounds.err")"
total=$($FOLDED_PY "$T/ctr.folded" total hostile_work)
at_least "$total" 200 || fail "only $total samples of the workload: $(cat "$T/ctr.err")"
if grep -q host_only_secret "$T/ctr.folded"; then
	grep host_only_secret "$T/ctr.folded" | head -3 >&2
	fail "frames of the namespaced process were named from a host-only file"
fi
grep -q 'libctr.so+0x' "$T/ctr.folded" ||
	fail "the library's frames are not named by file and offset: $(head -c 400 "$T/ctr.folded")"
ok "symlink out of a mount namespace, 3 processes: no host-only name, record ended in $WALL s (-d 12; $LOAD s of it to load), peak RSS $RSS_KB kB, $total samples"
