#!/usr/bin/env python3
"""spfkit-milter driven over the milter protocol, no MTA: decisions at
MAIL FROM with their replies, headers at end of message, forged
Authentication-Results removed, skips, several messages per connection,
aborts, disconnects, hostile input, slow DNS.

Usage: test_milter.py /path/to/spfkit-milter [/path/to/dnsd]

DNS comes from a zone file (--zone), or from tests/dnsd on loopback for
the slow-DNS cases; the milter listens on a UNIX socket in a private
temporary directory, removed at the end. Every daemon must exit 0 on
SIGTERM (under ASan that means no leak and no error at shutdown).
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import milterclient as mc  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mta"))
import harness  # noqa: E402  (tests/mta/harness.py)

BIN = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "spfkit-milter"
DNSD = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None

ZONE = """$TTL 300
never.example.    TXT "v=spf1 -all"
example.com.      TXT "v=spf1 ip4:192.0.2.0/24 ip6:2001:db8:5::/48 -all"
mx.example.com.   TXT "v=spf1 a -all"
mx.example.com.   A 192.0.2.10
exp.example.      TXT "v=spf1 -all exp=why.exp.example"
why.exp.example.  TXT "%{i} is not one of %{d}'s hosts, 100%% sure"
perm.example.     TXT "v=spf1 include:norecord.example -all"
temp.example.     TXT "v=spf1 include:tempfail.example -all"
late.example.     TXT "v=spf1 ip4:192.0.2.0/24 -all"
xn--mnchen-3ya.example. TXT "v=spf1 ip4:192.0.2.0/24 -all"
"""

ID = "mx.receiver.test"
CONF = """Authserv_Id = mx.receiver.test
TempError_Defer = True
PermError_reject = True
InternalHosts = 198.51.100.0/24,2001:db8:1::/48
"""


class Daemon:
    def __init__(self, conf=CONF, dns=None, args=(), preexec_fn=None):
        self.dir = tempfile.mkdtemp(prefix="spfkit-milter-test-")
        self.zone = os.path.join(self.dir, "zone")
        self.conf = os.path.join(self.dir, "milter.conf")
        self.sock = os.path.join(self.dir, "milter.sock")
        self.pid_file = os.path.join(self.dir, "pid")
        with open(self.zone, "w") as f:
            f.write(ZONE)
        with open(self.conf, "w") as f:
            f.write(conf)
        resolver = ["--dns", dns, "--dns-timeout", "5000"] if dns else \
            ["--zone", self.zone, "--zone-timeout", "tempfail.example"]
        cmd = [BIN, "-f", "--log", "stderr", "-s", "unix:" + self.sock,
               "--receiver", ID, "-p", self.pid_file] + resolver + list(args) + [self.conf]
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                     preexec_fn=preexec_fn)
        self.lines = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read_log, daemon=True)
        self.reader.start()
        self.wait_log("ready on unix:")
        self.rc = None

    def _read_log(self):
        for raw in self.proc.stderr:
            with self.lock:
                self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def wait_log(self, text, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                for line in self.lines:
                    if text in line:
                        return line
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise AssertionError("no log line with %r; log: %r" % (text, self.lines[-10:]))

    def client(self, **kw):
        m = mc.Milter(self.sock, **kw)
        m.negotiate()
        return m

    def stop(self):
        if self.rc is None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.rc = self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.rc = self.proc.wait(5)
            self.reader.join(5)
            shutil.rmtree(self.dir, ignore_errors=True)
        return self.rc


def expect(got, want):
    assert got == want, "got %r, want %r" % (got, want)


def session(d, ip, helo, sender, mail_macros=None, **kw):
    """Connect, HELO and MAIL FROM; the client and MAIL's reply."""
    m = d.client(**kw)
    expect(m.connect(ip), ("continue", b""))
    expect(m.helo(helo), ("continue", b""))
    return m, m.mail(sender, mail_macros)


def reply_text(r):
    final, data = r
    expect(final, "reply")
    return data.rstrip(b"\0").decode("ascii")


def finish(m, headers=(), macros=None):
    """Headers then end of message: the final reply and the edits."""
    for name, value in headers:
        expect(m.header(name, value) in (None, ("continue", b"")), True)
    m.eoh()
    final, data, edits = m.eom(macros or {"i": "QID"})
    expect((final, data), ("continue", b""))
    return edits


