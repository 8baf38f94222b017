"""pyspf's public API through spfkit (`import spfkit as spf`), side by
side with Debian's pyspf on the same zone: pyspf's own examples (the
doctests of spf.py's query.check, check2, check, get_header), each
answered by tests/dnsd for spfkit and from the same zone for pyspf."""
import pytest

import spf as pyspf  # python3-spf
import spfkit as spf
from conftest import Dnsd

# The names pyspf's examples ask (controlledmail.com's records as they
# were when the doctests were written), plus a few of our own.
ZONE = """$TTL 300
controlledmail.com.      IN TXT "v=spf1 mx -all"
controlledmail.com.      IN MX 10 mail.controlledmail.com.
mail.controlledmail.com. IN A 72.81.252.18
_exp.controlledmail.com. IN TXT "Controlledmail.com does not send mail from itself."
email.example.com.       IN TXT "v=spf1 ip4:192.0.2.0/24 -all"
example.net.             IN A 192.0.2.4
example.org.             IN A 192.0.2.5
bcc.com.                 IN TXT "v=spf1 ip4:61.51.192.0/24 ~all"
broken.example.com.      IN TXT "v=spf1 moo"
"""

# (record given as spf=, or None for the DNS one), pyspf's doctest order
RECORDS = [
    "v=spf1 ?all",
    "v=spf1 redirect=controlledmail.com exp=_exp.controlledmail.com",
    "v=spf1 ip4:192.0.0.0/8 ?all moo",
    "v=spf1 ip4:192.0.0.n ?all",
    "v=spf1 ip4:192.0.2.3 ip4:192.0.0.n ?all",
    "v=spf1 ip6:2001:db8:ZZZZ:: ?all",
    "v=spf1 =a ?all moo",
    "v=spf1 ip4:192.0.0.0/8 ~all",
    "v=spf1 ip4:192.0.0.0/8 -all moo=",
    "v=spf1 ip4:192.0.0.0/8 -all match.sub-domains_9=yes",
    "v=spf1 ip4:192.1.0.0/16 moo -all",
    "v=spf1 ip4:192.1.0.0/16 ~all",
    "v=spf1 -ip4:192.1.0.0/6 ~all",
    None,
    "v=spf1 ip4:1.2.3.4 -a:example.net -all",
    "v=spf1 ip4:1.2.3.4 -all exp=_exp.controlledmail.com",
    "v=spf1 ip4:1.2.3.4 ?all exp=_exp.controlledmail.com",
]


@pytest.fixture(scope="module")
def both():
    """spfkit over dnsd; pyspf answered from the same zone text."""
    d = Dnsd(ZONE)
    spf.set_resolver(spf.Resolver(d.servers, timeout_ms=500, tries=1))
    rrs = {}
    for line in ZONE.splitlines()[1:]:
        name, _in, rtype, data = line.split(None, 3)
        name = name.rstrip(".").lower()
        if rtype == "TXT":
            value = [data.strip('"').encode()]
        elif rtype == "MX":
            pref, host = data.split()
            value = (int(pref), host.rstrip("."))
        else:
            value = data
        rrs.setdefault((name, rtype), []).append(value)
    saved = pyspf.DNSLookup

    def lookup(name, qtype, strict=True, timeout=None):
        name = name.lower().rstrip(".")
        return [((name, qtype), v) for v in rrs.get((name, qtype), [])]

    pyspf.DNSLookup = lookup
    yield d
    pyspf.DNSLookup = saved
    spf.set_resolver(None)
    d.stop()


def ours_and_theirs(mod, record):
    q = mod.query(s="strong-bad@email.example.com", h="mx.example.org", i="192.0.2.3")
    return q.check(spf=record), q


@pytest.mark.parametrize("record", RECORDS)
def test_query_check_examples(both, record):
    (r1, c1, e1), q = ours_and_theirs(spf, record)
    (r2, c2, e2), _ = ours_and_theirs(pyspf, record)
    assert (r1, c1) == (r2, c2), record
    if r1 in ("permerror", "temperror"):
        # the texts after the prefix are each library's own (docs/python.md)
        prefix = "SPF Permanent Error: " if r1 == "permerror" else "SPF Temporary Error: "
        assert e1.startswith(prefix) and e2.startswith(prefix) and len(e1) > len(prefix)
        assert isinstance(q.perm_error, spf.PermError) == (r1 == "permerror")
    else:
        assert e1 == e2, record


