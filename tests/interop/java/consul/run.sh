#!/usr/bin/env bash
# tests/interop/java/consul/run.sh: Spring Cloud Consul's discovery client
# (read-only) against heurekad's Consul catalog and health API (issue 26).
#
# Builds this Maven project (pom.xml: Spring Boot 3.5.7, Spring Cloud
# 2025.0.0, so spring-cloud-starter-consul-discovery 4.3.0 on
# com.ecwid.consul:consul-api 1.4.5, every version pinned): offline when
# ~/.m2 already has everything, else Maven downloads what is missing. Then
# runs scenario.sh (one heurekad, two JVMs one after the other), counts its
# PASS:/FAIL: lines and prints "INTEROP-SUMMARY name=java-consul pass=N
# fail=M" last (read by ./quickstart); exits non-zero when anything failed.
# Environment:
#	HEUREKAD            the built server (default build/server/heurekad)
#	JCO_TIMEOUT         bound on the whole scenario in seconds (240)
#	JCO_JVM_TIMEOUT     bound on each JVM in seconds (90)
#	JCO_MVN_ARGS        extra Maven arguments, e.g. -Dmaven.repo.local=DIR
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../maven-lib.sh
. "$HERE/../../maven-lib.sh"
: "${JCO_TIMEOUT:=240}"
: "${JCO_MVN_ARGS:=}"
export JCO_JVM_TIMEOUT

mvn_need java-consul
# shellcheck disable=SC2086
mvn_package java-consul "$HERE" $JCO_MVN_ARGS

out=$(mktemp)
echo "=== java-consul: scenario"
timeout "$JCO_TIMEOUT" bash "$HERE/scenario.sh" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
pass=$(grep -c '^PASS: ' "$out")
failn=$(grep -c '^FAIL: ' "$out")
rm -f "$out"
if [ "$rc" -ne 0 ] && [ "$failn" -eq 0 ]; then
	# The scenario ended before its checks (setup, time-out): one failure.
	[ "$rc" -ne 124 ] || echo "FAIL: java-consul: timed out after ${JCO_TIMEOUT}s" >&2
	echo "FAIL: java-consul: scenario exit $rc" >&2
	failn=1
fi
mvn_summary java-consul "$pass" "$failn"
[ "$failn" -eq 0 ]
