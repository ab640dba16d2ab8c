#!/bin/sh
# 57-watch-dormant.sh: the watch keeps no window nobody can read. With no
# watcher ever connected no event is framed (watch/stats "frames" stays 0)
# and an id equal to the current version still resumes with nothing
# missed; after a watcher leaves, a resume from the id it held gets every
# frame missed while fewer than heureka.watch.window events passed; once
# more passed the ring goes dormant (frames stop) and that id gets the
# snapshot, as an id out of the window always does.
. "$(dirname "$0")/lib.sh"

SSE="$HK_PYTHON $(dirname "$0")/sse.py"
hk_start A -D heureka.watch.window=8
A=$HK_URL_A
W=${A}heureka/watch
wstat() { hk_curl "${A}heureka/watch/stats" | "$HK_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
has() { grep -q "$2" "$1"; }
events() { grep -v '^HTTP\|^EOF' "$1" | cut -d' ' -f2-; }

hk_log "no watcher ever: events counted, none framed"
for i in 1 2 3 4 5 6 7 8 9 10; do hk_register "$A" APP1 "a$i"; done
assert_eq 11 "$(wstat events)" "events (10 ADDED, 1 LEADER)"
assert_eq 0 "$(wstat frames)" "frames with no watcher ever"
# The current version resumes with nothing missed, no snapshot.
V=$(wstat version)
OUT=$(hk_curl --max-time 1 -H "Last-Event-ID: $V" "$W" || true)
assert_eq 1 "$(wstat resumed)" "resumed at the current version"
case "$OUT" in *SYNCED*) fail "snapshot for the current version" ;; esac
# An older id gets the snapshot.
OUT=$(hk_curl --max-time 1 -H "Last-Event-ID: $((V - 1))" "$W" || true)
assert_contains "event: SYNCED" "$OUT" "snapshot for an older id"
assert_eq 1 "$(wstat resumed)" "resumed"
wait_until 5 test "$(wstat watchers)" = 0

hk_log "a watcher leaves; a resume from its id gets every missed frame"
F0=$(wstat frames)
$SSE "$W" "$HK_ROOT/w1" & P1=$!; hk_own "$P1"
wait_until 5 has "$HK_ROOT/w1" SYNCED
S=$(events "$HK_ROOT/w1" | grep SYNCED | cut -d' ' -f2)	# the snapshot's id
hk_register "$A" APPX r1
hk_register "$A" APPX r2
wait_until 5 has "$HK_ROOT/w1" "ADDED .* APPX r2"
kill "$P1"; wait "$P1" 2>/dev/null || true
wait_until 5 test "$(wstat watchers)" = 0
hk_register "$A" APPX r3
hk_register "$A" APPX r4
assert_eq $((F0 + 5)) "$(wstat frames)" "frames after the watcher left"
$SSE "$W" "$HK_ROOT/w2" --last-id "$S" & P2=$!; hk_own "$P2"
wait_until 5 has "$HK_ROOT/w2" "ADDED .* APPX r4"
EXP="ADDED $((S + 1)) APPX r1 UP
LEADER $((S + 2)) APPX r1 UP
ADDED $((S + 3)) APPX r2 UP
ADDED $((S + 4)) APPX r3 UP
ADDED $((S + 5)) APPX r4 UP"
assert_eq "$EXP" "$(events "$HK_ROOT/w2")" "resumed from the snapshot's id"
assert_eq 2 "$(wstat resumed)" "resumed"
L=$(events "$HK_ROOT/w2" | tail -1 | cut -d' ' -f2)	# the last id it saw
kill "$P2"; wait "$P2" 2>/dev/null || true
wait_until 5 test "$(wstat watchers)" = 0

hk_log "past the window since it left: dormant, old ids get the snapshot"
for i in 5 6 7 8 9 10 11 12 13; do hk_register "$A" APPX "r$i"; done
F1=$(wstat frames)
for i in 14 15 16; do hk_register "$A" APPX "r$i"; done
assert_eq "$F1" "$(wstat frames)" "no frames while dormant"
for id in "$L" "$S"; do
	OUT=$(hk_curl --max-time 1 -H "Last-Event-ID: $id" "$W" || true)
	assert_contains "event: SYNCED" "$OUT" "snapshot for id $id"
	assert_contains '"instanceId":"r16"' "$OUT" "the snapshot is current"
done
assert_eq 2 "$(wstat resumed)" "resumed"
wait_until 5 test "$(wstat watchers)" = 0

hk_log "a watcher wakes the ring; its snapshot's id resumes"
$SSE "$W" "$HK_ROOT/w3" & P3=$!; hk_own "$P3"
wait_until 5 has "$HK_ROOT/w3" SYNCED
S=$(events "$HK_ROOT/w3" | grep SYNCED | cut -d' ' -f2)
kill "$P3"; wait "$P3" 2>/dev/null || true
wait_until 5 test "$(wstat watchers)" = 0
hk_register "$A" APP1 b1
$SSE "$W" "$HK_ROOT/w4" --last-id "$S" & P4=$!; hk_own "$P4"
wait_until 5 has "$HK_ROOT/w4" "ADDED .* APP1 b1"
assert_eq "ADDED $((S + 1)) APP1 b1 UP" "$(events "$HK_ROOT/w4")" "resumed after waking"
assert_eq 3 "$(wstat resumed)" "resumed"
kill "$P4"; wait "$P4" 2>/dev/null || true

hk_alive A
hk_stop A
hk_log "ok"
