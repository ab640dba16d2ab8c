# tests/integration/cluster-lib.sh: helpers for the cluster tests (30-39),
# on top of lib.sh. Source it after lib.sh:
#
#	. "$(dirname "$0")/lib.sh"
#	. "$(dirname "$0")/cluster-lib.sh"
#
#	cl_ports N                 print N free TCP ports on 127.0.0.1
#	cl_start NAME PORT PEERS [args]
#	                           hk_start NAME on a fixed PORT with the peer
#	                           list PEERS and the compressed timings $CL_FAST
#	cl_proxy NAME TARGETPORT   start faultproxy.py in front of TARGETPORT;
#	                           sets CL_PPORT_NAME (its port); killed at exit
#	cl_mode NAME pass|drop|refuse   switch proxy NAME
#	cl_stats BASE EXPR         python EXPR on d = GET BASE heureka/stats
#	cl_has BASE APP ID         succeeds if GET apps/APP/ID answers 200
#	cl_same BASE...            succeeds if every node's full registry
#	                           (hk_snapshot) is identical
#	cl_rss PID                 print VmRSS of PID in kB
#	cl_bulk BASE register|heartbeat APP PREFIX N
#	                           N registrations/heartbeats over keep-alive
#	cl_now_ms                  wall clock in ms
#
# Every process started here is stopped by PID at exit.

: "${CL_FAST:=-D eureka.server.anti-entropy-interval-ms=500 \
-D eureka.server.wait-time-in-ms-when-sync-empty=20000 \
-D eureka.client.eureka-server-read-timeout-seconds=1 \
-D eureka.server.enable-self-preservation=false}"
CL_PROXY_PIDS=""
CL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Stop the proxies, then run lib.sh's cleanup with the script's status.
_cl_cleanup()
{
	local rc=$? pid
	for pid in $CL_PROXY_PIDS; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	# _hk_cleanup reads $? and exits: call it once with the status.
	(exit "$rc") && _hk_cleanup || _hk_cleanup
}
trap _cl_cleanup EXIT

# Wall clock, ms.
cl_now_ms()
{
	echo $(($(date +%s%N) / 1000000))
}

# N free ports (bound then released; the tests start at once after).
cl_ports()
{
	"$HK_PYTHON" -c '
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
' "$1"
}

# Start heurekad NAME on PORT with peer list PEERS and compressed timings.
cl_start()
{
	local name=$1 port=$2 peers=$3
	shift 3
	# shellcheck disable=SC2086
	hk_start "$name" -p "$port" --peers "$peers" $CL_FAST "$@"
}

# Start a fault proxy named NAME forwarding to 127.0.0.1:TARGETPORT.
cl_proxy()
{
	local name=$1 target=$2 pf ctl i
	pf=$HK_ROOT/proxy-$name.port
	ctl=$HK_ROOT/proxy-$name.ctl
	echo pass >"$ctl"
	"$HK_PYTHON" "$CL_DIR/faultproxy.py" --target "127.0.0.1:$target" \
	    --listen "${3:-0}" --port-file "$pf" --control "$ctl" \
	    2>>"$HK_ROOT/proxy-$name.log" &
	CL_PROXY_PIDS="$CL_PROXY_PIDS $!"
	for i in $(seq 100); do
		[ -s "$pf" ] && break
		sleep 0.05
	done
	[ -s "$pf" ] || fail "faultproxy $name did not start"
	eval "CL_PPORT_$name=$(tr -dc 0-9 <"$pf")"
}

# Switch proxy NAME to MODE and give it time to notice.
cl_mode()
{
	echo "$2" >"$HK_ROOT/proxy-$1.ctl"
	sleep 0.2
	hk_log "proxy $1: $2"
}

# Evaluate python EXPR over the stats document of node BASE.
cl_stats()
{
	local f=$HK_ROOT/stats.json
	hk_curl -o "$f" "${1}heureka/stats" || fail "GET ${1}heureka/stats"
	hk_json "$2" "$f"
}

