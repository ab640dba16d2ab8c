#!/bin/sh
# 21-client-agent.sh: `heureka agent` registers a sidecar, follows its
# health URL (DOWN when it fails, UP again when it recovers), re-registers
# within a heartbeat after the server restarts empty (the 404 path), and
# cancels the registration on SIGTERM, exiting 0.
. "$(dirname "$0")/lib.sh"

hk_need_cli

hk_start S
T=$(hk_tmp)
PORT_S=$HK_PORT_S

# A health endpoint we control: 200 while $T/healthy exists, else 503.
touch "$T/healthy"
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
# TCPServer, not HTTPServer: that one does a reverse DNS lookup at bind.
s = socketserver.TCPServer(("127.0.0.1", 0), H)
open(portfile + ".tmp", "w").write(str(s.server_address[1]))
os.rename(portfile + ".tmp", portfile)
s.serve_forever()
' "$T/healthy" "$T/hport" &
PY=$!
hk_own "$PY"
wait_until 20 test -s "$T/hport"
HPORT=$(cat "$T/hport")

"$HEUREKA" agent --app sidecar --port 19090 --hostname sidecar.local \
    --ip 127.0.0.1 --health-url "http://127.0.0.1:$HPORT/health" \
    --health-interval 1 --renewal-interval 1 --metadata zone=a \
    --metadata team=core --server "$HK_URL_S" >"$T/agent.out" 2>&1 &
AGENT=$!
hk_own "$AGENT"
ID=sidecar.local:sidecar:19090

status_is()
{
	"$HEUREKA" get SIDECAR "$ID" --server "$HK_URL_S" 2>/dev/null |
	    awk 'NR == 2 { print $3 }' | grep -qx "$1"
}

wait_until 10 status_is UP
"$HEUREKA" get SIDECAR "$ID" --json --server "$HK_URL_S" >"$T/inst.json"
grep -q '"zone":"a"' "$T/inst.json" || fail "metadata: $(cat "$T/inst.json")"
grep -q '"team":"core"' "$T/inst.json" || fail "metadata: $(cat "$T/inst.json")"

hk_log "health URL fails"
rm -f "$T/healthy"
wait_until 10 status_is DOWN
hk_log "health URL recovers"
touch "$T/healthy"
wait_until 10 status_is UP

hk_log "server restarted empty"
hk_kill S
hk_start S -p "$PORT_S"
assert_eq "$PORT_S" "$HK_PORT_S" "restarted on the same port"
wait_until 5 status_is UP

hk_log "SIGTERM cancels"
kill -TERM "$AGENT"
rc=0
wait "$AGENT" || rc=$?
assert_eq 0 "$rc" "agent exit status"
kill "$PY"
wait "$PY" 2>/dev/null || true
hk_disown "$PY" "$AGENT"
rc=0
"$HEUREKA" get SIDECAR --server "$HK_URL_S" >/dev/null 2>&1 || rc=$?
assert_eq 1 "$rc" "SIDECAR still registered after SIGTERM"
hk_stop S
