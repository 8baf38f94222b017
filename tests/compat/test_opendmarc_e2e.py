#!/usr/bin/env python3
"""OpenDMARC end to end on our libspf2.so.2 (issue 12).

  test_opendmarc_e2e.py OUR_LIBSPF2_SO SPFKIT DNSD

Debian's opendmarc, unmodified (installed with apt-get when missing, as is
Postfix, before the namespaces below are entered), links
libspf2 through libopendmarc.so.2 (its opendmarc_spf2_test() calls
SPF_server_new, SPF_request_*, SPF_response_result, SPF_strresult). Here a
private instance (its own configuration, a 127.0.0.1 port, never the system
service) runs with SPFSelfValidate true and SPFIgnoreResults true, so it
evaluates SPF itself, and with LD_LIBRARY_PATH at the build's
compat/libspf2 folder: `ldd` must resolve libspf2.so.2 there, and the
running process must have our file mapped (/proc/PID/maps).

It is the milter of a private Postfix (tests/mta/harness.py: Postfix on
loopback with XCLIENT, the SMTP sink, the cleanup stack). Everything runs
in a private network and mount namespace (unshare -mn): tests/dnsd answers
on 127.0.0.53:53 and /etc/resolv.conf is bind-mounted to point at it, so
both our library's SPF_DNS_RESOLV layer (servers of /etc/resolv.conf) and
OpenDMARC's own DMARC lookups (libresolv) ask dnsd; nothing outside changes.

A second instance, the control, runs the same binary on Debian's libspf2
(no LD_LIBRARY_PATH; /proc/PID/maps checked too) with authserv-id
dmarc-debian.test; Postfix passes every message through both.

For each case (pass, fail, none, permerror: a syntax error, an include
without a record, eleven DNS-querying terms, 15 DNS terms across three
includes (libspf2 #51), three void lookups) one message goes through
Postfix, and:
- `spfkit check` on the same client address, MAIL FROM and HELO against
  the same dnsd gives the case's result;
- OpenDMARC's Authentication-Results on our library (authserv-id
  dmarc.test) carries spf=<that result as OpenDMARC writes it>: OpenDMARC
  1.4.2 folds libspf2's result into four outcomes in opendmarc_spf2_test()
  (neutral, softfail, fail, permerror and "(invalid)" are all spf=fail,
  temperror is spf=tempfail), so spfkit's permerror shows as spf=fail;
- its dmarc= follows: pass when spfkit says pass (the From domain is the
  MAIL FROM domain, aligned, p=reject, no DKIM), fail otherwise;
- the result before OpenDMARC folds it: OpenDMARC's own library function
  opendmarc_spf2_test() (the one the daemon calls), called through ctypes
  in a child process in the same namespace with the same LD_LIBRARY_PATH,
  keeps SPF_strresult() of the libspf2 result: it must be spfkit's
  result word (permerror included), with our file mapped in the child;
- the control, in its header and through the same function on Debian's
  libspf2, gives the same where libspf2 agrees and libspf2's own answer
  where it does not ("(invalid)" for the syntax error, pass for #51's
  per-include limit and for the void lookups), which shows the verdicts
  above come from the library OpenDMARC loaded.

Exit 77 (skipped) when not root or without unshare.
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mta"))
import harness  # noqa: E402
from harness import expect  # noqa: E402

SKIP = 77
DMARC_ID = "dmarc.test"
DNS_ADDR = harness.PRIVATE_DNS_ADDR

# every sender domain publishes DMARC p=reject with relaxed SPF alignment
AMP_HOSTS = ["x%d.amp.example" % i for i in range(12)]
DOMAINS = {
    "pass.example": "v=spf1 ip4:192.0.2.0/24 -all",
    "nospf.example": None,
    "syntax.example": "v=spf1 ip4:192.0.2.0/24 bogus:x.example -all",
    "noinc.example": "v=spf1 include:norecord.example -all",
    "limit.example": "v=spf1 " + " ".join("a:h%d.example" % i for i in range(11)) + " -all",
    # libspf2 #51: 3 includes of 4 a: each, 15 DNS terms; libspf2 counts per record
    "amp.example": "v=spf1 include:i0.amp.example include:i1.amp.example "
                   "include:i2.amp.example -all",
    # three void lookups before the matching ip4: (libspf2 has no void limit)
    "void.example": "v=spf1 a:v1.void.example a:v2.void.example a:v3.void.example "
                    "ip4:192.0.2.0/24 -all",
}

ZONE = "$TTL 300\n" + "".join(
    ('%s. TXT "%s"\n' % (d, r) if r else "") +
    '_dmarc.%s. TXT "v=DMARC1; p=reject; adkim=r; aspf=r"\n' % d
    for d, r in DOMAINS.items()) + "norecord.example. A 192.0.2.200\n" + "".join(
    "h%d.example. A 192.0.2.%d\n" % (i, 100 + i) for i in range(11)) + "".join(
    'i%d.amp.example. TXT "v=spf1 %s -all"\n'
    % (i, " ".join("a:" + h for h in AMP_HOSTS[4 * i:4 * i + 4])) for i in range(3)) + "".join(
    "%s. A 203.0.113.%d\n" % (h, 10 + i) for i, h in enumerate(AMP_HOSTS))

# (name, client address, MAIL FROM domain, the result spfkit must give,
#  Debian's libspf2's result (its SPF_strresult() text) where it differs)
CASES = [
    ("pass", "192.0.2.10", "pass.example", "pass", None),
    ("fail", "198.51.100.7", "pass.example", "fail", None),
    ("none", "198.51.100.7", "nospf.example", "none", None),
    ("permerror: syntax error", "192.0.2.10", "syntax.example", "permerror", "(invalid)"),
    ("permerror: include without a record", "192.0.2.10", "noinc.example", "permerror", None),
    ("permerror: eleven DNS-querying terms", "198.51.100.7", "limit.example", "permerror",
     None),
    ("permerror: 15 DNS terms across includes (libspf2 #51)", "203.0.113.21", "amp.example",
     "permerror", "pass"),
    ("permerror: three void lookups", "192.0.2.10", "void.example", "permerror", "pass"),
]

# OpenDMARC 1.4.2's own projection of libspf2's result into its
# Authentication-Results (opendmarc_spf2_test() in libopendmarc, then
# mlfi_eom()): neutral, softfail, fail, permerror and "(invalid)" all
# become DMARC_POLICY_SPF_OUTCOME_FAIL, written spf=fail; temperror is
# spf=tempfail.
OPENDMARC_SPF = {"pass": "pass", "none": "none", "temperror": "tempfail", "neutral": "fail",
                 "softfail": "fail", "fail": "fail", "permerror": "fail", "(invalid)": "fail"}

HELO = "client.sender.test"

DEBIAN_ID = "dmarc-debian.test"

OPENDMARC_CONF = """# a private OpenDMARC for the spfkit tests: SPF evaluated by itself
Socket inet:{port}@127.0.0.1
Background false
PidFile {dir}/{name}.pid
AuthservID {authserv_id}
TrustedAuthservIDs {authserv_id}
SPFSelfValidate true
SPFIgnoreResults true
RejectFailures false
RequiredHeaders false
SoftwareHeader false
FailureReports false
Syslog false
"""


def libspf2_mapped(pid):
    """The libspf2 files PID has mapped."""
    with open("/proc/%d/maps" % pid) as f:
        return sorted({line.split()[-1] for line in f if "libspf2" in line})


def ar_values(message, authserv_id):
    return [v for v in harness.header_values(message, "Authentication-Results")
            if v.split(";", 1)[0].strip().lower() == authserv_id]


def method_result(values, method):
    """The results of METHOD (spf, dmarc) in A-R values."""
    out = []
    for v in values:
        for m in re.finditer(r"(?:^|;)\s*%s=([A-Za-z]+)" % method, v):
            out.append(m.group(1).lower())
    return out


def spfkit_result(spfkit, ip, sender, helo):
    r = subprocess.run([spfkit, "check", "--ip", ip, "--sender", sender, "--helo", helo,
                        "--dns", "%s:53" % DNS_ADDR, "--receiver", "mx.receiver.test",
                        "--json"], capture_output=True, text=True, timeout=60)
    try:
        return json.loads(r.stdout)["result"]
    except (ValueError, KeyError):
        raise AssertionError("spfkit check %s %s: status %d, %r %r"
                             % (ip, sender, r.returncode, r.stdout[-300:], r.stderr[-300:]))


def spf2_test_child(ip, mailfrom, helo):
    """In a child process: OpenDMARC's own opendmarc_spf2_test(), the
    function the daemon calls, from libopendmarc.so.2 with ctypes; prints
    its outcome, the SPF_strresult() text it keeps and the libspf2 file."""
    import ctypes
    lib = ctypes.CDLL("libopendmarc.so.2")
    fn = lib.opendmarc_spf2_test
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                   ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t,
                   ctypes.POINTER(ctypes.c_int)]
    human = ctypes.create_string_buffer(512)
    used = ctypes.c_int(0)
    outcome = fn(ip.encode(), mailfrom.encode(), helo.encode(), None, 0, human,
                 ctypes.sizeof(human), ctypes.byref(used))
    print(json.dumps({"outcome": outcome, "human": human.value.decode(),
                      "used_mfrom": used.value, "libspf2": libspf2_mapped(os.getpid())}))
    return 0


def libopendmarc_spf2_test(libdir, ip, sender, helo):
    """opendmarc_spf2_test() on the library LIBDIR gives (None: Debian's)."""
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    if libdir:
        env["LD_LIBRARY_PATH"] = libdir
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--spf2-test", ip,
                        "<%s>" % sender, helo], env=env, capture_output=True, text=True,
                       timeout=60)
    try:
        return json.loads(r.stdout)
    except ValueError:
        raise AssertionError("opendmarc_spf2_test child: status %d, %r %r"
                             % (r.returncode, r.stdout[-300:], r.stderr[-500:]))


