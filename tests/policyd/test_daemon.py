#!/usr/bin/env python3
"""spfkit-policyd on loopback: answers, the instance cache, hostile clients,
SIGHUP reload, SIGTERM drain and spawn mode.

Usage: test_daemon.py /path/to/spfkit-policyd [/path/to/dnsd]

DNS comes from a zone file (--zone), so nothing leaves the machine; the
daemon listens on 127.0.0.1 port 0 (it reports the port it got) and on a
UNIX socket in a private temporary directory, removed at the end.
"""
import contextlib
import os
import resource
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

BIN = sys.argv[1] if len(sys.argv) > 1 else "spfkit-policyd"
DNSD = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None

ZONE = """$TTL 300
example.com.      TXT "v=spf1 ip4:192.0.2.0/24 -all"
mx.example.com.   TXT "v=spf1 a -all"
mx.example.com.   A 192.0.2.10
exp.example.      TXT "v=spf1 -all exp=why.exp.example"
why.exp.example.  TXT "%{i} is not one of %{d}'s hosts"
soft.example.     TXT "v=spf1 ~all"
nomail.example.   TXT "v=spf1 -all "
trusted.example.  TXT "v=spf1 ip4:198.51.100.0/28 -all"
relay.example.    A   198.51.100.20
9.100.51.198.in-addr.arpa.  PTR mx1.fwd.example.
10.100.51.198.in-addr.arpa. PTR mx2.fwd.example.
11.100.51.198.in-addr.arpa. PTR mx1.fwdexample.org.
mx1.fwd.example.  A   198.51.100.9
xn--mnchen-3ya.example. TXT "v=spf1 ip4:192.0.2.0/24 -all"
perm.example.     TXT "v=spf1 ip4:192.0.2.0/24 frobnicate:x -all"
"""


def request(helo="mx.example.com", sender="alice@example.com", ip="192.0.2.10",
            instance="", **extra):
    attrs = [("request", "smtpd_access_policy"), ("protocol_state", "RCPT"),
             ("protocol_name", "ESMTP"), ("helo_name", helo), ("queue_id", "Q1"),
             ("sender", sender), ("recipient", "bob@receiver.test"),
             ("client_address", ip), ("instance", instance)]
    attrs += list(extra.items())
    return "".join("%s=%s\n" % a for a in attrs).encode() + b"\n"


