#!/bin/sh
# 75-tombstones.sh: tombstones of instances a node never held are cheap,
# bounded and counted (issue 21, "Tombstones"). Two peers with a 64 MiB
# budget and a registration limit of 20/s, burst 10.
#  - A client DELETEs 2,000 ids never registered on A: past the burst
#    they get 429 with Retry-After, as registrations would; the client's
#    cancel of its own instance right after is not limited.
#  - A peer sends B 250,000 Cancels of ids never registered in
#    replication batches (peers are not rate limited): B keeps at most
#    eureka.server.max-unknown-tombstones (65,536) and 1/16 of the
#    budget of them, counts their bytes in heureka_memory_bytes
#    {part="tombstones"}, and its RSS grows by less than 1/8 of the
#    budget. Before: 250,000 tombstones, about 38 MiB of RSS, none of it
#    counted. (Under AddressSanitizer, whose quarantine keeps freed
#    memory, the RSS is printed but not bounded; the counts are.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

TF="$HK_PYTHON $(dirname "$0")/tombflood.py"
BUDGET=67108864
ARGS="-D eureka.server.max-memory-bytes=$BUDGET \
-D eureka.server.register-rate-per-second=20 \
-D eureka.server.register-rate-burst=10"
PORTS=$(cl_ports 2)
# shellcheck disable=SC2086
set -- $PORTS
PA=$1 PB=$2
PEERS="http://127.0.0.1:$PA/eureka/,http://127.0.0.1:$PB/eureka/"
# shellcheck disable=SC2086
cl_start A "$PA" "$PEERS" $ARGS
# shellcheck disable=SC2086
cl_start B "$PB" "$PEERS" $ARGS
A=$HK_URL_A B=$HK_URL_B
BAD=""

hk_register "$A" SVC mine
hk_log "a client cancels 2000 ids never registered on A"
out=$($TF "$A" rest 2000)
hk_log "$out"
n429=$(echo "$out" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["codes"].get("429", 0))')
ra=$(echo "$out" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["retry_after"])')
[ "$n429" -gt 0 ] || BAD="$BAD; no 429 for 2000 cancels of unknown ids (limit 20/s, burst 10)"
[ "$n429" -eq 0 ] || [ "$ra" != None ] || BAD="$BAD; a 429 without Retry-After"
assert_http 200 DELETE "${A}apps/SVC/mine"

hk_log "a peer sends B 250000 Cancels of ids never registered"
rss0=$(cl_rss "$HK_PID_B")
out=$($TF "$B" batch 250000)
hk_log "$out"
rss1=$(cl_rss "$HK_PID_B")
grow=$((rss1 - rss0))
echo "MEASURE B: RSS $rss0 -> $rss1 kB (+$grow kB) for 250000 unknown cancels, budget $((BUDGET / 1024)) kB" >&2
tombs=$(hk_metric 'heureka_tombstones{kind="unknown"}' "$PB")
tbytes=$(hk_metric 'heureka_memory_bytes{part="tombstones"}' "$PB")
echo "MEASURE B: $tombs unknown tombstones, $tbytes bytes counted" >&2
[ "$tombs" -le 65536 ] || BAD="$BAD; $tombs unknown tombstones kept (bound 65536)"
[ "$tbytes" -gt 0 ] || BAD="$BAD; tombstones not counted in heureka_memory_bytes"
# (plus the held tombstone of "mine", replicated from A)
[ "$tbytes" -le $((BUDGET / 16 + 1024)) ] || BAD="$BAD; tombstones count $tbytes bytes, above 1/16 of the budget"
if ! hk_asan; then
	[ "$grow" -le $((BUDGET / 8 / 1024)) ] ||
	    BAD="$BAD; B's RSS grew by $grow kB for unknown cancels (1/8 of the budget is $((BUDGET / 8 / 1024)) kB)"
fi
# B still serves registrations: the tombstones did not eat the budget.
hk_register "$B" SVC after

[ -z "$BAD" ] || fail "${BAD#; }"
hk_stop A
hk_stop B
