# tests/integration/lib.sh: helpers shared by the integration scripts.
#
# Source it first thing in every tests/integration/NN-name.sh:
#
#	. "$(dirname "$0")/lib.sh"
#
# It starts real heurekad processes on 127.0.0.1 (ephemeral ports via
# -p 0 --port-file), keeps every server's log in a per-script temporary
# directory, kills everything it started (by PID) when the script exits and
# prints the logs when the script failed. The API:
#
#	hk_start NAME [heurekad args...]   start $HEUREKAD, wait until it answers;
#	                                   sets HK_PID_NAME, HK_PORT_NAME and
#	                                   HK_URL_NAME=http://127.0.0.1:PORT/eureka/
#	                                   (HK_BIND=127.0.0.2 hk_start ...: on
#	                                   that loopback address instead)
#	hk_stop NAME                       SIGTERM, wait, fail unless it exits 0
#	hk_kill NAME                       SIGKILL, wait
#	hk_tmp                             print a fresh directory (removed at exit)
#	fail MSG                           print MSG and exit 1
#	assert_eq EXPECTED ACTUAL MSG
#	assert_http CODE METHOD URL [curl args...]
#	                                   run the request, fail unless the status
#	                                   is CODE; the body is left in $HK_BODY
#	                                   (a file) and the headers in $HK_HEADERS
#	hk_register BASEURL APP ID [STATUS]
#	                                   POST a valid JSON instance, expect 204
#	wait_until SECONDS CMD...          poll CMD every 0.1 s; fail on timeout
#	hk_eq WANT CMD...                  is CMD's output WANT? (for wait_until)
#	hk_clock_past MS                   is the wall clock (ms) past MS?
#	hk_ge MIN CMD...                   is CMD's output a number >= MIN?
#	hk_curl [curl args...]             curl with the common bounds (--max-time)
#	hk_metric NAME PORT                print series NAME of GET /metrics on
#	                                   127.0.0.1:PORT; fail when it is absent
#	hk_own PID...                      SIGKILL these helper processes (clients,
#	                                   agents, fake services) at exit
#	hk_disown PID...                   they were reaped: leave them alone
#	hk_on_fail CMD                     run CMD (e.g. print a client's log) at
#	                                   exit if the script failed
#	hk_need_cli                        fail unless $HEUREKA is the heureka CLI
#	hk_mutate FILE STMT                print the JSON document FILE with python
#	                                   STMT applied (d = document, i = instance)
#	assert_refused NAME CODE METHOD URL [curl args...]
#	                                   assert_http, then fail unless the body
#	                                   gives a reason and server NAME still runs
#	hk_body_trimmed                    the last body, CRs and trailing blanks cut
#
# CODE of assert_http (and assert_refused) is a status or a case pattern
# of one ("4??": any client error).
#
# NAME must be a shell identifier ([A-Za-z0-9_]). Nothing here needs more
# than bash, curl and coreutils. Every wait is bounded.
#
# TLS servers: set HK_SCHEME=https and put curl's TLS options (--cacert,
# --cert, --key) in the array HK_CURL_TLS before hk_start; hk_curl and
# every helper built on it then use them (tls-lib.sh makes certificates).

# make check runs the scripts with $(SHELL), which is dash on Debian: the
# helpers below need bash, so re-run the whole script under it. This must
# stay the first command of the file (dash executes a sourced file command
# by command, so it never parses the bash-only parts below).
if [ -z "${BASH_VERSION:-}" ]; then
	exec bash "$0" "$@"
fi

set -eu

: "${HEUREKAD:=}"
: "${HK_CURL_MAX_TIME:=10}"
: "${HK_START_TIMEOUT:=15}"
: "${HK_STOP_TIMEOUT:=15}"
: "${HK_PYTHON:=$(command -v /usr/bin/python3 || command -v python3 || echo python3)}"
: "${HK_SCHEME:=http}"
HK_CURL_TLS=()

