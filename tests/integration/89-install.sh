#!/bin/sh
# 89-install.sh: `make install` puts the default configuration under
# $(sysconfdir)/heureka/ (without overwriting an operator's file, and
# uninstall removes only what is unchanged), and the systemd unit names
# the configured sysconfdir, not a hard-coded /etc. Runs configure in a
# scratch directory with --sysconfdir=/opt/hk-test/etc and makes only the
# unit and the data (no compiling).
. "$(dirname "$0")/lib.sh"

d=$(hk_tmp)
TOP=$(cd "$TESTS_DIR/.." && pwd)
B=$d/build
DEST=$d/dest
mkdir -p "$B"
hk_log "configure --sysconfdir=/opt/hk-test/etc"
(cd "$B" && "$TOP/configure" --prefix=/opt/hk-test --sysconfdir=/opt/hk-test/etc \
    --disable-silent-rules >"$d/configure.out" 2>&1) ||
    fail "configure: $(tail -n 20 "$d/configure.out")"

hk_log "the systemd unit uses the configured sysconfdir"
make -C "$B" etc/heurekad.service >"$d/make.out" 2>&1 ||
    fail "make etc/heurekad.service: $(tail -n 20 "$d/make.out")"
U=$B/etc/heurekad.service
grep -qx 'ExecStart=/opt/hk-test/sbin/heurekad -c /opt/hk-test/etc/heureka/heurekad.yml' "$U" ||
    fail "ExecStart: $(grep ExecStart "$U")"
grep -qx 'EnvironmentFile=-/opt/hk-test/etc/default/heurekad' "$U" ||
    fail "EnvironmentFile: $(grep EnvironmentFile "$U")"
! grep -n '/etc/heureka\|/etc/default' "$U" | grep -v '/opt/hk-test/etc' ||
    fail "a hard-coded /etc path in the unit"
! grep -q '@[a-z]*@' "$U" || fail "unsubstituted: $(grep '@[a-z]*@' "$U")"

hk_log "make install-data puts the configuration under sysconfdir/heureka"
make -C "$B" install-data DESTDIR="$DEST" >"$d/install.out" 2>&1 ||
    fail "make install-data: $(tail -n 20 "$d/install.out")"
C=$DEST/opt/hk-test/etc/heureka
for f in heurekad.yml heurekad-cluster.yml heurekad-secure.yml; do
	cmp -s "$TOP/etc/$f" "$C/$f" || fail "$C/$f is not etc/$f"
done
[ -f "$DEST/opt/hk-test/lib/systemd/system/heurekad.service" ] ||
    fail "the unit is not installed"
"$HEUREKAD" --check-config -c "$C/heurekad.yml" >"$d/cc" 2>&1 ||
    fail "the installed heurekad.yml does not load: $(cat "$d/cc")"

hk_log "the README, NEWS and the docs pages the README links are installed"
DOC=$DEST/opt/hk-test/share/doc/heureka
for f in README NEWS; do
	cmp -s "$TOP/$f" "$DOC/$f" || fail "$DOC/$f is not $f"
done
for f in $(grep -o 'docs/[a-zA-Z]*\.md' "$TOP/README" | sort -u); do
	[ -f "$TOP/$f" ] || fail "the README links $f, which does not exist"
	cmp -s "$TOP/$f" "$DOC/$(basename "$f")" || fail "$f is not installed"
done
# NEWS speaks of the version heurekad says it is.
ver=$("$HEUREKAD" --version | sed -n 's/^heurekad \([^ ]*\) .*/\1/p')
grep -q "$ver" "$TOP/NEWS" || fail "NEWS does not mention version $ver"

hk_log "a second install keeps the operator's file"
echo "# changed by the operator" >>"$C/heurekad.yml"
make -C "$B" install-data DESTDIR="$DEST" >"$d/install2.out" 2>&1 ||
    fail "second make install-data: $(tail -n 20 "$d/install2.out")"
tail -n 1 "$C/heurekad.yml" | grep -q 'changed by the operator' ||
    fail "install overwrote the operator's heurekad.yml"

hk_log "uninstall removes what is unchanged, keeps what is not"
# (Only the configuration: nothing was compiled, so no binary to remove.)
make -C "$B" uninstall-local DESTDIR="$DEST" >"$d/uninstall.out" 2>&1 ||
    fail "make uninstall: $(tail -n 20 "$d/uninstall.out")"
[ ! -e "$C/heurekad-cluster.yml" ] || fail "uninstall left heurekad-cluster.yml"
[ -f "$C/heurekad.yml" ] || fail "uninstall removed the operator's heurekad.yml"
