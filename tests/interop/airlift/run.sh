#!/usr/bin/env bash
# tests/interop/airlift/run.sh: airlift's own discovery client
# (io.airlift:discovery 230, what Trino uses; see pom.xml) against a
# two-node heurekad cluster. Builds the Maven project (offline when ~/.m2
# has everything), then, one JVM at a time, checks:
#
#	announce      an Announcer (HttpDiscoveryAnnouncementClient) announces
#	              a service on A; HttpDiscoveryLookupClient finds it on B
#	etag-304      the lookup client's refreshes (ETag request header) get
#	              304 from heurekad, and the answer holds
#	peer-killed   A is killed (SIGKILL); announcer and lookup client, given
#	              both URLs, keep the service visible for more than twice
#	              its max age
#	unannounce    the announcer stops (SIGTERM: destroy() unannounces); the
#	              lookup client sees the type empty
#	expiry        a second announcer is killed (SIGKILL); its service
#	              disappears once its max age has passed
#
# Prints "INTEROP-SUMMARY name=airlift pass=N fail=M" last (read by
# ./quickstart) and exits non-zero when anything failed. Environment:
#	HEUREKAD       the built server (default build/server/heurekad)
#	AL_MVN_ARGS    extra Maven arguments, e.g. -Dmaven.repo.local=DIR
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../maven-lib.sh
. "$HERE/../maven-lib.sh"
: "${AL_MVN_ARGS:=}"

mvn_need airlift
# shellcheck disable=SC2086
mvn_package airlift "$HERE" $AL_MVN_ARGS

# shellcheck source=../../integration/lib.sh
. "$TOP/tests/integration/lib.sh"
# shellcheck source=../../integration/cluster-lib.sh
. "$TOP/tests/integration/cluster-lib.sh"
set +e

CP="$HERE/target/classes:$(cat "$HERE/target/classpath.txt")"
JOPTS="-Xmx192m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k"
MAXAGE=3000
PASS=0
FAILN=0
FAILED=""

result()
{
	if [ "$2" -eq 0 ]; then
		echo "--- PASS $1"
		PASS=$((PASS + 1))
	else
		echo "--- FAIL $1" >&2
		FAILN=$((FAILN + 1))
		FAILED="$FAILED $1"
	fi
}

jrun()
{
	timeout 120 java $JOPTS -cp "$CP" heureka.interop.AirliftClient "$@" \
	    2>>"$HK_ROOT/java.err"
}

# Start an announcer in the background: NAME URLS NODE; sets APID.
announcer()
{
	local log=$HK_ROOT/$1.log
	# No timeout(1) in front: signals must reach the JVM itself.
	java $JOPTS -cp "$CP" heureka.interop.AirliftClient \
	    announce "$2" "$3" trino http://10.9.9.9:8080 >"$log" 2>&1 &
	APID=$!
	hk_own "$APID"	# killed when the script ends, whatever its end
	local deadline=$(($(date +%s) + 60))
	while ! grep -q '^ANNOUNCED' "$log"; do
		if [ "$(date +%s)" -ge "$deadline" ] || ! kill -0 "$APID" 2>/dev/null; then
			echo "announcer $1 did not announce:" >&2
			tail -n 20 "$log" >&2
			return 1
		fi
		sleep 0.2
	done
	grep '^ANNOUNCED' "$log"
}

metric304()
{
	hk_curl -s "$1metrics" | awk '$1 == "heureka_http_requests_total{route=\"airlift_service\",code=\"304\"}" { print $2 }'
}

set -- $(cl_ports 2)
PA=$1 PB=$2
PEERS="http://127.0.0.1:$PA/eureka/,http://127.0.0.1:$PB/eureka/"
cl_start A "$PA" "$PEERS" -D eureka.environment=test -D heureka.airlift.max-age-ms=$MAXAGE
cl_start B "$PB" "$PEERS" -D eureka.environment=test -D heureka.airlift.max-age-ms=$MAXAGE
A=http://127.0.0.1:$PA/ B=http://127.0.0.1:$PB/

echo "=== airlift: announce"
rc=1
if announcer ann1 "${A%/},${B%/}" node-1; then
	ANN1=$APID
	jrun lookup "${B%/}" viewer-1 trino 1 30
	rc=$?
fi
result announce $rc

echo "=== airlift: etag-304"
before=$(metric304 "$B")
jrun lookup "${B%/}" viewer-2 trino 1 30 2
rc=$?
after=$(metric304 "$B")
echo "304 answers on B: ${before:-0} -> ${after:-0}"
[ "$rc" -eq 0 ] && [ "${after:-0}" -gt "${before:-0}" ] || rc=1
result etag-304 $rc

echo "=== airlift: peer-killed"
hk_kill A
# Over 2 x max age: the lease lives only if the announcer moved to B.
jrun lookup "${A%/},${B%/}" viewer-3 trino 1 30 $((2 * MAXAGE / 1000 + 2))
result peer-killed $?

echo "=== airlift: unannounce"
rc=1
if [ -n "${ANN1:-}" ]; then
	kill -TERM "$ANN1"
	wait "$ANN1" 2>/dev/null
	hk_disown "$ANN1"
	grep -q '^UNANNOUNCED' "$HK_ROOT/ann1.log" &&
	    jrun lookup "${B%/}" viewer-4 trino 0 5
	rc=$?
fi
result unannounce $rc

echo "=== airlift: expiry"
rc=1
if announcer ann2 "${B%/}" node-2; then
	jrun lookup "${B%/}" viewer-5 trino 1 30 && {
		kill -9 "$APID"
		wait "$APID" 2>/dev/null
		hk_disown "$APID"
		t0=$(date +%s%N)
		# Gone within max age plus the eviction-free hiding margin.
		jrun lookup "${B%/}" viewer-6 trino 0 $((MAXAGE / 1000 + 10))
	}
	rc=$?
	[ "$rc" -ne 0 ] || echo "gone $(( ($(date +%s%N) - t0) / 1000000 )) ms after SIGKILL (max age $MAXAGE ms)"
fi
result expiry $rc

# heurekad must exit 0 on SIGTERM (under ASan: no leak).
kill -TERM "$HK_PID_B"
_hk_reap "$HK_PID_B"
HK_PID_B=
[ "$HK_RC" = 0 ] || { echo "heurekad B: exit $HK_RC after SIGTERM" >&2; FAILN=$((FAILN + 1)); FAILED="$FAILED stop"; }
[ -z "$FAILED" ] || echo "airlift: failed:$FAILED"
mvn_summary airlift "$PASS" "$FAILN"
[ "$FAILN" -eq 0 ]