if [ -z "$HEUREKAD" ]; then
	# Outside make check: look for the usual out-of-tree build folders.
	for _hk_d in "$(dirname "$0")/../../build/server/heurekad" \
	    "$(dirname "$0")/../../server/heurekad"; do
		if [ -x "$_hk_d" ]; then
			HEUREKAD=$(cd "$(dirname "$_hk_d")" && pwd)/heurekad
			break
		fi
	done
fi
: "${TESTS_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${TEST_DATA_DIR:=$TESTS_DIR/data}"
# The tests' inline Python imports hkfixture (the shared instance) from here.
export PYTHONPATH="$TESTS_DIR/integration${PYTHONPATH:+:$PYTHONPATH}"

HK_ROOT=$(mktemp -d "${TMPDIR:-/tmp}/hk-$(basename "$0" .sh).XXXXXX")
HK_NAMES=""
HK_OWN=""
HK_ON_FAIL=()
HK_BODY=$HK_ROOT/body
HK_HEADERS=$HK_ROOT/headers
: >"$HK_BODY"
: >"$HK_HEADERS"

# Print MSG on stderr and end the script with a failure.
fail()
{
	echo "FAIL: $*" >&2
	exit 1
}

# Note progress on stderr (ends up in the .log file of make check).
hk_log()
{
	echo "--- $*" >&2
}

# Kill the helper processes and every server still running; print the
# logs if the script failed.
_hk_cleanup()
{
	local rc=$? name pid
	trap - EXIT
	for pid in $HK_OWN; do
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	for name in $HK_NAMES; do
		eval "pid=\${HK_PID_$name:-}"
		if [ -n "$pid" ]; then
			kill -9 "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
		fi
	done
	if [ "$rc" -ne 0 ]; then
		for name in "${HK_ON_FAIL[@]}"; do
			$name || true
		done
		for name in $HK_NAMES; do
			if [ -f "$HK_ROOT/$name.log" ]; then
				echo "===== log of server $name (last 200 lines) =====" >&2
				tail -n 200 "$HK_ROOT/$name.log" >&2 || true
			fi
		done
		if [ -s "$HK_HEADERS" ] || [ -s "$HK_BODY" ]; then
			echo "===== last response =====" >&2
			cat "$HK_HEADERS" >&2 || true
			head -c 4000 "$HK_BODY" >&2 || true
			echo >&2
		fi
		echo "FAILED: $(basename "$0") (exit $rc)" >&2
	fi
	rm -rf "$HK_ROOT"
	exit "$rc"
}
trap _hk_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Have the helper processes PID... (started in the background by the
# script: clients, agents, readers, fake services) killed at exit,
# whatever the script's end.
hk_own()
{
	HK_OWN="$HK_OWN $*"
}

# The script reaped PID... itself: do not kill them (or a process that
# reused the number) at exit.
hk_disown()
{
	local p q keep=""
	for p in $HK_OWN; do
		for q in "$@"; do
			[ "$p" = "$q" ] && continue 2
		done
		keep="$keep $p"
	done
	HK_OWN=$keep
}

# Run CMD (one word: a function or command) at exit if the script failed,
# before the servers' logs are printed.
hk_on_fail()
{
	HK_ON_FAIL+=("$1")
}

# Fail unless $HEUREKA is the heureka CLI (make check sets it).
hk_need_cli()
{
	[ -n "${HEUREKA:-}" ] && [ -x "$HEUREKA" ] ||
	    fail "HEUREKA is not set to the heureka CLI"
}

# Find libfaketime for tests that run a server under a shifted wall clock:
# sets FT_LIB (the library to put in LD_PRELOAD) and FT_ASAN (the
# ASAN_OPTIONS to run it with: ASan insists on coming first in the
# library list, libfaketime must come first to see the clock calls, so
# an ASan build is told not to check the order). Fails, never skips,
# without it (./quickstart test installs faketime and libfaketime).
hk_need_faketime()
{
	local f
	FT_LIB=""
	for f in $(dpkg -L libfaketime 2>/dev/null |
	    grep '/libfaketime\.so\.1$') \
	    /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 \
	    /usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1 \
	    /usr/lib/faketime/libfaketime.so.1 \
	    /usr/local/lib/faketime/libfaketime.so.1; do
		if [ -f "$f" ]; then
			FT_LIB=$f
			break
		fi
	done
	[ -n "$FT_LIB" ] || fail "libfaketime not found" \
	    "(Debian: apt-get install faketime libfaketime)"
	FT_ASAN=${ASAN_OPTIONS:-}
	if hk_asan; then
		FT_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	fi
}

# hk_cli_expect DIR WANT_RC PATTERN ARGS...: run the heureka CLI with
# ARGS, its output in DIR/out and DIR/err; it must exit WANT_RC and its
# stderr must match PATTERN (grep -E).
hk_cli_expect()
{
	local dir=$1 want=$2 pat=$3 rc=0
	shift 3
	"$HEUREKA" "$@" >"$dir/out" 2>"$dir/err" || rc=$?
	hk_log "heureka $*: exit $rc: $(cat "$dir/err")"
	assert_eq "$want" "$rc" "exit status of heureka $*"
	grep -Eq -- "$pat" "$dir/err" ||
	    fail "heureka $*: stderr lacks /$pat/: $(cat "$dir/err")"
}

# Print a fresh empty directory that is removed when the script exits.
hk_tmp()
{
	mktemp -d "$HK_ROOT/tmp.XXXXXX"
}

# curl with the bounds every request of the tests uses.
hk_curl()
{
	curl -sS --max-time "$HK_CURL_MAX_TIME" --connect-timeout 5 \
	    "${HK_CURL_TLS[@]}" "$@"
}

# Fail unless EXPECTED and ACTUAL are the same string.
assert_eq()
{
	if [ "$1" != "$2" ]; then
		fail "${3:-assert_eq}: expected [$1], got [$2]"
	fi
}

# Fail unless the string HAYSTACK contains NEEDLE.
assert_contains()
{
	case "$2" in
	*"$1"*) ;;
	*) fail "${3:-assert_contains}: [$1] not found in [$(printf %s "$2" | head -c 2000)]" ;;
	esac
}

