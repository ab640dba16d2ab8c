#!/bin/sh
# 72-mem-encodings.sh: issue 21, "Memory that the budget does not see:
# encodings". With the registry filled to its memory budget, one GET each
# of apps and apps/delta in JSON and XML used to encode and keep four
# bodies as large as the registry (RSS to about six times a 48 MiB
# budget). The budget covers the encodings too, cached, in flight or
# being built: a fetch whose body would pass it gets 503 with the reason
# (its build given up within one slice, and past the budget no slice
# begun), counted in
# heureka_limit_rejections_total{limit="fetch-memory"}, asking again
# encodes nothing more, the peak RSS stays near the budget, and once
# cancels make room fetches are served again.
. "$(dirname "$0")/lib.sh"

WL="$HK_PYTHON $(dirname "$0")/watchload.py"
BUDGET=$((48 * 1024 * 1024))
kb() { awk -v k="$2" '$1 == k":" { print $2 }' "/proc/$1/status"; }

hk_start s -D eureka.server.max-memory-bytes=$BUDGET
U=$HK_URL_s
P=$HK_PORT_s

hk_log "fill the registry to the budget"
$WL "$U" fill 200 >"$HK_ROOT/fill.json" || fail "fill"
stored=$(hk_json 'str(d["stored"])' "$HK_ROOT/fill.json")
[ "$stored" -gt 1000 ] || fail "only $stored instances before the budget"
filled=$(kb "$HK_PID_s" VmRSS)

hk_log "apps and apps/delta, JSON and XML: 503 with the reason"
for path in apps apps/delta; do
	for acc in application/json application/xml; do
		assert_http 503 GET "${U}$path" -H "Accept: $acc"
		assert_contains "max-memory-bytes" "$(cat "$HK_BODY")" \
		    "reason of GET $path ($acc)"
	done
done
peak=$(kb "$HK_PID_s" VmHWM)
echo "MEASURE budget $((BUDGET / 1024)) kB, $stored instances: VmRSS ${filled} kB filled, VmHWM ${peak} kB after the four fetches" >&2
[ "$(hk_metric 'heureka_limit_rejections_total{limit="fetch-memory"}' "$P")" \
    -ge 4 ] || fail "refused fetches not counted"
enc=$(hk_metric 'heureka_memory_bytes{part="encodings"}' "$P")
[ "$enc" -le $((BUDGET / 8)) ] || fail "encodings hold $enc bytes"

hk_log "asked again and again: no slice is begun past the budget"
for i in 1 2 3 4 5; do
	for acc in application/json application/xml; do
		assert_http 503 GET "${U}apps" -H "Accept: $acc" \
		    -H "Accept-Encoding: gzip"
		assert_http 503 GET "${U}apps" -H "Accept: $acc"
	done
done
assert_eq "$enc" \
    "$(hk_metric 'heureka_memory_bytes{part="encodings"}' "$P")" \
    "encoded bytes after 20 more refused fetches"
hk_asan || [ $((peak - filled)) -le $((BUDGET / 1024 / 4)) ] ||
    fail "RSS grew from ${filled} kB to ${peak} kB (budget $((BUDGET / 1024)) kB)"

hk_log "one application's body too, until cancels make room again"
assert_http 503 GET "${U}apps/FILL007" -H "Accept: application/json"
# 4,000 cancels (20 batches of 200) free more than the excess.
"$HK_PYTHON" - "$U" <<'PY' || fail "cancels"
import http.client, json, sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
for b in range(20):
    items = [{"appName": "FILL%03d" % b, "id": "x%d-%d" % (b, i),
              "action": "Cancel"} for i in range(200)]
    c.request("POST", u.path + "peerreplication/batch",
              json.dumps({"replicationList": items}),
              {"Content-Type": "application/json",
               "x-netflix-discovery-replication": "true"})
    r = c.getresponse()
    r.read()
    if r.status != 200:
        sys.exit("batch %d: %d" % (b, r.status))
PY
assert_http 200 GET "${U}apps/FILL027" -H "Accept: application/json"
n=$(hk_json 'str(len(d["application"]["instance"]))')
[ "$n" -gt 10 ] || fail "apps/FILL027 holds $n instances"
hk_alive s
hk_stop s
hk_log "ok"