class OpenDMARC:
    """A private opendmarc; LIBDIR, when given, is its LD_LIBRARY_PATH."""

    def __init__(self, cleanup, tmp, name, authserv_id, libdir=None):
        if harness.in_private_namespace():  # installed by main(), before unshare
            harness.require_ensured("opendmarc")
        self.name = name
        self.port = harness.free_port()
        conf = tmp.write(name + ".conf", OPENDMARC_CONF.format(
            port=self.port, dir=tmp.path, name=name, authserv_id=authserv_id))
        self.log_path = os.path.join(tmp.path, name + ".log")
        self.log_file = open(self.log_path, "w")
        env = dict(os.environ)
        env.pop("LD_LIBRARY_PATH", None)
        if libdir:
            env["LD_LIBRARY_PATH"] = libdir
        self.proc = subprocess.Popen(["/usr/sbin/opendmarc", "-f", "-c", conf],
                                     stdout=self.log_file, stderr=subprocess.STDOUT, env=env)
        cleanup.push(lambda: (harness.stop_process(self.proc), self.log_file.close()))
        harness.wait_listening(self.port, 15, self.proc, name)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()


def inner(ours, spfkit, dnsd):
    """Inside the namespaces: loopback up, resolv.conf at dnsd."""
    ours = os.path.realpath(ours)
    cases = harness.Cases("postfix+opendmarc on our libspf2")
    cleanup = harness.Cleanup()
    pf = None
    dms = []
    try:
        tmp = harness.TempDir(cleanup, "spfkit-opendmarc-e2e-")
        harness.private_resolver(cleanup, tmp, dnsd, ZONE)
        dm = OpenDMARC(cleanup, tmp, "opendmarc", DMARC_ID, os.path.dirname(ours))
        dms.append(dm)
        # the control: the same program on Debian's libspf2, after ours
        deb = OpenDMARC(cleanup, tmp, "opendmarc-debian", DEBIAN_ID)
        dms.append(deb)
        sink = harness.Sink(cleanup)
        pf = harness.Postfix(cleanup, tmp, sink.port,
                             "smtpd_milters = inet:127.0.0.1:%d, inet:127.0.0.1:%d\n"
                             % (dm.port, deb.port))

        def mapped():
            libs = libspf2_mapped(dm.proc.pid)
            expect(libs == [ours], "opendmarc maps %r, want only %s" % (libs, ours))
            libs = libspf2_mapped(deb.proc.pid)
            expect(len(libs) == 1 and libs[0] != ours and libs[0].startswith(("/usr/", "/lib")),
                   "the control opendmarc maps %r, want Debian's libspf2 only" % libs)
        cases.run("running opendmarc maps our libspf2.so.2 (the control: Debian's)", mapped)

        for i, (name, ip, domain, want, debian) in enumerate(CASES):
            def one(name=name, ip=ip, domain=domain, want=want, debian=debian, tag="odm%d" % i):
                sender = "alice@" + domain
                ref = spfkit_result(spfkit, ip, sender, HELO)
                expect(ref == want, "spfkit check says %s, the case expects %s" % (ref, want))
                stage, code, msg = harness.session(pf.smtp, HELO, sender, tag, client_ip=ip,
                                                   from_header="Alice <%s>" % sender)
                expect(code == 250, "got %d %s at %s, want 250" % (code, msg, stage))
                m = sink.wait("spfkit e2e %s" % tag)
                ars = ar_values(m, DMARC_ID)
                spf = method_result(ars, "spf")
                dmarc = method_result(ars, "dmarc")
                expect(spf == [OPENDMARC_SPF[ref]],
                       "OpenDMARC on our libspf2: spf=%r, want %s (spfkit check: %s)\n%s"
                       % (spf, OPENDMARC_SPF[ref], ref, harness.show_headers(m)))
                want_dmarc = "pass" if ref == "pass" else "fail"
                expect(dmarc == [want_dmarc], "OpenDMARC on our libspf2: dmarc=%r, want %s "
                       "(spf %s)\n%s" % (dmarc, want_dmarc, ref, harness.show_headers(m)))
                expect(any("header.from=%s" % domain in v for v in ars),
                       "no header.from=%s in %r" % (domain, ars))
                expect(any("smtp.mailfrom=%s" % domain in v for v in ars),
                       "no smtp.mailfrom=%s in %r" % (domain, ars))
                control = ar_values(m, DEBIAN_ID)
                dspf = method_result(control, "spf")
                expect(dspf == [OPENDMARC_SPF[debian or ref]],
                       "control on Debian's libspf2: spf=%r, want %s\n%s"
                       % (dspf, OPENDMARC_SPF[debian or ref], harness.show_headers(m)))
                # the result itself, before OpenDMARC folds it: its library's
                # opendmarc_spf2_test() keeps SPF_strresult() of our result
                t = libopendmarc_spf2_test(os.path.dirname(ours), ip, sender, HELO)
                expect(t["libspf2"] == [ours], "the opendmarc_spf2_test child maps %r"
                       % t["libspf2"])
                expect(t["human"] == ref and t["used_mfrom"] == 1,
                       "libopendmarc's opendmarc_spf2_test() on our libspf2: %r, spfkit check %s"
                       % (t, ref))
                d = libopendmarc_spf2_test(None, ip, sender, HELO)
                expect(len(d["libspf2"]) == 1 and d["libspf2"] != [ours],
                       "the control child maps %r" % d["libspf2"])
                expect(d["human"] == (debian or ref), "opendmarc_spf2_test() on Debian's "
                       "libspf2: %r, want %s" % (d["human"], debian or ref))
                print("  %s: spfkit check %s; opendmarc_spf2_test() on ours %s, on Debian's %s;"
                      " OpenDMARC on ours: %s; on Debian's libspf2: %s"
                      % (name, ref, t["human"], d["human"], " | ".join(ars), " | ".join(control)))
            cases.run("%s: OpenDMARC on our libspf2 agrees with spfkit check (%s)"
                      % (name, want), one)

        cases.run("the running opendmarc still maps our libspf2.so.2", mapped)
        cases.run("the opendmarc instances listen on their loopback ports only",
                  lambda: [harness.expect_listeners(d.proc.pid, ["127.0.0.1:%d" % d.port], d.name)
                           for d in dms])
    except Exception as e:
        cases.fail("setup", str(e))
    finally:
        if cases.failed():
            if pf is not None:
                print("---- postfix maillog (tail)\n%s" % pf.log()[-3000:])
            for d in dms:
                print("---- %s log (tail)\n%s" % (d.name, d.log()[-2000:]))
        cleanup.run()
    return cases.summary()


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--spf2-test":
        return spf2_test_child(*sys.argv[2:5])
    if len(sys.argv) == 5 and sys.argv[1] == "--inner":
        return inner(*sys.argv[2:5])
    ours, spfkit, dnsd = (os.path.abspath(a) for a in sys.argv[1:4])
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        print("skip: needs root and unshare")
        return SKIP
    # everything installed here, before the namespace: apt cannot reach its
    # mirrors from inside, where resolv.conf points at dnsd (issue 27)
    harness.ensure_postfix()
    harness.ensure_packages("opendmarc")
    # opendmarc -> libopendmarc.so.2 -> libspf2.so.2: ours by LD_LIBRARY_PATH
    libdir = os.path.dirname(ours)
    out = subprocess.run(["ldd", "/usr/sbin/opendmarc"], capture_output=True, text=True,
                         env=dict(os.environ, LD_LIBRARY_PATH=libdir)).stdout
    line = [l.strip() for l in out.splitlines() if "libspf2.so.2" in l]
    if len(line) != 1 or "=> %s " % os.path.join(libdir, "libspf2.so.2") not in line[0] + " ":
        print("FAIL ldd: opendmarc does not load our libspf2.so.2:\n" + out)
        return 1
    print("ok ldd: " + line[0])
    r = subprocess.run(["unshare", "-mn", sys.executable, os.path.abspath(__file__), "--inner",
                        ours, spfkit, dnsd], timeout=280)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
