#!/bin/sh
# 88-signals.sh: heurekad's signals as an operator uses them.
#
# SIGTERM drains: /health and readiness answer 503 at once while the port
# stays open, an open watch stream gets a last event (SHUTDOWN) and a
# clean end of its chunked body, a request whose body is still arriving
# is answered, and only then does the port close (exit 0) -- long before
# the grace period when nothing is left; a request that never finishes
# holds the stop for heureka.server.shutdown-grace-ms at most.
#
# SIGHUP names what changed: keys it applied (logging.level.root) and
# keys that need a restart (server.port), the latter at every SIGHUP
# until the restart; nothing changed is said too.
. "$(dirname "$0")/lib.sh"

d=$(hk_tmp)

# A registration whose body arrives in two halves: the head and half the
# body now, the rest once $d/go exists; the status line goes to $d/inflight.
half_register()
{
	"$HK_PYTHON" - "$1" "$d" <<'PYEOF'
import json, os, socket, sys, time
import hkfixture
port, d = int(sys.argv[1]), sys.argv[2]
body = json.dumps({"instance": hkfixture.instance("INFLIGHT", "i1")}).encode()
s = socket.create_connection(("127.0.0.1", port), timeout=30)
s.sendall(b"POST /eureka/apps/INFLIGHT HTTP/1.1\r\nHost: x\r\n"
          b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
s.sendall(body[:len(body) // 2])
open(d + "/half", "w").close()
deadline = time.time() + 30
while not os.path.exists(d + "/go"):
    if time.time() > deadline:
        sys.exit("no go")
    time.sleep(0.05)
try:
    s.sendall(body[len(body) // 2:])
    line = s.makefile("rb").readline().decode().strip()
except OSError as e:
    line = "error: %s" % e
open(d + "/inflight", "w").write(line or "EOF")
PYEOF
}

hk_log "SIGTERM: 503 first, watch ends cleanly, in-flight request answered, then the port closes"
hk_start s -D heureka.server.shutdown-grace-ms=30000
R=http://127.0.0.1:$HK_PORT_s
hk_register "$HK_URL_s" W w1
curl -sSN --max-time 60 "${HK_URL_s}heureka/watch" >"$d/watch.out" 2>"$d/watch.err" &
wpid=$!
hk_own "$wpid"
wait_until 10 grep -q '^event: SYNCED' "$d/watch.out"
half_register "$HK_PORT_s" &
ipid=$!
hk_own "$ipid"
wait_until 10 test -e "$d/half"
kill -TERM "$HK_PID_s"
# The port is still open, and says it is going away.
wait_until 10 grep -q 'shutting down' "$HK_ROOT/s.log"
assert_http 503 GET "$R/health"
assert_http 503 GET "$R/health/readiness"
assert_http 503 GET "$R/actuator/health"
# The watch got its last event and a clean end (curl exits 0 only when
# the chunked body was terminated properly).
rc=0
wait "$wpid" || rc=$?
hk_disown "$wpid"
assert_eq 0 "$rc" "curl on the watch stream ($(cat "$d/watch.err"))"
tail -n 4 "$d/watch.out" | grep -q '^event: SHUTDOWN' ||
    fail "no SHUTDOWN event at the end of the watch: $(tail -n 5 "$d/watch.out")"
# The server waits for the request in flight ...
sleep 0.5
[ "$(_hk_exited "$HK_PID_s")" = 0 ] || fail "heurekad exited with a request in flight"
assert_http 503 GET "$R/health"
# ... which is answered once its body is complete.
touch "$d/go"
wait "$ipid" || fail "the in-flight client failed"
hk_disown "$ipid"
case "$(cat "$d/inflight")" in
"HTTP/1.1 204"*) ;;
*) fail "in-flight registration: [$(cat "$d/inflight")]" ;;
esac
_hk_reap "$HK_PID_s"
HK_PID_s=
assert_eq 0 "$HK_RC" "exit status after the drain"
# The server's own record of the drain, not the client's clock (which
# also counts this script's waits on a loaded machine): drained, nothing
# left busy, in less than the 30 s grace period.
grep -q 'shutdown: drained' "$HK_ROOT/s.log" || fail "no 'drained' line"
! grep -q 'still busy after' "$HK_ROOT/s.log" ||
    fail "the stop waited for the grace period: $(grep 'shutdown:' "$HK_ROOT/s.log")"
ms=$(sed -n 's/.*shutdown: drained in \([0-9]*\) ms.*/\1/p' "$HK_ROOT/s.log")
[ -n "$ms" ] && [ "$ms" -lt 30000 ] ||
    fail "drained in [${ms}] ms: it waited for the grace period"
! hk_curl -o /dev/null "$R/health" 2>/dev/null || fail "the port is still open"

hk_log "SIGTERM: a request that never finishes holds the stop for the grace period only"
hk_start g -D heureka.server.shutdown-grace-ms=1500
rm -f "$d/half" "$d/go" "$d/inflight"
half_register "$HK_PORT_g" &
ipid=$!
hk_own "$ipid"
wait_until 10 test -e "$d/half"
t0=$(date +%s%3N)
kill -TERM "$HK_PID_g"
_hk_reap "$HK_PID_g"
HK_PID_g=
assert_eq 0 "$HK_RC" "exit status after the grace period"
ms=$(($(date +%s%3N) - t0))
[ "$ms" -ge 1400 ] || fail "stopped after ${ms} ms, before the 1500 ms grace"
grep -q 'still busy after' "$HK_ROOT/g.log" || fail "no line about the unfinished request"
touch "$d/go"
wait "$ipid" || true
hk_disown "$ipid"

hk_log "SIGHUP names applied keys and keys that need a restart"
cat >"$d/h.yml" <<'YML'
server:
  port: 0
  address: 127.0.0.1
logging:
  level:
    root: info
YML
"$HEUREKAD" -c "$d/h.yml" --port-file "$d/h.port" >"$d/h.log" 2>&1 &
hpid=$!
hk_own "$hpid"
wait_until 15 test -s "$d/h.port"
hport=$(cat "$d/h.port")
sed -e 's/port: 0/port: 18999/' -e 's/root: info/root: debug/' "$d/h.yml" >"$d/h2.yml"
mv "$d/h2.yml" "$d/h.yml"
kill -HUP "$hpid"
wait_until 10 grep -q 'SIGHUP: .*restart' "$d/h.log"
grep -q 'INFO.*SIGHUP: applied logging.level.root (info -> debug)' "$d/h.log" ||
    fail "applied line: $(grep SIGHUP "$d/h.log")"
grep -q 'WARN.*SIGHUP: server.port (0 -> 18999).* needs* a restart' "$d/h.log" ||
    fail "restart line: $(grep SIGHUP "$d/h.log")"
# Still on its first port.
hk_curl -o /dev/null "http://127.0.0.1:$hport/health" || fail "the port moved"
# Again, unchanged: the level is not applied twice, the port still pending.
: >"$d/h.log"
kill -HUP "$hpid"
wait_until 10 grep -q 'SIGHUP: .*restart' "$d/h.log"
! grep -q 'SIGHUP: applied' "$d/h.log" || fail "applied again: $(grep SIGHUP "$d/h.log")"
# Back as started: nothing to say but that.
sed -e 's/port: 18999/port: 0/' -e 's/root: debug/root: info/' "$d/h.yml" >"$d/h2.yml"
mv "$d/h2.yml" "$d/h.yml"
: >"$d/h.log"
kill -HUP "$hpid"
wait_until 10 grep -q 'SIGHUP: applied logging.level.root (debug -> info)' "$d/h.log"
! grep -q 'restart' "$d/h.log" || fail "restart named: $(grep SIGHUP "$d/h.log")"
: >"$d/h.log"
kill -HUP "$hpid"
wait_until 10 grep -q 'SIGHUP: no key changed' "$d/h.log"
kill -TERM "$hpid"
rc=0
wait "$hpid" || rc=$?
hk_disown "$hpid"
assert_eq 0 "$rc" "exit status"
