"""Context.lint() and Context.tree() (<spfkit/publish.h>) against the CLI:
for every domain of tests/lint/checks.zone (a positive and a negative
domain per lint check id), served by tests/dnsd, the dicts equal what
`spfkit lint --json` and `spfkit tree --json` print for the same domain
over the same server, and over the same zone file in memory. Also: the
GIL is released during the walk, bad arguments, asyncio."""
import asyncio
import json
import os
import re
import subprocess
import time

import pytest

import spfkit
from spfkit.aio import AsyncContext
from conftest import Dnsd, ticking

CHECKS_ZONE = os.path.join(os.environ["SPFKIT_SOURCE_ROOT"], "tests", "lint", "checks.zone")
SPFKIT = os.environ["SPFKIT_CLI"]
EXTRA = {"stopped", "unanswered", "flatten_note"}  # beside the JSON's keys


def zone_domains():
    names = set()
    with open(CHECKS_ZONE, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            m = re.match(r"^([a-z0-9-]+\.(?:bad|good))\s", line)
            if m:
                names.add(m.group(1) + ".example")
    return sorted(names)


DOMAINS = zone_domains()


@pytest.fixture(scope="module")
def served():
    with open(CHECKS_ZONE, encoding="utf-8", errors="surrogateescape") as f:
        d = Dnsd(f.read())
    yield d
    d.stop()


def cli(*args):
    p = subprocess.run([SPFKIT] + list(args) + ["--json"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=False)
    assert p.returncode in (0, 1, 2), (args, p.returncode, p.stderr)
    return json.loads(p.stdout.decode("ascii"))


def from_cli(v, key=None):
    """The CLI's JSON as the binding gives it: bytes past ASCII are
    \\u0080-\\u00ff in the JSON, UTF-8 with surrogateescape in Python;
    address counts are ints (the JSON has IPv6 ones as strings)."""
    if isinstance(v, dict):
        out = {k: from_cli(x, k) for k, x in v.items()}
        if key == "addresses":
            out = {k: (x if k == "plus_all" else int(x)) for k, x in out.items()}
        return out
    if isinstance(v, list):
        return [from_cli(x) for x in v]
    if isinstance(v, str):
        return v.encode("latin-1").decode("utf-8", "surrogateescape")
    return v


def without_extra(d):
    assert d["stopped"] is False and d["unanswered"] == 0, d
    assert d.get("flatten_note") is None or d["lookups"]["dns_terms"] > 10, d
    return {k: v for k, v in d.items() if k not in EXTRA}


def test_the_fixture_is_rich():
    """The compared domains exercise findings of each severity, trees with
    includes, redirects, loops, voids and non-ASCII bytes."""
    assert len(DOMAINS) >= 80, DOMAINS
    assert "non-ascii.bad.example" in DOMAINS and "include-loop.bad.example" in DOMAINS


def test_lint_equals_cli_over_dns(served):
    ctx = spfkit.Context(spfkit.Resolver(served.servers, timeout_ms=2000, tries=2))
    ids, severities = set(), set()
    for name in DOMAINS:
        ours = ctx.lint(name)
        want = from_cli(cli("lint", name, "--dns", served.servers))
        assert without_extra(ours) == want, name
        ids |= {f["id"] for f in ours["findings"]}
        severities |= {f["severity"] for f in ours["findings"]}
    assert severities == {"error", "warning", "notice"}
    assert len(ids) >= 35, sorted(ids)


def test_tree_equals_cli_over_dns(served):
    ctx = spfkit.Context(spfkit.Resolver(served.servers, timeout_ms=2000, tries=2))
    seen = set()
    for name in DOMAINS:
        ours = ctx.tree(name)
        want = from_cli(cli("tree", name, "--dns", served.servers))
        assert without_extra(ours) == want, name
        stack = [ours["tree"]] if ours["tree"] else []
        while stack:
            n = stack.pop()
            seen |= {n["how"]} | {k for k in ("loop", "repeated", "error") if n[k]}
            seen |= {"void"} if n["void_lookups"]["names"] else set()
            stack.extend(n["children"])
    assert {"top", "include", "redirect", "loop", "repeated", "error", "void"} <= seen, seen


def test_lint_and_tree_equal_cli_over_a_zone_file():
    ctx = spfkit.Context(spfkit.Resolver(zone=CHECKS_ZONE))
    for name in DOMAINS:
        assert without_extra(ctx.lint(name)) == from_cli(cli("lint", name, "--zone", CHECKS_ZONE)), name
        assert without_extra(ctx.tree(name)) == from_cli(cli("tree", name, "--zone", CHECKS_ZONE)), name


def test_a_record_given_as_text():
    ctx = spfkit.Context(spfkit.Resolver(zone=CHECKS_ZONE))
    record = "v=spf1 include:good-spf.example +all"
    for what in ("lint", "tree"):
        ours = getattr(ctx, what)(record=record)
        assert without_extra(ours) == from_cli(cli(what, "--record", record, "--zone", CHECKS_ZONE))
        ours = getattr(ctx, what)("mine.example", record=record.encode())
        assert without_extra(ours) == from_cli(
            cli(what, "--record", record, "--domain", "mine.example", "--zone", CHECKS_ZONE))
    lint = ctx.lint(record=record)
    assert lint["domain"] is None and lint["exit_status"] == 2
    assert [f["id"] for f in lint["findings"] if f["severity"] == "error"] == ["plus-all"]


def test_a_record_given_as_strings():
    """record= as the TXT record's character-strings, as `--record '"..." "..."'`:
    their joins and sizes are checked too."""
    ctx = spfkit.Context(spfkit.Resolver(zone=CHECKS_ZONE))
    cases = [["v=spf1 ip4:192.0.2.1", "-all"],
             ["v=spf1 " + " ".join("ip4:192.0.2.%d" % i for i in range(1, 30)), " -all"],
             [b"v=spf1 include:good-spf.example ", b"~all"]]
    seen = set()
    for strings in cases:
        texts = [x.decode() if isinstance(x, bytes) else x for x in strings]
        quoted = " ".join('"%s"' % x for x in texts)
        ours = ctx.lint(record=strings)
        assert without_extra(ours) == from_cli(cli("lint", "--record", quoted, "--zone",
                                                   CHECKS_ZONE)), strings
        seen |= {f["id"] for f in ours["findings"]}
        # spfkit tree takes --record as one text: the strings joined (RFC 7208 3.3)
        ours = ctx.tree(record=strings)
        assert without_extra(ours) == from_cli(cli("tree", "--record", "".join(texts),
                                                   "--zone", CHECKS_ZONE)), strings
    assert {"split-inside-token", "string-over-255"} <= seen, seen
    with pytest.raises(ValueError):
        ctx.lint(record=[])
    with pytest.raises(ValueError):
        ctx.lint(record=["x"] * 257)
    with pytest.raises(ValueError):
        ctx.lint(record=["v=spf1", "a" * 70000])
    with pytest.raises(TypeError):
        ctx.lint(record=["v=spf1", 3])


def test_bad_arguments():
    ctx = spfkit.Context(spfkit.Resolver(zone_text=""))
    with pytest.raises(TypeError):
        ctx.lint()
    with pytest.raises(TypeError):
        ctx.tree(record=3)
    with pytest.raises(ValueError):
        ctx.lint("a\0b.example")
    # a domain with no record: a finding, not an exception
    assert [f["id"] for f in ctx.lint("nothing.example")["findings"]] == ["no-record"]
    assert ctx.tree("nothing.example")["exit_status"] == 2


def test_time_limit_leaves_questions_unanswered(dnsd_factory):
    d = dnsd_factory('$ORIGIN example.\nslow TXT "v=spf1 include:later.example -all"\n'
                     'later TXT "v=spf1 -all"\n', ["--timeout", "later.example"])
    ctx = spfkit.Context(spfkit.Resolver(d.servers, timeout_ms=3000, tries=1))
    t0 = time.monotonic()
    res = ctx.lint("slow.example", time_limit=1)
    assert time.monotonic() - t0 < 2.5
    assert res["unanswered"] >= 1
    assert "dns-failure" in [f["id"] for f in res["findings"]]


def test_gil_released_during_the_walk(dnsd_factory):
    """While lint waits 300 ms per answer, another Python thread runs."""
    with open(CHECKS_ZONE, encoding="utf-8", errors="surrogateescape") as f:
        d = dnsd_factory(f.read(), ["--delay-ms", "300"])
    ctx = spfkit.Context(spfkit.Resolver(d.servers, timeout_ms=2000, tries=1))
    t0 = time.monotonic()
    with ticking() as ticks:
        res = ctx.lint("duplicate-include.bad.example")
    took = time.monotonic() - t0
    assert "duplicate-include" in [f["id"] for f in res["findings"]]
    assert took >= 0.3
    assert len(ticks) >= took / 0.005 / 4, "the other thread ran %d times in %.2f s" % (
        len(ticks), took)


def test_asyncio(served):
    ctx = AsyncContext(spfkit.Resolver(served.servers, timeout_ms=2000, tries=2))

    async def main():
        return await asyncio.gather(ctx.lint("include-loop.bad.example"),
                                    ctx.tree("include-loop.bad.example"),
                                    ctx.check("192.0.2.10", "a@good-spf.example", "h"))

    lint, tree, res = asyncio.run(main())
    ctx.close()
    assert without_extra(lint) == from_cli(cli("lint", "include-loop.bad.example", "--dns",
                                               served.servers))
    assert without_extra(tree) == from_cli(cli("tree", "include-loop.bad.example", "--dns",
                                               served.servers))
    assert res.result == "pass"
