#!/usr/bin/env python3
"""lint and the evaluator count alike (issue 10).

    count_equal.py SPFKIT GEN_CORPUS [--domains N]
    count_equal.py SPFKIT --zone FILE   (the domains of FILE whose name starts with "t")

Generates the benchmark corpus (bench/gen_corpus.py), then for every
domain of its queries runs `spfkit lint --batch --json` and evaluates the domain
with `spfkit check --batch --json` for a client that no record
authorises (198.18.0.1, and 2001:db8:f000::1 for IPv6: gen_corpus.py
never hands out those ranges), the client that walks the whole tree.
For each domain and family:

  - lint predicts permerror (permerror_ipv4/ipv6) exactly when the
    evaluator returns permerror;
  - otherwise lint's worst-case dns_terms and void_lookups equal the
    evaluator's counters.

Any difference is printed with the domain and its record, and fails.
"""
import json
import os
import subprocess
import sys
import tempfile

CLIENTS = (("ipv4", "198.18.0.1"), ("ipv6", "2001:db8:f000::1"))


def lint(spfkit, zone, domains):
    """`spfkit lint --batch --json`: one JSON object per domain, in order."""
    with tempfile.NamedTemporaryFile("w", suffix=".domains", delete=False) as f:
        f.write("".join(d + "\n" for d in domains))
        path = f.name
    try:
        p = subprocess.run([spfkit, "lint", "--zone", zone, "--json", "--batch", path],
                           capture_output=True, text=True, timeout=600)
    finally:
        os.unlink(path)
    if p.returncode not in (0, 1, 2):
        raise SystemExit("FAIL lint --batch: exit %d: %s" % (p.returncode, p.stderr))
    out = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    if [o["domain"] for o in out] != domains:
        raise SystemExit("FAIL lint --batch: %d reports for %d domains" % (len(out), len(domains)))
    return out


def evaluate(spfkit, zone, domains, ip):
    with tempfile.NamedTemporaryFile("w", suffix=".batch", delete=False) as f:
        for d in domains:
            f.write("%s postmaster@%s helo.example\n" % (ip, d))
        path = f.name
    try:
        p = subprocess.run([spfkit, "check", "--zone", zone, "--batch", path, "--json",
                            "--receiver", "r.example"],
                           capture_output=True, text=True, timeout=300)
    finally:
        os.unlink(path)
    out = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    if len(out) != len(domains):
        raise SystemExit("FAIL check --batch: %d results for %d domains: %s" %
                         (len(out), len(domains), p.stderr))
    return out


def zone_domains(zone):
    """Owners starting with "t" below the zone's $ORIGIN."""
    origin, out = "", []
    for line in open(zone, encoding="ascii"):
        if line.startswith("$ORIGIN"):
            origin = line.split()[1]
        elif line[:1] == "t" and " TXT " in line:
            out.append((line.split()[0] + "." + origin).rstrip("."))
    return out


def compare(spfkit, zone, domains):
    linted = lint(spfkit, zone, domains)
    bad = 0
    compared = 0
    for fam, ip in CLIENTS:
        results = evaluate(spfkit, zone, domains, ip)
        for d, lr, er in zip(domains, linted, results):
            c = lr["lookups"]
            want_perm = c["permerror_" + fam]
            got_perm = er["result"] == "permerror"
            terms, voids = er["counters"]["dns_terms"], er["counters"]["void_lookups"]
            problem = None
            if want_perm != got_perm:
                problem = "lint permerror=%s, evaluator %s (%s)" % (
                    want_perm, er["result"], er.get("problem"))
            elif not want_perm and (c["dns_terms"], c["void_lookups_" + fam]) != (terms, voids):
                problem = "lint %d terms %d voids, evaluator %d terms %d voids" % (
                    c["dns_terms"], c["void_lookups_" + fam], terms, voids)
            compared += 1
            if problem:
                bad += 1
                print("FAIL %s %s: %s\n  record: %s" % (d, fam, problem, lr["record"]))
    print("%d domains x 2 families compared, %d differences" % (len(domains), bad))
    return 1 if bad or compared == 0 else 0


def main():
    spfkit = sys.argv[1]
    if sys.argv[2] == "--zone":
        return compare(spfkit, sys.argv[3], zone_domains(sys.argv[3]))
    gen = sys.argv[2]
    sys.path.insert(0, os.path.dirname(os.path.abspath(gen)))
    sys.dont_write_bytecode = True  # nothing written into the source tree
    import gen_corpus  # its reader of its queries.txt
    ndomains = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--domains" else "3000"
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, gen, "--out", tmp, "--domains", ndomains,
                        "--queries", "20000"], check=True, capture_output=True)
        return compare(spfkit, os.path.join(tmp, "bench.zone"),
                       gen_corpus.query_domains(os.path.join(tmp, "queries.txt")))


if __name__ == "__main__":
    sys.exit(main())
