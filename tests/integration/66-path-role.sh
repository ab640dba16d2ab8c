#!/bin/sh
# 66-path-role.sh: the role a request needs is the role of the route it
# reaches (issue 21, "percent-encoded paths bypass the peer role"). With
# separate user and peer credentials, the user sends a replication batch
# (a Register of an instance nobody registered) to every spelling of the
# batch route it might try: percent-encoded letters, %2F, %2E%2E, doubled
# slashes, ';' parameters, case variants, each REST base. Every attempt
# that reaches the batch handler is 403 for the user; the others are 4xx;
# none of them stores anything. The same for the heureka/ extension, the
# watch and leader routes (a user's), the probes (open) and /metrics
# (read). Then the peer's own batch still works under the same spellings.
. "$(dirname "$0")/lib.sh"

UPW="u-66-$$"
PPW="p-66-$$"
T=$(hk_tmp)
hk_start s -D spring.security.user.name=alice \
    -D spring.security.user.password="$UPW" \
    -D heureka.security.peer.name=hk-peer \
    -D heureka.security.peer.password="$PPW" \
    -D heureka.security.auth-failure-burst=1000 \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0
R=http://127.0.0.1:$HK_PORT_s
USER="alice:$UPW"
PEER="hk-peer:$PPW"

# A batch registering EVIL/ID (status UP), in $T/ID.json.
batch()
{
	"$HK_PYTHON" -c '
import json, sys, hkfixture
i = hkfixture.instance("EVIL", sys.argv[1])
print(json.dumps({"replicationList": [{"appName": "EVIL", "id": sys.argv[1],
    "lastDirtyTimestamp": int(i["lastDirtyTimestamp"]), "status": "UP",
    "instanceInfo": i, "action": "Register"}]}))' "$1" >"$T/$1.json"
}

# STATUS of POST R+PATH with the batch of ID and CREDS.
post_batch()
{
	batch "$2"
	hk_curl -o "$T/out" -w '%{http_code}' -X POST -u "$3" \
	    -H 'Content-Type: application/json' --data-binary @"$T/$2.json" \
	    --path-as-is "$R$1" || true
}

# Print the number of EVIL instances the registry holds.
evil()
{
	hk_curl -u "$USER" -H 'Accept: application/json' "$R/eureka/apps" |
	    "$HK_PYTHON" -c '
import json, sys
d = json.load(sys.stdin)["applications"]["application"]
print(sum(len(a["instance"]) for a in d if a["name"] == "EVIL"))'
}

hk_log "the user's batch under every spelling: 403 where it reaches the batch, never stored"
n=0
bad=""
for p in \
    /eureka/v2/peerreplication/batch \
    /eureka/v2/%70eerreplication/batch \
    /eureka/v2/peerreplication/%62atch \
    /eureka/v2/%70%65%65%72%72%65%70%6c%69%63%61%74%69%6f%6e/%62%61%74%63%68 \
    /eureka/v2/%70EERREPLICATION/batch \
    /eureka/%70eerreplication/batch \
    /v2/%70eerreplication/batch \
    /v1/%70eerreplication/batch \
    /eureka/v1/%70eerreplication/batch \
    /eureka/V2/%70eerreplication/batch \
    /eureka/v2//peerreplication//batch/ \
    /eureka/v2//%70eerreplication//batch \
    /eureka//v2/peerreplication/batch \
    /eureka/v2/peerreplication%2Fbatch \
    /eureka/v2/peerreplication%2fbatch \
    /eureka/v2/apps/%2E%2E/peerreplication/batch \
    /eureka/v2/apps/../peerreplication/batch \
    /eureka/v2/x/%2e%2e/%70eerreplication/batch \
    '/eureka/v2/peerreplication;x=1/batch' \
    '/eureka/v2/peerreplication/batch;x=1' \
    '/eureka/v2/%70eerreplication;/batch' \
    /eureka/v2/PeerReplication/batch \
    /eureka/v2/peerreplication/BATCH \
    /EUREKA/v2/peerreplication/batch \
    /eureka/v2/peerreplication/batch%3Fx \
    /eureka/v2/peerreplication/batch%23x \
    '/eureka/v2/peerreplication/batch?x=/../' \
    /eureka/v2/./peerreplication/batch \
    /eureka/v2/%2e/peerreplication/batch; do
	n=$((n + 1))
	code=$(post_batch "$p" "e-$n" "$USER")
	case "$code" in
	403 | 400 | 404 | 405) ;;
	*) bad="$bad $p->$code" ;;
	esac
	echo "user POST $p -> $code" >&2
done
got=$(evil)
[ -z "$bad" ] && [ "$got" = 0 ] ||
    fail "the user reached the batch:$bad; EVIL instances stored: $got"
# The encoded spelling must be refused for the role, not by luck of routing.
assert_eq 403 "$(post_batch /eureka/v2/%70eerreplication/batch e-x "$USER")" \
    "user on %70eerreplication/batch"

hk_log "the heureka/ extension is the peer's under every spelling"
for p in /eureka/v2/heureka/stats /eureka/v2/%68eureka/stats \
    /eureka/v2/heureka/%73tats /eureka/v2//heureka//digest/ \
    /eureka/%68eureka/apps /v2/heureka/%61pps; do
	assert_http 403 GET "$R$p" -u "$USER" --path-as-is
	assert_http 200 GET "$R$p" -u "$PEER" --path-as-is
done
for p in /eureka/v2/heureka%2Fstats /eureka/v2/heureka/stats%2F \
    '/eureka/v2/heureka;x/stats'; do
	assert_http '40[04]' GET "$R$p" -u "$USER" --path-as-is
done

hk_log "the watch and leader routes are the user's, open to no one else"
for p in /eureka/v2/heureka/watch/stats /eureka/v2/%68eureka/watch/%73tats \
    /eureka/heureka//watch/stats; do
	assert_http 200 GET "$R$p" -u "$USER" --path-as-is
	assert_http 401 GET "$R$p" --path-as-is
done
hk_instance_json SVC i-1 >"$T/i1.json"
assert_http 204 POST "$R/eureka/v2/apps/SVC" -u "$USER" \
    -H 'Content-Type: application/json' --data-binary @"$T/i1.json"
assert_http 200 PUT "$R/eureka/v2/heureka/apps/SVC/%6ceader?id=i-1" -u "$USER"
assert_http 200 GET "$R/eureka/v2/%68eureka/apps/SVC/leader" -u "$USER" \
    -H 'Accept: application/json'
assert_http 401 PUT "$R/eureka/v2/%68eureka/apps/SVC/leader?id=i-1"

hk_log "probes are open only where a probe answers; /metrics is a read"
assert_http 200 GET "$R/health"
assert_http 200 GET "$R/actuator/health/liveness"
for p in /%68ealth /health%2Fliveness '/health;x' /HEALTH /metrics /%6detrics; do
	assert_http 401 GET "$R$p" --path-as-is
done
assert_http 200 GET "$R/metrics" -u "$USER"

hk_log "the peer's batch works under the encoded spelling too"
assert_eq 200 "$(post_batch /eureka/v2/%70eerreplication/batch p-1 "$PEER")" \
    "peer on %70eerreplication/batch"
assert_eq 1 "$(evil)" "EVIL instances after the peer's batch"
hk_alive s
hk_stop s