# Does node BASE hold APP/ID?
cl_has()
{
	[ "$(hk_curl -o /dev/null -w '%{http_code}' \
	    -H 'Accept: application/json' "${1}apps/$2/$3")" = 200 ]
}

# Field FIELD of instance APP/ID on node BASE.
cl_field()
{
	hk_curl -H 'Accept: application/json' "${1}apps/$2/$3" |
	    "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["instance"].get(sys.argv[1], ""))' "$4"
}

# Are the full registries of all given nodes identical?
cl_same()
{
	local first="" s b
	for b in "$@"; do
		s=$(hk_snapshot "$b") || return 1
		if [ -z "$first" ]; then
			first=$s
		elif [ "$s" != "$first" ]; then
			return 1
		fi
	done
	return 0
}

# Resident set size of PID in kB.
cl_rss()
{
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# N registrations (or heartbeats) of APP/PREFIX-i on BASE over keep-alive.
cl_bulk()
{
	"$HK_PYTHON" - "$@" <<'PY' || fail "cl_bulk $*"
import http.client, json, sys, time, urllib.parse
base, what, app, prefix, n = sys.argv[1:6]
u = urllib.parse.urlparse(base)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
now = int(time.time() * 1000)
for i in range(int(n)):
    iid = "%s-%d" % (prefix, i)
    if what == "register":
        body = json.dumps({"instance": {
            "instanceId": iid, "hostName": iid + ".example", "app": app,
            "ipAddr": "10.0.0.1", "status": "UP",
            "port": {"$": 8080, "@enabled": "true"},
            "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo", "name": "MyOwn"},
            "leaseInfo": {"renewalIntervalInSecs": 30, "durationInSecs": 90},
            "vipAddress": app.lower(), "lastDirtyTimestamp": str(now)}})
        c.request("POST", u.path + "apps/" + app, body,
                  {"Content-Type": "application/json"})
        want = 204
    else:
        c.request("PUT", u.path + "apps/%s/%s" % (app, iid))
        want = 200
    r = c.getresponse()
    r.read()
    if r.status != want:
        sys.exit("%s %s: HTTP %d" % (what, iid, r.status))
PY
}

# Register N instances of APP on SRC one by one and print how long each
# took to be visible on every DST (in one process, so the numbers are not
# process start-up): "mean M ms, worst W ms".
cl_measure_register()
{
	"$HK_PYTHON" - "$@" <<'PY' || fail "cl_measure_register $*"
import http.client, json, sys, time, urllib.parse
src, app, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
dsts = sys.argv[4:]
def conn(base):
    u = urllib.parse.urlparse(base)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=5), u.path
cs, sp = conn(src)
ds = [conn(d) for d in dsts]
times = []
for i in range(n):
    iid = "m-%d" % i
    now = int(time.time() * 1000)
    body = json.dumps({"instance": {
        "instanceId": iid, "hostName": iid, "app": app, "ipAddr": "10.0.0.2",
        "status": "UP", "port": {"$": 80, "@enabled": "true"},
        "dataCenterInfo": {"@class": "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo", "name": "MyOwn"},
        "vipAddress": app.lower(), "lastDirtyTimestamp": str(now)}})
    t0 = time.monotonic()
    cs.request("POST", sp + "apps/" + app, body, {"Content-Type": "application/json"})
    r = cs.getresponse(); r.read()
    for c, p in ds:
        while True:
            c.request("GET", p + "apps/%s/%s" % (app, iid))
            r = c.getresponse(); r.read()
            if r.status == 200:
                break
            if time.monotonic() - t0 > 5:
                sys.exit("not replicated within 5 s")
            time.sleep(0.002)
    times.append((time.monotonic() - t0) * 1000)
print("mean %.1f ms, worst %.1f ms" % (sum(times) / len(times), max(times)))
PY
}

# Does the output of CMD... equal WANT? For wait_until, which must re-run
# the command on every poll (a "$(...)" argument is evaluated only once).
cl_eq()
{
	local want=$1
	shift
	[ "$("$@")" = "$want" ]
}
