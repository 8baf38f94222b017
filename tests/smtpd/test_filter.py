#!/usr/bin/env python3
"""spfkit-smtpd-filter spoken to as smtpd speaks to it (smtpd-filters(7)),
without smtpd: scripted sessions through a pipe, every output line
asserted exactly.

  test_filter.py FILTER DNSD

DNS comes from a zone file (--zone, with --zone-timeout for temperror),
and from tests/dnsd for the cases that need a slow answer (a check in
flight while other sessions go on, a disconnect in the middle of one).
Every run ends by closing the filter's stdin: it must exit 0, and its
stderr must hold no sanitizer report.
"""
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mta"))
import harness  # noqa: E402  (tests/mta/harness.py)

BIN = sys.argv[1]
DNSD = sys.argv[2] if len(sys.argv) > 2 else None
ID = "mx.receiver.test"

ZONE = """\
pass.test.     TXT "v=spf1 ip4:192.0.2.0/24 -all"
fail.test.     TXT "v=spf1 ip4:198.51.100.0/24 -all"
slow.test.     TXT "v=spf1 ip4:192.0.2.0/24 -all"
mx.pass.test.  A   192.0.2.10
badhelo.test.  TXT "v=spf1 ip4:198.51.100.0/24 -all"
xn--mnchen-3ya.test. TXT "v=spf1 ip4:192.0.2.0/24 -all"
perm.test.     TXT "v=spf1 ip4:192.0.2.0/24 frobnicate:x -all"
"""

CONF = """\
TempError_Defer = True
TempError_Action = 451
Header_Type = SPF,AR
Authserv_Id = %s
InternalHosts = 10.0.0.0/8
""" % ID

REGISTER = [
    "register|report|smtp-in|link-connect",
    "register|report|smtp-in|link-disconnect",
    "register|report|smtp-in|link-identify",
    "register|report|smtp-in|link-auth",
    "register|report|smtp-in|tx-begin",
    "register|report|smtp-in|tx-mail",
    "register|report|smtp-in|tx-reset",
    "register|report|smtp-in|tx-rollback",
    "register|report|smtp-in|tx-commit",
    "register|filter|smtp-in|mail-from",
    "register|filter|smtp-in|data-line",
    "register|ready",
]

FAIL_REPLY = ("reject|550 5.7.23 Message rejected due to: fail.test does not designate "
              "192.0.2.10 as permitted sender. "
              "Please see https://www.open-spf.org/Why?s=mfrom;id=a@fail.test;"
              "ip=192.0.2.10;r=mx.receiver.test")
TEMP_REPLY = ("reject|451 4.7.24 Message deferred due to: DNS TXT lookup of timeout.test "
              "failed: timeout. Please see https://www.open-spf.org/Why?s=mfrom;"
              "id=a@timeout.test;ip=192.0.2.10;r=mx.receiver.test")


