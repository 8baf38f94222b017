#!/usr/bin/env python3
"""spfkit-smtpd-filter inside a real OpenSMTPD (issue 13): Debian 12's
opensmtpd 6.8.0p2, fetched with `apt-get download` and unpacked with
`dpkg-deb -x` into this test's folder (never installed: Debian's MTAs
conflict and Postfix must stay), running its own smtpd.conf on a
127.0.0.1 port picked here, with our filter (the sanitizer build) as
proc-exec and DNS from tests/dnsd.

  test_opensmtpd_e2e.py FILTER DNSD

Cases: a forged sender is refused 550 5.7.23 with the explanation; a
passing sender's message is delivered (to an SMTP sink on loopback) with
our header fields at the top; a DNS timeout gives 451 4.7.24; a forged
Authentication-Results carrying our authserv-id is removed and another
one kept; two transactions on one connection; a client that
authenticated (AUTH PLAIN after STARTTLS, from the test's own credentials
table) is not checked: the sender refused 550 a moment before, in the
same TLS session, is accepted and its message delivered untouched (no
Received-SPF, no Authentication-Results of ours, a forged one with our
authserv-id left in place).

TLS on Debian 12's 6.8.0p2: smtpd offers AUTH only on a TLS session, and
every handshake that needs the server's private key fails with OpenSSL 3
("EVP lib", OpenSMTPD issues #1171, #1239): the key lives in smtpd's
privilege-separated "ca" process, reached through an RSA_METHOD /
EC_KEY_METHOD that finds its key name in the ex_data of the legacy
RSA/EC_KEY copy ssl.c makes from the certificate's public key, while
OpenSSL 3 signs (and decrypts) with the provider's own copy, which has no
ex_data and no private key ("missing private key"). Key format (PKCS#8,
PKCS#1), RSA 2048/4096, ECDSA P-256/P-384, TLS 1.2 or 1.3, TLS 1.2 with
RSA key exchange (the decryption fails the same way), smtps, the legacy
provider: the same failure. A TLS 1.2 anonymous ECDH cipher suite
(server `smtp ciphers "AECDH:@SECLEVEL=0"`, the client offering only
those) uses no private key at all, so the session is TLS for smtpd
(AUTH is offered) without touching the broken path.

What smtpd does not let us move: the queue is compiled in as
/var/spool/smtpd, the control socket as /var/run/smtpd.sock and the
privilege-separation home as /var/lib/opensmtpd/empty; Debian's build
runs as the users opensmtpd and opensmtpq. The test creates what is
missing, refuses to run beside a live smtpd (the control socket answers),
and removes at the end what it created (users, folders, the socket).

Exit 77 (skipped) only when not root; a package that cannot be fetched
is a failure.
"""
import os
import pwd
import re
import shutil
import smtplib
import socket
import ssl
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mta"))
import harness  # noqa: E402  (tests/mta/harness.py: cleanup stack, dnsd, sink, headers)

FILTER = sys.argv[1]
DNSD = sys.argv[2]
ID = "mx.receiver.test"
SPOOL = "/var/spool/smtpd"
EMPTY = "/var/lib/opensmtpd/empty"
CONTROL = "/var/run/smtpd.sock"
USERS = ("opensmtpd", "opensmtpq")

ZONE = """\
pass.test.  TXT "v=spf1 ip4:127.0.0.1 -all"
fail.test.  TXT "v=spf1 ip4:192.0.2.1 -all"
"""

# Loopback is the only client here: skip_addresses must not skip it.
CONF = """\
TempError_Defer = True
TempError_Action = 451
Header_Type = SPF,AR
Authserv_Id = %s
skip_addresses = 192.0.2.255/32
""" % ID

FAIL_TEXT = ("5.7.23 Message rejected due to: fail.test does not designate 127.0.0.1 as "
             "permitted sender. Please see https://www.open-spf.org/Why?s=mfrom;"
             "id=a@fail.test;ip=127.0.0.1;r=mx.receiver.test")
# TLS 1.2 anonymous ECDH (server and client): see the top of this file
ANON_CIPHERS = "AECDH:@SECLEVEL=0"

TEMP_TEXT = ("4.7.24 Message deferred due to: DNS TXT lookup of timeout.test failed: timeout. "
             "Please see https://www.open-spf.org/Why?s=mfrom;id=a@timeout.test;"
             "ip=127.0.0.1;r=mx.receiver.test")


