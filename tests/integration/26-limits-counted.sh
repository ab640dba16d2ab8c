#!/bin/sh
# 26-limits-counted.sh: the older bounds are counted like the new ones
# (issue 9, "every limit that is hit is counted in /metrics and logged once
# per interval"): a full registry (max-instances), too many metadata
# entries (in a register and in a metadata update) and the connection cap
# (max-connections) each raise heureka_limit_rejections_total{limit=...}
# by what was refused, and each is logged once however often it is hit.
. "$(dirname "$0")/lib.sh"

hk_start s -D eureka.server.max-instances=3 \
    -D eureka.server.max-metadata-entries=4 \
    -D eureka.server.max-connections=4
U=$HK_URL_s
P=$HK_PORT_s
CT="Content-Type: application/json"

lim() { hk_metric "heureka_limit_rejections_total{limit=\"$1\"}" "$P"; }

for n in 1 2 3; do
	hk_register "$U" FULL "f$n"
done
d=$(hk_tmp)
for n in 4 5 6; do
	hk_instance_json FULL "f$n" >"$d/i.json"
	assert_http 503 POST "${U}apps/FULL" -H "$CT" --data-binary @"$d/i.json"
	grep -q "max-instances" "$HK_BODY" || fail "503 without its reason"
done
assert_eq 3 "$(lim max-instances)" "full-registry refusals counted"

# Too many metadata entries: in a register (the registry is full, so make
# room first) and in a metadata update.
assert_http 200 DELETE "${U}apps/FULL/f3"
"$HK_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["instance"]["metadata"] = {"k%d" % i: "v" for i in range(5)}
print(json.dumps(d))' "$d/i.json" >"$d/meta.json"
assert_http 400 POST "${U}apps/FULL" -H "$CT" --data-binary @"$d/meta.json"
assert_http 400 PUT "${U}apps/FULL/f1/metadata?a=1&b=2&c=3&d=4&e=5"
assert_eq 2 "$(lim max-metadata-entries)" "metadata-entry refusals counted"

# The connection cap: four served keep-alive connections fill it; a fifth
# is closed as soon as it is accepted (counted each time).
"$HK_PYTHON" - "$P" "$d/held" <<'PY' &
import signal, socket, sys
port, flag = int(sys.argv[1]), sys.argv[2]
socks = []
for i in range(4):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    s.recv(4096)
    socks.append(s)
open(flag, "w").close()
signal.pause()	# hold them until the script kills us
PY
holder=$!
hk_own "$holder"
wait_until 10 test -e "$d/held"
# /metrics itself is closed now: read the log instead, then let the
# connections go and read the counter.
hk_curl -o /dev/null "http://127.0.0.1:$P/health" 2>/dev/null || true
wait_until 10 grep -q "limit: 4 connections open" "$HK_ROOT/s.log"
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
hk_disown "$holder"
wait_until 10 hk_ge 1 lim max-connections

# Logged once a minute, not per request.
n=$(grep -c "limit: FULL/f[0-9] refused: registry is full" "$HK_ROOT/s.log" || true)
assert_eq 1 "$n" "a full registry is logged once, not per request"
hk_stop s
