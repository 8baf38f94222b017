"""The native API over tests/dnsd: Resolver, Context, Result."""
import threading
import time

import pytest

import spfkit
from conftest import ZONE, ticking


def ctx_for(dnsd, **kw):
    kw.setdefault("receiver", "mx.receiver.example")
    return spfkit.Context(spfkit.Resolver(dnsd.servers, timeout_ms=500, tries=1), **kw)


@pytest.mark.parametrize("ip,sender,want,mechanism", [
    ("192.0.2.1", "a@example.org", "pass", "ip4:192.0.2.0/24"),
    ("198.51.100.7", "a@example.org", "pass", "mx"),
    ("2001:db8::7", "a@example.org", "pass", "mx"),
    ("203.0.113.5", "a@example.org", "pass", "include:_spf.partner.example.org"),
    ("192.0.2.10", "b@soft.example.org", "softfail", "~all"),
    ("198.51.100.99", "a@example.org", "fail", "-all"),
    ("192.0.2.1", "a@redir.example.org", "pass", "ip4:192.0.2.0/24"),
    ("192.0.2.9", "b@soft.example.org", "neutral", "?ip4:192.0.2.9"),
    ("192.0.2.1", "a@none.example.org", "none", None),
    ("192.0.2.1", "a@voids.example.org", "permerror", None),
    ("192.0.2.1", "a@broken.example.org", "permerror", None),
    ("192.0.2.1", "a@two.example.org", "permerror", None),
])
def test_results(zone_dnsd, ip, sender, want, mechanism):
    res = ctx_for(zone_dnsd).check(ip, sender, "mx.example.org")
    assert res.result == want, (ip, sender, res.result, res.problem)
    if mechanism is not None:
        assert res.mechanism == mechanism
    if want == "permerror":
        assert res.problem, "a permerror names its problem"
    else:
        assert res.problem is None


def test_fields_and_headers(zone_dnsd):
    res = ctx_for(zone_dnsd).check("198.51.100.99", "a@example.org", "mx.example.org")
    assert res.result == "fail"
    assert res.explanation == "198.51.100.99 is not one of example.org's designated mail servers"
    assert res.domain == "example.org"
    assert res.identity == "mailfrom"
    assert res.identity_domain == "example.org"
    assert res.sender == "a@example.org"
    assert res.helo == "mx.example.org"
    assert res.client_ip == "198.51.100.99"
    assert res.receiver == "mx.receiver.example"
    c = res.counters
    assert c["dns_terms"] == 2  # mx, include
    assert c["void_lookups"] == 0
    assert c["queries"] >= 4
    assert res.received_spf() == (
        "Received-SPF: fail (mx.receiver.example: domain of a@example.org does not designate "
        "198.51.100.99 as permitted sender) client-ip=198.51.100.99; "
        "envelope-from=\"a@example.org\"; helo=mx.example.org; receiver=mx.receiver.example; "
        "identity=mailfrom; mechanism=-all")
    assert res.received_spf(with_name=False).startswith("fail (mx.receiver.example:")
    assert res.authentication_results() == "spf=fail smtp.mailfrom=example.org"
    assert res.authentication_results("mx.receiver.example", with_name=True) == \
        "Authentication-Results: mx.receiver.example; spf=fail smtp.mailfrom=example.org"
    code, enhanced, text = res.smtp_reply()
    assert (code, enhanced) == (550, "5.7.23")
    assert text.startswith("550 5.7.23 198.51.100.99 is not one of")
    assert res.trace is None


def test_pass_has_no_reply_and_no_explanation(zone_dnsd):
    res = ctx_for(zone_dnsd).check("192.0.2.1", "a@example.org", "mx.example.org")
    assert res.smtp_reply() is None
    assert res.explanation is None


def test_helo_identity(zone_dnsd):
    ctx = ctx_for(zone_dnsd)
    res = ctx.check("192.0.2.77", "", "helo.example.org", identity="helo")
    assert (res.result, res.identity, res.identity_domain) == ("pass", "helo", "helo.example.org")
    assert "smtp.helo=helo.example.org" in res.authentication_results()
    # an empty MAIL FROM: postmaster@helo (RFC 7208 section 2.4)
    res = ctx.check("192.0.2.78", "", "helo.example.org")
    assert (res.result, res.sender) == ("fail", "postmaster@helo.example.org")


def test_record_given_as_text(zone_dnsd):
    ctx = ctx_for(zone_dnsd)
    res = ctx.check("192.0.2.200", "a@nowhere.example.org", "h", record="v=spf1 ip4:192.0.2.200 -all")
    assert (res.result, res.mechanism) == ("pass", "ip4:192.0.2.200")
    assert res.counters["queries"] == 0
    with pytest.raises(ValueError):
        ctx.check("192.0.2.1", "a@b.example", "h", record="not spf")


