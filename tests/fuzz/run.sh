#!/bin/sh
# tests/fuzz/run.sh: runs each libFuzzer target built by make fuzz for a
# bounded time (FUZZ_SECONDS each, default 20), seeded from its regression
# corpus and tests/data, and fails when any target finds a crash, a leak
# or undefined behaviour. A finding is left in tests/fuzz/found/<target>/
# of the build folder: copy it into tests/fuzz/regress/<target>/ so that
# make check replays it from then on.
set -eu
: "${SRCDIR:=.}"
: "${BUILDDIR:=.}"
: "${FUZZ_SECONDS:=20}"
TARGETS="json_instance xml_instance repl_batch router http config gzip dnsmsg core_ops"
rc=0
for t in $TARGETS; do
	bin=$BUILDDIR/tests/fuzz/fuzz_$t
	[ -x "$bin" ] || { echo "fuzz: $bin missing (make fuzz)" >&2; exit 1; }
	work=$BUILDDIR/tests/fuzz/corpus/$t
	found=$BUILDDIR/tests/fuzz/found/$t
	mkdir -p "$work" "$found"
	seeds="$SRCDIR/tests/fuzz/regress/$t"
	case "$t" in
	json_instance | xml_instance | repl_batch) seeds="$seeds $SRCDIR/tests/data" ;;
	esac
	echo "==> fuzz $t for ${FUZZ_SECONDS}s"
	# shellcheck disable=SC2086
	if ! ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
	    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	    "$bin" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=1024 \
	    -max_len=65536 -print_final_stats=0 -artifact_prefix="$found/" \
	    "$work" $seeds >"$BUILDDIR/tests/fuzz/$t.log" 2>&1; then
		echo "FAIL: fuzz $t found a problem; input in $found" >&2
		tail -n 40 "$BUILDDIR/tests/fuzz/$t.log" >&2
		rc=1
	else
		grep -E '^#[0-9]+.*DONE|Done [0-9]+ runs' \
		    "$BUILDDIR/tests/fuzz/$t.log" | tail -n 1 || true
	fi
done
exit $rc
