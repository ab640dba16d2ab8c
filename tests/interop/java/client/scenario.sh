#!/usr/bin/env bash
# scenario.sh NAME: one scenario of the Java client interop tests, run by
# run.sh (which builds the jar first). Exits 0 when it passed. NAME is one of
#
#	spring            Spring Boot + spring-cloud-starter-netflix-eureka-client
#	netflix-json      the Netflix DiscoveryClient, default codec (Jackson)
#	netflix-xstream   ... XStream's JSON codec (encoderName/decoderName)
#	netflix-xml       ... XML on the wire, the XStreamXml codec
#	netflix-compact   ... clientDataAccept=compact
#	netflix-cache     ... default codec, heurekad's read-only response cache on
#	failover          two server URLs, the first killed
#
# Every server is a real heurekad on 127.0.0.1 with an ephemeral port
# (tests/integration/lib.sh); every wait is bounded; every result is read
# from heurekad's REST API (or, for the local registry the Netflix client
# keeps, compared with heurekad's own full fetch). Each scenario ends by
# stopping heurekad with SIGTERM, which must exit 0 (under ASan: no leak).
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../../.." && pwd)
: "${HEUREKAD:=$TOP/build/server/heurekad}"
: "${JAVA:=java}"
export HEUREKAD
# shellcheck source=../../../integration/lib.sh
. "$TOP/tests/integration/lib.sh"

SCEN=${1:?usage: scenario.sh NAME}
CP="$HERE/target/classes:$(cat "$HERE/target/classpath.txt")"
# Small, quick JVMs: two cores are shared by everything.
JOPTS="-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k"
J="Accept: application/json"
JPID=""
JLOG=$HK_ROOT/java.log
DUMP=$HK_ROOT/registry.txt

# On a failure, print the JVM's log (lib.sh then prints the servers').
_jc_log()
{
	if [ -f "$JLOG" ]; then
		echo "===== java log (last 80 lines) =====" >&2
		grep -v DEBUG "$JLOG" | tail -n 80 >&2
	fi
}
hk_on_fail _jc_log

# Start the JVM: main class $1, JVM options in $JX, program args after.
# Its stdin is a FIFO held open on fd 3.
java_start()
{
	local main=$1
	shift
	mkfifo "$HK_ROOT/in"
	# shellcheck disable=SC2086
	"$JAVA" $JOPTS ${JX:-} -cp "$CP" "$main" "$@" <"$HK_ROOT/in" >"$JLOG" 2>&1 &
	JPID=$!
	hk_own "$JPID"	# the JVM goes with the script, whatever its end
	exec 3>"$HK_ROOT/in"
}

# Send one command line to the JVM.
java_cmd()
{
	echo "$*" >&3
}

