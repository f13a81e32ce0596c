#!/usr/bin/env bash
# Installs the Debian packages ebprof builds, tests, packages and benchmarks
# with, then the libraries of every collectd plugin the tests load, and
# ends with the fresh-machine guard (tests/preflight.sh), so that `make
# deps` fails here, naming the library, rather than a test later.
# Safe to run again: it asks apt only for what is missing.
set -eu
cd "$(dirname "$0")/.."
pkgs=(
	build-essential clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config
	libcmocka-dev collectd-core collectd-dev
	liblzma-dev g++ xz-utils
	linux-perf bpftrace libxml2-utils python3 binutils nodejs
	# Debian's own CPython 3.11, whose frames tests/e2e/43_names_python.sh names
	python3.11
	qemu-system-x86 busybox-static
	cppcheck clang-tidy valgrind libclang-rt-14-dev gnuplot-nox protobuf-compiler
	libdw-dev
	# debuginfod: the client ebprof loads, and the server of tests/e2e/44_names_debuginfod.sh
	libdebuginfod1 debuginfod
	time
	# ebprof top (ncurses); the terminal of the tests 45-47 (tmux); the
	# manual pages' lint and lookup (tests/e2e/48_man_pages.sh)
	libncurses-dev tmux groff-base mandoc man-db
	# the neighbours the e2e tests meet for real (tests/e2e/8*_neighbours_*)
	prometheus graphite-carbon python3-whisper graphite-web influxdb influxdb-client
	nginx chromium chromium-driver python3-selenium fonts-dejavu-core
	# make deb: the package and its check
	dpkg-dev debhelper lintian fakeroot
)

# missing PACKAGE...: prints those not installed.
missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			echo "$p"
	done
}

# install PACKAGE...: apt-get install, as root, of those given.
install() {
	[ "$(id -u)" -eq 0 ] || { echo "deps: run as root to install: $*" >&2; exit 1; }
	echo "deps: installing $*"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "$@"
}

mapfile -t todo < <(missing "${pkgs[@]}")
if [ ${#todo[@]} -gt 0 ]; then
	install "${todo[@]}"
else
	echo "deps: all ${#pkgs[@]} packages present"
fi

# libc6-dbg of the installed libc, not installed but kept as a .deb: the
# debuginfod test (tests/e2e/44_names_debuginfod.sh) serves its debug files
# from a private directory, offline.
DEBS=/var/cache/ebprof-tests
libc=$(dpkg-query -W -f='${Version}' libc6)
if ! ls "$DEBS"/libc6-dbg_"${libc//:/%3a}"_*.deb >/dev/null 2>&1; then
	[ "$(id -u)" -eq 0 ] || { echo "deps: run as root to fetch libc6-dbg" >&2; exit 1; }
	mkdir -p "$DEBS"
	echo "deps: downloading libc6-dbg $libc into $DEBS"
	get_dbg() { (cd "$DEBS" && apt-get download -q "libc6-dbg=$libc" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true); }
	get_dbg
	# Package lists never fetched (or stale) on this machine: once more after an update.
	ls "$DEBS"/libc6-dbg_*.deb >/dev/null 2>&1 || { apt-get update -qq && get_dbg; }
	ls "$DEBS"/libc6-dbg_*.deb >/dev/null 2>&1 || { echo "deps: libc6-dbg $libc could not be downloaded" >&2; exit 1; }
fi

# The libraries of the collectd plugins the tests, the demo and contrib/
# load: collectd-core only suggests them. The guard derives both the
# plugin list and the packages.
mapfile -t libs < <(tests/preflight.sh --packages)
mapfile -t todo < <(missing "${libs[@]}")
[ ${#todo[@]} -eq 0 ] || install "${todo[@]}"
tests/preflight.sh
