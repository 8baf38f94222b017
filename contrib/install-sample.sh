#!/bin/sh
# meson install script (contrib/meson.build): install SRC as DIR/NAME
# unless DIR/NAME exists, so that `meson install` over an installed
# spfkit never replaces an administrator's configuration. DESTDIR (meson
# install --destdir, dpkg-buildpackage's debian/tmp) is honoured.
set -eu
[ $# -eq 3 ] || { echo "usage: $0 SRC DIR NAME" >&2; exit 2; }
src=$1 dir=${DESTDIR:-}$2 name=$3
if [ -e "$dir/$name" ]; then
	echo "kept $dir/$name (sample: $src)"
	exit 0
fi
mkdir -p "$dir"
install -m 0644 "$src" "$dir/$name"
echo "installed $dir/$name"
