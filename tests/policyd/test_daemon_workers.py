#!/usr/bin/env python3
"""spfkit-policyd --workers, and its log channel when no syslog daemon listens.

  test_daemon_workers.py SPFKIT_POLICYD SPFKIT ZONE

- --workers 2: concurrent clients over UNIX and TCP, every answer equal,
  byte for byte, to `spfkit check --format policy` for its request; the
  daemon runs two threads; SIGHUP reloads every worker; SIGTERM lets a
  request in flight on any worker finish.
- --workers 1: one thread, the same answers.
- a bad --workers value: exit 2 and a message naming the option and the range.
- --log syslog with --log-socket pointing at nothing: one line on stderr
  says so, every decision line follows on stderr, and no further attempt
  to reach the socket is made per line (strace counts socket()/connect()).
- --log-socket at a datagram socket of the test: lines arrive there in
  syslog's format, facility mail; when it goes away, stderr says so once.
"""
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mta"))
import harness  # noqa: E402  (tests/mta/harness.py)

POLICYD, SPFKIT, ZONE = (os.path.abspath(a) for a in sys.argv[1:4])
RECEIVER = "mx.example.org"

# the clients of test_check_policy_agrees.py: every result, HELO deciding,
# the null sender, a local address, no HELO name
CASES = [
    ("192.0.2.10", "alice@mx-only.example", "mail.mx-only.example"),
    ("192.0.2.10", "bob@nomail.example", "mail.example"),
    ("192.0.2.21", "eve@soft.example", "mail.example"),
    ("192.0.2.10", "frank@maybe.example", "mail.example"),
    ("192.0.2.10", "grace@plain.example", "mail.example"),
    ("192.0.2.10", "heidi@broken.example", "mail.example"),
    ("192.0.2.10", "ivan@explained.example", "mail.example"),
    ("192.0.2.40", "bob@nomail.example", "gw.example"),
    ("192.0.2.30", "", "gw.example"),
    ("127.0.0.1", "bob@nomail.example", "mail.example"),
    ("198.51.100.7", "carol@shop.example", "mail.example"),
    ("2001:db8:100::1", "carol@shop.example", "mail.example"),
    ("192.0.2.10", "dave@void.example", "mail.example"),
    ("192.0.2.10", "bob@nomail.example", ""),
]


def request(ip, sender, helo, instance=""):
    return ("request=smtpd_access_policy\nprotocol_state=RCPT\nclient_address=%s\n"
            "sender=%s\nhelo_name=%s\nrecipient=u@receiver.example\ninstance=%s\n\n"
            % (ip, sender, helo, instance)).encode()


def check_answer(ip, sender, helo):
    r = subprocess.run([SPFKIT, "check", "--format", "policy", "--zone", ZONE, "--receiver",
                        RECEIVER, "--ip", ip, "--sender", sender, "--helo", helo],
                       capture_output=True, timeout=30)
    out = r.stdout.decode()
    if r.stderr or not out.endswith("\n") or out.count("\n") != 1:
        raise AssertionError("spfkit check: exit %d, %r %r" % (r.returncode, out, r.stderr))
    return out[:-1]


def read_reply(s):
    buf = b""
    while not buf.endswith(b"\n\n"):
        chunk = s.recv(4096)
        if not chunk:
            raise AssertionError("connection closed after %r" % buf)
        buf += chunk
    return buf.decode()[:-2]


class Daemon:
    def __init__(self, tmp, args, log=("--log", "stderr"), conf="", logs_on_stderr=True):
        self.sock = os.path.join(tmp, "policy.sock")
        self.conf = os.path.join(tmp, "policyd-spf.conf")
        with open(self.conf, "w") as f:
            f.write(conf)
        cmd = [POLICYD, "--zone", ZONE, "--receiver", RECEIVER] + list(log) + [
            "--listen", "unix:" + self.sock, "--listen", "inet:127.0.0.1:0",
            "-c", self.conf] + list(args)
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        self.lines = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        try:
            if not logs_on_stderr:  # "listening on" went to syslog: wait for the socket
                end = time.time() + 10
                while not os.path.exists(self.sock) and time.time() < end:
                    time.sleep(0.02)
                if not os.path.exists(self.sock):
                    raise AssertionError("no socket %s after 10 s" % self.sock)
                return
            self.port = int(self.wait_log("listening on inet:").rsplit(":", 1)[1])
            self.wait_log("listening on unix:")
        except BaseException:
            self.proc.kill()  # a daemon that did not start right is not left behind
            self.proc.wait()
            raise

    def _read(self):
        for raw in self.proc.stderr:
            with self.lock:
                self.lines.append(raw.decode(errors="replace").rstrip("\n"))

    def log(self):
        with self.lock:
            return list(self.lines)

    def wait_log(self, needle, timeout=10.0, count=1):
        end = time.time() + timeout
        while time.time() < end:
            if sum(needle in line for line in self.log()) >= count:
                return [line for line in self.log() if needle in line][-1]
            if self.proc.poll() is not None and not self.reader.is_alive():
                break
            time.sleep(0.02)
        raise AssertionError("no log line with %r; log:\n%s" % (needle, "\n".join(self.log())))

    def connect(self, unix):
        if unix:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(self.sock)
        else:
            s = socket.create_connection(("127.0.0.1", self.port))
        s.settimeout(10)
        return s

    def threads(self):
        return len(os.listdir("/proc/%d/task" % self.proc.pid))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("did not stop on SIGTERM")
        self.reader.join(timeout=5)


