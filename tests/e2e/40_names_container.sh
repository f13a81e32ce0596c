# A binary run from a private mount namespace, at a path that exists only
# there (a tmpfs mounted over /mnt inside it), is named: ebprof opens it
# through /proc/PID/map_files/ or /proc/PID/root/, not by its path here.
source "$(dirname "$0")/lib.bash"
command -v unshare >/dev/null || fail "unshare (util-linux) is not installed"

APP=/mnt/ebprof-ctr-app
[ ! -e "$APP" ] || fail "$APP exists on the host; the test needs a path only the namespace has"
unshare -m --propagation private sh -c \
	"mount -t tmpfs none /mnt && cp '$EX/split7030-leaffp' '$APP' && exec '$APP' 6" \
	>/dev/null 2>&1 &
A=$!; BG_PIDS+=("$A")
sleep 0.5
[ ! -e "$APP" ] || fail "$APP leaked out of the namespace"
[ "$(readlink /proc/$A/exe)" = "$APP" ] || fail "the workload is not running from $APP"
"$EBPROF" record -p "$A" -F 499 -d 3 --format folded -o "$T/ctr.folded" \
	2>"$T/summary" || fail "ebprof record exited $?: $(cat "$T/summary")"

total=$($FOLDED_PY "$T/ctr.folded" total ebprof-ctr-app)
at_least "$total" 500 || fail "only $total samples of the namespaced workload"
pct=$($FOLDED_PY "$T/ctr.folded" has ebprof-ctr-app 'burn_(seventy|thirty)')
at_least "$pct" 90 || {
	sort -k2 -n -t' ' "$T/ctr.folded" | tail -5
	fail "burn_* named in only $pct% of the namespaced workload's samples"
}
ok "binary in a private mount namespace: burn_* named in $pct% of $total samples"
