#!/bin/sh
# 52-audit-cluster.sh: the audit (docs/console.md) across two peers with
# authentication on. Every kind of change is recorded where it entered
# the cluster with the user, the client's address and the node; the peer
# that receives it by replication keeps that origin record (heureka peers
# carry it in the batch items) and marks it replicated. A change that
# enters at B is recorded with B as its node on both. An eviction is the
# server's; a metadata change is recorded as one. GET heureka/audit filters by app, id and since and answers
# newest first; heureka.audit.file gets the same records as JSON lines
# and is rotated by size; `heureka audit APP ID` prints them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

hk_need_cli
UPW="u-Secr3t-$$-pw"
PPW="p-Secr3t-$$-pw"
HK_AUTH="alice:$UPW"
hk_curl()
{
	curl -sS --max-time "$HK_CURL_MAX_TIME" --connect-timeout 5 \
	    -u "$HK_AUTH" "$@"
}
T=$(hk_tmp)
CL_PEER_AUTH="hk-peer:$PPW@"
export SPRING_SECURITY_USER_PASSWORD=$UPW HEUREKA_SECURITY_PEER_PASSWORD=$PPW
set -- $(cl_ports 2)
PA=$1 PB=$2

PEERS="http://${CL_PEER_AUTH}127.0.0.1:$PA/eureka/,http://${CL_PEER_AUTH}127.0.0.1:$PB/eureka/"
SEC="-D spring.security.user.name=alice -D heureka.security.peer.name=hk-peer"
# shellcheck disable=SC2086
cl_start A "$PA" "$PEERS" $SEC -D heureka.audit.file="$T/audit.jsonl" \
    -D heureka.audit.file-max-bytes=4096 -D heureka.audit.file-keep=2 \
    -D eureka.server.eviction-interval-timer-in-ms=200
# shellcheck disable=SC2086
cl_start B "$PB" "$PEERS" $SEC
unset SPRING_SECURITY_USER_PASSWORD HEUREKA_SECURITY_PEER_PASSWORD
A=$HK_URL_A B=$HK_URL_B

# python EXPR over node BASE's heureka/stats, asked as a peer.
pst()
{
	hk_curl -u "hk-peer:$PPW" -o "$T/pst.json" "${1}heureka/stats" ||
	    return 1
	hk_json "$2" "$T/pst.json"
}
# Each knows the other is heureka (a digest answered): origins travel.
wait_until 15 hk_eq True pst "$A" 'str(all(p["heureka"] for p in d["peers"]))'
wait_until 15 hk_eq True pst "$B" 'str(all(p["heureka"] for p in d["peers"]))'

# python EXPR over node BASE's audit of APP/ID (d["records"]).
audit()
{
	hk_curl -o "$T/audit.json" "${1}heureka/audit?app=$2&id=$3" ||
	    return 1
	hk_json "$4" "$T/audit.json"
}
whats() { audit "$1" "$2" "$3" '" ".join(r["what"] for r in d["records"])'; }

hk_log "register on A, override on B, remove the override on A, cancel on B"
hk_register "$A" SVC i-1
wait_until 5 cl_has "$B" SVC i-1
assert_http 200 PUT "${B}apps/SVC/i-1/status?value=OUT_OF_SERVICE"
wait_until 5 hk_eq "status-override register" whats "$A" SVC i-1
assert_http 200 DELETE "${A}apps/SVC/i-1/status"
wait_until 5 hk_eq "override-removed status-override register" whats "$B" SVC i-1
hk_instance_json SVC i-1 UP 90 >"$T/again.json"
assert_http 204 POST "${A}apps/SVC" -H 'Content-Type: application/json' \
    --data-binary @"$T/again.json"
wait_until 5 hk_eq "re-register override-removed status-override register" whats "$B" SVC i-1
assert_http 200 DELETE "${B}apps/SVC/i-1"
W="cancel re-register override-removed status-override register"
wait_until 5 hk_eq "$W" whats "$A" SVC i-1
wait_until 5 hk_eq "$W" whats "$B" SVC i-1