def ar(value):
    return ("i", 0, "Authentication-Results", value)


# ---- decisions and replies ------------------------------------------------------

def t_pass(d):
    """Pass: A-R with our id inserted at index 0 at end of message."""
    m, r = session(d, "192.0.2.10", "mx.example.com", "<alice@example.com>")
    expect(r, ("continue", b""))
    expect(finish(m, [("Subject", "hi")]), [ar(ID + "; spf=pass smtp.mailfrom=example.com")])
    m.quit()


def t_pass_ipv6(d):
    m, r = session(d, "2001:db8:5::25", "h.unknown.test", "<alice@example.com>")
    expect(r, ("continue", b""))
    expect(finish(m), [ar(ID + "; spf=pass smtp.mailfrom=example.com")])
    m.quit()


def t_fail(d):
    """Fail: 550 5.7.23 with the domain's explanation, '%' doubled for smfi_setreply."""
    m, r = session(d, "192.0.2.99", "h.unknown.test", "<bob@exp.example>")
    text = reply_text(r)
    assert text.startswith("550 5.7.23 "), text
    assert "192.0.2.99 is not one of exp.example's hosts, 100%% sure" in text, text
    m.quit()


def t_long_sender(d):
    """A 5 KB local part is checked like any other (issue 33: it was accepted
    unchecked): a forgery is refused, a genuine sender passes."""
    local = "x" * 5000
    m, r = session(d, "192.0.2.99", "h.unknown.test", "<%s@exp.example>" % local)
    text = reply_text(r)
    assert text.startswith("550 5.7.23 "), text
    m.quit()
    m, r = session(d, "192.0.2.10", "h.unknown.test", "<%s@example.com>" % local)
    expect(r, ("continue", b""))
    expect(finish(m), [ar(ID + "; spf=pass smtp.mailfrom=example.com")])
    m.quit()


def t_temperror(d):
    """TempError_Defer: 451 4.7.24 (RFC 7208 §8.6, RFC 7372), never 450."""
    m, r = session(d, "192.0.2.10", "h.unknown.test", "<x@temp.example>")
    text = reply_text(r)
    assert text.startswith("451 4.7.24 "), text
    m.quit()


def t_permerror(d):
    """PermError_reject: 550 5.7.24."""
    m, r = session(d, "192.0.2.10", "h.unknown.test", "<x@perm.example>")
    text = reply_text(r)
    assert text.startswith("550 5.7.24 "), text
    m.quit()


def t_log_reason_code(d):
    """permerror and temperror: the decision's log line names the reason code (issue 28)."""
    for sender in ("<y@perm.example>", "<y@temp.example>", "<y@example.com>"):
        m, r = session(d, "192.0.2.10", "h.unknown.test", sender)
        m.quit()
    for sender, want in (("y@perm.example", "identity=mailfrom reason=include-none action="),
                         ("y@temp.example", "identity=mailfrom reason=dns-timeout action=")):
        line = d.wait_log("from=<%s>" % sender)
        assert want in line, (want, line)
    line = d.wait_log("from=<y@example.com>")
    assert "reason=" not in line, line


def t_null_sender_helo_pass(d):
    """MAIL FROM:<> is judged by its HELO (RFC 7208 §2.4), labelled smtp.helo."""
    m, r = session(d, "192.0.2.10", "mx.example.com", "<>")
    expect(r, ("continue", b""))
    expect(finish(m), [ar(ID + "; spf=pass smtp.helo=mx.example.com")])
    m.quit()


def t_null_sender_helo_fail(d):
    m, r = session(d, "192.0.2.99", "mx.example.com", "<>")
    text = reply_text(r)
    assert text.startswith("550 5.7.23 ") and "s=helo" in text, text
    m.quit()


def t_helo_checked_first(d):
    """The HELO argument (not a PTR name) is checked first; its fail ends it."""
    m, r = session(d, "192.0.2.99", "mx.example.com", "<alice@example.com>")
    text = reply_text(r)
    assert text.startswith("550 5.7.23 ") and "s=helo;id=mx.example.com" in text, text
    m.quit()


# ---- forged results, skips -------------------------------------------------------

