#!/bin/sh
# 69-sighup-start.sh: a SIGHUP that arrives as soon as heurekad's port
# accepts (a config-management reload racing a restart) reloads the
# configuration; it never kills the process (issue 21: it did, 10 tries
# of 10, because the handlers were installed after the listener opened).
# Ten starts on a free port; each gets its SIGHUP the moment a connect
# to the port succeeds, then must answer /health,
# log the reload and stop cleanly with SIGTERM.
. "$(dirname "$0")/lib.sh"

T=$(hk_tmp)
try=0
busy=0
while [ "$try" -lt 10 ]; do
	try=$((try + 1))
	rm -f "$T/port"
	# The race is run by Python: spawn, connect until the port
	# accepts, SIGHUP at once, then report whether the process still
	# answers.
	out=$("$HK_PYTHON" - "$HEUREKAD" "$T/port" "$T/log.$try" <<'PY'
import os, signal, socket, subprocess, sys, time, urllib.request
exe, portfile, log = sys.argv[1:4]
# A free port, so the first accepted connect is the moment to signal.
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
with open(log, "w") as lf:
    p = subprocess.Popen([exe, "-b", "127.0.0.1", "-p", str(port),
        "--port-file", portfile,
        "-D", "eureka.server.wait-time-in-ms-when-sync-empty=0"],
        stdout=lf, stderr=lf, stdin=subprocess.DEVNULL)
deadline = time.time() + 15
up = False
while p.poll() is None and time.time() < deadline:
    c = socket.socket()
    try:
        c.connect(("127.0.0.1", port))
        up = True
    except OSError:
        pass
    finally:
        c.close()
    if up:
        break
if not up:
    print("no-start", p.poll()); sys.exit(0)
p.send_signal(signal.SIGHUP)
ok = False
while time.time() < deadline and p.poll() is None:
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/health" % port,
            timeout=2).read()
        ok = True
        break
    except Exception:
        time.sleep(0.05)
if p.poll() is not None:
    print("died", p.returncode); sys.exit(0)
# The reload is done on the loop: wait for its log line.
while time.time() < deadline and "configuration reloaded" not in open(log).read():
    time.sleep(0.05)
reloaded = "configuration reloaded" in open(log).read()
p.send_signal(signal.SIGTERM)
try:
    rc = p.wait(timeout=15)
except subprocess.TimeoutExpired:
    p.kill(); rc = "timeout"
print("alive" if ok and reloaded else "no-reload" if ok else "no-answer", rc)
PY
)
	echo "try $try: $out" >&2
	# The free port was taken in between (exit 1, address in use):
	# another port, a bounded number of times.
	if [ "$out" = "no-start 1" ] && [ "$busy" -lt 5 ]; then
		busy=$((busy + 1))
		try=$((try - 1))
		continue
	fi
	[ "$out" = "alive 0" ] || {
		cat "$T/log.$try" >&2
		fail "try $try: SIGHUP at start-up: $out (want: alive, reloaded, exit 0)"
	}
done
