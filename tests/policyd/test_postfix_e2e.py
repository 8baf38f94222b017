#!/usr/bin/env python3
"""A real Postfix in front of spfkit-policyd, end to end, on loopback only.

Usage: test_postfix_e2e.py /path/to/spfkit-policyd /path/to/dnsd

Installs Debian's postfix (non-interactive) when it is missing, then runs
a private Postfix instance from a temporary configuration directory with
its SMTP server on a 127.0.0.1 port, twice: with `check_policy_service`
pointing at our daemon (inet), and with the `spawn` form from master.cf,
exactly as policyd-spf is run. DNS is tests/dnsd on 127.0.0.1. The client
is Python's smtplib; XCLIENT (allowed for 127.0.0.0/8 only) makes Postfix
see the SMTP client address each case needs. Delivered mail goes to a
small SMTP sink of this script, where the headers are checked.

Checks, in both forms: a forged MAIL FROM is refused with 550 5.7.23 and
the record's explanation; an authorised sender is accepted and the
delivered message carries Received-SPF: pass; a DNS timeout gives
451 4.7.24; a null sender is judged by HELO. In daemon form, after a
SIGHUP with Header_Type = AR, the message carries Authentication-Results.
The spawn form logs to syslog (no --log), as in production, so without a
syslog daemon nothing but replies may reach Postfix. Everything started is
stopped and the temporary directory removed. Exit 77 (skipped) when not
root; a Postfix that cannot be installed is a failure. The sink, the
clean-up stack and the Postfix installer are tests/mta/harness.py's.
"""
import os
import shutil
import signal
import smtplib
import subprocess
import sys
import tempfile
import time

# The real-MTA tests' shared pieces (tests/mta/harness.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mta"))
import harness  # noqa: E402
from harness import (POSTFIX_MASTER_CF, Cleanup, Sink, ensure_postfix, expect,  # noqa: E402
                     free_port, stop_process)

POLICYD, DNSD = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
BUILT_POLICYD = POLICYD
SKIP = 77

ZONE = """$TTL 300
example.com.       TXT "v=spf1 ip4:192.0.2.0/24 -all exp=why.example.com"
why.example.com.   TXT "%{i} is not one of %{d}'s designated mail servers"
mx.example.com.    TXT "v=spf1 a -all"
mx.example.com.    A   192.0.2.10
slow.example.      TXT "v=spf1 -all"
"""

CONF = """# policyd-spf.conf, as policyd-spf reads it
debugLevel = 1
TestOnly = 1
HELO_reject = Fail
Mail_From_reject = Fail
PermError_reject = False
TempError_Defer = True
TempError_Action = 451
Lookup_Time = 3
skip_addresses = 127.0.0.0/8,::ffff:127.0.0.0/104,::1
"""


# ---- one Postfix instance -----------------------------------------------------

# harness's master.cf, plus the spawn form of the service, as policyd-spf runs
# and as an operator writes it: no --log, so the lines go to syslog at
# /dev/log, and where no syslog daemon answers there (a container: this
# test's usual host) to nobody; spawn(8) makes stderr the client's socket,
# so a line written there would come to Postfix as its answer (issue 33)
MASTER_CF = POSTFIX_MASTER_CF + """\
policyd-spf unix - n n - 0 spawn
  user=nobody argv={policyd} --dns 127.0.0.1:{dns} {conf}
"""

MAIN_CF = harness.POSTFIX_MAIN_CF_BASE + """\
smtpd_recipient_restrictions =
    reject_unauth_destination
    check_policy_service {policy}
policyd-spf_time_limit = 3600
smtpd_policy_service_timeout = 60
"""


class Postfix(harness.Postfix):
    """harness.Postfix (its log and stop) with our main.cf and the spawned service."""

    def __init__(self, root, policy, dns_port, sink_port, conf):
        # stopped by finish(), not by a Cleanup
        self.start(None, root, "postfix-" + policy.split(":")[0], MAIN_CF, MASTER_CF,
                   sink=sink_port, policy=policy, policyd=POLICYD, dns=dns_port, conf=conf)


