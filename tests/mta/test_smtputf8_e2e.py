#!/usr/bin/env python3
"""SMTPUTF8 mail from a U-label sender domain through a real Postfix (RFC 8616,
issue 30), on loopback only.

Usage: test_smtputf8_e2e.py POLICYD MILTER DNSD

One private Postfix (tests/mta/harness.py) with SMTPUTF8 on, its mail
relayed to the harness's sink, which offers SMTPUTF8 too (else Postfix
bounces the message). The client address, set with XCLIENT, picks the front
end: a check_client_access map sends some clients to a restriction class
that asks spfkit-policyd (inet, daemon form), smtpd_milter_maps sends others
to spfkit-milter, one to spfkit-milter then OpenDMARC, one to OpenDMARC
alone. DNS is tests/dnsd; the sender domain münchen.example publishes its
record at its A-label name, xn--mnchen-3ya.example (192.0.2.0/24 only). The
client is Python's smtplib with MAIL FROM:<user@münchen.example> SMTPUTF8.

Checks, for each front end: an authorised client's message is delivered
with Received-SPF: pass naming the sender in UTF-8, exactly as sent (RFC
6532: the message is SMTPUTF8), never in '?' bytes, and with
Authentication-Results: spf=pass smtp.mailfrom in A-labels (text for
programs stays ASCII, RFC 8616 section 3); a client the domain does not
list is refused with 550 5.7.23, the text naming the checked domain in
A-labels.

OpenDMARC (Debian's 1.4.2, trusting only our authserv-id, as in
test_opendmarc.py) after spfkit-milter takes the message (no tempfail)
and judges it. It cannot credit SPF to a U-label envelope domain whatever
the A-R says: it uses an smtp.mailfrom only when it equals the envelope
domain as sent, and then refuses anything but ASCII letters, digits, '.',
'-' and '_' in it (check_domain()) by tempfailing the message. The control
case shows that: a UTF-8 smtp.mailfrom, written by a client straight to
OpenDMARC, gets 451. That is why our A-R is ASCII.

Exit 77 only when not root; Postfix and OpenDMARC are installed when
missing (before anything starts), and failing that the test fails.
Everything started is stopped.
"""
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import expect  # noqa: E402

AUTHSERV_ID = "mx.receiver.test"
DMARC_ID = "dmarc.test"
DOMAIN = "münchen.example"
ALABEL = "xn--mnchen-3ya.example"
SENDER = "user@" + DOMAIN

ZONE = """$TTL 300
%s. TXT "v=spf1 ip4:192.0.2.0/24 -all"
""" % ALABEL

# OpenDMARC reads DMARC records from its TestDNSData file (it has no
# setting for a DNS server): the record under both forms of the name, so
# that whichever OpenDMARC asks for, the policy is there
DMARC_RECORD = "v=DMARC1; p=reject; aspf=r"
DMARC_DNS = "_dmarc.%s %s\n_dmarc.%s %s\n" % (ALABEL, DMARC_RECORD, DOMAIN, DMARC_RECORD)

# the clients, and who checks them
POLICYD_PASS, POLICYD_FAIL = "192.0.2.10", "198.51.100.7"
MILTER_PASS, MILTER_FAIL = "192.0.2.11", "198.51.100.8"
DMARC_AFTER_MILTER = "192.0.2.12"
DMARC_ALONE = "192.0.2.13"

CONF = """# policyd-spf.conf, read by spfkit-policyd and spfkit-milter alike
HELO_reject = False
Mail_From_reject = Fail
PermError_reject = False
TempError_Defer = True
Header_Type = SPF,AR
Authserv_Id = %s
skip_addresses = 127.0.0.0/8,::1
Lookup_Time = 3
""" % AUTHSERV_ID

OPENDMARC_CONF = """# a private OpenDMARC for the spfkit tests
Socket inet:{port}@127.0.0.1
Background false
PidFile {dir}/opendmarc.pid
AuthservID {dmarc_id}
TrustedAuthservIDs {id}
SPFIgnoreResults false
SPFSelfValidate false
RejectFailures false
RequiredHeaders false
SoftwareHeader false
FailureReports false
Syslog false
TestDNSData {dir}/dmarc-dns
"""


def ensure_opendmarc():
    harness.ensure_packages("opendmarc")
    expect(os.path.exists("/usr/sbin/opendmarc"), "opendmarc installed, /usr/sbin/opendmarc missing")


