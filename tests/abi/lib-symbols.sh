#!/bin/bash
# tests/abi/lib-symbols.sh: libheureka.so exports exactly the public API,
# the heureka_* functions heureka.h declares, and nothing else (issue 22:
# 33 internal hk_* names and, before that, libcommon's leaked into every
# program linking it). Reads the dynamic symbol table with nm -D.
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
[ $fail = 0 ] && echo "ok: $(echo "$exported" | wc -l) symbols, all heureka_* from heureka.h"
exit $fail
