#!/bin/sh
# make bench: evaluation benchmark of spfkit against libspf2.
#
# usage: bench/run.sh BUILD_DIR
#
# Builds the benchmark targets in BUILD_DIR (a meson build directory,
# --buildtype=release for figures worth quoting), generates the corpus
# into BUILD_DIR/bench-corpus, times spfkit (and libspf2 when meson found
# it), compares their results, and counts instructions per evaluation
# with callgrind when valgrind is installed. Then the latency figures
# (bench_latency): a sample of the queries through c-ares against
# tests/dnsd on 127.0.0.1 with a delay on every answer, strict and with
# lookahead, and evaluations per second with a warm answer cache; then
# questions per evaluation, strict against lookahead, over the whole
# corpus (lookahead_equal, no network). About two minutes in all.
#
# The two are timed in alternating runs (spfkit, libspf2, spfkit, ...)
# and the ratio is the median of the pairs, so load from elsewhere on the
# machine falls on both alike; callgrind's counts do not depend on load.
#
# The libspf2 API on spfkit (issue 12): the same bench_libspf2 binary, built
# against Debian's libspf2, run again in every round with LD_LIBRARY_PATH at
# BUILD_DIR/compat/libspf2, so that it loads our libspf2.so.2 (checked with
# LD_DEBUG=libs in the first round); its ratio is the median of the pairs
# (libspf2, libspf2 API on spfkit) of each round. BENCH_LIBSPF2_API=0 skips it.
#
# Environment: BENCH_SECONDS (seconds per timed measure, default 1),
# BENCH_PAIRS (alternating runs, default 3), BENCH_QUERIES (corpus size,
# default 10000), BENCH_CALLGRIND=0 to skip the instruction counts,
# BENCH_CG_QUERIES (queries under callgrind, default 2000),
# BENCH_LATENCY=0 to skip the latency figures, BENCH_LAT_SAMPLE (queries
# evaluated over loopback DNS, default 400: about 40 s), BENCH_LAT_DELAY
# (ms per answer, default 10), BENCH_LAT_WORST (evaluations furthest above
# their minimum shown with their questions, default 3).
set -eu

if [ $# -ne 1 ] || [ ! -f "$1/build.ninja" ]; then
	echo "usage: bench/run.sh BUILD_DIR (a meson build directory)" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT="$BUILD/bench-corpus"
SECS=${BENCH_SECONDS:-1}
PAIRS=${BENCH_PAIRS:-3}
QUERIES=${BENCH_QUERIES:-10000}
CG_QUERIES=${BENCH_CG_QUERIES:-2000}
LAT_SAMPLE=${BENCH_LAT_SAMPLE:-400}
LAT_DELAY=${BENCH_LAT_DELAY:-10}
LAT_WORST=${BENCH_LAT_WORST:-3}

have_target() {
	grep -q "^build bench/$1:" "$BUILD/build.ninja"
}

# value of key=... on the "#BENCH name" lines of logs
bench_value() {
	name=$1 key=$2
	shift 2
	awk -v name="$name" -v key="$key" '$1 == "#BENCH" && $2 == name {
		for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) print kv[2] } }' "$@"
}

# The machine's load (1-minute average) and running processes, before a round.
load_now() { awk '{ printf "load %s, %s running", $1, $4 }' /proc/loadavg 2>/dev/null; }

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
# libspf2's ns/eval over ours, one line per paired round: $1 the key, $2
# the log name of ours ("spfkit" for spfkit.N.log)
paired_ratios() {
	i=1
	while [ "$i" -le "$PAIRS" ]; do
		d=$(bench_value "$1" ns_per_eval "$OUT/$2.$i.log")
		l=$(bench_value libspf2 ns_per_eval "$OUT/libspf2.$i.log")
		awk -v d="$d" -v l="$l" 'BEGIN { if (d > 0) printf "%.2f\n", l / d }'
		i=$((i + 1))
	done
}
lowest() { sort -g | head -n 1; }
highest() { sort -g | tail -n 1; }