def t_forged_ar_removed(d):
    """Every A-R with our authserv-id (token or quoted, any case, after CFWS) is deleted,
    highest index first, before ours goes on top; other ids stay."""
    m, r = session(d, "192.0.2.10", "mx.example.com", "<alice@example.com>")
    expect(r, ("continue", b""))
    edits = finish(m, [
        ("Authentication-Results", ID + "; spf=pass smtp.mailfrom=example.com"),  # 1: ours
        ("Authentication-Results", "other.example; spf=pass smtp.mailfrom=x"),     # 2
        ("X-Other", "y"),
        ("authentication-results", ' (c (nested)) "MX.Receiver.Test" 1; dkim=pass'),  # 3: ours
        ("Authentication-Results", ID + ".evil; spf=pass"),                        # 4
        ("AUTHENTICATION-RESULTS", "\r\n\t" + ID.upper() + ";spf=pass"),          # 5: ours
        ("Authentication-Results", '"' + ID + 'x"; spf=pass'),                     # 6
        ("Authentication-Results", '"mx.receiver.\\test"; spf=pass'),             # 7: ours
    ])
    expect(edits, [("m", 7, "Authentication-Results", ""),
                   ("m", 5, "Authentication-Results", ""),
                   ("m", 3, "Authentication-Results", ""),
                   ("m", 1, "Authentication-Results", ""),
                   ar(ID + "; spf=pass smtp.mailfrom=example.com")])
    d.wait_log("QID: deleted Authentication-Results #5")
    m.quit()


def t_internal_hosts(d):
    """InternalHosts (v4, v6, v4-mapped): accepted at connect, nothing checked."""
    for ip in ("198.51.100.7", "2001:db8:1::9", "::ffff:198.51.100.7"):
        m = d.client()
        expect(m.connect(ip), ("accept", b""))
        m.quit()


def t_no_address(d):
    """No client address (local submission, Postfix non_smtpd_milters): never refused."""
    m = d.client()
    expect(m.connect(None, hostname="localhost"), ("accept", b""))
    m.quit()


def t_authenticated_skipped(d):
    """{auth_authen} set: not checked, no header, nothing removed."""
    m, r = session(d, "192.0.2.99", "h.unknown.test", "<bob@exp.example>",
                   mail_macros={"{auth_authen}": "bob", "{auth_type}": "PLAIN"})
    expect(r, ("continue", b""))
    expect(finish(m, [("Authentication-Results", ID + "; spf=pass")]), [])
    m.quit()


def t_abort_then_more_messages(d):
    """Per-message state ends at abort and at end of message; the connection goes on."""
    m, r = session(d, "192.0.2.10", "mx.example.com", "<alice@example.com>")
    expect(r, ("continue", b""))
    m.header("Authentication-Results", ID + "; spf=pass")
    m.abort()
    expect(m.mail("<alice@example.com>"), ("continue", b""))
    expect(finish(m, [("Subject", "2")]), [ar(ID + "; spf=pass smtp.mailfrom=example.com")])
    text = reply_text(m.mail("<bob@exp.example>"))
    assert text.startswith("550 5.7.23 "), text
    m.abort()
    expect(m.mail("<>"), ("continue", b""))
    expect(finish(m), [ar(ID + "; spf=pass smtp.helo=mx.example.com")])
    m.quit()


def t_every_step_sent(d):
    """An MTA that cannot leave steps out (RCPT, DATA, EOH, body all sent): same answers."""
    m, r = session(d, "192.0.2.10", "mx.example.com", "<alice@example.com>",
                   offer_steps=mc.P_NR_HDR)
    expect(m.proto & (mc.P_NORCPT | mc.P_NODATA | mc.P_NOBODY | mc.P_NR_HDR), 0)
    expect(r, ("continue", b""))
    expect(m.rcpt("<bob@receiver.test>"), ("continue", b""))
    expect(m.data(), ("continue", b""))
    expect(m.header("Subject", "x"), ("continue", b""))
    expect(m.eoh(), ("continue", b""))
    expect(m.body(b"hello\r\n"), ("continue", b""))
    final, data, edits = m.eom({"i": "QID"})
    expect((final, edits), ("continue", [ar(ID + "; spf=pass smtp.mailfrom=example.com")]))
    m.quit()


# ---- hostile clients ----------------------------------------------------------------

def still_serves(d):
    m, r = session(d, "192.0.2.10", "mx.example.com", "<alice@example.com>")
    expect(r, ("continue", b""))
    expect(finish(m), [ar(ID + "; spf=pass smtp.mailfrom=example.com")])
    m.quit()


