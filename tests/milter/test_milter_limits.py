#!/usr/bin/env python3
"""spfkit-milter under a hostile world (issue 33, findings 1, 2 and 5): silent
and half-sent packets dropped after a deadline, malformed MACRO packets that
crashed libmilter, a second instance on the same socket, the socket's
permissions, and the descriptor limit (no spin, a log line per interval, the
connections it has still served). Bounded: at most 80 connections, every wait
a few seconds.

Usage: test_milter_limits.py /path/to/spfkit-milter
"""
import os
import resource
import socket
import stat
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import milterclient as mc  # noqa: E402
import test_milter as tm  # noqa: E402  (BIN from sys.argv[1], the zone, the Daemon)

expect = tm.expect
SHORT = ["--read-timeout", "2", "--idle-timeout", "3"]


def raw(d):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(15)
    s.connect(d.sock)
    return s


def closed_within(s, lo, hi):
    """The milter closes s between lo and hi seconds from now (it sends nothing)."""
    t0 = time.time()
    try:
        data = s.recv(100)
    except ConnectionResetError:
        data = b""
    took = time.time() - t0
    s.close()
    assert data == b"", "got %r, want the end" % data
    assert lo <= took <= hi, "closed after %.2f s, want %.1f-%.1f s" % (took, lo, hi)


# ---- deadlines (finding 2) ----------------------------------------------------------

def t_silent_peer(d):
    """Connects and sends nothing: dropped --read-timeout (2 s) later, not at once."""
    closed_within(raw(d), 1.5, 6)
    d.wait_log("no option negotiation within 2 s")


def t_length_zero_then_nothing(d):
    """An empty packet (length 0), then nothing: no command, so the negotiation deadline."""
    s = raw(d)
    s.sendall(b"\0\0\0\0")
    closed_within(s, 1.5, 6)


def t_length_huge_then_nothing(d):
    """A length of 0xffffffff: over the 64 KiB packet cap, closed at once with a log line."""
    s = raw(d)
    s.sendall(b"\xff\xff\xff\xff")
    closed_within(s, 0, 1.5)
    d.wait_log("packet length 4294967295 over 65536")


def t_partial_packet(d):
    """Negotiated, then 3 bytes of a length, or a length and part of its packet: dropped 2 s
    after the first byte, though a byte a second keeps coming."""
    m = d.client()
    m.sock.sendall(b"\0\0")
    time.sleep(0.5)
    m.sock.sendall(b"\0")
    closed_within(m.sock, 1, 6)
    m = d.client()
    m.sock.sendall(struct.pack(">I", 100) + b"H" + b"x" * 10)
    t0 = time.time()
    try:
        for _ in range(8):
            time.sleep(1)
            m.sock.sendall(b"x")
    except OSError:
        pass
    closed_within(m.sock, 0, 6 - (time.time() - t0))
    assert time.time() - t0 < 6


def t_idle_after_negotiation(d):
    """Negotiated then silent: dropped after --idle-timeout (3 s); a session whose commands
    come 1.5 s apart lives on."""
    m = d.client()
    expect(m.connect("192.0.2.10"), ("continue", b""))
    time.sleep(1.5)
    expect(m.helo("mx.example.com"), ("continue", b""))
    time.sleep(1.5)
    expect(m.mail("<alice@example.com>"), ("continue", b""))
    time.sleep(1.5)
    expect(tm.finish(m), [tm.ar(tm.ID + "; spf=pass smtp.mailfrom=example.com")])
    closed_within(m.sock, 2, 6)
    d.wait_log("no command for 3 s (--idle-timeout)")


# ---- malformed macros (finding 5: libmilter's segfault) -------------------------------

BAD_MACROS = [
    b"M{auth_authen}\0",                  # an odd number of strings: libmilter crashed
    b"M{auth_authen}\0bob\0{verify}\0",   # odd again, after a whole pair
    b"M{auth_authen}\0bob",              # the value has no NUL
    b"M",                                 # a stage, no strings
    b"",                                  # not even a stage
    b"Z{x}\0y\0",                         # an unknown stage
    b"M\xff\xfe\0\0\0\0\0",               # garbage and empty strings
    b"C" + b"\0" * 3000,                  # empty names, many
]