# Ir of one callgrind run, per evaluation
callgrind_per_eval() {
	awk -v n="$2" '/^(summary|totals):/ { t = $2 } END { if (t != "" && n > 0) printf "%.0f", t / n }' "$1"
}

LIBSPF2=0
have_target bench_libspf2 && LIBSPF2=1
# our libspf2.so.2 (compat/libspf2) under the same bench_libspf2 binary
API=0
API_DIR="$BUILD/compat/libspf2"
[ "$LIBSPF2" = 1 ] && [ "${BENCH_LIBSPF2_API:-1}" != 0 ] &&
	grep -q "^build compat/libspf2/libspf2.so.2.1.0:" "$BUILD/build.ninja" && API=1
LATENCY=0
[ "${BENCH_LATENCY:-1}" != 0 ] && have_target bench_latency && LATENCY=1
targets=bench/bench_eval
[ "$LIBSPF2" = 1 ] && targets="$targets bench/bench_libspf2"
[ "$API" = 1 ] && targets="$targets compat/libspf2/libspf2.so.2.1.0"
[ "$LATENCY" = 1 ] && targets="$targets bench/bench_latency"
LAEQ=0
have_target lookahead_equal && LAEQ=1 && targets="$targets bench/lookahead_equal"
# shellcheck disable=SC2086 # targets is a list on purpose
ninja -C "$BUILD" $targets >/dev/null

buildtype=$(meson introspect --buildoptions "$BUILD" 2>/dev/null |
	python3 -c 'import json,sys; print(next((o["value"] for o in json.load(sys.stdin) if o["name"] == "buildtype"), "?"))' ||
	echo "?")
echo "== spfkit evaluation benchmark (build type: $buildtype)"
[ "$buildtype" = release ] || echo "   note: figures are for buildtype=release; this build is $buildtype"

mkdir -p "$OUT"
rm -f "$OUT"/spfkit.*.log "$OUT"/spfkit-memo.*.log "$OUT"/libspf2.*.log "$OUT"/libspf2api.*.log "$OUT"/latency.log
python3 "$SRC/bench/gen_corpus.py" --out "$OUT" --queries "$QUERIES" >"$OUT/corpus.log"
cat "$OUT/corpus.log"
ZONE="$OUT/bench.zone"
QFILE="$OUT/queries.txt"

# Pair 1 also writes the results, compares them, and times spfkit_check().
echo
echo "== spfkit ($(load_now))"
"$BUILD/bench/bench_eval" --zone "$ZONE" --queries "$QFILE" --seconds "$SECS" --mode all \
	--results-out "$OUT/results-spfkit.txt" --intent "$OUT/queries.intent" >"$OUT/spfkit.1.log"
