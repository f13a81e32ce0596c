# Uninterruptible I/O: reads that bypass the page cache (O_DIRECT, 4 KiB at
# spread offsets of a 64 MiB file on the root file system) wait for the
# disk in the D state. Their off-CPU time must come out as [off-cpu: io],
# under the direct-I/O path that hands the read to the block layer and
# waits for it (iomap_dio_rw for ext4 and xfs, blkdev direct I/O for a
# block device), below offcpu_direct_read() in user space.
source "$(dirname "$0")/lib.bash"
source "$ROOT/tests/e2e/offcpu.bash"

# Not in $T: /tmp may be a tmpfs, which has no O_DIRECT.
F=$(mktemp /var/tmp/ebprof-dio.XXXXXX)
trap 'rm -f "$F"; cleanup' EXIT
dd if=/dev/urandom of="$F" bs=1M count=64 status=none conv=fsync || fail "cannot write $F"
"$OFFCPU" dio "$F" 1 >/dev/null 2>&1 || fail "O_DIRECT is not supported on $(df --output=fstype "$F" | tail -1)"

offcpu_record "$T/d" "--mode offcpu --offcpu-period-us 20" dio "$F" 3000
io=$(offcpu_us "$T/d.folded" ';offcpu_direct_read;.*\[off-cpu: io\]$')
block=$(offcpu_us "$T/d.folded" ';offcpu_direct_read;.*(iomap_dio_rw|blkdev_direct_IO|__blkdev_direct_IO[a-z_]*)_\[k\];.*\[off-cpu: io\]$')
reads=$(offcpu_us "$T/d.folded" ';offcpu_direct_read;')
echo "O_DIRECT reads: $reads us off-CPU, $io us of it io, $block us under the direct-I/O path"
at_least "$io" 10000 || fail "only $io us of O_DIRECT reads in io"
[ "$io" -ge $((reads * 7 / 10)) ] || fail "only $io of $reads us of O_DIRECT reads in io"
[ "$block" -ge $((io * 9 / 10)) ] || fail "only $block of $io us of io under the direct-I/O path"
ok "O_DIRECT reads: $io us of $reads us in io, $block us under the block layer's direct I/O"
