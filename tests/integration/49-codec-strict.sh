#!/bin/sh
# 49-codec-strict.sh: codec strictness over HTTP (issue 9): a number or a
# boolean for status, a word where a number must be, duplicate keys (in an
# instance, its metadata, the root), lone UTF-16 surrogate escapes,
# negative or out-of-range timestamps, in JSON; negative and huge
# timestamps, a repeated element, a surrogate character reference and a
# word for the port in XML: each answers 400 with a reason and leaves the
# registry unchanged (strict.py codec).
. "$(dirname "$0")/lib.sh"

hk_start s
"$HK_PYTHON" "$TESTS_DIR/integration/strict.py" --port "$HK_PORT_s" \
    --pid "$HK_PID_s" codec || fail "codec strictness cases failed"
hk_alive s
hk_stop s