class Filter:
    def __init__(self, conf=CONF, dns=None, extra=(), read_out=True):
        self.dir = tempfile.mkdtemp(prefix="spfkit-smtpd-test-")
        zone = os.path.join(self.dir, "zone")
        cfg = os.path.join(self.dir, "policyd-spf.conf")
        with open(zone, "w") as f:
            f.write(ZONE)
        with open(cfg, "w") as f:
            f.write(conf)
        resolver = ["--dns", dns] if dns else ["--zone", zone, "--zone-timeout", "timeout.test"]
        self.proc = subprocess.Popen([BIN] + resolver + ["-c", cfg, "--receiver", ID] + list(extra),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.out = queue.Queue()
        self.err = []
        if read_out:
            self.start_reading()
        threading.Thread(target=self._read_err, daemon=True).start()

    def start_reading(self):
        threading.Thread(target=self._read_out, daemon=True).start()

    def _read_out(self):
        for line in self.proc.stdout:
            self.out.put(line.decode("utf-8", "replace").rstrip("\n"))
        self.out.put(None)

    def _read_err(self):
        for line in self.proc.stderr:
            self.err.append(line.decode("utf-8", "replace").rstrip("\n"))

    def send(self, *lines):
        for line in lines:
            self.proc.stdin.write((line if isinstance(line, bytes) else line.encode()) + b"\n")
        self.proc.stdin.flush()

    def expect(self, *want, timeout=5.0):
        got = []
        for w in want:
            try:
                line = self.out.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError("waited %.1f s for %r; got so far %r; stderr %r"
                                     % (timeout, w, got, self.err[-5:]))
            got.append(line)
            if line != w:
                raise AssertionError("got %r, want %r (after %r); stderr %r"
                                     % (line, w, got[:-1], self.err[-5:]))
        return got

    def take(self, timeout=5.0):
        line = self.out.get(timeout=timeout)
        if line is None:
            raise AssertionError("the filter closed its stdout; stderr %r" % self.err[-5:])
        return line

    def expect_nothing(self, wait=0.3):
        try:
            line = self.out.get(timeout=wait)
        except queue.Empty:
            return
        raise AssertionError("unexpected output %r" % line)

    def handshake(self, version="0.6", admd=None):
        lines = ["config|smtpd-version|%s" % ("7.8.0" if version != "0.6" else "6.8.0p2")]
        if version != "0.6":
            lines.append("config|protocol|%s" % version)
        lines += ["config|smtp-session-timeout|300", "config|subsystem|smtp-in"]
        if admd is not None:
            lines.append("config|admd|%s" % admd)
        lines.append("config|ready")
        self.send(*lines)
        self.expect(*REGISTER)

    def close(self):
        """EOF on stdin: the filter must exit 0, quietly, with nothing more on stdout."""
        self.proc.stdin.close()
        rc = self.proc.wait(10)
        rest = []
        while True:
            line = self.out.get(timeout=5)
            if line is None:
                break
            rest.append(line)
        time.sleep(0.05)
        shutil.rmtree(self.dir, ignore_errors=True)
        bad = [e for e in self.err if "Sanitizer" in e or "runtime error" in e]
        assert rc == 0 and not bad and not rest, \
            "exit %s, output after EOF %r, stderr %r" % (rc, rest, self.err[-20:])

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---- line builders -------------------------------------------------------------

def report(v, sid, event, *args):
    return "|".join(["report", v, "1576146008.006099", "smtp-in", event, sid] + list(args))


def filt(v, sid, tok, phase, param):
    return "|".join(["filter", v, "1576146008.006099", "smtp-in", phase, sid, tok, param])


def result(v, sid, tok, text):
    # 0.4 wrote the token first; 0.5 and later the session first (lka_filter.c)
    first, second = (tok, sid) if v == "0.4" else (sid, tok)
    return "filter-result|%s|%s|%s" % (first, second, text)


def dataline(v, sid, tok, text):
    first, second = (tok, sid) if v == "0.4" else (sid, tok)
    return "filter-dataline|%s|%s|%s" % (first, second, text)


def connect(f, v, sid, ip="192.0.2.10", helo="mx.pass.test"):
    src = "[%s]:40000" % ip if ":" in ip else "%s:40000" % ip
    f.send(report(v, sid, "link-connect", "rdns.example", "pass", src, "127.0.0.1:25"),
           report(v, sid, "link-greeting", "mx.receiver.test"),
           report(v, sid, "link-identify", "EHLO", helo))


def message(f, v, sid, tok, lines, want):
    """Send the data lines (and the final "."); expect exactly `want` then "."."""
    for line in lines + ["."]:
        f.send(filt(v, sid, tok, "data-line", line))
    f.expect(*[dataline(v, sid, tok, w) for w in want + ["."]])


# ---- cases ----------------------------------------------------------------------

def case_handshake_68():
    """6.8's configuration lines (admd, no protocol): our registration, nothing else."""
    f = Filter()
    try:
        f.handshake("0.6", admd=ID)
        f.expect_nothing()
        f.close()
    finally:
        f.kill()


def case_fail_and_pass_68():
    """0.6: forged sender -> 550 5.7.23 with the explanation; pass -> headers on top."""
    f = Filter()
    try:
        f.handshake("0.6", admd=ID)
        s = "7641df9771b4ed00"
        connect(f, "0.6", s)
        f.send(filt("0.6", s, "1ef1c203cc576e5d", "mail-from", "<a@fail.test> SIZE=100"))
        f.expect(result("0.6", s, "1ef1c203cc576e5d", FAIL_REPLY))
        f.send(filt("0.6", s, "1ef1c203cc576e5e", "mail-from", "<b@pass.test>"))
        f.expect(result("0.6", s, "1ef1c203cc576e5e", "proceed"))
        f.send(report("0.6", s, "tx-begin", "0a0b0c0d"),
               report("0.6", s, "tx-mail", "0a0b0c0d", "ok", "b@pass.test"),
               report("0.6", s, "tx-rcpt", "0a0b0c0d", "ok", "c@receiver.test"))
        tok = "1ef1c203cc576e5f"
        for line in ["Subject: hi", "", "body"] + ["."]:
            f.send(filt("0.6", s, tok, "data-line", line))
        first = f.take()
        second = f.take()
        want_spf = dataline("0.6", s, tok, "Received-SPF: pass (mx.receiver.test: domain of "
                            "b@pass.test designates 192.0.2.10 as permitted sender) "
                            "client-ip=192.0.2.10; envelope-from=\"b@pass.test\"; "
                            "helo=mx.pass.test; receiver=mx.receiver.test; identity=mailfrom; "
                            "mechanism=\"ip4:192.0.2.0/24\"")
        want_ar = dataline("0.6", s, tok, "Authentication-Results: mx.receiver.test; "
                           "spf=pass smtp.mailfrom=pass.test")
        assert first == want_spf, "got %r, want %r" % (first, want_spf)
        assert second == want_ar, "got %r, want %r" % (second, want_ar)
        f.expect(*[dataline("0.6", s, tok, w) for w in ["Subject: hi", "", "body", "."]])
        f.send(report("0.6", s, "tx-commit", "0a0b0c0d", "120"),
               report("0.6", s, "link-disconnect"))
        f.expect_nothing()
        f.close()
    finally:
        f.kill()


def pass_headers(v, sid, tok, identity_sender="b@pass.test", ip="192.0.2.10",
                 helo="mx.pass.test", authserv=ID):
    dom = identity_sender.split("@")[1]
    return ["Received-SPF: pass (mx.receiver.test: domain of %s designates %s as permitted "
            "sender) client-ip=%s; envelope-from=\"%s\"; helo=%s; receiver=mx.receiver.test; "
            "identity=mailfrom; mechanism=\"ip4:192.0.2.0/24\""
            % (identity_sender, ip, ip, identity_sender, helo),
            "Authentication-Results: %s; spf=pass smtp.mailfrom=%s" % (authserv, dom)]


def case_transactions_and_sessions_7x():
    """0.7, admd from smtpd: several transactions per session, two sessions interleaved."""
    f = Filter()
    v = "0.7"
    try:
        f.handshake(v, admd="admd.example")
        a, b = "00000000000000a1", "00000000000000b2"
        connect(f, v, a)
        connect(f, v, b, ip="198.51.100.7", helo="out.fail.test")
        # a: fail, then RSET, then pass; b in between: pass for fail.test's own host
        f.send(filt(v, a, "0000000000000001", "mail-from", "<a@fail.test>"))
        f.expect(result(v, a, "0000000000000001", FAIL_REPLY))
        f.send(filt(v, b, "0000000000000002", "mail-from", "<x@fail.test>"))
        f.expect(result(v, b, "0000000000000002", "proceed"))
        f.send(report(v, a, "tx-reset"))
        f.send(filt(v, a, "0000000000000003", "mail-from", "<b@pass.test>"))
        f.expect(result(v, a, "0000000000000003", "proceed"))
        # data lines of both, interleaved; each gets its own headers
        hb = ["Received-SPF: pass (mx.receiver.test: domain of x@fail.test designates "
              "198.51.100.7 as permitted sender) client-ip=198.51.100.7; "
              "envelope-from=\"x@fail.test\"; helo=out.fail.test; receiver=mx.receiver.test; "
              "identity=mailfrom; mechanism=\"ip4:198.51.100.0/24\"",
              "Authentication-Results: admd.example; spf=pass smtp.mailfrom=fail.test"]
        ha = pass_headers(v, a, "t", authserv="admd.example")
        f.send(filt(v, a, "00000000000000aa", "data-line", "Subject: A"))
        f.expect(*[dataline(v, a, "00000000000000aa", h) for h in ha + ["Subject: A"]])
        f.send(filt(v, b, "00000000000000bb", "data-line", "Subject: B"))
        f.expect(*[dataline(v, b, "00000000000000bb", h) for h in hb + ["Subject: B"]])
        f.send(filt(v, a, "00000000000000aa", "data-line", "."))
        f.send(filt(v, b, "00000000000000bb", "data-line", "."))
        f.expect(dataline(v, a, "00000000000000aa", "."), dataline(v, b, "00000000000000bb", "."))
        f.send(report(v, a, "tx-commit", "01", "10"), report(v, b, "tx-commit", "02", "10"))
        # a second message on a: a new check, the headers once more, and only once
        f.send(filt(v, a, "0000000000000004", "mail-from", "<b@pass.test>"))
        f.expect(result(v, a, "0000000000000004", "proceed"))
        message(f, v, a, "00000000000000ab", ["Subject: A2", "", "x"],
                ha + ["Subject: A2", "", "x"])
        # a third, rolled back before data: nothing is left for the fourth's lines
        f.send(filt(v, a, "0000000000000005", "mail-from", "<b@pass.test>"))
        f.expect(result(v, a, "0000000000000005", "proceed"))
        f.send(report(v, a, "tx-rollback", "03"))
        f.send(report(v, a, "link-disconnect"), report(v, b, "link-disconnect"))
        f.expect_nothing()
        f.close()
    finally:
        f.kill()


def pass_session(f, v, sid, admd=None):
    """The handshake, then a session whose MAIL FROM passes (b@pass.test): proceed."""
    f.handshake(v, admd=admd)
    connect(f, v, sid)
    f.send(filt(v, sid, "0000000000000001", "mail-from", "<b@pass.test>"))
    f.expect(result(v, sid, "0000000000000001", "proceed"))


def case_forged_ar_removed():
    """Forged Authentication-Results with our id go, folded lines too; others stay.
    No config|admd here: the id is the configuration's Authserv_Id."""
    f = Filter()
    v = "0.6"
    try:
        s = "00000000000000c3"
        pass_session(f, v, s)
        lines = [
            "Received: from somewhere",
            "Authentication-Results: %s; spf=pass smtp.mailfrom=paypal.example" % ID,
            "Authentication-Results:",
            "   %s;" % ID.upper(),
            "\tdkim=pass header.d=bank.example",
            "authentication-results : (comment) \"%s\"; spf=pass" % ID,
            "Authentication-Results: other.example; spf=fail",
            "  smtp.mailfrom=x.example",
            "Authentication-Results: %s.evil.example; spf=pass" % ID,
            "X-Note: Authentication-Results: %s; spf=pass" % ID,
            "Subject: forged | with a bar",
            "",
            "Authentication-Results: %s; in the body: stays" % ID,
            "body",
        ]
        want = pass_headers(v, s, "t") + [
            "Received: from somewhere",
            "Authentication-Results: other.example; spf=fail",
            "  smtp.mailfrom=x.example",
            "Authentication-Results: %s.evil.example; spf=pass" % ID,
            "X-Note: Authentication-Results: %s; spf=pass" % ID,
            "Subject: forged | with a bar",
            "",
            "Authentication-Results: %s; in the body: stays" % ID,
            "body",
        ]
        message(f, v, s, "00000000000000d4", lines, want)
        f.send(report(v, s, "link-disconnect"))
        f.expect_nothing()
        f.close()
    finally:
        f.kill()


def case_forged_ar_last_header():
    """A forged field right before the empty line, and one cut by the end of data."""
    f = Filter()
    v = "0.6"
    try:
        s = "00000000000000c4"
        pass_session(f, v, s)
        message(f, v, s, "0000000000000002",
                ["Authentication-Results: %s;" % ID, " spf=pass", "", "b"],
                pass_headers(v, s, "t") + ["", "b"])
        f.send(filt(v, s, "0000000000000003", "mail-from", "<b@pass.test>"))
        f.expect(result(v, s, "0000000000000003", "proceed"))
        message(f, v, s, "0000000000000004", ["Authentication-Results: %s;" % ID],
                pass_headers(v, s, "t"))
        f.close()
    finally:
        f.kill()


# Issue 33 finding 3: forms of our id that lenient readers (OpenDMARC 1.4.2
# among them) take for ours, each as the lines of one field. All are removed.
AR = "Authentication-Results: "
FORGED_VARIANTS = [
    [AR + "mx . receiver . test; spf=pass smtp.mailfrom=paypal.example"],
    [AR + "mx.", " receiver.test; spf=pass smtp.mailfrom=paypal.example"],
    [AR + "mx\\.receiver.test; spf=pass"],
    [AR + "m\\x.receiver.test; spf=pass"],
    [AR + "mx.receiver.\"test\"; spf=pass"],
    [AR + "(" * 17 + "c" + ")" * 17 + " mx.receiver.test; spf=pass"],
    [AR + "mx.receiver.test.; spf=pass"],
    [AR + "mx.(c)receiver.test 1; spf=pass"],
    [AR + "m x.receiver.test; spf=pass"],
    [AR + "\"mx.receiver.test", "\tx\"; spf=pass"],
    [AR + "=?us-ascii?q?mx.receiver.test?=; spf=pass"],
    [AR + "(unclosed mx.receiver.test; spf=pass"],
]
# Fields of other hosts (and Microsoft's, with no id): kept.
OTHER_HOSTS = [
    [AR + "other.example; spf=fail"],
    [AR + "mx.receiver.test.evil.example; spf=pass"],
    [AR + "xmx.receiver.test; spf=pass"],
    [AR + "(mx.receiver.test) other.example; spf=pass"],
    [AR + "spf=pass (sender IP is 192.0.2.1) smtp.mailfrom=example.com; dkim=none"],
]
FOLDED_COMMENTS = [" (" + "c" * 90 + ")"] * 100  # 9,400 bytes


def case_forged_ar_variants():
    """Every form of our id a lenient reader accepts goes; other hosts' fields stay."""
    f = Filter()
    v = "0.6"
    try:
        s = "00000000000000c5"
        pass_session(f, v, s)
        lines = ["Received: from somewhere"]
        want = pass_headers(v, s, "t") + ["Received: from somewhere"]
        for i, forged in enumerate(FORGED_VARIANTS):  # interleaved: each verdict its own
            other = OTHER_HOSTS[i] if i < len(OTHER_HOSTS) else []
            lines += forged + other
            want += other
        message(f, v, s, "00000000000000d5", lines + ["", "b"], want + ["", "b"])
        f.send(report(v, s, "link-disconnect"))
        f.expect_nothing()
        f.close()
        removed = [e for e in f.err if "Authentication-Results carrying our" in e]
        assert len(removed) == len(FORGED_VARIANTS), \
            "%d removals logged, want %d: %r" % (len(removed), len(FORGED_VARIANTS), f.err)
    finally:
        f.kill()


def case_forged_ar_long():
    """Past the 8 KiB the filter holds: our id behind folded comment lines goes,
    another host's long field (its id read first) stays whole, and a field whose
    id is still open there goes (it could name us)."""
    f = Filter()
    v = "0.7"
    try:
        s = "00000000000000c6"
        pass_session(f, v, s, admd=ID)
        ours = ["Authentication-Results:"] + FOLDED_COMMENTS + [" %s; spf=pass" % ID]
        long_other = ([AR + "other.example;"] +
                      [" dkim=pass (%s) header.d=x.example;" % ("k" * 90)] * 100)
        open_id = ["Authentication-Results:"] + FOLDED_COMMENTS + [" other.example; spf=fail"]
        lines = ["Subject: a"] + ours + long_other + open_id + ["X-After: 1", "", "b"]
        want = pass_headers(v, s, "t") + ["Subject: a"] + long_other + ["X-After: 1", "", "b"]
        message(f, v, s, "00000000000000d6", lines, want)
        f.close()
        assert any("no authserv-id in its first" in e for e in f.err), f.err[-5:]
    finally:
        f.kill()


def case_authenticated_skipped():
    """link-auth pass (0.6: user|result; 0.7: result|user): no check, nothing changed."""
    for v, auth in (("0.6", ["alice|x", "pass"]), ("0.7", ["pass", "alice"])):
        f = Filter()
        try:
            f.handshake(v)
            s = "00000000000000e5"
            connect(f, v, s)
            f.send(report(v, s, "link-auth", *auth))
            f.send(filt(v, s, "0000000000000001", "mail-from", "<a@fail.test>"))
            f.expect(result(v, s, "0000000000000001", "proceed"))
            lines = ["Authentication-Results: %s; spf=pass" % ID, "", "b"]
            message(f, v, s, "0000000000000002", lines, lines)
            f.close()
        finally:
            f.kill()
    # a failed AUTH changes nothing: still checked
    f = Filter()
    try:
        f.handshake("0.7")
        s = "00000000000000e6"
        connect(f, "0.7", s)
        f.send(report("0.7", s, "link-auth", "fail", "alice"))
        f.send(filt("0.7", s, "0000000000000001", "mail-from", "<a@fail.test>"))
        f.expect(result("0.7", s, "0000000000000001", FAIL_REPLY))
        f.close()
    finally:
        f.kill()


def case_internal_and_local_skipped():
    """InternalHosts and a local (unix socket) client: proceed, lines unchanged."""
    f = Filter()
    v = "0.6"
    try:
        f.handshake(v)
        connect(f, v, "00000000000000f1", ip="10.1.2.3")
        f.send(filt(v, "00000000000000f1", "0000000000000001", "mail-from", "<a@fail.test>"))
        f.expect(result(v, "00000000000000f1", "0000000000000001", "proceed"))
        message(f, v, "00000000000000f1", "0000000000000002", ["Subject: x", "", "y"],
                ["Subject: x", "", "y"])
        f.send(report(v, "00000000000000f2", "link-connect", "localhost", "pass",
                      "unix:/var/run/smtpd.sock", "unix:/var/run/smtpd.sock"))
        f.send(filt(v, "00000000000000f2", "0000000000000003", "mail-from", "<a@fail.test>"))
        f.expect(result(v, "00000000000000f2", "0000000000000003", "proceed"))
        f.close()
    finally:
        f.kill()


def case_null_sender_helo():
    """MAIL FROM:<> is judged by its HELO (RFC 7208 §2.4): refused for a failing HELO."""
    f = Filter()
    v = "0.7"
    try:
        f.handshake(v, admd=ID)
        s = "0000000000000a02"
        connect(f, v, s, helo="badhelo.test")
        f.send(filt(v, s, "0000000000000001", "mail-from", "<>"))
        f.expect(result(v, s, "0000000000000001",
                        "reject|550 5.7.23 Message rejected due to: badhelo.test does not "
                        "designate 192.0.2.10 as permitted sender. Please see "
                        "https://www.open-spf.org/Why?s=helo;id=badhelo.test;ip=192.0.2.10;"
                        "r=mx.receiver.test"))
        f.close()
    finally:
        f.kill()


def case_temperror_451():
    """A DNS timeout for the sender's domain: temperror -> 451 4.7.24 (TempError_Defer)."""
    f = Filter()
    v = "0.6"
    try:
        f.handshake(v)
        s = "0000000000000a01"
        connect(f, v, s)
        f.send(filt(v, s, "0000000000000001", "mail-from", "<a@timeout.test>"))
        f.expect(result(v, s, "0000000000000001", TEMP_REPLY), timeout=30)
        f.close()
    finally:
        f.kill()


def case_log_reason_code():
    """permerror and temperror: the decision's log line names the reason code (issue 28)."""
    f = Filter()
    v = "0.6"
    try:
        f.handshake(v)
        for n, sender in enumerate(("a@timeout.test", "a@perm.test", "a@pass.test")):
            s = "0000000000000b0%d" % n
            connect(f, v, s)
            f.send(filt(v, s, "0000000000000001", "mail-from", "<%s>" % sender))
            f.take(timeout=30)
        f.close()
        for sender, want in (("a@timeout.test", "mailfrom_result=temperror reason=dns-timeout "),
                             ("a@perm.test", "mailfrom_result=permerror reason=unknown-mechanism ")):
            lines = [e for e in f.err if "from=<%s>" % sender in e]
            assert len(lines) == 1 and want in lines[0], (want, f.err)
        lines = [e for e in f.err if "from=<a@pass.test>" in e]
        assert len(lines) == 1 and "reason=" not in lines[0], f.err
    finally:
        f.kill()


def case_protocol_04_order():
    """0.4 (6.6) put the token before the session in replies: answered that way."""
    f = Filter()
    v = "0.4"
    try:
        f.handshake("0.6")
        s = "0000000000000b01"
        connect(f, v, s)
        f.send(filt(v, s, "0000000000000002", "mail-from", "<a@fail.test>"))
        f.expect("filter-result|0000000000000002|%s|%s" % (s, FAIL_REPLY))
        f.close()
    finally:
        f.kill()


def case_newer_version():
    """A version newer than ours is read as 0.7 while its fields parse."""
    f = Filter()
    v = "0.9"
    try:
        f.handshake("0.9")
        s = "0000000000000c01"
        connect(f, v, s)
        f.send(filt(v, s, "0000000000000001", "mail-from", "<a@fail.test>"))
        f.expect(result(v, s, "0000000000000001", FAIL_REPLY))
        f.send(report(v, s, "link-auth", "pass", "bob"))
        f.send(filt(v, s, "0000000000000002", "mail-from", "<a@fail.test>"))
        f.expect(result(v, s, "0000000000000002", "proceed"))
        f.send(report("1.12", s, "link-disconnect"))
        f.expect_nothing()
        f.close()
        assert any("newer" in e for e in f.err), f.err
    finally:
        f.kill()


def case_hostile_lines():
    """Garbage of every kind: logged, ignored, never answered wrongly; then a normal session."""
    f = Filter()
    v = "0.6"
    try:
        f.handshake(v)
        s = "0000000000000d01"
        f.send("",
               "hello",
               "report",
               "report|0.6",
               "report|x.y|1|smtp-in|link-connect|0000000000000001|a|pass|192.0.2.1:1|b:25",
               "report|0.6|1|smtp-in|link-connect|zzzz|a|pass|192.0.2.1:1|b:25",
               "report|0.6|1|smtp-in|link-connect|%s" % s,
               "report|0.6|1|smtp-in|link-connect|%s|a|pass|not-an-ip:25|b:25" % ("0" * 17),
               "report|0.6|1|smtp-out|link-connect|0000000000000003|a|pass|192.0.2.1:1|b:25",
               "report|0.6|1|smtp-in|no-such-event|0000000000000004|x",
               "report|0.6|1|smtp-in|link-disconnect|0000000000000005",
               "filter|0.6|1|smtp-in|mail-from|0000000000000006",
               "filter|0.6|1|smtp-in|mail-from|zz|0000000000000001|<a@b>",
               "filter|99999.1|1|smtp-in|mail-from|0000000000000006|0000000000000001|<a@b>",
               b"report|0.6|1|smtp-in|link-identify|\xff\xfe|\x00\x01",
               "config|admd|bad id;with semicolon",
               "config|ready",
               "config",
               "x" * 100000,
               "filter|0.6|1|smtp-in|mail-from|" + "y" * 70000)
        f.expect_nothing(0.5)
        # an unregistered phase still gets its neutral answer (smtpd waits for one)
        f.send(filt(v, "0000000000000007", "0000000000000008", "rcpt-to", "<c@d>"))
        f.expect(result(v, "0000000000000007", "0000000000000008", "proceed"))
        # mail-from and data lines for a session never seen: proceed, lines echoed
        f.send(filt(v, "0000000000000009", "000000000000000a", "mail-from", "<a@fail.test>"))
        f.expect(result(v, "0000000000000009", "000000000000000a", "proceed"))
        message(f, v, "0000000000000009", "000000000000000b", ["a|b", ""], ["a|b", ""])
        # the filter still works
        connect(f, v, s)
        f.send(filt(v, s, "0000000000000001", "mail-from", "<a@fail.test>"))
        f.expect(result(v, s, "0000000000000001", FAIL_REPLY))
        f.close()
        for want in ("unknown line", "protocol version", "no-such-event", "longer than",
                     "not registered"):
            assert any(want in e for e in f.err), "no log line with %r in %r" % (want, f.err)
    finally:
        f.kill()


def case_long_sender_checked():
    """A 5,000-byte local part (issue 33, finding 7): checked like any other
    sender; it passed unchecked ("proceed", no header) when the library
    refused senders over 4,096 bytes."""
    f = Filter()
    try:
        f.handshake("0.6", admd=ID)
        s = "0000000000000a71"
        connect(f, "0.6", s)
        local = "x" * 5000
        f.send(filt("0.6", s, "0000000000000001", "mail-from", "<%s@fail.test>" % local))
        got = f.take()
        want = result("0.6", s, "0000000000000001", "reject|550 5.7.23 ")
        assert got.startswith(want), "got %r, want %r..." % (got[:200], want)
        f.send(filt("0.6", s, "0000000000000002", "mail-from", "<%s@pass.test>" % local))
        f.expect(result("0.6", s, "0000000000000002", "proceed"))
        tok = "0000000000000003"
        for line in ["Subject: hi", "", "body", "."]:
            f.send(filt("0.6", s, tok, "data-line", line))
        first, second = f.take(), f.take()
        assert first.startswith(dataline("0.6", s, tok, "Received-SPF: pass ")), first[:200]
        assert second == dataline("0.6", s, tok, "Authentication-Results: %s; "
                                  "spf=pass smtp.mailfrom=pass.test" % ID), second[:200]
        f.expect(*[dataline("0.6", s, tok, w) for w in ["Subject: hi", "", "body", "."]])
        f.close()
    finally:
        f.kill()


def case_u_label_sender_ascii_headers():
    """RFC 8616 (issue 30): a U-label sender is checked as its A-labels. smtpd
    never runs an SMTPUTF8 transaction (OpenSMTPD offers no SMTPUTF8 and
    refuses non-ASCII addresses; the filter protocol has no word for it), so
    our fields stay ASCII with the domain in A-labels; a fail is refused."""
    f = Filter()
    try:
        f.handshake("0.7")
        s = "0000000000000b01"
        connect(f, "0.7", s)
        f.send(filt("0.7", s, "0000000000000001", "mail-from", "<b@münchen.test>"))
        f.expect(result("0.7", s, "0000000000000001", "proceed"))
        tok = "0000000000000002"
        for line in ["Subject: hi", "", "body", "."]:
            f.send(filt("0.7", s, tok, "data-line", line))
        want = pass_headers("0.7", s, tok, identity_sender="b@xn--mnchen-3ya.test")
        f.expect(*[dataline("0.7", s, tok, w) for w in want])
        f.expect(*[dataline("0.7", s, tok, w) for w in ["Subject: hi", "", "body", "."]])
        f.send(report("0.7", s, "tx-commit", "0a0b0c0e", "120"))
        s2 = "0000000000000b02"
        connect(f, "0.7", s2, ip="198.51.100.7", helo="h.unknown.test")
        f.send(filt("0.7", s2, "0000000000000003", "mail-from", "<b@münchen.test>"))
        got = f.take()
        want = result("0.7", s2, "0000000000000003", "reject|550 5.7.23 Message rejected due "
                      "to: xn--mnchen-3ya.test does not designate 198.51.100.7 as permitted "
                      "sender. Please see https://www.open-spf.org/Why?s=mfrom;"
                      "id=b@m%C3%BCnchen.test;ip=198.51.100.7;r=mx.receiver.test")
        assert got == want, "got %r, want %r" % (got, want)
        f.close()
    finally:
        f.kill()


class SlowDns:
    """tests/dnsd with answers for slow.test held back 1.5 s."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="spfkit-smtpd-dnsd-")
        self.proc, port = harness.start_dnsd(DNSD, self.dir, ZONE, ["--delay", "slow.test:1500"],
                                             timeout=5)
        self.server = "127.0.0.1:%d" % port

    def stop(self):
        self.proc.terminate()
        self.proc.wait(5)
        shutil.rmtree(self.dir, ignore_errors=True)


def case_slow_dns_and_disconnect():
    """A check waiting 1.5 s for DNS holds no other session; a disconnect cancels it."""
    if DNSD is None:
        raise AssertionError("no dnsd given")
    dns = SlowDns()
    f = Filter(dns=dns.server, extra=["--dns-cache-mb", "0"])
    v = "0.6"
    try:
        f.handshake(v)
        slow, quick, gone = "0000000000000e01", "0000000000000e02", "0000000000000e03"
        for sid in (slow, quick, gone):
            connect(f, v, sid)
        t0 = time.time()
        f.send(filt(v, slow, "0000000000000001", "mail-from", "<a@slow.test>"))
        f.send(filt(v, gone, "0000000000000003", "mail-from", "<a@slow.test>"))
        f.send(filt(v, quick, "0000000000000002", "mail-from", "<a@fail.test>"))
        f.expect(result(v, quick, "0000000000000002", FAIL_REPLY))
        took = time.time() - t0
        assert took < 1.0, "the quick session waited %.2f s behind the slow one" % took
        # the third session goes away while its check waits: no answer for it, ever
        f.send(report(v, gone, "link-disconnect"))
        f.expect(result(v, slow, "0000000000000001", "proceed"), timeout=10)
        took = time.time() - t0
        assert took >= 1.4, "the slow answer came after %.2f s" % took
        f.expect_nothing(1.0)
        f.close()
    finally:
        f.kill()
        dns.stop()


def hup_and_wait(f, text):
    """SIGHUP, then a new stderr line with text."""
    seen = sum(1 for e in f.err if text in e)
    f.proc.send_signal(signal.SIGHUP)
    deadline = time.time() + 10
    while sum(1 for e in f.err if text in e) == seen:
        assert time.time() < deadline, "no new %r after SIGHUP: %r" % (text, f.err[-5:])
        time.sleep(0.02)


def case_reload():
    """SIGHUP (issue 29) as spfkit-policyd: a check in flight ends under the configuration
    it began with, the next ones under the new file; a broken file is refused with its
    line and the running configuration keeps serving; config|admd's authserv-id stays."""
    if DNSD is None:
        raise AssertionError("no dnsd given")
    dns = SlowDns()
    f = Filter(dns=dns.server, extra=["--dns-cache-mb", "0"])
    v = "0.7"
    conf = os.path.join(f.dir, "policyd-spf.conf")
    try:
        f.handshake(v, admd="admd.receiver.test")
        sid = "0000000000000f01"
        connect(f, v, sid, ip="198.51.100.9")  # slow.test's SPF fails for it
        f.send(filt(v, sid, "0000000000000001", "mail-from", "<a@slow.test>"))
        time.sleep(0.2)
        with open(conf, "w") as c:
            c.write(CONF + "Mail_From_reject = False\n")
        hup_and_wait(f, "reloaded")
        # began under Mail_From_reject = Fail: refused
        got = f.take(timeout=10)
        assert got.startswith(result(v, sid, "0000000000000001", "reject|550 5.7.23 ")), got
        # pass.test's SPF fails for 198.51.100.9 too: now accepted with a header
        f.send(filt(v, sid, "0000000000000002", "mail-from", "<a@pass.test>"))
        f.expect(result(v, sid, "0000000000000002", "proceed"))
        with open(conf, "w") as c:
            c.write(CONF + "Mail_From_reject = Sometimes\n")
        hup_and_wait(f, "keeping the running configuration")
        assert any("policyd-spf.conf:6: error:" in e for e in f.err), f.err[-5:]
        f.send(filt(v, sid, "0000000000000003", "mail-from", "<a@pass.test>"))
        f.expect(result(v, sid, "0000000000000003", "proceed"))
        # the header names smtpd's admd, not the file's Authserv_Id
        f.send(report(v, sid, "tx-begin", "0a0b0c0e"),
               report(v, sid, "tx-mail", "0a0b0c0e", "ok", "a@pass.test"))
        tok = "0000000000000004"
        for line in ["Subject: hi", "", "body", "."]:
            f.send(filt(v, sid, tok, "data-line", line))
        lines = [f.take() for _ in range(6)]
        assert any("Authentication-Results: admd.receiver.test; spf=fail" in x for x in lines), \
            lines
        f.send(report(v, sid, "link-disconnect"))
        f.close()
    finally:
        f.kill()
        dns.stop()


def case_eof_mid_check():
    """smtpd closing our stdin while a check waits: clean exit, nothing written."""
    if DNSD is None:
        raise AssertionError("no dnsd given")
    dns = SlowDns()
    f = Filter(dns=dns.server)
    try:
        f.handshake("0.6")
        connect(f, "0.6", "0000000000000f01")
        f.send(filt("0.6", "0000000000000f01", "0000000000000001", "mail-from", "<a@slow.test>"))
        time.sleep(0.2)
        t0 = time.time()
        f.close()
        assert time.time() - t0 < 1.0, "exit took %.2f s" % (time.time() - t0)
    finally:
        f.kill()
        dns.stop()


def case_options():
    """--help says the truth, --version, a bad value named, a missing config file named."""
    r = subprocess.run([BIN, "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--config" in r.stdout and "--dns" in r.stdout and \
        "--zone" in r.stdout, r
    r = subprocess.run([BIN, "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("spfkit-smtpd-filter "), r
    r = subprocess.run([BIN, "--dns", "127.0.0.1:99999"], capture_output=True, text=True)
    assert r.returncode == 2 and "--dns" in r.stderr and r.stdout == "", r
    r = subprocess.run([BIN, "--config", "/nonexistent/policyd-spf.conf"], capture_output=True,
                       text=True, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "/nonexistent/policyd-spf.conf" in r.stderr and r.stdout == "", r


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def case_smtpd_not_reading():
    """smtpd not reading our output: we stop reading its lines (bounded memory), then
    every line comes back, in order, once it reads again."""
    f = Filter(read_out=False)
    v = "0.6"
    n = 60000
    line = "x" * 500
    try:
        f.send("config|ready")
        sent = [0]

        def writer():
            for i in range(n):
                f.proc.stdin.write((filt(v, "0000000000000001", "0000000000000002",
                                         "data-line", "%05d%s" % (i, line)) + "\n").encode())
                sent[0] = i + 1
            f.proc.stdin.flush()
        t = threading.Thread(target=writer, daemon=True)
        t.start()
        time.sleep(1.5)
        # 30 MB offered; the pipes hold a little, our output buffer about 1 MB
        assert sent[0] < n, "the filter took all %d lines without writing any" % n
        before = rss_kb(f.proc.pid)
        time.sleep(0.5)
        after = rss_kb(f.proc.pid)
        assert after - before < 8192, "RSS grew %d kB while blocked" % (after - before)
        f.start_reading()
        f.expect(*REGISTER)
        for i in range(n):
            want = dataline(v, "0000000000000001", "0000000000000002", "%05d%s" % (i, line))
            got = f.take(timeout=20)
            if got != want:
                raise AssertionError("line %d: got %r, want %r" % (i, got[:80], want[:80]))
        t.join(10)
        f.close()
    finally:
        f.kill()


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError("no sample %s in:\n%s" % (name, text))


def case_metrics():
    """--metrics (issue 29): a fail and a pass counted as requests, checks and actions;
    the session open while it lasts; promtool check metrics finds the text clean."""
    import urllib.request
    harness.ensure_packages("prometheus")
    f = Filter(extra=["--metrics", "127.0.0.1:0"])
    try:
        f.handshake("0.7")
        deadline = time.time() + 10
        while not any("metrics on 127.0.0.1:0 (port" in e for e in f.err):
            assert time.time() < deadline, "no metrics line: %r" % f.err[-5:]
            time.sleep(0.05)
        line = [e for e in f.err if "metrics on 127.0.0.1:0 (port" in e][0]
        port = int(line.split("(port ")[1].rstrip(")"))

        def scrape():
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
                return r.read().decode()
        s = "7641df9771b4ed01"
        connect(f, "0.7", s)
        f.send(filt("0.7", s, "1ef1c203cc576e5d", "mail-from", "<a@fail.test>"))
        f.expect(result("0.7", s, "1ef1c203cc576e5d", FAIL_REPLY))
        f.send(filt("0.7", s, "1ef1c203cc576e5e", "mail-from", "<b@pass.test>"))
        f.expect(result("0.7", s, "1ef1c203cc576e5e", "proceed"))
        text = scrape()
        want = {"spfkit_requests_total": 2, "spfkit_connections_total": 1,
                "spfkit_connections_open": 1, "spfkit_requests_in_flight": 0,
                'spfkit_checks_total{identity="mailfrom",result="fail"}': 1,
                'spfkit_checks_total{identity="mailfrom",result="pass"}': 1,
                'spfkit_actions_total{action="reject"}': 1,
                'spfkit_actions_total{action="prepend"}': 1}
        got = {k: metric(text, k) for k in want}
        assert got == want, "got %r, want %r" % (got, want)
        f.send(report("0.7", s, "link-disconnect"))
        deadline = time.time() + 10
        while metric(scrape(), "spfkit_connections_open") != 0:
            assert time.time() < deadline, "the session stays open after link-disconnect"
            time.sleep(0.05)
        r = subprocess.run(["promtool", "check", "metrics"], input=scrape().encode(),
                           capture_output=True)
        assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r
        f.close()
    finally:
        f.kill()


CASES = [case_metrics, case_reload, case_handshake_68, case_fail_and_pass_68, case_transactions_and_sessions_7x,
         case_forged_ar_removed, case_forged_ar_last_header, case_forged_ar_variants,
         case_forged_ar_long, case_authenticated_skipped,
         case_internal_and_local_skipped, case_null_sender_helo, case_temperror_451,
         case_log_reason_code,
         case_protocol_04_order, case_newer_version, case_hostile_lines,
         case_slow_dns_and_disconnect, case_eof_mid_check, case_smtpd_not_reading,
         case_options, case_long_sender_checked, case_u_label_sender_ascii_headers]


def main():
    failed = 0
    for case in CASES:
        t0 = time.time()
        try:
            case()
            print("ok   %s (%.2f s)" % (case.__name__, time.time() - t0))
        except Exception as e:  # keep going: report every failing case
            failed += 1
            print("FAIL %s: %s" % (case.__name__, e))
    print("%d of %d cases passed" % (len(CASES) - failed, len(CASES)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