grep -v '^#BENCH' "$OUT/spfkit.1.log"
run_memo() {
	"$BUILD/bench/bench_eval" --zone "$ZONE" --queries "$QFILE" --seconds "$SECS" \
		--mode direct --record-memo 1 >"$OUT/spfkit-memo.$1.log"
	sed -n 's/^spfkit direct (eval_step + zone_lookup)/spfkit direct, record memo /p' "$OUT/spfkit-memo.$1.log"
}
run_memo 1
if [ "$LIBSPF2" = 1 ]; then
	echo
	echo "== libspf2 (hashed in-memory DNS layer) ($(load_now))"
	"$BUILD/bench/bench_libspf2" --zone "$ZONE" --queries "$QFILE" --seconds "$SECS" \
		--compare "$OUT/results-spfkit.txt" >"$OUT/libspf2.1.log"
	grep -v '^#BENCH' "$OUT/libspf2.1.log"
	if [ "$API" = 1 ]; then
		echo
		echo "== libspf2 API on spfkit: the same binary on our libspf2.so.2 ($(load_now))"
		LD_DEBUG=libs LD_LIBRARY_PATH="$API_DIR" "$BUILD/bench/bench_libspf2" --zone "$ZONE" \
			--queries "$QFILE" --seconds "$SECS" --compare "$OUT/results-spfkit.txt" \
			>"$OUT/libspf2api.1.log" 2>"$OUT/libspf2api.ld.log" || true
		loaded=$(sed -n 's/^ *[0-9]*:[[:space:]]*calling init: \(.*libspf2\.so\.2\)$/\1/p' \
			"$OUT/libspf2api.ld.log" | head -n 1)
		if [ "$loaded" = "$API_DIR/libspf2.so.2" ] && grep -q '^#BENCH libspf2 ' "$OUT/libspf2api.1.log"; then
			echo "loaded: $loaded"
			grep -v '^#BENCH' "$OUT/libspf2api.1.log" |
				sed 's/^libspf2 (SPF_/libspf2 API on spfkit (SPF_/; s/^agreement spfkit\/libspf2:/agreement spfkit\/libspf2 API on spfkit:/'
		else
			echo "bench_libspf2 with LD_LIBRARY_PATH=$API_DIR did not run on our library" \
				"(loaded: ${loaded:-?}): see $OUT/libspf2api.1.log and $OUT/libspf2api.ld.log"
			API=0
		fi
	fi
else
	echo
	echo "== libspf2 not found by meson (Debian: libspf2-dev): no comparison"
fi

i=2
while [ "$i" -le "$PAIRS" ]; do
	[ "$i" = 2 ] && { echo; echo "== more alternating runs"; }
	echo "round $i: $(load_now)"
	"$BUILD/bench/bench_eval" --zone "$ZONE" --queries "$QFILE" --seconds "$SECS" \
		--mode direct >"$OUT/spfkit.$i.log"
	grep '^spfkit direct' "$OUT/spfkit.$i.log"
	run_memo "$i"
	if [ "$LIBSPF2" = 1 ]; then
		"$BUILD/bench/bench_libspf2" --zone "$ZONE" --queries "$QFILE" \
			--seconds "$SECS" >"$OUT/libspf2.$i.log"
		grep '^libspf2 (' "$OUT/libspf2.$i.log"
	fi
	if [ "$API" = 1 ]; then
		LD_LIBRARY_PATH="$API_DIR" "$BUILD/bench/bench_libspf2" --zone "$ZONE" --queries "$QFILE" \
			--seconds "$SECS" >"$OUT/libspf2api.$i.log"
		grep '^libspf2 (' "$OUT/libspf2api.$i.log" | sed 's/^libspf2 (/libspf2 API on spfkit (/'
	fi
	i=$((i + 1))
done