def fetch_opensmtpd(tmp):
    """apt-get download + dpkg-deb -x into tmp; the smtpd binary's path."""
    work = os.path.join(tmp.path, "deb")
    os.makedirs(work)
    os.chmod(work, 0o755)
    deb = harness.apt_download(work, "opensmtpd")["opensmtpd"]
    root = os.path.join(tmp.path, "root")
    subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
    smtpd = os.path.join(root, "usr", "sbin", "smtpd")
    # its libraries install normally (libevent, libssl, libdb, libpam...): only when missing
    missing = subprocess.run(["ldd", smtpd], capture_output=True, text=True).stdout
    if "not found" in missing:
        harness.ensure_packages("libevent-2.1-7", "libssl3", "libdb5.3", "libpam0g", "zlib1g",
                                "libcrypt1")
    return root, smtpd


def ensure_system(cleanup):
    """The users and folders Debian's smtpd insists on; undone at the end when ours."""
    for user in USERS:
        try:
            pwd.getpwnam(user)
        except KeyError:
            subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", EMPTY,
                            "--shell", "/usr/sbin/nologin", user], check=True)
            cleanup.push(lambda u=user: subprocess.run(["userdel", u], capture_output=True))
    for path in ("/var/lib/opensmtpd", EMPTY):
        if not os.path.isdir(path):
            os.makedirs(path)
            cleanup.push(lambda p=path: shutil.rmtree(p, ignore_errors=True))
    if os.path.exists(SPOOL):
        raise AssertionError("%s exists: another OpenSMTPD's queue; not touching it" % SPOOL)
    cleanup.push(lambda: shutil.rmtree(SPOOL, ignore_errors=True))
    if os.path.exists(CONTROL):
        try:
            socket.socket(socket.AF_UNIX).connect(CONTROL)
            raise AssertionError("an smtpd answers on %s; not starting a second" % CONTROL)
        except OSError:
            pass  # left by a killed run
    cleanup.push(lambda: os.path.exists(CONTROL) and os.unlink(CONTROL))


class Smtpd:
    def __init__(self, cleanup, tmp, smtpd, root, filter_bin, dns_port, sink_port):
        self.port = harness.free_port()
        # AUTH needs TLS (smtpd offers it only on a secure session); the
        # certificate is loaded but never signs anything (anonymous ECDH, below)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                        "-keyout", os.path.join(tmp.path, "key.pem"),
                        "-out", os.path.join(tmp.path, "cert.pem"), "-days", "2",
                        "-subj", "/CN=" + ID], check=True, capture_output=True)
        os.chmod(os.path.join(tmp.path, "key.pem"), 0o600)
        encrypt = os.path.join(root, "usr", "libexec", "opensmtpd", "encrypt")
        hashed = subprocess.run([encrypt], input="secret\n", capture_output=True, text=True,
                                check=True).stdout.strip()
        creds = tmp.write("creds", "alice %s\n" % hashed)
        fconf = tmp.write("policyd-spf.conf", CONF)
        # smtpd runs proc-exec commands through sh (system("exec ...")): the
        # filter's stderr goes to a file of ours, so a sanitizer report at its
        # exit (after smtpd's own log is closed) is still seen
        self.filter_bin = filter_bin
        self.filter_log = tmp.write("filter.log", "", mode=0o666)
        zone_dir = tmp.path
        conf = tmp.write("smtpd.conf", """\
pki {id} cert "{d}/cert.pem"
pki {id} key "{d}/key.pem"
table creds file:{creds}
admd "{id}"
smtp ciphers "{ciphers}"
filter "spf" proc-exec "{filter} --dns 127.0.0.1:{dns} --dns-timeout 500 --config {fconf} --receiver {id} 2>>{flog}"
listen on 127.0.0.1 port {port} tls pki {id} auth-optional <creds> filter "spf"
action "sink" relay host smtp://127.0.0.1:{sink}
match from any for any action "sink"
""".format(id=ID, d=zone_dir, creds=creds, filter=filter_bin, dns=dns_port, fconf=fconf,
           port=self.port, sink=sink_port, flog=self.filter_log, ciphers=ANON_CIPHERS))
        check = subprocess.run([smtpd, "-n", "-f", conf], capture_output=True, text=True)
        if check.returncode != 0:
            raise AssertionError("smtpd -n: %s%s" % (check.stdout, check.stderr))
        self.log_path = os.path.join(tmp.path, "smtpd.log")
        self.log_file = open(self.log_path, "w")
        env = dict(os.environ)
        # the filter is ours under ASan: make a report reach smtpd's log, and end it
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1")
        self.proc = subprocess.Popen([smtpd, "-d", "-f", conf], stdout=self.log_file,
                                     stderr=subprocess.STDOUT, env=env)
        cleanup.push(self.stop)
        harness.wait_listening(self.port, 20, self.proc, "smtpd")
        # the filter registers before smtpd listens, and says so on stderr
        deadline = time.time() + 10
        while not re.search(r"spfkit-smtpd-filter\[\d+\]: started", self.flog()):
            if time.time() > deadline:
                raise AssertionError("the filter did not start; smtpd log:\n" + self.log()[-2000:])
            time.sleep(0.1)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def flog(self):
        with open(self.filter_log, errors="replace") as f:
            return f.read()

    def filter_pids(self):
        """Processes running our copy of the filter (found by its path, nothing broader)."""
        pids = []
        for pid in os.listdir("/proc"):
            try:
                if pid.isdigit() and os.readlink("/proc/%s/exe" % pid) == self.filter_bin:
                    pids.append(int(pid))
            except OSError:
                pass
        return pids

    def stop(self):
        """Stop smtpd; its filter sees EOF and must exit by itself. True when it did."""
        if self.log_file.closed:
            return True
        harness.stop_process(self.proc)
        self.log_file.close()
        deadline = time.time() + 10
        while self.filter_pids() and time.time() < deadline:
            time.sleep(0.1)
        left = self.filter_pids()
        for pid in left:  # ours, found by its exact path: never leave it behind
            os.kill(pid, 9)
        return not left