def session(port, client_ip, tag, rcpts=("bob@receiver.test",), extra_headers=""):
    """One SMTPUTF8 transaction from CLIENT_IP with a UTF-8 message. (stage,
    code, text) of the first refusal, or of DATA when all was accepted."""
    body = ("%sFrom: Jürgen <%s>\r\nTo: bob@receiver.test\r\n"
            "Subject: spfkit smtputf8 %s\r\nMessage-ID: <%s@tester.localhost>\r\n\r\n"
            "Grüße\r\n" % (extra_headers, SENDER, tag, tag))
    return harness.session(port, "client.unknown.test", SENDER, tag, client_ip=client_ip,
                           rcpt=rcpts, mail_options=["SMTPUTF8"], data=body.encode("utf-8"))


def ours(message, name):
    return [v for v in harness.header_values(message, name)
            if name != "Authentication-Results" or v.split(";", 1)[0].strip() == AUTHSERV_ID]


def run(cases, pf, sink):
    def delivered(tag, ip, rcpts=("bob@receiver.test",)):
        stage, code, msg = session(pf.smtp, ip, tag, rcpts)
        expect(code == 250, "got %d %s at %s, want 250" % (code, msg, stage))
        m = sink.wait("spfkit smtputf8 %s" % tag)
        expect("\ufffd" not in m and "m??nchen" not in m,
               "the delivered message is not clean UTF-8:\n%s" % harness.show_headers(m))
        return m

    def utf8_headers(m, ip):
        rspf, ar = ours(m, "Received-SPF"), ours(m, "Authentication-Results")
        want = ("pass (%s: domain of %s designates %s as permitted sender) client-ip=%s; "
                'envelope-from="%s";' % (AUTHSERV_ID, SENDER, ip, ip, SENDER))
        expect(len(rspf) == 1 and rspf[0].startswith(want),
               "want one Received-SPF starting %r, got %r" % (want, rspf))
        expect(ar == ["%s; spf=pass smtp.mailfrom=%s" % (AUTHSERV_ID, ALABEL)],
               "want our A-R with smtp.mailfrom=%s, got %r" % (ALABEL, ar))

    def refused(ip, want_stage):
        stage, code, msg = session(pf.smtp, ip, "refused-%s" % ip)
        expect(code == 550 and stage == want_stage and "5.7.23" in msg,
               "got %d %s at %s, want 550 5.7.23 at %s" % (code, msg, stage, want_stage))
        expect("%s does not designate %s as permitted sender" % (ALABEL, ip) in msg,
               "the refusal does not name %s: %r" % (ALABEL, msg))

    def policyd_pass():
        # two recipients: the policy service hands out one header per query
        m = delivered("policyd", POLICYD_PASS, ("bob@receiver.test", "carol@receiver.test"))
        utf8_headers(m, POLICYD_PASS)

    def milter_pass():
        utf8_headers(delivered("milter", MILTER_PASS), MILTER_PASS)

    def dmarc_results(m):
        return [v for v in harness.header_values(m, "Authentication-Results")
                if v.split(";", 1)[0].strip() == DMARC_ID]

    def opendmarc_after_milter():
        m = delivered("dmarc", DMARC_AFTER_MILTER)
        utf8_headers(m, DMARC_AFTER_MILTER)
        dm = dmarc_results(m)
        expect(len(dm) == 1 and "header.from=%s" % DOMAIN in dm[0],
               "OpenDMARC did not judge the message: %r\n%s" % (dm, harness.show_headers(m)))

    def opendmarc_utf8_ar_tempfails():
        forged = "Authentication-Results: %s; spf=pass smtp.mailfrom=%s\r\n" % (AUTHSERV_ID,
                                                                               DOMAIN)
        stage, code, msg = session(pf.smtp, DMARC_ALONE, "utf8ar", extra_headers=forged)
        expect(code == 451 and stage == "data",
               "OpenDMARC given a UTF-8 smtp.mailfrom: got %d %s at %s, want 451 at DATA "
               "(if OpenDMARC takes it now, mta/decision.c may write UTF-8 A-Rs again)"
               % (code, msg, stage))

    cases.run("policyd: SMTPUTF8 pass delivered, Received-SPF in UTF-8, A-R in A-labels", policyd_pass)
    cases.run("policyd: a client %s does not list: 550 5.7.23 at RCPT" % DOMAIN,
              lambda: refused(POLICYD_FAIL, "rcpt"))
    cases.run("milter: SMTPUTF8 pass delivered, Received-SPF in UTF-8, A-R in A-labels", milter_pass)
    cases.run("milter: a client %s does not list: 550 5.7.23 at MAIL FROM" % DOMAIN,
              lambda: refused(MILTER_FAIL, "mail"))
    cases.run("milter then OpenDMARC: our ASCII A-R taken, the message judged and delivered",
              opendmarc_after_milter)
    cases.run("control: OpenDMARC tempfails a message whose A-R has a UTF-8 smtp.mailfrom",
              opendmarc_utf8_ar_tempfails)


