#!/usr/bin/env python3
"""OpenDMARC after spfkit-milter in a real Postfix, on loopback only (issue 9).

Usage: test_opendmarc.py MILTER DNSD

A private Postfix has smtpd_milters = MILTER, OpenDMARC (a private
opendmarc process with its own configuration, on a 127.0.0.1 port, never
the system service). OpenDMARC trusts only our authserv-id for SPF
(TrustedAuthservIDs = mx.test, SPFIgnoreResults false, SPFSelfValidate
false) and writes its own results as dmarc.test. example.com publishes
SPF (192.0.2.0/24 only) and DMARC p=reject in the test zone; the milter
gets DNS from tests/dnsd; OpenDMARC has no setting for a DNS server and
port, so it reads the same _dmarc record from its TestDNSData file
(OpenDMARC's fake-DNS hook for test harnesses), made from the same zone
text.

Every message carries a forged `Authentication-Results: mx.test;
spf=pass smtp.mailfrom=example.com`. smtpd_milter_maps gives some client
addresses another milter list, so one Postfix serves every case:

- control, OpenDMARC alone: the forged pass fools it (dmarc=pass), which
  shows the forged header is a real threat in this setup;
- spfkit-milter, then OpenDMARC, client not allowed by SPF: the forged
  header is gone, spfkit's spf=fail is there, and OpenDMARC says
  dmarc=fail: it used spfkit's verdict, not the forged one;
- the same with OpenDMARC's RejectFailures: the message is refused (550);
- spfkit-milter, then OpenDMARC, client allowed by SPF: dmarc=pass, so
  OpenDMARC does read spfkit's header (the fail above is not an accident);
- the id written in forms OpenDMARC also reads as mx.test (issue 33
  finding 3: `mx . test`, folded, escaped, quoted, behind 17 comments...):
  each fools OpenDMARC alone, and each is refused (550) once spfkit-milter
  is in front, as the plain form is. Before the fix spfkit kept them and
  OpenDMARC passed the message.

Exit 77 only when not root; opendmarc is installed with apt-get when
missing, and failing that the test fails.
"""
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import expect  # noqa: E402

AUTHSERV_ID = "mx.test"
DMARC_ID = "dmarc.test"

DMARC_RECORDS = {"_dmarc.example.com": "v=DMARC1; p=reject; adkim=r; aspf=r"}

ZONE = """$TTL 300
example.com.       TXT "v=spf1 ip4:192.0.2.0/24 -all exp=why.example.com"
why.example.com.   TXT "%{i} is not one of %{d}'s designated mail servers"
""" + "".join('%s. TXT "%s"\n' % kv for kv in DMARC_RECORDS.items())

# the milter adds a header on fail (no reject): OpenDMARC must get to judge
CONF = harness.milter_conf(AUTHSERV_ID, "127.0.0.0/8,::1", reject="False")

OPENDMARC_CONF = """# a private OpenDMARC for the spfkit tests
Socket inet:{port}@127.0.0.1
Background false
PidFile {dir}/{name}.pid
AuthservID {dmarc_id}
TrustedAuthservIDs {id}
SPFIgnoreResults false
SPFSelfValidate false
RejectFailures {reject}
RequiredHeaders false
SoftwareHeader false
FailureReports false
Syslog false
TestDNSData {dir}/dmarc-dns
"""

FORGED_AR = "Authentication-Results: mx.test; spf=pass smtp.mailfrom=example.com"

# Our id as OpenDMARC 1.4.2's tokenizer also reads it: it joins the parts
# around a dot, and drops white space, quote marks, backslashes and
# comments at any depth (issue 33 finding 3; the first six are the
# issue's). Forms only other readers accept are in tests/mta/test_header_field.c.
VARIANTS = [
    ("spaces around the dot", "mx . test"),
    ("a fold after the dot", "mx.\r\n test"),
    ("an escaped dot", "mx\\.test"),
    ("an escaped letter", "m\\x.test"),
    ("a quoted label", 'mx."test"'),
    ("17 nested comments", "(" * 17 + "c" + ")" * 17 + " mx.test"),
    ("two quoted labels", '"mx"."test"'),
    ("a comment after the dot", "mx.(c)test"),
    ("an empty quoted string in a label", 'mx.te""st'),
]

