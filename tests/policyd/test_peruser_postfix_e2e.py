#!/usr/bin/env python3
"""Per-user settings (issue 29) through a real Postfix: one transaction,
two recipients of opposite settings, with a policyd-spf.peruser(5) file
written as policyd-spf reads it.

Usage: test_peruser_postfix_e2e.py /path/to/spfkit-policyd /path/to/dnsd

The main file never rejects (Mail_From_reject = False); Per_User's file
makes strict@receiver.test reject on fail and keeps lenient@ lenient.
A forged sender (its domain's SPF fails for the client) sends one message
to both, in both orders: strict@ gets 550 5.7.23 at RCPT, lenient@ 250,
and the message, delivered to lenient@ only, carries one Received-SPF:
fail. A recipient the file does not name gets the main file's settings.
Then the file is changed and SIGHUP reloads it; a broken file is refused
at reload and the running settings keep serving. Daemon form (inet) and
spawn form (as policyd-spf runs), each on a private Postfix on 127.0.0.1
(tests/policyd/test_postfix_e2e.py's). Exit 77 when not root.
"""
import os
import shutil
import signal
import smtplib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mta"))
import test_postfix_e2e as e2e  # noqa: E402  (reads the same argv)
from harness import Cleanup, Sink, dnsd_port, ensure_postfix, expect, free_port  # noqa: E402

CONF = """debugLevel = 1
Mail_From_reject = False
HELO_reject = False
Per_User = text,{users}
"""

# policyd-spf.peruser(5)'s format, as policyd-spf reads it
USERS = """# recipient,Name=Value|Name=Value
strict@receiver.test,Mail_From_reject=Fail|PermError_reject=True
lenient@receiver.test,Mail_From_reject=False|TempError_Defer=False
"""


def two_recipients(port, client_ip, sender, rcpts, tag):
    """One transaction to each of rcpts; the RCPT replies and DATA's (None: no DATA)."""
    s = smtplib.SMTP("127.0.0.1", port, timeout=60)
    try:
        s.ehlo("tester.localhost")
        code, msg = s.docmd("XCLIENT", "ADDR=%s NAME=[UNAVAILABLE]" % client_ip)
        expect(code == 220, "XCLIENT refused: %d %s" % (code, msg))
        s.ehlo_resp = s.helo_resp = None
        s.ehlo("client.unknown.test")
        code, msg = s.mail(sender)
        expect(code == 250, "MAIL: %d %s" % (code, msg))
        replies = [s.rcpt(r) for r in rcpts]
        data = None
        if any(code == 250 for code, _ in replies):
            data = s.data(b"Subject: %s\r\nFrom: %s\r\n\r\nhello\r\n" % (tag.encode(),
                                                                       sender.encode()))
        return [(c, m.decode()) for c, m in replies], data
    finally:
        try:
            s.quit()
        except smtplib.SMTPException:
            pass


def run_cases(pf, sink, form, users_path, reload_fn):
    results = []
    case = e2e.recorder(results, form)

    def opposite(order, tag):
        rcpts = ["%s@receiver.test" % who for who in order]
        replies, data = two_recipients(pf.smtp, "198.51.100.7", "alice-%s@example.com" % tag,
                                       rcpts, tag)
        for (code, msg), who in zip(replies, order):
            if who == "strict":
                expect(code == 550 and "5.7.23" in msg, "strict@: got %d %s, want 550 5.7.23"
                       % (code, msg))
            else:
                expect(code == 250, "%s@: got %d %s, want 250" % (who, code, msg))
        expect(data is not None and data[0] == 250, "DATA: %r" % (data,))
        m = sink.wait(tag)
        expect(m.count("Received-SPF: fail") == 1, "want one Received-SPF: fail in %r" % m[:800])

    case("strict@ then lenient@: 550 and 250, one Received-SPF: fail",
         lambda: opposite(["strict", "lenient"], "%s-sl" % form))
    case("lenient@ then strict@: 250 and 550, one Received-SPF: fail",
         lambda: opposite(["lenient", "strict"], "%s-ls" % form))
    case("a recipient not in the file gets the main settings",
         lambda: opposite(["bob", "strict"], "%s-bs" % form))
    # both accepted, under different settings: still one header for the message
    case("bob@ and lenient@ both accepted: one Received-SPF: fail",
         lambda: opposite(["bob", "lenient"], "%s-bl" % form))

    if reload_fn is None:
        return results

    def reloaded():
        with open(users_path, "w") as f:
            f.write(USERS.replace("lenient@receiver.test,Mail_From_reject=False",
                                  "lenient@receiver.test,Mail_From_reject=Fail"))
        reload_fn()
        replies, _ = two_recipients(pf.smtp, "198.51.100.7", "alice-r@example.com",
                                    ["lenient@receiver.test"], "reload")
        expect(replies[0][0] == 550, "after SIGHUP lenient@ rejects: got %r" % (replies,))

    def broken_kept():
        with open(users_path, "w") as f:
            f.write("lenient@receiver.test Mail_From_reject=False\n")  # no ','
        reload_fn()
        replies, _ = two_recipients(pf.smtp, "198.51.100.7", "alice-b@example.com",
                                    ["lenient@receiver.test"], "broken")
        expect(replies[0][0] == 550, "a broken file replaced the running one: %r" % (replies,))

    case("SIGHUP reads the changed file", reloaded)
    case("a broken file at SIGHUP keeps the running settings", broken_kept)
    return results


