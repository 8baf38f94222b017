#!/bin/sh
# debian/symbols-from-maps.sh > debian/libspfkit1.symbols: the symbols
# file of libspfkit1 from the version scripts that decide the exports
# (lib/spfkit.map, lib/event/spfkit-event.map); run it after a map changes
# (tools/update-symbols.sh) and give the new symbols the version that
# first has them. The build fails while the two differ (debian/rules).
set -eu
cd "$(dirname "$0")/.."
version=${1:-0.1.0}
for pair in libspfkit.so.1:lib/spfkit.map libspfkit-event.so.1:lib/event/spfkit-event.map; do
	lib=${pair%%:*} map=${pair#*:}
	node=$(sed -n 's/^\([A-Z][A-Z0-9_.]*\) {.*/\1/p' "$map" | head -n 1)
	echo "$lib libspfkit1 #MINVER#"
	echo "* Build-Depends-Package: libspfkit-dev"
	echo " $node@$node $version"
	sed -n 's/^[[:space:]]*\(spfkit_[A-Za-z0-9_]*\);.*/\1/p' "$map" | sort |
		while read -r sym; do echo " $sym@$node $version"; done
done
