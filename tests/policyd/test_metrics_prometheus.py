#!/usr/bin/env python3
"""Issue 29, end to end: a real Prometheus server (Debian's prometheus
package) on 127.0.0.1 scrapes spfkit-policyd's /metrics every second
while the bench's load generator (bench_policyd, 8 clients, two
workers, DNS from tests/dnsd over c-ares and the answer cache) sends a
known number of requests; then Prometheus's HTTP API is asked for the
counters, and they must equal what was sent: requests, MAIL FROM and
HELO checks (all pass), prepend actions, and the answer cache's hits
plus misses against the DNS questions the evaluations asked. The
daemon's own /metrics text must pass `promtool check metrics`, and the
scrapes must have happened during the load, not only after it.

usage: test_metrics_prometheus.py SPFKIT_POLICYD DNSD BENCH_POLICYD
"""
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mta"))
import harness  # noqa: E402

CLIENTS = 8
# timed requests: some 4 s here (40,000/s), longer under the sanitizers;
# Prometheus scrapes every second meanwhile. A fixed count, not a time:
# a timed run stops with requests sent and not counted by the generator
REQUESTS = 150000

# bench/bench_policyd.sh's zone: alice@example.com from 192.0.2.10, HELO
# mx.example.com, both pass
ZONE = """$TTL 3600
example.com.      TXT "v=spf1 include:_spf.example.net ip4:198.51.100.0/24 -all"
_spf.example.net. TXT "v=spf1 ip4:203.0.113.0/24 a:mx.example.com -all"
mx.example.com.   TXT "v=spf1 a -all"
mx.example.com.   A   192.0.2.10
"""


def get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def query(prom_port, expr):
    """The value of an instant query that gives one sample, or None."""
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (
        prom_port, urllib.parse.urlencode({"query": expr}))
    reply = json.loads(get(url))
    if reply.get("status") != "success":
        raise AssertionError("query %s: %s" % (expr, reply))
    result = reply["data"]["result"]
    if len(result) != 1:
        return None
    return float(result[0]["value"][1])


def wait_value(prom_port, expr, want, timeout=60):
    deadline = time.time() + timeout
    got = None
    while time.time() < deadline:
        got = query(prom_port, expr)
        if got == want:
            return
        time.sleep(0.5)
    raise AssertionError("Prometheus says %s = %s, want %s" % (expr, got, want))


def start_policyd(cleanup, tmp, binary, dns_port):
    conf = tmp.write("policyd-spf.conf", "debugLevel = 1\nTestOnly = 1\n")
    sock = os.path.join(tmp.path, "policyd.sock")
    log_path = os.path.join(tmp.path, "policyd.log")
    log = open(log_path, "w")
    proc = subprocess.Popen([binary, "--dns", "127.0.0.1:%d" % dns_port, "--listen",
                             "unix:" + sock, "--workers", "2", "--log", "stderr",
                             "--metrics", "127.0.0.1:0", conf],
                            stdout=subprocess.DEVNULL, stderr=log)  # one file for both would
    # look like spawn mode's socket, where nothing but replies may go
    cleanup.push(lambda: (harness.stop_process(proc), log.close()))
    deadline = time.time() + 15
    while time.time() < deadline:
        with open(log_path) as f:
            text = f.read()
        if "listening on" in text and "metrics on" in text and "workers" in text:
            port = int(text.split("metrics on 127.0.0.1:0 (port ")[1].split(")")[0])
            return proc, sock, port
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise AssertionError("spfkit-policyd did not start:\n" + open(log_path).read())


def start_prometheus(cleanup, tmp, target_port):
    port = harness.free_port()
    conf = tmp.write("prometheus.yml", """global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: spfkit
    static_configs:
      - targets: ['127.0.0.1:%d']
""" % target_port)
    log = open(os.path.join(tmp.path, "prometheus.log"), "w")
    proc = subprocess.Popen(["prometheus", "--config.file=" + conf,
                             "--storage.tsdb.path=" + os.path.join(tmp.path, "tsdb"),
                             "--web.listen-address=127.0.0.1:%d" % port],
                            stdout=log, stderr=subprocess.STDOUT)
    cleanup.push(lambda: (harness.stop_process(proc), log.close()))
    harness.wait_listening(port, 60, proc, "prometheus")
    deadline = time.time() + 60
    while True:  # 503 while its storage opens
        try:
            get("http://127.0.0.1:%d/-/ready" % port)
            break
        except OSError:
            if time.time() > deadline or proc.poll() is not None:
                raise AssertionError("prometheus not ready:\n"
                                     + open(os.path.join(tmp.path, "prometheus.log")).read())
            time.sleep(0.2)
    # ready: the API answers and has scraped the daemon once
    wait_value(port, 'up{job="spfkit"}', 1.0)
    return proc, port


