#!/bin/sh
# make bench, policy service part: spfkit-policyd against Debian's
# policyd-spf, both answering the same requests over the same DNS, in
# paired rounds.
#
# usage: bench/bench_policyd.sh BUILD_DIR
#
# DNS is tests/dnsd on loopback serving a small zone. spfkit-policyd runs
# as a daemon on a UNIX socket (c-ares, answer cache warm, --workers: one
# per online CPU unless BENCH_PD_WORKERS says otherwise); policyd-spf runs
# the way Postfix runs it, one process per connection (spawn), reading the
# system resolver configuration, so it is given a private
# /etc/resolv.conf pointing at dnsd on 127.0.0.53:53 in its own mount
# namespace (unshare -m; nothing outside changes). Each request is a new
# message (its own instance): a HELO and a MAIL FROM evaluation. Both run
# Debian's configuration with debugLevel 1: a log line per decision. This
# machine has no syslog daemon: ours writes its lines to a file (--log
# stderr), policyd-spf's syslog() finds no /dev/log (a failed connect per
# line, small beside its per-request cost).
#
# Each round, with the machine's load printed before it: spfkit-policyd at
# 8 and 64 clients, then policyd-spf at 8 and 64. The figures are the
# median and the range over the rounds; the ratio is the median of the
# rounds' ratios (load from elsewhere falls on both sides of a pair).
# Then: instructions per request under callgrind (one worker, 8 clients,
# the difference between two runs of different lengths, so start-up and
# warm-up drop out), and resident memory per idle connection (1,000 of
# them). Environment: BENCH_SECONDS (per measure, default 5), BENCH_PAIRS
# (rounds, default 3), BENCH_CALLGRIND=0 to skip the instruction count,
# BENCH_PD_WORKERS (default: online CPUs). With each of our rounds, the
# CPU time per request of the daemon (user and system) and of the load
# generator: on this machine they share the cores, so their sum bounds
# the requests/s any daemon could reach here, and the generator's own
# bounds what its one thread can ask. When the default runs more than one
# worker, the same daemon with --workers 1 is measured in the same rounds
# too and printed beside it. So is the default with --metrics on and
# /metrics fetched once a second (issue 29), and the ratio of its
# requests/s to the default's, taken within each round.
set -eu

if [ $# -ne 1 ] || [ ! -f "$1/build.ninja" ]; then
	echo "usage: bench/bench_policyd.sh BUILD_DIR" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd)
