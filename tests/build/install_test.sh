#!/bin/sh
# The install, as a user gets it (issue 8): `meson install --destdir` into
# a temporary directory, then the examples built out of tree with nothing
# but `pkg-config --cflags --libs spfkit` (and spfkit-event) and run.
#
#   install_test.sh MESON BUILD_ROOT SOURCE_ROOT VERSION SANITIZE CC...
#
# Also checked: the files installed (and none of the build's), the
# SONAMEs, each public header compiling on its own (C, and C++ when there
# is a compiler), libspfkit.a linking a program on its own, and the
# installed programs needing no libspfkit.so (they link the archives).
# Skipped (77) under sanitizers: an instrumented library cannot be linked
# by a plain out-of-tree build.
set -eu
meson=$1 build=$2 src=$3 version=$4 sanitize=$5
shift 5
CC=${*:-cc}
# meson test points LD_LIBRARY_PATH at the build tree: the installed copies are wanted here
unset LD_LIBRARY_PATH
if [ "$sanitize" != none ]; then
	echo "skipped: a -Db_sanitize=$sanitize build is not installable as is"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/spfkit-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
dest=$tmp/dest
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! "$meson" install -C "$build" --no-rebuild --destdir "$dest" >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	echo "FAIL: meson install --destdir"
	exit 1
fi

# Where things went: from the installed .pc files.
pcfile=$(find "$dest" -name spfkit.pc | head -n 1)
[ -n "$pcfile" ] || { echo "FAIL: no spfkit.pc installed"; exit 1; }
pcdir=$(dirname "$pcfile")
prefix=$(sed -n 's/^prefix=//p' "$pcfile")
libdir=$(dirname "$pcdir")
root=$dest$prefix
inc=$root/include

# ---- the files ----------------------------------------------------------
for f in "$libdir/libspfkit.so.1" "$libdir/libspfkit.so" "$libdir/libspfkit.a" \
	"$pcdir/spfkit.pc" "$inc/spfkit/spfkit.h" "$inc/spfkit/common.h" \
	"$inc/spfkit/version.h" "$root/share/man/man1/spfkit.1" "$root/bin/spfkit"; do
	if [ -e "$f" ]; then ok "installed ${f#"$dest"}"; else fail "not installed: ${f#"$dest"}"; fi
done
event=0
if [ -e "$pcdir/spfkit-event.pc" ]; then
	event=1
	for f in "$libdir/libspfkit-event.so.1" "$libdir/libspfkit-event.a" \
		"$inc/spfkit/event.h" "$root/sbin/spfkit-policyd" "$root/share/man/man8/spfkit-policyd.8"; do
		if [ -e "$f" ]; then ok "installed ${f#"$dest"}"; else fail "not installed: ${f#"$dest"}"; fi
	done
	if grep -q '^Requires:.*spfkit.*libevent' "$pcdir/spfkit-event.pc"; then
		ok "spfkit-event.pc requires spfkit and libevent"
	else
		fail "spfkit-event.pc: $(grep '^Requires' "$pcdir/spfkit-event.pc" || echo 'no Requires')"
	fi
else
	echo "(no libevent: libspfkit-event and spfkit-policyd not built)"
fi
stray=$(find "$inc/spfkit" -type f ! -name '*.h')
[ -z "$stray" ] && ok "only headers in include/spfkit" || fail "not headers: $stray"
if grep -q "^#define SPFKIT_VERSION_STRING \"$version\"" "$inc/spfkit/version.h"; then
	ok "version.h says $version"
else
	fail "version.h: $(grep VERSION_STRING "$inc/spfkit/version.h")"