def printable_ascii(s):
    return all(0x20 <= ord(c) < 0x7f for c in s)


def t_hostile_values(d):
    """Huge macros (up to libmilter's 64 KB packets), NUL bytes, non-ASCII, CR LF and '%'
    in HELO and MAIL FROM."""
    big = "x" * 60000
    m = d.client()
    expect(m.connect("192.0.2.10", macros={"{daemon_name}": big[:30000], "j": big[:30000]}),
           ("continue", b""))
    expect(m.helo(b"mx.example.com\0evil.example"), ("continue", b""))
    expect(m.mail("<alice@example.com>", {"{auth_type}": big, "{mail_addr}": "\xff\x01%s%%n"}),
           ("continue", b""))
    expect(finish(m, [("Subject", big[:50000])]),
           [ar(ID + "; spf=pass smtp.mailfrom=example.com")])
    # non-ASCII sender: whatever the result, headers and replies stay ASCII
    r = m.mail("<j\u00fcrgen@ex\u00e4mple.com>")
    if r[0] == "reply":
        assert printable_ascii(reply_text(r))
    else:
        expect(r, ("continue", b""))
        for e in finish(m):
            assert printable_ascii(e[3]), e
    # '%', CR LF and a huge local part in a failing sender: one line, every '%' doubled
    r = m.mail("<a%b%%c\r\nX-Injected: 1\r\n" + "y" * 5000 + "@exp.example>")
    text = reply_text(r)
    assert "\r" not in text and "\n" not in text, text
    assert "%" not in text.replace("%%", ""), text
    assert len(text) < 1000, len(text)
    m.quit()


def t_hostile_headers(d):
    """Unclosed and deeply nested comments, bare quotes, junk names: no crash; ours go,
    and so do the malformed ones (an id we cannot read may be ours: issue 33)."""
    m, r = session(d, "192.0.2.10", "mx.example.com", "<alice@example.com>")
    expect(r, ("continue", b""))
    edits = finish(m, [
        ("Authentication-Results", "(" * 5000 + ID + ";"),                # 1: malformed
        ("Authentication-Results", "\"" + ID),                            # 2: malformed
        ("Authentication-Results", ""),
        ("Authentication-Results", "(unclosed \\"),                       # 4: malformed
        ("Auth\u00e9ntication-Results", ID + "; spf=pass"),
        ("Authentication-Results", "\t(ok) " + ID + " (x); spf=pass"),  # 5: ours
        ("Received-SPF", "pass (forged)"),
    ])
    expect(edits, [("m", 5, "Authentication-Results", ""),
                   ("m", 4, "Authentication-Results", ""),
                   ("m", 2, "Authentication-Results", ""),
                   ("m", 1, "Authentication-Results", ""),
                   ar(ID + "; spf=pass smtp.mailfrom=example.com")])
    m.quit()


def t_too_many_forged(d):
    """More forged results than we keep track of: the message is refused, not passed on."""
    m, r = session(d, "192.0.2.10", "mx.example.com", "<alice@example.com>")
    expect(r, ("continue", b""))
    for _ in range(5000):
        m.header("Authentication-Results", ID + "; spf=pass")
    final, data, edits = m.eom({"i": "QID"})
    expect(final, "reply")
    assert data.startswith(b"550 5.7.0 "), data
    m.quit()


def t_broken_protocol(d):
    """Oversized packets, junk commands, a session cut in the middle: others go on."""
    with mc.Milter(d.sock) as m:
        m.sock.sendall(b"\x7f\xff\xff\xff" + b"C" + b"x" * 1000)
    with mc.Milter(d.sock) as m:
        m.negotiate()
        m.sock.sendall(b"\x00\x00\x00\x00")
        m.sock.sendall(b"\x00\x00\x00\x03Zxx")
    with mc.Milter(d.sock) as m:
        m.negotiate()
        m.send(mc.CONNECT, b"host\x004")  # truncated connect info
    with mc.Milter(d.sock) as m:
        m.sock.sendall(b"\x00\x00\x00\x0dO\x00\x00\x00\x06")  # truncated OPTNEG
    still_serves(d)


