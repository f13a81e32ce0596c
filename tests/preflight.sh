#!/usr/bin/env bash
# The fresh-machine guard: can collectd load every stock plugin that a test,
# the demo or a contrib/ snippet loads? Debian's collectd-core ships all
# plugins but only *suggests* the libraries most of them link against
# (write_prometheus needs libprotobuf-c1 and libmicrohttpd12), so on a fresh
# machine a plugin can be present and still fail to dlopen, and a test then
# fails much later with "Parsing the config file failed".
#
# The plugin list is read from the tests themselves, never kept by hand:
#   - the stock plugins named in `collectd_dir NAME PLUGIN...` calls,
#   - every `LoadPlugin NAME` line under tests/, examples/ and contrib/,
#   - every literal /usr/lib/collectd/NAME.so path there.
# Each plugin's file must exist and `ldd` must find every library. A
# missing library is mapped to its Debian package by the library packaging
# policy (libfoo.so.N is in libfooN, libfoo2.so.N in libfoo2-N), checked
# against collectd-core's own Depends/Recommends/Suggests, which name every
# library package a plugin links (no apt-file, no Contents download).
#
#   tests/preflight.sh              check; exit 1 naming each missing library
#                                   and its package
#   tests/preflight.sh --packages   print the packages that would fix it (for
#                                   tests/deps.sh), one a line
#   tests/preflight.sh --list       print the plugins found and who uses them
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PLUGINDIR=${COLLECTD_PLUGINDIR:-/usr/lib/collectd}
mode=${1:-check}

# plugin_users: "PLUGIN FILE" lines, sorted and unique.
plugin_users() {
	cd "$ROOT" || exit 1
	local files
	files=$(grep -rlE 'collectd_dir |LoadPlugin |/usr/lib/collectd/' tests examples contrib \
		--include='*.sh' --include='*.bash' --include='*.conf' --include='*.py' \
		--include='*.in' 2>/dev/null)
	for f in $files; do
		[ "$f" = tests/preflight.sh ] && continue
		{
			# collectd_dir NAME PLUGIN...: the words after the name.
			sed -n 's/.*\$(collectd_dir [^ )]*\( [^)]*\)).*/\1/p' "$f" | tr ' ' '\n'
			grep -oE 'LoadPlugin +"?[A-Za-z0-9_]+' "$f" | sed -E 's/LoadPlugin +"?//'
			grep -oE '/usr/lib/collectd/[A-Za-z0-9_]+\.so' "$f" | sed -E 's#.*/##; s/\.so$//'
		} | grep -E '^[A-Za-z0-9_]+$' | grep -vx ebprof | sed "s#\$# $f#"
	done | sort -u
}

# collectd_libpkgs: the library packages collectd-core declares, one a line.
collectd_libpkgs() {
	apt-cache show --no-all-versions collectd-core 2>/dev/null |
		sed -n 's/^\(Depends\|Recommends\|Suggests\): //p' | tr ',|' '\n\n' |
		sed -E 's/\(.*\)//; s/^ +//; s/ +$//' | grep -E '^lib' | sort -u
}

# package_of LIBRARY (a soname such as libprotobuf-c.so.1): its Debian package.
package_of() {
	local lib=$1 stem ver cand installed
	installed=$(dpkg -S "*/$lib" 2>/dev/null | head -1 | cut -d: -f1)
	[ -n "$installed" ] && { echo "$installed"; return; }
	stem=${lib%%.so*}
	ver=${lib#*.so.}
	ver=${ver%%.*}
	case $stem in
	*[0-9]) cand=$stem-$ver ;;
	*) cand=$stem$ver ;;
	esac
	# The name policy gives, collectd-core confirms; a t64 or other
	# renamed package is found among collectd-core's by its stem.
	if grep -qx -- "$cand" <<<"$LIBPKGS"; then
		echo "$cand"
	elif grep -m1 -E "^${cand}[a-z0-9]*$" <<<"$LIBPKGS"; then
		:
	elif apt-cache show --no-all-versions "$cand" >/dev/null 2>&1; then
		echo "$cand"
	else
		echo "?"
	fi
}

USERS=$(plugin_users)
if [ "$mode" = --list ]; then
	echo "$USERS"
	exit 0
fi
[ -n "$USERS" ] || { echo "preflight: found no collectd plugin in the tests; is $ROOT a checkout?" >&2; exit 1; }
LIBPKGS=$(collectd_libpkgs)
PLUGINS=$(cut -d' ' -f1 <<<"$USERS" | sort -u)

problems=0
packages=()
for p in $PLUGINS; do
	used_by=$(awk -v p="$p" '$1 == p { print $2 }' <<<"$USERS" | head -3 | tr '\n' ' ')
	so=$PLUGINDIR/$p.so
	if [ ! -f "$so" ]; then
		[ "$mode" = --packages ] || echo "preflight: collectd plugin $p ($so) is missing;" \
			"Debian package collectd-core; used by ${used_by% }" >&2
		packages+=(collectd-core)
		problems=$((problems + 1))
		continue
	fi
	for lib in $(ldd "$so" 2>/dev/null | awk '$2 == "=>" && $3 == "not" { print $1 }'); do
		pkg=$(package_of "$lib")
		[ "$mode" = --packages ] || echo "preflight: collectd plugin $p cannot load: $lib not" \
			"found; Debian package $pkg; used by ${used_by% }" >&2
		[ "$pkg" = "?" ] || packages+=("$pkg")
		problems=$((problems + 1))
	done
done

if [ "$mode" = --packages ]; then
	[ ${#packages[@]} -eq 0 ] || printf '%s\n' "${packages[@]}" | sort -u
	exit 0
fi
nplugins=$(wc -w <<<"$PLUGINS")
if [ "$problems" -gt 0 ]; then
	echo "preflight: FAIL: $problems problem(s) in $nplugins collectd plugins; run make deps" \
		"(or apt-get install $(printf '%s\n' "${packages[@]}" | sort -u | paste -sd' '))" >&2
	exit 1
fi
echo "preflight: all $nplugins collectd plugins the tests load have their libraries:" $PLUGINS
