#!/usr/bin/env bash
# Runs one command as root inside a Debian kernel booted in qemu, and
# returns its output and exit status: the tests' way to try ebprof on the
# kernels its users run (Debian 12's own 6.1) without touching the host.
#
#   tests/kernel/vm.sh [-k PACKAGE] [-t SECONDS] [-m MB] [-c CPUS] [-w DIR] [--] COMMAND [ARG]...
#
# PACKAGE is a Debian kernel image package; by default the newest
# linux-image-6.1.0-*-amd64-unsigned that apt-cache offers, resolved at
# every run (a revision leaves the mirror when the next one lands). It is
# fetched once with `apt-get download` into build/kernels/PACKAGE/ and
# unpacked there with dpkg-deb; later runs reuse it.
#
# The guest:
# - an initramfs of Debian's busybox-static and the kernel's own modules
#   for its root (virtio-pci, 9p over virtio, overlay: whichever the
#   kernel has as modules rather than built in, with their dependencies),
#   and dummy for a network interface;
# - the host's root shared read-only over virtio-9p, a tmpfs overlay on
#   top (writes stay in the guest and vanish with it), proc, sys, bpf,
#   debugfs and tracefs mounted, loopback up, and a dummy eth0 with
#   private addresses (a host has some interface: collectd's
#   write_prometheus cannot open its socket where only loopback is);
# - the kernel's own sysctl defaults (Debian's perf_event_paranoid=3);
# - TCG: these machines expose no vmx/svm, so KVM is unusable (with KVM,
#   `-cpu max` aborts on MSR 0x10a). The CPU model is a fixed one,
#   Skylake-Client without TSX, rather than whatever `max` means in this
#   qemu (it boots too under TCG): its constant TSC gives the guest the
#   tsc clocksource (qemu64 left it on hpet); VM_CPU overrides it;
# - COMMAND runs with bash in the current directory, as root, with stdin
#   from /dev/null; its output (stdout and stderr, merged) streams to ours
#   while it runs, and its exit status becomes ours;
# - -w DIR: the one host directory the guest may write, at the same path
#   (e.g. for test logs); everything else it writes is lost at power-off.
# The guest powers itself off when COMMAND ends. If it has not within
# SECONDS (default 600), qemu is killed and we exit 124. 125 means the
# harness failed (no package, no boot); the console log is printed then.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/tests/kernel
package="" timeout=600 mem=2048 cpus=2 writable=""
cpu_model=${VM_CPU:-Skylake-Client-noTSX-IBRS}

die() {
	echo "vm.sh: $*" >&2
	exit 125
}

usage() {
	sed -n '5,6p' "${BASH_SOURCE[0]}" | sed 's/^# *//' >&2
	exit 125
}

while [ $# -gt 0 ]; do
	case $1 in
	-k) package=$2; shift 2 ;;
	-t) timeout=$2; shift 2 ;;
	-m) mem=$2; shift 2 ;;
	-c) cpus=$2; shift 2 ;;
	-w) writable=$(realpath -e "$2") || die "-w $2: no such directory"; shift 2 ;;
	--) shift; break ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || usage

command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing: run make deps"
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ||
	die "/bin/busybox is missing or not static: run make deps (busybox-static)"

# The newest 6.1 image Debian offers, by version order of the ABI number.
newest_61() {
	apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' |
		awk '{ print $1 }' | sort -V | tail -1
}

# apt's lists may be old (a revision leaves the mirror when the next one
# lands): one `apt-get update` when a look-up or a download fails.
apt_update_once() {
	echo "vm.sh: apt-get update" >&2
	apt-get update -qq >&2 || die "apt-get update failed"
}

# fetch: downloads and unpacks $package into build/kernels/$package/root.
fetch() {
	cache=$ROOT/build/kernels/$package
	unpack=$cache/root
	[ -e "$cache/unpacked" ] && return 0
	mkdir -p "$cache"
	rm -rf "$unpack" "$cache"/*.deb
	(cd "$cache" && apt-get -q -o APT::Sandbox::User=root download "$package") >&2 || return 1
	dpkg-deb -x "$cache"/*.deb "$unpack" || die "dpkg-deb cannot unpack $package"
	rm -f "$cache"/*.deb
	touch "$cache/unpacked"
}

fixed_package=$package
[ -n "$package" ] || package=$(newest_61)
if [ -z "$package" ] || ! fetch; then
	apt_update_once
	[ -n "$fixed_package" ] || package=$(newest_61)
	[ -n "$package" ] || die "apt-cache offers no linux-image-6.1.0-*-amd64-unsigned"
	fetch || die "apt-get download $package failed"
fi
vmlinuz=$(ls "$unpack"/boot/vmlinuz-* 2>/dev/null | head -1)
[ -n "$vmlinuz" ] || die "$package has no boot/vmlinuz-*"
release=${vmlinuz##*/vmlinuz-}
moddir=$unpack/lib/modules/$release

