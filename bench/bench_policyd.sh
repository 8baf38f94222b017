#!/bin/sh
# make bench, policy service part: spfkit-policyd against Debian's
# policyd-spf, both answering the same requests over the same DNS.
#
# usage: bench/bench_policyd.sh BUILD_DIR
#
# DNS is tests/dnsd on loopback serving bench/policyd.zone. spfkit-policyd
# runs as a daemon on a UNIX socket (c-ares, answer cache warm); policyd-spf
# runs the way Postfix runs it, one process per connection (spawn), reading
# the system resolver configuration, so it is given a private
# /etc/resolv.conf pointing at dnsd on 127.0.0.53:53 in its own mount
# namespace (unshare -m; nothing outside changes). Each request is a new
# message (its own instance): a HELO and a MAIL FROM evaluation.
# Figures: requests per second, p50 and p99 latency with 1 and 64
# concurrent clients, and our daemon's resident memory at 1,000 idle
# connections. Environment: BENCH_SECONDS (per measure, default 5).
set -eu

if [ $# -ne 1 ] || [ ! -f "$1/build.ninja" ]; then
	echo "usage: bench/bench_policyd.sh BUILD_DIR" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
SECS=${BENCH_SECONDS:-5}
ninja -C "$BUILD" policyd/spfkit-policyd tests/dnsd/dnsd policyd/bench_policyd >/dev/null
TMP=$(mktemp -d /tmp/spfkit-bench-policyd.XXXXXX)
chmod 755 "$TMP"
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
# debugLevel 0 for both: no log line per decision (this machine has no
# syslog daemon, and a failed syslog() costs each of them a socket)
printf 'debugLevel = 0\nTestOnly = 1\n' > "$TMP/policyd-spf.conf"

"$BUILD/tests/dnsd/dnsd" --zone "$TMP/zone" --port 0 --port-file "$TMP/dns.port" >/dev/null &
PIDS="$PIDS $!"
i=0
while [ ! -s "$TMP/dns.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
DNSPORT=$(cat "$TMP/dns.port")

"$BUILD/policyd/spfkit-policyd" --dns "127.0.0.1:$DNSPORT" --listen "unix:$TMP/policy.sock" \
	"$TMP/policyd-spf.conf" 2>/dev/null &
OURS=$!
PIDS="$PIDS $OURS"
i=0
while [ ! -S "$TMP/policy.sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done

LOAD="$BUILD/policyd/bench_policyd"
OUT="$TMP/out"
: > "$OUT"
for c in 1 64; do
	"$LOAD" --unix "$TMP/policy.sock" -c $c -t "$SECS" --name spfkit-policyd | tee -a "$OUT"
done
"$LOAD" --unix "$TMP/policy.sock" --idle 1000 --pid "$OURS" | tee -a "$OUT"

if [ -x /usr/bin/policyd-spf ] && command -v unshare >/dev/null 2>&1; then
	"$BUILD/tests/dnsd/dnsd" --zone "$TMP/zone" --listen 127.0.0.53 --port 53 >/dev/null 2>&1 &
	PIDS="$PIDS $!"
	sleep 0.3
	echo "nameserver 127.0.0.53" > "$TMP/resolv.conf"
	for c in 1 64; do
		unshare -m --propagation private sh -c \
			'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh "$TMP/resolv.conf" \
			"$LOAD" --spawn -c $c -t "$SECS" --name policyd-spf -- \
			/usr/bin/policyd-spf "$TMP/policyd-spf.conf" | tee -a "$OUT" ||
			echo "policyd-spf: run with $c clients failed (unshare and mount need root)"
	done
else
	echo "policyd-spf: not installed (apt-get install postfix-policyd-spf-python), not compared"
fi

awk '/^#BENCH/ { name = $2; c = ""; r = "";
	for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "clients") c = kv[2];
		if (kv[1] == "rps") r = kv[2] }
	if (c == 64) rps[name] = r }
END { if (rps["spfkit-policyd"] > 0 && rps["policyd-spf"] > 0)
	printf "spfkit-policyd/policyd-spf throughput at 64 clients = %.0fx\n",
		rps["spfkit-policyd"] / rps["policyd-spf"] }' "$OUT"
