# `make bench-smoke`: every benchmark row for a second or two, so that the
# benchmark cannot rot between the (long) real runs. It checks that each
# row the README's Performance table shows was measured and holds a
# number, that the CSV and the plot were written, and that the BPF stats
# sysctl was put back as it was. The figures themselves are not judged:
# a smoke run on a busy machine measures noise.
source "$(dirname "$0")/lib.bash"

CSV=$ROOT/build/bench/bench.csv
SVG=$ROOT/build/bench/scaling.svg
rm -f "$CSV" "$SVG"
stats_before=$(cat /proc/sys/kernel/bpf_stats_enabled)
make -s -C "$ROOT" bench-smoke >"$T/out" 2>&1 || { tail -40 "$T/out" >&2; fail "make bench-smoke exited $?"; }
[ "$(cat /proc/sys/kernel/bpf_stats_enabled)" = "$stats_before" ] ||
	fail "kernel.bpf_stats_enabled was left at $(cat /proc/sys/kernel/bpf_stats_enabled)"
[ -s "$CSV" ] || fail "no $CSV"
head -1 "$CSV" | grep -q '^section,row,variant,hz,value,ci95,unit,anchor,anchor_value,ratio,runs,note$' ||
	fail "CSV header changed: $(head -1 "$CSV")"

# row_value SECTION ROW VARIANT: the value column of the first such row.
row_value() {
	python3 - "$CSV" "$1" "$2" "$3" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    # A row name may go on with its x value ("render time, 10k stacks").
    if (r["section"] == sys.argv[2] and r["row"].startswith(sys.argv[3])
            and r["variant"] == sys.argv[4]):
        print(r["value"] + " " + r["anchor_value"])
        break
PY
}

check() { # SECTION ROW VARIANT [anchor]: value (and anchor value) are numbers
	local v
	v=$(row_value "$1" "$2" "$3")
	[ -n "$v" ] || fail "no row '$1 / $2 / $3' in the CSV"
	read -r value anchor <<<"$v"
	[[ $value =~ ^-?[0-9.e+-]+$ ]] || fail "'$2' ($3) has no number: '$value'"
	if [ "${4:-}" = anchor ]; then
		[[ $anchor =~ ^-?[0-9.e+-]+$ ]] || fail "'$2' ($3) has no anchor figure: '$anchor'"
	fi
	ok "$1 / $2 / $3: $value ${anchor:+(anchor $anchor)}"
}

for r in syscall maps_open page_fault; do check "0 host" "$r" "this host"; done
check "1 kernel" "ns/sample shallow" ebprof anchor
check "1 kernel" "ns/sample deep" ebprof anchor
check "2 slowdown" "slowdown" floor anchor
for p in perf bpftrace ebprof; do check "2 slowdown" "slowdown above floor" "$p" anchor; done
for p in perf bpftrace; do check "2 slowdown" "ebprof minus $p" ebprof; done
check "2 ticks" "time lost to interruptions" none
check "2 ticks" "time lost to interruptions" floor anchor
for p in perf bpftrace ebprof; do
	check "2 ticks" "above the floor, in the interrupted threads" "$p" anchor
	check "2 ticks" "the tool's own process" "$p"
	check "2 ticks" "above the floor, in all" "$p"
done
for p in bpftrace ebprof; do check "2 ticks" "of it, the BPF program (kernel's run time)" "$p"; done
for p in perf bpftrace; do check "2 ticks" "above the floor in all, ebprof minus $p" ebprof; done
# The program's share must be a real reading: ebprof's program ran at 4999 Hz.
bpf=$(row_value "2 ticks" "of it, the BPF program (kernel's run time)" ebprof | cut -d' ' -f1)
python3 -c "import sys; sys.exit(0 if float('$bpf') > 0 else 1)" ||
	fail "ebprof's BPF program took no time in section ticks ($bpf pp)"
check "1 kernel" "ns/sample filtered out" "ebprof -p, per-CPU events" anchor
for p in "floor (every CPU)" "bpftrace /pid == N/" "ebprof -p" "ebprof -p, per-CPU events"; do
	check "2 slowdown" "others' slowdown, -p a sleeper" "$p" anchor
	check "2 slowdown" "others' timer interrupts, -p a sleeper" "$p" anchor
	check "2 slowdown" "program runs, -p a sleeper" "$p"
done
check "2 slowdown" "others' slowdown, ebprof -p minus bpftrace" "ebprof -p"
check "3 user" "CPU per 1000 samples" "ebprof record" anchor
check "3 user" "CPU per 1000 samples, start and end left out" "ebprof record"
check "3 user" "CPU per drain" "ebprof record"
check "3 user" "peak RSS" "ebprof record" anchor
check "3 user" "RSS growth, 2nd quarter to end" "ebprof record"
for a in "wall time to sampling" "CPU time to sampling"; do
	check "3 startup" "$a" "ebprof record" anchor
	check "3 startup" "$a" "ebprof record --mode wall" anchor
