#!/bin/sh
# 13-process.sh: the heurekad process contract: SIGTERM and SIGINT end it
# cleanly with exit 0 (also with clients connected and data registered),
# unknown keys and out-of-range values are refused with exit 78 before it
# listens, --check-config/--help/--version exit 0.
. "$(dirname "$0")/lib.sh"

d=$(hk_tmp)

hk_log "SIGTERM with registrations and an idle keep-alive connection"
hk_start a
hk_register "$HK_URL_a" P p1
# An idle client connection must not hold up shutdown. The client sends
# one request, reads until the server closes the connection and then
# notes that it saw the close. The gauge counts a connection from its
# first request on, so it proves the idle one is open: once only the
# scrape itself is counted, then the idle connection too.
wait_until 10 hk_eq 1 hk_metric heureka_open_connections "$HK_PORT_a"
(
	exec 3<>"/dev/tcp/127.0.0.1/$HK_PORT_a" || exit 1
	printf 'GET /eureka/apps HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' >&3
	cat <&3 >"$d/idle.out"
	echo closed >"$d/idle.closed"
) &
idle=$!
hk_own "$idle"
wait_until 10 grep -q '^HTTP/1.1 200' "$d/idle.out"
wait_until 10 hk_eq 2 hk_metric heureka_open_connections "$HK_PORT_a"
[ ! -e "$d/idle.closed" ] || fail "the idle connection closed before the stop"
hk_stop a
# The server closed it on the way out; the client saw the end.
wait_until 10 test -e "$d/idle.closed"
wait "$idle" || fail "idle client: exit status $?"
hk_disown "$idle"

hk_log "SIGINT"
hk_start b
hk_register "$HK_URL_b" P p1
kill -INT "$HK_PID_b"
_hk_reap "$HK_PID_b"
HK_PID_b=
assert_eq 0 "$HK_RC" "exit status after SIGINT"

hk_log "configuration errors: exit 78 before listening"
for bad in "-D eureka.server.no-such-key=1" "-D eureka.server.eviction-interval-timer-in-ms=-5" \
    "-D eureka.server.enable-self-preservation=maybe"; do
	rc=0
	# shellcheck disable=SC2086
	timeout 10 "$HEUREKAD" -b 127.0.0.1 -p 0 --port-file "$d/port" $bad \
	    >"$d/out" 2>&1 || rc=$?
	assert_eq 78 "$rc" "exit status for [$bad] ($(head -c 300 "$d/out"))"
	[ ! -s "$d/port" ] || fail "[$bad]: port file written although the config is bad"
	[ -s "$d/out" ] || fail "[$bad]: no message"
done
rc=0
timeout 10 "$HEUREKAD" --no-such-option >"$d/out" 2>&1 || rc=$?
assert_eq 64 "$rc" "unknown option (EX_USAGE)"

hk_log "--check-config, --help, --version"
timeout 10 "$HEUREKAD" --check-config -D eureka.server.eviction-interval-timer-in-ms=1000 \
    >"$d/out" 2>&1 || fail "--check-config of a good config: $(cat "$d/out")"
rc=0
timeout 10 "$HEUREKAD" --check-config -D eureka.server.bogus=1 >"$d/out" 2>&1 || rc=$?
assert_eq 78 "$rc" "--check-config of a bad config"
timeout 10 "$HEUREKAD" --help >"$d/out" 2>&1 || fail "--help exit status"
assert_contains "--port-file" "$(cat "$d/out")" "--help lists the options"
timeout 10 "$HEUREKAD" --version >"$d/out" 2>&1 || fail "--version exit status"
[ -s "$d/out" ] || fail "--version prints nothing"
