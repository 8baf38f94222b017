#!/usr/bin/env python3
"""spfkit-policyd at its limits (issue 7, items 1, 3 and 7): running out of
file descriptors, slow clients, one address taking every slot, a second
daemon on the same socket, cleanup after --user, option checking, long
configuration lines.

Usage: test_daemon_limits.py /path/to/spfkit-policyd [/path/to/dnsd] [TEST...]

Loopback only; DNS from a zone file. Each test starts its own daemon.
"""
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_daemon as shared  # noqa: E402  (not test_*: main() runs those)
from test_daemon import (BIN, Daemon, ask, daemon_behind_slow_dns, expect,  # noqa: E402
                         expect_closed_without_reply, read_reply, request)

# test_daemon_limits.py SPFKIT_POLICYD [DNSD] [TEST...]: DNSD for the slow answers
ONLY = sys.argv[2:]
DNSD = os.path.abspath(ONLY.pop(0)) if ONLY and not ONLY[0].startswith("test_") else None
shared.DNSD = DNSD


def still_open(s, wait=0.3):
    """True if the daemon has neither closed s nor written to it."""
    s.settimeout(wait)
    try:
        return s.recv(1) != b""
    except socket.timeout:
        return True
    except OSError:
        return False


def test_fd_limit_does_not_spin():
    """Item 1: 80 idle clients at RLIMIT_NOFILE 64: no busy loop, no log flood,
    correct answers again once the idle ones are gone."""
    d = Daemon(nofile=64)
    idle = []
    try:
        for i in range(80):
            try:
                # one address each, so the per-address limit plays no part
                idle.append(d.connect_from("127.0.1.%d" % (i + 1)))
            except OSError:
                break
        time.sleep(0.3)
        lines0, cpu0, t0 = d.log_count(), d.cpu_seconds(), time.time()
        time.sleep(2.0)
        cpu = d.cpu_seconds() - cpu0
        wall = time.time() - t0
        lines = d.log_count() - lines0
        print("  fd limit: %.2f s CPU in %.2f s, %d log lines" % (cpu, wall, lines))
        assert cpu < 0.3 * wall, "daemon busy: %.2f s CPU in %.2f s" % (cpu, wall)
        assert lines < 20, "%d log lines in %.1f s:\n%s" % (lines, wall, "\n".join(d.lines[-5:]))
        for s in idle:
            s.close()
        idle = []
        time.sleep(0.2)
        with d.connect() as s:
            expect(ask(s, request()), "Received-SPF: pass")
            expect(ask(s, request(sender="bob@exp.example")), "550 5.7.23")
        d.wait_log("max-connections")  # the clamp to the file limit is said
    finally:
        for s in idle:
            s.close()
        assert d.stop() == 0


def open_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def test_accept_emfile_backs_off():
    """Item 1, the path the start-up clamp keeps us from: accept() failing
    with EMFILE. The limit is lowered under the running daemon to a few
    descriptors above what it holds, 40 clients come: the listeners pause
    (one log line per interval, no busy loop), and once the idle clients
    are gone good ones get answers again."""
    d = Daemon(args=("--max-connections", "200", "--max-per-client", "200"))
    idle = []
    try:
        pid = d.proc.pid
        room = 3
        limit = open_fds(pid) + room
        # lowering soft and hard needs no privilege for a process of our uid
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (limit, limit))
        for i in range(40):
            idle.append(d.connect_from("127.0.2.%d" % (i + 1)))
        d.wait_log("Too many open files")
        lines0, cpu0, t0 = d.log_count(), d.cpu_seconds(), time.time()
        time.sleep(2.0)
        cpu = d.cpu_seconds() - cpu0
        wall = time.time() - t0
        lines = d.log_count() - lines0
        with d.lock:
            about = [x for x in d.lines if "Too many open files" in x]
        print("  EMFILE: %.2f s CPU in %.2f s, %d log lines in the window, %d about accept, "
              "%d fds open (limit %d)" % (cpu, wall, lines, len(about), open_fds(pid), limit))
        assert d.proc.poll() is None, "daemon died"
        assert cpu < 0.3, "daemon busy: %.2f s CPU in %.2f s" % (cpu, wall)
        assert lines <= 2 and len(about) <= 2, "%d log lines in %.1f s (%d about accept):\n%s" % (
            lines, wall, len(about), "\n".join(d.lines[-5:]))
        # nothing held back yet: the first warning carries no count
        assert "held back" not in about[0], about[0]
        for s in idle:
            s.close()
        idle = []
        time.sleep(0.5)  # the daemon closes them, then takes the backlog and closes those
        with d.connect() as s:
            expect(ask(s, request()), "Received-SPF: pass")
            expect(ask(s, request(sender="bob@exp.example")), "550 5.7.23")
        assert open_fds(pid) <= limit
    finally:
        for s in idle:
            s.close()
        assert d.stop() == 0


