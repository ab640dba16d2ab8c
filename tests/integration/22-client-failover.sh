#!/bin/sh
# 22-client-failover.sh: with two server URLs and the first one dead, the
# agent registers and heartbeats through the second, and the query
# commands answer through it too.
. "$(dirname "$0")/lib.sh"

hk_need_cli

hk_start S
T=$(hk_tmp)
# A port nobody listens on: bind one, then stop the server that had it.
hk_start DEAD
DEAD_URL=$HK_URL_DEAD
hk_stop DEAD
URLS="$DEAD_URL,$HK_URL_S"

"$HEUREKA" agent --app failover --port 19191 --hostname f.local \
    --ip 127.0.0.1 --renewal-interval 1 --server "$DEAD_URL" \
    --server "$HK_URL_S" >"$T/agent.out" 2>&1 &
AGENT=$!
hk_own "$AGENT"

wait_until 10 "$HEUREKA" get FAILOVER --server "$URLS"
"$HEUREKA" apps --server "$URLS" | grep -q '^FAILOVER ' ||
    fail "heureka apps through the second URL"
EUREKA_CLIENT_SERVICEURL_DEFAULTZONE="$URLS" "$HEUREKA" get FAILOVER \
    >/dev/null || fail "URLs from the environment"

# Heartbeats keep going through the second server: the lease is renewed
# (the agent, with a 1 s renewal interval, is the only one renewing on S).
R0=$(hk_metric heureka_renewals_total "$HK_PORT_S")
wait_until 10 hk_ge $((R0 + 2)) hk_metric heureka_renewals_total "$HK_PORT_S"
"$HEUREKA" get FAILOVER f.local:failover:19191 --server "$URLS" >/dev/null ||
    fail "instance gone"
kill -0 "$AGENT" || fail "agent died: $(cat "$T/agent.out")"

kill -TERM "$AGENT"
rc=0
wait "$AGENT" || rc=$?
hk_disown "$AGENT"
assert_eq 0 "$rc" "agent exit status"
rc=0
"$HEUREKA" get FAILOVER --server "$URLS" >/dev/null 2>&1 || rc=$?
assert_eq 1 "$rc" "cancel went through the second URL"
hk_stop S
