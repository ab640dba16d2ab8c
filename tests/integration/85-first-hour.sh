#!/bin/sh
# 85-first-hour.sh: what a new user meets first. `./quickstart run` passes
# its arguments to heurekad, has a --help and prints the URL heurekad
# really listens on; the shipped single-node configuration has no peer
# (a node started from it on any port answers reads at once) and the
# cluster example is a file of its own; listening on every interface
# without authentication is said in one WARN line naming the keys that
# change it; usage errors exit 64 (EX_USAGE), configuration errors 78;
# --version prints the version and the git revision.
. "$(dirname "$0")/lib.sh"

d=$(hk_tmp)
TOP=$TESTS_DIR/..
QS=$TOP/quickstart

hk_log "./quickstart run --help"
rc=0
HEUREKAD=$HEUREKAD "$QS" run --help >"$d/help" 2>&1 || rc=$?
assert_eq 0 "$rc" "exit status of ./quickstart run --help ($(head -c 300 "$d/help"))"
assert_contains "heurekad" "$(cat "$d/help")" "run --help names heurekad"
assert_contains "-p PORT" "$(cat "$d/help")" "run --help shows heurekad's options"
rc=0
"$QS" --help >"$d/help" 2>&1 || rc=$?
assert_eq 0 "$rc" "exit status of ./quickstart --help"
assert_contains "run [HEUREKAD ARGS]" "$(cat "$d/help")" "./quickstart --help"