CONTROL_IP = "203.0.113.5"     # OpenDMARC alone
FAIL_IP = "198.51.100.7"        # spfkit, OpenDMARC (headers)
REJECT_IP = "198.51.100.8"      # spfkit, OpenDMARC (RejectFailures)
PASS_IP = "192.0.2.10"          # spfkit, OpenDMARC (headers)


def ensure_opendmarc():
    if shutil.which("opendmarc") or os.path.exists("/usr/sbin/opendmarc"):
        return
    harness.apt_install("opendmarc")
    expect(os.path.exists("/usr/sbin/opendmarc"),
           "opendmarc installed, /usr/sbin/opendmarc missing")


class OpenDMARC:
    def __init__(self, cleanup, tmp, name, reject):
        self.name = name
        self.port = harness.free_port()
        conf = tmp.write(name + ".conf", OPENDMARC_CONF.format(
            port=self.port, dir=tmp.path, name=name, dmarc_id=DMARC_ID, id=AUTHSERV_ID,
            reject="true" if reject else "false"))
        self.log_path = os.path.join(tmp.path, name + ".log")
        self.log_file = open(self.log_path, "w")
        opendmarc = shutil.which("opendmarc") or "/usr/sbin/opendmarc"
        self.proc = subprocess.Popen([opendmarc, "-f", "-c", conf], stdout=self.log_file,
                                     stderr=subprocess.STDOUT)
        cleanup.push(lambda: (harness.stop_process(self.proc), self.log_file.close()))
        harness.wait_listening(self.port, 15, self.proc, "opendmarc " + name)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()


def results(message, authserv_id):
    return [v for v in harness.header_values(message, "Authentication-Results")
            if v.split(";", 1)[0].strip().lower() == authserv_id]


def run(cases, pf, sink):
    def send(tag, ip, forged=FORGED_AR):
        return harness.session(pf.smtp, "client.unknown.test", "alice@example.com", tag,
                               client_ip=ip, extra_headers=[forged],
                               from_header="Alice <alice@example.com>")

    def control():
        stage, code, msg = send("control", CONTROL_IP)
        expect(code == 250, "got %d %s at %s, want 250" % (code, msg, stage))
        m = sink.wait("spfkit e2e control")
        dm = results(m, DMARC_ID)
        expect(len(dm) == 1 and "dmarc=pass" in dm[0],
               "OpenDMARC alone should be fooled by the forged A-R (dmarc=pass), got %r\n%s"
               % (dm, harness.show_headers(m)))

    def forged_fail():
        stage, code, msg = send("forgedfail", FAIL_IP)
        expect(code == 250, "got %d %s at %s, want 250" % (code, msg, stage))
        m = sink.wait("spfkit e2e forgedfail")
        spf = results(m, AUTHSERV_ID)
        expect(len(spf) == 1 and "spf=fail" in spf[0].lower(),
               "want only spfkit's spf=fail as %s, got %r" % (AUTHSERV_ID, spf))
        dm = results(m, DMARC_ID)
        expect(len(dm) == 1 and "dmarc=fail" in dm[0] and "example.com" in dm[0],
               "OpenDMARC did not use spfkit's fail: got %r\n%s" % (dm, harness.show_headers(m)))

    def forged_reject():
        stage, code, msg = send("forgedreject", REJECT_IP)
        expect(code == 550 and stage == "data",
               "OpenDMARC (RejectFailures) after spfkit: got %d %s at %s, want 550 at DATA"
               % (code, msg, stage))
        expect("example.com" in msg, "reject text does not name example.com: %r" % msg)

    def spf_pass():
        stage, code, msg = send("spfpass", PASS_IP)
        expect(code == 250, "got %d %s at %s, want 250" % (code, msg, stage))
        m = sink.wait("spfkit e2e spfpass")
        spf = results(m, AUTHSERV_ID)
        expect(len(spf) == 1 and "spf=pass" in spf[0].lower(),
               "want only spfkit's spf=pass as %s, got %r" % (AUTHSERV_ID, spf))
        dm = results(m, DMARC_ID)
        expect(len(dm) == 1 and "dmarc=pass" in dm[0],
               "OpenDMARC did not see spfkit's pass: got %r\n%s" % (dm, harness.show_headers(m)))

    def variant(tag, form):
        forged = "Authentication-Results: %s; spf=pass smtp.mailfrom=example.com" % form
        stage, code, msg = send(tag + "alone", CONTROL_IP, forged)
        expect(code == 250, "got %d %s at %s, want 250" % (code, msg, stage))
        m = sink.wait("spfkit e2e %salone" % tag)
        dm = results(m, DMARC_ID)
        expect(len(dm) == 1 and "dmarc=pass" in dm[0],
               "OpenDMARC alone does not take %r for %s (no dmarc=pass): %r\n%s"
               % (form, AUTHSERV_ID, dm, harness.show_headers(m)))
        stage, code, msg = send(tag + "reject", REJECT_IP, forged)
        expect(code == 550 and stage == "data",
               "forged %r passed spfkit: OpenDMARC (RejectFailures) gave %d %s at %s, "
               "want 550 at DATA" % (form, code, msg, stage))

    cases.run("control: OpenDMARC alone is fooled by a forged spf=pass", control)
    cases.run("spfkit then OpenDMARC: forged pass removed, dmarc=fail", forged_fail)
    cases.run("spfkit then OpenDMARC RejectFailures: 550 at DATA", forged_reject)
    cases.run("spfkit then OpenDMARC: SPF pass gives dmarc=pass", spf_pass)
    for i, (name, form) in enumerate(VARIANTS):
        cases.run("forged id with %s fools OpenDMARC alone; after spfkit, 550" % name,
                  lambda tag="variant%d" % i, form=form: variant(tag, form))