class Daemon:
    def __init__(self, conf="", args=(), dns=None, nofile=None):
        self.dir = tempfile.mkdtemp(prefix="spfkit-policyd-test-")
        self.zone = os.path.join(self.dir, "zone")
        self.conf = os.path.join(self.dir, "policyd-spf.conf")
        self.sock = os.path.join(self.dir, "policy.sock")
        self.pid_file = os.path.join(self.dir, "pid")
        with open(self.zone, "w") as f:
            f.write(ZONE)
        self.write_conf(conf)
        resolver = ["--dns", dns] if dns else ["--zone", self.zone, "--zone-timeout", "slow.example"]
        cmd = [BIN] + resolver + ["--log", "stderr",
               "--listen", "inet:127.0.0.1:0", "--listen", "unix:" + self.sock,
               "--request-timeout", "1", "--receiver", "mx.receiver.test",
               "--pid-file", self.pid_file, "-c", self.conf] + list(args)
        env = dict(os.environ)
        # under ASan, freed memory sits in quarantine: keep it small so RSS means something
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=4"
        # nofile: RLIMIT_NOFILE (soft and hard) of the daemon, for the fd-exhaustion tests
        limit = (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))) \
            if nofile else None
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                     env=env, preexec_fn=limit)
        self.lines = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read_log, daemon=True)
        self.reader.start()
        line = self.wait_log("listening on inet:")
        self.port = int(line.rsplit(":", 1)[1])
        self.wait_log("listening on unix:")

    def _read_log(self):
        for raw in self.proc.stderr:
            with self.lock:
                self.lines.append(raw.decode(errors="replace").rstrip("\n"))

    def write_conf(self, text):
        with open(self.conf, "w") as f:
            f.write(text)

    def wait_log(self, needle, timeout=5.0):
        end = time.time() + timeout
        while time.time() < end:
            with self.lock:
                for line in self.lines:
                    if needle in line:
                        return line
            if self.proc.poll() is not None and not self.reader.is_alive():
                break
            time.sleep(0.02)
        raise AssertionError("no log line with %r; log:\n%s" % (needle, "\n".join(self.lines)))

    def connect(self, unix=False):
        if unix:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(self.sock)
        else:
            s = socket.create_connection(("127.0.0.1", self.port))
        s.settimeout(5)
        return s

    def connect_from(self, src):
        """A TCP client from another loopback address (all of 127/8 is local)."""
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((src, 0))
        s.connect(("127.0.0.1", self.port))
        s.settimeout(5)
        return s

    def cpu_seconds(self):
        """utime + stime of the daemon (/proc/PID/stat fields 14 and 15)."""
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def log_count(self):
        with self.lock:
            return len(self.lines)

    def rss_kb(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        if self.reader is None:
            return self.proc.returncode
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("daemon did not stop on SIGTERM")
        self.reader.join(2)
        self.reader = None
        shutil.rmtree(self.dir, ignore_errors=True)
        return self.proc.returncode


def read_replies(s, n):
    """n replies, each "action=...\n\n" (they may arrive in one segment)."""
    data = b""
    while data.count(b"\n\n") < n:
        chunk = s.recv(4096)
        if not chunk:
            raise AssertionError("connection closed; got %r" % data)
        data += chunk
    parts = data.decode().split("\n\n")
    return [p + "\n\n" for p in parts[:n]]


def read_reply(s):
    return read_replies(s, 1)[0]


def ask(s, data):
    s.sendall(data)
    return read_reply(s)


def expect(got, want):
    if want not in got:
        raise AssertionError("got %r, want it to contain %r" % (got, want))


def expect_closed_without_reply(s, timeout=5.0):
    s.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except ConnectionResetError:
        pass
    if data:
        raise AssertionError("got a reply %r, want a silent disconnect" % data)


# ---- the tests; each gets a running daemon -------------------------------

def test_pass_gets_received_spf(d):
    with d.connect() as s:
        r = ask(s, request())
    expect(r, "action=prepend Received-SPF: pass")
    expect(r, "identity=mailfrom")
    assert r.count("\n") == 2, r


# RFC 8616 (issue 30). Postfix's request has no SMTPUTF8 attribute (Postfix 3.12's
# smtpd_check.c sends none): a UTF-8 sender is what an SMTPUTF8 MAIL FROM gives.

def test_utf8_sender_checked_as_a_labels_header_in_utf8(d):
    with d.connect() as s:
        r = ask(s, request(sender="user@münchen.example"))
    expect(r, "action=prepend Received-SPF: pass (mx.receiver.test: domain of "
              "user@münchen.example designates 192.0.2.10 as permitted sender) ")
    expect(r, 'envelope-from="user@münchen.example"; helo=mx.example.com;')
    assert "xn--" not in r and "?" not in r, r


def test_utf8_sender_fail_rejected(d):
    with d.connect() as s:
        r = ask(s, request(sender="user@münchen.example", helo="h.unknown.example",
                           ip="198.51.100.7"))
    expect(r, "action=550 5.7.23 ")
    # {url} percent-encodes the address as sent
    expect(r, "s=mfrom;id=user@m%C3%BCnchen.example;ip=198.51.100.7")


def test_utf8_sender_in_ar_form(d):
    # Authentication-Results is read by programs: ASCII, A-labels, SMTPUTF8 or not
    reload(d, "Header_Type = AR\nAuthserv_Id = mx.receiver.test\n")
    with d.connect() as s:
        r = ask(s, request(sender="user@münchen.example"))
    assert r == ("action=prepend Authentication-Results: mx.receiver.test; spf=pass "
                 "smtp.mailfrom=xn--mnchen-3ya.example\n\n"), r


def test_ascii_sender_with_u_label_helo_gets_a_labels(d):
    with d.connect() as s:
        r = ask(s, request(helo="mx.münchen.example"))
    expect(r, "action=prepend Received-SPF: pass ")
    expect(r, "helo=mx.xn--mnchen-3ya.example;")
    assert r.isascii(), r


def test_unix_socket_answers(d):
    with d.connect(unix=True) as s:
        expect(ask(s, request()), "action=prepend Received-SPF: pass")


def test_fail_rejected_with_explanation(d):
    with d.connect() as s:
        r = ask(s, request(sender="bob@exp.example"))
    expect(r, "action=550 5.7.23 Message rejected due to: 192.0.2.10 is not one of "
              "exp.example's hosts.")


def test_forged_helo_rejected_first(d):
    with d.connect() as s:
        r = ask(s, request(helo="mx.example.com", ip="198.51.100.7"))
    expect(r, "action=550 5.7.23 ")
    expect(r, "s=helo;id=mx.example.com")


def test_null_sender_judged_by_helo(d):
    with d.connect() as s:
        r = ask(s, request(sender=""))
    expect(r, "action=prepend Received-SPF: pass")
    expect(r, "identity=helo")


def test_one_header_per_message(d):
    with d.connect() as s:
        first = ask(s, request(instance="aa.1"))
        second = ask(s, request(instance="aa.1"))
    expect(first, "action=prepend Received-SPF")
    assert second == "action=dunno\n\n", second


def test_reject_repeated_for_later_recipients(d):
    with d.connect() as s:
        first = ask(s, request(sender="bob@exp.example", instance="bb.1"))
        second = ask(s, request(sender="bob@exp.example", instance="bb.1"))
    assert first == second, (first, second)


def test_pipelined_requests_answered_in_order(d):
    with d.connect() as s:
        s.sendall(request() + request(sender="bob@exp.example"))
        one, two = read_replies(s, 2)
    expect(one, "prepend Received-SPF: pass")
    expect(two, "550 5.7.23")


def test_byte_by_byte_request(d):
    with d.connect() as s:
        for b in request():
            s.sendall(bytes([b]))
        expect(read_reply(s), "prepend Received-SPF: pass")


def hostile(d, data, log_needle):
    with d.connect() as good:
        with d.connect() as bad:
            bad.sendall(data)
            expect_closed_without_reply(bad)
        d.wait_log(log_needle)
        expect(ask(good, request()), "Received-SPF: pass")


def test_overlong_line_disconnected(d):
    hostile(d, b"request=smtpd_access_policy\nhelo_name=" + b"a" * 17000, "line too long")


def test_long_sender_checked(d):
    """A 5 KB local part (Exim takes MAIL FROM lines up to 16 KB) is checked
    like any other: a forgery is rejected, a genuine sender passes."""
    local = "x" * 5000
    with d.connect() as s:
        expect(ask(s, request(sender=local + "@exp.example")), "action=550 5.7.23 ")
        r = ask(s, request(sender=local + "@example.com"))
    expect(r, "action=prepend Received-SPF: pass")


def test_too_many_attributes_disconnected(d):
    data = b"".join(b"a%d=1\n" % i for i in range(200)) + b"\n"
    hostile(d, data, "too many attributes")


def test_binary_junk_disconnected(d):
    hostile(d, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(64),
            "protocol error")


def test_nul_byte_disconnected_with_escaped_log(d):
    hostile(d, b"request=smtpd_access_policy\nsender=a\x00b\n\n", "NUL byte")
    d.wait_log('\\x00')


def test_half_sent_request_dropped(d):
    with d.connect() as good:
        with d.connect() as bad:
            bad.sendall(b"request=smtpd_access_policy\nsender=alice@exa")
            t0 = time.time()
            expect_closed_without_reply(bad, timeout=5)
            assert time.time() - t0 < 4, "not dropped after --request-timeout"
        d.wait_log("request not finished")
        expect(ask(good, request()), "Received-SPF: pass")


def test_request_spanning_reads_answered(d):
    """A valid request of about 30 kB: more than one read of the daemon's takes it in."""
    big = dict(("x_pad_%d" % i, "v" * 3500) for i in range(8))
    data = request(**big)
    assert 16384 < len(data) < 32768, len(data)
    with d.connect() as s:
        s.sendall(data[:100])
        time.sleep(0.1)
        expect(ask(s, data[100:]), "prepend Received-SPF: pass")
        expect(ask(s, request()), "prepend Received-SPF: pass")


def test_request_too_long_disconnected(d):
    data = b"".join(b"a%d=%s\n" % (i, b"v" * 4000) for i in range(9)) + b"\n"
    hostile(d, data, "request too long")


def test_refusal_judges_what_one_read_brought(d):
    """The daemon reads 4096 bytes at a time (as libevent's buffer events did): a
    bad byte at the end of the first read is refused with the line as far as
    that read went."""
    data = b"a=" + b"v" * 4088 + b"\n" + b"b=xy\x01" + b"z" * 2000 + b"\n\n"
    assert data.index(b"\x01") == 4095
    with d.connect(unix=True) as s:
        s.sendall(data)
        expect_closed_without_reply(s)
    d.wait_log('control byte at line 2, byte 4095: "b=xy\\x01"; disconnecting without reply')


def test_pipelined_burst_past_the_input_cap_answered_in_order(d):
    """More than the daemon reads ahead (two requests' worth) sent at once while
    the first waits on DNS: reading stops and resumes, every request is answered
    in order."""
    slow = request(helo="slow.example", sender="x@slow.example")
    reqs = [request(sender=("alice@example.com" if i % 2 else "bob@exp.example"))
            for i in range(400)]
    data = slow + b"".join(reqs)
    assert len(data) > 2 * 32768, len(data)
    reload(d, "Lookup_Time = 1\n")
    with d.connect() as s:
        s.settimeout(60)
        sender = threading.Thread(target=s.sendall, args=(data,))
        sender.start()
        replies = read_replies(s, 401)
        sender.join()
    for i, r in enumerate(replies[1:]):
        expect(r, "Received-SPF: pass" if i % 2 else "550 5.7.23")


def read_to_eof(s, timeout=5.0):
    """Everything the daemon sends until it closes (b"" if it closes at once)."""
    s.settimeout(timeout)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return data
        data += chunk


def half_close_one(d, unix):
    """Exim's ${readsocket}: the request, shutdown(SHUT_WR), then read to EOF."""
    with d.connect(unix=unix) as s:
        s.sendall(request())
        s.shutdown(socket.SHUT_WR)
        data = read_to_eof(s).decode()
    assert data.startswith("action=prepend Received-SPF: pass"), data
    assert data.endswith("\n\n") and data.count("action=") == 1, data


def test_half_close_answered_tcp(d):
    half_close_one(d, unix=False)


def test_half_close_answered_unix(d):
    half_close_one(d, unix=True)


def test_half_close_several_requests_all_answered(d):
    for unix in (False, True):
        with d.connect(unix=unix) as s:
            s.sendall(request() + request(sender="bob@exp.example") + request(sender="x@soft.example"))
            s.shutdown(socket.SHUT_WR)
            data = read_to_eof(s).decode()
        parts = data.split("\n\n")
        assert len(parts) == 4 and parts[3] == "", data
        expect(parts[0], "action=prepend Received-SPF: pass")
        expect(parts[1], "action=550 5.7.23")
        expect(parts[2], "action=prepend Received-SPF: softfail")


def test_half_close_incomplete_request_gets_nothing(d):
    for unix in (False, True):
        with d.connect(unix=unix) as s:
            s.sendall(b"request=smtpd_access_policy\nsender=alice@exa")
            s.shutdown(socket.SHUT_WR)
            t0 = time.time()
            assert read_to_eof(s) == b"", "an answer to an incomplete request"
            # closed at EOF, not at --request-timeout (1 s)
            assert time.time() - t0 < 0.8, "closed after %.2f s" % (time.time() - t0)
    d.wait_log("connection ended inside a request")


def test_half_close_answers_before_an_incomplete_tail(d):
    with d.connect() as s:
        s.sendall(request() + request(sender="bob@exp.example") + b"request=smtpd_acc")
        s.shutdown(socket.SHUT_WR)
        data = read_to_eof(s).decode()
    assert data.count("action=") == 2 and data.endswith("\n\n"), data
    expect(data, "550 5.7.23")
    d.wait_log('connection ended inside a request (17 bytes: "request=smtpd_acc")')


def test_half_close_while_dns_is_slow(d):
    """The answer is still in the works (a DNS timeout) when the EOF comes."""
    reload(d, "TempError_Defer = True\nTempError_Action = 451\n")
    with d.connect() as s:
        s.sendall(request(helo="slow.example", sender="x@slow.example"))
        s.shutdown(socket.SHUT_WR)
        data = read_to_eof(s, timeout=60).decode()
    assert data.startswith("action=451 4.7.24 ") and data.count("action=") == 1, data


def test_client_that_never_reads_stays_bounded(d):
    before = d.rss_kb()
    bad = d.connect()
    bad.setblocking(False)
    one = request(instance="")
    sent = 0
    deadline = time.time() + 5
    while sent < 8 * 1024 * 1024 and time.time() < deadline:
        try:
            sent += bad.send(one * 64)
        except BlockingIOError:
            time.sleep(0.05)
            try:
                sent += bad.send(one)
            except BlockingIOError:
                break
    with d.connect() as good:
        t0 = time.time()
        expect(ask(good, request()), "Received-SPF: pass")
        assert time.time() - t0 < 2, "other clients stalled"
    grown = d.rss_kb() - before
    bad.close()
    assert grown < 32 * 1024, "memory grew by %d kB for one non-reading client" % grown


def test_dns_timeout_defers_451(d):
    d.write_conf("TempError_Defer = True\nTempError_Action = 451\n")
    d.proc.send_signal(signal.SIGHUP)
    d.wait_log("reloaded")
    with d.connect() as s:
        r = ask(s, request(helo="slow.example", sender="x@slow.example"))
    expect(r, "action=451 4.7.24 Message deferred due to:")


def test_sighup_reload_keeps_connections(d):
    with d.connect() as s:
        expect(ask(s, request(sender="bob@exp.example")), "550 5.7.23")
        d.write_conf("Mail_From_reject = False\n")
        d.proc.send_signal(signal.SIGHUP)
        d.wait_log("reloaded")
        expect(ask(s, request(sender="bob@exp.example")), "action=prepend Received-SPF: fail")


def test_sighup_with_bad_config_keeps_old(d):
    d.write_conf("Mail_From_reject = fail\n")
    d.proc.send_signal(signal.SIGHUP)
    d.wait_log("keeping the running configuration")
    d.wait_log("must be spelt 'Fail'")
    with d.connect() as s:
        expect(ask(s, request(sender="bob@exp.example")), "550 5.7.23")


def test_log_line_per_decision(d):
    with d.connect() as s:
        ask(s, request(sender="bob@exp.example", instance="log.1"))
    line = d.wait_log("from=<bob@exp.example>")
    for part in ("Q1: ", "client=192.0.2.10", "helo=mx.example.com", "helo_result=pass",
                 "mailfrom_result=fail", 'action="550 5.7.23', "time="):
        expect(line, part)


def test_log_line_carries_the_reason_code(d):
    """permerror and temperror: the line names the reason code (issue 28), never only English."""
    with d.connect() as s:
        ask(s, request(sender="x@perm.example", instance="reason.1"))
        ask(s, request(helo="slow.example", sender="x@slow.example", instance="reason.2"))
        ask(s, request(sender="bob@exp.example", instance="reason.3"))
    expect(d.wait_log("from=<x@perm.example>"),
           "mailfrom_result=permerror reason=unknown-mechanism action=")
    expect(d.wait_log("from=<x@slow.example>"),
           "helo_result=temperror mailfrom_result=temperror reason=dns-timeout action=")
    line = d.wait_log("from=<bob@exp.example>")
    if "reason=" in line:
        raise AssertionError("a fail carries no reason code: %r" % line)


def reload(d, conf):
    d.write_conf(conf)
    d.proc.send_signal(signal.SIGHUP)
    d.wait_log("reloaded")


def test_no_mail_rejects_only_dash_all_records(d):
    """No_Mail: a fail is refused only where the record is "v=spf1 -all"
    (trailing spaces aside); any other failing record gets its header."""
    reload(d, "No_Mail = True\n")
    with d.connect() as s:
        expect(ask(s, request(sender="bob@nomail.example", instance="n1")), "action=550 5.7.23 ")
        expect(ask(s, request(sender="bob@exp.example", instance="n2")),
               "action=prepend Received-SPF: fail")


def test_domain_whitelist_skips_check(d):
    reload(d, "Domain_Whitelist = other.example,trusted.example\n")
    with d.connect() as s:
        r = ask(s, request(sender="bob@exp.example", ip="198.51.100.7", helo="h.unknown.test"))
        expect(r, "action=prepend X-Comment: SPF skipped for whitelisted relay domain - "
                  "client-ip=198.51.100.7")
        r = ask(s, request(sender="bob@exp.example", ip="198.51.100.70", helo="h.unknown.test"))
        expect(r, "action=550 5.7.23")


def test_helo_whitelist_needs_the_address(d):
    reload(d, "HELO_Whitelist = relay.example\n")
    with d.connect() as s:
        r = ask(s, request(sender="bob@exp.example", ip="198.51.100.20", helo="relay.example"))
        expect(r, "X-Comment: SPF skipped for whitelisted HELO domain")
        # the same name from another address is no relay of ours
        r = ask(s, request(sender="bob@exp.example", ip="198.51.100.21", helo="relay.example"))
        expect(r, "action=550 5.7.23")


def test_ptr_whitelist_is_forward_confirmed(d):
    reload(d, "Domain_Whitelist_PTR = fwd.example\n")
    with d.connect() as s:
        r = ask(s, request(sender="bob@exp.example", ip="198.51.100.9", helo="h.unknown.test"))
        expect(r, "X-Comment: SPF skipped for PTR whitelisted relay domain")
        # PTR under the domain but no A record back to the client
        r = ask(s, request(sender="bob@exp.example", ip="198.51.100.10", helo="h.unknown.test"))
        expect(r, "action=550 5.7.23")
        # "fwdexample.org" is not under "fwd.example" (policyd-spf's endswith() says it is)
        r = ask(s, request(sender="bob@exp.example", ip="198.51.100.11", helo="h.unknown.test"))
        expect(r, "action=550 5.7.23")


def test_many_clients_with_hostile_ones_mixed_in(d):
    good, bad = [], []
    junk = [b"\x00" * 10, b"a" * 6000, b"x=1\n" * 200 + b"\n", b"no equal sign\n\n"]
    for i in range(200):
        good.append(d.connect(unix=(i % 2 == 0)))
        if i % 4 == 0:
            b = d.connect()
            b.sendall(junk[(i // 4) % len(junk)])
            bad.append(b)
    for i, s in enumerate(good):
        s.sendall(request(instance="mix.%d" % i) + request(sender="bob@exp.example"))
    for s in good:
        one, two = read_replies(s, 2)
        expect(one, "Received-SPF: pass")
        expect(two, "550 5.7.23")
        s.close()
    for b in bad:
        expect_closed_without_reply(b)
        b.close()


def test_sigterm_drains_and_exits(d):
    idle = d.connect()
    rc = d.stop()
    assert rc == 0, rc
    assert not os.path.exists(d.pid_file), "pid file left behind"
    idle.settimeout(2)
    assert idle.recv(10) == b""


def proc_ids(pid):
    ids = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("Uid:", "Gid:", "Groups:")):
                ids[line.split(":")[0]] = line.split()[1:]
    return ids


def privilege_drop():
    """--user: the daemon serves as that user, with no supplementary groups."""
    if os.geteuid() != 0:
        print("skip privilege_drop: not root")
        return
    d = Daemon(args=("--user", "nobody"))
    try:
        deadline = time.time() + 5  # the drop comes right after the sockets
        ids = proc_ids(d.proc.pid)
        while ids["Uid"] != ["65534"] * 4 and time.time() < deadline:
            time.sleep(0.05)
            ids = proc_ids(d.proc.pid)
        assert ids["Uid"] == ["65534"] * 4, ids
        assert ids.get("Groups", []) == [], ids
        with d.connect() as s:
            expect(ask(s, request()), "Received-SPF: pass")
        with d.connect(unix=True) as s:
            expect(ask(s, request()), "Received-SPF: pass")
    finally:
        assert d.stop() == 0


class SlowDns:
    """tests/dnsd serving ZONE, with answers for late.example held back 1.5 s
    (or what extra and delay say)."""

    def __init__(self, extra='late.example. TXT "v=spf1 ip4:192.0.2.0/24 -all"\n',
                 delay="late.example:1500"):
        self.dir = tempfile.mkdtemp(prefix="spfkit-policyd-dnsd-")
        self.proc, port = harness.start_dnsd(DNSD, self.dir, ZONE + extra, ["--delay", delay],
                                             stderr=subprocess.PIPE, timeout=5)
        self.server = "127.0.0.1:%d" % port

    def stop(self):
        """Stop it; its counters line ("queries udp=N ..."), as it printed it."""
        self.proc.terminate()
        err = self.proc.communicate(timeout=5)[1].decode(errors="replace")
        shutil.rmtree(self.dir, ignore_errors=True)
        return err


@contextlib.contextmanager
def daemon_behind_slow_dns(conf="", args=(), **slow):
    """A daemon with conf and args behind SlowDns(**slow); it must exit cleanly."""
    dns = SlowDns(**slow)
    d = Daemon(conf=conf, dns=dns.server, args=args)
    try:
        yield d
    finally:
        rc = d.stop()
        dns.stop()
    assert rc == 0, rc


def lookahead_starts_at_the_first_miss():
    """Behind the DNS cache an evaluation starts without lookahead and
    switches it on at its first miss: with the answer for the first of four
    includes held back 3 s, the other three are asked at once all the same
    (strict evaluation would ask one, then wait)."""
    if DNSD is None:
        print("skip lookahead_starts_at_the_first_miss: no dnsd given")
        return
    extra = ('wide.example. TXT "v=spf1 include:w1.example include:w2.example '
             'include:w3.example include:w4.example -all"\n'
             'w1.example. TXT "v=spf1 ip4:198.51.100.1 -all"\n'
             'w2.example. TXT "v=spf1 ip4:198.51.100.2 -all"\n'
             'w3.example. TXT "v=spf1 ip4:198.51.100.3 -all"\n'
             'w4.example. TXT "v=spf1 ip4:192.0.2.0/24 -all"\n')
    dns = SlowDns(extra, "w1.example:3000")
    d = Daemon(dns=dns.server)
    counters = ""
    try:
        s = d.connect()
        s.sendall(request(sender="x@wide.example"))
        time.sleep(1.0)  # every answer but w1's is long in
        counters = dns.stop()
        s.close()
    finally:
        rc = d.stop()
        if dns.proc.poll() is None:
            dns.stop()
    # HELO mx.example.com: TXT and A; MAIL FROM: wide.example, then w1..w4
    asked = int(counters.split("queries udp=")[1].split()[0])
    assert asked == 7, counters
    assert rc == 0, rc


def slow_dns_stalls_no_one():
    """One request waits 1.5 s for DNS; others on other connections do not."""
    if DNSD is None:
        print("skip slow_dns_stalls_no_one: no dnsd given")
        return
    with daemon_behind_slow_dns() as d:
        slow = d.connect()
        slow.sendall(request(sender="x@late.example", helo="h.unknown.test"))
        time.sleep(0.1)
        t0 = time.time()
        for _ in range(20):
            with d.connect() as s:
                expect(ask(s, request()), "Received-SPF: pass")
        assert time.time() - t0 < 1.0, "fast clients waited %.2f s" % (time.time() - t0)
        expect(read_reply(slow), "Received-SPF: pass")
        slow.close()


def sigterm_finishes_requests_in_flight():
    """SIGTERM while a request waits for DNS: its answer still comes, then the exit."""
    if DNSD is None:
        print("skip sigterm_finishes_requests_in_flight: no dnsd given")
        return
    dns = SlowDns()
    d = Daemon(dns=dns.server)
    try:
        slow = d.connect()
        slow.sendall(request(sender="x@late.example", helo="h.unknown.test"))
        time.sleep(0.2)
        d.proc.send_signal(signal.SIGTERM)
        d.wait_log("finishing the requests in flight")
        # no new clients now
        try:
            late = d.connect()
            late.settimeout(2)
            assert late.recv(10) == b"", "a new client was served during the drain"
        except OSError:
            pass
        expect(read_reply(slow), "Received-SPF: pass")
        d.proc.wait(10)
        assert d.proc.returncode == 0, d.proc.returncode
    finally:
        d.stop()
        dns.stop()


def half_close_by_a_client_that_reads_late():
    """Hundreds of requests and the EOF reach the daemon while its answers,
    which wait for DNS (dnsd, asynchronous), back up behind a client that
    reads only at the end through a small receive buffer: every complete
    request is still answered, none is taken for one cut short."""
    if DNSD is None:
        print("skip half_close_by_a_client_that_reads_late: no dnsd given")
        return
    with daemon_behind_slow_dns() as d:
        n = 500
        small = (b"request=smtpd_access_policy\nclient_address=192.0.2.10\n"
                 b"helo_name=mx.example.com\nsender=bob@exp.example\n\n")
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
        s.connect(("127.0.0.1", d.port))
        with s:
            s.sendall(small * n)
            s.shutdown(socket.SHUT_WR)
            time.sleep(2)  # past --request-timeout: answers backing up are no slow request
            data = read_to_eof(s, timeout=20).decode()
        got = data.count("action=550 5.7.23")
        assert got == n, "%d answers of %d; log:\n%s" % (got, n, "\n".join(d.lines[-5:]))
        with d.lock:
            bad = [l for l in d.lines if "inside a request" in l or "not finished" in l]
        assert not bad, bad


TESTS = [v for k, v in sorted(globals().items()) if k.startswith("test_")]


def idle_timeout_spares_requests_in_flight():
    """--idle-timeout counts between requests only: a request whose DNS takes
    longer is answered, then the idle connection is closed without a word."""
    if DNSD is None:
        print("skip idle_timeout_spares_requests_in_flight: no dnsd given")
        return
    with daemon_behind_slow_dns(args=["--idle-timeout", "1"]) as d:
        with d.connect() as idle:
            with d.connect() as s:
                s.settimeout(30)
                t0 = time.time()
                r = ask(s, request(sender="x@late.example", helo="h.unknown.test"))
                assert time.time() - t0 > 1.2, "answered before the slow DNS answer"
                expect(r, "Received-SPF: pass")
                t0 = time.time()
                expect_closed_without_reply(s, timeout=10)
                assert time.time() - t0 < 5, "idle connection not closed"
            expect_closed_without_reply(idle, timeout=10)


def idle_time_runs_from_the_answer():
    """The idle time starts when the answer goes, not at the request's read
    (where libevent last restarted the timeout): with --idle-timeout 2 and
    an answer 1.5 s late, the timeout first fires while the connection has
    been idle 0.5 s; it must wait out the rest, so a request 1 s after the
    answer is still served; 2 s after that one, the connection is closed."""
    if DNSD is None:
        print("skip idle_time_runs_from_the_answer: no dnsd given")
        return
    with daemon_behind_slow_dns(args=["--idle-timeout", "2"]) as d, d.connect() as s:
        s.settimeout(30)
        expect(ask(s, request(sender="x@late.example", helo="h.unknown.test")),
               "Received-SPF: pass")
        time.sleep(1.0)
        expect(ask(s, request()), "action=")
        t0 = time.time()
        expect_closed_without_reply(s, timeout=10)
        waited = time.time() - t0
        assert 1.5 < waited < 5, "closed %.2f s after the last answer, not 2" % waited


def timed_answer(conf, req, args=(), **slow):
    """req asked of a daemon with conf and args behind SlowDns(**slow): (reply, seconds)."""
    with daemon_behind_slow_dns(conf, args, **slow) as d, d.connect() as s:
        s.settimeout(30)
        t0 = time.time()
        r = ask(s, req)
        took = time.time() - t0
    return r, took


def lookup_time_ends_a_silent_dns():
    """Lookup_Time (1 s) ends a check whose DNS answers 10 s late, long before
    the resolver would give up: a temperror that names Lookup_Time."""
    if DNSD is None:
        print("skip lookup_time_ends_a_silent_dns: no dnsd given")
        return
    r, took = timed_answer("Lookup_Time = 1\n",
                           request(sender="x@late.example", helo="h.unknown.test"),
                           delay="late.example:10000")
    expect(r, "Received-SPF: temperror")
    expect(r, "Lookup_Time")
    assert 0.8 < took < 3, "answered after %.2f s, not 1" % took


def whitelist_lookup_time_ends_a_silent_dns():
    """Whitelist_Lookup_Time (1 s) ends a HELO_Whitelist lookup whose answer
    comes 10 s late: no match, and the checks go on."""
    if DNSD is None:
        print("skip whitelist_lookup_time_ends_a_silent_dns: no dnsd given")
        return
    r, took = timed_answer("HELO_Whitelist = h.late.example\nWhitelist_Lookup_Time = 1\n",
                           request(helo="h.late.example"),
                           extra="", delay="h.late.example/A:10000")
    expect(r, "Received-SPF: pass")
    assert 0.8 < took < 2.5, "answered after %.2f s, not 1" % took


def time_limit_ends_the_whole_check():
    """--time-limit (1 s) answers a request whose phases alone could take
    far longer: Lookup_Time 30 (twice that is over the limit), and a
    HELO_Whitelist whose 8 s Whitelist_Lookup_Time comes before the checks.
    Both with DNS answering 10 s late: a temperror within about 1 s."""
    if DNSD is None:
        print("skip time_limit_ends_the_whole_check: no dnsd given")
        return
    r, took = timed_answer("Lookup_Time = 30\n",
                           request(sender="x@late.example", helo="h.unknown.test"),
                           args=["--time-limit", "1"], delay="late.example:10000")
    expect(r, "Received-SPF: temperror")
    assert 0.8 < took < 5, "answered after %.2f s, not 1" % took
    r, took = timed_answer("HELO_Whitelist = h.late.example\nWhitelist_Lookup_Time = 8\n",
                           request(helo="h.late.example"), args=["--time-limit", "1"],
                           extra="", delay="h.late.example:10000")
    expect(r, "Received-SPF: temperror")
    assert 0.8 < took < 5, "answered after %.2f s, not 1" % took


def spawn_mode():
    """policyd-spf's way: one client on stdin/stdout; ends at EOF."""
    tmp = tempfile.mkdtemp(prefix="spfkit-policyd-spawn-")
    try:
        zone = os.path.join(tmp, "zone")
        conf = os.path.join(tmp, "policyd-spf.conf")
        with open(zone, "w") as f:
            f.write(ZONE)
        with open(conf, "w") as f:
            f.write("debugLevel = 1\n")
        p = subprocess.run([BIN, "--zone", zone, "--log", "stderr", conf],
                           input=request() + request(sender="bob@exp.example"),
                           capture_output=True, timeout=10)
        out = p.stdout.decode()
        assert p.returncode == 0, p.stderr
        expect(out, "action=prepend Received-SPF: pass")
        expect(out, "action=550 5.7.23")
        assert out.count("action=") == 2, out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_config():
    tmp = tempfile.mkdtemp(prefix="spfkit-policyd-check-")
    try:
        conf = os.path.join(tmp, "bad.conf")
        with open(conf, "w") as f:
            f.write("# comment\nHELO_reject = fail\nWhitelist = 10.0.0.0/8, 192.0.2.0/24\nFoo = 1\n")
        p = subprocess.run([BIN, "--check-config", "-c", conf], capture_output=True, timeout=10)
        err = p.stderr.decode()
        assert p.returncode == 1, (p.returncode, err)
        expect(err, conf + ":2: error: HELO_reject: 'fail' must be spelt 'Fail'")
        expect(err, conf + ":3: warning: Whitelist: space inside the list")
        expect(err, conf + ":4: warning: unknown option 'Foo'")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    passed = failed = 0
    for t in TESTS + [spawn_mode, check_config, privilege_drop, slow_dns_stalls_no_one,
                      lookahead_starts_at_the_first_miss,
                      idle_timeout_spares_requests_in_flight, idle_time_runs_from_the_answer,
                      lookup_time_ends_a_silent_dns, whitelist_lookup_time_ends_a_silent_dns,
                      time_limit_ends_the_whole_check,
                      sigterm_finishes_requests_in_flight, half_close_by_a_client_that_reads_late]:
        d = None
        try:
            if t in TESTS:
                d = Daemon()
                t(d)
                # a clean exit: no leak report, no crash at shutdown
                rc = d.stop()
                assert rc == 0, "daemon exit status %r" % rc
            else:
                t()
            passed += 1
            print("ok   %s" % t.__name__)
        except Exception as e:  # report every failure, keep going
            failed += 1
            print("FAIL %s: %s" % (t.__name__, e))
            if d is not None:
                print("  log:\n    " + "\n    ".join(d.lines[-20:]))
        finally:
            if d is not None:
                d.stop()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
