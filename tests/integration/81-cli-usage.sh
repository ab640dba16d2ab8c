#!/bin/sh
# 81-cli-usage.sh: a heureka lookup that finds nothing says what it did
# not find (exit 1; `get NOPE` printed nothing before); a bad argument
# says which and why (exit 64, EX_USAGE; `status APP ID SIDEWAYS` printed
# only the usage line); `--version` gives the git revision; the help and
# the man page say what `status --delete` makes Eureka do; the man page
# renders without warnings (issue 22).
. "$(dirname "$0")/lib.sh"

hk_need_cli
T=$(hk_tmp)

# expect WANT_RC PATTERN ARGS...: exit WANT_RC, PATTERN (grep -E) in stderr.
expect()
{
	hk_cli_expect "$T" "$@"
}

hk_start S
U=$HK_URL_S
hk_register "$U" BILLING i-1

hk_log "lookups that find nothing say so"
expect 1 "^heureka get: no application NOPE on $U\$" get NOPE --server "$U"
expect 1 "no instance i-9 of application BILLING on" get BILLING i-9 --server "$U"
expect 1 "no instance has VIP address nope on" vip nope --server "$U"
expect 1 "no instance i-9 of application BILLING" \
    status BILLING i-9 DOWN --server "$U"
[ -s "$T/out" ] && fail "a table printed for nothing: $(cat "$T/out")"
"$HEUREKA" get BILLING --server "$U" >"$T/out" || fail "get BILLING failed"
grep -q i-1 "$T/out" || fail "get BILLING: $(cat "$T/out")"

hk_log "bad arguments say which and why, exit 64"
expect 64 "SIDEWAYS is not a status \(UP, DOWN, STARTING, OUT_OF_SERVICE or UNKNOWN\)" \
    status BILLING i-1 SIDEWAYS --server "$U"
expect 64 "expected APP ID VALUE, got 1 argument" status BILLING --server "$U"
expect 64 "expected APP ID \(with --delete\), got 3 arguments" \
    status --delete BILLING i-1 UP --server "$U"
expect 64 "unexpected argument extra" apps extra
expect 64 "which application\?" get
expect 64 "unknown option --frobnicate" apps --frobnicate
expect 64 "--server needs a value" get BILLING --server
expect 64 "--interval 0: out of range" watch --interval 0
expect 64 "--timeout x: not a number" apps --timeout x
expect 64 "unknown command frobnicate" frobnicate
# The override was not touched by any of them.
assert_http 200 GET "${U}apps/BILLING/i-1" -H 'Accept: application/json'
grep -q '"status":"UP"' "$HK_BODY" || fail "status changed: $(cat "$HK_BODY")"

hk_log "status and --delete: the help says what Eureka does next"
"$HEUREKA" status --help >"$T/help" || fail "status --help"
grep -q "UNKNOWN" "$T/help" && grep -q "next heartbeat 404" "$T/help" &&
    grep -q "registers again" "$T/help" || fail "status --help: $(cat "$T/help")"
"$HEUREKA" status BILLING i-1 OUT_OF_SERVICE --server "$U" ||
    fail "status OUT_OF_SERVICE"
"$HEUREKA" status --delete BILLING i-1 --server "$U" || fail "status --delete"

hk_log "--version names the revision"
"$HEUREKA" --version >"$T/version" || fail "--version"
grep -Eq '^heureka [0-9][^ ]* \(revision [^ )]+\)$' "$T/version" ||
    fail "--version: $(cat "$T/version")"

hk_log "the man page renders without warnings"
if command -v man >/dev/null; then
	MAN=$(dirname "$0")/../../man/heureka.1
	MANWIDTH=80 man --warnings -l "$MAN" >"$T/man" 2>"$T/manerr" ||
	    fail "man -l heureka.1 failed: $(cat "$T/manerr")"
	[ -s "$T/manerr" ] && fail "man warnings: $(cat "$T/manerr")"
	grep -q "next heartbeat with 404" "$T/man" ||
	    fail "the man page does not say what --delete does"
else
	hk_log "(no man command: skipped)"
fi
hk_stop S