def anon_tls_context():
    """TLS 1.2 with anonymous ECDH only: the one handshake 6.8.0p2 can finish
    on OpenSSL 3, since it needs no signature from smtpd's key process."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_ciphers(ANON_CIPHERS)
    return ctx


def smtp(port, helo="mx.pass.test", tls=False):
    s = smtplib.SMTP("127.0.0.1", port, local_hostname=helo, timeout=30)
    s.ehlo(helo)
    if tls:
        s.starttls(context=anon_tls_context())
        s.ehlo(helo)
    return s


def mail_from(s, sender):
    code, text = s.mail(sender)
    return code, text.decode(errors="replace")


def send(s, sender, body):
    code, text = mail_from(s, sender)
    assert code == 250, "MAIL FROM:<%s>: %d %s" % (sender, code, text)
    code, text = s.rcpt("bob@rcpt.test")
    assert code == 250, "RCPT: %d %s" % (code, text)
    code, text = s.data(body.encode())
    assert code == 250, "DATA: %d %s" % (code, text)


def main():
    harness.need_root()
    cleanup = harness.Cleanup()
    failures = []
    smtpd = None
    try:
        tmp = harness.TempDir(cleanup, "spfkit-opensmtpd-")
        root, smtpd_bin = fetch_opensmtpd(tmp)
        ensure_system(cleanup)
        # smtpd runs the filter as its own unprivileged user: a copy it can reach
        filter_bin = os.path.join(tmp.path, "spfkit-smtpd-filter")
        shutil.copy(FILTER, filter_bin)
        os.chmod(filter_bin, 0o755)
        dns = harness.Dnsd(cleanup, tmp, DNSD, ZONE, timeouts=["timeout.test"])
        sink = harness.Sink(cleanup)
        smtpd = Smtpd(cleanup, tmp, smtpd_bin, root, filter_bin, dns.port, sink.port)

        def case(name, fn):
            try:
                fn()
                print("ok   %s" % name, flush=True)
            except Exception as e:
                failures.append(name)
                print("FAIL %s: %s" % (name, e), flush=True)

        def forged():
            s = smtp(smtpd.port)
            code, text = mail_from(s, "a@fail.test")
            s.quit()
            assert (code, text) == (550, FAIL_TEXT), "got %d %r, want 550 %r" % (code, text,
                                                                                  FAIL_TEXT)

        def passed():
            s = smtp(smtpd.port)
            send(s, "b@pass.test",
                 "Authentication-Results: %s; spf=pass smtp.mailfrom=bank.example\r\n"
                 "Authentication-Results:\r\n %s;\r\n\tdkim=pass\r\n"
                 "Authentication-Results: other.example; spf=fail\r\n"
                 "Subject: pass-case\r\n\r\nhello\r\n" % (ID, ID))
            s.quit()
            m = sink.wait("Subject: pass-case")
            h = harness.headers(m)
            # ours first, above smtpd's own Received:, in the order of the configuration
            assert h[0][0] == "Received-SPF" and h[0][1].startswith(
                "pass (%s: domain of b@pass.test designates 127.0.0.1 as permitted sender)" % ID), \
                harness.show_headers(m)
            assert h[1] == ("Authentication-Results", "%s; spf=pass smtp.mailfrom=pass.test" % ID), \
                harness.show_headers(m)
            ours = [v for n, v in h if n.lower() == "authentication-results"
                    and v.lower().startswith(ID)]
            assert len(ours) == 1, "forged fields left: %r\n%s" % (ours, harness.show_headers(m))
            assert ("Authentication-Results", "other.example; spf=fail") in h, \
                harness.show_headers(m)

        def temperror():
            s = smtp(smtpd.port)
            code, text = mail_from(s, "a@timeout.test")
            s.quit()
            assert (code, text) == (451, TEMP_TEXT), "got %d %r, want 451 %r" % (code, text,
                                                                                  TEMP_TEXT)

        def authenticated():
            s = smtp(smtpd.port, tls=True)
            version, cipher = s.sock.version(), s.sock.cipher()[0]
            assert version == "TLSv1.2" and cipher.startswith("AECDH-"), (version, cipher)
            assert "auth" in s.esmtp_features, "no AUTH offered on TLS: %r" % s.esmtp_features
            # TLS alone changes nothing: still checked, still refused
            code, text = mail_from(s, "a@fail.test")
            assert (code, text) == (550, FAIL_TEXT), "TLS, not authenticated: got %d %r" % (
                code, text)
            s.rset()
            s.login("alice", "secret")
            # authenticated: not checked, the message passed through untouched,
            # Authentication-Results included (docs/opensmtpd.md)
            forged = "Authentication-Results: %s; spf=pass smtp.mailfrom=fail.test" % ID
            send(s, "a@fail.test", forged + "\r\nSubject: auth-case\r\n\r\nhello\r\n")
            s.quit()
            m = sink.wait("Subject: auth-case")
            h = harness.headers(m)
            names = [n.lower() for n, _ in h]
            assert "received-spf" not in names, harness.show_headers(m)
            ars = [v for n, v in h if n.lower() == "authentication-results"]
            assert ars == [forged.split(": ", 1)[1]], harness.show_headers(m)
            log = smtpd.log()
            assert "smtp authentication user=alice result=ok" in log, log[-2000:]
            assert "smtp tls ciphers=TLSv1.2:AECDH-" in log, log[-2000:]

        case("forged sender -> 550 5.7.23 with the explanation", forged)
        case("pass -> delivered, our fields on top, forged A-R removed", passed)
        case("temperror -> 451 4.7.24", temperror)
        case("authenticated session not checked", authenticated)
        # several transactions on one connection: a refusal, then a delivery
        def two_in_one():
            s = smtp(smtpd.port)
            code, _ = mail_from(s, "a@fail.test")
            assert code == 550, code
            s.rset()
            send(s, "c@pass.test", "Subject: second-tx\r\n\r\nx\r\n")
            s.quit()
            m = sink.wait("Subject: second-tx")
            assert harness.headers(m)[0][0] == "Received-SPF", harness.show_headers(m)
        case("two transactions on one connection", two_in_one)
        # the end: smtpd stops, the filter sees EOF and exits 0 with no report
        if not smtpd.stop():
            failures.append("filter exit")
            print("FAIL the filter did not exit within 10 s of smtpd's end (killed)")
        else:
            print("ok   the filter exited when smtpd closed its stdin")
        log, flog = smtpd.log(), smtpd.flog()
        bad = [line for line in flog.splitlines() if "Sanitizer" in line or
               "runtime error" in line or "ERROR" in line]
        if bad:
            failures.append("sanitizer")
            print("FAIL sanitizer report in the filter's stderr: %s" % bad[:5])
        if failures:
            print("smtpd log tail:\n" + log[-3000:] + "\nfilter log tail:\n" + flog[-3000:])
    finally:
        cleanup.run()
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