def main():
    milter_bin, dnsd_bin = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])

    def body(cases, cleanup, tails):
        dmarcs = []
        ensure_opendmarc()
        tmp = harness.TempDir(cleanup, "spfkit-mta-opendmarc-")
        tmp.write("dmarc-dns", "".join("%s %s\n" % kv for kv in DMARC_RECORDS.items()))
        dns = harness.Dnsd(cleanup, tmp, dnsd_bin, ZONE)
        milter = harness.Milter(cleanup, tmp, milter_bin, CONF, dns.port,
                                receiver="mx.receiver.test")
        tails.append(("milter log", milter.log, 3000))
        dmarcs.append(OpenDMARC(cleanup, tmp, "opendmarc", reject=False))
        dmarcs.append(OpenDMARC(cleanup, tmp, "opendmarc-reject", reject=True))
        tails.extend((d.name + " log", d.log, 2000) for d in dmarcs)
        spf = "inet:127.0.0.1:%d" % milter.port
        dm = "inet:127.0.0.1:%d" % dmarcs[0].port
        dm_reject = "inet:127.0.0.1:%d" % dmarcs[1].port
        milter_map = ("%s/32 %s\n%s/32 %s, %s\n"
                      % (CONTROL_IP, dm, REJECT_IP, spf, dm_reject))
        sink = harness.Sink(cleanup)
        pf = harness.Postfix(cleanup, tmp, sink.port,
                             "smtpd_milters = %s, %s\n" % (spf, dm) +
                             "smtpd_milter_maps = cidr:{dir}/milter_map\n",
                             files={"milter_map": milter_map})
        tails.insert(0, ("postfix maillog", pf.log, 4000))
        run(cases, pf, sink)
        cases.run("the OpenDMARC instances listen on their loopback ports only",
                  lambda: [harness.expect_listeners(d.proc.pid, ["127.0.0.1:%d" % d.port], d.name)
                           for d in dmarcs])
        cases.run("milter exits cleanly on SIGTERM", milter.stop)

    return harness.run_main("postfix+milter+opendmarc", body)


if __name__ == "__main__":
    sys.exit(main())