# Fail if the string HAYSTACK contains NEEDLE.
assert_not_contains()
{
	case "$2" in
	*"$1"*) fail "${3:-assert_not_contains}: [$1] found in [$(printf %s "$2" | head -c 2000)]" ;;
	*) ;;
	esac
}

# Run one request and fail unless the HTTP status is CODE. The response body
# is left in the file $HK_BODY and the headers in $HK_HEADERS.
assert_http()
{
	local want=$1 method=$2 url=$3 got
	shift 3
	: >"$HK_HEADERS"
	: >"$HK_BODY"
	if [ "$method" = HEAD ]; then
		got=$(hk_curl -I -o /dev/null -D "$HK_HEADERS" -w '%{http_code}' \
		    "$@" "$url") || true
	else
		got=$(hk_curl -X "$method" -o "$HK_BODY" -D "$HK_HEADERS" \
		    -w '%{http_code}' "$@" "$url") || true
	fi
	# shellcheck disable=SC2254
	case "$got" in
	$want) ;;
	*)
		echo "response body: $(head -c 2000 "$HK_BODY" 2>/dev/null)" >&2
		fail "$method $url: expected HTTP $want, got ${got:-no answer}"
		;;
	esac
}

# assert_http CODE METHOD URL [curl args...] for bad input: the answer
# must also say why (a non-empty body), and server NAME must still run.
assert_refused()
{
	local name=$1
	shift
	assert_http "$@"
	[ -s "$HK_BODY" ] ||
	    fail "$2 $3: HTTP $1 without a reason in the body"
	hk_alive "$name"
}

