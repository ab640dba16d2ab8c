#!/usr/bin/env bash
# tests/interop/java/server/run.sh: a mixed cluster of two heurekad and one
# Spring Cloud Eureka server (this folder's Maven project), each listing
# the other two as peers, run as real processes on ephemeral ports. The
# Java node listens on its own loopback address, 127.0.0.2, so that its
# same-host peer detection (it compares host names) keeps the heureka
# nodes on 127.0.0.1.
#
# Scenarios, each counted as one pass or fail:
#   - register, heartbeat, status override, its deletion, metadata and
#     cancel, made on each of the three nodes, are visible on the other
#     two within 2 s, and exactly one batch item per peer leaves the node
#     that took the write while none leaves the others (nothing loops;
#     heureka counts in GET heureka/stats, Java in GET /interop/sent, a
#     filter on its replication client), and afterwards the three hold
#     the same status, overriddenStatus, metadata and lastDirtyTimestamp;
#   - the three serve the same full registry and apps__hashcode;
#   - a heartbeat answered 404 by the peer (Java or heureka) makes the
#     sender register its copy there;
#   - a heartbeat answered 409 with the peer's newer copy makes the sender
#     adopt it (both directions);
#   - a Java server started after the heureka nodes holds their registry
#     when it first answers GET apps;
#   - a heurekad started after the Java server (the other heureka node
#     down) holds what the Java server had (heureka's GET apps/ fallback
#     for non-heureka peers).
#
# Prints "INTEROP-SUMMARY name=java-cluster pass=N fail=M" last; exits 0
# only when nothing failed. Needs java (17) and the jar built by
# `mvn -q -B package` here (built on the fly when missing).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../maven-lib.sh
. "$HERE/../../maven-lib.sh"
: "${JAVA:=java}"
: "${JAVA_SERVER_JAR:=$HERE/target/eureka-server.jar}"
: "${JAVA_START_TIMEOUT:=90}"
SETTLE=1.2	# > Java's 500 ms batching window: a looping item would show

. "$TOP/tests/integration/lib.sh"
. "$TOP/tests/integration/cluster-lib.sh"

if [ ! -f "$JAVA_SERVER_JAR" ]; then
	mvn_need java-cluster
	mvn_package java-cluster "$HERE" -DskipTests
fi

PASS=0
FAIL=0
FAILED=""

# Run scenario function FN (in a subshell, so a failure ends only it).
scenario()
{
	local name=$1 rc=0
	shift
	hk_log "scenario: $name"
	("$@") || rc=$?
	if [ "$rc" -eq 0 ]; then
		PASS=$((PASS + 1))
		echo "PASS: $name"
	else
		FAIL=$((FAIL + 1))
		FAILED="$FAILED $name"
		echo "FAIL: $name"
	fi
}

set -- $(cl_ports 3)
P1=$1 P2=$2 PJ=$3
H1=http://127.0.0.1:$P1/eureka/
H2=http://127.0.0.1:$P2/eureka/
J=http://127.0.0.2:$PJ/eureka/
JROOT=http://127.0.0.2:$PJ/
PEERS="$H1,$H2,$J"
# Anti-entropy off between the heureka nodes: replication alone is
# measured (Java has none).
# A JVM on a loaded machine answers a batch later than Spring's 200 ms
# replication timeout now and then, and a retried batch would count
# twice: both sides get Netflix's 5 s (application.properties for Java).
HKARGS="-D eureka.server.anti-entropy-interval-ms=0 \
-D eureka.server.peer-node-read-timeout-ms=5000 \
-D eureka.client.eureka-server-read-timeout-seconds=10"