done
check "3 user" "collectd CPU added by plugin" "collectd+ebprof" anchor
check "3 user" "collectd RSS added by plugin" "collectd+ebprof" anchor
check "3 user" "collectd steady PSS added" "collectd+ebprof" anchor
check "4 symbols" "cold load libstdc++.so.6" "ebprof elfsym"
check "4 symbols" "cold: name N sampled addresses" "symbench resolve" anchor
check "4 symbols" "warm resolves" "symbench resolve"
check "4 inline" "name them in a stripped copy, grouped" "symbench group" anchor
check "4 inline" "name them with inlined functions" "symbench inline" anchor
check "5 render" "render time" "ebprof render" anchor
check "5 render" "render peak RSS" "ebprof render" anchor
check "5 render" "SVG size" "ebprof render" anchor
check "10 python" "ns/sample, 52 Python frames" ebprof anchor
check "10 python" "CPU per 1000 samples, Python workload" "ebprof record" anchor
check "6 scaling" "ns/sample by depth" ebprof anchor
check "6 scaling" "user CPU by unique stacks" "ebprof record"
check "7 top" "CPU share of one core" "ebprof top" anchor
check "7 top" "peak RSS" "ebprof top" anchor
check "9 offcpu" "switches/s alone" none
check "9 offcpu" "throughput lost" "ebprof --mode offcpu" anchor
check "9 offcpu" "BPF ns/switch" "ebprof --mode offcpu"
check "9 offcpu" "BPF ns/switch" "ebprof --mode offcpu, ping-pong without frame pointers"
check "9 offcpu" "throughput lost, service rate" "ebprof --mode offcpu" anchor

# Symbolization must really have named the sampled addresses.
named=$(grep '^4 symbols,cold: name N' "$CSV" | grep -o 'both named [0-9]*' | grep -o '[0-9]*$')
at_least "${named:-0}" 10 || fail "symbench and perf named only ${named:-0} common addresses"

# The plot: an SVG an XML parser accepts, with its six panels.
[ -s "$SVG" ] || fail "no $SVG"
xmllint --noout "$SVG" || fail "$SVG is not well-formed XML"
grep -q "render seconds by unique stacks" "$SVG" || fail "$SVG lacks the render panel"
grep -q '^section  *row' "$T/out" || fail "make bench-smoke printed no table"
ok "table printed, CSV and plot written"

# Section ebuser (not in "all": its rounds are long) and its runs without
# new processes, which the README's figure for new processes comes from.
python3 "$ROOT/tests/bench/bench.py" --smoke --sections ebuser >"$T/ebuser" 2>&1 ||
	{ tail -20 "$T/ebuser" >&2; fail "bench.py --smoke --sections ebuser exited $?"; }
check "3 user" "CPU per 1000 samples, start and end left out, no new processes" "ebprof record" anchor
check "3 user" "CPU per new process, while sampling" "ebprof record"
ok "section ebuser: with and without new processes"

# Section idle (not in "all" either: 3.5 minutes at 5 rounds): idle processes' cost.
python3 "$ROOT/tests/bench/bench.py" --smoke --sections idle >"$T/idle" 2>&1 ||
	{ tail -20 "$T/idle" >&2; fail "bench.py --smoke --sections idle exited $?"; }
check "3 user" "CPU a second with idle processes sampled once" "ebprof record" anchor
ok "section idle: the profiler's CPU beside idle processes, against perf"

# findvma.py (not a row: a study of a design, tests/bench/README.md): the
# probe loads and attaches beside the floor, samples user ticks, finds
# their mappings, and puts the BPF stats sysctl back.
python3 "$ROOT/tests/bench/findvma.py" 999 0.5 1 5 >"$T/findvma" 2>&1 ||
	{ tail -20 "$T/findvma" >&2; fail "findvma.py exited $?"; }
found=$(grep -o 'found [0-9]*' "$T/findvma" | head -1 | grep -o '[0-9]*$')
at_least "${found:-0}" 50 || fail "findvma.py's probe found ${found:-0} mappings: $(cat "$T/findvma")"
grep -q '^median ns per run: floor [0-9]*, find_vma [0-9]*' "$T/findvma" ||
	fail "findvma.py printed no medians: $(cat "$T/findvma")"
[ "$(cat /proc/sys/kernel/bpf_stats_enabled)" = "$stats_before" ] ||
	fail "findvma.py left kernel.bpf_stats_enabled at $(cat /proc/sys/kernel/bpf_stats_enabled)"
ok "findvma.py: the probe found $found mappings of user ticks"

# vmaiter (not a row either: the price of reading a new process's mappings
# without /proc, through a task_vma iterator or the dynamic loader's list):
# the iterator loads and links to one process at a time and finds the very
# mappings /proc lists, and the loader's list finds the iterator's
# file-backed ones, on five new processes each.
"$ROOT/build/bench/vmaiter" "$ROOT/build/bench/vmaiter.bpf.o" 15 >"$T/vmaiter" 2>&1 ||
	fail "vmaiter exited $?: $(cat "$T/vmaiter")"
for way in proc iterator loader; do
	grep -q "^$way  *[0-9.]*  *[0-9.]*  *[1-9][0-9]*  *5\$" "$T/vmaiter" ||
		fail "vmaiter's $way way read no mappings: $(cat "$T/vmaiter")"
done
ok "vmaiter: /proc, the iterator and the loader's list agree on new processes' mappings"
