#!/usr/bin/env python3
"""lint, tree and flatten against a slow DNS server (issue 33, finding 8).

    time_limit.py SPFKIT DNSD

The questions of one record are asked together, so a record of 20
includes whose names each answer after 1 s takes a few seconds, not the
60 s of one question at a time; and --time-limit ends a walk that DNS
keeps slow: the report names what was not answered and the exit status
is 75 (flatten refuses, 2). Every run is bounded by a subprocess timeout.
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mta"))
import harness  # noqa: E402  (tests/mta/harness.py)

SPFKIT, DNSD = sys.argv[1], sys.argv[2]
INCLUDES = 20
CHAIN = 14


def zone_text():
    lines = ["$ORIGIN example.", "$TTL 3600"]
    terms = ["include:i%d.wide.example" % i for i in range(INCLUDES)]
    lines.append('wide TXT "v=spf1 %s" " %s -all"'
                 % (" ".join(terms[:10]), " ".join(terms[10:])))
    for i in range(INCLUDES):
        lines.append('i%d.wide TXT "v=spf1 ip4:192.0.2.%d -all"' % (i, i + 1))
    for i in range(CHAIN):
        nxt = "include:c%d.chain.example " % (i + 1) if i + 1 < CHAIN else ""
        lines.append('c%d.chain TXT "v=spf1 %sip4:198.51.100.%d -all"' % (i, nxt, i + 1))
    lines.append('chain TXT "v=spf1 include:c0.chain.example -all"')
    return "\n".join(lines) + "\n"


class Dnsd:
    def __init__(self, tmp, delays):
        zone = os.path.join(tmp, "slow.zone")
        with open(zone, "w") as f:
            f.write(zone_text())
        port_file = os.path.join(tmp, "port")
        args = [DNSD, "--zone", zone, "--port", "0", "--port-file", port_file]
        for name in delays:
            args += ["--delay", "%s:1000" % name]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.port = harness.dnsd_port(self.proc, port_file)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def run(dns, *args, limit=40):
    t0 = time.time()
    p = subprocess.run([SPFKIT] + list(args) + ["--dns", "127.0.0.1:%d" % dns.port,
                                                "--timeout", "3000"],
                       capture_output=True, text=True, timeout=limit)
    return p, time.time() - t0


def case_wide_record_in_parallel(tmp):
    """20 includes answering after 1 s each: well under 20 s (60 questions)."""
    dns = Dnsd(tmp, ["i%d.wide.example" % i for i in range(INCLUDES)])
    try:
        for cmd in (["lint", "wide.example"], ["tree", "wide.example"]):
            p, took = run(dns, *cmd)
            # 20 terms: lookups-over-10, an error (2); never incomplete (75)
            assert p.returncode == 2, "%s: exit %d: %s%s" % (cmd, p.returncode, p.stdout, p.stderr)
            assert "time limit" not in p.stderr + p.stdout, p.stderr
            assert took < 12, "%s took %.1f s" % (cmd, took)
            print("  %s: %.1f s" % (" ".join(cmd), took))
    finally:
        dns.stop()


def case_time_limit_ends_a_slow_walk(tmp):
    """A chain of 14 includes, 3 slow questions each (42 s): --time-limit 2 ends it."""
    dns = Dnsd(tmp, ["c%d.chain.example" % i for i in range(CHAIN)])
    try:
        for cmd, want in ((["lint", "chain.example"], 75), (["tree", "chain.example"], 75),
                          (["flatten", "chain.example"], 2)):
            p, took = run(dns, *(cmd + ["--time-limit", "2"]))
            assert p.returncode == want, "%s: exit %d, want %d: %s%s" % (
                cmd, p.returncode, want, p.stdout, p.stderr)
            assert 1.5 < took < 6, "%s took %.1f s with --time-limit 2" % (cmd, took)
            assert "time limit" in p.stderr, p.stderr
            print("  %s: %.1f s, exit %d: %s" % (" ".join(cmd), took, p.returncode,
                                                 p.stderr.strip().splitlines()[-1]))
        p, _ = run(dns, "lint", "chain.example", "--time-limit", "2")
        assert "dns-failure" in p.stdout and "time limit" in p.stdout, p.stdout
    finally:
        dns.stop()


def main():
    failed = 0
    for case in (case_wide_record_in_parallel, case_time_limit_ends_a_slow_walk):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.time()
            try:
                case(tmp)
                print("ok   %s (%.1f s)" % (case.__name__, time.time() - t0))
            except Exception as e:  # report every case
                failed += 1
                print("FAIL %s: %r" % (case.__name__, e))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
