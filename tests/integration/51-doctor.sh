#!/bin/sh
# 51-doctor.sh: the doctor (docs/console.md) sees what real clients do
# wrong, says it in GET heureka/doctor, /metrics and `heureka doctor`
# (exit 1 while there are findings, 0 without), and each finding clears
# by itself once its cause is gone:
#   renew-interval    a `heureka agent` declaring 1 s renewals whose clock
#                     runs at a quarter of real speed (libfaketime), so
#                     it renews every 4 s; it clears once the agent runs
#                     at real speed again;
#   id-conflict       two agents sharing one instance id, registering
#                     over each other from two hosts; clears a window
#                     after the last flip;
#   reregister-storm  an agent restarted in a loop;
#   clock-skew        an agent whose clock is 10 minutes ahead (its
#                     registration refused) or 1 minute ahead;
#   self-preservation expired leases kept while renewals are below the
#                     threshold; clears once they are cancelled.
# The window is 3 s here (heureka.doctor.window-ms), so the re-register
# period is 3 s too; the doctor looks every 200 ms.
. "$(dirname "$0")/lib.sh"

hk_need_cli
hk_need_faketime

hk_start s -D heureka.doctor.interval-ms=200 -D heureka.doctor.window-ms=3000 \
    -D heureka.doctor.reregister-per-minute=4 \
    -D heureka.doctor.clock-skew-ms=5000 \
    -D eureka.server.eviction-interval-timer-in-ms=200
U=$HK_URL_s
P=$HK_PORT_s
T=$(hk_tmp)

# The findings of KIND as "app/id" lines.
found()
{
	hk_curl -o "$T/doc.json" "${U}heureka/doctor" || return 1
	hk_json '"\n".join(sorted(f.get("app", "") + "/" + f.get("id", "") for f in d["findings"] if f["kind"] == "'"$1"'"))' "$T/doc.json"
}
has() { found "$1" | grep -qx "$2"; }
hasnt() { ! found "$1" | grep -qx "$2"; }
detail()
{
	hk_curl -o "$T/doc.json" "${U}heureka/doctor" &&
	    hk_json '"\n".join(f["detail"] for f in d["findings"] if f["kind"] == "'"$1"'")' "$T/doc.json"
}

# An agent for APP/ID on PORT (host HOST); extra args are the agent's.
agent()
{
	local name=$1 app=$2 id=$3 host=$4 port=$5
	shift 5
	"$HEUREKA" agent --app "$app" --instance-id "$id" --hostname "$host" \
	    --ip 127.0.0.1 --port "$port" --server "$U" "$@" \
	    >"$T/$name.out" 2>&1 &
	eval "AG_$name=\$!"
	hk_own "$!"
}
# Stop agent NAME (it cancels its registration).
stop_agent()
{
	local pid
	eval "pid=\$AG_$1"
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	hk_disown "$pid"
}
registered() { hk_curl -fo /dev/null "${U}apps/$1/$2"; }

hk_log "a clean registry: nothing found, heureka doctor exits 0"
hk_register "$U" CALM c1 UP 90
"$HEUREKA" doctor --server "$U" >"$T/out" 2>&1 || fail "heureka doctor on a calm registry: $(cat "$T/out")"
assert_contains "nothing wrong seen" "$(cat "$T/out")" "heureka doctor says so"
assert_http 200 DELETE "${U}apps/CALM/c1"

hk_log "renew-interval: declares 1 s, renews every 4 s"
# libfaketime at x0.25: the agent's timers run four times slower.
ASAN_OPTIONS=$FT_ASAN LD_PRELOAD=$FT_LIB FAKETIME="+0 x0.25" \
    FAKETIME_NO_CACHE=1 \
    agent slow SLOW slow-1 slow.local 19101 --renewal-interval 1 \
    --lease-duration 30
wait_until 10 registered SLOW slow-1
wait_until 30 has renew-interval SLOW/slow-1
assert_contains "declares leaseInfo.renewalIntervalInSecs 1" \
    "$(detail renew-interval)" "the finding says what was declared"
