#!/bin/sh
# 56-cluster-watch.sh: the watch and the leader on three peers (issue 14).
# A change taken by one node makes the same events, in the same order, at
# watchers of the others; every peer names the same leader: the oldest
# registration as its origin stamped it, handed over on a status change,
# pinning, release, cancel and eviction. Also prints the register on A ->
# event at a watcher of C latency.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

EV="-D eureka.server.eviction-interval-timer-in-ms=300"
# shellcheck disable=SC2086
cl_trio $EV
SSE="$HK_PYTHON $(dirname "$0")/sse.py"
# The readers (hk_own) go with the script, whatever its end.
has() { grep -q "$2" "$1"; }
events() { grep -v '^HTTP\|^EOF' "$1" | cut -d' ' -f2,4-; }
# The leader's id of APP on node BASE ("-" if none).
leader() { hk_curl -H 'Accept: application/json' "${1}heureka/apps/$2/leader" 2>/dev/null |
    "$HK_PYTHON" -c 'import json,sys
try: print(json.load(sys.stdin)["instance"]["instanceId"])
except Exception: print("-")'; }
# Is the leader of APP ID on all three peers?
leaders_are() { [ "$(leader "$A" "$1") $(leader "$B" "$1") $(leader "$C" "$1")" = "$2 $2 $2" ]; }

# The watch follows the readiness gate of apps: wait until reads open.
readable() { [ "$(hk_curl -o /dev/null -w '%{http_code}' "${1}apps")" = 200 ]; }
for u in "$A" "$B" "$C"; do wait_until 30 readable "$u"; done
$SSE "${A}heureka/watch" "$HK_ROOT/wa" & PWA=$!; hk_own "$PWA"
$SSE "${C}heureka/watch?app=SVC" "$HK_ROOT/wc" & PWC=$!; hk_own "$PWC"
wait_until 5 has "$HK_ROOT/wa" SYNCED
wait_until 5 has "$HK_ROOT/wc" SYNCED

hk_log "registrations on A, B, C: same events on A and C, leader x everywhere"
hk_register "$A" SVC x
wait_until 5 cl_has "$C" SVC x
hk_register "$B" SVC y
wait_until 5 cl_has "$C" SVC y
hk_register "$C" SVC z
wait_until 5 cl_has "$A" SVC z
wait_until 5 leaders_are SVC x
# registrationTimestamp is the origin's on every peer.
for n in B C; do
	eval "u=\$$n"
	assert_eq "$(cl_field "$A" SVC y leaseInfo | grep -o "'registrationTimestamp': [0-9]*")" \
	    "$(cl_field "$u" SVC y leaseInfo | grep -o "'registrationTimestamp': [0-9]*")" "y's registrationTimestamp on $n"
done

hk_log "x DOWN (on B): y leads everywhere"
assert_http 200 PUT "${B}apps/SVC/x/status?value=DOWN"
wait_until 5 leaders_are SVC y
hk_log "pin z (on A): z leads everywhere"
assert_http 200 PUT "${A}heureka/apps/SVC/leader?id=z"
wait_until 5 leaders_are SVC z
hk_log "release (on C): y again"
assert_http 200 DELETE "${C}heureka/apps/SVC/leader"
wait_until 5 leaders_are SVC y
hk_log "cancel y (on A): z"
assert_http 200 DELETE "${A}apps/SVC/y"
wait_until 5 leaders_are SVC z
hk_log "eviction of the leader: the next takes over everywhere"
# e1's lease (5 s, never renewed) must outlast the checks that it leads
# everywhere: at 1 s a loaded machine saw it evicted first.
hk_register "$A" EV e1 UP 5
wait_until 5 cl_has "$C" EV e1
hk_register "$B" EV e2 UP 90
wait_until 5 cl_has "$A" EV e2
wait_until 5 leaders_are EV e1
wait_until 15 leaders_are EV e2
wait_until 5 has "$HK_ROOT/wa" "LEADER .* EV e2"

EXP="SYNCED - - -
ADDED SVC x UP
LEADER SVC x UP
ADDED SVC y UP
ADDED SVC z UP
MODIFIED SVC x DOWN
LEADER SVC y UP
MODIFIED SVC z UP
LEADER SVC z UP
MODIFIED SVC z UP
LEADER SVC y UP
DELETED SVC y DOWN
LEADER SVC z UP"
wait_until 5 has "$HK_ROOT/wc" "DELETED .* SVC y"
wait_until 5 has "$HK_ROOT/wa" "DELETED .* SVC y"
assert_eq "$EXP" "$(events "$HK_ROOT/wc")" "events at C"
assert_eq "$EXP" "$(events "$HK_ROOT/wa" | grep 'SVC\|SYNCED')" "events at A"

hk_log "propagation: register on A -> event at a watcher of C"
"$HK_PYTHON" - "$A" "$HK_ROOT/wc" <<'PY' || fail "propagation"
import http.client, json, sys, time, urllib.parse
import hkfixture
u = urllib.parse.urlparse(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
lat = []
for i in range(50):
    iid = "p-%d" % i
    now = int(time.time() * 1000)
    inst = {"instance": hkfixture.minimal(
        "SVC", iid, host="h", lastDirtyTimestamp=str(now))}
    t0 = time.time() * 1000
    c.request("POST", u.path + "apps/SVC", json.dumps(inst),
              {"Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    deadline = time.time() + 5
    got = None
    while got is None and time.time() < deadline:
        for line in open(sys.argv[2]):
            f = line.split()
            if len(f) > 4 and f[1] == "ADDED" and f[4] == iid:
                got = float(f[0])
        if got is None:
            time.sleep(0.001)	# a bounded poll for the event (a state)
    if got is None:
        sys.exit("no event for %s at C" % iid)
    lat.append(got - t0)
lat.sort()
print("register on A -> event at C: p50 %.1f ms, p99 %.1f ms (n=%d)" %
      (lat[len(lat) // 2], lat[min(len(lat) - 1, int(len(lat) * 0.99))], len(lat)))
PY
# Shut down with the streams open: they end, nothing leaks (ASan).
hk_stop A
hk_stop C
wait_until 5 has "$HK_ROOT/wa" EOF
wait_until 5 has "$HK_ROOT/wc" EOF
hk_stop B
hk_log "ok"
