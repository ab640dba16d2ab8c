#!/bin/sh
# 91-drain-barrier.sh: the drain barrier (issue 24),
# GET heureka/apps/APP/ID/drained, and `heureka drain`. With a peer
# paused (SIGSTOP), a watcher whose stream has not written the change out
# yet and a client that fetched deltas before the change, the answer is
# 409 naming each; it turns 200 once the peer is back, the watcher got
# the event and the client polled again; `heureka drain` exits 0 and the
# instance is then cancelled on every node.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
hk_need_cli

# A's fetch window holds the test's client; B's and C's are short, so
# that hk_start's own GET apps (its readiness probe) is out of it by the
# time of the change.
set -- $(cl_ports 3)
PA=$1 PB=$2 PC=$3
PEERS="http://127.0.0.1:$PA/eureka/,http://127.0.0.1:$PB/eureka/,http://127.0.0.1:$PC/eureka/"
cl_start A "$PA" "$PEERS" -D heureka.watch.max-buffer-bytes=67108864 \
    -D heureka.drain.fetch-window-ms=120000
cl_start B "$PB" "$PEERS" -D heureka.drain.fetch-window-ms=1000
cl_start C "$PC" "$PEERS" -D heureka.drain.fetch-window-ms=1000
A=$HK_URL_A B=$HK_URL_B C=$HK_URL_C
SSE="$HK_PYTHON $(dirname "$0")/sse.py"
drained() {	# drained BASE: the answer's body; its status in $HK_ROOT/code
	hk_curl -o "$HK_ROOT/drained.json" -w '%{http_code}' \
	    "${1}heureka/apps/DRAIN/d1/drained" >"$HK_ROOT/code" || true
	cat "$HK_ROOT/drained.json"
}
waiting() {	# waiting EXPR: EXPR of the last answer
	hk_json "$1" "$HK_ROOT/drained.json"
}
ask() {		# ask EXPR: ask A again, EXPR of its answer (for wait_until)
	drained "$A" >/dev/null
	waiting "$1"
}
ask_code() {	# ask_code: ask A again, print the status
	drained "$A" >/dev/null
	cat "$HK_ROOT/code"
}
status_of() {	# status_of BASE: the status of DRAIN/d1 there
	hk_curl -H 'Accept: application/json' -o "$HK_ROOT/inst.json" \
	    "${1}apps/DRAIN/d1"
	hk_json 'd["instance"]["status"]' "$HK_ROOT/inst.json"
}

hk_register "$A" DRAIN d1
wait_until 10 cl_has "$B" DRAIN d1
wait_until 10 cl_has "$C" DRAIN d1
assert_http 404 GET "${A}heureka/apps/DRAIN/never/drained"
drained "$A" >/dev/null
assert_eq 409 "$(cat "$HK_ROOT/code")" "UP: not drained"
assert_eq UP "$(waiting 'd["waiting"]["status"]')" "waits for the status"

# A client polling deltas from A, paused by removing $HK_ROOT/poll.
touch "$HK_ROOT/poll"
"$HK_PYTHON" - "$A" "$HK_ROOT" <<'EOF' &
import http.client, os, sys, time, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1]); d = sys.argv[2]
h = {"DiscoveryIdentity-Name": "DefaultClient",
     "DiscoveryIdentity-Version": "1.4", "DiscoveryIdentity-Id": "10.9.9.9",
     "Accept": "application/json"}
n = 0
while True:
    if os.path.exists(os.path.join(d, "poll")):
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
        c.request("GET", u.path + "apps/delta", headers=h)
        r = c.getresponse(); r.read(); c.close()
        # Only an answered fetch counts (before the start-up sync
        # opens reads a fetch is refused, and the barrier, rightly,
        # does not count that client).
        if r.status == 200:
            n += 1
            open(os.path.join(d, "polls.tmp"), "w").write("%d\n" % n)
            os.rename(os.path.join(d, "polls.tmp"),
                      os.path.join(d, "polls"))
    time.sleep(0.2)
EOF
hk_own $!
wait_until 10 test -s "$HK_ROOT/polls"
rm "$HK_ROOT/poll"
sleep 0.5	# a poll under way ends
polls=$(cat "$HK_ROOT/polls")

# A watcher of DRAIN on A that stops reading after its snapshot; 3 MB of
# events then fill the kernel's buffers, so the change's event waits in
# heurekad's output behind them.
$SSE "${A}heureka/watch?app=DRAIN" "$HK_ROOT/watch" --rcvbuf 4096 \
    --stall "$HK_ROOT/go" &
