#!/bin/sh
# 38-clock-step.sh: wall-clock steps under libfaketime (issue 9,
# "Clocks"). heurekad runs with libfaketime preloaded, reading its offset
# from a file this script rewrites, and with the monotonic clock left
# alone (FAKETIME_DONT_FAKE_MONOTONIC=1), so only the wall clock steps, as
# an NTP step or an operator's `date -s` does. Leases are short (2 s),
# eviction runs every 100 ms and self-preservation is off.
#  - Step back 1 h: an instance that stopped heartbeating must still be
#    evicted on time (seconds), not an hour later.
#  - Step forward 1 day: an instance heartbeating every 300 ms must never
#    be answered 404 by GET apps/{app}/{id}, never have a heartbeat
#    refused, and never be evicted.
# libfaketime is required (Debian: faketime/libfaketime, installed by
# ./quickstart test): without it the test fails rather than skips.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"

hk_need_faketime

FAST="-D eureka.server.enable-self-preservation=false \
-D eureka.server.eviction-interval-timer-in-ms=100"

# Start heurekad NAME with libfaketime reading the offset file FILE.
ft_start()
{
	local name=$1 file=$2
	echo "+0" >"$file"
	# shellcheck disable=SC2086
	ASAN_OPTIONS=$FT_ASAN LD_PRELOAD=$FT_LIB \
	    FAKETIME_TIMESTAMP_FILE=$file FAKETIME_NO_CACHE=1 \
	    FAKETIME_DONT_FAKE_MONOTONIC=1 hk_start "$name" $FAST
}

# Step the wall clock of the servers reading FILE to OFFSET (e.g. -1h).
ft_step()
{
	echo "$2" >"$1.tmp"
	mv "$1.tmp" "$1"
	hk_log "wall clock stepped to $2"
}

# The number of evictions node BASE counted (/metrics).
evictions()
{
	hk_curl "${1%eureka/}metrics" |
	    awk '$1 == "heureka_evictions_total" { print $2 }'
}

# Register APP/ID on BASE with a 2 s lease.
reg_short()
{
	hk_register "$1" "$2" "$3" UP 2
}

F1=$HK_ROOT/faketime-1
F2=$HK_ROOT/faketime-2
ft_start S1 "$F1"
ft_start S2 "$F2"
S1=$HK_URL_S1 S2=$HK_URL_S2
[ -n "$(evictions "$S1")" ] || fail "no heureka_evictions_total in /metrics"
BAD=""

hk_log "S1, step back 1 h: a dead instance is still evicted on time"
reg_short "$S1" SVC dead-1
cl_has "$S1" SVC dead-1 || fail "dead-1 not registered"
# The step is taken at once: dead-1 never heartbeats from here on.
ft_step "$F1" -1h
t0=$(cl_now_ms)
# A 2 s lease and 100 ms eviction runs: 10 s is a generous bound (Eureka
# doubles the lease on expiry), 3600 s is what the wall clock would say.
# The subshell keeps a failure here from hiding the second scenario.
if ( wait_until 10 hk_eq 1 evictions "$S1" ) 2>/dev/null; then
	echo "MEASURE dead instance evicted $(($(cl_now_ms) - t0)) ms after a -1 h step" >&2
	cl_has "$S1" SVC dead-1 &&
	    BAD="$BAD; dead-1 still answered after its eviction"
else
	BAD="$BAD; -1 h: a dead instance with a 2 s lease was not evicted within 10 s"
fi

hk_log "S2, step forward 1 day: a live instance is never 404 nor evicted"
# A 5 s lease here: with 2 s a client starved of CPU on a loaded CI
# machine missed its heartbeats long enough to be evicted for real.
hk_register "$S2" SVC live-1 UP 5
# A client heartbeating live-1 every 300 ms and reading it back every
# 50 ms, before and after the step (which it takes itself, 1 s in, so
# that heartbeats and reads run across it); it lasts 2 lease durations
# after the step and prints every refused heartbeat or read.
"$HK_PYTHON" - "$S2" "$F2" >"$HK_ROOT/client.out" <<'PY' || fail "the heartbeat client failed"
import http.client, os, sys, time, urllib.parse
base, ftfile = sys.argv[1], sys.argv[2]
u = urllib.parse.urlparse(base)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=5)
def req(method, path):
    c.request(method, u.path + path, headers={"Accept": "application/json"})
    r = c.getresponse()
    r.read()
    return r.status
t0 = time.monotonic()
stepped = False
last_hb = -1.0
bad = []
while True:
    t = time.monotonic() - t0
    if t >= 11.0:
        break
    if not stepped and t >= 1.0:
        open(ftfile + ".tmp", "w").write("+1d\n")
        os.replace(ftfile + ".tmp", ftfile)
        stepped = True
    when = "after" if stepped else "before"
    if t - last_hb >= 0.3:
        st = req("PUT", "apps/SVC/live-1")
        last_hb = t
        if st != 200:
            bad.append("%.2fs (%s the step) heartbeat: HTTP %d" % (t, when, st))
    st = req("GET", "apps/SVC/live-1")
    if st != 200:
        bad.append("%.2fs (%s the step) GET apps/SVC/live-1: HTTP %d" % (t, when, st))
    time.sleep(0.05)	# the client's pace: reads span the step (the behaviour)
print("\n".join(bad))
PY
hk_log "S2 wall clock stepped to +1d (by the client, 1 s in)"
if [ -n "$(tr -d '\n' <"$HK_ROOT/client.out")" ]; then
	echo "S2 refused live-1 $(grep -c . "$HK_ROOT/client.out") times while it heartbeated every 300 ms:" >&2
	head -n 10 "$HK_ROOT/client.out" >&2
	BAD="$BAD; +1 day: a live instance was answered 404"
fi
[ "$(evictions "$S2")" = 0 ] ||
    BAD="$BAD; +1 day: $(evictions "$S2") live instance(s) evicted"
cl_has "$S2" SVC live-1 || BAD="$BAD; +1 day: live-1 gone at the end"

[ -z "$BAD" ] || fail "${BAD#; }"
hk_stop S1
hk_stop S2