CG_SPFKIT="" CG_SPF2="" CG_COLD="" CG_API="" CG_MEMO=""
if [ "${BENCH_CALLGRIND:-1}" != 0 ] && command -v valgrind >/dev/null 2>&1; then
	echo
	echo "== instructions per evaluation (valgrind --tool=callgrind, first $CG_QUERIES queries, one pass)"
	valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.spfkit" \
		--collect-atstart=no --toggle-collect=pass_direct \
		"$BUILD/bench/bench_eval" --zone "$ZONE" --queries "$QFILE" --mode direct \
		--rounds 1 --limit "$CG_QUERIES" >/dev/null 2>"$OUT/callgrind.spfkit.log" ||
		echo "callgrind run of bench_eval failed: see $OUT/callgrind.spfkit.log"
	CG_SPFKIT=$(callgrind_per_eval "$OUT/callgrind.spfkit" "$CG_QUERIES")
	# Warm with the record memo: records taken by name within their TTL.
	valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.memo" \
		--collect-atstart=no --toggle-collect=pass_direct \
		"$BUILD/bench/bench_eval" --zone "$ZONE" --queries "$QFILE" --mode direct \
		--record-memo 1 --rounds 1 --limit "$CG_QUERIES" >/dev/null 2>"$OUT/callgrind.memo.log" ||
		echo "callgrind run of bench_eval --record-memo 1 failed: see $OUT/callgrind.memo.log"
	CG_MEMO=$(callgrind_per_eval "$OUT/callgrind.memo" "$CG_QUERIES")
	# Cold: a fresh context, without a record cache, per evaluation.
	valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.cold" \
		--collect-atstart=no --toggle-collect=pass_cold \
		"$BUILD/bench/bench_eval" --zone "$ZONE" --queries "$QFILE" --mode cold \
		--rounds 1 --limit "$CG_QUERIES" >/dev/null 2>"$OUT/callgrind.cold.log" ||
		echo "callgrind run of bench_eval --mode cold failed: see $OUT/callgrind.cold.log"
	CG_COLD=$(callgrind_per_eval "$OUT/callgrind.cold" "$CG_QUERIES")
	if [ "$LIBSPF2" = 1 ]; then
		valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.libspf2" \
			--collect-atstart=no --toggle-collect=pass_libspf2 \
			"$BUILD/bench/bench_libspf2" --zone "$ZONE" --queries "$QFILE" \
			--rounds 1 --limit "$CG_QUERIES" >/dev/null 2>"$OUT/callgrind.libspf2.log" ||
			echo "callgrind run of bench_libspf2 failed: see $OUT/callgrind.libspf2.log"
		CG_SPF2=$(callgrind_per_eval "$OUT/callgrind.libspf2" "$CG_QUERIES")
	fi
	if [ "$API" = 1 ]; then
		LD_LIBRARY_PATH="$API_DIR" valgrind --tool=callgrind \
			--callgrind-out-file="$OUT/callgrind.libspf2api" \
			--collect-atstart=no --toggle-collect=pass_libspf2 \
			"$BUILD/bench/bench_libspf2" --zone "$ZONE" --queries "$QFILE" \
			--rounds 1 --limit "$CG_QUERIES" >/dev/null 2>"$OUT/callgrind.libspf2api.log" ||
			echo "callgrind run of bench_libspf2 on our libspf2.so.2 failed: see $OUT/callgrind.libspf2api.log"
		CG_API=$(callgrind_per_eval "$OUT/callgrind.libspf2api" "$CG_QUERIES")
	fi
	echo "spfkit top functions (self instructions, share):"
	callgrind_annotate "$OUT/callgrind.spfkit" 2>/dev/null |
		awk '/file:function/ { on = 1; getline; next } on && NF && n < 8 {
			sub(/ \[.*$/, ""); sub(/\?\?\?:/, ""); print "   " $0; n++ }'
fi

if [ "$LATENCY" = 1 ]; then
	echo
	echo "== latency over loopback DNS (c-ares against tests/dnsd, $LAT_DELAY ms per answer)"
	"$BUILD/bench/bench_latency" --zone "$ZONE" --queries "$QFILE" --sample "$LAT_SAMPLE" \
		--delay-ms "$LAT_DELAY" --worst "$LAT_WORST" --seconds "$SECS" >"$OUT/latency.log" ||
		echo "bench_latency failed: see $OUT/latency.log"
	grep -v '^#BENCH' "$OUT/latency.log" || true
fi

# Issue 7: what lookahead asks over the whole corpus, without the network
# (zone resolver; each wait() answers everything asked before it).
if [ "$LAEQ" = 1 ]; then
	echo
	echo "== lookahead over the whole corpus (zone resolver, one round trip per wait)"
	"$BUILD/bench/lookahead_equal" --zone "$ZONE" --queries "$QFILE" >"$OUT/lookahead.log" ||
		echo "lookahead_equal failed: see $OUT/lookahead.log"
	grep -E '^(questions|round trips)' "$OUT/lookahead.log" || true
fi