hk_own $!
wait_until 10 grep -q SYNCED "$HK_ROOT/watch"
"$HK_PYTHON" - "$A" <<'EOF' || fail "filler registrations"
import http.client, json, sys, time, urllib.parse
import hkfixture
u = urllib.parse.urlparse(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
big = "x" * 4000
for i in range(250):
    inst = {"instance": hkfixture.minimal("DRAIN", "fill-%d" % i, host="h",
            metadata={"m1": big, "m2": big, "m3": big},
            lastDirtyTimestamp=str(int(time.time() * 1000)))}
    c.request("POST", u.path + "apps/DRAIN", json.dumps(inst),
              {"Content-Type": "application/json"})
    r = c.getresponse(); r.read()
    if r.status != 204:
        sys.exit("register %d: %d" % (i, r.status))
EOF
wait_until 20 cl_drained "$A"

# C stops; heureka drain sets OUT_OF_SERVICE on A and waits.
kill -STOP "$HK_PID_C"
t0=$(cl_now_ms)
"$HEUREKA" drain DRAIN d1 --timeout 120s --server "$A,$B,$C" \
    >"$HK_ROOT/drain.out" 2>&1 &
DRAIN_PID=$!
hk_own "$DRAIN_PID"
hk_on_fail "cat $HK_ROOT/drain.out"
wait_until 10 hk_eq OUT_OF_SERVICE status_of "$A"
wait_until 10 hk_eq 1 ask 'len(d["waiting"]["peers"])'
first=$(drained "$A")
hk_log "1: $(cat "$HK_ROOT/code") $first"
assert_eq 409 "$(cat "$HK_ROOT/code")" "paused peer: not drained"
assert_contains ":$PC/" "$(waiting 'd["waiting"]["peers"][0]')" "names C"
assert_eq 1 "$(waiting 'd["waiting"]["watchers"]')" "one watcher behind"
assert_eq 1 "$(waiting 'd["waiting"]["fetchers"]')" "one client to poll"

# C is back: its batch goes through on the next retry.
kill -CONT "$HK_PID_C"
wait_until 40 hk_eq 0 ask 'len(d["waiting"]["peers"])'
second=$(drained "$A")
hk_log "2: $(cat "$HK_ROOT/code") $second ($(($(cl_now_ms) - t0)) ms)"
assert_eq 409 "$(cat "$HK_ROOT/code")" "watcher and client: not drained"
assert_eq 1 "$(waiting 'd["waiting"]["watchers"]')" "the watcher still"

# The watcher reads on and gets the event.
touch "$HK_ROOT/go"
wait_until 20 grep -q "MODIFIED [0-9]* DRAIN d1 OUT_OF_SERVICE" "$HK_ROOT/watch"
wait_until 10 hk_eq 0 ask 'd["waiting"]["watchers"]'
third=$(drained "$A")
hk_log "3: $(cat "$HK_ROOT/code") $third"
assert_eq 409 "$(cat "$HK_ROOT/code")" "client: not drained"
assert_eq 1 "$(waiting 'd["waiting"]["fetchers"]')" "the client still"

# The client polls again: drained.
touch "$HK_ROOT/poll"
wait_until 10 hk_ge $((polls + 1)) cat "$HK_ROOT/polls"
wait_until 10 hk_eq 200 ask_code
fourth=$(drained "$A")
hk_log "4: $(cat "$HK_ROOT/code") $fourth"
assert_eq true "$(hk_json 'd["drained"]' "$HK_ROOT/drained.json")" "drained"

# heureka drain saw it on A, B and C, cancelled, and exits 0.
rc=0
wait "$DRAIN_PID" || rc=$?
hk_disown "$DRAIN_PID"
hk_log "heureka drain: exit $rc after $(($(cl_now_ms) - t0)) ms:" \
    "$(tr '\n' ' ' <"$HK_ROOT/drain.out")"
assert_eq 0 "$rc" "heureka drain exit status"
for n in "$A" "$B" "$C"; do
	wait_until 10 hk_eq 404 hk_curl -o /dev/null -w '%{http_code}' \
	    "${n}apps/DRAIN/d1"
done

# Not drained in time: exit 1, saying what is pending.
hk_register "$A" DRAIN d2
wait_until 10 cl_has "$B" DRAIN d2
kill -STOP "$HK_PID_B"
rc=0
"$HEUREKA" drain DRAIN d2 --timeout 2s --server "$A" \
    >"$HK_ROOT/drain2.out" 2>&1 || rc=$?
kill -CONT "$HK_PID_B"
hk_log "timeout: exit $rc: $(tr '\n' ' ' <"$HK_ROOT/drain2.out")"
assert_eq 1 "$rc" "heureka drain exit status when not drained"
assert_contains "not drained within" "$(cat "$HK_ROOT/drain2.out")" "says so"
assert_contains ":$PB/" "$(cat "$HK_ROOT/drain2.out")" "names the peer"
hk_stop A
hk_stop B
hk_stop C