def main():
    if os.geteuid() != 0:
        print("skipped: needs root to run a private Postfix")
        return e2e.SKIP
    ensure_postfix()
    root = tempfile.mkdtemp(prefix="spfkit-peruser-e2e-")
    os.chmod(root, 0o755)  # the spawned service runs as nobody and reads both files
    procs, instances, results = [], [], []
    cleanup = Cleanup()
    sink = Sink(cleanup)
    log_path = os.path.join(root, "policyd.log")
    try:
        e2e.POLICYD = os.path.join(root, "spfkit-policyd")
        shutil.copy2(e2e.BUILT_POLICYD, e2e.POLICYD)
        os.chmod(e2e.POLICYD, 0o755)
        zone = os.path.join(root, "zone")
        users = os.path.join(root, "userconf")
        conf = os.path.join(root, "policyd-spf.conf")
        for path, text in ((zone, e2e.ZONE), (users, USERS), (conf, CONF.format(users=users))):
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o644)
        port_file = os.path.join(root, "dns.port")
        dnsd = subprocess.Popen([e2e.DNSD, "--zone", zone, "--port", "0", "--port-file",
                                 port_file], stdout=subprocess.DEVNULL)
        procs.append(dnsd)
        dns_port = dnsd_port(dnsd, port_file)

        ppolicy = free_port()
        log = open(log_path, "w")
        daemon = subprocess.Popen([e2e.POLICYD, "--dns", "127.0.0.1:%d" % dns_port, "--log",
                                   "stderr", "--listen", "inet:127.0.0.1:%d" % ppolicy, conf],
                                  stdout=subprocess.DEVNULL, stderr=log)
        procs.append(daemon)
        time.sleep(0.3)

        def reload_daemon():
            n = open(log_path).read().count("reload")
            daemon.send_signal(signal.SIGHUP)
            deadline = time.time() + 10
            while open(log_path).read().count("reload") == n and time.time() < deadline:
                time.sleep(0.05)

        pf = e2e.Postfix(root, "inet:127.0.0.1:%d" % ppolicy, dns_port,
                         sink.server_address[1], conf)
        instances.append(pf)
        results += run_cases(pf, sink, "daemon", users, reload_daemon)
        log_text = open(log_path).read()
        expect_line = "userconf:1: error: 'lenient@receiver.test Mail_From_reject=False' is not"
        results.append((expect_line in log_text,
                        "daemon: the broken file's error is logged with its line"))
        pf.stop()

        with open(users, "w") as f:
            f.write(USERS)
        pf = e2e.Postfix(root, "unix:private/policyd-spf", dns_port, sink.server_address[1],
                         conf)
        instances.append(pf)
        results += run_cases(pf, sink, "spawn", users, None)
        pf.stop()
    except Exception as e:
        results.append((False, "setup: %s" % e))
    finally:
        e2e.finish(results, instances, procs, cleanup, root, logs=(log_path,))
    return e2e.summary(results)


if __name__ == "__main__":
    sys.exit(main())