echo
echo "== summary"
sed 's/^corpus: /corpus:          /' "$OUT/corpus.log"
D=$(bench_value spfkit_direct evals_per_s "$OUT"/spfkit.*.log | median)
DN=$(bench_value spfkit_direct ns_per_eval "$OUT"/spfkit.*.log | median)
C=$(bench_value spfkit_check evals_per_s "$OUT/spfkit.1.log")
CN=$(bench_value spfkit_check ns_per_eval "$OUT/spfkit.1.log")
echo "spfkit direct:   $D evaluations/s, $DN ns/eval (eval_step + zone_lookup; median of $PAIRS runs)"
M=$(bench_value spfkit_direct evals_per_s "$OUT"/spfkit-memo.*.log | median)
MN=$(bench_value spfkit_direct ns_per_eval "$OUT"/spfkit-memo.*.log | median)
echo "spfkit memo:     $M evaluations/s, $MN ns/eval (direct, with the record memo; median of $PAIRS runs)"
echo "spfkit check:    $C evaluations/s, $CN ns/eval (spfkit_check, zone resolver; one run)"
K=$(bench_value spfkit_cold evals_per_s "$OUT/spfkit.1.log")
KN=$(bench_value spfkit_cold ns_per_eval "$OUT/spfkit.1.log")
echo "spfkit cold:     $K evaluations/s, $KN ns/eval (a fresh context, no record cache, per evaluation; one run)"
if [ "$LIBSPF2" = 1 ]; then
	L=$(bench_value libspf2 evals_per_s "$OUT"/libspf2.*.log | median)
	LN=$(bench_value libspf2 ns_per_eval "$OUT"/libspf2.*.log | median)
	echo "libspf2:         $L evaluations/s, $LN ns/eval (median of $PAIRS runs)"
	ratios=$(paired_ratios spfkit_direct spfkit)
	R=$(echo "$ratios" | median)
	RLO=$(echo "$ratios" | lowest)
	RHI=$(echo "$ratios" | highest)
	awk -v r="$R" -v lo="$RLO" -v hi="$RHI" -v n="$PAIRS" 'BEGIN {
		printf "spfkit/libspf2 = %.1fx (median of %d paired runs, %.1fx to %.1fx; target >= 10x)\n", r, n, lo, hi }'
	awk '/^agreement/ { print }' "$OUT/libspf2.1.log"
	ratios=$(paired_ratios spfkit_direct spfkit-memo)
	echo "$ratios" | awk -v r="$(echo "$ratios" | median)" -v lo="$(echo "$ratios" | lowest)" \
		-v hi="$(echo "$ratios" | highest)" -v n="$PAIRS" 'END {
		printf "spfkit with the record memo/libspf2 = %.1fx (median of %d paired runs, %.1fx to %.1fx)\n", r, n, lo, hi }'
fi
if [ "$API" = 1 ]; then
	A=$(bench_value libspf2 evals_per_s "$OUT"/libspf2api.*.log | median)
	AN=$(bench_value libspf2 ns_per_eval "$OUT"/libspf2api.*.log | median)
	ratios=$(paired_ratios libspf2 libspf2api)
	awk -v a="$A" -v an="$AN" -v l="$L" -v r="$(echo "$ratios" | median)" \
		-v lo="$(echo "$ratios" | lowest)" -v hi="$(echo "$ratios" | highest)" -v n="$PAIRS" 'BEGIN {
		printf "libspf2 API on spfkit: %s evaluations/s vs libspf2 %s: %.1fx (%s ns/eval; median of %d paired runs, %.1fx to %.1fx; the same bench_libspf2 on our libspf2.so.2)\n",
			a, l, r, an, n, lo, hi }'
	sed -n 's/^agreement spfkit\/libspf2:/agreement spfkit\/libspf2 API on spfkit:/p' "$OUT/libspf2api.1.log"