# Start the Java server (as lib.sh's server "java", so its log is shown
# and it is killed at exit) and wait until it is open: its start-up sync
# done ("Started Eureka Server" logged; it answers reads earlier, and a
# sync still retrying would register what its client fetched meanwhile)
# and GET apps answering 200. Leaves that answer in
# $HK_ROOT/java-first-apps.json.
java_start()
{
	local pid deadline code opened
	opened=$(grep -c "Started Eureka Server" "$HK_ROOT/java.log" \
	    2>/dev/null || true)
	echo "=== java server on 127.0.0.2:$PJ" >>"$HK_ROOT/java.log"
	"$JAVA" -XX:+UseSerialGC -Xms64m -Xmx384m -XX:TieredStopAtLevel=1 \
	    -Xshare:auto -jar "$JAVA_SERVER_JAR" \
	    --server.address=127.0.0.2 --server.port="$PJ" \
	    --eureka.instance.hostname=127.0.0.2 \
	    --eureka.client.service-url.defaultZone="$H1,$H2,$J" \
	    </dev/null >>"$HK_ROOT/java.log" 2>&1 &
	pid=$!
	HK_PID_java=$pid
	case " $HK_NAMES " in *" java "*) ;; *) HK_NAMES="$HK_NAMES java" ;; esac
	deadline=$(($(date +%s) + JAVA_START_TIMEOUT))
	while :; do
		[ "$(_hk_exited "$pid")" = 0 ] ||
		    fail "the Java server exited during start-up"
		code=""
		if [ "$(grep -c "Started Eureka Server" "$HK_ROOT/java.log" ||
		    true)" -gt "${opened:-0}" ]; then
			code=$(hk_curl -o "$HK_ROOT/java-first-apps.json" \
			    -w '%{http_code}' --max-time 2 \
			    -H 'Accept: application/json' "${J}apps" \
			    2>/dev/null) || true
		fi
		[ "$code" = 200 ] && break
		[ "$(date +%s)" -lt "$deadline" ] ||
		    fail "the Java server did not open within ${JAVA_START_TIMEOUT}s"
		sleep 0.2
	done
	hk_log "started java (pid $pid) on 127.0.0.2:$PJ"
}

# Stop the Java server with SIGTERM (bounded by lib.sh's stop timeout).
java_stop()
{
	kill -TERM "$HK_PID_java" 2>/dev/null || true
	_hk_reap "$HK_PID_java"
	HK_PID_java=
	hk_log "stopped java (status $HK_RC)"
}

# Batch items node BASE has sent so far (heureka: heureka/stats; the Java
# node: the sum over its /interop/sent).
items()
{
	local f=$HK_ROOT/items.json
	if [ "$1" = "$J" ]; then
		hk_curl -o "$f" "${JROOT}interop/sent" || fail "GET interop/sent"
		hk_json 'str(sum(p.get("items", 0) for p in d.values()))' "$f"
	else
		cl_stats "$1" 'str(d["itemsSent"])'
	fi
}

# "i1 i2 ij": the items sent by H1, H2 and J.
items3()
{
	echo "$(items "$H1") $(items "$H2") $(items "$J")"
}

# Wait until the three counters equal WANT ("n1 n2 nj"), let any looping
# item show up, and fail unless they still do.
items_are()
{
	wait_until 5 hk_eq "$1" items3
	sleep "$SETTLE"
	assert_eq "$1" "$(items3)" "batch items sent by H1 H2 J"
}

# Add "d1 d2 dj" to "n1 n2 nj".
items_plus()
{
	local a b
	read -r -a a <<<"$1"
	read -r -a b <<<"$2"
	echo "$((a[0] + b[0])) $((a[1] + b[1])) $((a[2] + b[2]))"
}

# Python EXPR over the instance APP/ID as node BASE serves it (i bound to
# the instance object; either spelling of overriddenStatus as "ovr").
field()
{
	local f=$HK_ROOT/field.$$.json code
	code=$(hk_curl -o "$f" -w '%{http_code}' -H 'Accept: application/json' \
	    "${1}apps/$2/$3") || return 1
	[ "$code" = 200 ] || { echo "HTTP $code"; return 0; }
	"$HK_PYTHON" -c '
import json, sys
i = json.load(open(sys.argv[1]))["instance"]
ovr = i.get("overriddenStatus", i.get("overriddenstatus", ""))
v = eval(sys.argv[2])
print(v if isinstance(v, str) else json.dumps(v))
' "$f" "$4"
}

