#!/bin/sh
# 87-metrics-process.sh: /metrics carries the process collector every
# Prometheus client library exports (process_cpu_seconds_total,
# process_resident_memory_bytes, process_open_fds, process_max_fds,
# process_start_time_seconds, with their conventional types), with values
# that are this process's, and heureka_build_info{version,revision} that
# agrees with `heurekad --version`. Read with the real Prometheus parser
# when python3-prometheus-client is there, else with awk.
. "$(dirname "$0")/lib.sh"

d=$(hk_tmp)
t0=$(date +%s)
hk_start s
R=http://127.0.0.1:$HK_PORT_s
hk_curl "$R/metrics" >"$d/m1"

hk_log "the process_* families and their types"
for f in process_cpu_seconds_total:counter process_resident_memory_bytes:gauge \
    process_open_fds:gauge process_max_fds:gauge process_start_time_seconds:gauge; do
	grep -qx "# TYPE ${f%%:*} ${f#*:}" "$d/m1" ||
	    fail "no '# TYPE ${f%%:*} ${f#*:}' in /metrics"
	grep -q "^${f%%:*} [0-9]" "$d/m1" || fail "no sample of ${f%%:*}"
done
val() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }

hk_log "the values are this process's"
rss=$(val process_resident_memory_bytes "$d/m1")
vmrss=$(awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$HK_PID_s/status")
awk -v a="$rss" -v b="$vmrss" 'BEGIN { exit !(a > 1000000 && a < 2 * b && b < 2 * a) }' ||
    fail "process_resident_memory_bytes $rss, VmRSS $vmrss"
st=$(val process_start_time_seconds "$d/m1")
awk -v s="$st" -v t0="$t0" -v t1="$(date +%s)" 'BEGIN { exit !(s >= t0 - 2 && s <= t1 + 1) }' ||
    fail "process_start_time_seconds $st, started between $t0 and $(date +%s)"
max=$(val process_max_fds "$d/m1")
assert_eq "$(sh -c 'ulimit -n')" "$max" "process_max_fds is the soft RLIMIT_NOFILE"
fds1=$(val process_open_fds "$d/m1")
# Twenty idle connections more are twenty descriptors more.
for i in $(seq 1 20); do
	exec {fd}<>"/dev/tcp/127.0.0.1/$HK_PORT_s"
	eval "c$i=$fd"
	printf 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n' >&"$fd"
done
wait_until 10 hk_ge $((fds1 + 20)) hk_metric process_open_fds "$HK_PORT_s"
fds2=$(hk_metric process_open_fds "$HK_PORT_s")
lsfd=$(ls "/proc/$HK_PID_s/fd" | wc -l)
# The scrape itself holds one more connection than the listing sees.
[ "$fds2" -le $((lsfd + 2)) ] && [ "$fds2" -ge $((lsfd - 2)) ] ||
    fail "process_open_fds $fds2, /proc/PID/fd has $lsfd"
for i in $(seq 1 20); do
	eval "exec {c$i}>&-"
done
cpu1=$(val process_cpu_seconds_total "$d/m1")
for i in $(seq 1 200); do hk_curl -o /dev/null "$R/metrics"; done
cpu2=$(hk_metric process_cpu_seconds_total "$HK_PORT_s")
awk -v a="$cpu1" -v b="$cpu2" 'BEGIN { exit !(b > a) }' ||
    fail "process_cpu_seconds_total did not grow over 200 scrapes ($cpu1 -> $cpu2)"

hk_log "heureka_build_info agrees with --version"
v=$("$HEUREKAD" --version)
ver=$(echo "$v" | sed -n 's/^heurekad \([^ ]*\) (revision \(.*\))$/\1/p')
rev=$(echo "$v" | sed -n 's/^heurekad \([^ ]*\) (revision \(.*\))$/\2/p')
[ -n "$ver" ] && [ -n "$rev" ] || fail "--version prints [$v]"
grep -qxF "heureka_build_info{version=\"$ver\",revision=\"$rev\"} 1" "$d/m1" ||
    fail "heureka_build_info: [$(grep heureka_build_info "$d/m1")], --version [$v]"

PY=""
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import prometheus_client.parser' 2>/dev/null; then
		PY=$p
		break
	fi
done
if [ -n "$PY" ]; then
	hk_log "the Prometheus parser reads them"
	"$PY" - "$d/m1" <<'PYEOF' || fail "prometheus_client"
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
want = {"process_cpu_seconds": "counter", "process_resident_memory_bytes": "gauge",
        "process_open_fds": "gauge", "process_max_fds": "gauge",
        "process_start_time_seconds": "gauge", "heureka_build_info": "gauge"}
for name, typ in want.items():
    assert name in fams, name
    assert fams[name].type == typ, (name, fams[name].type)
s = fams["heureka_build_info"].samples[0]
assert set(s.labels) == {"version", "revision"}, s.labels
PYEOF
fi
hk_stop s
