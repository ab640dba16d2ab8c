#!/bin/sh
# tests/fuzz/build.sh: builds the libFuzzer targets (make fuzz runs it).
# Every source the targets reach (common/, server/ but main.c, and the
# generated dashboard assets) is compiled with clang's fuzzer coverage,
# ASan and UBSan; each target then links its fuzz_<name>.c against them.
# Environment (from make): FUZZ_CC, SRCDIR, BUILDDIR, FUZZ_CPPFLAGS (the
# project's include and define flags), FUZZ_LIBS (the libraries).
set -eu
: "${FUZZ_CC:=clang}"
: "${SRCDIR:=.}"
: "${BUILDDIR:=.}"
: "${FUZZ_CPPFLAGS:=}"
: "${FUZZ_LIBS:=}"
TARGETS="json_instance xml_instance repl_batch router http config gzip dnsmsg core_ops"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CFLAGS="-g -O1 -fno-omit-frame-pointer $SAN"
OBJ=$BUILDDIR/tests/fuzz/obj
mkdir -p "$OBJ"

command -v "$FUZZ_CC" >/dev/null 2>&1 || {
	echo "make fuzz: $FUZZ_CC not found (install clang, or make fuzz FUZZ_CC=...)" >&2
	exit 1
}
objs=""
for src in "$SRCDIR"/common/*.c "$SRCDIR"/server/*.c "$SRCDIR"/server/*/*.c \
    "$BUILDDIR"/server/front/dashboard_assets.c; do
	case "$src" in */server/main.c) continue ;; esac
	o=$OBJ/$(basename "$(dirname "$src")")_$(basename "$src" .c).o
	if [ ! -f "$o" ] || [ "$src" -nt "$o" ]; then
		echo "  FUZZCC   $src"
		# shellcheck disable=SC2086
		"$FUZZ_CC" $CFLAGS -fsanitize=fuzzer-no-link $FUZZ_CPPFLAGS \
		    -c "$src" -o "$o"
	fi
	objs="$objs $o"
done
for t in $TARGETS; do
	echo "  FUZZLD   tests/fuzz/fuzz_$t"
	# shellcheck disable=SC2086
	"$FUZZ_CC" $CFLAGS -fsanitize=fuzzer $FUZZ_CPPFLAGS \
	    -o "$BUILDDIR/tests/fuzz/fuzz_$t" "$SRCDIR/tests/fuzz/fuzz_$t.c" \
	    $objs $FUZZ_LIBS
done