# HTTP status of GET apps/APP/ID on BASE.
code_of()
{
	hk_curl -o /dev/null -w '%{http_code}' -H 'Accept: application/json' \
	    "${1}apps/$2/$3"
}

# Instances of APP on BASE (0 when it has none).
count_app()
{
	local f=$HK_ROOT/app.$$.json code
	code=$(hk_curl -o "$f" -w '%{http_code}' -H 'Accept: application/json' \
	    "${1}apps/$2") || return 1
	[ "$code" = 200 ] || { echo 0; return 0; }
	hk_json 'str(len(d["application"]["instance"]))' "$f"
}

# H1, H2 or J for node BASE.
name_of()
{
	case "$1" in "$H1") echo H1 ;; "$H2") echo H2 ;; *) echo J ;; esac
}

# The two nodes other than BASE.
others()
{
	case "$1" in
	"$H1") echo "$H2 $J" ;;
	"$H2") echo "$H1 $J" ;;
	*) echo "$H1 $H2" ;;
	esac
}

# "2 0 0", "0 2 0" or "0 0 2": two items from the node BASE.
two_from()
{
	case "$1" in
	"$H1") echo "${2:-2} 0 0" ;;
	"$H2") echo "0 ${2:-2} 0" ;;
	*) echo "0 0 ${2:-2}" ;;
	esac
}

# Register APP/ID on BASE; with "repl" as 4th argument as a peer would
# (x-netflix-discovery-replication: true), so BASE does not pass it on.
# Optional 5th: lastDirtyTimestamp, 6th: a metadata "marker" value.
reg()
{
	local base=$1 app=$2 id=$3 mode=${4:-} dirty=${5:-} marker=${6:-none}
	local f=$HK_ROOT/reg.json
	hk_instance_json "$app" "$id" >"$f"
	"$HK_PYTHON" - "$f" "$dirty" "$marker" <<'PY'
import json, sys
f, dirty, marker = sys.argv[1:4]
d = json.load(open(f))
if dirty:
    d["instance"]["lastDirtyTimestamp"] = dirty
    d["instance"]["lastUpdatedTimestamp"] = dirty
d["instance"]["metadata"]["marker"] = marker
json.dump(d, open(f, "w"))
PY
	if [ "$mode" = repl ]; then
		assert_http 204 POST "${base}apps/$app" \
		    -H 'Content-Type: application/json' \
		    -H 'x-netflix-discovery-replication: true' --data-binary @"$f"
	else
		assert_http 204 POST "${base}apps/$app" \
		    -H 'Content-Type: application/json' --data-binary @"$f"
	fi
}

# One write of writes_from is done (its o, id and base): exactly one item
# for each other node left o and none left the others; unless the write
# was the cancel, all three nodes then hold the same copy of MIX/id.
wrote()
{
	base=$(items_plus "$base" "$(two_from "$o")")
	items_are "$base"
	[ "$1" = cancel ] || converged MIX "$id"
	hk_log "$1 from $o: ok"
}

# The cancel of MIX/id on o (the caller's o, id and base): gone from the
# two others, exactly one item for each left o.
cancel_from()
{
	local u
	assert_http 200 DELETE "${o}apps/MIX/$id"
	for u in $(others "$o"); do
		wait_until 2 hk_eq 404 code_of "$u" MIX "$id"
	done
	wrote cancel
}

