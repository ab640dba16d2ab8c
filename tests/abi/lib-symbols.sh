#!/bin/bash
# tests/abi/lib-symbols.sh: libheureka.so exports exactly the public API,
# the heureka_* functions heureka.h declares, and nothing else (issue 22:
# 33 internal hk_* names and, before that, libcommon's leaked into every
# program linking it). Reads the dynamic symbol table with nm -D.
# And a library never ends its host (issue 22): libheureka.so must not
# import abort, exit or their kin, so no path in it can call them (the
# library's flavour of common/xmalloc.c, log.c and bug.c has none).
set -u
LIB=${LIBHEUREKA_SO:?LIBHEUREKA_SO is not set (make check sets it)}
HDR=${TESTS_DIR:?}/../client/heureka.h
fail=0

if [ ! -f "$LIB" ]; then
	echo "FAIL: $LIB not built"
	exit 1
fi
# Defined, exported symbols; the linker's own (_init, _fini, _edata, ...)
# and version nodes are not ours to judge.
exported=$(nm -D --defined-only "$LIB" | awk '{ print $3 }' |
    grep -v -E '^(_init|_fini|_edata|_end|__bss_start)$' |
    grep -v -E '^[A-Z_0-9.]+$' | sed 's/@.*//' | sort -u)
declared=$(grep -o -E '\bheureka_[a-z_]+[[:space:]]*\(' "$HDR" |
    sed 's/[[:space:](]*$//' | sort -u)

extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
if [ -n "$extra" ]; then
	echo "FAIL: exported but not public API ($(echo "$extra" | wc -l)):"
	echo "$extra" | sed 's/^/  /'
	fail=1
fi
if [ -n "$missing" ]; then
	echo "FAIL: declared in heureka.h but not exported:"
	echo "$missing" | sed 's/^/  /'
	fail=1
fi
# Functions that end the process (assert() is __assert_fail).
enders=$(nm -D --undefined-only "$LIB" | awk '{ print $NF }' |
    sed 's/@.*//' | grep -x -E \
    '(abort|exit|_exit|_Exit|quick_exit|err|errx|verr|verrx|__assert_fail|__assert_perror_fail)' |
    sort -u)
if [ -n "$enders" ]; then
	echo "FAIL: imports functions that end the host process:"
	echo "$enders" | sed 's/^/  /'
	fail=1
fi
[ $fail = 0 ] && echo "ok: $(echo "$exported" | wc -l) symbols, all heureka_* from heureka.h; no abort/exit imported"
exit $fail