def session(port, client_ip, helo, sender, rcpt="bob@receiver.test", body=True):
    """One SMTP transaction. Returns (code, text) of RCPT, or of DATA when sent."""
    s = smtplib.SMTP("127.0.0.1", port, timeout=60)
    try:
        s.ehlo("tester.localhost")
        code, msg = s.docmd("XCLIENT", "ADDR=%s NAME=[UNAVAILABLE]" % client_ip)
        if code != 220:
            raise AssertionError("XCLIENT refused: %d %s" % (code, msg))
        s.ehlo_resp = s.helo_resp = None
        s.ehlo(helo)
        code, msg = s.mail(sender)
        if code != 250:
            return code, msg.decode()
        code, msg = s.rcpt(rcpt)
        if code != 250 or not body:
            return code, msg.decode()
        code, msg = s.data(b"Subject: spfkit e2e\r\nFrom: %s\r\n\r\nhello\r\n" % sender.encode())
        return code, msg.decode()
    finally:
        try:
            s.quit()
        except smtplib.SMTPException:
            pass


def recorder(results, form):
    """case(name, fn): run fn, add (passed, "FORM: name[: why]") to RESULTS; keep going."""
    def case(name, fn):
        try:
            fn()
            results.append((True, "%s: %s" % (form, name)))
        except Exception as e:  # keep going: report every case
            results.append((False, "%s: %s: %s" % (form, name, e)))
    return case


def run_cases(pf, sink, form):
    results = []
    case = recorder(results, form)

    def forged():
        code, msg = session(pf.smtp, "198.51.100.7", "client.unknown.test", "alice@example.com")
        expect(code == 550, "got %d %s, want 550" % (code, msg))
        expect("5.7.23" in msg, "no 5.7.23 in %r" % msg)
        expect("198.51.100.7 is not one of example.com's designated mail servers" in msg,
               "no explanation in %r" % msg)

    def authorised():
        tag = "alice-%s@example.com" % form
        code, msg = session(pf.smtp, "192.0.2.10", "mx.example.com", tag)
        expect(code == 250, "got %d %s, want 250" % (code, msg))
        m = sink.wait(tag)
        expect("Received-SPF: pass" in m, "no Received-SPF: pass header in %r" % m[:600])
        expect("identity=mailfrom" in m, "Received-SPF is not for MAIL FROM")

    def timeout():
        code, msg = session(pf.smtp, "192.0.2.10", "client.unknown.test", "x@slow.example",
                            body=False)
        expect(code == 451, "got %d %s, want 451" % (code, msg))
        expect("4.7.24" in msg, "no 4.7.24 in %r" % msg)

    def null_sender_pass():
        code, msg = session(pf.smtp, "192.0.2.10", "mx.example.com", "", body=False)
        expect(code == 250, "null sender, HELO pass: got %d %s, want 250" % (code, msg))

    def null_sender_forged_helo():
        code, msg = session(pf.smtp, "198.51.100.7", "mx.example.com", "", body=False)
        expect(code == 550, "null sender, forged HELO: got %d %s, want 550" % (code, msg))
        expect("s=helo" in msg, "not judged by HELO: %r" % msg)

    case("forged MAIL FROM refused with 550 5.7.23 and the explanation", forged)
    case("authorised sender delivered with Received-SPF", authorised)
    case("DNS timeout gives 451 4.7.24", timeout)
    case("null sender with a passing HELO accepted", null_sender_pass)
    case("null sender with a forged HELO refused", null_sender_forged_helo)
    return results