# Every kind of write, made on node O, reaches the two others; exactly
# two items leave O for each and none leaves the others.
writes_from()
{
	local o=$1 id=$2 base u t0
	base=$(items3)

	t0=$(cl_now_ms)
	reg "$o" MIX "$id"
	for u in $(others "$o"); do
		wait_until 2 hk_eq 200 code_of "$u" MIX "$id"
	done
	echo "register on $(name_of "$o") visible on both others after $(($(cl_now_ms) - t0)) ms"
	wrote "register"

	for u in $(others "$o"); do
		eval "t0_${u//[^0-9]/_}=$(field "$u" MIX "$id" 'str(i["leaseInfo"]["lastRenewalTimestamp"])')"
	done
	# The renewal stamps above predate this moment: let the clock (ms)
	# pass it, so that the heartbeat's stamp differs.
	wait_until 5 hk_clock_past "$(date +%s%3N)"
	assert_http 200 PUT "${o}apps/MIX/$id"
	for u in $(others "$o"); do
		eval "t0=\$t0_${u//[^0-9]/_}"
		wait_until 2 renewed_after "$u" MIX "$id" "$t0"
	done
	wrote "heartbeat"

	assert_http 200 PUT "${o}apps/MIX/$id/status?value=OUT_OF_SERVICE"
	for u in $(others "$o"); do
		wait_until 2 hk_eq "OUT_OF_SERVICE OUT_OF_SERVICE" \
		    field "$u" MIX "$id" 'i["status"] + " " + ovr'
	done
	wrote "status override"

	assert_http 200 DELETE "${o}apps/MIX/$id/status?value=UP"
	for u in $(others "$o"); do
		wait_until 2 hk_eq "UP UNKNOWN" \
		    field "$u" MIX "$id" 'i["status"] + " " + ovr'
	done
	wrote "override deletion"

	assert_http 200 PUT "${o}apps/MIX/$id/metadata?color=blue"
	for u in $(others "$o"); do
		wait_until 2 hk_eq blue field "$u" MIX "$id" \
		    'i.get("metadata", {}).get("color", "")'
	done
	wrote "metadata"

	cancel_from
}

# The replicated state of APP/ID on BASE, one line.
state()
{
	field "$1" "$2" "$3" 'json.dumps([i["status"], ovr, i.get("metadata"),
	    str(i.get("lastDirtyTimestamp")), i["hostName"], i["ipAddr"],
	    i["leaseInfo"]["durationInSecs"]], sort_keys=True)'
}

# Do the three nodes hold the same replicated state of APP/ID?
same3()
{
	local a b c
	a=$(state "$H1" "$2" "$3")
	b=$(state "$H2" "$2" "$3")
	c=$(state "$J" "$2" "$3")
	[ "$a" = "$b" ] && [ "$b" = "$c" ] && return 0
	[ "${1:-}" = quiet ] || printf 'H1 %s\nH2 %s\nJ  %s\n' "$a" "$b" "$c" >&2
	return 1
}

# Fail unless the three nodes converge on the same state of APP/ID.
converged()
{
	if ! (wait_until 2 same3 quiet "$1" "$2") 2>/dev/null; then
		same3 loud "$1" "$2" || true
		fail "$1/$2 differs between the nodes"
	fi
}

# Canonical full registry of BASE (hk_snapshot, with the hashcode).
snap()
{
	hk_snapshot "$1"
}

# Do the three full registries (and their apps__hashcode) agree?
snap3()
{
	local a b c
	a=$(snap "$H1") b=$(snap "$H2") c=$(snap "$J")
	[ "$a" = "$b" ] && [ "$b" = "$c" ] && return 0
	[ "${1:-}" = quiet ] || printf '== H1\n%s\n== H2\n%s\n== J\n%s\n' \
	    "$a" "$b" "$c" >&2
	return 1
}

