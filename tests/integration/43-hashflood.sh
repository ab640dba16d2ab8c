#!/bin/sh
# 43-hashflood.sh: hash flooding (issue 9). hashflood.py computes 20,000
# application names that all fell in one bucket of the old response cache
# (FNV-1a mod 4096, checked here against that scheme) and registers them,
# then one instance id in 5,000 applications (which the old id index kept
# in one chain). /metrics reports every name-keyed table's buckets,
# entries and longest chain: with the keyed, growing tables the longest
# chain stays a handful, and the id index holds one entry per id however
# many applications share it. Speed is not asserted here: see
# tests/bench/hashflood for the figures.
. "$(dirname "$0")/lib.sh"

HF="$HK_PYTHON $(dirname "$0")/hashflood.py"
NAMES=20000
SHARED=5000
MAXCHAIN=16

hk_log "the names collide under the old scheme"
$HF names $NAMES >"$HK_ROOT/names"
assert_eq $NAMES "$(sort -u "$HK_ROOT/names" | wc -l)" "distinct names"
assert_eq $NAMES "$($HF check "$HK_ROOT/names")" "old-scheme longest chain"

# One client address registers everything: no per-address rate limit.
hk_start s -D eureka.server.register-rate-per-second=0 \
    -D eureka.server.enable-self-preservation=false \
    -D eureka.server.renewal-percent-threshold=0 \
    -D eureka.server.eviction-interval-timer-in-ms=1000
U=$HK_URL_s

# Value of one sample of /metrics (name{labels}) of s, or fail.
metric() { hk_metric "$1" "$HK_PORT_s"; }

# Fail unless table $1's longest chain is at most MAXCHAIN.
chain_ok()
{
	local n
	n=$(metric "heureka_hash_table_longest_chain{table=\"$1\"}")
	[ "$n" -le $MAXCHAIN ] ||
	    fail "$1: longest chain $n (entries $(metric \
	    "heureka_hash_table_entries{table=\"$1\"}"))"
	echo "$1: longest chain $n" >&2
}

hk_log "register $NAMES colliding application names"
$HF register --port "$HK_PORT_s" --names $NAMES --conns 4 ||
    fail "registering the names"
assert_http 200 GET "${U}apps" -H "Accept: application/json"
assert_eq $NAMES "$(hk_json 'len(d["applications"]["application"])')" \
    "every app in GET apps"
assert_eq $NAMES "$(metric 'heureka_hash_table_entries{table="cache_fragments"}')" \
    "cache fragments"
chain_ok cache_fragments
b=$(metric 'heureka_hash_table_buckets{table="cache_fragments"}')
[ "$b" -ge $NAMES ] || fail "cache fragments: $b buckets for $NAMES entries"
chain_ok registry_apps
chain_ok registry_leases

hk_log "one id in $SHARED applications, evicted after 1 s"
$HF register --port "$HK_PORT_s" --shared-id shared --apps $SHARED \
    --conns 4 --duration 1 || fail "registering the shared id"
assert_http 200 GET "${U}instances/i-1" -H "Accept: application/json"
# Two ids in all: i-1 (every colliding name) and shared.
chain_ok registry_ids
evicted()
{
	[ "$(metric heureka_evictions_total)" -ge $SHARED ]
}
wait_until 60 evicted
assert_eq 1 "$(metric 'heureka_hash_table_entries{table="registry_ids"}')" \
    "id index after the evictions"
assert_http 404 GET "${U}instances/shared"
assert_http 404 GET "${U}apps/HFID000001/shared"
assert_http 200 GET "${U}apps/$(head -1 "$HK_ROOT/names")/i-1"
chain_ok registry_leases
hk_stop s
