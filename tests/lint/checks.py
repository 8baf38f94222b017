#!/usr/bin/env python3
"""One positive and one negative case per `spfkit lint` check id.

    checks.py SPFKIT CHECKS_ZONE

For each id, `spfkit lint --json` of <id>.bad.example (in checks.zone)
must report that id, with the catalogue's fields (severity, section,
message, fix; the term and its offset where the check names a term),
and exit with the status its findings call for; <id>.good.example must
not report it. split-inside-token is also checked with --record, and
string-over-255 only there: no zone file or DNS answer can hold such a
string.
dns-failure needs a failing server: tests/cli/lint-dns-failure covers it.
"""
import json
import os
import re
import subprocess
import sys

ZONE_IDS = [
    "no-record", "multiple-records", "syntax", "version-glued", "legacy-syntax",
    "no-terminator", "plus-all", "wide-netblock", "neutral-all", "terms-after-all",
    "redirect-with-all", "duplicate-modifier", "unknown-modifier", "typo", "non-ascii",
    "lookups-over-10", "close-to-limit", "void-over-2", "mx-over-10", "target-no-address",
    "null-mx", "include-no-record", "redirect-no-record", "include-loop", "redirect-loop",
    "duplicate-include", "dynamic-target", "ptr-used", "record-over-450", "answer-over-512",
    "spf-rr-type", "bad-macro", "macro-leak", "private-range", "duplicate-netblock",
    "overlapping-netblock", "unreachable-term", "exp-target", "exp-in-include", "ttl",
    "wildcard-record", "split-inside-token",
    "covered-by-include", "modifier-before-mechanism", "parked-domain",
]
# ids that name a term: the finding must carry it and its offset
TERM_IDS = {
    "syntax", "legacy-syntax", "plus-all", "wide-netblock", "neutral-all", "terms-after-all",
    "redirect-with-all", "duplicate-modifier", "unknown-modifier", "typo", "non-ascii",
    "mx-over-10", "target-no-address", "null-mx", "include-no-record", "redirect-no-record",
    "include-loop", "redirect-loop", "duplicate-include", "dynamic-target", "ptr-used",
    "bad-macro", "macro-leak", "private-range", "duplicate-netblock", "overlapping-netblock",
    "unreachable-term", "exp-target", "exp-in-include", "split-inside-token",
    "covered-by-include", "modifier-before-mechanism",
}
RECORD_CASES = {
    "string-over-255": ('"v=spf1 %s -all"' % " ".join("ip4:192.0.2.%d" % i for i in range(1, 30)),
                        '"v=spf1 %s " "-all"' % " ".join("ip4:192.0.2.%d" % i for i in range(1, 15))),
    "split-inside-token": ('"v=spf1 ip4:192.0.2.1" "-all"', '"v=spf1 ip4:192.0.2.1 " "-all"'),
}
SEVERITIES = ("error", "warning", "notice")


def lint(spfkit, args):
    p = subprocess.run([spfkit, "lint", "--json"] + args, capture_output=True, timeout=60)
    if p.returncode not in (0, 1, 2):
        raise SystemExit("FAIL lint %s: exit %d %s" % (args, p.returncode, p.stderr))
    out = json.loads(p.stdout.decode("ascii"))
    # a provider record's warnings do not count (issue 31); its errors do
    sm = out["summary"]
    want = 2 if sm["error"] else 1 if sm["warning"] > sm.get("provider", {}).get("warning", 0) else 0
    if p.returncode != want or out["exit_status"] != want:
        raise SystemExit("FAIL lint %s: exit %d, want %d" % (args, p.returncode, want))
    return out


def check(name, cid, out, positive):
    found = [f for f in out["findings"] if f["id"] == cid]
    if positive and not found:
        return "%s: want a %s finding, got %s" % (name, cid, [f["id"] for f in out["findings"]])
    if not positive and found:
        return "%s: want no %s finding, got %s" % (name, cid, found[0]["message"])
    for f in found:
        if f["severity"] not in SEVERITIES or not f["message"] or not f["fix"] or \
                not f["rfc7208_section"]:
            return "%s: incomplete finding %s" % (name, f)
        if cid in TERM_IDS and (f["term"] is None or f["offset"] is None):
            return "%s: %s finding without its term and offset" % (name, cid)
        if f["offset"] is not None and out["record"] is not None and f["term"] is not None \
                and f["domain"] == out["domain"] \
                and out["record"][f["offset"]:f["offset"] + len(f["term"])] != f["term"]:
            return "%s: term %r is not at offset %d of %r" % (name, f["term"], f["offset"],
                                                             out["record"])
    return None