rc=0
"$HEUREKA" doctor --server "$U" >"$T/out" 2>&1 || rc=$?
assert_eq 1 "$rc" "heureka doctor exit status with a finding"
assert_contains "renew-interval" "$(cat "$T/out")" "heureka doctor prints it"
assert_eq 1 "$(hk_metric 'heureka_doctor_findings{kind="renew-interval"}' "$P")" \
    "the finding in /metrics"
stop_agent slow
agent slow SLOW slow-1 slow.local 19101 --renewal-interval 1 --lease-duration 30
wait_until 10 registered SLOW slow-1
wait_until 20 hasnt renew-interval SLOW/slow-1
# Still registered and renewing at its declared rate: no finding.
registered SLOW slow-1 || fail "SLOW/slow-1 gone"
assert_eq 0 "$(hk_metric 'heureka_doctor_findings{kind="renew-interval"}' "$P")" \
    "renew-interval cleared in /metrics"
stop_agent slow

hk_log "id-conflict: two agents with one instance id"
agent one TWIN twin-1 host-a.local 19102 --renewal-interval 1
wait_until 10 registered TWIN twin-1
agent two TWIN twin-1 host-b.local 19103 --renewal-interval 1
wait_until 10 hk_eq host-b.local sh -c "\"$HEUREKA\" get TWIN twin-1 --server \"$U\" --json | \"$HK_PYTHON\" -c 'import json,sys; print(json.load(sys.stdin)[\"instance\"][\"hostName\"])'"
# The first one restarts (a deploy, a crash loop): it takes the id back.
stop_agent one
agent one TWIN twin-1 host-a.local 19102 --renewal-interval 1
wait_until 20 has id-conflict TWIN/twin-1
assert_contains "host-a.local" "$(detail id-conflict)" "names the first host"
assert_contains "host-b.local" "$(detail id-conflict)" "names the second host"
stop_agent one
stop_agent two
# No flip for a window (3 s): it clears.
wait_until 20 hasnt id-conflict TWIN/twin-1

hk_log "reregister-storm: an agent restarted in a loop"
for n in 1 2 3 4 5; do
	agent loop LOOPY loop-1 loop.local 19104 --renewal-interval 1
	wait_until 10 registered LOOPY loop-1
	stop_agent loop
done
wait_until 10 has reregister-storm LOOPY/loop-1
wait_until 20 hasnt reregister-storm LOOPY/loop-1

hk_log "clock-skew: an agent 10 minutes ahead (refused), then 1 minute"
# Past eureka.server.max-clock-skew-ms (5 min) its registration is
# refused: the doctor says why.
ASAN_OPTIONS=$FT_ASAN LD_PRELOAD=$FT_LIB FAKETIME="+600s" FAKETIME_NO_CACHE=1 \
    agent skew SKEW skew-1 skew.local 19105 --renewal-interval 1
wait_until 10 has clock-skew SKEW/skew-1
assert_contains "ahead of this node" "$(detail clock-skew)" "says ahead"
registered SKEW skew-1 && fail "a registration 10 minutes ahead was taken"
stop_agent skew
wait_until 20 hasnt clock-skew SKEW/skew-1
# Within it, the registration is taken and the skew still reported.
ASAN_OPTIONS=$FT_ASAN LD_PRELOAD=$FT_LIB FAKETIME="+60s" FAKETIME_NO_CACHE=1 \
    agent skew SKEW skew-1 skew.local 19105 --renewal-interval 1
wait_until 10 registered SKEW skew-1
wait_until 10 has clock-skew SKEW/skew-1
stop_agent skew
agent skew SKEW skew-1 skew.local 19105 --renewal-interval 1
wait_until 10 registered SKEW skew-1
wait_until 20 hasnt clock-skew SKEW/skew-1
stop_agent skew

hk_log "self-preservation: expired leases kept, and which"
for i in 1 2 3; do
	hk_register "$U" HELD "h$i" UP 1
done
wait_until 20 has self-preservation /
assert_contains "HELD/h" "$(detail self-preservation)" "names a lease it keeps"
assert_contains "expected" "$(detail self-preservation)" "says the figures"
for i in 1 2 3; do
	assert_http 200 DELETE "${U}apps/HELD/h$i"
done
wait_until 20 hasnt self-preservation /

hk_log "all clear: heureka doctor exits 0 again"
wait_until 20 "$HEUREKA" doctor --server "$U"
hk_stop s
