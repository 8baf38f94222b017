#!/bin/sh
# tools/update-abi.sh BUILD_DIR: rewrite tests/build/abi-x86_64.txt, the
# recorded layout of every public struct, from a configured build on an
# x86_64 host, then run the abi-layout test.
# Review `git diff tests/build/abi-x86_64.txt` before committing: structs
# are append-only (include/spfkit/common.h), so only added lines at the
# end of a struct and a larger size are acceptable.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ -f "$build/build.ninja" ] || { echo "usage: $0 BUILD_DIR (a configured meson build)" >&2; exit 2; }
[ "$(uname -m)" = x86_64 ] || { echo "$0: the reference is of x86_64; this host is $(uname -m)" >&2; exit 2; }
ninja -C "$build" tests/build/abi_layout
"$build/tests/build/abi_layout" > tests/build/abi-x86_64.txt
meson test -C "$build" --print-errorlogs abi-layout
git --no-pager diff --stat -- tests/build/abi-x86_64.txt 2>/dev/null || true