# Print the last response body without CRs and trailing white space.
hk_body_trimmed()
{
	tr -d '\r' <"$HK_BODY" | sed -e 's/[[:space:]]*$//'
}

# Print the value of response header NAME of the last assert_http (empty
# when absent); case-insensitive, CR stripped.
hk_header()
{
	tr -d '\r' <"$HK_HEADERS" | awk -v n="$1" 'BEGIN { n = tolower(n) }
	    { i = index($0, ":"); if (i > 0 && tolower(substr($0, 1, i - 1)) == n) {
		v = substr($0, i + 1); sub(/^[ \t]+/, "", v); print v } }' | tail -n 1
}

# Print a valid JSON registration body for APP/ID with STATUS (default UP).
# Optional 4th argument: lease durationInSecs (default 90).
hk_instance_json()
{
	local app=$1 id=$2 status=${3:-UP} dur=${4:-90}
	local now
	now=$(date +%s%3N)
	cat <<EOF
{"instance":{"instanceId":"$id","hostName":"$id.example","app":"$app",
"ipAddr":"10.0.0.1","status":"$status","overriddenstatus":"UNKNOWN",
"port":{"\$":8080,"@enabled":"true"},"securePort":{"\$":8443,"@enabled":"false"},
"countryId":1,"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo\$DefaultDataCenterInfo","name":"MyOwn"},
"leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":$dur},
"metadata":{"zone":"default"},
"homePageUrl":"http://$id.example:8080/","statusPageUrl":"http://$id.example:8080/info",
"healthCheckUrl":"http://$id.example:8080/health",
"vipAddress":"$(echo "$app" | tr '[:upper:]' '[:lower:]')","secureVipAddress":"$(echo "$app" | tr '[:upper:]' '[:lower:]')",
"isCoordinatingDiscoveryServer":"false","lastUpdatedTimestamp":"$now","lastDirtyTimestamp":"$now"}}
EOF
}

# Register APP/ID (status STATUS, default UP) at BASEURL; expect 204.
# Optional 5th argument: the lease durationInSecs.
hk_register()
{
	local base=$1 app=$2 id=$3 status=${4:-UP} dur=${5:-90}
	case "$base" in */) ;; *) base=$base/ ;; esac
	hk_instance_json "$app" "$id" "$status" "$dur" >"$HK_ROOT/register.json"
	assert_http 204 POST "${base}apps/$app" \
	    -H 'Content-Type: application/json' \
	    --data-binary @"$HK_ROOT/register.json"
}

# Print the JSON document FILE with python statement STMT applied to it
# (d is the document, i its "instance" object).
hk_mutate()
{
	"$HK_PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[2]))
i = d.get("instance") if isinstance(d, dict) else None
exec(sys.argv[1])
sys.stdout.write(json.dumps(d))' "$2" "$1" || fail "hk_mutate: $2"
}

# Print the value of series NAME (with its labels, as written) of GET
# /metrics on 127.0.0.1:PORT; fail when the series is absent.
hk_metric()
{
	local v
	v=$(hk_curl "$HK_SCHEME://127.0.0.1:$2/metrics" |
	    awk -v k="$1" '$1 == k { print $2; f = 1 } END { exit !f }') ||
	    fail "no metric $1 on port $2"
	echo "$v"
}

# Succeeds once the wall clock (ms since the epoch) is past MS: for a
# step that must fall in a later millisecond than an earlier one.
hk_clock_past()
{
	[ "$(date +%s%3N)" -gt "$1" ]
}

# Is the output of CMD... a number of at least MIN? (for wait_until)
hk_ge()
{
	local min=$1 v
	shift
	v=$("$@") || return 1
	[ "$v" -ge "$min" ]
}

# Does the output of CMD... equal WANT? For wait_until, which must re-run
# the command on every poll (a "$(...)" argument is evaluated only once).
hk_eq()
{
	local want=$1
	shift
	[ "$("$@")" = "$want" ]
}

