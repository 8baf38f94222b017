"""pytest fixtures for the spfkit module's tests (issue 32).

Run by meson (tests/python/meson.build) with PYTHONPATH at the build
tree's python/ and these in the environment:
  SPFKIT_DNSD        tests/dnsd's program (loopback DNS server)
  SPFKIT_RFC_SUITE   tests/rfc7208/rfc7208-tests.yml
  SPFKIT_GEN_CORPUS  bench/gen_corpus.py
  SPFKIT_SOURCE_ROOT the source tree (examples/, tests/lint/checks.zone)
  SPFKIT_CLI         the spfkit command (lint and tree --json, compared)
"""
import contextlib
import os
import signal
import subprocess
import tempfile
import threading
import time

import pytest


@contextlib.contextmanager
def ticking():
    """A second Python thread appending to the yielded list every 5 ms while
    the block runs: how long the list gets tells whether the GIL was
    released meanwhile."""
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.005)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        yield ticks
    finally:
        stop.set()
        t.join()


class Dnsd:
    """tests/dnsd serving a zone on 127.0.0.1, a port it picks; stop() ends it."""

    def __init__(self, zone_text, args=(), tmp=None):
        self.tmp = tempfile.mkdtemp(prefix="spfkit-py-dnsd-", dir=tmp)
        self.zone = os.path.join(self.tmp, "zone")
        with open(self.zone, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(zone_text)
        port_file = os.path.join(self.tmp, "port")
        self.log = open(os.path.join(self.tmp, "dnsd.log"), "w")
        self.proc = subprocess.Popen([os.environ["SPFKIT_DNSD"], "--zone", self.zone,
                                      "--port", "0", "--port-file", port_file] + list(args),
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while True:
            try:
                with open(port_file) as f:
                    text = f.read().strip()
                if text:
                    self.port = int(text)
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError("dnsd did not start: %s" % self.read_log())
            time.sleep(0.02)
        self.servers = "127.0.0.1:%d" % self.port

    def read_log(self):
        with open(os.path.join(self.tmp, "dnsd.log"), errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        subprocess.run(["rm", "-rf", self.tmp], check=False)


@pytest.fixture
def dnsd_factory():
    started = []

    def start(zone_text, args=()):
        d = Dnsd(zone_text, args)
        started.append(d)
        return d

    yield start
    for d in started:
        d.stop()


# A small world: MX, A, an include, exp=, a redirect, void lookups.
ZONE = """$ORIGIN example.org.
$TTL 300
@          IN TXT "v=spf1 ip4:192.0.2.0/24 mx include:_spf.partner.example.org -all exp=why.example.org"
@          IN MX 10 mx
mx         IN A 198.51.100.7
mx         IN AAAA 2001:db8::7
why        IN TXT "%{i} is not one of %{d}'s designated mail servers"
_spf.partner IN TXT "v=spf1 ip4:203.0.113.0/28 ~all"
soft       IN TXT "v=spf1 ?ip4:192.0.2.9 ~all"
redir      IN TXT "v=spf1 redirect=example.org"
voids      IN TXT "v=spf1 a:n1.example.org a:n2.example.org a:n3.example.org -all"
broken     IN TXT "v=spf1 ip4:192.0.2.1 moo -all"
two        IN TXT "v=spf1 -all"
two        IN TXT "v=spf1 +all"
helo       IN TXT "v=spf1 a -all"
helo       IN A 192.0.2.77
"""


@pytest.fixture
def zone_dnsd(dnsd_factory):
    return dnsd_factory(ZONE)
