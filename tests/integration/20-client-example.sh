#!/bin/sh
# 20-client-example.sh: the libheureka example registers itself, `heureka
# get` finds it (exit 0), unknown apps exit 1, a dead server exits 2, and
# SIGTERM on the example cancels its registration.
. "$(dirname "$0")/lib.sh"

hk_need_cli
[ -x "$HEUREKA_EXAMPLE" ] || fail "HEUREKA_EXAMPLE is not set"

hk_start S
T=$(hk_tmp)

"$HEUREKA_EXAMPLE" 18080 HELLO "$HK_URL_S" >"$T/hello.out" 2>&1 &
HELLO=$!
hk_own "$HELLO"

wait_until 10 "$HEUREKA" get HELLO --server "$HK_URL_S"
"$HEUREKA" get HELLO --server "$HK_URL_S" >"$T/get.out" ||
    fail "heureka get HELLO: exit $?"
grep -q '18080' "$T/get.out" || fail "port not in: $(cat "$T/get.out")"
ID=$(awk 'NR == 2 { print $2 }' "$T/get.out")
"$HEUREKA" get HELLO "$ID" --server "$HK_URL_S" >/dev/null ||
    fail "heureka get HELLO $ID: exit $?"
"$HEUREKA" get HELLO --json --server "$HK_URL_S" >"$T/get.json"
grep -q '"application"' "$T/get.json" || fail "--json: $(cat "$T/get.json")"
"$HEUREKA" apps --server "$HK_URL_S" | grep -q "^HELLO " ||
    fail "heureka apps does not list HELLO"

rc=0
"$HEUREKA" get NOPE --server "$HK_URL_S" >/dev/null 2>&1 || rc=$?
assert_eq 1 "$rc" "heureka get of an unknown app"
rc=0
"$HEUREKA" get HELLO nope-id --server "$HK_URL_S" >/dev/null 2>&1 || rc=$?
assert_eq 1 "$rc" "heureka get of an unknown instance"
rc=0
"$HEUREKA" get HELLO --server http://127.0.0.1:1/eureka/ >/dev/null 2>&1 ||
    rc=$?
assert_eq 2 "$rc" "heureka get with no server"
rc=0
"$HEUREKA" vip HELLO --server "$HK_URL_S" >/dev/null 2>&1 || rc=$?
assert_eq 0 "$rc" "heureka vip HELLO"

# The operator override, then its removal.
"$HEUREKA" status HELLO "$ID" OUT_OF_SERVICE --server "$HK_URL_S" ||
    fail "heureka status: exit $?"
"$HEUREKA" get HELLO "$ID" --server "$HK_URL_S" | grep -q OUT_OF_SERVICE ||
    fail "override not applied"
"$HEUREKA" status --delete HELLO "$ID" --server "$HK_URL_S" ||
    fail "heureka status --delete: exit $?"

kill -TERM "$HELLO"
wait "$HELLO" || fail "example exited $?"
hk_disown "$HELLO"
rc=0
"$HEUREKA" get HELLO --server "$HK_URL_S" >/dev/null 2>&1 || rc=$?
assert_eq 1 "$rc" "HELLO still registered after SIGTERM"
grep -q cancelled "$T/hello.out" || fail "no cancel: $(cat "$T/hello.out")"
hk_stop S
