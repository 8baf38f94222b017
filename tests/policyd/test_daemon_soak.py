#!/usr/bin/env python3
"""A short soak of spfkit-policyd at a small open-file limit (issue 7).

Usage: test_daemon_soak.py /path/to/spfkit-policyd

2,000 connections against a daemon under RLIMIT_NOFILE 256: idle ones
that hold slots, slow ones (a byte every 0.3 s), hostile ones (junk,
then gone) and good ones (a pass and a fail from the --zone file, over
the UNIX socket and TCP). While the limit is hit, the daemon's CPU time
(/proc/PID/stat utime+stime) stays well under its wall time, its log
stays bounded, and afterwards good clients get correct answers and RSS
is where it was. Bounded: about 10 s. Loopback only.
"""
import os
import resource
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_daemon import Daemon, expect, read_replies, request  # noqa: E402

N_IDLE, N_SLOW, N_HOSTILE = 1200, 200, 400
GOOD_THREADS, GOOD_EACH = 20, 10  # 200 good connections, two requests each
PHASE = 6.0
JUNK = [b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc" * 4, b"a" * 6000, b"x=1\n" * 200 + b"\n",
        b"no equal sign\n\n"]


def nonblocking_from(d, src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", d.port))
    return s


def good_client(d, k, results):
    """GOOD_EACH connections, each asking a pass and a fail question."""
    for i in range(GOOD_EACH):
        try:
            if i % 2 == 0:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(20)
                s.connect(d.sock)
            else:
                s = socket.create_connection(("127.0.0.1", d.port), timeout=20)
            with s:
                s.sendall(request() + request(sender="bob@exp.example"))
                one, two = read_replies(s, 2)
            expect(one, "Received-SPF: pass")
            expect(two, "550 5.7.23")
            results.append(True)
        except Exception as e:  # counted, reported below
            results.append("good client %d.%d: %s" % (k, i, e))


def send_some(socks, data):
    for s in list(socks):
        try:
            s.send(data)
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            socks.remove(s)
            s.close()


def main():
    # the clients need their own descriptors: 2,000 and some
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    d = Daemon(nofile=256, args=("--idle-timeout", "2"))
    idle, slow, hostile = [], [], []
    try:
        # warm up, so RSS is measured after the first allocations
        results = []
        good_client(d, -1, results)
        assert results == [True] * GOOD_EACH, results
        rss0 = d.rss_kb()
        lines0, cpu0, t0 = d.log_count(), d.cpu_seconds(), time.time()

        results = []
        threads = [threading.Thread(target=good_client, args=(d, k, results))
                   for k in range(GOOD_THREADS)]
        for i in range(N_IDLE):
            idle.append(nonblocking_from(d, "127.0.2.%d" % (1 + i % 40)))
        for i in range(N_SLOW):
            slow.append(nonblocking_from(d, "127.0.3.%d" % (1 + i % 10)))
        for i in range(N_HOSTILE):
            hostile.append(nonblocking_from(d, "127.0.4.%d" % (1 + i % 10)))
        for t in threads:
            t.start()
        # the slow ones trickle, the hostile ones send junk and go
        data = request()
        pos = 0
        while time.time() - t0 < PHASE:
            send_some(slow, data[pos % len(data):pos % len(data) + 1])
            pos += 1
            if hostile:
                batch, hostile = hostile[:50], hostile[50:]
                for j, s in enumerate(batch):
                    send_some([s], JUNK[j % len(JUNK)])
                    s.close()
            time.sleep(0.3)
        cpu = d.cpu_seconds() - cpu0
        wall = time.time() - t0
        lines = d.log_count() - lines0
        full = [line for line in d.lines if "not accepting" in line or "lowered to" in line]

        for s in idle + slow:
            s.close()
        idle, slow = [], []
        for t in threads:
            t.join(30)
        time.sleep(1.0)
        rss1 = d.rss_kb()
        after = []
        good_client(d, -2, after)

        print("soak: %.2f s CPU in %.2f s wall (%.0f%%), %d log lines, RSS %d -> %d kB, "
              "%d/%d good answers" % (cpu, wall, 100 * cpu / wall, lines, rss0, rss1,
                                      results.count(True), len(results)))
        bad = [r for r in results + after if r is not True]
        assert not bad, "%d good clients failed: %s" % (len(bad), bad[:3])
        assert len(results) == GOOD_THREADS * GOOD_EACH, len(results)
        # one line per hostile or slow client and per decision, no flood
        bound = N_HOSTILE + N_SLOW + 2 * GOOD_THREADS * GOOD_EACH + 100
        wrong = []
        if cpu >= 0.3 * wall:
            wrong.append("daemon busy: %.2f s CPU in %.2f s" % (cpu, wall))
        if lines >= bound:
            wrong.append("%d log lines (bound %d), the last: %s" % (lines, bound, d.lines[-1]))
        if rss1 - rss0 >= 24 * 1024:
            wrong.append("RSS grew from %d to %d kB" % (rss0, rss1))
        if not full:
            wrong.append("the connection limit was never reached (no log line says so)")
        assert not wrong, "; ".join(wrong)
        rc = d.stop()
        assert rc == 0, "daemon exit status %r" % rc
    finally:
        for s in idle + slow + hostile:
            s.close()
        d.stop()
    print("ok   soak")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AssertionError as e:
        print("FAIL soak: %s" % e)
        sys.exit(1)
