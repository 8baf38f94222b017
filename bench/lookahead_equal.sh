#!/bin/sh
# Test: generate the default 10,000-query corpus in a scratch directory and
# check that strict and lookahead evaluation agree on every query.
# usage: lookahead_equal.sh PYTHON GEN_CORPUS LOOKAHEAD_EQUAL
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$1" "$2" --out "$tmp" --queries 10000 >/dev/null
"$3" --zone "$tmp/bench.zone" --queries "$tmp/queries.txt"