def t_concurrent_sessions(d):
    """32 connections at once, each several messages, passes and fails mixed: every
    answer is the one its own session asked for (one event loop, every connection on it)."""
    errors = []

    def run(n):
        try:
            for i in range(5):
                if (n + i) % 2:
                    still_serves(d)
                else:
                    m, r = session(d, "192.0.2.%d" % (100 + n), "h.unknown.test",
                                   "<u%d@exp.example>" % n)
                    text = reply_text(r)
                    assert "192.0.2.%d is not one of" % (100 + n) in text, text
                    m.quit()
        except Exception as e:  # collected, reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=run, args=(n,)) for n in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:3]


# ---- concurrency and slow DNS (tests/dnsd) -------------------------------------------

class SlowDns:
    """tests/dnsd serving ZONE, answers for late.example held back 1.5 s, never any
    for never.example."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="spfkit-milter-dnsd-")
        self.proc, port = harness.start_dnsd(DNSD, self.dir, ZONE,
                                             ["--delay", "late.example:1500",
                                              "--timeout", "never.example"], timeout=5)
        self.server = "127.0.0.1:%d" % port

    def stop(self):
        self.proc.terminate()
        self.proc.wait(5)
        shutil.rmtree(self.dir, ignore_errors=True)


def t_slow_dns_stalls_no_one(d):
    """One MAIL FROM waits 1.5 s for DNS; sessions on other connections do not wait."""
    slow = d.client()
    expect(slow.connect("192.0.2.10"), ("continue", b""))
    expect(slow.helo("h.unknown.test"), ("continue", b""))
    slow.send(mc.MAIL, mc.z("<x@late.example>"))
    time.sleep(0.1)
    t0 = time.time()
    for _ in range(10):
        still_serves(d)
    took = time.time() - t0
    assert took < 1.2, "fast sessions took %.2f s" % took
    final, data, edits = slow.read_until_final()
    expect((final, data), ("continue", b""))
    expect(finish(slow), [ar(ID + "; spf=pass smtp.mailfrom=late.example")])
    slow.quit()


def t_disconnect_mid_evaluation(d):
    """A client gone while its check waits for DNS: others are served, and so is the next."""
    gone = []
    for _ in range(3):
        m = d.client()
        m.connect("192.0.2.10")
        m.helo("h.unknown.test")
        m.send(mc.MAIL, mc.z("<y@late.example>"))
        gone.append(m)
    time.sleep(0.1)
    for m in gone:
        m.close()
    still_serves(d)
    time.sleep(1.8)  # their checks end with nobody to answer
    still_serves(d)


def t_lookup_time(d):
    """A DNS server that never answers: Lookup_Time (3 s here) ends the evaluation with a
    temperror, deferred with 451 4.7.24, long before Postfix's 30 s milter timeout."""
    t0 = time.time()
    m, r = session(d, "192.0.2.10", "h.unknown.test", "<x@never.example>")
    took = time.time() - t0
    text = reply_text(r)
    assert text.startswith("451 4.7.24 ") and "Lookup_Time" in text, text
    assert 2.5 < took < 6, "took %.2f s" % took
    m.quit()


def t_time_limit(d):
    """Milter_Time_Limit (2 s here) caps the whole check, DNS whitelists included: a
    Domain_Whitelist entry and a MAIL FROM whose DNS never answers end in 451 4.7.24
    after 2 s, though each phase alone has more time."""
    t0 = time.time()
    m, r = session(d, "192.0.2.10", "h.unknown.test", "<x@never.example>")
    took = time.time() - t0
    text = reply_text(r)
    assert text.startswith("451 4.7.24 "), text
    assert 1.5 < took < 4, "took %.2f s" % took
    m.quit()


# ---- other configurations -----------------------------------------------------------

CONF_BOTH = CONF + """Header_Type = SPF,AR
Delete_Received_SPF = Yes
Skip_Verified = Yes
MacroList = daemon_name|ORIGINATING,{client_resolve}|TEMP
"""


