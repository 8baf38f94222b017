#!/usr/bin/python3
"""lint's pyspf void warning against pyspf itself (issue 31, defect 1).

    mx_voids.py SPFKIT ZONE

pyspf (Debian's python3-spf) looks up every MX host of an "mx" term with
the client's family (A or AAAA) and counts each empty answer as a void
lookup, beside the void lookups of the other terms; past two it returns
permerror (its "Void lookup limit"). RFC 7208's evaluators, spfkit's
among them, count a term once, so lint's counts stay the evaluator's and
lint warns (target-no-address, "... IPv6 senders get permerror there")
where pyspf-based receivers would fail the sender.

For every top domain of ZONE (owners starting with "t") and a client of
each family that matches nothing (198.18.0.1, 2001:db8:f000::1): lint
must warn for that family exactly when pyspf returns its void-lookup
permerror and lint itself predicts no permerror. EXPECTED pins pyspf's
verdicts, so the fixture keeps covering both sides of the rule.
"""
import json
import subprocess
import sys

import spf  # python3-spf (make test installs it)

CLIENTS = (("ipv4", 4, "198.18.0.1"), ("ipv6", 6, "2001:db8:f000::1"))
# domain: (pyspf's void permerror for an IPv4 client, for an IPv6 client)
EXPECTED = {
    "t-mx-exists": (False, True),
    "t-exists-mx": (False, True),
    "t-include-a": (False, True),
    "t-mx-twice": (False, True),
    "t-three": (False, True),
    "t-v6-hosts": (True, False),
    "t-two": (False, False),
    "t-one-short": (False, False),
}


def load_zone(path):
    """{(name, TYPE): [data]} of a zone file with one record a line,
    $ORIGIN and relative owners; TXT data as a list of strings, MX as
    (preference, host)."""
    rrs, origin = {}, ""
    for line in open(path, encoding="ascii"):
        line = line.split(";", 1)[0].rstrip() if '"' not in line else line.rstrip()
        if not line.strip():
            continue
        if line.startswith("$ORIGIN"):
            origin = line.split()[1].rstrip(".")
            continue
        if line.startswith("$"):
            continue
        owner, rest = line.split(None, 1)
        name = owner.rstrip(".") if owner.endswith(".") else owner + "." + origin
        fields = rest.split(None, 1)
        while fields[0].isdigit() or fields[0].upper() == "IN":
            fields = fields[1].split(None, 1)
        rtype, data = fields[0].upper(), fields[1]
        if rtype == "TXT":
            value = [s.encode("ascii") for s in data.split('"')[1::2]]
        elif rtype == "MX":
            pref, host = data.split()
            value = (int(pref), host.rstrip(".").lower())
        else:
            value = data.strip()
        rrs.setdefault((name.lower(), rtype), []).append(value)
    return rrs


def pyspf_void_permerror(rrs, domain, ip):
    def lookup(name, qtype, strict=True, timeout=None):
        name = name.lower().rstrip(".")
        return [((name, qtype), data) for data in rrs.get((name, qtype), [])]

    spf.DNSLookup = lookup
    res, _code, expl = spf.query(i=ip, s="postmaster@" + domain, h="helo.example").check()
    return res == "permerror" and "void lookup" in expl.lower(), "%s (%s)" % (res, expl)


def lint(spfkit, zone, domain):
    p = subprocess.run([spfkit, "lint", "--zone", zone, "--json", domain],
                       capture_output=True, text=True, timeout=60)
    if p.returncode not in (0, 1, 2):
        raise SystemExit("FAIL lint %s: exit %d %s" % (domain, p.returncode, p.stderr))
    return json.loads(p.stdout)


def main():
    spfkit, zone = sys.argv[1], sys.argv[2]
    rrs = load_zone(zone)
    bad = compared = 0
    for short, (want4, want6) in EXPECTED.items():
        domain = short + ".mxv.example"
        out = lint(spfkit, zone, domain)
        for (fam, v, ip), want in zip(CLIENTS, (want4, want6)):
            perm, said = pyspf_void_permerror(rrs, domain, ip)
            warned = [f for f in out["findings"]
                      if "pyspf" in f["message"] and "IPv%d senders" % v in f["message"]]
            lint_perm = out["lookups"]["permerror_" + fam]
            problem = None
            if perm != want:
                problem = "pyspf says %s, the fixture expects void permerror=%s" % (said, want)
            elif perm and not lint_perm and not warned:
                problem = "pyspf: %s; lint: no warning for IPv%d senders" % (said, v)
            elif not perm and warned:
                problem = "pyspf: %s; lint warns: %s" % (said, warned[0]["message"])
            elif warned and (warned[0]["severity"] != "warning" or out["exit_status"] < 1):
                problem = "the warning does not set the exit status: %r" % warned[0]
            compared += 1
            if problem:
                bad += 1
                print("FAIL %s %s: %s\n  record: %s" % (domain, fam, problem, out["record"]))
    print("%d domains x 2 families compared with pyspf %s, %d differences" %
          (len(EXPECTED), spf.__version__, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
