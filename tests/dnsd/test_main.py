#!/usr/bin/env python3
"""End-to-end test of the standalone `dnsd` program: flags, the port and
pid files, faults from the command line, SIGHUP reload, SIGTERM exit with
counters, usage errors. Loopback only. Usage: test_main.py PATH/TO/dnsd"""
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

DNSD = sys.argv[1]

ZONE = """$ORIGIN example.
$TTL 600
@        IN TXT "v=spf1 mx -all"
@        IN MX 10 mail
mail     IN A 192.0.2.25
slow     IN A 192.0.2.26
blank    IN TXT ""
empty    IN TXT ""
noise    IN TXT "v=spf1 ip4:192.0.2.0/24 -all"
"""


def query(name, qtype, qid=0x2222):
    msg = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        msg += bytes([len(label)]) + label.encode()
    return msg + b"\0" + struct.pack(">HH", qtype, 1)


def ask_udp(port, name, qtype, timeout=2.0, qid=0x2222):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        s.sendto(query(name, qtype, qid), ("127.0.0.1", port))
        try:
            return s.recv(65535)
        except socket.timeout:
            return None


def ask_tcp(port, name, qtype):
    q = query(name, qtype)
    with socket.create_connection(("127.0.0.1", port), timeout=2.0) as s:
        s.sendall(struct.pack(">H", len(q)) + q)
        head = s.recv(2, socket.MSG_WAITALL)
        (n,) = struct.unpack(">H", head)
        return s.recv(n, socket.MSG_WAITALL)


def rcode(r):
    return r[3] & 0x0F


def ancount(r):
    return struct.unpack(">H", r[6:8])[0]


def last_a(r):
    """RDATA of the last record when it is an A record (4 bytes at the end)."""
    return socket.inet_ntoa(r[-4:])


failures = []


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


def wait_file(path, seconds=5.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if os.path.exists(path):
            return True
        time.sleep(0.02)
    return False


def test_serving(tmp):
    zone = os.path.join(tmp, "z.zone")
    with open(zone, "w") as f:
        f.write(ZONE)
    port_file, pid_file = os.path.join(tmp, "port"), os.path.join(tmp, "pid")
    p = subprocess.Popen(
        [DNSD, "--zone", zone, "--port-file", port_file, "--pid-file", pid_file,
         "--servfail", "bad.example", "--delay", "slow.example/A:150",
         "--malformed", "mal.example:short", "--timeout", "gone.example",
         "--malformed", "empty.example/TXT:txt-no-strings",
         "--malformed", "noise.example:corrupt", "--seed", "7"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if not wait_file(port_file):
            failures.append("no port file within 5 s")
            return
        port = int(open(port_file).read())
        check("announce line", p.stdout.readline().strip(), f"listening on 127.0.0.1:{port}")
        check("pid file", int(open(pid_file).read()), p.pid)

        r = ask_udp(port, "mail.example", 1)
        check("A rcode", rcode(r), 0)
        check("A answer", last_a(r), "192.0.2.25")
        check("SERVFAIL flag", rcode(ask_udp(port, "bad.example", 1)), 2)
        check("malformed short", len(ask_udp(port, "mal.example", 1)), 7)
        check("timeout flag", ask_udp(port, "gone.example", 1, timeout=0.2), None)
        t0 = time.monotonic()
        r = ask_udp(port, "slow.example", 1)
        check("delayed >= 150 ms", (time.monotonic() - t0) >= 0.150, True)
        check("TCP TXT answers", ancount(ask_tcp(port, "example", 16)), 1)
        # TXT "" is one empty string (RDLENGTH 1); txt-no-strings sends RDLENGTH 0.
        check("TXT \"\" RDATA", ask_udp(port, "blank.example", 16)[-3:], b"\0\1\0")
        check("TXT with no strings", ask_udp(port, "empty.example", 16)[-2:], b"\0\0")
        # corrupt: the same bytes whatever the query id, for one seed.
        r1 = ask_udp(port, "noise.example", 16, qid=1)
        r2 = ask_udp(port, "noise.example", 16, qid=2)
        check("corrupt keeps the id", r1[:2], b"\0\1")
        check("corrupt is deterministic", r1[2:], r2[2:])

        # SIGHUP: a new zone is served; a broken one leaves the old in place.
        with open(zone, "w") as f:
            f.write(ZONE.replace("192.0.2.25", "192.0.2.99"))
        os.kill(p.pid, signal.SIGHUP)
        end, got = time.monotonic() + 3, None
        while time.monotonic() < end:
            got = last_a(ask_udp(port, "mail.example", 1))
            if got == "192.0.2.99":
                break
            time.sleep(0.02)
        check("after reload", got, "192.0.2.99")
        with open(zone, "w") as f:
            f.write("this is ( not a zone\n")
        os.kill(p.pid, signal.SIGHUP)
        time.sleep(0.2)
        check("after failed reload", last_a(ask_udp(port, "mail.example", 1)), "192.0.2.99")

        os.kill(p.pid, signal.SIGTERM)
        out, err = p.communicate(timeout=5)
        check("exit status on SIGTERM", p.returncode, 0)
        check("counters printed", "queries udp=" in err, True)
        check("reload failure reported", "reload failed" in err, True)
        check("port file removed", os.path.exists(port_file), False)
        check("pid file removed", os.path.exists(pid_file), False)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_usage(tmp):
    zone = os.path.join(tmp, "u.zone")
    with open(zone, "w") as f:
        f.write(ZONE)
    cases = [
        ([], 2, "--zone FILE is required"),
        (["--zone", zone, "--listen", "0.0.0.0"], 2, "loopback only"),
        (["--zone", zone, "--listen", "192.0.2.1"], 2, "loopback only"),
        (["--zone", zone, "--port", "70000"], 2, "bad number for --port"),
        (["--zone", zone, "--seed", "x"], 2, "bad number for --seed"),
        (["--zone", zone, "--malformed", "x.example:nope"], 2, "unknown malformed kind"),
        (["--zone", zone, "--frobnicate", "1"], 2, "unknown option"),
        (["--zone", os.path.join(tmp, "missing.zone")], 1, "missing.zone"),
    ]
    for args, status, text in cases:
        p = subprocess.run([DNSD] + args, capture_output=True, text=True, timeout=10)
        check(f"exit status of {args}", p.returncode, status)
        check(f"message of {args} mentions {text!r}", text in p.stderr, True)


with tempfile.TemporaryDirectory() as tmp:
    test_serving(tmp)
    test_usage(tmp)

for f in failures:
    print("FAIL", f)
print(f"{'ok' if not failures else 'FAILED'}: dnsd program test, {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