def hammer(d, want, clients, rounds):
    """`clients` concurrent connections, half UNIX, half TCP, each asking every
    case `rounds` times in its own order; every answer must be check's."""
    errors = []

    def client(k):
        try:
            order = [c for c in CASES for _ in range(rounds)]
            random.Random(k).shuffle(order)
            with d.connect(unix=k % 2 == 0) as s:
                for n, case in enumerate(order):
                    s.sendall(request(*case, instance="c%d.%d" % (k, n)))
                    got = read_reply(s)
                    if got != want[case]:
                        errors.append("client %d %s:\n  got  %s\n  want %s" % (k, case, got,
                                                                           want[case]))
                        return
        except Exception as e:  # noqa: BLE001 - reported below with the client
            errors.append("client %d: %r" % (k, e))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    if errors:
        raise AssertionError("\n".join(errors[:5]))
    return clients * rounds * len(CASES)


def test_two_workers_answer_concurrent_clients(tmp, want):
    d = Daemon(tmp, ["--workers", "2"])
    try:
        d.wait_log("2 workers")
        # at least: ThreadSanitizer adds a thread of its own
        if d.threads() < 2:
            raise AssertionError("--workers 2: %d threads" % d.threads())
        n = hammer(d, want, clients=12, rounds=3)
        return "%d answers over 12 clients, all equal to spfkit check" % n
    finally:
        d.stop()


def test_one_worker_as_before(tmp, want):
    d = Daemon(tmp, ["--workers", "1"])
    try:
        if d.threads() != 1:
            raise AssertionError("--workers 1: %d threads" % d.threads())
        if any(line.endswith(" workers") for line in d.log()):
            raise AssertionError("--workers 1 speaks of workers: %s" % d.log())
        n = hammer(d, want, clients=4, rounds=1)
        return "%d answers, one thread" % n
    finally:
        d.stop()


def test_reload_reaches_every_worker(tmp, want):
    case = ("192.0.2.10", "bob@nomail.example", "mail.example")  # a fail: rejected by default
    d = Daemon(tmp, ["--workers", "2"])
    try:
        before = hammer(d, want, clients=2, rounds=1)
        with open(d.conf, "w") as f:
            f.write("Mail_From_reject = False\nHELO_reject = False\n")
        d.proc.send_signal(signal.SIGHUP)
        d.wait_log("reloaded")
        time.sleep(0.3)  # the other worker reads the file on its own loop
        # new connections go to each worker in turn: every one must see the new rules
        for k in range(6):
            with d.connect(unix=k % 2 == 0) as s:
                s.sendall(request(*case, instance="r%d" % k))
                got = read_reply(s)
                if got.startswith("action=550") or "fail" not in got:
                    raise AssertionError("connection %d after reload: %s" % (k, got))
        reloaded = sum("reloaded" in line for line in d.log())
        if reloaded != 1:
            raise AssertionError("%d 'reloaded' lines, want 1 (worker 0 speaks for all)"
                                 % reloaded)
        return "%d answers before, 6 connections after the reload all use it" % before
    finally:
        d.stop()


def test_sigterm_finishes_requests_on_every_worker(tmp, want):
    d = Daemon(tmp, ["--workers", "2"])
    try:
        socks = [d.connect(unix=k % 2 == 0) for k in range(4)]
        case = CASES[0]
        for k, s in enumerate(socks):
            s.sendall(request(*case, instance="t%d" % k)[:-1])  # all but the final empty line
        time.sleep(0.2)
        d.proc.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        for s in socks:
            s.sendall(b"\n")
            got = read_reply(s)
            if got != want[case]:
                raise AssertionError("after SIGTERM: %s, want %s" % (got, want[case]))
            s.close()
        rc = d.proc.wait(timeout=10)
        if rc != 0:
            raise AssertionError("exit %d after SIGTERM" % rc)
        return "4 requests begun before SIGTERM answered, exit 0"
    finally:
        d.stop()