def t_odd_macros(d):
    """Every malformed MACRO packet, four times each, on one connection: no crash; an odd
    {auth_authen} authenticates nobody (a fail is still refused); the next session on the
    same connection and on a new one are served."""
    m = d.client()
    expect(m.connect("192.0.2.99"), ("continue", b""))
    expect(m.helo("h.unknown.test"), ("continue", b""))
    for _ in range(4):
        for p in BAD_MACROS:
            m.send(mc.MACRO, p)
    m.send(mc.MACRO, b"M{auth_authen}\0")
    text = tm.reply_text(m.mail("<bob@exp.example>"))
    assert text.startswith("550 5.7.23 "), text
    # a whole pair before the odd string is kept: authenticated, not checked
    m.send(mc.MACRO, b"M{auth_authen}\0bob\0{verify}\0")
    expect(m.mail("<bob@exp.example>"), ("continue", b""))
    m.abort()
    m.send(mc.MACRO, b"M{auth_authen}\0")
    expect(m.mail("<alice@example.com>"), ("continue", b""))
    expect(tm.finish(m), [tm.ar(tm.ID + "; spf=pass smtp.mailfrom=example.com")])
    m.quit()
    tm.still_serves(d)
    d.wait_log("bytes that are no whole name and value ignored")


# ---- the socket (finding 5) --------------------------------------------------------------

def t_second_instance(d):
    """A second milter on the same UNIX socket refuses to start and leaves the first
    running and reachable."""
    p = subprocess.run([tm.BIN, "-f", "--log", "stderr", "-s", "unix:" + d.sock,
                        "--zone", d.zone, d.conf], capture_output=True, timeout=20)
    err = p.stderr.decode("utf-8", "replace")
    assert p.returncode != 0, (p.returncode, err)
    assert "another server answers on " + d.sock in err, err
    assert stat.S_ISSOCK(os.stat(d.sock).st_mode)
    tm.still_serves(d)


def t_socket_mode(d):
    """The socket is 0660 (not open to every local user) unless told otherwise."""
    expect(oct(os.stat(d.sock).st_mode & 0o777), oct(0o660))


def t_socket_mode_option(d):
    expect(oct(os.stat(d.sock).st_mode & 0o777), oct(0o600))


