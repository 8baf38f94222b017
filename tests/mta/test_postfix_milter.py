#!/usr/bin/env python3
"""spfkit-milter behind a real Postfix, end to end, on loopback only (issue 9).

Usage: test_postfix_milter.py MILTER DNSD

MILTER is spfkit-milter; it is started with spfkit-milter's command line on a
127.0.0.1 port, and a private Postfix instance (temporary main.cf and
master.cf, smtpd on another 127.0.0.1 port) has it in smtpd_milters.
DNS is tests/dnsd. XCLIENT (allowed from 127.0.0.0/8 only) makes Postfix
see the client address, HELO and SASL login each case needs; delivered
mail goes to an SMTP sink of this script, where its headers are read.

Cases: a forged MAIL FROM is refused with 550 5.7.23 and the record's
explanation; an authorised sender is delivered with the milter's
Authentication-Results above Postfix's own Received:; a DNS timeout gives
451 4.7.24; a null sender is judged by its HELO (accepted with a passing
HELO, refused with a forged one); a client-supplied Authentication-Results
with our authserv-id is gone from the delivered message (and ours is the
only one) while one with another authserv-id stays; a client in
skip_addresses and an authenticated sender are not checked (a forged
sender gets through, with no SPF verdict added). The milter must also exit
0 on SIGTERM (under the sanitizers, a leak or an error report fails the
test). Exit 77 only when not root; a Postfix that cannot be installed is a
failure.
"""
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import expect  # noqa: E402

AUTHSERV_ID = "mx.test"

ZONE = """$TTL 300
example.com.       TXT "v=spf1 ip4:192.0.2.0/24 -all exp=why.example.com"
why.example.com.   TXT "%{i} is not one of %{d}'s designated mail servers"
mx.example.com.    TXT "v=spf1 a -all"
mx.example.com.    A   192.0.2.10
slow.example.      TXT "v=spf1 -all"
"""

CONF = harness.milter_conf(AUTHSERV_ID, "127.0.0.0/8,::1,10.0.0.0/8")

# SASL on, so that XCLIENT LOGIN= makes an authenticated session (the
# milter sees {auth_authen}); the Cyrus configuration lives in the
# instance's folder and offers nothing to real clients.
MAIN_EXTRA = """
smtpd_milters = {milter}
smtpd_sasl_auth_enable = yes
smtpd_sasl_type = cyrus
smtpd_sasl_path = smtpd
cyrus_sasl_config_path = {{dir}}
"""

SASL_CONF = "pwcheck_method: auxprop\nauxprop_plugin: sasldb\nmech_list: PLAIN\n"

FORGED_IP, PASS_IP, INTERNAL_IP = "198.51.100.7", "192.0.2.10", "10.1.2.3"


def ours(value):
    return value.split(";", 1)[0].strip().lower() == AUTHSERV_ID


def spf_verdicts(message):
    """Our Authentication-Results values that carry an spf= result."""
    return [v for v in harness.header_values(message, "Authentication-Results")
            if ours(v) and "spf=" in v.lower()]