def test_request_timeout_is_a_deadline():
    """Item 3: one byte every 0.2 s does not keep a request open past
    --request-timeout (1 s here)."""
    d = Daemon()
    try:
        with d.connect() as good:
            slow = d.connect()
            data = request()
            t0 = time.time()
            closed = False
            for b in data[:40]:
                try:
                    slow.sendall(bytes([b]))
                except OSError:
                    closed = True
                    break
                if not still_open(slow, 0.2):
                    closed = True
                    break
            took = time.time() - t0
            slow.close()
            assert closed and took < 3, "slow client still served after %.1f s" % took
            d.wait_log("request not finished within 1 s")
            expect(ask(good, request()), "Received-SPF: pass")
    finally:
        assert d.stop() == 0


def test_per_address_limit():
    """Item 3: one address gets at most --max-per-client slots (10 of 40
    here); other addresses and UNIX clients are still served."""
    d = Daemon(args=("--max-connections", "40", "--max-per-client", "10"))
    mine = []
    try:
        for _ in range(15):
            mine.append(d.connect_from("127.0.0.5"))
        time.sleep(0.3)
        open_ = [s for s in mine if still_open(s, 0.05)]
        assert len(open_) == 10, "%d connections kept from one address, want 10" % len(open_)
        d.wait_log("connections from 127.0.0.5")
        with d.connect_from("127.0.0.6") as s:
            expect(ask(s, request()), "Received-SPF: pass")
        unix = [d.connect(unix=True) for _ in range(12)]
        for s in unix:
            expect(ask(s, request(sender="bob@exp.example")), "550 5.7.23")
            s.close()
    finally:
        for s in mine:
            s.close()
        assert d.stop() == 0


def test_per_address_limit_has_a_default():
    """Item 3: without the option, a quarter of --max-connections."""
    d = Daemon(args=("--max-connections", "8"))
    mine = []
    try:
        for _ in range(5):
            mine.append(d.connect_from("127.0.0.7"))
        time.sleep(0.3)
        n = len([s for s in mine if still_open(s, 0.05)])
        assert n == 2, "%d connections kept from one address, want 2" % n
        with d.connect(unix=True) as s:
            expect(ask(s, request()), "Received-SPF: pass")
    finally:
        for s in mine:
            s.close()
        assert d.stop() == 0


def fill_with_idle_clients(d, n, net, first=None):
    """n connections from n addresses of 127.0.NET.0/24, each under
    --max-per-client, all answered once and then idle. The first (or the
    connection `first`, if given) answers 0.1 s before the others: it is
    the one idle the longest, whatever the machine's speed."""
    conns = [first if first is not None else d.connect_from("127.0.%d.1" % net)]
    if first is None:
        expect(ask(conns[0], request()), "Received-SPF: pass")
    time.sleep(0.1)
    for i in range(1, n):
        s = d.connect_from("127.0.%d.%d" % (net, i + 1))
        expect(ask(s, request()), "Received-SPF: pass")
        conns.append(s)
    return conns