def start_on(d, path):
    p = subprocess.Popen([tm.BIN, "-f", "--log", "stderr", "-s", "unix:" + path, "--zone", d.zone,
                          d.conf], stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    deadline = time.time() + 10
    while True:  # until it answers there
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(path)
            return p
        except OSError:
            if time.time() > deadline or p.poll() is not None:
                raise AssertionError("no server on %s (status %r)" % (path, p.poll()))
            time.sleep(0.05)


def t_stale_socket_replaced(d):
    """A socket file left by a killed milter (nobody answers) is replaced at the next start."""
    path = os.path.join(d.dir, "stale.sock")
    first = start_on(d, path)
    first.kill()
    first.wait(10)
    assert stat.S_ISSOCK(os.stat(path).st_mode)
    second = start_on(d, path)
    try:
        m = mc.Milter(path)
        m.negotiate()
        expect(m.connect("192.0.2.10"), ("continue", b""))
        m.quit()
    finally:
        second.terminate()
        expect(second.wait(20), 0)


def help_and_options():
    """--help names the new default socket and the limits; bad values are refused."""
    p = subprocess.run([tm.BIN, "--help"], capture_output=True, timeout=10)
    out = p.stdout.decode()
    for want in ("unix:/run/spfkit-milter/spfkit-milter.sock", "--socket-mode", "--socket-group",
                 "--max-connections", "--read-timeout", "--idle-timeout"):
        assert want in out, (want, out)
    for bad in (["--socket-mode", "999"], ["--read-timeout", "0"], ["--max-connections", "x"],
                ["-s", "inet:99999@127.0.0.1", "--zone", "/dev/null"]):
        p = subprocess.run([tm.BIN, "-f", "--log", "stderr"] + bad, capture_output=True,
                           timeout=10)
        assert p.returncode != 0, (bad, p)


# ---- the descriptor limit (finding 1) -------------------------------------------------

def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_share(pid, seconds):
    c0, t0 = cpu_seconds(pid), time.time()
    time.sleep(seconds)
    return (cpu_seconds(pid) - c0) / (time.time() - t0)


def soft_limit(pid):
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    raise AssertionError("no open-file limit")


def flood(d, n):
    """n connections opened and left idle; those the milter does not take wait in its backlog."""
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(d.sock)
        socks.append(s)
    return socks


def served_after_flood(d, first, socks):
    m = first
    expect(m.connect("192.0.2.10"), ("continue", b""))
    expect(m.helo("mx.example.com"), ("continue", b""))
    expect(m.mail("<alice@example.com>"), ("continue", b""))
    expect(tm.finish(m), [tm.ar(tm.ID + "; spf=pass smtp.mailfrom=example.com")])
    m.quit()
    for s in socks:
        s.close()
    deadline = time.time() + 10
    while True:  # the backlog's connections are taken and dropped, the next is served
        try:
            tm.still_serves(d)
            return
        except (OSError, mc.Closed, AssertionError):
            if time.time() > deadline:
                raise
            time.sleep(0.3)


def t_low_soft_limit_raised(d):
    """Started with a soft limit of 64 (hard one higher): the milter raises it, takes all 80
    idle connections without spinning, and serves."""
    assert soft_limit(d.proc.pid) > 64, soft_limit(d.proc.pid)
    first = d.client()
    socks = flood(d, 80)
    share = cpu_share(d.proc.pid, 5)
    assert share <= 0.10, "the milter used %.0f %% of a CPU" % (share * 100)
    served_after_flood(d, first, socks)


def t_descriptors_run_out(d):
    """The open-file limit cut to 64 while running, then 80 idle connections: accept() fails
    with EMFILE; the milter rests instead of spinning (<= 10 % CPU over 5 s), says so at most
    once per 10 s, still serves a connection it had, and new ones once the idle ones go."""
    first = d.client()
    resource.prlimit(d.proc.pid, resource.RLIMIT_NOFILE, (64, 64))
    socks = flood(d, 80)
    share = cpu_share(d.proc.pid, 5)
    assert share <= 0.10, "the milter used %.0f %% of a CPU" % (share * 100)
    with d.lock:
        lines = [x for x in d.lines if "accept: " in x]
    assert 1 <= len(lines) <= 2, lines
    served_after_flood(d, first, socks)


def t_max_connections(d):
    """--max-connections 8: the ninth connection waits in the backlog, no spin, one line."""
    first = d.client()
    socks = flood(d, 20)
    share = cpu_share(d.proc.pid, 3)
    assert share <= 0.10, "the milter used %.0f %% of a CPU" % (share * 100)
    d.wait_log("8 connections (--max-connections): not accepting until one closes")
    served_after_flood(d, first, socks)


def low_soft_limit():
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))


GROUPS = [
    ([], None, [t_socket_mode, t_odd_macros, t_second_instance, t_stale_socket_replaced,
          t_low_soft_limit_raised],
     low_soft_limit),
    # timeouts and protocol errors are each said at most once per 10 s: one of each per group
    (SHORT, None, [t_length_huge_then_nothing, t_silent_peer, t_length_zero_then_nothing,
                   t_partial_packet], None),
    (SHORT, None, [t_idle_after_negotiation], None),
    (["--socket-mode", "600"], None, [t_socket_mode_option], None),
    ([], None, [t_descriptors_run_out], None),
    (["--max-connections", "8"], None, [t_max_connections], None),
]


def main():
    # MILTER_LIMITS_GROUPS=0,3: only those (to run the old milter, which lacks the options)
    only = os.environ.get("MILTER_LIMITS_GROUPS")
    groups = [GROUPS[int(i)] for i in only.split(",")] if only else GROUPS
    return tm.run_all([(conf or tm.CONF, None, tests, args, preexec)
                       for args, conf, tests, preexec in groups], help_and_options)


if __name__ == "__main__":
    sys.exit(main())
