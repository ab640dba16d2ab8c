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
#	cl_mode NAME pass|drop|refuse   switch proxy NAME, wait until it has
#	cl_swallowed NAME          connections proxy NAME took in drop mode
#	                           that their client gave up on
#	cl_trio [args]             start A, B and C on fresh ports PA PB PC,
#	                           each with all three as PEERS; set A B C
#	cl_stats BASE EXPR         python EXPR on d = GET BASE heureka/stats
#	cl_has BASE APP ID         succeeds if GET apps/APP/ID answers 200
#	cl_same BASE...            succeeds if every node's full registry
#	                           (hk_snapshot) is identical
#	cl_rss PID                 print VmRSS of PID in kB
#	cl_bulk BASE register|heartbeat APP PREFIX N
#	                           N registrations/heartbeats over keep-alive
#	cl_now_ms                  wall clock in ms
#	cl_churn DIR PREFIX N BASE...  register N instances of CHURN on the BASEs
#	                           in turn, cancel 2 of 3 (through the same or
#	                           the next node); ids in DIR/cancelled, DIR/kept
#	cl_churned DIR N           succeeds once that churn did N instances
#	cl_drained BASE...         succeeds if no node has anything queued for
#	                           or in flight to any peer
#	cl_settle SECS BASE...     wait until drained, then until every node
#	                           finished CL_SETTLE_ROUNDS anti-entropy rounds
#	                           with every peer, then until drained again
#	cl_norm BASE               cl_same's normalised full fetch of BASE
#	cl_converged SECS BASE...  cl_settle, then wait for identical fetches;
#	                           print the diff of the fetches on failure
#	cl_peer BASE PORT FIELD    print FIELD of BASE's stats for its peer on PORT
#	cl_none BASE APP FILE      fail naming each id of FILE (one a line)
#	                           that BASE's full fetch holds in APP
#	cl_all BASE APP FILE       fail naming each id of FILE that BASE's
#	                           full fetch lacks in APP
#	cl_churn_checked SECS DIR BASE...
#	                           after cl_churn DIR: cl_converged, then no
#	                           cancelled instance and every kept one on
#	                           every BASE
#	cl_https DIR               run the cluster over https with mutual TLS:
#	                           etc/heurekad-secure.yml with the test
#	                           certificates of DIR (tls-lib.sh); nodes,
#	                           curl and CL_SCHEME then speak https
#
# Every process started here is stopped by PID at exit (lib.sh's hk_own).

: "${CL_FAST:=-D eureka.server.anti-entropy-interval-ms=500 \
-D eureka.server.wait-time-in-ms-when-sync-empty=20000 \
-D eureka.client.eureka-server-read-timeout-seconds=1 \
-D eureka.server.enable-self-preservation=false}"
CL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CL_SCHEME=http
CL_TLS_ARGS=""

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

# Start A, B and C on three fresh ports (set in PA, PB and PC), each with
# the peer list of all three (set in PEERS: $CL_SCHEME URLs, with
# CL_PEER_AUTH, "user:password@", in each when set) and ARGS; set A, B
# and C to their base URLs.
cl_trio()
{
	local ports
	ports=$(cl_ports 3)
	# shellcheck disable=SC2086
	set -- $ports "$@"
	PA=$1 PB=$2 PC=$3
	shift 3
	PEERS="$CL_SCHEME://${CL_PEER_AUTH:-}127.0.0.1:$PA/eureka/,$CL_SCHEME://${CL_PEER_AUTH:-}127.0.0.1:$PB/eureka/,$CL_SCHEME://${CL_PEER_AUTH:-}127.0.0.1:$PC/eureka/"
	cl_start A "$PA" "$PEERS" "$@"
	cl_start B "$PB" "$PEERS" "$@"
	cl_start C "$PC" "$PEERS" "$@"
	A=$HK_URL_A B=$HK_URL_B C=$HK_URL_C
}

# Start heurekad NAME on PORT with peer list PEERS and compressed timings.
cl_start()
{
	local name=$1 port=$2 peers=$3
	shift 3
	# shellcheck disable=SC2086
	hk_start "$name" $CL_TLS_ARGS -p "$port" --peers "$peers" $CL_FAST "$@"
}

# Make the cluster speak https with mutual TLS: the hardened example
# configuration, the certificates of DIR (made by hk_tls_certs) in place
# of its paths; curl presents the peer certificate too.
cl_https()
{
	local d=$1
	CL_SCHEME=https
	HK_SCHEME=https
	HK_CURL_TLS=(--cacert "$d/ca.pem" --cert "$d/peer.pem" --key "$d/peer.key")
	printf 'client-pw\n' >"$d/user.pw"
	printf 'peer-pw\n' >"$d/peer.pw"
	CL_TLS_ARGS="-c $CL_DIR/../../etc/heurekad-secure.yml \
-D heureka.security.user.password-file=$d/user.pw \
-D heureka.security.peer.password-file=$d/peer.pw \
-D server.ssl.certificate=$d/peer.pem \
-D server.ssl.certificate-private-key=$d/peer.key \
-D server.ssl.trust-certificate=$d/ca.pem \
-D heureka.peer.ssl.certificate=$d/peer.pem \
-D heureka.peer.ssl.certificate-private-key=$d/peer.key \
-D heureka.peer.ssl.trust-certificate=$d/ca.pem"
}

