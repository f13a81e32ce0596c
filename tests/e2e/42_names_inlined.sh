# Issue 18, part 3: a function inlined into a hot loop is a frame of its
# own, "NAME_[i]", directly above its caller, where DWARF says so.
# The fixture (tests/fixtures/inlinefix.c), built here with -O2 -g, runs
# hot_loop(), whose work is mix_block() inlined, whose work is
# mix_round() inlined, then control_loop(), which inlines nothing. One
# copy keeps its DWARF; another is stripped of everything (--strip-all)
# and finds its names and DWARF through .gnu_debuglink. With --inline,
# at least 95% of hot_loop's samples must read
# hot_loop;mix_block_[i];mix_round_[i], and control_loop's none; without
# it (the default) no frame may be inlined and hot_loop must be the leaf.
# Then the same in collectd with `Inline true`: the spool's folded windows
# carry the inlined frames, and bytes-cache_inline counts their memory.
source "$(dirname "$0")/collectd.bash"

SRC=$ROOT/tests/fixtures/inlinefix.c
gcc -O2 -g -o "$T/inl-dwarf" "$SRC" || fail "cannot build $SRC with -O2 -g"
nm "$T/inl-dwarf" | grep -q ' hot_loop$' || fail "hot_loop was not kept out of line"
nm "$T/inl-dwarf" | grep -q 'mix_' && fail "mix_block or mix_round was not inlined"
readelf --debug-dump=info "$T/inl-dwarf" | grep -q DW_TAG_inlined_subroutine ||
	fail "the fixture's DWARF has no inlined subroutine"
# A build-id of its own, so that its DWARF must come through the debuglink
# (files are known by build-id: the same id would reuse inl-dwarf's).
gcc -O2 -g -Wl,--build-id=0x1e1e0018c0ffee0018c0ffee -o "$T/inl-full" "$SRC" &&
	objcopy --only-keep-debug "$T/inl-full" "$T/inl-debuglink.debug" &&
	strip --strip-all -o "$T/inl-debuglink" "$T/inl-full" &&
	objcopy --add-gnu-debuglink="$T/inl-debuglink.debug" "$T/inl-debuglink" ||
	fail "cannot make the stripped copy with a debuglink"
readelf -SW "$T/inl-debuglink" | grep -qE ' \.(symtab|debug_info) ' &&
	fail "the stripped copy still has .symtab or .debug_info"

# record NAME ARGS...: profiles both copies for 6 s into $T/NAME.folded.
record() {
	local name=$1 a b r
	shift
	"$T/inl-dwarf" 30 >/dev/null & a=$!; BG_PIDS+=("$a")
	"$T/inl-debuglink" 30 >/dev/null & b=$!; BG_PIDS+=("$b")
	"$EBPROF" record -p "$a" -p "$b" -F 999 -d 30 "$@" --format folded \
		-o "$T/$name.folded" 2>"$T/$name.summary" &
	r=$!
	wait_sampling "$T/$name.summary"
	wait_cpu 5 25 "$a" "$b"
	kill -INT "$r"
	wait "$r" || fail "ebprof record $* exited $?: $(cat "$T/$name.summary")"
	kill "$a" "$b" 2>/dev/null
}
record on --inline
record off

/usr/bin/python3 - "$T/on.folded" "$T/off.folded" <<'PY' || fail "inlined frames are wrong (above)"
import sys

def stacks(path, comm):
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        if frames[0] == comm:
            yield [f for f in frames[1:] if not f.endswith("_[k]")], int(n)

bad = False
for comm in ("inl-dwarf", "inl-debuglink"):
    hot = block = both = control = control_inl = 0
    for frames, n in stacks(sys.argv[1], comm):
        if "hot_loop" in frames:
            i = frames.index("hot_loop")
            hot += n
            block += n * (frames[i + 1:i + 2] == ["mix_block_[i]"])
            both += n * (frames[i + 1:i + 3] == ["mix_block_[i]", "mix_round_[i]"])
        if "control_loop" in frames:
            control += n
            control_inl += n * any(f.endswith("_[i]") for f in frames[frames.index("control_loop"):])
    print(f"{comm} --inline: hot_loop {hot} samples, mix_block_[i] above it in {block}, "
          f"with mix_round_[i] above that in {both}; control_loop {control}, "
          f"with an inlined frame {control_inl}")
    if hot < 1000 or control < 1000:
        sys.exit(f"FAIL: too few samples of {comm}")
    if block < 0.95 * hot or both < 0.95 * hot:
        print(f"FAIL: {comm}: the inlined frames are missing or out of place")
        bad = True
    if control_inl:
        print(f"FAIL: {comm}: control_loop gained an inlined frame")
        bad = True
    hot = leaf = inl = 0
    for frames, n in stacks(sys.argv[2], comm):
        inl += n * any(f.endswith("_[i]") for f in frames)
        if "hot_loop" in frames:
            hot += n
            leaf += n * (frames[-1] == "hot_loop")
    print(f"{comm} default: {inl} samples with an inlined frame; hot_loop the leaf "
          f"in {leaf} of {hot}")
    if inl or hot < 1000 or leaf < 0.95 * hot:
        print(f"FAIL: {comm}: without --inline, frames were inlined or hot_loop is not the leaf")
        bad = True
sys.exit(bad)
PY
grep -E 'inlined frames: [1-9][0-9]* added; files with DWARF [2-9]' "$T/on.summary" ||
	fail "the summary does not report the inlined frames of both copies: $(cat "$T/on.summary")"
ok "inlined functions are frames of their own, above their caller, with DWARF in the file or through a debuglink"

# The plugin: `Inline true` in a real collectd, the DWARF copy profiled.
"$T/inl-dwarf" 60 >/dev/null &
W=$!
BG_PIDS+=("$W")
D=$(collectd_dir inline csv)
{
	collectd_conf "$D" e2ehost 1
	collectd_csv "$D"
	cat <<EOF
LoadPlugin ebprof
<Plugin ebprof>
  Frequency 499
  PID $W
  Inline true
  SpoolDir "$D/spool"
  SpoolInterval 2
  SpoolFormat folded
</Plugin>
EOF
} >"$D/collectd.conf"
collectd_start "$D"
wait_cpu 3 20 "$W"
collectd_stop "$COLLECTD"
cat "$D"/spool/ebprof-*.folded >"$T/plugin.folded" 2>/dev/null || { show_log "$D"; fail "collectd wrote no spool window"; }
hot=$(awk '/(^|;)hot_loop(;| )/ { n += $NF } END { print n + 0 }' "$T/plugin.folded")
inl=$(awk '/;hot_loop;mix_block_\[i\];mix_round_\[i\]/ { n += $NF } END { print n + 0 }' "$T/plugin.folded")
bytes=$(cat "$D"/csv/e2ehost/ebprof-health/bytes-cache_inline-* 2>/dev/null |
	awk -F, '$1 ~ /^[0-9]/ { v = $2 } END { print v + 0 }')
echo "collectd, Inline true: hot_loop $hot samples, with its inlined frames above it $inl; cache_inline $bytes bytes"
[ "$hot" -ge 300 ] || { show_log "$D"; fail "too few samples of hot_loop in collectd's spool ($hot)"; }
awk -v a="$inl" -v b="$hot" 'BEGIN { exit !(a >= 0.95 * b) }' ||
	fail "collectd with Inline true: the inlined frames are missing ($inl of $hot)"
awk -v v="$bytes" 'BEGIN { exit !(v > 0) }' || fail "bytes-cache_inline does not count the DWARF held"
ok "collectd with Inline true: inlined frames in the spool, their memory in bytes-cache_inline"
