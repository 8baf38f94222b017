#!/bin/sh
# make fuzz: build every fuzz/fuzz_<name>.c as a libFuzzer target with
# clang (ASan + UBSan) and run each for FUZZ_SECONDS (default 60), starting
# from its seed corpus (copied: new inputs go to fuzz/out/, not the tree).
# A crash leaves its input in fuzz/out/<name>/; add it to
# fuzz/corpus/<name>/ once fixed, so `make test` replays it for good.
set -eu
seconds=${FUZZ_SECONDS:-60}
only=${1:-}
out=fuzz/out
mkdir -p "$out"
lib=$(git ls-files 'util/*.c' 'lib/core/*.c' 'lib/spf/*.c' 'lib/resolver/*.c' 'lib/dns/*.c' 'policyd/proto.c' 'mta/escape.c')
# <spfkit/version.h> is generated from meson.build's version (as meson does).
version=$(sed -n "s/^ *version *: *'\([0-9.]*\)'.*/\1/p" meson.build | head -n 1)
mkdir -p "$out/include/spfkit"
echo "$version" | awk -F. -v v="$version" '{
	print "s/@SPFKIT_VERSION_MAJOR@/" $1 "/; s/@SPFKIT_VERSION_MINOR@/" $2 "/;"
	print "s/@SPFKIT_VERSION_PATCH@/" $3 "/; s/@SPFKIT_VERSION_STRING@/" v "/"
}' >"$out/version.sed"
sed -f "$out/version.sed" include/spfkit/version.h.in >"$out/include/spfkit/version.h"
status=0
for src in fuzz/fuzz_*.c; do
	name=$(basename "$src" .c | sed 's/^fuzz_//')
	[ -n "$only" ] && [ "$only" != "$name" ] && continue
	echo "== $name: building"
	# the OpenSMTPD filter's target runs the whole filter on its libevent loop
	extra=
	[ "$name" = smtpd_line ] && extra="-Ismtpd smtpd/filter.c smtpd/proto.c mta/checker.c mta/config.c mta/decision.c mta/daemon.c mta/header_field.c mta/log.c lib/event/event.c -levent"
	# lint and tree (<spfkit/publish.h>) are lib/publish's
	[ "$name" = publish ] && extra="-Ilib/publish $(git ls-files 'lib/publish/*.c' | tr '\n' ' ')"
	# shellcheck disable=SC2086
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Iinclude -I"$out/include" -Iutil -Ilib/core \
		-Ilib/spf -Ilib/resolver -Ilib/dns -Ipolicyd -Imta "$src" $lib $extra -lcares -lidn2 -lpthread -o "$out/fuzz_$name"
	mkdir -p "$out/$name"
	cp -r "fuzz/corpus/$name/." "$out/$name/" 2>/dev/null || true
	echo "== $name: fuzzing for ${seconds}s"
	if ! (cd "$out" && ./"fuzz_$name" -max_total_time="$seconds" -max_len=65536 \
		-artifact_prefix="$name/crash-" "$name" >"$name.log" 2>&1); then
		echo "   $name FOUND A PROBLEM: see $out/$name.log"
		status=1
	else
		grep -E "^#[0-9]+.*DONE|Done [0-9]+ runs" "$out/$name.log" | tail -1
	fi
done
exit $status