def run(cases, pf, sink):
    def forged():
        stage, code, msg = harness.session(pf.smtp, "client.unknown.test", "alice@example.com",
                                           "forged", client_ip=FORGED_IP)
        expect(code == 550, "got %d %s at %s, want 550" % (code, msg, stage))
        expect(stage in ("mail", "rcpt"), "refused at %s, want MAIL FROM (or RCPT)" % stage)
        expect("5.7.23" in msg, "no 5.7.23 in %r" % msg)
        expect("198.51.100.7 is not one of example.com's designated mail servers" in msg,
               "no explanation in %r" % msg)

    def authorised():
        stage, code, msg = harness.session(pf.smtp, "mx.example.com", "pass@example.com",
                                           "pass", client_ip=PASS_IP)
        expect(code == 250, "got %d %s at %s, want 250" % (code, msg, stage))
        m = sink.wait("spfkit e2e pass")
        verdicts = spf_verdicts(m)
        expect(len(verdicts) == 1, "want one %s spf= verdict, got %r in\n%s"
               % (AUTHSERV_ID, verdicts, harness.show_headers(m)))
        v = verdicts[0].lower()
        expect("spf=pass" in v and "smtp.mailfrom=" in v and "example.com" in v,
               "not spf=pass for smtp.mailfrom example.com: %r" % verdicts[0])
        ar = harness.first_index(m, "Authentication-Results", ours)
        rcvd = harness.first_index(m, "Received", lambda v: "mx.receiver.test" in v)
        expect(rcvd is not None, "no Received: by Postfix in\n%s" % harness.show_headers(m))
        expect(ar < rcvd, "the SPF header is below Postfix's Received:\n%s"
               % harness.show_headers(m))

    def timeout():
        t0 = time.time()
        stage, code, msg = harness.session(pf.smtp, "client.unknown.test", "x@slow.example",
                                           "slow", client_ip=PASS_IP, body=False)
        took = time.time() - t0
        expect(code == 451, "got %d %s at %s, want 451" % (code, msg, stage))
        expect("4.7.24" in msg, "no 4.7.24 in %r" % msg)
        expect(took < 20, "the DNS timeout took %.1f s (Lookup_Time = 3)" % took)

    def null_sender_pass():
        stage, code, msg = harness.session(pf.smtp, "mx.example.com", "", "nullpass",
                                           client_ip=PASS_IP)
        expect(code == 250, "null sender, HELO pass: got %d %s at %s, want 250"
               % (code, msg, stage))
        m = sink.wait("spfkit e2e nullpass")
        verdicts = spf_verdicts(m)
        expect(len(verdicts) == 1 and "spf=pass" in verdicts[0].lower()
               and "mx.example.com" in verdicts[0].lower(),
               "want one spf=pass for HELO mx.example.com, got %r" % verdicts)

    def null_sender_forged_helo():
        stage, code, msg = harness.session(pf.smtp, "mx.example.com", "", "nullfail",
                                           client_ip=FORGED_IP, body=False)
        expect(code == 550, "null sender, forged HELO: got %d %s at %s, want 550"
               % (code, msg, stage))
        expect("5.7.23" in msg, "no 5.7.23 in %r" % msg)
        expect("s=helo" in msg, "not judged by HELO: %r" % msg)

    def forged_auth_results():
        hdrs = ["Authentication-Results: mx.test; spf=pass smtp.mailfrom=forged-one.example",
                "Authentication-Results: MX.Test;\r\n\tspf=pass smtp.mailfrom=forged-two.example",
                "Authentication-Results: other.test; spf=pass smtp.mailfrom=kept.example"]
        stage, code, msg = harness.session(pf.smtp, "mx.example.com", "ar@example.com",
                                           "forgedar", client_ip=PASS_IP, extra_headers=hdrs)
        expect(code == 250, "got %d %s at %s, want 250" % (code, msg, stage))
        m = sink.wait("spfkit e2e forgedar")
        harness.expect_client_ar_gone(m, AUTHSERV_ID)
        mine = [v for v in harness.header_values(m, "Authentication-Results") if ours(v)]
        expect(len(mine) == 1 and "spf=pass" in mine[0].lower()
               and "example.com" in mine[0].lower(),
               "want exactly the milter's own %s A-R (spf=pass), got %r"
               % (AUTHSERV_ID, mine))

    def internal_host():
        stage, code, msg = harness.session(pf.smtp, "client.unknown.test", "internal@example.com",
                                           "internal", client_ip=INTERNAL_IP)
        expect(code == 250, "client in skip_addresses: got %d %s at %s, want 250"
               % (code, msg, stage))
        m = sink.wait("spfkit e2e internal")
        expect(not spf_verdicts(m), "a client in skip_addresses was checked: %r"
               % spf_verdicts(m))

    def authenticated():
        stage, code, msg = harness.session(pf.smtp, "client.unknown.test", "authed@example.com",
                                           "authed", client_ip=FORGED_IP,
                                           xclient_extra="LOGIN=alice")
        expect(code == 250, "authenticated sender: got %d %s at %s, want 250"
               % (code, msg, stage))
        m = sink.wait("spfkit e2e authed")
        expect(not spf_verdicts(m), "an authenticated sender was checked: %r" % spf_verdicts(m))
        # the session really was authenticated: Postfix says so in Received:
        rcvd = " ".join(harness.header_values(m, "Received"))
        expect("Authenticated sender" in rcvd or "ESMTPSA" in rcvd or "ESMTPA" in rcvd,
               "Postfix did not see an authenticated session: %r" % rcvd)

    cases.run("forged MAIL FROM refused with 550 5.7.23 and the explanation", forged)
    cases.run("pass delivered, SPF A-R above Postfix's Received:", authorised)
    cases.run("DNS timeout gives 451 4.7.24", timeout)
    cases.run("null sender with a passing HELO delivered, judged by HELO", null_sender_pass)
    cases.run("null sender with a forged HELO refused, judged by HELO", null_sender_forged_helo)
    cases.run("client A-R with our authserv-id removed, other id kept", forged_auth_results)
    cases.run("client in skip_addresses not checked", internal_host)
    cases.run("authenticated sender not checked", authenticated)


def main():
    milter_bin, dnsd_bin = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])

    def body(cases, cleanup, tails):
        # Cyrus SASL with at least one mechanism, or smtpd will not start
        harness.ensure_postfix()
        harness.ensure_packages("libsasl2-modules")
        tmp = harness.TempDir(cleanup, "spfkit-mta-postfix-")
        dns = harness.Dnsd(cleanup, tmp, dnsd_bin, ZONE, timeouts=["slow.example"])
        milter = harness.Milter(cleanup, tmp, milter_bin, CONF, dns.port,
                                receiver="mx.receiver.test")
        tails.append(("milter log", milter.log, 4000))
        sink = harness.Sink(cleanup)
        pf = harness.Postfix(cleanup, tmp, sink.port,
                             MAIN_EXTRA.format(milter="inet:127.0.0.1:%d" % milter.port),
                             files={"smtpd.conf": SASL_CONF})
        tails.insert(0, ("postfix maillog", pf.log, 4000))
        run(cases, pf, sink)
        cases.run("Postfix and the milter listen on their loopback ports only",
                  lambda: (harness.expect_listeners(pf.master_pid(), ["127.0.0.1:%d" % pf.smtp],
                                                    "postfix master"),
                           harness.expect_listeners(milter.proc.pid,
                                                    ["127.0.0.1:%d" % milter.port], "milter")))
        cases.run("milter exits cleanly on SIGTERM", milter.stop)

    return harness.run_main("postfix+milter", body)


if __name__ == "__main__":
    sys.exit(main())
