#!/bin/sh
# 96-consul-clients.sh: Consul's own clients against heurekad's read-only
# Consul API (issue 26, docs/dns-consul.md): HashiCorp's Go client
# (github.com/hashicorp/consul/api) and Prometheus's Consul service
# discovery (github.com/prometheus/prometheus/discovery/consul, the code
# behind consul_sd_configs), both pinned in tests/interop/consul/go.mod
# and go.sum. `go build` fetches the modules through the Go module proxy
# on a fresh machine (GOTOOLCHAIN left as is: a Go older than go.mod's
# fetches the toolchain it names). What each client checks and prints is
# in tests/interop/consul/main.go.
. "$(dirname "$0")/lib.sh"

command -v go >/dev/null 2>&1 ||
    fail "go is required (Debian: golang-go; ./quickstart installs it)"
SRC=${TESTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)}/interop/consul
T=$(hk_tmp)
hk_log "building $SRC ($(go version))"
(cd "$SRC" && GOFLAGS=-mod=readonly go build -o "$T/consul-interop" .) \
    >"$T/build.log" 2>&1 || {
	cat "$T/build.log"
	fail "go build of the Consul interop program failed"
}

hk_start S
HEUREKA_ADDR=127.0.0.1:$HK_PORT_S timeout 180 "$T/consul-interop" \
    >"$T/out.log" 2>&1
rc=$?
cat "$T/out.log"
[ "$rc" -eq 0 ] || fail "Consul clients: exit $rc"
grep -q '^INTEROP-SUMMARY name=consul pass=[0-9]* fail=0$' "$T/out.log" ||
    fail "no clean summary"
hk_stop S
hk_log "ok"
