#!/usr/bin/python3
"""Second opinion: pyspf (Debian's python3-spf) on the benchmark corpus.

usage: test_pyspf_corpus.py SPFKIT GEN_CORPUS

Generates the default corpus (bench/gen_corpus.py: provider include trees,
long ip4/ip6 lists, a/mx, redirects, exp=, ptr, broken records), answers
pyspf's DNS from its zone, and checks that `spfkit check --zone --batch`
gives the same result and, for fail, the same explanation on every query.

pyspf is a peer, not the reference: where it and RFC 7208 part, the RFC
decides and the case goes into DEVIATIONS below with its section. On this
corpus there is none (checked by hand against the RFC when written, with
Mail::SPF as a third opinion: it differs on the 145 queries whose "mx"
names more than 10 hosts, where it still cuts the list as RFC 4408 did
instead of the permerror of RFC 7208 section 4.6.4; spfkit and pyspf agree).
Needs /usr/bin/python3 with the spf module: a missing module fails the test.
"""
import os
import re
import subprocess
import sys
import tempfile

import spf  # python3-spf (make test installs it)

RECEIVER = "mx.receiver.example"
# pyspf's text for a fail whose domain gives no exp=, given to spfkit too
DEFAULT_EXPLANATION = spf.EXPLANATIONS["fail"]
# (query line, spfkit result, pyspf result, RFC 7208 section that decides)
DEVIATIONS = []
QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def unescape(s):
    """RFC 1035 section 5.1 escapes of a zone file's quoted string."""
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] == "\\" and s[i + 1:i + 4].isdigit():
            out.append(int(s[i + 1:i + 4]))
            i += 4
        elif s[i] == "\\" and i + 1 < len(s):
            out += s[i + 1].encode("ascii")
            i += 2
        else:
            out += s[i].encode("ascii")
            i += 1
    return bytes(out)


def load_zone(path):
    """{(name, TYPE): [rdata]}: TXT as lists of strings, MX as (pref, host)."""
    rrs = {}
    with open(path, encoding="ascii") as f:
        for line in f:
            if not line.strip() or line[0] in ";$":
                continue
            name, _ttl, _cls, rtype, data = line.rstrip("\n").split(None, 4)
            key = (name.lower().rstrip("."), rtype.upper())
            if key[1] == "TXT":
                value = [unescape(m) for m in QUOTED.findall(data)]
            elif key[1] == "MX":
                pref, host = data.split()
                value = (int(pref), host.lower().rstrip("."))
            else:
                value = data.strip().lower().rstrip(".")
            rrs.setdefault(key, []).append(value)
    return rrs


def pyspf_results(zone, queries):
    rrs = load_zone(zone)

    def lookup(name, qtype, strict=True, timeout=None):
        name = name.lower().rstrip(".")
        return [((name, qtype), data) for data in rrs.get((name, qtype), [])]

    spf.DNSLookup = lookup
    out = []
    for ip, sender, helo in queries:
        if sender in ("<>", ""):
            sender = "postmaster@" + helo  # RFC 7208 section 2.4
        res, _code, expl = spf.query(i=ip, s=sender, h=helo, receiver=RECEIVER).check()
        out.append((res, expl if res == "fail" else ""))
    return out


def spfkit_results(spfkit, zone, qfile, n):
    run = subprocess.run([spfkit, "check", "--zone", zone, "--receiver", RECEIVER,
                          "--default-explanation", DEFAULT_EXPLANATION, "--batch", qfile],
                         capture_output=True, text=True, check=False)
    lines = run.stdout.splitlines()
    if len(lines) != n:
        sys.exit("spfkit check --batch gave %d lines for %d queries (exit %d): %s"
                 % (len(lines), n, run.returncode, run.stderr[:500]))
    out = []
    for line in lines:
        fields = line.split(" ", 4)
        out.append((fields[3], fields[4] if fields[3] == "fail" and len(fields) > 4 else ""))
    return out


def main():
    spfkit, gen = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, gen, "--out", tmp, "--queries", "10000"], check=True,
                       stdout=subprocess.DEVNULL)
        zone, qfile = os.path.join(tmp, "bench.zone"), os.path.join(tmp, "queries.txt")
        with open(qfile, encoding="ascii") as f:
            queries = [tuple(line.split()) for line in f if line.strip()]
        ours = spfkit_results(spfkit, zone, qfile, len(queries))
        theirs = pyspf_results(zone, queries)
    known = {(d[0], d[1], d[2]) for d in DEVIATIONS}
    bad = []
    for i, (a, b) in enumerate(zip(ours, theirs), 1):
        if a != b and (i, a[0], b[0]) not in known:
            bad.append((i, queries[i - 1], a, b))
    fails = sum(1 for a in ours if a[0] == "fail" and a[1])
    own = sum(1 for a in ours if a[0] == "fail" and a[1] != DEFAULT_EXPLANATION)
    print("%d queries, %d explanations compared (%d from exp=); %d differ from pyspf %s"
          % (len(queries), fails, own, len(bad), spf.__version__))
    for i, q, a, b in bad[:20]:
        print("query %d %s: spfkit %r, pyspf %r" % (i, " ".join(q), a, b))
    # the corpus must exercise what is compared
    results = {a[0] for a in ours}
    if own == 0 or not {"pass", "fail", "softfail", "neutral", "none",
                          "permerror"} <= results:
        sys.exit("the corpus no longer covers every result: %s" % sorted(results))
    sys.exit(1 if bad else 0)


main()