# Close the JVM's stdin after "quit"; wait (bounded) for it to exit 0.
java_stop()
{
	local i=0
	java_cmd quit
	exec 3>&-
	while kill -0 "$JPID" 2>/dev/null && [ "$i" -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -0 "$JPID" 2>/dev/null && fail "the JVM did not exit within 30 s"
	local rc=0
	wait "$JPID" || rc=$?
	hk_disown "$JPID"
	JPID=""
	assert_eq 0 "$rc" "JVM exit status"
}

# Print the status of instance APP/ID at BASE ("none" when it is not there).
inst_status()
{
	local code
	code=$(hk_curl -o "$HK_ROOT/inst.json" -w '%{http_code}' -H "$J" "${1}apps/$2/$3") || true
	if [ "$code" = 200 ]; then
		hk_json 'd["instance"]["status"]' "$HK_ROOT/inst.json"
	else
		echo none
	fi
}

# True when APP/ID at BASE has status WANT.
status_is()
{
	[ "$(inst_status "$1" "$2" "$3")" = "$4" ]
}

# Print instance APP/ID's field expression EXPR (python, i = the instance).
inst_field()
{
	hk_curl -o "$HK_ROOT/inst.json" -H "$J" "${1}apps/$2/$3" >/dev/null &&
	    hk_json "(lambda i: $4)(d['instance'])" "$HK_ROOT/inst.json"
}

# Registrations heurekad at BASE has received (its /metrics counter).
registrations()
{
	hk_curl "${1%/eureka/}/metrics" | sed -n 's/^heureka_registrations_total //p'
}

# ---------------------------------------------------------------- spring
# A Spring Boot service: registers, heartbeats, discovers a second service,
# goes DOWN and UP with its health, re-registers on a metadata change and
# cancels its lease on a graceful shutdown.
scenario_spring()
{
	local U r1 r2
	hk_start s
	U=$HK_URL_s
	# The properties a Spring user sets. The jar also holds Jersey 3 (for
	# the standalone client); jersey.enabled=false keeps Spring's default
	# HTTP transport, as in a service without it.
	java_start heureka.interop.SpringClient \
	    --spring.application.name=springsvc \
	    --spring.main.banner-mode=off \
	    --server.port=0 --server.address=127.0.0.1 \
	    "--eureka.client.service-url.defaultZone=$U" \
	    --eureka.client.registry-fetch-interval-seconds=1 \
	    --eureka.client.instance-info-replication-interval-seconds=1 \
	    --eureka.client.initial-instance-info-replication-interval-seconds=1 \
	    --eureka.client.healthcheck.enabled=true \
	    --eureka.client.jersey.enabled=false \
	    --eureka.instance.lease-renewal-interval-in-seconds=1 \
	    --eureka.instance.instance-id=springsvc-1 \
	    --eureka.instance.prefer-ip-address=true \
	    --eureka.instance.ip-address=127.0.0.1

	hk_log "spring: registers and turns UP"
	wait_until 60 status_is "$U" SPRINGSVC springsvc-1 UP
	hk_log "spring: $(grep -m1 '^SPRINGCLIENT started' "$JLOG")"
	assert_eq 127.0.0.1 "$(inst_field "$U" SPRINGSVC springsvc-1 'i["ipAddr"]')" ipAddr
	assert_eq 1 "$(inst_field "$U" SPRINGSVC springsvc-1 'i["leaseInfo"]["renewalIntervalInSecs"]')" \
	    "renewal interval"

	hk_log "spring: heartbeats (lastRenewalTimestamp moves on)"
	r1=$(inst_field "$U" SPRINGSVC springsvc-1 'i["leaseInfo"]["lastRenewalTimestamp"]')
	renewed_after() { [ "$(inst_field "$U" SPRINGSVC springsvc-1 'i["leaseInfo"]["lastRenewalTimestamp"]')" -gt "$1" ]; }
	wait_until 10 renewed_after "$r1"
	r2=$(inst_field "$U" SPRINGSVC springsvc-1 'i["leaseInfo"]["lastRenewalTimestamp"]')
	wait_until 10 renewed_after "$r2"

	hk_log "spring: DiscoveryClient.getInstances sees a second service"
	hk_register "$U" OTHERSVC other-1
	hk_register "$U" OTHERSVC other-2
	# Ask for SERVICE's instances; succeed if the answer (the JVM prints
	# one DISCOVER line a command) lists exactly IDS.
	answers() { [ "$(grep -c "^DISCOVER $1 " "$JLOG")" -ge "$2" ]; }
	discovers()
	{
		local n
		n=$(grep -c "^DISCOVER $1 " "$JLOG" || true)
		java_cmd discover "$1"
		wait_until 10 answers "$1" $((n + 1))
		grep "^DISCOVER $1 " "$JLOG" | tail -n 1 | grep -qx "DISCOVER $1 $2"
	}
	wait_until 15 discovers othersvc other-1,other-2

	# Each change below reaches heurekad as a new registration (the
	# client's replicator sends the dirty instance), not as a heartbeat.
	hk_log "spring: health DOWN, then UP (health check handler + dirty flag)"
	n=$(registrations "$U")
	java_cmd down
	wait_until 15 status_is "$U" SPRINGSVC springsvc-1 DOWN
	[ "$(registrations "$U")" -gt "$n" ] || fail "DOWN arrived without a registration"
	n=$(registrations "$U")
	java_cmd up
	wait_until 15 status_is "$U" SPRINGSVC springsvc-1 UP
	[ "$(registrations "$U")" -gt "$n" ] || fail "UP arrived without a registration"

	hk_log "spring: a metadata change re-registers"
	n=$(registrations "$U")
	java_cmd meta build b42
	has_meta() { [ "$(inst_field "$U" SPRINGSVC springsvc-1 'i["metadata"].get("build","")')" = b42 ]; }
	wait_until 15 has_meta
	[ "$(registrations "$U")" -gt "$n" ] || fail "the metadata arrived without a registration"

	hk_log "spring: graceful shutdown cancels the lease"
	java_stop
	# The lease lasts 90 s: only a cancel removes it this soon.
	wait_until 10 status_is "$U" SPRINGSVC springsvc-1 none
	assert_contains "SPRINGCLIENT exited 0" "$(cat "$JLOG")" "clean exit"
	hk_stop s
}

# ---------------------------------------------------------------- netflix
# True when the Netflix client's local registry (its dump) equals heurekad's
# full fetch at BASE, hashcode included. MODE compact compares the fields the
# compact codec carries.
registry_matches()
{
	local base=$1 mode=$2
	hk_curl -o "$HK_ROOT/full.json" -H "$J" "${base}apps" || return 1
	"$HK_PYTHON" "$HERE/normalise.py" "$HK_ROOT/full.json" "$mode" >"$HK_ROOT/want" || return 1
	[ -f "$DUMP" ] || return 1
	grep -v -e '^fetches ' -e '^wire ' "$DUMP" >"$HK_ROOT/have"
	cmp -s "$HK_ROOT/want" "$HK_ROOT/have"
}

# Wait (bounded) until the local registry equals the server's; on timeout
# show both. STEP names the change made before.
await_same()
{
	local base=$1 mode=$2 step=$3 i=0
	while ! registry_matches "$base" "$mode"; do
		i=$((i + 1))
		if [ "$i" -ge 150 ]; then
			echo "after $step: local registry differs from heurekad's full fetch:" >&2
			diff "$HK_ROOT/want" "$HK_ROOT/have" >&2 || true
			fail "netflix: after $step the client's registry is not the server's"
		fi
		sleep 0.1
	done
	# Two more fetches later it must still match (no late full-fetch flip).
	local f
	f=$(sed -n 's/^fetches //p' "$DUMP")
	fetched_since() { [ "$(sed -n 's/^fetches //p' "$DUMP")" -ge $(($1 + 2)) ]; }
	wait_until 10 fetched_since "$f"
	registry_matches "$base" "$mode" || {
		diff "$HK_ROOT/want" "$HK_ROOT/have" >&2 || true
		fail "netflix: after $step the registries drifted apart again"
	}
	hk_log "netflix: after $step: local registry = heurekad's full fetch ($(tail -n 1 "$HK_ROOT/want"))"
}

# Full fetches the client has made so far (its own log line for each).
full_fetches()
{
	grep -c "Getting all instance registry info from the eureka server" "$JLOG" || true
}

# netflix_run MODE WIRE -Dkey=value...: the Netflix DiscoveryClient with
# those codec settings, deltas on, through every kind of change made by
# another client (curl). MODE full or compact (the fields compared), WIRE the
# media type the deltas must arrive in (gzip-encoded).
netflix_run()
{
	local mode=$1 wire=$2 U full0 n
	shift 2
	# shellcheck disable=SC2086
	hk_start s -D eureka.server.eviction-interval-timer-in-ms=500 \
	    -D eureka.server.enable-self-preservation=false ${HK_EXTRA:-}
	U=$HK_URL_s
	JX="-Dlogback.configurationFile=netflix-logback.xml -Ddump=$DUMP -Dmode=$SCEN
-Deureka.serviceUrl.default=$U -Deureka.disableDelta=false $*"
	java_start heureka.interop.NetflixClient
	wait_until 60 status_is "$U" JAVAWATCH javawatch-1 UP
	await_same "$U" "$mode" "its own registration"
	full0=$(full_fetches)

	hk_register "$U" OTHER o1
	hk_register "$U" OTHER o2
	hk_register "$U" THIRD t1
	await_same "$U" "$mode" "register"

	assert_http 200 DELETE "${U}apps/OTHER/o2"
	await_same "$U" "$mode" "cancel"

	assert_http 200 PUT "${U}apps/OTHER/o1/status?value=OUT_OF_SERVICE"
	await_same "$U" "$mode" "status override"

	assert_http 200 DELETE "${U}apps/OTHER/o1/status?value=UP"
	await_same "$U" "$mode" "override deleted"

	assert_http 200 PUT "${U}apps/THIRD/t1/metadata?build=b7&zone=z2"
	await_same "$U" "$mode" "metadata"

	# An override on the Java client itself: its own heartbeats (status UP)
	# must not undo it, and it comes back UP once the override is deleted.
	assert_http 200 PUT "${U}apps/JAVAWATCH/javawatch-1/status?value=OUT_OF_SERVICE"
	await_same "$U" "$mode" "override of the client itself"
	wait_until 5 status_is "$U" JAVAWATCH javawatch-1 OUT_OF_SERVICE
	assert_http 200 DELETE "${U}apps/JAVAWATCH/javawatch-1/status"
	wait_until 10 status_is "$U" JAVAWATCH javawatch-1 UP
	await_same "$U" "$mode" "the client's own override deleted"

	# Several kinds of change inside one fetch interval (one delta).
	hk_register "$U" BURST b1
	hk_register "$U" BURST b2
	assert_http 200 DELETE "${U}apps/BURST/b1"
	assert_http 200 PUT "${U}apps/BURST/b2/status?value=OUT_OF_SERVICE"
	assert_http 200 PUT "${U}apps/BURST/b2/metadata?k=v"
	hk_register "$U" BURST b1 DOWN
	await_same "$U" "$mode" "a burst of changes"

	# An 8 s lease, never renewed: long enough for the client to see it.
	hk_register "$U" EVICT e1 UP 8
	await_same "$U" "$mode" "register (8 s lease)"
	grep -q '"id":"e1"' "$HK_ROOT/have" || fail "netflix: the client never saw e1"
	gone() { [ "$(inst_status "$U" EVICT e1)" = none ]; }
	wait_until 25 gone
	await_same "$U" "$mode" "eviction"

	assert_http 200 DELETE "${U}apps/THIRD/t1"
	await_same "$U" "$mode" "cancel of an app's last instance"

	n=$(grep -c "Reconcile hashcodes do not match" "$JLOG" || true)
	assert_eq 0 "$n" "reconcile hashcode mismatches"
	assert_eq "$full0" "$(full_fetches)" "full fetches after the first (steady state)"
	n=$(grep -c "Got delta update" "$JLOG" || true)
	[ "$n" -gt 0 ] || fail "the client never applied a delta"
	# What went over the wire for the last delta (heurekad's headers).
	assert_eq "delta $wire gzip" "$(sed -n 's/^wire //p' "$DUMP")" "delta response type"
	hk_log "netflix: $n deltas applied, 0 reconcile mismatches, $full0 full fetch(es) at start only"

	java_stop
	wait_until 10 status_is "$U" JAVAWATCH javawatch-1 none
	hk_stop s
}

# ---------------------------------------------------------------- failover
# Two server URLs; the first is killed: heartbeats and fetches go on through
# the second (read from the second server).
scenario_failover()
{
	local A B r
	hk_start a
	hk_start b
	A=$HK_URL_a
	B=$HK_URL_b
	JX="-Dlogback.configurationFile=netflix-logback.xml -Ddump=$DUMP -Dmode=failover
-Deureka.serviceUrl.default=$A,$B"
	java_start heureka.interop.NetflixClient
	wait_until 60 status_is "$A" JAVAWATCH javawatch-1 UP
	assert_eq none "$(inst_status "$B" JAVAWATCH javawatch-1)" "not on the second server yet"
	hk_kill a
	hk_log "failover: first server killed"
	# Its next heartbeat goes to the second, which answers 404: the
	# client registers there.
	wait_until 20 status_is "$B" JAVAWATCH javawatch-1 UP
	r=$(inst_field "$B" JAVAWATCH javawatch-1 'i["leaseInfo"]["lastRenewalTimestamp"]')
	renewed_after() { [ "$(inst_field "$B" JAVAWATCH javawatch-1 'i["leaseInfo"]["lastRenewalTimestamp"]')" -gt "$1" ]; }
	wait_until 10 renewed_after "$r"
	hk_log "failover: heartbeats reach the second server"
	hk_register "$B" OTHER f1
	await_same "$B" full "registration on the second server"
	java_stop
	wait_until 10 status_is "$B" JAVAWATCH javawatch-1 none
	hk_stop b
}

case "$SCEN" in
spring) scenario_spring ;;
netflix-json) netflix_run full application/json ;;
netflix-xstream) netflix_run full application/json -Deureka.encoderName=XStreamJson -Deureka.decoderName=XStreamJson ;;
netflix-xml) netflix_run full application/xml -Deureka.encoderName=XStreamXml -Deureka.decoderName=XStreamXml -Dwire=xml ;;
netflix-compact) netflix_run compact application/json -Deureka.clientDataAccept=compact ;;
netflix-cache)
	# Eureka's read-only response cache on (refreshed every 500 ms):
	# full fetches and deltas are both served from it.
	HK_EXTRA="-D eureka.server.use-read-only-response-cache=true
-D eureka.server.response-cache-update-interval-ms=500"
	netflix_run full application/json ;;
failover) scenario_failover ;;
*) fail "unknown scenario $SCEN" ;;
esac
echo "PASS: $SCEN"
