#!/usr/bin/env python3
"""Write tests/lint/checks.zone: for each `spfkit lint` check id, a domain
<id>.bad.example that must be reported with it and <id>.good.example
that must not (tests/lint/checks.py). Run from the source root after
changing a case; the zone file is the fixture the tests read."""

IPS = " ".join("ip4:198.51.100.%d" % i for i in range(1, 40))
LONG = "v=spf1 " + IPS + " -all"


def strings(t):
    return " ".join('"%s"' % t[i:i + 200] for i in range(0, len(t), 200))


def mx_hosts(n):
    return "\n".join("@D@ MX %d h%d.example." % (i, i) if i else "@D@ MX 0 host.example."
                     for i in range(n))


# id: (records of <id>.bad, records of <id>.good); @D@ is the domain
CASES = {
    "no-record": ('TXT "site-verification=1234"', 'TXT "v=spf1 -all"'),
    "multiple-records": ('TXT "v=spf1 -all"\n@D@ TXT "v=spf1 a -all"', 'TXT "v=spf1 -all"'),
    "syntax": ('TXT "v=spf1 ip4:192.0.2.300 -all"', 'TXT "v=spf1 ip4:192.0.2.30 -all"'),
    "version-glued": ('TXT "v=spf10 -all"', 'TXT "v=spf1 -all"'),
    "legacy-syntax": ('TXT "v=spf1 mx default=deny"\n@D@ MX 10 host.example.',
                      'TXT "v=spf1 mx -all"\n@D@ MX 10 host.example.'),
    "no-terminator": ('TXT "v=spf1 a:host.example."', 'TXT "v=spf1 a:host.example. -all"'),
    "plus-all": ('TXT "v=spf1 ip4:0.0.0.0/0 -all"', 'TXT "v=spf1 -ip4:0.0.0.0/0 -all"'),
    "wide-netblock": ('TXT "v=spf1 ip4:64.0.0.0/2 -all"', 'TXT "v=spf1 ip4:198.51.100.0/24 -all"'),
    "neutral-all": ('TXT "v=spf1 a:host.example ?all"', 'TXT "v=spf1 a:host.example ~all"'),
    "terms-after-all": ('TXT "v=spf1 -all ip4:192.0.2.1"', 'TXT "v=spf1 ip4:192.0.2.1 -all"'),
    "redirect-with-all": ('TXT "v=spf1 -all redirect=good-spf.example"',
                          'TXT "v=spf1 redirect=good-spf.example"'),
    "duplicate-modifier": ('TXT "v=spf1 tag=1 tag=2 -all"', 'TXT "v=spf1 tag=1 -all"'),
    "unknown-modifier": ('TXT "v=spf1 foo=bar -all"', 'TXT "v=spf1 -all exp=explain.example"'),
    # a typo the parser accepts (an unknown modifier "include="); one it refuses
    # is told inside the syntax finding (issue 31)
    "typo": ('TXT "v=spf1 include=good-spf.example -all"',
             'TXT "v=spf1 include:good-spf.example -all"'),
    "non-ascii": ('TXT "v=spf1 ip4:192.0.2.1\\194\\160-all"', 'TXT "v=spf1 ip4:192.0.2.1 -all"'),
    "lookups-over-10": ('TXT "v=spf1 a a a a a a a a a a a -all"\n@D@ A 192.0.2.20',
                        'TXT "v=spf1 a a a a a a a -all"\n@D@ A 192.0.2.20'),
    "close-to-limit": ('TXT "v=spf1 a a a a a a a a -all"\n@D@ A 192.0.2.20',
                       'TXT "v=spf1 a a a a a a a -all"\n@D@ A 192.0.2.20'),
    "void-over-2": ('TXT "v=spf1 a:n1.nowhere.example a:n2.nowhere.example a:n3.nowhere.example -all"',
                    'TXT "v=spf1 a:n1.nowhere.example a:n2.nowhere.example -all"'),
    "mx-over-10": ('TXT "v=spf1 mx -all"\n' + mx_hosts(11), 'TXT "v=spf1 mx -all"\n' + mx_hosts(10)),
    "target-no-address": ('TXT "v=spf1 a:txtonly.example -all"', 'TXT "v=spf1 a:host.example -all"'),
    "null-mx": ('TXT "v=spf1 mx -all"\n@D@ MX 0 .', 'TXT "v=spf1 mx -all"\n@D@ MX 10 host.example.'),
    "include-no-record": ('TXT "v=spf1 include:txtonly.example -all"',
                          'TXT "v=spf1 include:good-spf.example -all"'),
    "redirect-no-record": ('TXT "v=spf1 redirect=txtonly.example"',
                           'TXT "v=spf1 redirect=good-spf.example"'),
    "include-loop": ('TXT "v=spf1 include:loop2.include-loop.bad.example -all"\n'
                     'loop2.@D@ TXT "v=spf1 include:include-loop.bad.example -all"',
                     'TXT "v=spf1 include:good-spf.example -all"'),
    "redirect-loop": ('TXT "v=spf1 redirect=redirect-loop.bad.example"',
                      'TXT "v=spf1 redirect=good-spf.example"'),
    "duplicate-include": ('TXT "v=spf1 include:good-spf.example include:good-spf.example -all"',
                          'TXT "v=spf1 include:good-spf.example -all"'),
    "dynamic-target": ('TXT "v=spf1 a:mail.%{d} -all"', 'TXT "v=spf1 a:host.example -all"'),
    "ptr-used": ('TXT "v=spf1 ptr -all"', 'TXT "v=spf1 a:host.example -all"'),
    "record-over-450": ('TXT ' + strings(LONG), 'TXT "v=spf1 ip4:198.51.100.0/24 -all"'),
    "answer-over-512": ('TXT "v=spf1 -all"\n@D@ TXT ' +
                        strings("google-site-verification=" + "x" * 250) +
                        '\n@D@ TXT ' + strings("ms=" + "y" * 250),
                        'TXT "v=spf1 -all"\n@D@ TXT "ms=1234"'),
    "spf-rr-type": ('TXT "v=spf1 -all"\n@D@ SPF "v=spf1 -all"', 'TXT "v=spf1 -all"'),
    "bad-macro": ('TXT "v=spf1 exists:%{p}.allow.example -all"',
                  'TXT "v=spf1 exists:%{d}.allow.example -all"'),
    "macro-leak": ('TXT "v=spf1 exists:%{l}.allow.example -all"',
                   'TXT "v=spf1 exists:%{d}.allow.example -all"'),
    "private-range": ('TXT "v=spf1 ip4:10.0.0.0/8 -all"', 'TXT "v=spf1 ip4:192.0.2.0/24 -all"'),
    "duplicate-netblock": ('TXT "v=spf1 ip4:192.0.2.0/24 ip4:192.0.2.0/24 -all"',
                           'TXT "v=spf1 ip4:192.0.2.0/24 ip4:198.51.100.0/24 -all"'),
    "overlapping-netblock": ('TXT "v=spf1 ip4:192.0.2.0/24 ip4:192.0.2.128/25 -all"',
                             'TXT "v=spf1 ip4:192.0.2.0/25 ip4:192.0.2.128/25 -all"'),
    "unreachable-term": ('TXT "v=spf1 -ip4:192.0.2.0/24 ip4:192.0.2.5 -all"',
                         'TXT "v=spf1 ip4:192.0.2.5 -ip4:192.0.2.0/24 -all"'),
    "exp-target": ('TXT "v=spf1 -all exp=txtless.example"\ntxtless A 192.0.2.30',
                   'TXT "v=spf1 -all exp=explain.example"'),
    "exp-in-include": ('TXT "v=spf1 include:inc.exp-in-include.bad.example -all"\n'
                       'inc.@D@ TXT "v=spf1 ip4:192.0.2.1 exp=explain.example"',
                       'TXT "v=spf1 include:good-spf.example -all"'),
    "ttl": ('60 TXT "v=spf1 -all"', '3600 TXT "v=spf1 -all"'),
    # the good one has a wildcard too, but without an SPF record in it
    "split-inside-token": ('TXT "v=spf1 ip4:192.0.2.1" "-all"', 'TXT "v=spf1 ip4:192.0.2.1 " "-all"'),
    "wildcard-record": ('TXT "v=spf1 -all"\n*.@D@ TXT "v=spf1 -all"',
                        'TXT "v=spf1 -all"\n*.@D@ TXT "not spf"'),
    # issue 31: good-spf.example authorizes 192.0.2.0/24; h1 is 192.0.2.101
    # (no AAAA); host.example has an AAAA no include lists
    "covered-by-include": ('TXT "v=spf1 ip4:192.0.2.10 mx include:good-spf.example -all"\n'
                           '@D@ MX 10 h1.example.',
                           'TXT "v=spf1 ip4:198.51.100.10 mx include:good-spf.example -all"\n'
                           '@D@ MX 10 host.example.'),
    "modifier-before-mechanism": ('TXT "v=spf1 exp=explain.example ip4:192.0.2.1 -all"',
                                  'TXT "v=spf1 ip4:192.0.2.1 -all exp=explain.example"'),
    # no MX, no A, no AAAA: the domain sends no mail
    "parked-domain": ('TXT "v=spf1 include:good-spf.example ~all"', 'TXT "v=spf1 -all"'),
}

