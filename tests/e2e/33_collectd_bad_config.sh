# A bad <Plugin ebprof> block: collectd refuses to start, and its log names
# the key (and the value, when the value is what is wrong).
source "$(dirname "$0")/collectd.bash"

# try NAME 'CONFIG LINE' NEEDLE...: collectd must exit non-zero within 10 s
# and log one line holding every needle.
try() {
	local name=$1 line=$2 d
	shift 2
	d=$(collectd_dir "$name" csv)
	{
		collectd_conf "$d" e2ehost 1
		printf 'LoadPlugin csv\nLoadPlugin ebprof\n<Plugin ebprof>\n  %s\n</Plugin>\n' "$line"
	} >"$d/collectd.conf"
	timeout 10 collectd -f -C "$d/collectd.conf" >"$d/log" 2>&1
	rc=$?
	[ "$rc" -ne 124 ] || { show_log "$d"; fail "$name: collectd kept running with '$line'"; }
	[ "$rc" -ne 0 ] || { show_log "$d"; fail "$name: collectd exited 0 with '$line'"; }
	local pattern="ebprof plugin: "
	for n in "$@"; do pattern="$pattern.*$n"; done
	grep -q -- "$pattern" "$d/log" || { show_log "$d"; fail "$name: no log line matching '$pattern'"; }
	ok "$name: collectd exited $rc: $(grep -- "$pattern" "$d/log" | head -1)"
}

try unknown_key 'Frequncy 99' 'unknown option' '"Frequncy"'
try zero_top 'TopFunctions 0' 'TopFunctions 0:' 'bad value'
try negative_frequency 'Frequency -99' 'Frequency -99:'
try absurd_frequency 'Frequency 10000000' 'Frequency 10000000:'
try bad_retention 'SpoolRetention "lots"' 'SpoolRetention "lots":'
try long_process 'Process "a_process_name_too_long"' 'Process "a_process_name_too_long":'
try bad_format 'SpoolFormat svg png' 'SpoolFormat "svg" "png":'