# Start a fault proxy named NAME forwarding to 127.0.0.1:TARGETPORT.
cl_proxy()
{
	local name=$1 target=$2 pf ctl
	pf=$HK_ROOT/proxy-$name.port
	ctl=$HK_ROOT/proxy-$name.ctl
	echo pass >"$ctl"
	"$HK_PYTHON" "$CL_DIR/faultproxy.py" --target "127.0.0.1:$target" \
	    --listen "${3:-0}" --port-file "$pf" --control "$ctl" \
	    --state "$HK_ROOT/proxy-$name.state" \
	    2>>"$HK_ROOT/proxy-$name.log" &
	hk_own $!
	wait_until 5 test -s "$pf"
	eval "CL_PPORT_$name=$(tr -dc 0-9 <"$pf")"
}

# The mode proxy NAME has in force.
_cl_proxy_mode()
{
	head -n 1 "$HK_ROOT/proxy-$1.state"
}

# Switch proxy NAME to MODE; return once the proxy has switched.
cl_mode()
{
	echo "$2" >"$HK_ROOT/proxy-$1.ctl"
	wait_until 5 hk_eq "$2" _cl_proxy_mode "$1"
	hk_log "proxy $1: $2"
}

# How many connections proxy NAME took in drop mode and their client
# closed unanswered.
cl_swallowed()
{
	sed -n 's/^swallowed //p' "$HK_ROOT/proxy-$1.state"
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
import hkfixture
base, what, app, prefix, n = sys.argv[1:6]
u = urllib.parse.urlparse(base)
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
now = int(time.time() * 1000)
for i in range(int(n)):
    iid = "%s-%d" % (prefix, i)
    if what == "register":
        body = json.dumps({"instance": hkfixture.instance(app, iid,
                                                          dirty=now)})
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
import hkfixture
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
    body = json.dumps({"instance": hkfixture.minimal(
        app, iid, host=iid, ip="10.0.0.2", port={"$": 80, "@enabled": "true"},
        vipAddress=app.lower(), lastDirtyTimestamp=str(now))})
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

# Churn: register N instances PREFIX-i of app CHURN (lastDirtyTimestamp now), in
# turn on each BASE given, and cancel two of every three again: one
# through the node it was registered on, one through the next node (which
# is first polled until it holds the instance, as a client failing over
# would find it). With two nodes, cancels therefore cross in both
# directions. Writes the ids cancelled to DIR/cancelled and those left
# registered to DIR/kept, and after each instance the number done so far
# to DIR/progress (for a churn run in the background). Everything
# replicates through the nodes' own peer queues.
cl_churn()
{
	local dir=$1 prefix=$2 n=$3
	shift 3
	"$HK_PYTHON" - "$dir" "$prefix" "$n" "$@" <<'PY' || fail "cl_churn $*"
import http.client, json, os, sys, time, urllib.parse
import hkfixture
d, prefix, n, bases = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
def conn(base):
    u = urllib.parse.urlparse(base)
    return [u.hostname, u.port, u.path, None]
def req(c, method, path, body=None, hdr={}):
    for attempt in range(2):
        if c[3] is None:
            c[3] = http.client.HTTPConnection(c[0], c[1], timeout=5)
        try:
            c[3].request(method, c[2] + path, body, hdr)
            r = c[3].getresponse()
            r.read()
            return r.status
        except (OSError, http.client.HTTPException):
            c[3].close()
            c[3] = None
    sys.exit("%s %s: no answer" % (method, path))
def progress(k):
    open(d + "/progress.tmp", "w").write("%d\n" % k)
    os.replace(d + "/progress.tmp", d + "/progress")
cs = [conn(b) for b in bases]
cancelled, kept = [], []
for i in range(n):
    iid = "%s-%d" % (prefix, i)
    now = int(time.time() * 1000)
    body = json.dumps({"instance": hkfixture.instance(
        "CHURN", iid, ip="10.1.%d.%d" % (i // 250, i % 250 + 1),
        metadata={"i": str(i)}, dirty=now)})
    st = req(cs[i % len(cs)], "POST", "apps/CHURN", body,
             {"Content-Type": "application/json"})
    if st != 204:
        sys.exit("register %s: HTTP %d" % (iid, st))
    if i % 3 == 2:
        kept.append(iid)
        progress(i + 1)
        continue
    c = cs[(i + i % 3) % len(cs)]
    # Cancel once the node shows it: a cancel of an instance the node has
    # not seen yet answers 404 but leaves a tombstone that refuses the
    # replicated register (issue 9), so it would never answer 200.
    t0 = time.monotonic()
    while req(c, "GET", "apps/CHURN/" + iid) != 200:
        if time.monotonic() - t0 > 5:
            sys.exit("cancel %s: never replicated" % iid)
        time.sleep(0.005)
    st = req(c, "DELETE", "apps/CHURN/" + iid)
    if st != 200:
        sys.exit("cancel %s: HTTP %d" % (iid, st))
    cancelled.append(iid)
    progress(i + 1)
open(d + "/cancelled", "w").write("".join(x + "\n" for x in cancelled))
open(d + "/kept", "w").write("".join(x + "\n" for x in kept))
PY
}

# Succeeds once the churn writing to DIR has done at least N instances.
cl_churned()
{
	[ "$(cat "$1/progress" 2>/dev/null || echo 0)" -ge "$2" ]
}

# Succeeds when no node has a task queued for, or a batch in flight to,
# any of its peers.
cl_drained()
{
	local b
	for b in "$@"; do
		[ "$(cl_stats "$b" 'str(sum(p["queue"] + p["inflight"] for p in d["peers"]))')" = 0 ] ||
		    return 1
	done
}

# Print the smallest anti-entropy round count over the peers of BASE.
cl_ae_min()
{
	cl_stats "$1" 'str(min(p["antiEntropy"]["rounds"] for p in d["peers"]))'
}

# Succeeds once every node BASE=COUNT of the list has a round count over
# all its peers of at least COUNT.
_cl_ae_past()
{
	local kv
	for kv in "$@"; do
		[ "$(cl_ae_min "${kv%=*}")" -ge "${kv##*=}" ] || return 1
	done
}

# Wait (at most SECS per step) until the nodes' queues are drained, then
# until each node has done CL_SETTLE_ROUNDS (default 4) more anti-entropy
# rounds with each of its peers (enough for a mismatch to be seen twice,
# pulled and the result replicated), then until drained again.
cl_settle()
{
	local secs=$1 b want=""
	shift
	wait_until "$secs" cl_drained "$@"
	for b in "$@"; do
		want="$want $b=$(($(cl_ae_min "$b") + ${CL_SETTLE_ROUNDS:-4}))"
	done
	# shellcheck disable=SC2086
	wait_until "$secs" _cl_ae_past $want
	wait_until "$secs" cl_drained "$@"
}

# The normalised full fetch of BASE that cl_same compares.
cl_norm()
{
	hk_snapshot "$1"
}

# Settle, then wait at most SECS for identical full fetches; on a timeout
# print how the fetches differ and fail.
cl_converged()
{
	local secs=$1 b i=0
	shift
	cl_settle "$secs" "$@"
	if ! ( wait_until "$secs" cl_same "$@" ) 2>/dev/null; then
		for b in "$@"; do
			i=$((i + 1))
			cl_norm "$b" >"$HK_ROOT/norm.$i"
			[ "$i" = 1 ] ||
			    diff "$HK_ROOT/norm.1" "$HK_ROOT/norm.$i" |
			    sed "s|^|node 1 vs $b: |" | head -n 40 >&2
		done
		fail "full fetches of $* still differ ${secs}s after settling"
	fi
}

# Print FIELD (python, on p) of node BASE's stats entry for its peer on PORT.
cl_peer()
{
	cl_stats "$1" "str([$3 for p in d['peers'] if ':$2/' in p['url']][0])"
}

# Print the ids of FILE (one a line) that BASE's full fetch holds in APP,
# or with a 4th argument "missing", those it does not hold.
_cl_ids()
{
	local base=$1 app=$2 file=$3 f=$HK_ROOT/ids.json
	hk_curl -o "$f" -H 'Accept: application/json' "${base}apps" ||
	    fail "GET ${base}apps failed"
	"$HK_PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))["applications"]["application"]
ids = set(l.strip() for l in open(sys.argv[3]) if l.strip())
have = set(i.get("instanceId", "") for a in d if a["name"] == sys.argv[2]
           for i in a["instance"])
print(" ".join(sorted(ids - have if sys.argv[4] == "missing" else ids & have)))
' "$f" "$app" "$file" "${4:-held}" || fail "bad registry document from $base"
}

# Fail, naming them, if BASE's full fetch holds any id of FILE in APP.
cl_none()
{
	local back
	back=$(_cl_ids "$1" "$2" "$3")
	[ -z "$back" ] ||
	    fail "$(echo "$back" | wc -w) cancelled instance(s) of $2 back on $1: $back"
}

# Fail, naming them, if BASE's full fetch lacks any id of FILE in APP.
cl_all()
{
	local miss
	miss=$(_cl_ids "$1" "$2" "$3" missing)
	[ -z "$miss" ] ||
	    fail "$(echo "$miss" | wc -w) instance(s) of $2 missing on $1: $miss"
}

# After cl_churn wrote to DIR: wait (cl_converged, SECS a step) until the
# BASEs agree, then fail if any holds a cancelled instance or lacks a kept
# one.
cl_churn_checked()
{
	local secs=$1 dir=$2 u
	shift 2
	cl_converged "$secs" "$@"
	for u in "$@"; do
		cl_none "$u" CHURN "$dir/cancelled"
		cl_all "$u" CHURN "$dir/kept"
	done
}