def test_full_table_of_idle_clients_makes_room():
    """Issue 33 finding 8: idle clients from as many addresses as
    --max-connections allows (20 here) must not lock new clients out for
    --idle-timeout: a new one is answered at once, and the connection idle
    the longest is the one closed for it (Postfix reconnects). With
    --workers 2 too, where the worker with the most connections closes one."""
    for workers in ("1", "2"):
        d = Daemon(args=("--max-connections", "20", "--max-per-client", "5",
                         "--workers", workers))
        idle = []
        try:
            idle = fill_with_idle_clients(d, 20, 3)
            for k in range(3):  # each new client is served, and stays: the table is full again
                s = d.connect_from("127.0.4.%d" % (k + 1))
                expect(ask(s, request()), "Received-SPF: pass")
                gone = [i for i, c in enumerate(idle) if not still_open(c, 0.05)]
                idle.append(s)
                assert len(gone) == 1, "workers %s: %d idle connections closed for a new " \
                    "client, want 1" % (workers, len(gone))
                if workers == "1" and k == 0:
                    assert gone == [0], "closed %r, not the one idle the longest" % gone
                idle.pop(gone[0]).close()
            d.wait_log("to make room for a new client")
        finally:
            for c in idle:
                c.close()
            assert d.stop() == 0


def test_full_table_spares_a_request_being_read():
    """A connection in the middle of its request is never closed to make
    room, even when it is the oldest: the oldest idle one is."""
    d = Daemon(args=("--max-connections", "10", "--max-per-client", "5",
                     "--request-timeout", "60", "--workers", "1"))
    conns = []
    try:
        half = d.connect_from("127.0.5.1")
        half.sendall(request()[:40])
        time.sleep(0.1)
        conns = [half] + fill_with_idle_clients(d, 9, 6)
        with d.connect_from("127.0.5.200") as s:
            expect(ask(s, request()), "Received-SPF: pass")
        assert still_open(half, 0.1), "the connection in the middle of a request was closed"
        assert not still_open(conns[1], 1.0), "the oldest idle connection is still open"
        half.sendall(request()[40:])
        expect(read_reply(half), "Received-SPF: pass")
    finally:
        for c in conns:
            c.close()
        assert d.stop() == 0


def test_full_table_of_busy_clients_makes_room_once_idle():
    """At --max-connections 4 with all four in a request that waits for DNS
    (answers held back 5 s by tests/dnsd), nothing can be closed: a fifth
    client is served one over the limit, a sixth waits in the backlog. The
    fifth stays open, idle: it must be closed for the sixth, which is then
    served, long before --idle-timeout; the four get their answers. With 1
    and 2 workers."""
    if DNSD is None:
        raise AssertionError("no dnsd given")
    for workers in ("1", "2"):
        with daemon_behind_slow_dns(args=("--max-connections", "4", "--max-per-client", "4",
                                          "--workers", workers),
                                    delay="late.example:5000") as d:
            busy = [d.connect_from("127.0.7.%d" % (i + 1)) for i in range(4)]
            try:
                for s in busy:
                    s.sendall(request(sender="x@late.example", helo="h.unknown.test"))
                time.sleep(1.0)  # all four read and waiting for DNS (4 s to spare)
                with d.connect_from("127.0.7.5") as fifth, \
                        d.connect_from("127.0.7.6") as sixth:
                    fifth.settimeout(10)
                    expect(ask(fifth, request()), "Received-SPF: pass")
                    sixth.settimeout(20)
                    expect(ask(sixth, request()), "Received-SPF: pass")
                    assert not still_open(fifth, 1.0), "workers %s: the idle fifth kept" % workers
                for s in busy:
                    s.settimeout(10)
                    expect(read_reply(s), "Received-SPF: pass")
                d.wait_log("idle: not accepting until one closes or goes idle")
            finally:
                for s in busy:
                    s.close()


EMPTY_DIR = tempfile.mkdtemp(prefix="spfkit-policyd-limits-")
EMPTY = os.path.join(EMPTY_DIR, "empty")  # an empty configuration and zone
open(EMPTY, "w").close()


