#!/usr/bin/env bash
# tests/interop/java/client/run.sh: the Java Eureka clients against
# heurekad.
#
# Builds this Maven project (pom.xml: Spring Boot 3.5.7, Spring Cloud
# 2025.0.0, eureka-client 2.0.4 with its Jersey 3 transport, every version
# pinned): offline when ~/.m2 already has everything, else Maven downloads
# what is missing. Then runs each scenario of scenario.sh in its own
# process (fresh heurekad, at most one JVM at a time):
#
#	spring            Spring Boot service (spring-cloud-starter-netflix-eureka-client)
#	netflix-json      Netflix DiscoveryClient, default JSON codec, deltas on
#	netflix-xstream   ... XStreamJson encoder/decoder
#	netflix-xml       ... XStreamXml encoder/decoder, XML on the wire
#	netflix-compact   ... clientDataAccept=compact
#	netflix-cache     ... default codec, heurekad's read-only response cache on
#	failover          two server URLs, the first killed
#
# Prints "INTEROP-SUMMARY name=java-client pass=N fail=M" last (read by
# ./quickstart) and exits non-zero when anything failed. Environment:
#	HEUREKAD            the built server (default build/server/heurekad)
#	JC_SCENARIOS        the scenarios to run (default: all of them)
#	JC_TIMEOUT          bound per scenario in seconds (180)
#	JC_MVN_ARGS         extra Maven arguments, e.g. -Dmaven.repo.local=DIR
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../maven-lib.sh
. "$HERE/../../maven-lib.sh"
: "${JC_SCENARIOS:=spring netflix-json netflix-xstream netflix-xml netflix-compact netflix-cache failover}"
: "${JC_TIMEOUT:=180}"
: "${JC_MVN_ARGS:=}"

mvn_need java-client
# shellcheck disable=SC2086
mvn_package java-client "$HERE" $JC_MVN_ARGS

pass=0
failn=0
failed=""
for s in $JC_SCENARIOS; do
	echo "=== java-client: $s"
	timeout "$JC_TIMEOUT" bash "$HERE/scenario.sh" "$s"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
	else
		failn=$((failn + 1))
		failed="$failed $s"
		[ "$rc" -ne 124 ] || echo "FAIL: $s: timed out after ${JC_TIMEOUT}s" >&2
		echo "FAIL: $s (exit $rc)" >&2
	fi
done
[ -z "$failed" ] || echo "java-client: failed:$failed"
mvn_summary java-client "$pass" "$failn"
[ "$failn" -eq 0 ]
