#!/bin/sh
# 83-client-ipv6.sh: libheureka takes IPv6 literal service URLs,
# http://[::1]:PORT/eureka/ (issue 22: "no server answered" while curl
# got 200 from the same URL): the CLI's queries and the agent's register,
# heartbeat and cancel all go to heurekad listening on ::1.
. "$(dirname "$0")/lib.sh"

hk_need_cli
T=$(hk_tmp)
if ! "$HK_PYTHON" -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
	hk_log "no IPv6 loopback here: skipped"
	exit 77
fi

# Printed if the script fails.
show_logs()
{
	echo "===== server on ::1"
	cat "$T/server.log"
	echo "===== agent"
	cat "$T/agent.out" 2>/dev/null || true
}
hk_on_fail show_logs

"$HEUREKAD" -b ::1 -p 0 --port-file "$T/port" >"$T/server.log" 2>&1 &
SRV=$!
hk_own "$SRV"
wait_until 15 test -s "$T/port"
P=$(cat "$T/port")
U="http://[::1]:$P/eureka/"
wait_until 15 hk_curl -g -sf -o /dev/null "${U}apps"

hk_log "the CLI on $U"
"$HEUREKA" apps --server "$U" >"$T/apps.out" 2>&1 ||
    fail "heureka apps on $U: $(cat "$T/apps.out")"

hk_log "the agent registers, heartbeats and cancels over IPv6"
"$HEUREKA" agent --app six --port 19096 --hostname six.local \
    --renewal-interval 1 --server "$U" >"$T/agent.out" 2>&1 &
AGENT=$!
hk_own "$AGENT"
wait_until 10 "$HEUREKA" get SIX six.local:six:19096 --server "$U"
# A few heartbeats (renewal every second) reach the server.
renewals()
{
	hk_curl -g -s "http://[::1]:$P/metrics" |
	    awk '$1 ~ /^heureka_renewals_total/ { s += $2 } END { print s + 0 }'
}
wait_until 10 hk_ge 2 renewals
"$HEUREKA" get SIX --server "$U" >"$T/get.out" || fail "get SIX"
grep -q 19096 "$T/get.out" || fail "get SIX: $(cat "$T/get.out")"
kill -TERM "$AGENT"
wait "$AGENT" || fail "agent exit $?"
hk_disown "$AGENT"
rc=0
"$HEUREKA" get SIX --server "$U" 2>"$T/gone.err" || rc=$?
assert_eq 1 "$rc" "SIX still registered after the agent's cancel"
