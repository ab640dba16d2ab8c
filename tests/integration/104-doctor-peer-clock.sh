#!/bin/sh
# 104-doctor-peer-clock.sh: the doctor's clock-skew finding for a peer
# (docs/console.md). Node B runs under libfaketime an hour ahead; node A
# reads the Date header of B's answers to its anti-entropy requests and
# reports B's clock as an hour ahead (and B reports A's as an hour
# behind), in GET heureka/doctor, /metrics and `heureka doctor` (exit
# 1). B restarted on a true clock: the finding clears and `heureka
# doctor` exits 0 again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

hk_need_cli
T=$(hk_tmp)
hk_need_faketime

set -- $(cl_ports 2)
PA=$1 PB=$2
UA=http://127.0.0.1:$PA/eureka/
UB=http://127.0.0.1:$PB/eureka/
FAST="-D heureka.doctor.interval-ms=200 \
-D eureka.server.anti-entropy-interval-ms=300 \
-D eureka.server.wait-time-in-ms-when-sync-empty=0"

# heurekad with its clock (wall and monotonic) an hour ahead.
cat >"$T/ahead" <<EOF
#!/bin/sh
ASAN_OPTIONS='$FT_ASAN' LD_PRELOAD='$FT_LIB' FAKETIME='+3600s' \
    FAKETIME_NO_CACHE=1 exec '$HEUREKAD' "\$@"
EOF
chmod +x "$T/ahead"
REAL=$HEUREKAD

# The clock-skew detail BASE's doctor gives for peer URL.
skew_detail()
{
	hk_curl -o "$T/doc.json" "${1}heureka/doctor" &&
	    hk_json '"".join(f["detail"] for f in d["findings"] if f["kind"] == "clock-skew" and f["id"] == "'"$2"'")' "$T/doc.json"
}
said() { skew_detail "$1" "$2" | grep -q "$3"; }
none() { [ -z "$(skew_detail "$1" "$2")" ]; }

hk_log "B an hour ahead: A says so, and B says A is behind"
HEUREKAD=$T/ahead
hk_start B -p "$PB" --peers "$UA" $FAST
HEUREKAD=$REAL
hk_start A -p "$PA" --peers "$UB" $FAST
wait_until 20 said "$UA" "$UB" "clock is 3[56][0-9][0-9] s ahead of this node's"
wait_until 20 said "$UB" "$UA" "clock is 3[56][0-9][0-9] s behind this node's"
assert_contains "Date header" "$(skew_detail "$UA" "$UB")" "says how it knows"
assert_eq 1 "$(hk_metric 'heureka_doctor_findings{kind="clock-skew"}' "$PA")" \
    "the finding in A's /metrics"
rc=0
"$HEUREKA" doctor --server "$UA" >"$T/out" 2>&1 || rc=$?
assert_eq 1 "$rc" "heureka doctor exit status with a skewed peer"
assert_contains "clock-skew" "$(cat "$T/out")" "heureka doctor prints the kind"
assert_contains "$UB" "$(cat "$T/out")" "heureka doctor names the peer"

hk_log "B restarted on a true clock: the finding clears"
hk_stop B
hk_start B -p "$PB" --peers "$UA" $FAST
wait_until 20 none "$UA" "$UB"
wait_until 20 none "$UB" "$UA"
assert_eq 0 "$(hk_metric 'heureka_doctor_findings{kind="clock-skew"}' "$PA")" \
    "cleared in A's /metrics"
wait_until 20 "$HEUREKA" doctor --server "$UA"
hk_stop A
hk_stop B