def main():
    policyd_bin, milter_bin, dnsd_bin = (os.path.abspath(a) for a in sys.argv[1:4])

    def body(cases, cleanup, tails):
        harness.ensure_postfix()
        ensure_opendmarc()
        tmp = harness.TempDir(cleanup, "spfkit-smtputf8-")
        conf = tmp.write("policyd-spf.conf", CONF)
        tmp.write("dmarc-dns", DMARC_DNS)
        dns = harness.Dnsd(cleanup, tmp, dnsd_bin, ZONE)
        ppolicy = harness.free_port()
        policyd_log = open(os.path.join(tmp.path, "policyd.log"), "w")
        policyd = subprocess.Popen([policyd_bin, "--dns", "127.0.0.1:%d" % dns.port,
                                    "--log", "stderr", "--receiver", AUTHSERV_ID,
                                    "--listen", "inet:127.0.0.1:%d" % ppolicy, conf],
                                   stdout=policyd_log, stderr=subprocess.STDOUT)
        cleanup.push(lambda: (harness.stop_process(policyd), policyd_log.close()))
        tails.extend((name, lambda name=name: harness.file_text(os.path.join(tmp.path, name)),
                      2000) for name in ("policyd.log", "opendmarc.log"))
        harness.wait_listening(ppolicy, 15, policyd, "spfkit-policyd")
        milter = harness.Milter(cleanup, tmp, milter_bin, CONF, dns.port, receiver=AUTHSERV_ID)
        tails.append(("milter log", milter.log, 3000))
        dmarc_port = harness.free_port()
        dmarc_conf = tmp.write("opendmarc.conf", OPENDMARC_CONF.format(
            port=dmarc_port, dir=tmp.path, dmarc_id=DMARC_ID, id=AUTHSERV_ID))
        dmarc_log = open(os.path.join(tmp.path, "opendmarc.log"), "w")
        dmarc = subprocess.Popen(["/usr/sbin/opendmarc", "-f", "-c", dmarc_conf],
                                 stdout=dmarc_log, stderr=subprocess.STDOUT)
        cleanup.push(lambda: (harness.stop_process(dmarc), dmarc_log.close()))
        harness.wait_listening(dmarc_port, 15, dmarc, "opendmarc")
        sink = harness.Sink(cleanup, smtputf8=True)
        spf_milter = "inet:127.0.0.1:%d" % milter.port
        dmarc_milter = "inet:127.0.0.1:%d" % dmarc_port
        files = {
            "policy_map": "%s/32 spfkit_policy\n%s/32 spfkit_policy\n" % (POLICYD_PASS, POLICYD_FAIL),
            "milter_map": "%s/32 %s\n%s/32 %s\n%s/32 %s, %s\n%s/32 %s\n"
                          % (MILTER_PASS, spf_milter, MILTER_FAIL, spf_milter,
                             DMARC_AFTER_MILTER, spf_milter, dmarc_milter, DMARC_ALONE,
                             dmarc_milter),
        }
        pf = harness.Postfix(cleanup, tmp, sink.port,
                             "smtputf8_enable = yes\n"
                             "smtpd_restriction_classes = spfkit_policy\n"
                             "spfkit_policy = check_policy_service inet:127.0.0.1:%d\n" % ppolicy +
                             "smtpd_recipient_restrictions = reject_unauth_destination,\n"
                             "    check_client_access cidr:{dir}/policy_map\n"
                             "smtpd_milters =\n"
                             "smtpd_milter_maps = cidr:{dir}/milter_map\n",
                             files=files)
        tails.insert(0, ("postfix maillog", pf.log, 4000))
        run(cases, pf, sink)
        cases.run("milter exits cleanly on SIGTERM", milter.stop)
        cases.run("policyd exits cleanly on SIGTERM",
                  lambda: expect(harness.stop_process(policyd) == 0, "policyd exit status"))

    return harness.run_main("postfix+smtputf8", body)


if __name__ == "__main__":
    sys.exit(main())