hk_log "./quickstart run -p 0 -b 127.0.0.1: the arguments reach heurekad, the real URL is printed"
# HEUREKAD (set by make check) is the binary to run: no package check, no
# build. The port is a free one, so the URL cannot be a hard-coded 8761.
HEUREKAD=$HEUREKAD setsid "$QS" run -p 0 -b 127.0.0.1 >"$d/qs.out" 2>"$d/qs.err" &
qs=$!
hk_own "$qs"
# setsid: its own process group, which gets the Ctrl-C below as a
# terminal's foreground group would (heurekad included).
dump_qs()
{
	kill -9 -- "-$qs" 2>/dev/null || true
	echo "--- quickstart stdout:"; cat "$d/qs.out"
	echo "--- stderr:"; tail -n 30 "$d/qs.err"
} >&2
hk_on_fail dump_qs
wait_until 20 grep -q 'listening on http://127.0.0.1:[0-9]*/' "$d/qs.out"
url=$(grep -o 'http://127.0.0.1:[0-9]*/' "$d/qs.out" | head -n 1)
port=${url#http://127.0.0.1:}
port=${port%/}
[ "$port" != 8761 ] && [ "$port" -gt 0 ] || fail "printed port [$port]"
assert_http 200 GET "${url}eureka/apps"
assert_contains "${url}eureka/" "$(cat "$d/qs.out")" "the API URL printed"
# The port heurekad logged is the one printed.
grep -q "listening on 127.0.0.1:$port" "$d/qs.err" ||
    fail "heurekad's log does not name port $port"
kill -INT -- "-$qs"
rc=0
wait "$qs" || rc=$?
hk_disown "$qs"
assert_eq 0 "$rc" "./quickstart run exit status after SIGINT"
! hk_curl -o /dev/null "${url}eureka/apps" 2>/dev/null ||
    fail "heurekad still answers after ./quickstart run stopped"

hk_log "etc/heurekad.yml: a single node with no peer, on any port"
hk_start one -c "$TOP/etc/heurekad.yml"
assert_http 200 GET "${HK_URL_one}apps"
grep -q "listening on 127.0.0.1:$HK_PORT_one (0 peers)" "$HK_ROOT/one.log" ||
    fail "a node from etc/heurekad.yml has peers: $(grep -i peer "$HK_ROOT/one.log")"
hk_register "$HK_URL_one" FIRST f1
assert_http 200 GET "${HK_URL_one}apps/FIRST"
hk_stop one

hk_log "etc/heurekad-cluster.yml: the three-node example"
[ -f "$TOP/etc/heurekad-cluster.yml" ] || fail "no etc/heurekad-cluster.yml"
"$HEUREKAD" --check-config -c "$TOP/etc/heurekad-cluster.yml" >"$d/cl" 2>&1 ||
    fail "--check-config of the cluster example: $(cat "$d/cl")"
for p in 8761 8762 8763; do
	grep -q "^eureka.client.service-url.defaultZone=.*localhost:$p/eureka/" "$d/cl" ||
	    fail "cluster example lacks peer $p: $(grep defaultZone "$d/cl")"
done
grep -q 'heurekad-cluster.yml' "$QS" || fail "./quickstart cluster does not use the cluster example"

hk_log "one WARN line for all interfaces without authentication"
hk_start open -b 0.0.0.0
n=$(grep -c 'WARN.*all interfaces.*authentication' "$HK_ROOT/open.log" || true)
assert_eq 1 "$n" "WARN lines about an open listener"
w=$(grep 'WARN.*all interfaces' "$HK_ROOT/open.log")
assert_contains "server.address" "$w" "the WARN names the address key"
assert_contains "spring.security.user.password" "$w" "the WARN names the password key"
hk_stop open
hk_start local
! grep -q 'all interfaces' "$HK_ROOT/local.log" || fail "WARN on 127.0.0.1"
hk_stop local
hk_start authed -b 0.0.0.0 -D spring.security.user.password=pw
! grep -q 'all interfaces' "$HK_ROOT/authed.log" || fail "WARN with authentication on"
hk_stop authed

hk_log "usage errors exit 64, configuration errors 78"
for bad in "--frobnicate" "-p" "-D nokeyvalue" "-c" "-x"; do
	rc=0
	# shellcheck disable=SC2086
	timeout 10 "$HEUREKAD" $bad >"$d/out" 2>&1 || rc=$?
	assert_eq 64 "$rc" "exit status for [$bad] ($(head -c 300 "$d/out"))"
	[ -s "$d/out" ] || fail "[$bad]: no message"
done
rc=0
timeout 10 "$HEUREKAD" -D eureka.server.no-such-key=1 >"$d/out" 2>&1 || rc=$?
assert_eq 78 "$rc" "exit status for an unknown key"

hk_log "the README: two screens, a table of contents, two quick-start commands"
RD=$TOP/README
n=$(wc -l <"$RD")
[ "$n" -le 160 ] || fail "the README has $n lines"
grep -qx 'Contents' "$RD" || fail "the README has no Contents"
# The Quick start section: from its heading to the next one.
qs=$(awk '/^Quick start$/ { f = 1; next } f && /^[A-Z][a-z]/ && prev ~ /^$/ && getline nl > 0 && nl ~ /^---/ { exit } f { print } { prev = $0 }' "$RD")
cmds=$(echo "$qs" | grep -E '^    \./' | awk '{ print $1, $2 }')
assert_eq "./quickstart run
./quickstart test" "$cmds" "the quick-start commands"
for w in 'defaultZone=http://localhost:8761/eureka/' 'eureka.serviceUrl.default' \
    "servicePath: '/eureka/apps/'" 'eureka_client.init' 'fargo.NewConn' \
    'heurekad -p 18761 -b 127.0.0.1' 'SERVER_PORT='; do
	grep -qF "$w" "$RD" || fail "the README does not show [$w]"
done
for f in $(grep -o 'docs/[a-zA-Z]*\.md' "$RD" | sort -u); do
	[ -f "$TOP/$f" ] || fail "the README links $f, which does not exist"
done

hk_log "--version: version and git revision"
"$HEUREKAD" --version >"$d/v" 2>&1 || fail "--version exit status"
v=$(cat "$d/v")
case "$v" in
"heurekad "[0-9]*.[0-9]*" (revision "?*")") ;;
*) fail "--version prints [$v]" ;;
esac