# Instances in several states, written on different nodes: every node
# serves the same full registry with the same apps__hashcode (what a
# client's delta reconciliation compares).
full_registry()
{
	reg "$H1" FULL f-1
	reg "$J" FULL f-2
	reg "$H2" OTHER f-3
	reg "$J" OTHER f-4
	wait_until 3 hk_eq 2 count_app "$H1" OTHER
	assert_http 200 PUT "${J}apps/FULL/f-1/status?value=OUT_OF_SERVICE"
	assert_http 200 PUT "${H2}apps/OTHER/f-4/status?value=DOWN"
	assert_http 200 PUT "${H1}apps/FULL/f-2/metadata?k=v"
	if ! (wait_until 3 snap3 quiet) 2>/dev/null; then
		snap3 loud || true
		fail "the full registries differ"
	fi
	for i in FULL/f-1 FULL/f-2 OTHER/f-3 OTHER/f-4; do
		assert_http 200 DELETE "${H1}apps/$i"
	done
	for u in "$H1" "$H2" "$J"; do
		wait_until 3 hk_eq 0 count_app "$u" FULL
		wait_until 3 hk_eq 0 count_app "$u" OTHER
	done
}

# Has APP/ID's lease on BASE been renewed after T0 (ms)?
renewed_after()
{
	local t
	t=$(field "$1" "$2" "$3" 'str(i["leaseInfo"]["lastRenewalTimestamp"])')
	[ -n "$t" ] && [ "$t" -gt "$4" ] 2>/dev/null
}

# A heartbeat on O for an instance only O holds is answered 404 by both
# peers, and O registers its copy there (Java: PeerEurekaNode's heartbeat
# task; heureka: server/core/peerq.c, the same rule).
heartbeat_404_from()
{
	local o=$1 id=$2 base u
	base=$(items3)
	reg "$o" MIX "$id" repl
	for u in $(others "$o"); do
		assert_eq 404 "$(code_of "$u" MIX "$id")" "$id on $u before"
	done
	assert_http 200 PUT "${o}apps/MIX/$id"
	for u in $(others "$o"); do
		wait_until 2 hk_eq 200 code_of "$u" MIX "$id"
	done
	# two heartbeats, then two registers
	base=$(items_plus "$base" "$(two_from "$o" 4)")
	items_are "$base"
	cancel_from
}

# A heartbeat from O carrying an older lastDirtyTimestamp than peer P's
# copy is answered 409 with P's copy, which O adopts (as a replicated
# write: nothing more is sent).
heartbeat_409()
{
	local o=$1 p=$2 id=$3 base now newer
	base=$(items3)
	now=$(date +%s%3N)
	reg "$o" MIX "$id" "" "$now" "$o"
	for u in $(others "$o"); do
		wait_until 2 hk_eq "$o" field "$u" MIX "$id" \
		    'i["metadata"]["marker"]'
	done
	base=$(items_plus "$base" "$(two_from "$o")")
	items_are "$base"
	newer=$((now + 1000))
	reg "$p" MIX "$id" repl "$newer" "$p"
	assert_http 200 PUT "${o}apps/MIX/$id"
	wait_until 2 hk_eq "$p $newer" field "$o" MIX "$id" \
	    'i["metadata"]["marker"] + " " + str(i["lastDirtyTimestamp"])'
	base=$(items_plus "$base" "$(two_from "$o")")
	items_are "$base"
	cancel_from
}

# Check that the Java server, restarted while the heureka nodes held an
# instance it never saw replicated (late-j), held it when it first
# answered GET apps.
java_held_registry()
{
	"$HK_PYTHON" - "$HK_ROOT/java-first-apps.json" <<'PY' ||
import json, sys
d = json.load(open(sys.argv[1]))["applications"]
ids = [i["instanceId"] for a in d.get("application", []) for i in a["instance"]]
sys.exit(0 if "late-j" in ids else "late-j not in the first registry: %s" % ids)
PY
	    fail "the Java server opened without the heureka nodes' registry"
}

# Check that H2, restarted while H1 was down and only the Java server held
# an instance (late-h), holds it once it serves reads, copied from the
# Java peer.
heureka_synced()
{
	local n
	wait_until 5 hk_eq true cl_stats "$H2" 'str(d["ready"]).lower()'
	assert_eq 200 "$(code_of "$H2" MIX late-h)" "late-h on the new H2"
	n=$(grep -c "start-up sync: [1-9][0-9]* instance(s) from $J" \
	    "$HK_ROOT/H2.log" || true)
	[ "$n" -ge 1 ] || fail "H2 did not sync from the Java peer"
}