hk_log "each record keeps where the change entered the cluster"
# node, user, address, replicated of each record, newest first.
REC='" ".join("%s,%s,%s,%s" % (r["node"].rsplit(":", 1)[1], r["user"], r["address"], r["replicated"]) for r in d["records"])'
want_on()
{
	local here=$1 a=$2 b=$3
	# cancel@B re-register@A override-removed@A status@B register@A
	echo "$b,alice,127.0.0.1,$([ "$here" = B ] && echo False || echo True) $a,alice,127.0.0.1,$([ "$here" = A ] && echo False || echo True) $a,alice,127.0.0.1,$([ "$here" = A ] && echo False || echo True) $b,alice,127.0.0.1,$([ "$here" = B ] && echo False || echo True) $a,alice,127.0.0.1,$([ "$here" = A ] && echo False || echo True)"
}
assert_eq "$(want_on A "$PA" "$PB")" "$(audit "$A" SVC i-1 "$REC")" "A's records"
assert_eq "$(want_on B "$PA" "$PB")" "$(audit "$B" SVC i-1 "$REC")" "B's records"
assert_eq "OUT_OF_SERVICE" "$(audit "$A" SVC i-1 '[r["detail"] for r in d["records"] if r["what"] == "status-override"][0]')" "the override's detail"

hk_log "filters: since, app, limit; newest first"
T0=$(audit "$A" SVC i-1 'str(d["records"][1]["time"])')
assert_eq "cancel re-register" "$(hk_curl "${A}heureka/audit?app=svc&since=$T0" |
    "$HK_PYTHON" -c 'import json,sys; print(" ".join(r["what"] for r in json.load(sys.stdin)["records"]))')" "since and a lower-case app"
assert_http 400 GET "${A}heureka/audit?since=yesterday"
assert_http 405 DELETE "${A}heureka/audit"
assert_http 401 GET "${A}heureka/audit" -u "alice:wrong"

hk_log "a metadata change"
hk_register "$A" META m-1
assert_http 200 PUT "${A}apps/META/m-1/metadata?team=core"
wait_until 5 hk_eq "metadata register" whats "$A" META m-1

hk_log "an eviction is the server's, and only on the node that evicted"
hk_register "$A" GONE g-1 UP 1
wait_until 10 hk_eq "evict register" whats "$A" GONE g-1
assert_eq "server" "$(audit "$A" GONE g-1 'd["records"][0]["user"]')" "evicted by"

hk_log "heureka audit prints them"
"$HEUREKA" audit SVC i-1 --server "http://alice:$UPW@127.0.0.1:$PA/eureka/" >"$T/cli.out" 2>&1 ||
    fail "heureka audit: $(cat "$T/cli.out")"
assert_contains "status-override  SVC/i-1  OUT_OF_SERVICE" "$(cat "$T/cli.out")" "CLI line"
assert_contains "by alice from 127.0.0.1, entered at" "$(cat "$T/cli.out")" "CLI who"
assert_contains "(replicated here)" "$(cat "$T/cli.out")" "CLI replicated"

hk_log "the audit file: JSON lines, rotated past 4 KiB, 2 kept"
for n in $(seq 1 40); do
	hk_register "$A" FILL "f-$n"
done
wait_until 10 test -s "$T/audit.jsonl.1"
"$HK_PYTHON" - "$T" <<'PYEOF' || fail "audit file (see above)"
import json, os, sys
d = sys.argv[1]
names = sorted(n for n in os.listdir(d) if n.startswith("audit.jsonl"))
assert "audit.jsonl.3" not in names, names
recs = []
for n in names:
    size = os.path.getsize(os.path.join(d, n))
    assert size <= 4096 + 1024, (n, size)
    for line in open(os.path.join(d, n)):
        recs.append(json.loads(line))
whats = [(r["app"], r["what"]) for r in recs]
assert ("FILL", "register") in whats, whats[:5]
print("audit files:", names, len(recs), "records")
PYEOF
hk_stop A
hk_stop B
