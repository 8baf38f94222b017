#!/bin/sh
# make bench: evaluation benchmark of spfkit against libspf2.
#
# usage: bench/run.sh BUILD_DIR
#
# Builds the benchmark targets in BUILD_DIR (a meson build directory,
# --buildtype=release for figures worth quoting), generates the corpus
# into BUILD_DIR/bench-corpus, times spfkit (and libspf2 when meson found
# it), compares their results, and counts instructions per evaluation
# with callgrind when valgrind is installed. About a minute in all.
#
# Environment: BENCH_SECONDS (timed seconds per measure, default 3),
# BENCH_QUERIES (corpus size, default 10000), BENCH_CALLGRIND=0 to skip
# the instruction counts, BENCH_CG_QUERIES (queries under callgrind,
# default 2000).
set -eu

if [ $# -ne 1 ] || [ ! -f "$1/build.ninja" ]; then
	echo "usage: bench/run.sh BUILD_DIR (a meson build directory)" >&2
	exit 2
fi
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT="$BUILD/bench-corpus"
SECONDS_PER=${BENCH_SECONDS:-3}
QUERIES=${BENCH_QUERIES:-10000}
CG_QUERIES=${BENCH_CG_QUERIES:-2000}

have_target() {
	grep -q "^build bench/$1:" "$BUILD/build.ninja"
}

# value of key=... on the "#BENCH name" line of a log
bench_value() {
	awk -v name="$2" -v key="$3" '$1 == "#BENCH" && $2 == name {
		for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) print kv[2] } }' "$1"
}

# Ir of one callgrind run, per evaluation
callgrind_per_eval() {
	awk -v n="$2" '/^(summary|totals):/ { t = $2 } END { if (t != "" && n > 0) printf "%.0f", t / n }' "$1"
}

LIBSPF2=0
have_target bench_libspf2 && LIBSPF2=1
targets=bench/bench_eval
[ "$LIBSPF2" = 1 ] && targets="$targets bench/bench_libspf2"
# shellcheck disable=SC2086 # targets is a list on purpose
ninja -C "$BUILD" $targets >/dev/null

buildtype=$(meson introspect --buildoptions "$BUILD" 2>/dev/null |
	python3 -c 'import json,sys; print(next((o["value"] for o in json.load(sys.stdin) if o["name"] == "buildtype"), "?"))' ||
	echo "?")
echo "== spfkit evaluation benchmark (build type: $buildtype)"
[ "$buildtype" = release ] || echo "   note: figures are for buildtype=release; this build is $buildtype"

mkdir -p "$OUT"
python3 "$SRC/bench/gen_corpus.py" --out "$OUT" --queries "$QUERIES" >"$OUT/corpus.log"
cat "$OUT/corpus.log"
ZONE="$OUT/bench.zone"
QFILE="$OUT/queries.txt"

echo
echo "== spfkit"
"$BUILD/bench/bench_eval" --zone "$ZONE" --queries "$QFILE" --seconds "$SECONDS_PER" \
	--results-out "$OUT/results-spfkit.txt" --intent "$OUT/queries.intent" >"$OUT/spfkit.log"
grep -v '^#BENCH' "$OUT/spfkit.log"

if [ "$LIBSPF2" = 1 ]; then
	echo
	echo "== libspf2 (hashed in-memory DNS layer)"
	"$BUILD/bench/bench_libspf2" --zone "$ZONE" --queries "$QFILE" --seconds "$SECONDS_PER" \
		--compare "$OUT/results-spfkit.txt" >"$OUT/libspf2.log"
	grep -v '^#BENCH' "$OUT/libspf2.log"
else
	echo
	echo "== libspf2 not found by meson (Debian: libspf2-dev): no comparison"
fi

CG_SPFKIT="" CG_SPF2=""
if [ "${BENCH_CALLGRIND:-1}" != 0 ] && command -v valgrind >/dev/null 2>&1; then
	echo
	echo "== instructions per evaluation (valgrind --tool=callgrind, first $CG_QUERIES queries, one pass)"
	valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.spfkit" \
		--collect-atstart=no --toggle-collect=pass_direct \
		"$BUILD/bench/bench_eval" --zone "$ZONE" --queries "$QFILE" --mode direct \
		--rounds 1 --limit "$CG_QUERIES" >/dev/null 2>"$OUT/callgrind.spfkit.log" ||
		echo "callgrind run of bench_eval failed: see $OUT/callgrind.spfkit.log"
	CG_SPFKIT=$(callgrind_per_eval "$OUT/callgrind.spfkit" "$CG_QUERIES")
	if [ "$LIBSPF2" = 1 ]; then
		valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.libspf2" \
			--collect-atstart=no --toggle-collect=pass_libspf2 \
			"$BUILD/bench/bench_libspf2" --zone "$ZONE" --queries "$QFILE" \
			--rounds 1 --limit "$CG_QUERIES" >/dev/null 2>"$OUT/callgrind.libspf2.log" ||
			echo "callgrind run of bench_libspf2 failed: see $OUT/callgrind.libspf2.log"
		CG_SPF2=$(callgrind_per_eval "$OUT/callgrind.libspf2" "$CG_QUERIES")
	fi
	echo "spfkit top functions (share of instructions):"
	callgrind_annotate "$OUT/callgrind.spfkit" 2>/dev/null |
		awk '/file:function/ { on = 1; getline; next } on && NF && n < 8 {
			sub(/ \[.*$/, ""); sub(/\?\?\?:/, ""); print "   " $0; n++ }'
fi

echo
echo "== summary"
sed 's/^corpus: /corpus:          /' "$OUT/corpus.log"
D=$(bench_value "$OUT/spfkit.log" spfkit_direct evals_per_s)
DN=$(bench_value "$OUT/spfkit.log" spfkit_direct ns_per_eval)
C=$(bench_value "$OUT/spfkit.log" spfkit_check evals_per_s)
CN=$(bench_value "$OUT/spfkit.log" spfkit_check ns_per_eval)
echo "spfkit direct:   $D evaluations/s, $DN ns/eval (eval_step + zone_lookup)"
echo "spfkit check:    $C evaluations/s, $CN ns/eval (spfkit_check, zone resolver)"
if [ "$LIBSPF2" = 1 ]; then
	L=$(bench_value "$OUT/libspf2.log" libspf2 evals_per_s)
	LN=$(bench_value "$OUT/libspf2.log" libspf2 ns_per_eval)
	echo "libspf2:         $L evaluations/s, $LN ns/eval"
	awk -v d="$D" -v l="$L" 'BEGIN { if (l > 0) printf "spfkit/libspf2 = %.1fx (target >= 10x)\n", d / l }'
	awk '/^agreement/ { print }' "$OUT/libspf2.log"
fi
if [ -n "$CG_SPFKIT" ]; then
	echo "instructions/eval (callgrind): spfkit $CG_SPFKIT${CG_SPF2:+, libspf2 $CG_SPF2}"
fi
cat "$OUT/spfkit.log" "$OUT/libspf2.log" 2>/dev/null | awk '/peak RSS/ { print }'