# The peers of the Java server, "host:port" sorted.
java_peers()
{
	hk_curl "${JROOT}interop/peers" | "$HK_PYTHON" -c '
import json, sys, urllib.parse
print(" ".join(sorted(urllib.parse.urlparse(u).netloc for u in json.load(sys.stdin))))'
}

cl_start H1 "$P1" "$PEERS" $HKARGS
cl_start H2 "$P2" "$PEERS" $HKARGS
java_start

# Warm the Java server's replication paths up (a cold JVM answers its
# first batches slowly): one instance through every node, then the
# counters must come to rest (a loop never does) before the scenarios
# take their baselines.
warm_up()
{
	local u warm="" i=0
	for u in "$H1" "$H2" "$J"; do
		reg "$u" WARM "warm-${u//[^0-9]/}"
	done
	for u in "$H1" "$H2" "$J"; do
		wait_until 10 hk_eq 3 count_app "$u" WARM
	done
	for u in "$H1" "$H2" "$J"; do
		assert_http 200 DELETE "${u}apps/WARM/warm-${u//[^0-9]/}"
	done
	for u in "$H1" "$H2" "$J"; do
		wait_until 10 hk_eq 0 count_app "$u" WARM
	done
	until [ "$warm" = "$(items3)" ]; do
		i=$((i + 1))
		[ "$i" -le 10 ] || fail "batch items never come to rest: $(items3)"
		warm=$(items3)
		sleep "$SETTLE"
	done
}

scenario "warm-up: replication comes to rest" warm_up
scenario "peers see each other" eval '
	assert_eq 2 "$(cl_stats "$H1" "len(d[\"peers\"])")" "peers of H1";
	assert_eq 2 "$(cl_stats "$H2" "len(d[\"peers\"])")" "peers of H2";
	want=$(printf "127.0.0.1:%s\n" "$P1" "$P2" | sort | tr "\n" " ");
	wait_until 10 hk_eq "${want% }" java_peers'
for o in H1 H2 J; do
	eval "u=\$$o"
	scenario "writes from $o (register heartbeat override delete-override metadata cancel)" \
	    writes_from "$u" "w-$o"
done
scenario "heartbeat 404 from Java peer: heureka registers there" \
    heartbeat_404_from "$H1" nf-h1
scenario "heartbeat 404 from heureka peers: Java registers there" \
    heartbeat_404_from "$J" nf-j
scenario "heartbeat 409 from Java peer: heureka adopts its copy" \
    heartbeat_409 "$H1" "$J" cf-h1
scenario "heartbeat 409 from heureka peer: Java adopts its copy" \
    heartbeat_409 "$J" "$H1" cf-j
scenario "same full registry and apps__hashcode on every node" full_registry

# Restarts run here, not in a scenario's subshell, so the PIDs stay known.
java_stop
reg "$H1" MIX late-j repl
reg "$H2" MIX late-j repl
java_start
scenario "Java started after heureka holds their registry" java_held_registry
# Both heureka nodes stop, so that the Java server is the one peer H2 can
# sync from (like Java's, heureka's start-up sync takes one peer's copy).
hk_stop H2
hk_stop H1
reg "$J" MIX late-h repl
cl_start H2 "$P2" "$PEERS" $HKARGS
scenario "heureka started after Java syncs from it" heureka_synced

if [ -n "${INTEROP_KEEP_LOGS:-}" ]; then
	mkdir -p "$INTEROP_KEEP_LOGS" && cp "$HK_ROOT"/*.log "$INTEROP_KEEP_LOGS"/
fi
mvn_summary java-cluster "$PASS" "$FAIL"
[ "$FAIL" -eq 0 ] || { echo "failed:$FAILED" >&2; exit 1; }
