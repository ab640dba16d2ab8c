#!/bin/sh
# tests/diff/regen-old.sh OLDSRC OLDBUILD: record the old path's answers
# to the corpus (tests/diff/expected). OLDSRC is a tree at the last commit
# with the header-time guard in front of evhttp's server (f7a2f1e, e.g.
# `git archive f7a2f1e | tar -x -C /tmp/old`), OLDBUILD its configured
# build directory with `make server/libserver.la common/libcommon.la`
# done. front_diff.c is compiled there with -DFRONT_OLD and run on
# tests/diff/heads.
set -eu
old=$1
ob=$2
here=$(cd "$(dirname "$0")" && pwd)
inc="-I$old/common -I$old/server -I$old/server/core -I$old/server/loop
    -I$old/server/front -I$ob"
# shellcheck disable=SC2086
cc -D_GNU_SOURCE -DFRONT_OLD -g -O1 $inc -o "$ob/front_diff_old" \
    "$here/front_diff.c" "$ob/server/.libs/libserver.a" \
    "$ob/common/.libs/libcommon.a" $(pkg-config --libs libevent \
    libevent_openssl yajl openssl expat zlib yaml-0.1) -lpthread -lm
"$ob/front_diff_old" "$here/heads" > "$here/expected"
echo "wrote $here/expected"
