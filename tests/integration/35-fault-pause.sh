#!/bin/sh
# 35-fault-pause.sh: a peer paused (SIGSTOP, as a long GC pause or a
# stalled VM does) while instances are registered on A and cancelled
# through A or B (issue 9, "Resurrection"). After SIGCONT, once every
# queue drained and a few anti-entropy rounds passed, no cancelled
# instance may be on any node and the three full fetches (apps, ids,
# status, overridden status, metadata, dirty timestamps, hash code) must
# be identical. Both the replication batches queued on A and B for C and
# anti-entropy must keep the cancels: a Cancel that reaches C before the
# Register of the same instance, or a copy C stamped with its own apply
# time, must not bring anything back.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

# One round per pause length (ms): a short pause, and one long enough for
# the senders' back-off to grow past the anti-entropy interval.
: "${PAUSE_MS:=3000 8000}"
: "${PAUSE_CHURN:=60}"

cl_trio

hk_register "$A" SVC keep-1
wait_until 5 cl_same "$A" "$B" "$C"

for ms in $PAUSE_MS; do
	hk_log "SIGSTOP C for $ms ms, churn on A and B meanwhile"
	d=$(hk_tmp)
	fa=$(cl_peer "$A" "$PC" 'p["failures"]')
	fb=$(cl_peer "$B" "$PC" 'p["failures"]')
	kill -STOP "$HK_PID_C"
	t0=$(cl_now_ms)
	cl_churn "$d" "p$ms" "$PAUSE_CHURN" "$A" "$B"
	# A pause is a span of time: nothing to await but the clock.
	wait_until $((ms / 1000 + 10)) hk_clock_past $((t0 + ms))
	[ "$(cl_peer "$A" "$PC" 'p["failures"]')" -gt "$fa" ] &&
	    [ "$(cl_peer "$B" "$PC" 'p["failures"]')" -gt "$fb" ] ||
	    fail "A and B saw no failed batch to C: was it paused?"
	kill -CONT "$HK_PID_C"
	hk_log "SIGCONT C; settle"
	cl_churn_checked 20 "$d" "$A" "$B" "$C"
done
hk_stop A
hk_stop B
hk_stop C