HEAD = """; tests/lint/checks.zone, written by make_checks_zone.py: one positive
; and one negative domain per `spfkit lint` check id: <id>.bad.example
; must be reported with that id, <id>.good.example must not
; (tests/lint/checks.py). Documentation names and addresses only.
$TTL 3600
$ORIGIN example.
host            A     192.0.2.10
host            AAAA  2001:db8::10
txtonly         TXT   "not an address"
good-spf        TXT   "v=spf1 ip4:192.0.2.0/24 -all"
explain         TXT   "%{i} is not allowed"
; provider marking (issue 31): _spf.own-provider is the owner's (under the
; domain), _spf.saas a provider's; the provider's warning is not in the
; exit status
own-provider    TXT   "v=spf1 include:_spf.own-provider.example include:_spf.saas.example -all"
own-provider    MX    10 host.example.
_spf.own-provider TXT "v=spf1 ip4:192.0.2.1 exists:%{l}.own-provider.example ~all"
_spf.saas       TXT   "v=spf1 exists:%{i}._spf.saas.example ip4:10.1.0.0/16 ~all"
; covered-by-include: the provider fails 192.0.2.10 before passing its /24,
; so ip4:192.0.2.10 is not authorized twice; ip4:192.0.2.20 is
excl-prov       TXT   "v=spf1 -ip4:192.0.2.10 ip4:192.0.2.0/24 -all"
covered-excl    TXT   "v=spf1 ip4:192.0.2.10 ip4:192.0.2.20 include:excl-prov.example -all"
covered-excl    MX    10 host.example.
; a typo the parser refuses: one syntax finding; the other terms cost 2 once fixed
fixable         TXT   "v=spf1 a:host.example ipv4:192.0.2.1 include:good-spf.example -all"
"""


def main():
    out = [HEAD.rstrip("\n")]
    for cid, pair in CASES.items():
        for kind, text in zip(("bad", "good"), pair):
            d = "%s.%s" % (cid, kind)
            lines = text.replace("@D@", d).split("\n")
            out.append("%s %s" % (d, lines[0]))
            out.extend(lines[1:])
    out.extend("h%d A 192.0.2.%d" % (i, 100 + i) for i in range(1, 11))
    with open("tests/lint/checks.zone", "w", encoding="ascii") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