def t_both_headers_v4mapped(d):
    """Header_Type = SPF,AR: Received-SPF on top, then A-R; an IPv4-mapped client is
    IPv4 (client-ip=192.0.2.10); with Delete_Received_SPF every earlier one goes."""
    m, r = session(d, "::ffff:192.0.2.10", "mx.example.com", "<alice@example.com>")
    expect(r, ("continue", b""))
    edits = finish(m, [("Received-SPF", "pass (forged)"), ("Received-SPF", "pass (2)")])
    expect(edits[:2], [("m", 2, "Received-SPF", ""), ("m", 1, "Received-SPF", "")])
    expect(edits[2], ar(ID + "; spf=pass smtp.mailfrom=example.com"))
    op, idx, name, value = edits[3]
    expect((op, idx, name), ("i", 0, "Received-SPF"))
    assert value.startswith("pass ") and "client-ip=192.0.2.10;" in value and \
        "identity=mailfrom" in value and 'envelope-from="alice@example.com"' in value, value
    m.quit()


# ---- internationalized mail (RFC 8616, issue 30) ---------------------------------

def t_utf8_sender_smtputf8(d):
    """MAIL FROM:<user@münchen.example> SMTPUTF8: checked as xn--mnchen-3ya.example;
    the message may carry UTF-8 header fields (RFC 6532), so Received-SPF gives the
    sender as sent; the A-R, read by programs, stays ASCII (A-labels)."""
    m = d.client()
    expect(m.connect("192.0.2.10"), ("continue", b""))
    expect(m.helo("mx.example.com"), ("continue", b""))
    expect(m.mail("<user@münchen.example>", args=("BODY=8BITMIME", "smtputf8")),
           ("continue", b""))
    edits = finish(m)
    expect(edits[0], ar(ID + "; spf=pass smtp.mailfrom=xn--mnchen-3ya.example"))
    op, idx, name, value = edits[1]
    expect((op, idx, name), ("i", 0, "Received-SPF"))
    assert value.startswith("pass (mx.receiver.test: domain of user@münchen.example ") and \
        'envelope-from="user@münchen.example"' in value, value
    m.quit()


def t_utf8_sender_undeclared(d):
    """The same 8-bit address without SMTPUTF8 (Postfix lets it through unless
    strict_smtputf8): the message is no SMTPUTF8 one, our fields are ASCII."""
    m, r = session(d, "192.0.2.10", "mx.example.com", "<user@münchen.example>")
    expect(r, ("continue", b""))
    edits = finish(m)
    expect(edits[0], ar(ID + "; spf=pass smtp.mailfrom=xn--mnchen-3ya.example"))
    assert all(e[3].isascii() for e in edits), edits
    assert 'envelope-from="user@xn--mnchen-3ya.example"' in edits[1][3], edits
    m.quit()


def t_utf8_sender_fail(d):
    """A host the U-label domain does not list: 550 5.7.23, the reply in ASCII."""
    m = d.client()
    expect(m.connect("203.0.113.9"), ("continue", b""))
    expect(m.helo("h.unknown.test"), ("continue", b""))
    text = reply_text(m.mail("<user@münchen.example>", args=("SMTPUTF8",)))
    assert text.startswith("550 5.7.23 "), text
    assert "due to: xn--mnchen-3ya.example does not designate 203.0.113.9 " in text, text
    assert "s=mfrom;id=user@m%%C3%%BCnchen.example;" in text, text  # '%' doubled for smfi_setreply
    m.quit()


def t_verified_and_macro_list(d):
    """Skip_Verified ({verify} = OK) and MacroList entries: not checked."""
    for macros in ({"{verify}": "OK"}, {"{daemon_name}": "ORIGINATING"},
                   {"{client_resolve}": "TEMP"}):
        m = d.client()
        expect(m.connect("192.0.2.99"), ("continue", b""))
        expect(m.helo("h.unknown.test", macros), ("continue", b""))
        expect(m.mail("<bob@exp.example>"), ("continue", b""))
        expect(finish(m), [])
        m.quit()
    m, r = session(d, "192.0.2.99", "h.unknown.test", "<bob@exp.example>",
                   mail_macros={"{verify}": "FAIL", "{daemon_name}": "smtpd"})
    assert reply_text(r).startswith("550 5.7.23 ")
    m.quit()


CONF_USER = CONF + "UserID = nobody\nUMask = 077\n"


def t_user_and_umask(d):
    """UserID: the milter runs as nobody, its socket handed over to it; UMask 077 made the
    socket 0700; it still serves."""
    import pwd
    nobody = pwd.getpwnam("nobody").pw_uid
    st = os.stat(d.sock)
    expect((st.st_uid, st.st_mode & 0o777), (nobody, 0o700))
    with open("/proc/%d/status" % d.proc.pid) as f:
        uids = [line.split()[1:] for line in f if line.startswith("Uid:")][0]
    expect(set(uids), {str(nobody)})
    still_serves(d)