def test_check2_and_check(both):
    for mod in (spf, pyspf):
        assert mod.check2(i="61.51.193.42", s="liukebing@bcc.com", h="bmsi.com") == \
            ("softfail", "domain owner discourages use of this host")
        assert mod.check2(i="72.81.252.18", s="a@controlledmail.com", h="x") == \
            ("pass", "sender SPF authorized")
        assert mod.check2(i="192.0.2.9", s="a@controlledmail.com", h="x") == \
            ("fail", "SPF fail - not authorized")
        assert mod.check(i="192.0.2.9", s="a@controlledmail.com", h="x") == \
            ("fail", 550, "SPF fail - not authorized")
        res, code, _ = mod.check(i="198.51.100.9", s="a@email.example.com", h="x",
                                 receiver="r.example")
        assert (res, code) == ("fail", 550)
        # pyspf's pre-RFC name for permerror
        res, code, _ = mod.check(i="192.0.2.9", s="a@broken.example.com", h="x")
        assert (res, code) == ("unknown", 550)
        assert mod.check2(i="192.0.2.9", s="a@broken.example.com", h="x")[0] == "permerror"


def test_empty_sender_is_helo_identity(both):
    for mod in (spf, pyspf):
        q = mod.query(i="72.81.252.18", s="", h="controlledmail.com")
        assert (q.s, q.ident) == ("postmaster@controlledmail.com", "helo")
        assert q.check()[0] == "pass"


def test_bad_address_raises_permerror(both):
    for mod in (spf, pyspf):
        with pytest.raises(mod.PermError) as e:
            mod.check2(i="192.0.2.300", s="a@b.example", h="x")
        assert "does not appear to be an IPv4 or IPv6 address" in str(e.value)


def test_ipv4_mapped_client(both):
    for mod in (spf, pyspf):
        assert mod.check2(i="::ffff:72.81.252.18", s="a@controlledmail.com", h="x")[0] == "pass"


def test_exceptions_are_pyspf_shaped():
    e = spf.PermError("msg", "mech")
    assert (e.msg, e.mech, str(e)) == ("msg", "mech", "msg: mech")
    assert not issubclass(spf.TempError, spf.PermError)
    assert not issubclass(spf.PermError, spf.AmbiguityWarning)


def test_get_header(both):
    q = spf.query(s="strong-bad@email.example.com", h="mx.example.org", i="192.0.2.3",
                  receiver="abuse@kitterman.com")
    assert q.check(spf="v=spf1 ?all") == ("neutral", 250, "access neither permitted nor denied")
    assert q.mechanism == "?all"
    h = q.get_header("neutral")
    assert h.startswith("neutral (abuse@kitterman.com: ")
    assert "client-ip=192.0.2.3;" in h and "mechanism=?all" in h and "identity=mailfrom" in h
    assert q.get_header("neutral", header_type="authres", aid="bmsi.com") == \
        "Authentication-Results: bmsi.com; spf=neutral smtp.mailfrom=email.example.com"
    with pytest.raises(SyntaxError, match="Unknown results header type: dkim"):
        q.get_header("neutral", header_type="dkim")
    with pytest.raises(SyntaxError):
        q.get_header("neutral", header_type="authres")


def test_local_policy_is_refused():
    with pytest.raises(NotImplementedError):
        spf.check2(i="192.0.2.3", s="a@b.example", h="x", local="ip4:192.0.2.3")


def test_module_surface_matches_pyspf():
    for name in ("check2", "check", "query", "TempError", "PermError", "AmbiguityWarning",
                 "RESULTS", "EXPLANATIONS", "MAX_LOOKUP", "MAX_VOID_LOOKUPS", "split_email",
                 "quote_value", "DEFAULT_SPF"):
        assert hasattr(pyspf, name) and hasattr(spf, name), name
    assert spf.EXPLANATIONS == pyspf.EXPLANATIONS
    assert spf.split_email("foo.com", "h") == pyspf.split_email("foo.com", "h")
    for v in ("foo@bar.com", "mail.example.com", "A:1.2.3.4", 'abc"def', "abc..def", "", None):
        assert spf.quote_value(v) == pyspf.quote_value(v)
