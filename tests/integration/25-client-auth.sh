#!/bin/sh
# 25-client-auth.sh: libheureka and the heureka CLI send the credentials
# of their service URL's userinfo as HTTP Basic (Spring's way:
# http://user:pass@host:8761/eureka/), percent-decoded (a '@' in the
# password is written %40); without them, or with wrong ones, they get
# nothing. No password shows in their output.
. "$(dirname "$0")/lib.sh"

hk_need_cli
[ -x "$HEUREKA_EXAMPLE" ] || fail "HEUREKA_EXAMPLE is not set"

PW="S3cr@t-$$"
PWURL="S3cr%40t-$$"
SPRING_SECURITY_USER_PASSWORD=$PW hk_start S
T=$(hk_tmp)
R=http://127.0.0.1:$HK_PORT_S/eureka/
GOOD=http://user:$PWURL@127.0.0.1:$HK_PORT_S/eureka/
BAD=http://user:wrong@127.0.0.1:$HK_PORT_S/eureka/

"$HEUREKA_EXAMPLE" 18081 HELLO "$GOOD" >"$T/hello.out" 2>&1 &
HELLO=$!
hk_own "$HELLO"
wait_until 10 "$HEUREKA" get HELLO --server "$GOOD"
"$HEUREKA" get HELLO --server "$GOOD" >"$T/get.out" 2>&1 ||
    fail "heureka get HELLO with credentials: exit $?"
grep -q 18081 "$T/get.out" || fail "port not in: $(cat "$T/get.out")"
assert_http 200 GET "${R}apps/HELLO" -u "user:$PW"
assert_http 401 GET "${R}apps/HELLO"

for url in "$R" "$BAD"; do
	rc=0
	"$HEUREKA" get HELLO --server "$url" >"$T/no.out" 2>&1 || rc=$?
	[ "$rc" -ne 0 ] || fail "heureka get without the right credentials succeeded"
	grep -q 18081 "$T/no.out" && fail "registry data without credentials"
	cat "$T/no.out" >>"$T/all.out"
done

# A server that does not answer: the message names it without the password.
rc=0
"$HEUREKA" get HELLO --server "http://user:$PWURL@127.0.0.1:1/eureka/" \
    >"$T/down.out" 2>&1 || rc=$?
assert_eq 2 "$rc" "exit status with no server answering"
grep -q "127.0.0.1:1" "$T/down.out" || fail "no server named in: $(cat "$T/down.out")"

kill -TERM "$HELLO"
wait "$HELLO" 2>/dev/null || true
hk_disown "$HELLO"
# The example cancelled its lease on the way out (a write, authenticated).
wait_until 5 sh -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -u 'user:$PW' '${R}apps/HELLO')\" = 404 ]"
for f in "$T/hello.out" "$T/get.out" "$T/all.out" "$T/down.out"; do
	grep -F -- "$PW" "$f" && fail "the password in $f"
	grep -F -- "$PWURL" "$f" && fail "the password (encoded) in $f"
done
hk_stop S