# Poll CMD every 0.1 s until it succeeds; fail after SECONDS.
wait_until()
{
	local secs=$1 deadline
	shift
	deadline=$(($(date +%s%N) / 1000000 + secs * 1000))
	while :; do
		if ( "$@" ) >/dev/null 2>&1; then
			return 0
		fi
		if [ "$(($(date +%s%N) / 1000000))" -ge "$deadline" ]; then
			fail "timed out after ${secs}s waiting for: $*"
		fi
		sleep 0.1
	done
}

# Start heurekad as NAME on 127.0.0.1 with an ephemeral port; extra args are
# passed on. Sets HK_PID_NAME, HK_PORT_NAME and HK_URL_NAME.
hk_start()
{
	local name=$1 portfile log pid port deadline
	shift
	case "$name" in
	*[!A-Za-z0-9_]* | "") fail "hk_start: bad name [$name]" ;;
	esac
	[ -n "$HEUREKAD" ] && [ -x "$HEUREKAD" ] ||
	    fail "HEUREKAD is not set to an executable heurekad [$HEUREKAD]"
	portfile=$HK_ROOT/$name.port
	log=$HK_ROOT/$name.log
	rm -f "$portfile"
	echo "=== $HEUREKAD -b ${HK_BIND:-127.0.0.1} -p 0 --port-file $portfile $*" >>"$log"
	"$HEUREKAD" -b "${HK_BIND:-127.0.0.1}" -p 0 --port-file "$portfile" "$@" \
	    </dev/null >>"$log" 2>&1 &
	pid=$!
	eval "HK_PID_$name=$pid"
	case " $HK_NAMES " in *" $name "*) ;; *) HK_NAMES="$HK_NAMES $name" ;; esac
	deadline=$(($(date +%s) + HK_START_TIMEOUT))
	port=""
	while :; do
		if [ "$(_hk_exited "$pid")" = 1 ]; then
			HK_RC=0
			wait "$pid" 2>/dev/null || HK_RC=$?
			eval "HK_PID_$name="
			fail "heurekad $name exited (status $HK_RC) during start-up"
		fi
		if [ -z "$port" ] && [ -s "$portfile" ]; then
			port=$(tr -dc 0-9 <"$portfile")
		fi
		if [ -n "$port" ] && hk_curl -o /dev/null --max-time 2 \
		    "$HK_SCHEME://${HK_BIND:-127.0.0.1}:$port/eureka/apps" 2>/dev/null; then
			break
		fi
		if [ "$(date +%s)" -ge "$deadline" ]; then
			fail "heurekad $name did not answer within ${HK_START_TIMEOUT}s"
		fi
		sleep 0.1
	done
	eval "HK_PORT_$name=$port"
	eval "HK_URL_$name=$HK_SCHEME://${HK_BIND:-127.0.0.1}:$port/eureka/"
	hk_log "started $name (pid $pid) on port $port"
}

# Print "1" if PID is gone or a zombie (exited, not yet reaped).
_hk_exited()
{
	local st
	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) || true
	case "$st" in "" | Z | X) echo 1 ;; *) echo 0 ;; esac
}

# Reap our child PID, SIGKILLing it after HK_STOP_TIMEOUT seconds; set
# HK_RC to its exit status (or "timeout"). Runs in the calling shell
# because only the parent can wait for a child.
_hk_reap()
{
	local pid=$1 wd i
	(
		i=0
		while [ "$i" -lt $((HK_STOP_TIMEOUT * 10)) ]; do
			sleep 0.1
			i=$((i + 1))
		done
		# Say what the process was doing before killing it.
		{
			echo timeout
			grep -E '^(State|Threads)' "/proc/$pid/status"
			echo "wchan: $(cat "/proc/$pid/wchan" 2>/dev/null)"
			cat "/proc/$pid/stack" 2>/dev/null
		} >"$HK_ROOT/reap.$pid" 2>&1
		kill -9 "$pid" 2>/dev/null
	) >/dev/null 2>&1 &
	wd=$!
	HK_RC=0
	wait "$pid" 2>/dev/null || HK_RC=$?
	# SIGKILL: a TERM that reaches the subshell before it has dropped the
	# script's traps runs them there (the EXIT trap then kills every server
	# and removes $HK_ROOT); SIGKILL runs nothing.
	kill -9 "$wd" 2>/dev/null || true
	wait "$wd" 2>/dev/null || true
	if [ -f "$HK_ROOT/reap.$pid" ]; then
		HK_RC=timeout
		sed 's/^/reap: /' "$HK_ROOT/reap.$pid" >&2
	fi
}

