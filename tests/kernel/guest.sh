#!/bin/bash
# Stage 2 of a test guest (tests/kernel/vm.sh): runs as PID 1 inside the
# host's root (read-only, under a tmpfs overlay), mounts what the tests
# need, runs the one command vm.sh wrote into /ebprof-vm/cmd as root,
# writes its output and exit status back through the output share, and
# powers off. The kernel's sysctls keep the defaults of the kernel under
# test (Debian's perf_event_paranoid=3 among them): that is what a test
# on that kernel is for.
OUT=/ebprof-vm
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm
# What udev would make: bash's process substitution needs /dev/fd.
ln -sfn /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t devpts -o mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
# A /tmp of its own, unless the command works in the host's /tmp (a clone
# there, as CI may make): a tmpfs would hide it, so /tmp stays the
# overlay's, writable all the same and never written through to the host.
keep_tmp=""
for d in "$(sed -n '1s/^cd \(.*\) || exit 125$/\1/p' "$OUT/cmd")" "$(cat "$OUT/writable" 2>/dev/null)"; do
	case $d in /tmp | /tmp/*) keep_tmp=$d ;; esac
done
[ -n "$keep_tmp" ] || mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t bpf bpf /sys/fs/bpf
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
if [ -s "$OUT/writable" ]; then
	mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=262144 ebprof_rw \
		"$(cat "$OUT/writable")"
fi
ip link set lo up
# Some interface besides loopback, as on any host: collectd's
# write_prometheus asks getaddrinfo() with AI_ADDRCONFIG and cannot open
# its socket where only loopback has addresses. Nothing is routed there.
ip link add eth0 type dummy &&
	ip addr add 10.0.2.15/24 dev eth0 &&
	ip -6 addr add fd00::15/64 dev eth0 &&
	ip link set eth0 up
hostname ebprof-vm
# The host's root gives the guest the host's /etc/mtab and friends; the
# kernel's view is what tools should read.
ln -sf /proc/self/mounts /etc/mtab 2>/dev/null

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb EBPROF_VM=1
bash "$OUT/cmd" >"$OUT/output" 2>&1 </dev/null
echo $? >"$OUT/status.tmp" && mv "$OUT/status.tmp" "$OUT/status"
sync
echo o >/proc/sysrq-trigger
sleep 10
