# Merging: `ebprof render` of N folded files gives exactly the sum of their
# counts, stack by stack; --root file and --root dir put each file's (or
# directory's) name above its stacks, as for a fleet's spools.
source "$(dirname "$0")/lib.bash"

n=7
for i in $(seq 1 $n); do
	mkdir -p "$T/host$i"
	{
		echo "app;main;work;spin $((i * 10))"
		echo "app;main;rest $i"
		echo "app;main;read_[k] $((i * i))"
		echo "other$((i % 2));main $((100 + i))"
	} >"$T/host$i/latest.folded"
	cp "$T/host$i/latest.folded" "$T/host$i.folded"
done
"$EBPROF" render --format folded "$T"/host?.folded -o "$T/merged.folded" || fail "merge failed"
want=$(cat "$T"/host?.folded | awk '{ c[$1] += $2 } END { for (k in c) print k, c[k] }' | sort)
got=$(sort "$T/merged.folded")
[ "$want" = "$got" ] || fail "merged counts are not the sums: $(diff <(echo "$want") <(echo "$got"))"
total=$($FOLDED_PY "$T/merged.folded" total)
sum=$(cat "$T"/host?.folded | awk '{ s += $2 } END { print s }')
[ "$total" -eq "$sum" ] || fail "merged total $total, want $sum"
ok "render merges $n files exactly ($total samples)"

"$EBPROF" render --root file --format folded "$T"/host?.folded -o "$T/rooted.folded" ||
	fail "--root file failed"
[ "$($FOLDED_PY "$T/rooted.folded" total)" -eq "$sum" ] || fail "--root file changed the total"
for i in $(seq 1 $n); do
	grep -q "^host$i;app;main;rest $i\$" "$T/rooted.folded" ||
		fail "host$i's stacks are not under a host$i root"
done
ok "--root file: each file's stacks under its name"

"$EBPROF" render --root dir --format folded "$T"/host*/latest.folded -o "$T/dirs.folded" ||
	fail "--root dir failed"
grep -q "^host3;app;main;work;spin 30\$" "$T/dirs.folded" || fail "--root dir: no host3 root"
[ "$($FOLDED_PY "$T/dirs.folded" total)" -eq "$sum" ] || fail "--root dir changed the total"
"$EBPROF" render --root dir "$T"/host*/latest.folded -o "$T/fleet.svg" &&
	xmllint --noout "$T/fleet.svg" || fail "no fleet SVG"
grep -q '<title>host5 (' "$T/fleet.svg" || fail "the fleet SVG has no host5 frame"
ok "--root dir: HOST/latest.folded trees become one graph with a frame per host"
