#!/bin/sh
# tools/update-symbols.sh [BUILD_DIR]: rewrite the export lists,
# lib/spfkit.map and lib/event/spfkit-event.map, from the public API as a
# build compiled it (the visible symbols of libspfkit.a and
# libspfkit-event.a: what include/spfkit/*.h declare and lib/ defines),
# then relink and run the symbol tests.
# Review `git diff lib/spfkit.map lib/event/spfkit-event.map` before
# committing: a + line is a new export, a - line breaks the ABI.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ -f "$build/build.ninja" ] || { echo "usage: $0 BUILD_DIR (a configured meson build)" >&2; exit 2; }
# The archives need no map; the shared libraries are linked after.
ninja -C "$build" libspfkit.a
python3 tests/build/check_symbols.py --update --map lib/spfkit.map --archive "$build/libspfkit.a"
tests=symbols-spfkit
if ninja -C "$build" -t query lib/event/libspfkit-event.a >/dev/null 2>&1; then
	ninja -C "$build" lib/event/libspfkit-event.a
	python3 tests/build/check_symbols.py --update --map lib/event/spfkit-event.map \
		--archive "$build/lib/event/libspfkit-event.a"
	tests="$tests symbols-spfkit-event"
fi
ninja -C "$build"
# shellcheck disable=SC2086
meson test -C "$build" --no-rebuild --print-errorlogs $tests
git --no-pager diff --stat -- lib/spfkit.map lib/event/spfkit-event.map 2>/dev/null || true
