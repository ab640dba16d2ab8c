#!/bin/sh
# 48-http-strict.sh: HTTP strictness and header-time body limits (issue 9,
# "HTTP strictness" and "Memory"), probed over raw sockets by strict.py:
# two different Content-Length headers, "Content-Length: +N", a NUL in the
# replication header or any control character in a header -> 400 with a
# reason and nothing registered; PATCH and OPTIONS -> 405 with Allow; a
# body on a heartbeat or cancel, a register over max-body-bytes, a batch
# over max-batch-bytes and an Expect: 100-continue over the cap -> 413
# before the body is sent; keep-alive, pipelining and chunked bodies still
# work; 100 connections starting unfinished 8 MiB heartbeat bodies leave
# RSS bounded (not checked under ASan, whose quarantine holds freed memory);
# and the same refusals over TLS.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tls-lib.sh"

hk_start s -D eureka.server.max-batch-bytes=100000
asan=
hk_asan && asan=--asan
"$HK_PYTHON" "$TESTS_DIR/integration/strict.py" --port "$HK_PORT_s" \
    --pid "$HK_PID_s" $asan http || fail "HTTP strictness cases failed"
hk_alive s
hk_stop s

# The same refusals when the stream is TLS (the guard sees it decrypted).
hk_tls_certs "$(hk_tmp)"
HK_SCHEME=https
HK_CURL_TLS=(--cacert "$HK_TLS_DIR/ca.pem")
hk_start t -D server.ssl.enabled=true \
    -D server.ssl.certificate="$HK_TLS_DIR/server.pem" \
    -D server.ssl.certificate-private-key="$HK_TLS_DIR/server.key" \
    -D eureka.server.wait-time-in-ms-when-sync-empty=0
"$HK_PYTHON" "$TESTS_DIR/integration/strict.py" --port "$HK_PORT_t" \
    --pid "$HK_PID_t" --tls-ca "$HK_TLS_DIR/ca.pem" tls ||
    fail "HTTP strictness over TLS failed"
hk_stop t