# Stop NAME with SIGTERM; fail unless it exits 0 within HK_STOP_TIMEOUT.
hk_stop()
{
	local name=$1 pid
	eval "pid=\${HK_PID_$name:-}"
	[ -n "$pid" ] || fail "hk_stop: no server named $name"
	kill -TERM "$pid" 2>/dev/null || true
	_hk_reap "$pid"
	eval "HK_PID_$name="
	[ "$HK_RC" = 0 ] ||
	    fail "heurekad $name: exit status $HK_RC after SIGTERM (want 0)"
	hk_log "stopped $name"
}

# Kill NAME with SIGKILL (a crash, as seen by its peers and clients).
hk_kill()
{
	local name=$1 pid
	eval "pid=\${HK_PID_$name:-}"
	[ -n "$pid" ] || fail "hk_kill: no server named $name"
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	eval "HK_PID_$name="
	hk_log "killed $name"
}

# Fail if heurekad NAME is no longer running (e.g. after bad input).
hk_alive()
{
	local name=$1 pid
	eval "pid=\${HK_PID_$name:-}"
	[ -n "$pid" ] && [ "$(_hk_exited "$pid")" = 0 ] ||
	    fail "heurekad $name is not running"
}

# Print the value of python expression EXPR evaluated with d bound to the
# JSON document in FILE (default: the last response body, $HK_BODY). A str
# result is printed as is, anything else as compact JSON.
hk_json()
{
	"$HK_PYTHON" -c '
import json, sys
try:
    d = json.load(open(sys.argv[2], encoding="utf-8"))
except Exception as e:
    sys.exit("hk_json: response is not JSON: %s" % e)
v = eval(sys.argv[1])
print(v if isinstance(v, str) else json.dumps(v, separators=(",", ":"), sort_keys=True))
' "$1" "${2:-$HK_BODY}" || fail "hk_json: cannot evaluate [$1]"
}

# Print a canonical summary of the full registry at BASEURL (apps, ids,
# statuses, overrides, metadata, dirty timestamps and the hashcode), for
# "the registry is unchanged" checks. Lease timestamps are left out.
hk_snapshot()
{
	local base=$1 f
	case "$base" in */) ;; *) base=$base/ ;; esac
	f=$HK_ROOT/snapshot.json
	hk_curl -o "$f" -H 'Accept: application/json' "${base}apps" ||
	    fail "hk_snapshot: GET ${base}apps failed"
	"$HK_PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))["applications"]
out = ["hash=" + d["apps__hashcode"]]
for a in d["application"]:
    for i in a["instance"]:
        out.append("|".join([a["name"], i.get("instanceId", ""), i["status"],
            i.get("overriddenStatus", ""), i.get("ipAddr", ""),
            json.dumps(i.get("metadata"), sort_keys=True),
            i.get("lastDirtyTimestamp", "")]))
print("\n".join(sorted(out)))
' "$f" || fail "hk_snapshot: bad registry document"
}

# True when $HEUREKAD is an AddressSanitizer build: its allocator holds
# freed memory in quarantine, so RSS-growth checks do not apply.
hk_asan()
{
	ldd "$HEUREKAD" 2>/dev/null | grep -q libasan
}
