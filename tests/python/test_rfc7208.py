"""The RFC 7208 test suite (tests/rfc7208/rfc7208-tests.yml, every case)
through the binding: each scenario's zone written as a master file and
served by tests/dnsd on 127.0.0.1, each case checked by spfkit.Context
over c-ares, strict and with lookahead. The zone rules are those of
tests/rfc7208/suite.c: an SPF entry is also a TXT record unless the name
has TXT entries of its own; "TXT: NONE" and an empty list make a name
that exists with no records; TIMEOUT makes every type the name has no
records of time out; `TXT: [ ]` is a TXT record of no strings at all."""
import json
import os
import subprocess
import sys

import pytest

import spfkit
from conftest import Dnsd

SUITE = os.environ["SPFKIT_RFC_SUITE"]
TYPES = ("A", "AAAA", "MX", "PTR", "TXT", "SPF", "CNAME")
NOW = 1700000000  # %{t}, fixed as in the C runners


_SUITE = []
# Read in a child without the sanitizer build's preloaded libasan: PyYAML's
# C extension leaves 18 blocks unreachable at exit ("import yaml" alone
# does), which LeakSanitizer would report against this test.
TO_JSON = ("import json, sys, yaml; json.dump([d for d in yaml.safe_load_all("
           "open(sys.argv[1], 'rb')) if d], sys.stdout)")


def load():
    if not _SUITE:
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "PYTHONMALLOC")}
        out = subprocess.run([sys.executable, "-c", TO_JSON, SUITE], env=env, check=True,
                             capture_output=True, text=True, encoding="utf-8",
                             errors="surrogateescape").stdout
        _SUITE.extend(json.loads(out))
    return _SUITE


def escape(data):
    """Bytes as zone file text: printable ASCII as is, the rest \\DDD."""
    out = []
    for b in data:
        c = chr(b)
        out.append(c if 0x21 <= b <= 0x7e and c not in '"\\;()' else "\\%03d" % b)
    return "".join(out)


def owner(name):
    return escape(name.encode("utf-8")).rstrip(".") + "."


def chunks(text):
    data = text.encode("utf-8")
    return [data[i:i + 255] for i in range(0, len(data), 255)] or [b""]


def zone_of(zonedata):
    """(zone text, dnsd arguments) for one scenario."""
    lines, args = ["$TTL 300"], []
    for name, entries in (zonedata or {}).items():
        o = owner(name)
        has_txt = any(isinstance(e, dict) and "TXT" in e for e in entries)
        present, timeout = set(), False
        if not entries:
            lines.append("_exists.%s 300 IN A 192.0.2.254" % o)  # NODATA (RFC 8020)
        for e in entries:
            if e == "TIMEOUT":
                timeout = True
                continue
            (rtype, value), = e.items()
            if rtype == "TXT" and value == "NONE":
                lines.append("_exists.%s 300 IN A 192.0.2.254" % o)
                continue
            if rtype in ("TXT", "SPF"):
                strings = value if isinstance(value, list) else [value]
                if strings == []:
                    args += ["--malformed", "%s:txt-no-strings" % name.rstrip(".")]
                    strings = [""]
                parts = []
                for s in strings:
                    parts += chunks(s)
                text = " ".join('"%s"' % escape(p) for p in parts)
                kinds = [rtype] + (["TXT"] if rtype == "SPF" and not has_txt else [])
                for k in kinds:
                    lines.append("%s 300 IN %s %s" % (o, k, text))
                    present.add(k)
            elif rtype == "MX":
                pref, host = value
                lines.append("%s 300 IN MX %d %s" % (o, int(pref), owner(host) if host else "."))
                present.add("MX")
            elif rtype in ("PTR", "CNAME"):
                lines.append("%s 300 IN %s %s" % (o, rtype, owner(value)))
                present.add(rtype)
            else:
                lines.append("%s 300 IN %s %s" % (o, rtype, value))
                present.add(rtype)
        if timeout:
            for t in TYPES:
                if t not in present and t != "CNAME":
                    args += ["--timeout", "%s/%s" % (name.rstrip("."), t)]
    return "\n".join(lines) + "\n", args


def cases():
    out = []
    for i, sc in enumerate(load()):
        for name, case in sc["tests"].items():
            out.append(pytest.param(i, name, case, id="%s" % name))
    return out


class Servers:
    """One dnsd per scenario, started when its first case runs."""

    def __init__(self):
        self.docs = load()
        self.running = {}

    def contexts(self, i):
        if i not in self.running:
            for d, _ in self.running.values():
                d.stop()
            self.running.clear()
            text, args = zone_of(self.docs[i].get("zonedata"))
            d = Dnsd(text, args)
            r = spfkit.Resolver(d.servers, timeout_ms=150, tries=1)
            ctxs = [spfkit.Context(r, default_explanation="DEFAULT", lookahead=la, now=NOW)
                    for la in (False, True)]
            self.running[i] = (d, ctxs)
        return self.running[i][1]

    def stop(self):
        for d, _ in self.running.values():
            d.stop()


@pytest.fixture(scope="module")
def servers():
    s = Servers()
    yield s
    s.stop()


def test_suite_is_whole():
    n = sum(len(sc["tests"]) for sc in load())
    assert n == len(cases()) and n >= 200, "the suite has %d cases" % n


@pytest.mark.parametrize("scenario,name,case", cases())
def test_case(servers, scenario, name, case):
    want = case["result"] if isinstance(case["result"], list) else [case["result"]]
    for ctx in servers.contexts(scenario):
        res = ctx.check(case["host"], case["mailfrom"], case["helo"])
        assert res.result in want, "%s (spec %s): got %s, want %s (problem: %s)" % (
            name, case.get("spec"), res.result, want, res.problem)
        if "explanation" in case:
            assert res.explanation == case["explanation"], name