def scrape(port):
    import urllib.request
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        return r.read()


def sample(text, name):
    m = re.search(rb"^" + re.escape(name.encode()) + rb" (\S+)$", text, re.M)
    assert m, "no sample %s in:\n%s" % (name, text.decode())
    return float(m.group(1))


def t_metrics(d):
    """Metrics_Listen (issue 29): a pass and a fail counted as checks, actions and
    requests; promtool check metrics finds the text clean."""
    port = int(d.wait_log("metrics on 127.0.0.1:0 (port").split("(port ")[1].rstrip(")"))
    names = ['spfkit_requests_total', 'spfkit_checks_total{identity="mailfrom",result="pass"}',
             'spfkit_checks_total{identity="mailfrom",result="fail"}',
             'spfkit_actions_total{action="prepend"}', 'spfkit_actions_total{action="reject"}',
             'spfkit_connections_total']
    before = scrape(port)
    t_pass(d)
    t_fail(d)
    after = scrape(port)
    got = [sample(after, n) - sample(before, n) for n in names]
    expect(dict(zip(names, got)), dict(zip(names, [2, 1, 1, 1, 1, 2])))
    r = subprocess.run(["promtool", "check", "metrics"], input=after, capture_output=True)
    expect((r.returncode, (r.stdout + r.stderr).strip()), (0, b""))


def hup_and_wait(d, text):
    """SIGHUP, then the log line with text (a new one, past those there already)."""
    with d.lock:
        seen = sum(1 for line in d.lines if text in line)
    d.proc.send_signal(signal.SIGHUP)
    deadline = time.time() + 10
    while time.time() < deadline:
        with d.lock:
            if sum(1 for line in d.lines if text in line) > seen:
                return
        time.sleep(0.02)
    raise AssertionError("no new log line with %r after SIGHUP; log: %r" % (text, d.lines[-10:]))


def forged_mail(d):
    """A MAIL FROM whose SPF fails (exp.example: -all); its reply."""
    m, r = session(d, "192.0.2.99", "h.unknown.test", "<bob@exp.example>")
    m.quit()
    return r


def t_reload(d):
    """SIGHUP (issue 29) as spfkit-policyd: the new file serves the next checks; a check
    in flight ends under the configuration it began with; a broken file is refused with
    its line in the log and the running configuration keeps serving."""
    expect(forged_mail(d), ("continue", b""))  # Mail_From_reject = False
    # in flight: late.example's answer is held 1.5 s; 203.0.113.5 fails its SPF
    slow = d.client()
    expect(slow.connect("203.0.113.5"), ("continue", b""))
    expect(slow.helo("h.unknown.test"), ("continue", b""))
    slow.send(mc.MAIL, mc.z("<x@late.example>"))
    time.sleep(0.2)
    with open(d.conf, "w") as f:
        f.write(CONF + "Mail_From_reject = Fail\n")
    hup_and_wait(d, "reloaded")
    final, data, _ = slow.read_until_final()
    expect((final, data), ("continue", b""))  # began under False: not refused
    slow.quit()
    assert reply_text(forged_mail(d)).startswith("550 5.7.23 "), "the new file does not serve"
    # broken: the running configuration (Fail) stays
    with open(d.conf, "w") as f:
        f.write(CONF + "Mail_From_reject = Sometimes\n")
    hup_and_wait(d, "keeping the running configuration")
    d.wait_log("milter.conf:5: error:")
    assert reply_text(forged_mail(d)).startswith("550 5.7.23 "), "a broken file took over"


