#!/bin/sh
# 82-cli-agent-start.sh: `heureka agent` refuses to start without a port
# (it registered port 0 before), takes one from -D; with a health URL it
# registers STARTING and stays so until a probe first passes (a failing
# service was announced UP first before), then follows UP/DOWN; a status
# change the on-demand rate limit holds back is said in its log instead
# of reaching the server silently later (issue 22).
. "$(dirname "$0")/lib.sh"

hk_need_cli
hk_start S
T=$(hk_tmp)
U=$HK_URL_S

hk_log "no port: refused, nothing registered"
rc=0
timeout 10 "$HEUREKA" agent --app noport --server "$U" >"$T/noport.out" 2>&1 || rc=$?
assert_eq 64 "$rc" "agent without --port"
grep -q -- "--port is required" "$T/noport.out" ||
    fail "no reason: $(cat "$T/noport.out")"
assert_http 404 GET "${U}apps/NOPORT"

hk_log "the port from -D is enough"
"$HEUREKA" agent --app dport -D eureka.instance.non-secure-port=19093 \
    --hostname d.local --server "$U" >"$T/dport.out" 2>&1 &
DP=$!
hk_own "$DP"
wait_until 10 hk_curl -sf -o /dev/null "${U}apps/DPORT/d.local:dport:19093"
kill -TERM "$DP"
wait "$DP" || fail "agent -D port: exit $?"
hk_disown "$DP"

# A health endpoint we control: 200 while $T/healthy exists, else 503.
"$HK_PYTHON" -c '
import http.server, os, socketserver, sys
flag, portfile = sys.argv[1], sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if os.path.exists(flag) else 503)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = socketserver.TCPServer(("127.0.0.1", 0), H)
open(portfile + ".tmp", "w").write(str(s.server_address[1]))
os.rename(portfile + ".tmp", portfile)
s.serve_forever()
' "$T/healthy" "$T/hport" &
PY=$!
hk_own "$PY"
wait_until 20 test -s "$T/hport"
HPORT=$(cat "$T/hport")

hk_log "failing health from the start: STARTING, never UP"
"$HEUREKA" agent --app starting --port 19094 --hostname s.local \
    --ip 127.0.0.1 --health-url "http://127.0.0.1:$HPORT/health" \
    --health-interval 1 --server "$U" >"$T/agent.out" 2>&1 &
AGENT=$!
hk_own "$AGENT"
ID=s.local:starting:19094
status_of()
{
	hk_curl -s -H 'Accept: application/json' "${U}apps/STARTING/$ID" |
	    "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["instance"]["status"])' \
	    2>/dev/null || true
}
wait_until 10 hk_eq STARTING status_of
wait_until 10 grep -q "still STARTING" "$T/agent.out"
assert_eq STARTING "$(status_of)" "status after failed probes"

hk_log "the first passing probe: UP; a failing one later: DOWN"
touch "$T/healthy"
wait_until 10 hk_eq UP status_of
rm -f "$T/healthy"
wait_until 10 hk_eq DOWN status_of

hk_log "changes faster than the rate limit: the held-back one is logged"
# Burst 2 then 4 a minute: UP and DOWN above spent the burst; flip until
# the agent says it held one back (each flip waits for the probe's line).
n=0
while ! grep -q "held back by the rate limit" "$T/agent.out"; do
	n=$((n + 1))
	[ "$n" -le 8 ] || fail "no held-back line after 8 changes: $(cat "$T/agent.out")"
	lines=$(grep -c "agent: health" "$T/agent.out" || true)
	if [ -e "$T/healthy" ]; then rm -f "$T/healthy"; else touch "$T/healthy"; fi
	wait_until 10 hk_ge $((lines + 1)) sh -c "grep -c 'agent: health' '$T/agent.out'"
done
grep "held back" "$T/agent.out" | head -1

kill -TERM "$AGENT"
wait "$AGENT" || fail "agent exit $?"
hk_disown "$AGENT"
hk_stop S