# --- the initramfs: busybox, our init, the modules the root needs ----------
# module_closure NAME: NAME's module path and its dependencies', each
# after what it needs, from modules.dep (nothing if NAME is built in).
declare -A seen=()
module_closure() {
	local name=$1 path dep
	grep -q "/${name}\.ko$" "$moddir/modules.builtin" && return 0
	path=$(grep -m1 "^[^:]*/${name}\.ko:" "$moddir/modules.dep" | cut -d: -f1) ||
		die "$package has no module $name, nor is it built in (9p, overlay, virtio-pci and dummy are needed)"
	[ -n "${seen[$path]:-}" ] && return 0
	seen[$path]=1
	for dep in $(grep -m1 "^$path:" "$moddir/modules.dep" | cut -d: -f2); do
		dep=${dep##*/}
		module_closure "${dep%.ko}"
	done
	echo "$path"
}

initrd=$cache/initrd.gz
if [ ! -e "$initrd" ] || [ "$HERE/init" -nt "$initrd" ] || [ "$0" -nt "$initrd" ]; then
	[ -e "$moddir/modules.dep" ] || busybox depmod -b "$unpack" "$release" ||
		die "busybox depmod failed on $package"
	stage=$cache/initrd.d
	rm -rf "$stage"
	mkdir -p "$stage"/{bin,dev,proc,sys,modules}
	cp /bin/busybox "$stage/bin/busybox"
	cp "$HERE/init" "$stage/init"
	: >"$stage/modules.load"
	modules=$(for m in virtio_pci 9pnet_virtio 9p overlay dummy; do module_closure "$m" || exit 125; done)
	for path in $modules; do
		name=${path##*/}
		name=${name%.ko}
		grep -qx "$name" "$stage/modules.load" && continue
		cp "$moddir/$path" "$stage/modules/"
		echo "$name" >>"$stage/modules.load"
	done
	(cd "$stage" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$initrd.tmp" ||
		die "cannot write the initramfs"
	mv "$initrd.tmp" "$initrd"
	rm -rf "$stage"
fi

# --- one run -------------------------------------------------------------------
run=$(mktemp -d /tmp/ebprof-vm.XXXXXX)
qemu_pid=""
finish() {
	[ -n "$qemu_pid" ] && kill -KILL "$qemu_pid" 2>/dev/null
	rm -rf "$run"
}
trap finish EXIT
trap 'exit 130' INT TERM
mkdir "$run/share"
echo "$HERE/guest.sh" >"$run/share/stage2"
{
	printf 'cd %q || exit 125\n' "$PWD"
	printf '%q ' "$@"
	echo
} >"$run/share/cmd"
: >"$run/share/output"

rw_share=()
if [ -n "$writable" ]; then
	echo "$writable" >"$run/share/writable"
	rw_share=(-fsdev "local,id=rw,path=$writable,security_model=passthrough"
		-device virtio-9p-pci,fsdev=rw,mount_tag=ebprof_rw)
fi

qemu-system-x86_64 \
	-accel tcg,thread=multi -cpu "$cpu_model" -smp "$cpus" -m "$mem" \
	-nodefaults -no-user-config -display none -no-reboot \
	-kernel "$vmlinuz" -initrd "$initrd" \
	-append "console=ttyS0 loglevel=4 panic=-1 tsc=reliable rdinit=/init" \
	-serial "file:$run/console.log" \
	-fsdev "local,id=root,path=/,security_model=passthrough,readonly=on,multidevs=remap" \
	-device virtio-9p-pci,fsdev=root,mount_tag=ebprof_root \
	-fsdev "local,id=out,path=$run/share,security_model=passthrough" \
	-device virtio-9p-pci,fsdev=out,mount_tag=ebprof_out \
	"${rw_share[@]}" \
	</dev/null >"$run/qemu.log" 2>&1 &
qemu_pid=$!
started=$SECONDS

# Stream the command's output while the guest runs.
tail -n +1 -f --pid="$qemu_pid" "$run/share/output" &
tail_pid=$!
timed_out=0
while kill -0 "$qemu_pid" 2>/dev/null; do
	if [ $((SECONDS - started)) -ge "$timeout" ]; then
		timed_out=1
		kill -KILL "$qemu_pid" 2>/dev/null
		break
	fi
	sleep 0.5
done
wait "$qemu_pid" 2>/dev/null || true
qemu_pid=""
wait "$tail_pid" 2>/dev/null || true

if [ "$timed_out" -eq 1 ]; then
	echo "vm.sh: $package: the guest did not power off within $timeout s: qemu killed" >&2
	tail -20 "$run/console.log" | sed 's/^/vm.sh: console| /' >&2
	exit 124
fi
if [ ! -s "$run/share/status" ]; then
	echo "vm.sh: $package: the guest stopped without an exit status (boot failed?)" >&2
	cat "$run/qemu.log" >&2
	tail -40 "$run/console.log" | sed 's/^/vm.sh: console| /' >&2
	exit 125
fi
echo "vm.sh: $package ($release) under TCG: $((SECONDS - started)) s, exit $(cat "$run/share/status")" >&2
exit "$(cat "$run/share/status")"