def test_trace_is_data(zone_dnsd):
    res = ctx_for(zone_dnsd, lookahead=False).check("203.0.113.99", "a@example.org", "h",
                                                      trace=True)
    kinds = [e["kind"] for e in res.trace]
    assert kinds[0] == "check" and kinds[-1] == "result"
    queries = [(e["qtype"], e["name"]) for e in res.trace if e["kind"] == "query"]
    assert ("TXT", "example.org") in queries and ("TXT", "_spf.partner.example.org") in queries
    answers = [e for e in res.trace if e["kind"] == "answer" and e["qtype"] == "MX"]
    assert answers[0]["answer"]["records"] == [(10, "mx.example.org")]
    a = [e for e in res.trace if e["kind"] == "answer" and e["qtype"] == "A"]
    assert a[0]["answer"]["records"] == ["198.51.100.7"]
    terms = [(e["text"], e["matched"]) for e in res.trace if e["kind"] == "term"]
    assert ("~all", True) in terms and ("mx", False) in terms
    assert res.trace[-1]["result"] == "fail"
    assert any(e["kind"] == "result" and e["depth"] == 1 and e["result"] == "softfail"
               for e in res.trace)


def test_zone_resolver_in_memory():
    r = spfkit.Resolver(zone_text=ZONE)
    assert r.kind == "zone"
    res = spfkit.Context(r).check("198.51.100.7", "x@example.org", "h")
    assert (res.result, res.mechanism) == ("pass", "mx")


def test_zone_file(tmp_path):
    p = tmp_path / "z.zone"
    p.write_text(ZONE)
    res = spfkit.Context(spfkit.Resolver(zone=str(p))).check("192.0.2.3", "x@example.org", "h")
    assert res.result == "pass"


def test_bad_inputs():
    ctx = spfkit.Context(spfkit.Resolver(zone_text=ZONE))
    with pytest.raises(ValueError, match="does not appear to be an IPv4 or IPv6 address"):
        ctx.check("192.0.2.300", "a@example.org", "h")
    with pytest.raises(TypeError):
        ctx.check(1, "a@example.org", "h")
    with pytest.raises(TypeError):
        ctx.check("192.0.2.1", None, "h")
    with pytest.raises(ValueError, match="identity"):
        ctx.check("192.0.2.1", "a@example.org", "h", identity="rcpt")
    with pytest.raises(ValueError):
        ctx.check("192.0.2.1", "a\0@example.org", "h")
    with pytest.raises(spfkit.Error, match="zone_text:2"):
        spfkit.Resolver(zone_text="a. 300 IN TXT \"v=spf1\"\nb. 300 IN BOGUS x\n")
    with pytest.raises(spfkit.Error, match="resolver"):
        spfkit.Resolver("not an address")
    with pytest.raises(ValueError, match="one of"):
        spfkit.Resolver("127.0.0.1", zone_text=ZONE)
    with pytest.raises(ValueError, match="macro-string"):
        spfkit.Context(spfkit.Resolver(zone_text=ZONE), default_explanation="%{z}")
    with pytest.raises(TypeError):
        spfkit.Result()


def test_bytes_and_long_inputs():
    ctx = spfkit.Context(spfkit.Resolver(zone_text=ZONE))
    assert ctx.check("192.0.2.1", b"a@example.org", b"h").result == "pass"
    # a 5 KB local part is checked, not refused (SPFKIT_IDENTITY_MAX)
    assert ctx.check("192.0.2.1", "x" * 5000 + "@example.org", "h").result == "pass"


def test_limits_are_settable(zone_dnsd):
    # three void lookups: permerror with the RFC's 2, fail with 3 allowed
    assert ctx_for(zone_dnsd).check("192.0.2.1", "a@voids.example.org", "h").result == "permerror"
    res = ctx_for(zone_dnsd, void_lookups=3).check("192.0.2.1", "a@voids.example.org", "h")
    assert (res.result, res.counters["void_lookups"]) == ("fail", 3)


def test_threads_share_a_context(dnsd_factory):
    """Eight threads at once on one Context: every result right, each
    thread a backend of its own, and the waits overlap (the GIL is
    released: eight checks of 4 round trips at 100 ms each take about
    0.4 s together, not 3.2 s)."""
    d = dnsd_factory(ZONE, ["--delay-ms", "100"])
    ctx = ctx_for(d, lookahead=False)
    out, errors = {}, []

    def work(n):
        try:
            ip = "198.51.100.7" if n % 2 else "198.51.100.99"
            out[n] = ctx.check(ip, "a@example.org", "h").result
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - t0
    assert not errors
    assert out == {n: "pass" if n % 2 else "fail" for n in range(8)}
    assert ctx.resolver.backends_made <= 9
    assert took < 2.4, "checks on 8 threads took %.2f s: serialised?" % took


def test_gil_released_during_dns_wait(dnsd_factory):
    """While a check waits 300 ms for DNS, another Python thread runs."""
    d = dnsd_factory(ZONE, ["--delay-ms", "300"])
    ctx = ctx_for(d)
    with ticking() as ticks:
        assert ctx.check("192.0.2.1", "a@example.org", "h").result == "pass"
    assert len(ticks) >= 10, "the other thread ran %d times in 300 ms" % len(ticks)


def test_timeout_is_temperror(dnsd_factory):
    d = dnsd_factory(ZONE, ["--timeout", "example.org"])
    res = ctx_for(d).check("192.0.2.1", "a@example.org", "h")
    assert res.result == "temperror"
    assert res.problem


def test_result_outlives_its_context(zone_dnsd):
    res = ctx_for(zone_dnsd).check("198.51.100.99", "a@example.org", "h")
    import gc
    gc.collect()
    assert res.explanation.startswith("198.51.100.99")
