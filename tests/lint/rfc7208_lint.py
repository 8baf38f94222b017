#!/usr/bin/env python3
"""The RFC 7208 suite's records through `spfkit lint` (issue 10).

    rfc7208_lint.py SPFKIT SUITE_YML

For each scenario, its zonedata is written as a zone file (the suite's
conventions of tests/rfc7208/suite.c: an SPF entry is also the name's TXT
record unless the name lists TXT entries of its own; "TXT: NONE" and an
empty list make a name with no data; a TIMEOUT cannot be written in a
zone file and is left out). Then:

  1. every record of the zonedata goes through `lint --record REC
     --domain NAME --zone FILE`, and `--json` must give one JSON object
     and exit 0, 1 or 2 (no crash, no sanitizer report);
  2. every case whose expected result is permerror (alone, or among its
     allowed results) must be flagged with at least one error by lint on
     the checked domain's record: `--record` when the domain has exactly
     one SPF record, else `lint DOMAIN` (none or several records).
     The exceptions are listed in KNOWN with the reason.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:  # Debian: python3-yaml; the test is skipped without it
    print("SKIP: no python yaml module")
    sys.exit(77)

# Cases lint cannot flag, with the reason.
KNOWN = {
    # Two identical TXT records: a zone file (like DNS caches, as the
    # case's own description says) keeps one copy of identical records
    # (RFC 2181 section 5), so the zone holds one record and lint sees one.
    "multispf1": "identical records are one record in a zone file",
}


def esc_name(name):
    out = []
    for ch in name:
        if ch.isalnum() or ch in "-_.*":
            out.append(ch)
        else:
            for b in ch.encode("utf-8"):
                out.append("\\%03d" % b)
    return "".join(out).rstrip(".") + "."


def esc_strings(data):
    if isinstance(data, list):
        raw = b"".join(s.encode("utf-8") for s in data)
    else:
        raw = data.encode("utf-8")
    chunks = [raw[i:i + 255] for i in range(0, len(raw), 255)] or [b""]
    out = []
    for c in chunks:
        s = "".join(chr(b) if 0x20 <= b < 0x7f and b not in (0x22, 0x5c) else "\\%03d" % b
                    for b in c)
        out.append('"%s"' % s)
    return " ".join(out)


def zone_text(zonedata):
    lines = []
    for name, entries in zonedata.items():
        n = esc_name(name)
        has_txt = any(isinstance(e, dict) and "TXT" in e for e in entries)
        if not entries:
            lines.append("%s HINFO \"empty\" \"name\"" % n)
        for e in entries:
            if not isinstance(e, dict):
                continue  # TIMEOUT
            (t, v), = e.items()
            if t in ("A", "AAAA", "PTR", "CNAME"):
                lines.append("%s %s %s" % (n, t, v if t in ("A", "AAAA") else esc_name(v)))
            elif t == "MX":
                lines.append("%s MX %d %s" % (n, v[0], esc_name(v[1]) if v[1] not in ("", ".") else "."))
            elif t == "TXT" and v == "NONE":
                lines.append("%s HINFO \"no\" \"txt\"" % n)
            elif t in ("TXT", "SPF"):
                lines.append("%s %s %s" % (n, t, esc_strings(v)))
                if t == "SPF" and not has_txt:
                    lines.append("%s TXT %s" % (n, esc_strings(v)))
    return "\n".join(lines) + "\n"


def records_of(zonedata, name):
    for key, entries in zonedata.items():
        if key.lower().rstrip(".") != name.lower().rstrip("."):
            continue
        has_txt = any(isinstance(e, dict) and "TXT" in e for e in entries)
        out = []
        for e in entries:
            if isinstance(e, dict):
                (t, v), = e.items()
                if (t == "TXT" or (t == "SPF" and not has_txt)) and v != "NONE":
                    text = "".join(v) if isinstance(v, list) else v
                    if text.lower().startswith("v=spf1") and (len(text) == 6 or text[6] == " "):
                        out.append(text)
        return out
    return []


def record_arg(text):
    """--record's argument: plain, or zone-file strings when argv cannot carry it."""
    if all(0x20 <= ord(ch) < 0x7f for ch in text):
        return text
    return esc_strings(text)


def lint(spfkit, args):
    p = subprocess.run([spfkit, "lint", "--json"] + args, capture_output=True, timeout=60)
    if p.returncode not in (0, 1, 2):
        return None, "exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace"))
    try:
        return json.loads(p.stdout.decode("ascii")), None
    except ValueError as e:
        return None, "not JSON: %s" % e


def main():
    spfkit, yml = sys.argv[1], sys.argv[2]
    docs = [d for d in yaml.safe_load_all(open(yml, encoding="utf-8")) if d]
    bad = records = cases = 0
    with tempfile.TemporaryDirectory() as tmp:
        for si, sc in enumerate(docs):
            zdata = sc.get("zonedata") or {}
            zone = os.path.join(tmp, "s%d.zone" % si)
            with open(zone, "w", encoding="ascii") as f:
                f.write(zone_text(zdata))
            for name, entries in zdata.items():
                for e in entries:
                    if isinstance(e, dict) and ("TXT" in e or "SPF" in e):
                        v = e.get("TXT", e.get("SPF"))
                        text = "".join(v) if isinstance(v, list) else v
                        records += 1
                        out, err = lint(spfkit, ["--zone", zone, "--domain", name, "--record",
                                                 record_arg(text)])
                        if err:
                            bad += 1
                            print("FAIL record %r of %s: %s" % (text, name, err))
            for cname, c in sc["tests"].items():
                res = c["result"] if isinstance(c["result"], list) else [c["result"]]
                if res != ["permerror"]:
                    continue  # another result is allowed too: lint need not say error
                cases += 1
                mf = c.get("mailfrom") or ""
                domain = mf.rsplit("@", 1)[1] if "@" in mf else c.get("helo", "")
                recs = records_of(zdata, domain)
                if len(recs) == 1:
                    args = ["--zone", zone, "--domain", domain, "--record", record_arg(recs[0])]
                else:
                    args = ["--zone", zone, domain]
                out, err = lint(spfkit, args)
                if err:
                    bad += 1
                    print("FAIL case %s: %s" % (cname, err))
                elif out["summary"]["error"] == 0 and cname not in KNOWN:
                    bad += 1
                    print("FAIL case %s (%s): permerror expected, lint found no error: %s\n"
                          "  lint %s" % (cname, c.get("spec"), c.get("description", ""),
                                         " ".join(args)))
    print("%d records linted, %d permerror cases checked, %d failures" % (records, cases, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