def test_bad_workers_values(tmp, want):
    del tmp, want
    for bad in ["0", "-1", "abc", "2x", "257", ""]:
        r = subprocess.run([POLICYD, "--workers", bad, "--zone", ZONE], capture_output=True,
                           timeout=10, stdin=subprocess.DEVNULL)
        err = r.stderr.decode()
        want_text = "bad value '%s' for --workers (a whole number from 1 to 256)" % bad
        if r.returncode != 2 or want_text not in err:
            raise AssertionError("--workers %r: exit %d, %r" % (bad, r.returncode, err))
    return "6 bad values refused with exit 2"


def strace_count(pid, calls, action):
    """How many of `calls` the process made while `action` ran (strace -c), or None."""
    strace = shutil.which("strace")
    if strace is None:
        return None
    out = tempfile.NamedTemporaryFile(prefix="spfkit-strace-", delete=False)
    out.close()
    tracer = subprocess.Popen([strace, "-f", "-c", "-e", "trace=" + ",".join(calls), "-o",
                               out.name, "-p", str(pid)], stderr=subprocess.DEVNULL)
    time.sleep(0.5)  # attached
    action()
    time.sleep(0.2)
    tracer.send_signal(signal.SIGINT)
    tracer.wait(timeout=10)
    counts = {c: 0 for c in calls}
    with open(out.name) as f:
        for line in f:
            fields = line.split()
            if fields and fields[-1] in counts and fields[0][0].isdigit():
                counts[fields[-1]] = int(fields[3])
    os.unlink(out.name)
    return counts


def test_no_syslog_daemon_falls_back_once(tmp, want):
    missing = os.path.join(tmp, "no-such-log-socket")
    d = Daemon(tmp, ["--workers", "2"], log=("--log", "syslog", "--log-socket", missing),
               conf="debugLevel = 1\n")
    try:
        d.wait_log("no syslog daemon answers on %s" % missing)

        def load():
            hammer(d, want, clients=4, rounds=2)

        counts = strace_count(d.proc.pid, ["socket", "connect"], load)
        n = 4 * 2 * len(CASES)
        d.wait_log("mailfrom_result=", count=n)
        said = sum("no syslog daemon answers" in line for line in d.log())
        if said != 1:
            raise AssertionError("the fallback said %d times, want once:\n%s"
                                 % (said, "\n".join(d.log()[:20])))
        if counts is not None and (counts["socket"] != 0 or counts["connect"] != 0):
            raise AssertionError("%d requests made %s: the socket is retried per line"
                                 % (n, counts))
        return "fallback said once; %d decision lines on stderr; %s during them" % (
            n, counts if counts is not None else "strace not installed: calls not counted")
    finally:
        d.stop()


def test_syslog_socket_gets_lines_then_goes(tmp, want):
    path = os.path.join(tmp, "log")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(path)
    server.settimeout(10)
    d = Daemon(tmp, [], log=("--log", "syslog", "--log-socket", path), conf="debugLevel = 1\n",
               logs_on_stderr=False)
    try:
        case = CASES[0]
        with d.connect(unix=True) as s:
            s.sendall(request(*case, instance="s1"))
            if read_reply(s) != want[case]:
                raise AssertionError("answer with syslog logging")
        seen = []
        while not any(b"mailfrom_result=" in m for m in seen):
            seen.append(server.recv(65536))
        line = [m for m in seen if b"mailfrom_result=" in m][0].decode()
        # <mail.info>, RFC 3164 time stamp, tag with the pid
        prefix = "<22>"
        tag = " spfkit-policyd[%d]: " % d.proc.pid
        if not line.startswith(prefix) or tag not in line or line[4:7] not in (
                "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec").split():
            raise AssertionError("syslog datagram %r" % line)
        if any("mailfrom_result=" in x for x in d.log()):
            raise AssertionError("decision logged on stderr too")
        # the syslog daemon goes away: stderr takes over, said once
        server.close()
        os.unlink(path)
        for k in range(3):
            with d.connect(unix=True) as s:
                s.sendall(request(*case, instance="s2.%d" % k))
                read_reply(s)
        d.wait_log("stopped answering")
        d.wait_log("mailfrom_result=", count=2)
        said = sum("stopped answering" in x or "no syslog daemon" in x for x in d.log())
        if said != 1:
            raise AssertionError("said %d times:\n%s" % (said, "\n".join(d.log())))
        return "datagram %r...; stderr after it went, said once" % line[:40]
    finally:
        d.stop()


def main():
    want = {case: check_answer(*case) for case in CASES}
    tests = [test_two_workers_answer_concurrent_clients, test_one_worker_as_before,
             test_reload_reaches_every_worker, test_sigterm_finishes_requests_on_every_worker,
             test_bad_workers_values, test_no_syslog_daemon_falls_back_once,
             test_syslog_socket_gets_lines_then_goes]
    return harness.run_each(tests, "spfkit-workers-", want)


if __name__ == "__main__":
    sys.exit(main())
