#!/bin/sh
# 36-fault-kill9.sh: a peer killed with -9 in the middle of register and
# cancel churn on A and B, restarted empty while the churn goes on (issue
# 9, "Resurrection"). The restarted node syncs from its peers and then
# receives whatever A and B had queued for it; once every queue drained
# and a few anti-entropy rounds passed, no cancelled instance may be on any
# node and the three full fetches must be identical. The scenario runs
# several rounds (a crash lands at a different point of the churn each
# time) because one round does not hit every bad ordering.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

: "${KILL_ROUNDS:=3}"
: "${KILL_CHURN:=150}"

cl_trio

hk_register "$A" SVC keep-1
wait_until 5 cl_same "$A" "$B" "$C"

round=1
while [ "$round" -le "$KILL_ROUNDS" ]; do
	d=$(hk_tmp)
	hk_log "round $round: churn on A and B, kill -9 C a third of the way"
	cl_churn "$d" "k$round" "$KILL_CHURN" "$A" "$B" &
	churn=$!
	hk_own "$churn"
	wait_until 20 cl_churned "$d" $((KILL_CHURN / 3))
	hk_kill C
	wait_until 20 cl_churned "$d" $((KILL_CHURN / 2))
	hk_log "round $round: restart C empty while the churn goes on"
	cl_start C "$PC" "$PEERS"
	wait "$churn" || fail "the churn failed"
	hk_disown "$churn"
	cl_churn_checked 20 "$d" "$A" "$B" "$C"
	round=$((round + 1))
done
hk_stop A
hk_stop B
hk_stop C
