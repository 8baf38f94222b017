#!/bin/sh
# make bench, milter part: spfkit-milter through the milter protocol, as
# an MTA drives it for each message (bench/bench_milter.c), with warm DNS.
#
# usage: bench/bench_milter.sh BUILD_DIR
#
# DNS is tests/dnsd on loopback; the milter listens on a UNIX socket.
# Figures: messages per second, p50/p99 latency of a whole message (what
# the milter adds to an SMTP session) and the milter's CPU time per
# message, with 1 and 32 concurrent sessions, a pass and a forged sender. Environment: BENCH_SECONDS (per
# measure, default 5); MILTER, another spfkit-milter binary to measure
# (e.g. an older build, for paired rounds against this one).
set -eu

if [ $# -ne 1 ] || [ ! -f "$1/build.ninja" ]; then
	echo "usage: bench/bench_milter.sh BUILD_DIR" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd)
SECS=${BENCH_SECONDS:-5}
if ! ninja -C "$BUILD" -t query milter/spfkit-milter >/dev/null 2>&1; then
	echo "spfkit-milter: not built (libmilter-dev missing?), no milter figures"
	exit 0
fi
ninja -C "$BUILD" milter/spfkit-milter tests/dnsd/dnsd bench/bench_milter >/dev/null
TMP=$(mktemp -d /tmp/spfkit-bench-milter.XXXXXX)
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	for p in $PIDS; do wait "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

cat > "$TMP/zone" <<'ZONE'
$TTL 3600
example.com.      TXT "v=spf1 include:_spf.example.net ip4:198.51.100.0/24 -all"
_spf.example.net. TXT "v=spf1 ip4:203.0.113.0/24 a:mx.example.com -all"
mx.example.com.   TXT "v=spf1 a -all"
mx.example.com.   A   192.0.2.10
ZONE
# the same configuration as the policy daemon's measure: no log line per message
printf 'debugLevel = 0\nTestOnly = 1\nHeader_Type = AR\nAuthserv_Id = mx.bench.example\n' \
	> "$TMP/milter.conf"

"$BUILD/tests/dnsd/dnsd" --zone "$TMP/zone" --port 0 --port-file "$TMP/dns.port" >/dev/null &
PIDS="$PIDS $!"
i=0
while [ ! -s "$TMP/dns.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
DNSPORT=$(cat "$TMP/dns.port")

MILTER=${MILTER:-$BUILD/milter/spfkit-milter}
"$MILTER" --foreground --socket "unix:$TMP/milter.sock" \
	--dns "127.0.0.1:$DNSPORT" --log stderr --config "$TMP/milter.conf" 2>"$TMP/milter.log" &
MPID=$!
PIDS="$PIDS $MPID"
i=0
while [ ! -S "$TMP/milter.sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
if [ ! -S "$TMP/milter.sock" ]; then
	echo "spfkit-milter did not start:"
	cat "$TMP/milter.log"
	exit 1
fi

# The milter's own CPU time (user + system) in clock ticks, from /proc.
cpu_ticks() {
	sed 's/.*) //' "/proc/$MPID/stat" | awk '{ print $12 + $13 }'
}

# One measure, its #BENCH line with the milter's CPU time per message
# appended (cpu_us_msg): unlike messages per second, that figure holds
# when the machine is busy with other work.
LOAD="$BUILD/bench/bench_milter"
HZ=$(getconf CLK_TCK)
measure() {
	t0=$(cpu_ticks)
	line=$("$LOAD" --unix "$TMP/milter.sock" -t "$SECS" "$@")
	t1=$(cpu_ticks)
	echo "$line" | awk -v d=$((t1 - t0)) -v hz="$HZ" '
		/^#BENCH/ { for (i = 1; i <= NF; i++) if ($i ~ /^messages=/) { split($i, a, "="); n = a[2] }
			    printf "%s cpu_us_msg=%.0f\n", $0, (n > 0 ? d * 1e6 / hz / n : 0); next }
		{ print }'
}

for c in 1 32; do
	measure -c $c --name spfkit-milter-pass \
		--ip 192.0.2.10 --sender alice@example.com --helo mx.example.com
	measure -c $c --name spfkit-milter-fail \
		--ip 192.0.2.99 --sender alice@example.com --helo mx.example.com
done
