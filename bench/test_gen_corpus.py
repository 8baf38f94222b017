#!/usr/bin/env python3
"""Checks of bench/gen_corpus.py: determinism and the corpus invariants.

usage: test_gen_corpus.py PATH/TO/gen_corpus.py
Exit 0 when every check passes; each failure prints "got ..., want ...".
"""

import hashlib
import ipaddress
import os
import re
import subprocess
import sys
import tempfile

OUTSIDE = [ipaddress.ip_network(n) for n in
           ("198.18.0.0/15", "192.0.2.0/24", "203.0.113.0/24", "2001:db8:f000::/36")]
FAILURES = []


def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print("FAIL:", what)


def generate(gen, out, *args):
    subprocess.run([sys.executable, gen, "--out", out] + list(args), check=True,
                   stdout=subprocess.DEVNULL)
    digest = hashlib.sha256()
    for name in ("bench.zone", "queries.txt", "queries.intent"):
        with open(os.path.join(out, name), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def txt_strings(line):
    return re.findall(r'"((?:[^"\\]|\\.)*)"', line)


def main():
    gen = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        a, b, c = (os.path.join(tmp, x) for x in "abc")
        small = ("--queries", "2000", "--domains", "400")
        h1 = generate(gen, a, *small)
        h2 = generate(gen, b, *small)
        h3 = generate(gen, c, "--seed", "1", *small)
        check(h1 == h2, "same seed gives the same corpus: got different bytes")
        check(h1 != h3, "another seed gives another corpus: got the same bytes")

        with open(os.path.join(a, "queries.txt")) as f:
            queries = [line.split() for line in f]
        with open(os.path.join(a, "queries.intent")) as f:
            intents = [line.strip() for line in f]
        check(len(queries) == 2000, "got %d queries, want 2000" % len(queries))
        check(len(intents) == len(queries), "got %d intents for %d queries" % (
            len(intents), len(queries)))
        check(all(len(q) == 3 for q in queries), "every query line has 3 fields")
        kinds = set(intents)
        for want in ("pass", "fail", "softfail", "none", "permerror"):
            check(want in kinds, "intent %s present: got %s" % (want, sorted(kinds)))

        nets = []
        with open(os.path.join(a, "bench.zone")) as f:
            for line in f:
                if " TXT " not in line:
                    continue
                parts = txt_strings(line)
                longest = max(len(p) for p in parts)
                check(longest <= 255, "character-string of %d bytes, want <= 255" % longest)
                for t in "".join(parts).split():
                    m = re.match(r"ip[46]:(.*)$", t)
                    if m:
                        try:
                            nets.append(ipaddress.ip_network(m.group(1)))
                        except ValueError:
                            pass  # the broken records hold bad ones on purpose

        # No published range may cover the address space reserved for
        # clients that must not match.
        for net in nets:
            for out in OUTSIDE:
                if net.version == out.version:
                    check(not net.overlaps(out), "%s overlaps reserved %s" % (net, out))

        for q, intent in zip(queries, intents):
            ip = ipaddress.ip_address(q[0])
            check(not ip.is_loopback, "loopback client %s (libspf2 passes it)" % ip)
            if intent in ("fail", "softfail", "neutral", "none", "permerror"):
                continue
            check(not any(ip in o for o in OUTSIDE), "pass client %s is in a reserved range" % ip)
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        return 1
    print("gen_corpus: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