def check_config():
    """--check-config: the milter keys are read; a bad one is an error with file:line."""
    tmp = tempfile.mkdtemp(prefix="spfkit-milter-conf-")
    try:
        conf = os.path.join(tmp, "c.conf")
        with open(conf, "w") as f:
            f.write(CONF_BOTH + "Socket = inet:8895@127.0.0.1\nUMask = 007\n")
        p = subprocess.run([BIN, "--check-config", "-c", conf], capture_output=True, timeout=10)
        assert p.returncode == 0, p.stderr
        with open(conf, "a") as f:
            f.write("UMask = 9\nInternalHosts = 10.0.0.1/8\n")
        p = subprocess.run([BIN, "--check-config", conf], capture_output=True, timeout=10)
        err = p.stderr.decode()
        assert p.returncode == 1, (p.returncode, err)
        assert conf + ":11: error: UMask: '9' is not an octal mode" in err, err
        assert conf + ":12: error: InternalHosts: '10.0.0.1/8' has host bits" in err, err
        p = subprocess.run([BIN, "--version"], capture_output=True, timeout=10)
        assert p.returncode == 0 and p.stdout.startswith(b"spfkit-milter "), p
        p = subprocess.run([BIN, "--dns-timeout", "x"], capture_output=True, timeout=10)
        assert p.returncode == 2, p
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


GROUPS = [
    (CONF, None, [t_pass, t_pass_ipv6, t_fail, t_long_sender, t_temperror, t_permerror,
                  t_log_reason_code,
                  t_null_sender_helo_pass, t_null_sender_helo_fail, t_helo_checked_first, t_forged_ar_removed,
                  t_internal_hosts, t_no_address, t_authenticated_skipped,
                  t_abort_then_more_messages, t_every_step_sent, t_hostile_values,
                  t_hostile_headers, t_too_many_forged, t_broken_protocol,
                  t_concurrent_sessions]),
    (CONF_BOTH, None, [t_both_headers_v4mapped, t_verified_and_macro_list,
                       t_utf8_sender_smtputf8, t_utf8_sender_undeclared, t_utf8_sender_fail]),
    (CONF + "Metrics_Listen = 127.0.0.1:0\n", None, [t_metrics]),
    (CONF + "Mail_From_reject = False\n", "dnsd", [t_reload]),
    (CONF + "Lookup_Time = 3\n", "dnsd", [t_slow_dns_stalls_no_one, t_disconnect_mid_evaluation,
                                         t_lookup_time]),
    (CONF + "Lookup_Time = 10\nMilter_Time_Limit = 2\nDomain_Whitelist = never.example\n",
     "dnsd", [t_time_limit]),
    (CONF_USER, "root", [t_user_and_umask]),
]


def run_group(conf, dns, tests, args=(), preexec_fn=None):
    """One daemon (extra command-line args, preexec_fn for its process) through tests."""
    passed = failed = 0
    slow = None
    if dns == "root":
        dns = None
        if os.geteuid() != 0:
            print("skip %s: not root" % ", ".join(t.__name__ for t in tests))
            return 0, 0
    if dns == "dnsd":
        if DNSD is None:
            print("skip %s: no dnsd given" % ", ".join(t.__name__ for t in tests))
            return 0, 0
        slow = SlowDns()
    d = Daemon(conf, slow.server if slow else None, args=args, preexec_fn=preexec_fn)
    try:
        for t in tests:
            t0 = time.time()
            try:
                t(d)
                passed += 1
                print("ok   %s (%.2f s)" % (t.__name__, time.time() - t0))
            except Exception as e:  # report every failure, keep going
                failed += 1
                print("FAIL %s: %r" % (t.__name__, e))
                print("  log:\n    " + "\n    ".join(d.lines[-15:]))
            if d.proc.poll() is not None:
                print("FAIL the milter died (status %r) during %s" % (d.proc.returncode, t.__name__))
                print("  log:\n    " + "\n    ".join(d.lines[-30:]))
                return passed, failed + 1
    finally:
        rc = d.stop()
        if slow:
            slow.stop()
    if rc != 0:
        failed += 1
        print("FAIL the milter exited with status %r; log:\n    %s"
              % (rc, "\n    ".join(d.lines[-30:])))
    return passed, failed


def main():
    harness.ensure_packages("prometheus")  # promtool, for t_metrics
    return run_all([(conf, dns, tests, (), None) for conf, dns, tests in GROUPS], check_config)


def run_all(groups, last):
    """Each group (conf, dns, tests, args, preexec_fn) on a daemon of its own, then last()."""
    passed = failed = 0
    for conf, dns, tests, args, preexec_fn in groups:
        p, f = run_group(conf, dns, tests, args, preexec_fn)
        passed += p
        failed += f
    try:
        last()
        passed += 1
        print("ok   %s" % last.__name__)
    except Exception as e:
        failed += 1
        print("FAIL %s: %r" % (last.__name__, e))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
