#!/usr/bin/env bash
# Installs the Debian packages ebprof builds, tests and benchmarks with.
# Safe to run again: it asks apt only for what is missing.
set -eu
pkgs=(
	build-essential clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config
	libcmocka-dev collectd-core collectd-dev
	liblzma-dev g++ xz-utils
	linux-perf bpftrace libxml2-utils python3 binutils nodejs
	qemu-system-x86 busybox-static
	cppcheck clang-tidy valgrind libclang-rt-14-dev gnuplot-nox protobuf-compiler
	libdw-dev
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#pkgs[@]} packages present"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "deps: run as root to install: ${missing[*]}" >&2; exit 1; }
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
