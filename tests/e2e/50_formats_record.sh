# One recording of the 70/30 workload, written as folded text and, from the
# same profile, as pprof and speedscope: pprof decodes (protoc with the
# published schema, and our own reader) to exactly the folded stacks, so
# totals and top functions agree; speedscope passes the schema's rules.
# Then `ebprof record --format pprof|speedscope` directly.
source "$(dirname "$0")/lib.bash"
PPROF_PY="/usr/bin/python3 $ROOT/tests/e2e/pprof.py"
command -v protoc >/dev/null || fail "protoc is missing: run make deps (protobuf-compiler)"

bg "$EX/split7030-leaffp" 15; A=$BG
sleep 0.3
"$EBPROF" record -p "$A" -F 499 -d 3 --format folded -o "$T/rec.folded" 2>"$T/summary" ||
	fail "ebprof record exited $?: $(cat "$T/summary")"
total=$($FOLDED_PY "$T/rec.folded" total)
at_least "$total" 300 || fail "only $total samples recorded"

"$EBPROF" render -F 499 --format pprof "$T/rec.folded" -o "$T/rec.pb.gz" ||
	fail "render --format pprof failed"
gzip -dc "$T/rec.pb.gz" >"$T/rec.pb" || fail "the pprof file is not gzip"
protoc --decode perftools.profiles.Profile -I "$ROOT/tests/pprof" profile.proto \
	<"$T/rec.pb" >"$T/rec.txt" 2>"$T/protoc.err" ||
	fail "protoc cannot decode it: $(cat "$T/protoc.err")"
grep -q '^string_table: ""$' "$T/rec.txt" || fail "string_table[0] is not the empty string"
grep -Eq '^  id: 0$' "$T/rec.txt" && fail "an id is 0"
ok "pprof: gzip'ed, protoc decodes $(grep -c '^sample {' "$T/rec.txt") samples with the published schema"

$PPROF_PY "$T/rec.pb.gz" folded | sort >"$T/from-pprof.folded" || fail "our pprof reader refused it"
sort "$T/rec.folded" >"$T/rec.sorted"
diff -u "$T/rec.sorted" "$T/from-pprof.folded" >"$T/diff" ||
	fail "pprof's stacks differ from the folded output: $(head -20 "$T/diff")"
read -r summary < <($PPROF_PY "$T/rec.pb.gz" summary)
[[ $summary == "samples=$total cpu_ns=$((total * 2004008)) period=2004008 types=samples/count,cpu/nanoseconds" ]] ||
	fail "pprof totals: $summary; folded has $total samples at 499 Hz"
top_folded=$(awk '{ n = split($1, f, ";"); c[f[n]] += $2 } END { for (k in c) print c[k], k }' \
	"$T/rec.folded" | sort -rn | head -3)
top_pprof=$(awk '{ n = split($1, f, ";"); c[f[n]] += $2 } END { for (k in c) print c[k], k }' \
	"$T/from-pprof.folded" | sort -rn | head -3)
[ "$top_folded" = "$top_pprof" ] || fail "top functions differ: folded $top_folded, pprof $top_pprof"
ok "pprof = folded: $total samples, same stacks, top: $(echo $top_pprof)"

"$EBPROF" render --format speedscope "$T/rec.folded" -o "$T/rec.json" || fail "render speedscope"
/usr/bin/python3 - "$T/rec.json" "$total" <<'PY' || fail "speedscope file breaks the schema rules"
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
frames = doc["shared"]["frames"]
assert all(isinstance(f["name"], str) for f in frames)
for p in doc["profiles"]:
    assert p["type"] == "sampled" and p["unit"] == "none"
    assert len(p["samples"]) == len(p["weights"])
    assert all(0 <= i < len(frames) for s in p["samples"] for i in s)
    assert all(type(w) is int for w in p["weights"])
    assert sum(p["weights"]) == int(sys.argv[2]) == p["endValue"] - p["startValue"]
PY
ok "speedscope: valid, $total samples"

# straight from record
"$EBPROF" record -p "$A" -F 199 -d 1 --format pprof -o "$T/direct.pb.gz" 2>/dev/null ||
	fail "record --format pprof failed"
read -r summary < <($PPROF_PY "$T/direct.pb.gz" summary)
[[ $summary == *"period=5025125 types=samples/count,cpu/nanoseconds" ]] ||
	fail "record's pprof has no period from -F 199: $summary"
"$EBPROF" record -p "$A" -F 199 -d 1 --format speedscope -o "$T/direct.json" 2>"$T/err" ||
	fail "record --format speedscope failed: $(cat "$T/err")"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["profiles"][0]["weights"]' \
	"$T/direct.json" || fail "record's speedscope file is not valid"
ok "record --format pprof and speedscope ($summary)"