def provider_case(spfkit, zone):
    """Findings in a record outside the domain are the provider's: marked,
    and its warning left out of the exit status (issue 31)."""
    out = lint(spfkit, ["--zone", zone, "own-provider.example"])
    mine = {(f["id"], f["domain"]): f.get("provider") for f in out["findings"]}
    want = {("macro-leak", "_spf.own-provider.example"): False,
            ("macro-leak", "_spf.saas.example"): True,
            ("private-range", "_spf.saas.example"): True}
    for key, prov in want.items():
        if mine.get(key) is not prov:
            yield "own-provider.example: %s in %s: provider %s, want %s" % (
                key[0], key[1], mine.get(key), prov)
            return
    if out["exit_status"] != 0 or out["summary"].get("provider", {}).get("warning") != 1:
        yield "own-provider.example: exit %d, provider warnings %s; want 0 and 1" % (
            out["exit_status"], out["summary"].get("provider", {}).get("warning"))
        return
    yield None


def report_cases(spfkit, zone):
    """What the report says beside the findings (issue 31): every record of
    multiple-records, nothing evaluated for a record that does not parse
    (and what it would cost fixed), the cost of each term over the limit."""
    out = lint(spfkit, ["--zone", zone, "multiple-records.bad.example"])
    if sorted(out.get("spf_records", [])) != ["v=spf1 -all", "v=spf1 a -all"] or \
            out["lookups"].get("evaluated") is not False:
        yield "multiple-records.bad.example: spf_records %s, evaluated %s" % (
            out.get("spf_records"), out["lookups"].get("evaluated"))
    else:
        yield None
    out = lint(spfkit, ["--zone", zone, "fixable.example"])
    ids = [f["id"] for f in out["findings"] if f["offset"] == 22]
    if ids != ["syntax"] or "write ip4:" not in out["findings"][0]["message"] or \
            out["lookups"].get("evaluated") is not False or \
            out["lookups"].get("dns_terms_once_fixed") != 2:
        yield "fixable.example: findings at the typo %s, lookups %s" % (ids, out["lookups"])
    else:
        yield None
    out = lint(spfkit, ["--zone", zone, "covered-excl.example"])
    terms = sorted(f["term"] for f in out["findings"] if f["id"] == "covered-by-include")
    if terms != ["ip4:192.0.2.20"]:
        yield "covered-excl.example: covered-by-include at %s, want ip4:192.0.2.20 only" % terms
    else:
        yield None
    # a misspelling read as meant, a second redirect= left out: 3 once fixed
    rec = ("v=spf1 inlcude:good-spf.example a:host.example redirect=good-spf.example "
           "redirect=good-spf.example")
    out = lint(spfkit, ["--zone", zone, "--domain", "r.example", "--record", rec])
    if out["lookups"].get("dns_terms_once_fixed") != 3:
        yield "--record %s: once fixed %s, want 3" % (rec, out["lookups"].get("dns_terms_once_fixed"))
    else:
        yield None
    out = lint(spfkit, ["--zone", zone, "lookups-over-10.bad.example"])
    by = out["lookups"].get("by_term", [])
    f = [f for f in out["findings"] if f["id"] == "lookups-over-10"][0]
    if [(c["cost"], c["total"]) for c in by] != [(1, i) for i in range(1, 12)] or \
            'the 11th is reached in "a"' not in f["message"] or \
            not out["lookups"].get("flatten_fixes") or "spfkit flatten" not in f["fix"] or \
            out["lookups"].get("dns_terms_after_flatten") != 0:
        yield "lookups-over-10.bad.example: by_term %s, finding %s" % (by, f)
    else:
        yield None


def docs_table(zone):
    """docs/lint.md's checks table has a row for each check tested here,
    and no other (the acceptance of issue 31: a row for each new check)."""
    docs = os.path.join(os.path.dirname(os.path.abspath(zone)), "..", "..", "docs", "lint.md")
    with open(docs, encoding="utf-8") as f:
        rows = set(re.findall(r"^\| `([a-z0-9-]+)` \| (?:error|warning|notice) \|", f.read(), re.M))
    want = set(ZONE_IDS) | set(RECORD_CASES) | {"dns-failure"}
    if rows != want:
        yield "docs/lint.md's checks table: missing %s, not tested %s" % (
            sorted(want - rows), sorted(rows - want))
    else:
        yield None


def main():
    spfkit, zone = sys.argv[1], sys.argv[2]
    bad = n = 0
    for why in docs_table(zone):
        n += 1
        if why:
            bad += 1
            print("FAIL " + why)
    for case in (provider_case, report_cases):
        for why in case(spfkit, zone):
            n += 1
            if why:
                bad += 1
                print("FAIL " + why)
    for cid in ZONE_IDS:
        for kind in ("bad", "good"):
            name = "%s.%s.example" % (cid, kind)
            why = check(name, cid, lint(spfkit, ["--zone", zone, name]), kind == "bad")
            n += 1
            if why:
                bad += 1
                print("FAIL " + why)
    for cid, (pos, neg) in RECORD_CASES.items():
        for rec, positive in ((pos, True), (neg, False)):
            why = check("--record %s" % rec[:40], cid,
                        lint(spfkit, ["--zone", zone, "--domain", "r.example", "--record", rec]),
                        positive)
            n += 1
            if why:
                bad += 1
                print("FAIL " + why)
    print("%d cases, %d failures" % (n, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
