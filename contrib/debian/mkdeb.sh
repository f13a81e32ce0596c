#!/usr/bin/env bash
# make deb: the Debian package, assembled with dpkg-deb from binaries the
# Makefile built with Debian's build flags (dpkg-buildflags, hardening=+all).
#
#   contrib/debian/mkdeb.sh BINDIR OUTDIR VERSION
#
# BINDIR holds ebprof and ebprof.so; the .deb goes to OUTDIR, its staging
# tree to OUTDIR/deb/debian/ebprof. Why dpkg-deb and not debhelper: the
# package is two ELF files and documentation, with no maintainer scripts,
# services, conffiles or debconf, which is what debhelper automates; and
# dpkg-buildpackage wants debian/ at the top of the source tree, which the
# project's fixed layout does not have (it would mean copying the tree).
# What debhelper would still give is done here in a few lines each:
# stripping as dh_strip does, Depends from dpkg-shlibdeps, md5sums,
# compressed documentation, root ownership and timestamps from the commit
# (SOURCE_DATE_EPOCH), so the same commit gives the same package.
#
# What goes where:
#   /usr/bin/ebprof, /usr/share/man/man1/ebprof.1.gz
#   /usr/share/man/man5/ebprof-collectd.5.gz  the plugin's configuration
#   /usr/lib/collectd/ebprof.so             collectd's PluginDir
#   /usr/share/doc/ebprof/examples/         contrib/ but this directory:
#       ebprof.conf (the collectd.conf.d snippet), network-*.conf,
#       nginx-ebprof.conf, systemd/ebprof.conf (the drop-in)
#   /usr/share/doc/ebprof/{README.md.gz,copyright,changelog.gz}
#   /usr/share/lintian/overrides/ebprof     contrib/debian/lintian-overrides
# Nothing goes to /etc: installing the package must not change what
# collectd runs (collectd-core's own plugins are off until configured),
# and the drop-in's CapabilityBoundingSet would narrow every plugin's
# capabilities if it were active. The README says how to enable both.
set -eu
bindir=$1 outdir=$2 version=$3
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

die() { echo "mkdeb: $*" >&2; exit 1; }
for f in "$bindir/ebprof" "$bindir/ebprof.so"; do
	[ -f "$f" ] || die "$f is not built"
done
for tool in dpkg-deb dpkg-shlibdeps dpkg-architecture; do
	command -v "$tool" >/dev/null || die "$tool is missing: run make deps (dpkg-dev)"
done

# The version: VERSION~gitDATE.SHA from a git checkout (below VERSION
# itself in dpkg's order: a snapshot before the release), else VERSION.
if sha=$(git -C "$top" rev-parse --short=7 HEAD 2>/dev/null); then
	epoch=$(git -C "$top" log -1 --format=%ct HEAD)
	version="$version~git$(date -u -d "@$epoch" +%Y%m%d).$sha"
else
	epoch=$(stat -c %Y "$top/Makefile")
fi
export SOURCE_DATE_EPOCH=$epoch
arch=$(dpkg-architecture -qDEB_HOST_ARCH)

work=$outdir/deb
root=$work/debian/ebprof
rm -rf "$work"
mkdir -p "$root/DEBIAN"
doc=$root/usr/share/doc/ebprof

# Binaries, stripped as dh_strip does (the .note.gnu.build-id stays).
install -D -m 0755 "$bindir/ebprof" "$root/usr/bin/ebprof"
install -D -m 0644 "$bindir/ebprof.so" "$root/usr/lib/collectd/ebprof.so"
strip --remove-section=.comment --remove-section=.note "$root/usr/bin/ebprof"
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
	"$root/usr/lib/collectd/ebprof.so"

# Documentation and examples.
install -D -m 0644 "$top/cli/ebprof.1" "$root/usr/share/man/man1/ebprof.1"
gzip -9n "$root/usr/share/man/man1/ebprof.1"
install -D -m 0644 "$top/plugin/ebprof-collectd.5" "$root/usr/share/man/man5/ebprof-collectd.5"
gzip -9n "$root/usr/share/man/man5/ebprof-collectd.5"
install -D -m 0644 "$top/README.md" "$doc/README.md"
gzip -9n "$doc/README.md"
(cd "$top/contrib" && find . -path ./debian -prune -o -type f -print) | sort | while read -r f; do
	install -D -m 0644 "$top/contrib/$f" "$doc/examples/$f"
done
# lintian: the binaries embed the BPF object, whose BTF names kernel
# struct fields (inet6's prefered_lft): the kernel's spelling, not ours.
install -D -m 0644 "$here/lintian-overrides" "$root/usr/share/lintian/overrides/ebprof"
# copyright: the machine-readable header, then LICENSE's text as its body.
{
	cat "$here/copyright"
	sed -n '/^Permission/,$p' "$top/LICENSE" | sed 's/^$/./; s/^/ /'
} >"$doc/copyright"
{
	echo "ebprof ($version) unstable; urgency=medium"
	echo
	echo "  * Built from commit ${sha:-unknown}; see the project's git log."
	echo
	echo " -- $(sed -n 's/^Maintainer: //p' "$here/control")  $(date -u -R -d "@$epoch")"
} | gzip -9n >"$doc/changelog.gz"

# control: Depends from the libraries the binaries link (dpkg-shlibdeps
# wants a debian/control naming the package in its working directory),
# size in KiB.
printf 'Source: ebprof\n\nPackage: ebprof\nArchitecture: any\n' >"$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O debian/ebprof/usr/bin/ebprof \
	debian/ebprof/usr/lib/collectd/ebprof.so | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || die "dpkg-shlibdeps found no dependencies"
# Opened at the first C++ name (symbolizer/demangle.c), not linked: shlibdeps cannot see it.
depends="$depends, libstdc++6"
size=$(du -k -s --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@DEPENDS@/$depends/" \
	-e "s/@SIZE@/$size/" "$here/control" >"$root/DEBIAN/control"
(cd "$root" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"

find "$root" -type d -exec chmod 0755 {} +
find "$root" -exec touch -h -d "@$epoch" {} +
deb=$outdir/ebprof_${version}_$arch.deb
rm -f "$outdir"/ebprof_*.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
