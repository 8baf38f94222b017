#!/bin/sh
# Golden-output test of the spfkit CLI (Postfix .ref style).
#
#   run.sh SPFKIT DIR NAME [DNSD]
#
# Runs `SPFKIT <arguments of DIR/NAME.cmd>` in DIR, with DIR/NAME.in as
# stdin when it exists, and compares the whole outcome (stdout, stderr,
# exit status) with DIR/NAME.ref. NAME.cmd holds the arguments in shell
# syntax on one line. Times ("0.042 ms", "ms":0.042) vary from run to run
# and are replaced by N. SPFKIT_UPDATE_REF=1 rewrites the .ref instead
# (review the diff before committing it).
#
# When DIR/NAME.dnsd exists, the loopback test DNS server DNSD is started
# first with the options it holds (plus --port 0), and NAME.cmd can use
# $PORT, the port it listens on (127.0.0.1). It is stopped afterwards.
set -u
spfkit=$1
dir=$2
name=$3
dnsd=${4:-}

case $spfkit in
/*) ;;
*) spfkit=$(pwd)/$spfkit ;; # meson gives it relative to the build dir
esac
case $dnsd in
/* | "") ;;
*) dnsd=$(pwd)/$dnsd ;;
esac
cd "$dir" || exit 99
tmp=$(mktemp -d) || exit 99
dnsd_pid=
trap '[ -n "$dnsd_pid" ] && kill "$dnsd_pid" 2>/dev/null; rm -rf "$tmp"' EXIT

PORT=
if [ -f "$name.dnsd" ]; then
	if [ -z "$dnsd" ]; then
		echo "SKIP $name: no dnsd given" >&2
		exit 77
	fi
	eval "set -- $(cat "$name.dnsd")"
	"$dnsd" "$@" --port 0 --port-file "$tmp/port" >"$tmp/dnsd.out" 2>"$tmp/dnsd.err" &
	dnsd_pid=$!
	tries=0
	while [ ! -s "$tmp/port" ]; do
		tries=$((tries + 1))
		if [ $tries -gt 100 ] || ! kill -0 "$dnsd_pid" 2>/dev/null; then
			echo "FAIL $name: dnsd did not start" >&2
			cat "$tmp/dnsd.err" >&2
			exit 1
		fi
		sleep 0.05
	done
	PORT=$(cat "$tmp/port")
fi

input=/dev/null
[ -f "$name.in" ] && input=$name.in
eval "set -- $(cat "$name.cmd")"
"$spfkit" "$@" <"$input" >"$tmp/out" 2>"$tmp/err"
status=$?

# No output line may carry a CR: a header injection would show here.
if grep -q "$(printf '\r')" "$tmp/out" "$tmp/err"; then
	echo "FAIL $name: a CR byte reached the output" >&2
	exit 1
fi
# With --json every stdout line must parse as JSON (when python3 is there).
case " $* " in
*" --json "*)
	if command -v python3 >/dev/null 2>&1 &&
		! python3 -c 'import json, sys
for line in sys.stdin:
    json.loads(line)' <"$tmp/out"; then
		echo "FAIL $name: stdout is not JSON lines" >&2
		exit 1
	fi ;;
esac
{
	cat "$tmp/out"
	echo "--- stderr"
	cat "$tmp/err"
	echo "--- exit $status"
} | sed -E 's/[0-9]+\.[0-9]{3} ms/N ms/g; s/"ms":[0-9]+\.[0-9]+/"ms":N/g' >"$tmp/got"

if [ "${SPFKIT_UPDATE_REF:-0}" = 1 ]; then
	cp "$tmp/got" "$name.ref"
	exit 0
fi
if ! diff -u "$name.ref" "$tmp/got"; then
	echo "FAIL $name: output differs from $name.ref (got +, want -)" >&2
	exit 1
fi
exit 0
