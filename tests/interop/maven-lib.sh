# tests/interop/maven-lib.sh: the preamble the Maven-built interop tests
# (java/client, java/server, airlift) share. Source it from their run.sh:
#
#	. "$(dirname "$0")/../maven-lib.sh"	(../../ from java/*)
#
# It sets TOP (the source tree) and, unless set, HEUREKAD to
# $TOP/build/server/heurekad (exported). Then:
#
#	mvn_summary NAME PASS FAIL   print "INTEROP-SUMMARY name=NAME pass=PASS
#	                             fail=FAIL", the line ./quickstart reads
#	mvn_need NAME                unless java and mvn are installed, say so,
#	                             print a failed summary and exit 1
#	mvn_package NAME DIR [mvn args...]
#	                             build DIR's Maven project (`mvn package`):
#	                             offline first, when ~/.m2 has everything,
#	                             else downloading what is missing; on a
#	                             failure, a failed summary and exit 1
#
# Nothing here needs more than bash, java and mvn.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${HEUREKAD:=$TOP/build/server/heurekad}"
export HEUREKAD

# Print the summary line of test NAME.
mvn_summary()
{
	echo "INTEROP-SUMMARY name=$1 pass=$2 fail=$3"
}

# Fail test NAME (summary included) unless java and mvn are installed.
mvn_need()
{
	local t
	for t in java mvn; do
		if ! command -v "$t" >/dev/null 2>&1; then
			echo "$1: $t is required (JDK 17 and Maven)" >&2
			mvn_summary "$1" 0 1
			exit 1
		fi
	done
}

# Build the Maven project in DIR for test NAME, offline first.
mvn_package()
{
	local name=$1 dir=$2
	shift 2
	echo "=== $name: mvn package"
	if ! (cd "$dir" && { mvn -q -B -o -Dstyle.color=never "$@" package 2>/dev/null ||
	    mvn -q -B -Dstyle.color=never "$@" package; }); then
		echo "$name: the Maven build failed" >&2
		mvn_summary "$name" 0 1
		exit 1
	fi
}