def main():
    if os.geteuid() != 0:
        print("skipped: needs root to run a private Postfix")
        return SKIP
    ensure_postfix()  # a Postfix that cannot be installed fails the test
    root = tempfile.mkdtemp(prefix="spfkit-e2e-")
    os.chmod(root, 0o755)  # the spawned service runs as nobody and reads conf
    procs, instances, results = [], [], []
    cleanup = Cleanup()
    sink = Sink(cleanup)
    try:
        global POLICYD
        # the spawned copy runs as nobody, who may not reach the build tree
        POLICYD = os.path.join(root, "spfkit-policyd")
        shutil.copy2(BUILT_POLICYD, POLICYD)
        os.chmod(POLICYD, 0o755)
        zone = os.path.join(root, "zone")
        conf = os.path.join(root, "policyd-spf.conf")
        with open(zone, "w") as f:
            f.write(ZONE)
        with open(conf, "w") as f:
            f.write(CONF)
        os.chmod(conf, 0o644)
        port_file = os.path.join(root, "dns.port")
        dnsd = subprocess.Popen([DNSD, "--zone", zone, "--port", "0", "--port-file", port_file,
                                 "--timeout", "slow.example"], stdout=subprocess.DEVNULL)
        procs.append(dnsd)
        dns_port = harness.dnsd_port(dnsd, port_file)

        # daemon form: our service on an inet socket
        ppolicy = free_port()
        daemon = subprocess.Popen([POLICYD, "--dns", "127.0.0.1:%d" % dns_port, "--log", "stderr",
                                   "--listen", "inet:127.0.0.1:%d" % ppolicy, conf],
                                  stderr=subprocess.DEVNULL)
        procs.append(daemon)
        time.sleep(0.3)
        pf = Postfix(root, "inet:127.0.0.1:%d" % ppolicy, dns_port, sink.server_address[1], conf)
        instances.append(pf)
        results += run_cases(pf, sink, "daemon")

        # Header_Type = AR: SIGHUP the daemon, the header changes, Postfix does not notice
        def auth_results():
            with open(conf, "a") as f:
                f.write("Header_Type = AR\nAuthserv_Id = mx.receiver.test\n")
            daemon.send_signal(signal.SIGHUP)
            time.sleep(0.5)
            code, msg = session(pf.smtp, "192.0.2.10", "mx.example.com", "carol@example.com")
            expect(code == 250, "got %d %s, want 250" % (code, msg))
            m = sink.wait("carol@example.com")
            expect("Authentication-Results: mx.receiver.test; spf=pass" in m and
                   "smtp.mailfrom=example.com" in m, "no Authentication-Results in %r" % m[:600])
            with open(conf, "w") as f:
                f.write(CONF)
        try:
            auth_results()
            results.append((True, "daemon: Header_Type = AR after SIGHUP gives Authentication-Results"))
        except Exception as e:
            results.append((False, "daemon: Header_Type = AR after SIGHUP: %s" % e))
        pf.stop()

        # spawn form: Postfix runs the binary per connection, as policyd-spf
        pf = Postfix(root, "unix:private/policyd-spf", dns_port, sink.server_address[1], conf)
        instances.append(pf)
        results += run_cases(pf, sink, "spawn")
        pf.stop()
    except Exception as e:
        results.append((False, "setup: %s" % e))
    finally:
        finish(results, instances, procs, cleanup, root)
    return summary(results)


def finish(results, instances, procs, cleanup, root, logs=()):
    """Stop the Postfixes and processes main() started; on a failure, the
    tails of their logs and of LOGS (paths); then root goes."""
    for pf in instances:
        pf.stop()
    for p in procs:
        stop_process(p)
    cleanup.run()
    if any(not ok for ok, _ in results):
        for pf in instances:
            print("---- %s/maillog (tail)\n%s" % (pf.dir, pf.log()[-3000:]))
        for path in logs:
            if os.path.exists(path):
                print("---- %s (tail)\n%s" % (path, open(path).read()[-3000:]))
    shutil.rmtree(root, ignore_errors=True)


def summary(results):
    """A line a case, the count; the exit status (0: all passed)."""
    for ok, text in results:
        print("%s %s" % ("ok  " if ok else "FAIL", text))
    passed = sum(1 for r in results if r[0])
    print("%d passed, %d failed" % (passed, len(results) - passed))
    return 0 if results and passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
