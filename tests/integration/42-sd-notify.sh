#!/bin/sh
# 42-sd-notify.sh: heurekad speaks systemd's notify protocol without
# libsystemd (the unit is Type=notify): READY=1 on $NOTIFY_SOCKET once it
# is open for traffic, STOPPING=1 on SIGTERM. A python listener stands in
# for systemd.
. "$(dirname "$0")/lib.sh"

T=$(hk_tmp)
SOCK=$T/notify
"$HK_PYTHON" - "$SOCK" "$T/got" <<'EOF2' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(1)
end = time.time() + 40
with open(sys.argv[2], "a") as out:
    while time.time() < end:
        try:
            msg = s.recv(4096).decode()
        except socket.timeout:
            continue
        out.write(msg + "\n")
        out.flush()
        if "STOPPING=1" in msg:
            break
EOF2
LISTENER=$!
hk_own "$LISTENER"
wait_until 10 test -S "$SOCK"

export NOTIFY_SOCKET=$SOCK
hk_start s --peers "" -D eureka.server.wait-time-in-ms-when-sync-empty=0
unset NOTIFY_SOCKET

got_ready()
{
	grep -qx 'READY=1' "$T/got"
}
wait_until 10 got_ready
hk_stop s
got_stopping()
{
	grep -qx 'STOPPING=1' "$T/got"
}
wait_until 10 got_stopping
wait "$LISTENER" 2>/dev/null || true
hk_disown "$LISTENER"
exit 0
