#!/bin/sh
# Test: generate the default 10,000-query corpus in a scratch directory and
# check that evaluation with the record memo agrees with plain evaluation
# on every query. usage: memo_equal.sh PYTHON GEN_CORPUS MEMO_EQUAL
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$1" "$2" --out "$tmp" --queries 10000 >/dev/null
"$3" --zone "$tmp/bench.zone" --queries "$tmp/queries.txt"