fi
if [ -n "$CG_SPFKIT" ]; then
	echo "instructions/eval (callgrind): spfkit $CG_SPFKIT${CG_SPF2:+, libspf2 $CG_SPF2}"
	[ -n "$CG_MEMO" ] && echo "instructions/eval (callgrind), warm with the record memo: spfkit $CG_MEMO (spfkit_config.record_memo, as the daemons run; target <= 5000)"
	[ -n "$CG_COLD" ] && echo "instructions/eval (callgrind), cold: spfkit $CG_COLD (a fresh context per evaluation; target <= 25000)"
	if [ -n "$CG_SPF2" ]; then
		awk -v s="$CG_SPFKIT" -v l="$CG_SPF2" 'BEGIN { if (s > 0)
			printf "libspf2/spfkit instructions = %.1fx\n", l / s }'
		[ -n "$CG_MEMO" ] && awk -v s="$CG_MEMO" -v l="$CG_SPF2" 'BEGIN { if (s > 0)
			printf "libspf2/spfkit instructions, spfkit with the record memo = %.1fx\n", l / s }'
	fi
	if [ -n "$CG_API" ] && [ -n "$CG_SPF2" ]; then
		awk -v a="$CG_API" -v l="$CG_SPF2" 'BEGIN { if (a > 0)
			printf "instructions/eval (callgrind), libspf2 API on spfkit: %s vs libspf2 %s: %.1fx\n", a, l, l / a }'
	fi
fi
cat "$OUT/spfkit.1.log" "$OUT/libspf2.1.log" 2>/dev/null | awk '/peak RSS/ { print }'
if [ -s "$OUT/latency.log" ] && grep -q '^#BENCH latency ' "$OUT/latency.log"; then
	lat() { bench_value latency "$1" "$OUT/latency.log"; }
	echo "latency @$(lat delay_ms)ms/answer: strict $(lat strict_rt) RT, lookahead $(lat lookahead_rt) RT," \
		"minimum $(lat min_rt) RT (lookahead/min = $(lat ratio)x; target <= 1.05x;" \
		"$(lat sample) queries, cold)"
	echo "questions/eval:  strict $(lat strict_q) (max $(lat strict_qmax)), lookahead $(lat lookahead_q)" \
		"(max $(lat lookahead_qmax)): lookahead/strict = $(lat q_ratio)x (target <= 1.25x) (dnsd received" \
		"$(lat strict_served) and $(lat lookahead_served)); result disagreements $(lat disagree) (must be 0), depth disagreements $(lat depth_disagree) (must be 0)"
fi
if [ -s "$OUT/lookahead.log" ]; then
	sed -n 's/^questions\/eval: /whole corpus:    questions\/eval /p' "$OUT/lookahead.log"
	sed -n 's/^round trips\/eval (zone resolver, one per wait): /whole corpus:    round trips\/eval /p' "$OUT/lookahead.log"
fi
if [ -s "$OUT/latency.log" ] && grep -q '^#BENCH warm_lookahead_cache ' "$OUT/latency.log"; then
	warm() { bench_value "$1" "$2" "$OUT/latency.log"; }
	echo "warm cache:      $(warm warm_strict evals_per_s) evaluations/s strict" \
		"($(warm warm_strict_cache served) questions reached dnsd)," \
		"$(warm warm_lookahead evals_per_s) with lookahead ($(warm warm_lookahead_cache served))"
fi

# The policy service: spfkit-policyd against Debian's policyd-spf (issue 4),
# paired rounds at 8 and 64 clients, callgrind, idle RSS (issue 11).
echo
echo "== spfkit-policyd ($(load_now))"
sh "$SRC/bench/bench_policyd.sh" "$BUILD"

# The milter (issue 9): messages through spfkit-milter, 1 and 32 sessions.
echo
echo "== spfkit-milter ($(load_now))"
sh "$SRC/bench/bench_milter.sh" "$BUILD"
