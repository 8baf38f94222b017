#!/bin/sh
# make demo: spfkit on the embedded offline world, data/demo.zone.
# First every query of data/demo.queries in one batch, each checked
# against the result the file expects; then the full output of one query
# per result, headers included. No network is used.
set -eu
build=${1:-build}
spfkit="$build/cli/spfkit"
zone=data/demo.zone
queries=data/demo.queries
receiver=mx.receiver.example

if [ ! -x "$spfkit" ]; then
	echo "demo: $spfkit is not built; run make build" >&2
	exit 1
fi

echo "== spfkit check --batch over $queries (zone $zone, no network) =="
# Feed "ip sender helo" to the batch and pair each answer with its expectation.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -v '^[[:space:]]*#' "$queries" | awk 'NF >= 4 { print $1, $2, $3 > "'"$tmp"'/in"; print $4 > "'"$tmp"'/want" }'
"$spfkit" check --batch "$tmp/in" --zone "$zone" --receiver "$receiver" >"$tmp/out" || true
paste -d '\t' "$tmp/want" "$tmp/out" | awk -F '\t' '
	{ split($2, f, " "); mark = (f[4] == $1) ? "ok  " : "MISMATCH (expected " $1 ")"
	  printf "%-4s %s\n", mark, $2; if (f[4] != $1) bad++ }
	END { printf "\n%d queries, %d as expected\n", NR, NR - bad; exit bad > 0 }'

show() {
	echo
	echo "== $1 =="
	echo "\$ spfkit check --zone $zone --receiver $receiver --ip $2 --sender $3 --helo $4"
	"$spfkit" check --zone "$zone" --receiver "$receiver" --ip "$2" --sender "$3" --helo "$4" || true
}

show "pass: an MX host of example.com (v=spf1 mx -all)" 192.0.2.10 alice@example.com mx1.example.com
show "fail: a stranger using example.com, with the explanation" 203.0.113.5 alice@example.com mail.example.net
show "softfail: outside newsletter.example.org's range (~all)" 192.0.2.130 news@newsletter.example.org mailer.example.org
show "none: legacy.example.com publishes no SPF record" 192.0.2.200 carol@legacy.example.com legacy.example.com
show "permerror: broken.example.org has a syntax error" 192.0.2.1 heidi@broken.example.org mail.example.org
show "fail with a macro explanation: shop.example.net (exists:%{i}._allow.%{d})" 192.0.2.78 orders@shop.example.net mx.shop.example.net

# For domain owners: lint reads the same zone and tells what receivers
# will make of a record. The first example is SPF's classic 2003 record.
lint() {
	echo
	echo "== $1 =="
	echo "\$ spfkit lint --zone $zone $2"
	"$spfkit" lint --zone "$zone" "$2" || true
}

lint "for domain owners: 'v=spf1 mx default=deny' ends neutral, not fail" classic.example.com
lint "for domain owners: a record that includes itself" loop.example.com

# The include chain as a tree: per record its lookups, voids, addresses
# and TTL, counted as lint counts. With Graphviz, also as a picture.
echo
echo "== for domain owners: the include chain of example.org as a tree =="
echo "\$ spfkit tree --zone $zone example.org"
"$spfkit" tree --zone "$zone" example.org || true
if command -v dot >/dev/null 2>&1; then
	svg=/tmp/spfkit-demo-example.org.svg
	echo
	echo "\$ spfkit tree --zone $zone example.org --svg --output $svg"
	if "$spfkit" tree --zone "$zone" example.org --svg --output "$svg"; then
		echo "wrote $svg ($(wc -c <"$svg") bytes): open it in a browser"
	fi
else
	echo "(spfkit tree --svg draws this tree with Graphviz: apt-get install graphviz)"
fi

# The same tree as ip4/ip6 terms: a record with no DNS lookups, proven
# equal to the original by evaluating both for every range's edges.
echo
echo "== for domain owners: example.org flattened =="
echo "\$ spfkit flatten --zone $zone example.org"
"$spfkit" flatten --zone "$zone" example.org || true
