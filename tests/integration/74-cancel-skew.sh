#!/bin/sh
# 74-cancel-skew.sh: a Cancel's time passes the skew rule as every other
# timestamp that decides which copy wins (issue 21, "Clocks"). Three
# nodes; C's wall clock runs an hour ahead (libfaketime, monotonic clock
# left alone). The default eureka.server.max-clock-skew-ms is 5 minutes.
#  - A client's instance X, registered on A, is cancelled through C: C
#    stamps the tombstone with its own clock, an hour ahead, and
#    replicates the Cancel. The client then registers X again on A and
#    keeps heartbeating there. Before: A took the Cancel, raised the
#    re-registration past its tombstone (an hour ahead), and B refused
#    every copy of X as being from the future while the client
#    heartbeated. Now A and B refuse the Cancel (a 400 item) and X is on
#    both, its lastDirtyTimestamp within the skew of their clocks.
#  - A batch Cancel stamped a day ahead, posted to A as a peer: its item
#    is 400, nothing is removed, and the client's re-registration on A
#    reaches B.
# libfaketime is required (Debian: faketime/libfaketime, installed by
# ./quickstart test): without it the test fails rather than skips.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

hk_need_faketime

REP="x-netflix-discovery-replication: true"
SKEW=300000
PORTS=$(cl_ports 3)
# shellcheck disable=SC2086
set -- $PORTS
PA=$1 PB=$2 PC=$3
PEERS="http://127.0.0.1:$PA/eureka/,http://127.0.0.1:$PB/eureka/,http://127.0.0.1:$PC/eureka/"
cl_start A "$PA" "$PEERS"
cl_start B "$PB" "$PEERS"
ASAN_OPTIONS=$FT_ASAN LD_PRELOAD=$FT_LIB FAKETIME=+1h \
    FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1 \
    cl_start C "$PC" "$PEERS"
A=$HK_URL_A B=$HK_URL_B C=$HK_URL_C

# lastDirtyTimestamp of APP/ID on BASE, minus the wall clock here (ms).
ahead()
{
	echo $(($(cl_field "$1" "$2" "$3" lastDirtyTimestamp) - $(cl_now_ms)))
}

# Heartbeat APP/ID on BASE (the client's own, not replicated).
beat()
{
	hk_curl -o /dev/null -X PUT "${1}apps/$2/$3?status=UP"
}

# Is APP/ID on BASE, heartbeating it on A first (the client keeps at it)?
beating_has()
{
	beat "$A" "$2" "$3"
	cl_has "$1" "$2" "$3"
}

BAD=""
hk_log "X registered on A, cancelled through C (an hour ahead)"
hk_register "$A" SVC x-1
wait_until 10 cl_has "$B" SVC x-1
wait_until 10 cl_has "$C" SVC x-1
assert_http 200 DELETE "${C}apps/SVC/x-1"
wait_until 10 cl_drained "$A" "$B" "$C"
if cl_has "$A" SVC x-1; then
	hk_log "A refused C's Cancel stamped an hour ahead"
fi
hk_log "the client registers X again on A and keeps heartbeating"
hk_register "$A" SVC x-1
if ! ( wait_until 10 beating_has "$B" SVC x-1 ) 2>/dev/null; then
	BAD="$BAD; B lacks x-1 10 s after its client registered it again on A (A: lastDirtyTimestamp $(ahead "$A" SVC x-1) ms ahead)"
fi
cl_has "$A" SVC x-1 || BAD="$BAD; A lacks x-1 after its client registered it"
for b in "$A" "$B"; do
	if cl_has "$b" SVC x-1; then
		d=$(ahead "$b" SVC x-1)
		[ "$d" -le "$SKEW" ] ||
		    BAD="$BAD; x-1 on $b has a lastDirtyTimestamp $d ms ahead"
	fi
done
echo "MEASURE B/C future refusals: $(hk_metric heureka_future_refused_total "$PB")" >&2

hk_log "a batch Cancel of Y stamped a day ahead, posted to A as a peer"
hk_register "$A" SVC y-1
wait_until 10 cl_has "$B" SVC y-1
DAY=$(($(cl_now_ms) + 86400000))
printf '{"replicationList":[{"appName":"SVC","id":"y-1","lastDirtyTimestamp":%s,"action":"Cancel"}]}' \
    "$DAY" >"$HK_ROOT/cancel.json"
assert_http 200 POST "${A}peerreplication/batch/" -H "$REP" \
    -H 'Content-Type: application/json' --data-binary @"$HK_ROOT/cancel.json"
code=$(hk_json 'str(d["responseList"][0]["statusCode"])')
hk_log "the day-ahead Cancel's item: $code"
[ "$code" = 400 ] || BAD="$BAD; a Cancel a day ahead answered $code, not 400"
hk_register "$A" SVC y-1
if ! ( wait_until 10 beating_has "$B" SVC y-1 ) 2>/dev/null; then
	BAD="$BAD; B lacks y-1 10 s after its client registered it again on A (A: lastDirtyTimestamp $(ahead "$A" SVC y-1) ms ahead)"
fi
[ "$(ahead "$A" SVC y-1)" -le "$SKEW" ] ||
    BAD="$BAD; y-1 on A has a lastDirtyTimestamp $(ahead "$A" SVC y-1) ms ahead"

[ -z "$BAD" ] || fail "${BAD#; }"
hk_stop A
hk_stop B
hk_stop C