def promtool_check(text):
    r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True)
    out = (r.stdout + r.stderr).decode(errors="replace")
    if r.returncode != 0 or out.strip():
        raise AssertionError("promtool check metrics: exit %d: %s" % (r.returncode, out))


def main():
    policyd, dnsd, bench = sys.argv[1:4]
    harness.ensure_packages("prometheus")
    cleanup = harness.Cleanup()
    try:
        tmp = harness.TempDir(cleanup, "spfkit-metrics-e2e.")
        dns = harness.Dnsd(cleanup, tmp, dnsd, ZONE)
        proc, sock, mport = start_policyd(cleanup, tmp, policyd, dns.port)
        promtool_check(get("http://127.0.0.1:%d/metrics" % mport))
        _, pport = start_prometheus(cleanup, tmp, mport)

        t0 = time.time()
        r = subprocess.run([bench, "--unix", sock, "-c", str(CLIENTS), "-n", str(REQUESTS),
                            "--name", "metrics-e2e"], capture_output=True, timeout=300)
        load_s = time.time() - t0
        print(r.stdout.decode(errors="replace").strip())
        if r.returncode != 0 or b"errors=0" not in r.stdout:
            raise AssertionError("bench_policyd: exit %d\n%s" % (
                r.returncode, (r.stdout + r.stderr).decode(errors="replace")))
        sent = REQUESTS + CLIENTS  # each client's warm-up request on top

        # what Prometheus scraped equals what was sent
        wait_value(pport, "spfkit_requests_total", sent)
        for expr in ('spfkit_checks_total{identity="mailfrom",result="pass"}',
                     'spfkit_checks_total{identity="helo",result="pass"}',
                     'spfkit_actions_total{action="prepend"}',
                     "spfkit_check_duration_seconds_count / 2"):
            wait_value(pport, expr, sent)
        for expr in ('sum(spfkit_checks_total{result!="pass"})',
                     'sum(spfkit_actions_total{action!="prepend"})',
                     "spfkit_protocol_errors_total", "spfkit_refused_total",
                     "spfkit_requests_in_flight"):
            wait_value(pport, expr, 0.0)
        # every DNS question the evaluations asked went to the answer cache:
        # hits + misses = questions; the misses went to dnsd, all answered
        wait_value(pport, "spfkit_dns_cache_misses_total",
                   query(pport, 'sum(spfkit_dns_queries_total{outcome=~"answer|nodata|nxdomain"})'))
        print("DNS: %s questions sent, %s cache hits, %s record-memo answers" % (
            query(pport, "spfkit_dns_cache_misses_total"),
            query(pport, "spfkit_dns_cache_hits_total"),
            query(pport, "spfkit_record_memo_answers_total")))
        # scraped during the load: more than one distinct value of the counter
        window = max(int(load_s) + 30, 60)
        changes = query(pport, "changes(spfkit_requests_total[%ds])" % window)
        if not changes >= 2:
            raise AssertionError("the counter changed %s times in Prometheus during %.1f s of "
                                 "load: not scraped under load" % (changes, load_s))
        # and the daemon's own text says the same, and is still clean
        text = get("http://127.0.0.1:%d/metrics" % mport)
        promtool_check(text)
        if ("\nspfkit_requests_total %d\n" % sent).encode() not in text:
            raise AssertionError("the daemon's /metrics disagrees:\n" + text.decode())
        print("Prometheus: %d requests, %d checks of each identity, %s scrape changes during "
              "%.1f s of load" % (sent, sent, changes, load_s))
        if harness.stop_process(proc) != 0:
            raise AssertionError("spfkit-policyd exited with status %s" % proc.returncode)
    finally:
        cleanup.run()


if __name__ == "__main__":
    main()