fi
for lib in spfkit spfkit-event; do
	[ -e "$libdir/lib$lib.so.1" ] || continue
	so=$(readelf -dW "$libdir/lib$lib.so.1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	[ "$so" = "lib$lib.so.1" ] && ok "SONAME $so" || fail "lib$lib.so.1 has SONAME '$so'"
done

# ---- pkg-config, pointed at the destdir ----------------------------------
mkdir "$tmp/pc"
for pc in "$pcdir"/spfkit*.pc; do
	sed "s|^prefix=.*|prefix=$root|" "$pc" >"$tmp/pc/$(basename "$pc")"
done
PKG_CONFIG_PATH=$tmp/pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
got=$(pkg-config --modversion spfkit)
[ "$got" = "$version" ] && ok "pkg-config --modversion spfkit: $got" || fail "modversion $got"

# Build out of tree: a copy of the example, only pkg-config's flags.
build_run() { # NAME PACKAGE SOURCE
	cp "$3" "$tmp/$1.c"
	flags=$(pkg-config --cflags --libs "$2") || { fail "pkg-config $2"; return; }
	# shellcheck disable=SC2086
	if ! (cd "$tmp" && $CC -std=c11 -Wall -Wextra -Werror "$1.c" $flags -o "$1") \
		>"$tmp/$1.log" 2>&1; then
		cat "$tmp/$1.log"
		fail "$1: cc $1.c \$(pkg-config --cflags --libs $2)"
		return
	fi
	ok "$1 built with: cc $1.c $flags"
	if ! LD_LIBRARY_PATH=$libdir ldd "$tmp/$1" | grep -q "$libdir/libspfkit.so.1"; then
		fail "$1 does not load the installed libspfkit.so.1: $(LD_LIBRARY_PATH=$libdir ldd "$tmp/$1" | grep spfkit)"
	fi
	if LD_LIBRARY_PATH=$libdir "$tmp/$1" "$src/data/demo.zone" >"$tmp/$1.out" 2>&1; then
		ok "$1 ran: $(head -n 1 "$tmp/$1.out")"
	else
		cat "$tmp/$1.out"
		fail "$1 exited $?"
	fi
}
build_run check spfkit "$src/examples/check.c"
[ "$event" = 1 ] && build_run event_loop spfkit-event "$src/examples/event_loop.c"

# libspfkit.a alone (with what it needs from the system), no libspfkit.so.
# shellcheck disable=SC2046
if (cd "$tmp" && $CC -std=c11 check.c $(pkg-config --cflags spfkit) "$libdir/libspfkit.a" \
	$(pkg-config --static --libs-only-l libcares) $(pkg-config --libs-only-l libidn2) -pthread -o check_static) >"$tmp/static.log" 2>&1 &&
	! ldd "$tmp/check_static" | grep -q libspfkit &&
	"$tmp/check_static" "$src/data/demo.zone" >/dev/null; then
	ok "check.c linked with libspfkit.a ran"
else
	cat "$tmp/static.log"
	fail "check.c with libspfkit.a"
fi

# Each public header compiles on its own, in C and C++.
cxx=$(command -v c++ || true)
for h in "$inc"/spfkit/*.h; do
	name=spfkit/$(basename "$h")
	printf '#include <%s>\nint main(void) { return 0; }\n' "$name" >"$tmp/h.c"
	if ! $CC -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$inc" "$tmp/h.c" >"$tmp/h.log" 2>&1; then
		cat "$tmp/h.log"
		fail "<$name> does not compile on its own"
	fi
	if [ -n "$cxx" ] && ! "$cxx" -Wall -Werror -fsyntax-only -x c++ -I"$inc" "$tmp/h.c" >"$tmp/h.log" 2>&1; then
		cat "$tmp/h.log"
		fail "<$name> does not compile as C++"
	fi
done
ok "each public header compiles on its own${cxx:+ (C and C++)}"

# The programs: self-contained, and they run.
for p in "$root/bin/spfkit" "$root/sbin/spfkit-policyd"; do
	[ -e "$p" ] || continue
	if readelf -dW "$p" | grep NEEDED | grep -q spfkit; then
		fail "${p#"$dest"} needs $(readelf -dW "$p" | grep NEEDED | grep spfkit)"
	elif ! out=$(env -u LD_LIBRARY_PATH "$p" --version 2>&1); then
		fail "${p#"$dest"} --version: $out"
	else
		ok "${p#"$dest"} needs no libspfkit.so: $out"
	fi
done

if [ "$fails" -gt 0 ]; then
	echo "$fails install checks failed"
	exit 1
fi
echo "install checks passed"
