#!/usr/bin/python3
"""make bench: SPF checks per second through the spfkit Python module
against pyspf (Debian's python3-spf), in paired rounds.

usage: bench_python.py BUILD_DIR

The benchmark corpus (bench/gen_corpus.py) is served by tests/dnsd on
127.0.0.1; each round times pyspf's check2() on BENCH_PY_QUERIES queries
(its own DNS library, pydns, asking dnsd), then spfkit.check2() on the
same queries (c-ares asking the same dnsd), then spfkit.Context.check()
with the zone in memory (no DNS round trip: the evaluator alone, as
pyspf never is). The ratio is the median of the rounds' ratios, so load
from elsewhere falls on both alike. Results are compared too (equal
apart from the void-lookup reading of docs/python.md).

Environment: BENCH_PAIRS (rounds, default 3), BENCH_PY_QUERIES (default 1000).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

if len(sys.argv) != 2 or not os.path.isfile(os.path.join(sys.argv[1], "build.ninja")):
    sys.exit("usage: bench_python.py BUILD_DIR (a meson build directory)")
BUILD = os.path.abspath(sys.argv[1])
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIRS = int(os.environ.get("BENCH_PAIRS", "3"))
N = int(os.environ.get("BENCH_PY_QUERIES", "1000"))
sys.path.insert(0, os.path.join(BUILD, "python"))
sys.path.insert(0, os.path.join(SRC, "tests", "python"))

subprocess.run(["ninja", "-C", BUILD, "python/spfkit/_spfkit.cpython-%d%d-x86_64-linux-gnu.so"
                % sys.version_info[:2], "python/spfkit/__init__.py", "python/spfkit/_pyspf.py",
                "python/spfkit/aio.py", "tests/dnsd/dnsd"], check=True, stdout=subprocess.DEVNULL)
os.environ["SPFKIT_DNSD"] = os.path.join(BUILD, "tests", "dnsd", "dnsd")

import DNS  # noqa: E402  pydns, pyspf's DNS library on Debian
import spf as pyspf  # noqa: E402
import spfkit  # noqa: E402
from conftest import Dnsd  # noqa: E402  tests/python's dnsd wrapper

VOID_READING = "Void lookup limit of 2 exceeded"


def timed(fn, queries):
    t0 = time.perf_counter()
    out = [fn(ip, "" if s == "<>" else s, h) for ip, s, h in queries]
    return out, len(queries) / (time.perf_counter() - t0)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(SRC, "bench", "gen_corpus.py"), "--out", tmp,
                        "--queries", str(N)], check=True, stdout=subprocess.DEVNULL)
        zone = open(os.path.join(tmp, "bench.zone"), encoding="ascii").read()
        with open(os.path.join(tmp, "queries.txt"), encoding="ascii") as f:
            queries = [tuple(line.split()) for line in f if line.strip()]
    d = Dnsd(zone)
    try:
        DNS.defaults["server"] = ["127.0.0.1"]
        DNS.defaults["port"] = d.port
        spfkit.set_resolver(spfkit.Resolver(d.servers))
        memory = spfkit.Context(spfkit.Resolver(zone_text=zone),
                                default_explanation=pyspf.EXPLANATIONS["fail"])
        rates = {"pyspf": [], "spfkit": [], "memory": []}
        ratios, ratios_mem, differ = [], [], 0
        for i in range(1, PAIRS + 1):
            theirs, r_py = timed(lambda ip, s, h: pyspf.check2(i=ip, s=s, h=h), queries)
            ours, r_kit = timed(lambda ip, s, h: spfkit.check2(i=ip, s=s, h=h), queries)
            _, r_mem = timed(lambda ip, s, h: memory.check(ip, s, h), queries)
            rates["pyspf"].append(r_py)
            rates["spfkit"].append(r_kit)
            rates["memory"].append(r_mem)
            ratios.append(r_kit / r_py)
            ratios_mem.append(r_mem / r_py)
            if i == 1:
                differ = sum(1 for a, b in zip(ours, theirs)
                             if a != b and not (a[0] == b[0] and a[0].endswith("error"))
                             and VOID_READING not in b[1])
            print("round %d: pyspf %.0f checks/s, spfkit.check2 %.0f (%.1fx), "
                  "spfkit in memory %.0f (%.1fx)" % (i, r_py, r_kit, r_kit / r_py, r_mem,
                                                    r_mem / r_py), flush=True)
    finally:
        spfkit.set_resolver(None)
        d.stop()
    print("pyspf %s:        %.0f checks/s (check2, pydns to tests/dnsd; median of %d rounds)"
          % (pyspf.__version__, statistics.median(rates["pyspf"]), PAIRS))
    print("spfkit.check2:      %.0f checks/s (c-ares to the same dnsd)"
          % statistics.median(rates["spfkit"]))
    print("spfkit in memory:   %.0f checks/s (Context.check, zone resolver)"
          % statistics.median(rates["memory"]))
    print("spfkit/pyspf = %.1fx over DNS (median of %d paired rounds, %.1fx to %.1fx), "
          "%.1fx in memory; %d of %d results differ (void-lookup reading aside: must be 0)"
          % (statistics.median(ratios), PAIRS, min(ratios), max(ratios),
             statistics.median(ratios_mem), differ, len(queries)))
    return 1 if differ else 0


sys.exit(main())