SECS=${BENCH_SECONDS:-5}
PAIRS=${BENCH_PAIRS:-3}
CALLGRIND=${BENCH_CALLGRIND:-1}
WORKERS=${BENCH_PD_WORKERS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
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

load_now() { awk '{ printf "load %s, %s running", $1, $4 }' /proc/loadavg 2>/dev/null; }

cat > "$TMP/zone" <<'ZONE'
$TTL 3600
example.com.      TXT "v=spf1 include:_spf.example.net ip4:198.51.100.0/24 -all"
_spf.example.net. TXT "v=spf1 ip4:203.0.113.0/24 a:mx.example.com -all"
mx.example.com.   TXT "v=spf1 a -all"
mx.example.com.   A   192.0.2.10
ZONE
printf 'debugLevel = 1\nTestOnly = 1\n' > "$TMP/policyd-spf.conf"

"$BUILD/tests/dnsd/dnsd" --zone "$TMP/zone" --port 0 --port-file "$TMP/dns.port" >/dev/null &
PIDS="$PIDS $!"
i=0
while [ ! -s "$TMP/dns.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
DNSPORT=$(cat "$TMP/dns.port")

# our daemon, its log lines (one per decision) into a file; EXTRA_ARGS: more options
EXTRA_ARGS=""
start_ours() { # SOCKET WORKERS [wrapper...]
	sock=$1 workers=$2
	shift 2
	"$@" "$BUILD/policyd/spfkit-policyd" --dns "127.0.0.1:$DNSPORT" --listen "unix:$sock" \
		--log stderr --workers "$workers" $EXTRA_ARGS "$TMP/policyd-spf.conf" 2>>"$TMP/ours.log" &
	OURS=$!
	PIDS="$PIDS $OURS"
	i=0
	while [ ! -S "$sock" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
}
start_ours "$TMP/policy.sock" "$WORKERS"
# The same daemon with one worker, measured in the same rounds: with the
# load generator on the same cores (as an MTA on the daemon's host), the
# default's second worker sleeps and is woken per request, and those
# wake-ups cost more than the core it adds. Printed beside the default,
# not instead of it.
DEFAULT=$OURS
ONE=""
if [ "$WORKERS" -gt 1 ]; then
	start_ours "$TMP/policy1.sock" 1
	ONE=$OURS
	OURS=$DEFAULT
fi

# And the default with its /metrics listener on (issue 29), scraped once a
# second as Prometheus would, measured in the same rounds: counting must
# cost nothing one can see beside the load from elsewhere.
EXTRA_ARGS="--metrics 127.0.0.1:0"
start_ours "$TMP/policy-m.sock" "$WORKERS"
EXTRA_ARGS=""
WITH_METRICS=$OURS
OURS=$DEFAULT
i=0
while ! grep -q "^spfkit-policyd\[$WITH_METRICS\]: metrics on" "$TMP/ours.log" && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
MPORT=$(sed -n "s/^spfkit-policyd\[$WITH_METRICS\]: metrics on .*(port \([0-9]*\))$/\1/p" "$TMP/ours.log")
python3 -c 'import sys, time, urllib.request
while True:
    urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read()
    time.sleep(1)' "$MPORT" 2>/dev/null &
PIDS="$PIDS $!"

LOAD="$BUILD/policyd/bench_policyd"
OUT="$TMP/out"
: > "$OUT"
THEIRS=0
if [ -x /usr/bin/policyd-spf ] && command -v unshare >/dev/null 2>&1; then
	"$BUILD/tests/dnsd/dnsd" --zone "$TMP/zone" --listen 127.0.0.53 --port 53 >/dev/null 2>&1 &
	PIDS="$PIDS $!"
	sleep 0.3
	echo "nameserver 127.0.0.53" > "$TMP/resolv.conf"
	THEIRS=1
else
	echo "policyd-spf: not installed (apt-get install postfix-policyd-spf-python), not compared"
fi

echo "spfkit-policyd: --workers $WORKERS; $PAIRS rounds of $SECS s per measure"
round=1
while [ $round -le "$PAIRS" ]; do
	echo "-- round $round ($(load_now))"
	for c in 8 64; do
		"$LOAD" --unix "$TMP/policy.sock" -c $c -t "$SECS" --name "spfkit-policyd" --pid "$OURS" |
			sed "s/^#BENCH /#BENCH round=$round /" | tee -a "$OUT"
		"$LOAD" --unix "$TMP/policy-m.sock" -c $c -t "$SECS" --name "spfkit-policyd-metrics" \
			--pid "$WITH_METRICS" | sed "s/^#BENCH /#BENCH round=$round /" | tee -a "$OUT"
		if [ -n "$ONE" ]; then
			"$LOAD" --unix "$TMP/policy1.sock" -c $c -t "$SECS" --name "spfkit-policyd-1worker" \
				--pid "$ONE" | sed "s/^#BENCH /#BENCH round=$round /" | tee -a "$OUT"
		fi
	done
	if [ $THEIRS = 1 ]; then
		for c in 8 64; do
			unshare -m --propagation private sh -c \
				'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh "$TMP/resolv.conf" \
				"$LOAD" --spawn -c $c -t "$SECS" --name policyd-spf -- \
				/usr/bin/policyd-spf "$TMP/policyd-spf.conf" |
				sed "s/^#BENCH /#BENCH round=$round /" | tee -a "$OUT" ||
				echo "policyd-spf: run with $c clients failed (unshare and mount need root)"
		done
	fi
	round=$((round + 1))
done

echo "-- idle connections ($(load_now))"
"$LOAD" --unix "$TMP/policy.sock" --idle 1000 --pid "$OURS" | tee -a "$OUT"

if [ "$CALLGRIND" != 0 ] && command -v valgrind >/dev/null 2>&1; then
	# Ir per request = (Ir(N2) - Ir(N1)) / (N2 - N1): start-up, warm-up and
	# shutdown are the same in both runs and drop out
	cg_run() { # N -> Ir total
		rm -f "$TMP/cg.sock" "$TMP/cg.out"
		start_ours "$TMP/cg.sock" 1 valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out"
		"$LOAD" --unix "$TMP/cg.sock" -c 8 -n "$1" --name callgrind >/dev/null
		kill "$OURS"
		wait "$OURS" 2>/dev/null || true
		awk '/^(summary|totals):/ { t = $2 } END { print t }' "$TMP/cg.out"
	}
	echo "-- callgrind ($(load_now))"
	ir1=$(cg_run 1000)
	ir2=$(cg_run 5000)
	awk -v a="$ir1" -v b="$ir2" 'BEGIN { if (b > a)
		printf "#BENCH policyd-callgrind workers=1 clients=8 debug_level=1 instructions_per_request=%.0f\n",
			(b - a) / 4000 }' | tee -a "$OUT"
fi

echo "== spfkit-policyd summary (median [lowest-highest] over $PAIRS rounds)"
awk '
function kv(key,   i, f) { for (i = 2; i <= NF; i++) { split($i, f, "="); if (f[1] == key) return f[2] } return "" }
function sort_n(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } }
function med(a, n) { sort_n(a, n); return a[int((n + 1) / 2)] }
function rng(a, n) { sort_n(a, n); return sprintf("[%s-%s]", a[1], a[n]) }
# one line per daemon and client count, each ratio taken within its round
function summary(nm, c,   r, n, m, q, t, a, b, p, th, rm, g, u, y, gg, uu, yy, gm, um, ym) {
	n = 0; m = 0; q = 0; t = 0
	for (r = 1; r <= maxr; r++) {
		if (((nm, c, r) in rps)) { a[++n] = rps[nm, c, r]; p[++q] = p99[nm, c, r] }
		if (((nm, c, r) in rps) && (("policyd-spf", c, r) in rps) && rps["policyd-spf", c, r] > 0) {
			th[++t] = rps["policyd-spf", c, r]
			b[++m] = rps[nm, c, r] / rps["policyd-spf", c, r]
		}
	}
	if (n == 0) return
	printf "%2d clients: %s %s requests/s %s, p99 %s us %s", c, nm, med(a, n), rng(a, n), med(p, q), rng(p, q)
	if (t > 0) { rm = med(b, m); printf "; policyd-spf %s %s; ratio %.0fx [%.0f-%.0fx]", med(th, t), rng(th, t), rm, b[1], b[m] }
	printf "\n"
	# CPU per request: what the cores, and the generator'"'"'s one thread, can give at most
	g = 0; u = 0; y = 0
	for (r = 1; r <= maxr; r++)
		if (gen[nm, c, r] != "" && su[nm, c, r] != "") {
			gg[++g] = gen[nm, c, r]; uu[++u] = su[nm, c, r]; yy[++y] = ss[nm, c, r]
		}
	if (g == 0) return
	gm = med(gg, g); um = med(uu, u); ym = med(yy, y)
	printf "            CPU per request: daemon %.1f us (user %.1f, system %.1f), load generator %.1f us; %d cores give at most %.0f requests/s, the generator'"'"'s one thread %.0f\n", um + ym, um, ym, gm, cores, cores * 1e6 / (um + ym + gm), 1e6 / gm
}
# /metrics on against off, taken within each round (issue 29)
function metrics_ratio(c,   r, n, b) {
	n = 0
	for (r = 1; r <= maxr; r++)
		if ((("spfkit-policyd-metrics", c, r) in rps) && (("spfkit-policyd", c, r) in rps) && rps["spfkit-policyd", c, r] > 0)
			b[++n] = rps["spfkit-policyd-metrics", c, r] / rps["spfkit-policyd", c, r]
	if (n == 0) return
	printf "%2d clients: requests/s with /metrics on (scraped every second) over off: %.3f %s\n", c, med(b, n), sprintf("[%.3f-%.3f]", b[1], b[n])
}
$1 == "#BENCH" && kv("round") != "" {
	r = kv("round"); name = $3; c = kv("clients")
	rps[name, c, r] = kv("rps"); p99[name, c, r] = kv("p99_us"); rounds[r] = 1
	gen[name, c, r] = kv("gen_cpu_us"); su[name, c, r] = kv("server_user_us"); ss[name, c, r] = kv("server_sys_us")
	if (r > maxr) maxr = r
}
$1 == "#BENCH" && $2 == "policyd-idle" { idle = kv("per_conn_bytes"); conns = kv("connections") }
$1 == "#BENCH" && $2 == "policyd-callgrind" { ir = kv("instructions_per_request") }
END {
	split("8 64", cs, " ")
	split("spfkit-policyd spfkit-policyd-metrics spfkit-policyd-1worker", names, " ")
	for (k = 1; k <= 2; k++) {
		for (j = 1; j <= 3; j++)
			summary(names[j], cs[k])
		metrics_ratio(cs[k])
	}
	if (idle != "") printf "idle connections: %s bytes of RSS each (%s open)\n", idle, conns
	if (ir != "") printf "instructions per request (callgrind, debugLevel 1, all included): %s\n", ir
}' cores="$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)" "$OUT"