def run_bin(args, timeout=10):
    p = subprocess.run([BIN] + list(args), capture_output=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stderr.decode(errors="replace")


def test_second_daemon_on_live_socket_refused():
    """Item 7: the live socket and PID file stay with the first daemon."""
    d = Daemon()
    try:
        with open(d.pid_file) as f:
            pid_before = f.read()
        rc, err = run_bin(["--zone", d.zone, "--log", "stderr", "--listen", "unix:" + d.sock,
                           "--pid-file", d.pid_file, "-c", d.conf])
        assert rc != 0, "second daemon started: %r" % err
        expect(err, "answers on " + d.sock)
        with open(d.pid_file) as f:
            assert f.read() == pid_before, "pid file overwritten"
        with d.connect(unix=True) as s:
            expect(ask(s, request()), "Received-SPF: pass")
    finally:
        assert d.stop() == 0


def test_stale_socket_replaced():
    """Item 7: a socket nobody answers on is an old run's; it is replaced."""
    tmp = tempfile.mkdtemp(prefix="spfkit-policyd-stale-")
    try:
        path = os.path.join(tmp, "policy.sock")
        old = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old.bind(path)
        old.close()  # the file stays, nobody listens
        p = subprocess.Popen([BIN, "--zone", EMPTY, "--log", "stderr",
                              "--listen", "unix:" + path, "-c", EMPTY],
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        try:
            deadline = time.time() + 5
            ok = False
            while time.time() < deadline and not ok:
                try:
                    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                        s.connect(path)
                        ok = True
                except OSError:
                    time.sleep(0.05)
            assert ok, "daemon does not answer on the stale path"
        finally:
            p.terminate()
            p.wait(10)
        assert not os.path.exists(path), "socket left behind at exit"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_user_leaves_nothing_behind():
    """Item 7: with --user, the PID file and the socket go at exit too."""
    if os.geteuid() != 0:
        raise AssertionError("needs root (--user)")
    d = Daemon(args=("--user", "nobody"))
    sock, pid_file = d.sock, d.pid_file
    keep = d.dir
    d.dir = tempfile.mkdtemp(prefix="spfkit-policyd-unused-")  # stop() removes this one
    try:
        with d.connect(unix=True) as s:
            expect(ask(s, request()), "Received-SPF: pass")
        assert d.stop() == 0
        deadline = time.time() + 3
        while time.time() < deadline and (os.path.exists(sock) or os.path.exists(pid_file)):
            time.sleep(0.05)
        assert not os.path.exists(pid_file), "pid file left behind"
        assert not os.path.exists(sock), "socket left behind"
    finally:
        shutil.rmtree(keep, ignore_errors=True)


def test_ports_over_65535_refused():
    """Item 7: no silent wrap-around of a port number."""
    rc, err = run_bin(["--zone", EMPTY, "--listen", "inet:127.0.0.1:99999", "-c",
                       EMPTY], timeout=5)
    assert rc != 0, "inet:127.0.0.1:99999 accepted"
    expect(err, "99999")
    rc, err = run_bin(["--dns", "127.0.0.1:99999", "--check-config", "-c", EMPTY])
    assert rc != 0, "--dns 127.0.0.1:99999 accepted"
    expect(err, "--dns")
    rc, err = run_bin(["--dns", "[::1]:53,127.0.0.1:5353", "--check-config", "-c", EMPTY])
    assert rc == 0, err


def test_bad_value_names_the_option():
    rc, err = run_bin(["--dns-timeout", "-1", "--check-config", "-c", EMPTY])
    assert rc == 2, rc
    expect(err, "--dns-timeout")
    expect(err, "'-1'")


def test_long_whitelist_line_accepted():
    """Item 7: a Whitelist of 2,000 networks on one line, as policyd-spf takes."""
    tmp = tempfile.mkdtemp(prefix="spfkit-policyd-long-")
    try:
        conf = os.path.join(tmp, "policyd-spf.conf")
        nets = ",".join("10.%d.%d.0/24" % (i // 256, i % 256) for i in range(2000))
        with open(conf, "w") as f:
            f.write("debugLevel = 1\nWhitelist = %s\n" % nets)
        rc, err = run_bin(["--check-config", "-c", conf])
        assert rc == 0, err
        # past the file cap: the message names the file and a line
        with open(conf, "w") as f:
            f.write("debugLevel = 1\n" + ("# %s\n" % ("x" * 1000)) * 1100)
        rc, err = run_bin(["--check-config", "-c", conf])
        assert rc != 0
        expect(err, conf + ":")
        expect(err, "larger than")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    passed = failed = 0
    only = ONLY
    for name, t in sorted(globals().items()):
        if not name.startswith("test_") or (only and name not in only):
            continue
        try:
            t()
            passed += 1
            print("ok   %s" % name)
        except Exception as e:  # report every failure, keep going
            failed += 1
            print("FAIL %s: %s" % (name, e))
    shutil.rmtree(EMPTY_DIR, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
