#!/bin/sh
# 55-watch.sh: the watch stream on one node (issue 14). Every kind of
# change makes one event, in order, with rising ids, and a heartbeat none;
# ?app= narrows the scope; Last-Event-ID resumes with exactly the missed
# events and no snapshot; keep-alive comments flow; the watcher cap
# answers 503; a stalled reader is cut off with RESET while another keeps
# receiving; GET/PUT/DELETE heureka/apps/{app}/leader.
. "$(dirname "$0")/lib.sh"

SSE="$HK_PYTHON $(dirname "$0")/sse.py"
# The readers (hk_own) go with the script, whatever its end.
hk_start A -D heureka.watch.keepalive-interval-ms=1000 \
    -D heureka.watch.max-watchers=3 -D heureka.watch.max-buffer-bytes=16384 \
    -D heureka.watch.window=64
A=$HK_URL_A
W=${A}heureka/watch
wstat() { hk_curl "${A}heureka/watch/stats" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
has() { grep -q "$2" "$1"; }
# The event lines of FILE without the receive time.
events() { grep -v '^HTTP\|^EOF' "$1" | cut -d' ' -f2-; }

$SSE "$W" "$HK_ROOT/w1" & P1=$!; hk_own "$P1"
$SSE "$W?app=app1" "$HK_ROOT/w2" & P2=$!; hk_own "$P2"
wait_until 5 has "$HK_ROOT/w1" SYNCED
wait_until 5 has "$HK_ROOT/w2" SYNCED
assert_eq 2 "$(wstat watchers)" "watchers"

hk_log "every kind of change, in order"
hk_register "$A" APP1 a
hk_register "$A" APP2 b
assert_http 200 PUT "${A}apps/APP1/a"			# heartbeat: no event
assert_http 200 PUT "${A}apps/APP1/a/status?value=DOWN"
assert_http 200 PUT "${A}apps/APP1/a/status?value=DOWN"	# no change: no event
assert_http 200 PUT "${A}apps/APP1/a"		# nor with no leader
assert_http 200 DELETE "${A}apps/APP1/a/status?value=UP"
assert_http 200 PUT "${A}apps/APP1/a/metadata?k=v"
hk_register "$A" APP3 c STARTING
assert_http 200 PUT "${A}apps/APP3/c"		# an app that never had one
assert_http 200 DELETE "${A}apps/APP2/b"
wait_until 5 has "$HK_ROOT/w1" "LEADER .* APP2 - "
EXP="SYNCED - - -
ADDED APP1 a UP
LEADER APP1 a UP
ADDED APP2 b UP
LEADER APP2 b UP
MODIFIED APP1 a DOWN
LEADER APP1 - UNKNOWN
MODIFIED APP1 a UP
LEADER APP1 a UP
MODIFIED APP1 a UP
ADDED APP3 c STARTING
DELETED APP2 b DOWN
LEADER APP2 - UNKNOWN"
assert_eq "$EXP" "$(events "$HK_ROOT/w1" | cut -d' ' -f1,3-)" "events on w1"
assert_eq "$(printf '%s\n' "$EXP" | grep -v 'APP2\|APP3')" \
    "$(events "$HK_ROOT/w2" | cut -d' ' -f1,3-)" "events on w2 (app=APP1)"
IDS=$(events "$HK_ROOT/w1" | sed 1d | cut -d' ' -f2)
assert_eq "$IDS" "$(printf '%s\n' "$IDS" | sort -n -u)" "ids rise"

hk_log "snapshot for an unknown id; keep-alive comments"
# An id from before the window (or another process) gets a snapshot.
hk_curl --max-time 1 -H 'Last-Event-ID: 5' "$W" >"$HK_ROOT/old" || true
assert_contains "event: SYNCED" "$(cat "$HK_ROOT/old")" "old id: snapshot"
assert_http 400 GET "$W" -H 'Last-Event-ID: x1'

OUT=$(hk_curl --max-time 2.5 "$W?app=none" || true)
N=$(printf '%s\n' "$OUT" | grep -c '^:$')
[ "$N" -ge 2 ] && [ "$N" -le 3 ] || fail "$N comments in 2.5 s at 1 s"

hk_log "Last-Event-ID resumes with exactly the missed events"
MARK=$(events "$HK_ROOT/w1" | sed -n 4p | cut -d' ' -f2)	# ADDED b
$SSE "$W" "$HK_ROOT/w3" --last-id "$MARK" & P3=$!; hk_own "$P3"
wait_until 5 has "$HK_ROOT/w3" "LEADER .* APP2 - "
assert_eq "$(events "$HK_ROOT/w1" | sed 1,4d)" "$(events "$HK_ROOT/w3")" \
    "resumed events"
assert_eq 1 "$(wstat resumed)" "resumed streams"

hk_log "the watcher cap answers 503"
assert_eq 3 "$(wstat watchers)" "watchers"
assert_http 503 GET "$W"
assert_eq 1 "$(wstat refused)" "refused"
kill "$P1" "$P3"; wait "$P1" "$P3" 2>/dev/null || true
wait_until 5 test "$(wstat watchers)" = 1

hk_log "a stalled reader is cut off with RESET; the others go on"
$SSE "$W?app=BIG" "$HK_ROOT/slow" --rcvbuf 4096 --stall "$HK_ROOT/go" & P4=$!; hk_own "$P4"
wait_until 5 has "$HK_ROOT/slow" SYNCED
"$HK_PYTHON" - "$A" <<'PY' || fail "bulk register"
import http.client, json, sys, time, urllib.parse
import hkfixture
u = urllib.parse.urlparse(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
big = "x" * 4000
for i in range(3000):
    now = int(time.time() * 1000)
    inst = {"instance": hkfixture.minimal(
        "BIG", "big-%d" % i, host="h",
        metadata={"m1": big, "m2": big, "m3": big},
        lastDirtyTimestamp=str(now))}
    c.request("POST", u.path + "apps/BIG", json.dumps(inst),
              {"Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    if r.status != 204:
        sys.exit("register %d: %d" % (i, r.status))
    if i % 20 == 19:
        c.request("GET", u.path + "heureka/watch/stats")
        r = c.getresponse()
        if json.loads(r.read())["resets"] > 0:
            sys.exit(0)
sys.exit("no reset after 3000 registrations")
PY
touch "$HK_ROOT/go"
wait_until 5 has "$HK_ROOT/slow" EOF
assert_contains "RESET" "$(events "$HK_ROOT/slow" | tail -1)" "last event of the slow reader"
assert_eq 1 "$(wstat resets)" "resets"
wait_until 5 test "$(wstat watchers)" = 1
hk_register "$A" APP1 after
wait_until 5 has "$HK_ROOT/w2" "ADDED .* APP1 after"

hk_log "leader endpoints"
assert_http 404 GET "${A}heureka/apps/NOPE/leader"
assert_http 404 PUT "${A}heureka/apps/APP1/leader?id=nope"
assert_http 400 PUT "${A}heureka/apps/APP1/leader"
assert_contains '"instanceId":"a"' "$(hk_curl -H 'Accept: application/json' "${A}heureka/apps/APP1/leader")" "leader a"
assert_http 200 PUT "${A}heureka/apps/APP1/leader?id=after"
assert_contains "<instanceId>after</instanceId>" "$(hk_curl "${A}heureka/apps/APP1/leader")" "pinned leader (XML)"
wait_until 5 has "$HK_ROOT/w2" "LEADER .* APP1 after"
assert_http 200 DELETE "${A}heureka/apps/APP1/leader"
wait_until 5 has "$HK_ROOT/w2" "LEADER .* APP1 a UP"
assert_http 405 POST "${A}heureka/apps/APP1/leader"
# The dashboard shows it, in the page and in its feed.
assert_contains '<div class="leader">leader: a</div>' "$(hk_curl "${A%eureka/}")" "dashboard"
assert_contains '"name":"APP1","leader":"a"' "$(hk_curl "${A%eureka/}heureka-assets/status.json")" "feed"

# {base}heureka without a slash (the fuzz found a read past its end).
for m in GET PUT; do
	code=$(hk_curl -o /dev/null -w '%{http_code}' -X "$m" "${A}heureka") || true
	case "$code" in
	[24]??) ;;
	*) fail "$m ${A}heureka: got ${code:-no answer}" ;;
	esac
done
hk_alive A

kill "$P2" "$P4" 2>/dev/null || true
hk_stop A
hk_log "ok"
