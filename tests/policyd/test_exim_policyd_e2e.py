#!/usr/bin/env python3
"""Exim through spfkit-policyd, end to end (issue 13, item 2).

  test_exim_policyd_e2e.py SPFKIT_POLICYD DNSD CACHE_DIR [SPFKIT]

Debian's Exim (exim4-daemon-light, unmodified: built without SPF), fetched with `apt-get
download` and unpacked with `dpkg-deb -x` into a temporary folder by the
code of tests/compat/test_exim_e2e.py (imported, not copied: Postfix stays
installed, only Exim's missing shared libraries are installed, the
Debian-exim user is created when missing), runs with a private
configuration whose RCPT ACL is the block of the README's "Other MTAs"
(docs/exim.md repeats it word for word: checked), read from that file,
with its socket path pointed at this test's folder. The real
spfkit-policyd serves that UNIX socket, with DNS from tests/dnsd on
127.0.0.1 (Exim itself asks no DNS here: host_lookup and ident are off).
SMTP sessions use `exim -bs -oMa ADDR`, so Exim sees the client address
each case needs.

Checks: a forged sender gets the daemon's 550 5.7.23 with the record's
explanation; an authorised one is delivered with Received-SPF at the top,
once for two recipients; a DNS timeout gives the daemon's 451 4.7.24. When
the daemon does not answer, the stanza defers (451 4.3.5) and Exim logs
it: the daemon stopped with SIGSTOP (silent: the ACL's whole timeout goes
by, shortened to 3 s for this case), not running (no socket), and a server that closes without a reply;
the stanza's commented alternative, put in place of its "defer", accepts
instead. The stanza's timeout must be above the daemon's default
--time-limit (from its --help). The daemon must exit cleanly (it is the
sanitizer build's). Given SPFKIT, the `${run}` example of docs/exim.md
(`spfkit check --format exim` per message, also read from the file) is run
through the same Exim: forged -> 550, pass -> header, DNS timeout -> 451,
null sender -> postmaster@HELO.

Nothing depends on how fast the machine is: DNS answers have 10 s
(Lookup_Time, the CLI's --timeout) where they take milliseconds; the one
name that must time out (slow.example) is one dnsd never answers; the
silent daemon is a stopped one, not a slow one.

Exit 77 (skipped) when not root, or when the packages cannot be downloaded.
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "compat"))
sys.dont_write_bytecode = True  # nothing written into the source tree
import test_exim_e2e as eximdeb  # noqa: E402  (download, unpack, libraries, user)

SKIP = 77
# Exim without SPF support (issue 13): light does not link libspf2, so the
# policy daemon is all the SPF it has
EXIM_DAEMON = "exim4-daemon-light"
DOC = os.path.join(HERE, "..", "..", "docs", "exim.md")
README = os.path.join(HERE, "..", "..", "README.md")
DOC_SOCKET = "/run/spfkit/policyd.sock"
DOC_SPFKIT = "/usr/bin/spfkit check"

ZONE = """$ORIGIN example.
$TTL 300
pass    IN TXT "v=spf1 ip4:192.0.2.0/24 -all exp=why.pass.example"
why.pass IN TXT "%{i} is not one of %{d}'s mail servers"
slow    IN TXT "v=spf1 ip4:192.0.2.0/24 -all"
"""

# docs/exim.md's settings; Lookup_Time 10 s: ample for an answer from dnsd on a
# loaded machine, and the time slow.example's temperror takes
POLICYD_CONF = """debugLevel = 1
TempError_Defer = True
TempError_Action = 451
Lookup_Time = 10
"""

CONF = eximdeb.CONF_MAIN + r"""keep_environment =
acl_smtp_rcpt = acl_rcpt

begin acl

acl_rcpt:
  deny
    !domains = +local_domains
    message = relay not permitted
@SPFKIT_ACL@
  accept
""" + eximdeb.conf_delivery(  # a fixed name per recipient: one made from $local_part is tainted
    "@ROOT@/mail/${if eq{$local_part}{other}{other}{user}}")


def marked_block(path, name):
    text = open(path).read()
    m = re.search(r"<!-- BEGIN spfkit exim %s -->\n```\n(.*?)```\n<!-- END spfkit exim %s -->"
                  % (name, name), text, re.S)
    return m.group(1) if m else None


def doc_block(name, must_hold):
    """The block NAME verbatim: the ACL from the README (issue 13), which
    docs/exim.md repeats word for word; the ${run} example from
    docs/exim.md."""
    path = README if name == "acl" else DOC
    block = marked_block(path, name)
    if block is None:
        raise SystemExit("no '%s' block in %s" % (name, path))
    if name == "acl" and marked_block(DOC, name) != block:
        raise SystemExit("the ACL of %s differs from the README's" % DOC)
    if must_hold not in block:
        raise SystemExit("the '%s' block of %s has no %s" % (name, path, must_hold))
    return block


def accept_alternative(acl):
    """The stanza with its commented "warn" put in place of the "defer"
    statement before it, as the stanza's comment tells the operator."""
    lines = acl.split("\n")
    alt = [i for i, l in enumerate(lines) if l == "  # warn"]
    if len(alt) != 1:
        raise SystemExit("the stanza has no commented '# warn' alternative")
    end = alt[0]
    while end < len(lines) and lines[end].startswith("  #"):
        end += 1
    start = max(i for i in range(alt[0]) if lines[i] == "  defer")
    uncommented = [l[:2] + l[4:] for l in lines[alt[0]:end]]
    return "\n".join(lines[:start] + uncommented + lines[end:])


def shorter_wait(acl, seconds):
    """The stanza with its readsocket timeout set to SECONDS."""
    short, n = re.subn(r"\{\d+s\}\{ \}", "{%ds}{ }" % seconds, acl)
    if n != 1:
        raise SystemExit("the stanza has %d readsocket timeouts, not one" % n)
    return short


def timeouts_agree(acl, binary):
    """The stanza waits longer than the daemon's default --time-limit: a slow
    DNS gets the daemon's answer, not the ACL's "no answer"."""
    m = re.search(r"\{(\d+)s\}\{ \}", acl)
    helptext = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    d = re.search(r"--time-limit S.*?\(default (\d+)\)", helptext, re.S)
    if m is None or d is None:
        return "no readsocket timeout in the stanza, or no --time-limit default in --help"
    if int(m.group(1)) <= int(d.group(1)):
        return "the stanza waits %s s, the daemon may take %s s" % (m.group(1), d.group(1))
    return None


class Policyd:
    def __init__(self, binary, root, dns_port):
        self.sock = os.path.join(root, "policyd.sock")
        conf = os.path.join(root, "policyd-spf.conf")
        with open(conf, "w") as f:
            f.write(POLICYD_CONF)
        cmd = [binary, "--dns", "127.0.0.1:%d" % dns_port, "--dns-timeout", "2000",
               "--listen", "unix:" + self.sock, "--socket-mode", "0666",
               "--receiver", "mx.receiver.example", "--log", "stderr", "-c", conf]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        deadline = time.time() + 10
        while not any("listening on unix:" in l for l in list(self.lines)):
            if time.time() > deadline or self.proc.poll() is not None:
                raise AssertionError("spfkit-policyd did not start:\n" + "\n".join(self.lines))
            time.sleep(0.05)

    def _read(self):
        for raw in self.proc.stderr:
            self.lines.append(raw.decode(errors="replace").rstrip("\n"))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(5)
        return self.proc.returncode


def smtp(exim, conf, addr, helo, sender, rcpts, body=True):
    """One SMTP session on Exim's stdin (-bs), the client address given by -oMa."""
    lines = ["EHLO " + helo, "MAIL FROM:<%s>" % sender]
    lines += ["RCPT TO:<%s>" % r for r in rcpts]
    if body:
        lines += ["DATA", "Subject: spfkit exim policyd e2e", "", "hello", "."]
    lines.append("QUIT")
    r = subprocess.run([exim, "-C", conf, "-bs", "-odi", "-oMa", addr],
                       input="\r\n".join(lines) + "\r\n", capture_output=True, text=True,
                       timeout=60)
    return r.stdout


def one_reply(out, code):
    """The reply with this code, its continuation lines joined as one text
    ("550-5.7.23 a" / "550 5.7.23 b" -> "550 5.7.23 a b"): Exim folds long ones."""
    lines = [l for l in out.splitlines() if re.match(code + "[- ]", l)]
    if not lines:
        return ""
    enh = re.match(code + r"[- ](\d\.\d+\.\d+ )?", lines[0]).group(1) or ""
    texts = [l[4 + len(enh):] if l[4:].startswith(enh) else l[4:] for l in lines]
    return (code + " " + enh + " ".join(t for t in texts if t)).strip()


def read(path):
    return open(path).read() if os.path.exists(path) else ""


def wanter(failures):
    """want(cond, what, detail): says ok or FAIL, and notes a failure in failures."""
    def want(cond, what, detail=""):
        print(("ok   " if cond else "FAIL ") + what + ("" if cond else ": " + detail[-2000:]))
        if not cond:
            failures.append(what)
    return want


DEFERRED_LOG = "SPF not checked: spfkit-policyd did not answer; deferred"


def smtp_deferred(want, exim, conf, mainlog, what, sender):
    """A message while the daemon does not answer: the stanza's 451 4.3.5,
    nothing accepted, and one more line in Exim's log saying why."""
    before = read(mainlog).count(DEFERRED_LOG)
    out = smtp(exim, conf, "203.0.113.5", "client.example", sender, ["user@receiver.example"])
    want(one_reply(out, "451") == "451 4.3.5 SPF check not available, please try again later",
         what + " -> 451 4.3.5", out)
    want(re.search(r"^250 OK id=", out, re.M) is None, what + " -> nothing accepted", out)
    want(read(mainlog).count(DEFERRED_LOG) == before + 1, what + " -> logged by Exim",
         read(mainlog)[-1500:])


def run_cases(exim, conf, conf_silent, root, policyd):
    failures = []
    want = wanter(failures)

    mainlog = os.path.join(root, "log", "mainlog")

    # forged: the daemon's 550 5.7.23 with the record's explanation
    out = smtp(exim, conf, "203.0.113.5", "client.example", "alice@pass.example",
               ["user@receiver.example"], body=False)
    reply = one_reply(out, "550")
    want(reply.startswith("550 5.7.23 Message rejected due to: 203.0.113.5 is not one of "
                          "pass.example's mail servers. Please see https://www.open-spf.org/Why?"
                          "s=mfrom;id=alice@pass.example;ip=203.0.113.5;"
                          "r=mx.receiver.example") and reply.endswith("r=mx.receiver.example"),
         "forged -> 550 5.7.23 with the explanation", out)

    # two messages in one session: the first one's verdict is not the second's
    lines = ["EHLO client.example", "MAIL FROM:<alice@pass.example>", "RCPT TO:<user@receiver.example>",
             "RSET", "MAIL FROM:<zed@none.example>", "RCPT TO:<user@receiver.example>", "QUIT"]
    r = subprocess.run([exim, "-C", conf, "-bs", "-odi", "-oMa", "203.0.113.5"],
                       input="\r\n".join(lines) + "\r\n", capture_output=True, text=True,
                       timeout=60)
    want(re.search(r"^550 5\.7\.23 ", r.stdout, re.M) is not None and
         re.search(r"^250 Accepted", r.stdout, re.M) is not None,
         "a second message in the session is asked afresh", r.stdout)

    # pass: delivered, Received-SPF above Exim's Received:, once for two recipients
    out = smtp(exim, conf, "192.0.2.5", "client.example", "bob@pass.example",
               ["user@receiver.example", "other@receiver.example"])
    want(re.search(r"^250 OK id=", out, re.M) is not None, "pass -> accepted", out)
    msg = read(os.path.join(root, "mail", "user"))
    spf_at = msg.find("Received-SPF: pass (mx.receiver.example: domain of bob@pass.example "
                      "designates 192.0.2.5 as permitted sender) client-ip=192.0.2.5;")
    rcvd_at = msg.find("Received: ")
    want(spf_at >= 0 and 0 <= rcvd_at and spf_at < rcvd_at,
         "pass -> Received-SPF at the top, above Received:", msg[:1000] + read(mainlog))
    want(msg.count("Received-SPF:") == 1, "pass -> one Received-SPF for two recipients",
         msg[:1000])
    want(read(os.path.join(root, "mail", "other")).count("Received-SPF: pass") == 1,
         "pass -> the second recipient's copy has it too", read(mainlog))

    # temperror: DNS times out -> the daemon's 451 4.7.24
    out = smtp(exim, conf, "192.0.2.5", "client.example", "carol@slow.example",
               ["user@receiver.example"], body=False)
    reply = one_reply(out, "451")
    want(reply.startswith("451 4.7.24 Message deferred due to: DNS TXT lookup of slow.example "
                          "failed: timeout.") and reply.endswith("r=mx.receiver.example"),
         "DNS timeout -> 451 4.7.24", out)

    # the daemon's log: one decision per message, no request cut short
    log = "\n".join(policyd.lines)
    want('mailfrom_result=fail action="550 5.7.23' in log, "policyd logged the rejection", log)
    want(log.count("from=<bob@pass.example>") == 1, "policyd asked once for two recipients",
         log)
    want("inside a request" not in log and "protocol error" not in log,
         "policyd got whole requests", log)

    # silent: the daemon stopped (SIGSTOP), so the connection is taken by the
    # kernel and nothing answers; the ACL's timeout goes by, then it defers
    # (the stanza with a shorter timeout: what it does at the end of the wait
    # does not depend on its length, and timeouts_agree() checks the length)
    os.kill(policyd.proc.pid, signal.SIGSTOP)
    try:
        smtp_deferred(want, exim, conf_silent, mainlog, "policyd silent", "erin@pass.example")
    finally:
        os.kill(policyd.proc.pid, signal.SIGCONT)

    rc = policyd.stop()
    want(rc == 0, "policyd exits cleanly (status %r)" % rc, "\n".join(policyd.lines[-20:]))
    return failures


def run_cases_down(exim, conf, conf_accept, root, sock):
    """No daemon: not running, then a server that closes without a reply;
    then the commented alternative, which accepts."""
    failures = []
    want = wanter(failures)

    mainlog = os.path.join(root, "log", "mainlog")
    mail = os.path.join(root, "mail", "user")
    if os.path.exists(mail):
        os.unlink(mail)
    want(not os.path.exists(sock), "policyd's socket removed at its exit", sock)
    smtp_deferred(want, exim, conf, mainlog, "policyd not running", "dave@pass.example")

    # a server that takes the request and closes without a word (a daemon
    # refusing it, or dying on it): an empty answer is no answer
    closer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    closer.bind(sock)
    os.chmod(sock, 0o666)
    closer.listen(8)
    closer.settimeout(60)

    def close_one():  # the message asks once
        try:
            c, _ = closer.accept()
        except OSError:
            return
        c.recv(4096)
        c.close()

    t = threading.Thread(target=close_one, daemon=True)
    t.start()
    try:
        smtp_deferred(want, exim, conf, mainlog, "empty answer", "dave@pass.example")
    finally:
        t.join(60)
        closer.close()
        os.unlink(sock)

    # the operator's choice, as documented: accepted unchecked, and logged
    out = smtp(exim, conf_accept, "203.0.113.5", "client.example", "dave@pass.example",
               ["user@receiver.example"])
    want(re.search(r"^250 OK id=", out, re.M) is not None, "accept alternative -> accepted",
         out)
    want("SPF not checked: spfkit-policyd did not answer; accepted" in read(mainlog),
         "accept alternative -> logged by Exim", read(mainlog)[-1500:])
    want("Received-SPF" not in read(mail), "accept alternative -> no header", read(mail)[:800])
    return failures


def run_cases_run(exim, conf, root):
    """docs/exim.md's ${run} example: spfkit check --format exim per message."""
    failures = []
    want = wanter(failures)

    mainlog = os.path.join(root, "log", "mainlog")
    out = smtp(exim, conf, "203.0.113.5", "client.example", "alice@pass.example",
               ["user@receiver.example"], body=False)
    want(one_reply(out, "550") == "550 5.7.23 SPF: 203.0.113.5 may not send mail for "
         "pass.example", "${run}: forged -> 550 5.7.23", out + read(mainlog)[-1500:])
    if os.path.exists(os.path.join(root, "mail", "user")):
        os.unlink(os.path.join(root, "mail", "user"))
    out = smtp(exim, conf, "192.0.2.5", "client.example", "bob@pass.example",
               ["user@receiver.example", "other@receiver.example"])
    msg = read(os.path.join(root, "mail", "user"))
    spf_at = msg.find("Received-SPF: pass (mx.receiver.example: domain of bob@pass.example "
                      "designates 192.0.2.5 as permitted sender) client-ip=192.0.2.5;")
    want(re.search(r"^250 OK id=", out, re.M) is not None and 0 <= spf_at < msg.find("Received: ")
         and msg.count("Received-SPF:") == 1,
         "${run}: pass -> delivered, one Received-SPF at the top", out + msg[:1000])
    out = smtp(exim, conf, "192.0.2.5", "client.example", "carol@slow.example",
               ["user@receiver.example"], body=False)
    want(one_reply(out, "451") == "451 4.7.24 SPF: temporary DNS error, try again later",
         "${run}: DNS timeout -> 451 4.7.24", out)
    if os.path.exists(os.path.join(root, "mail", "user")):
        os.unlink(os.path.join(root, "mail", "user"))
    out = smtp(exim, conf, "192.0.2.5", "client.example", "", ["user@receiver.example"])
    msg = read(os.path.join(root, "mail", "user"))
    want(re.search(r"^250 OK id=", out, re.M) is not None and
         "Received-SPF: none (mx.receiver.example: no SPF record found for domain of "
         "postmaster@client.example) client-ip=192.0.2.5; "
         "envelope-from=\"postmaster@client.example\"; helo=client.example;" in msg,
         "${run}: null sender (--sender=) -> postmaster@HELO checked, delivered",
         out + msg[:800])
    return failures


def main():
    policyd_bin, dnsd, cache = (os.path.abspath(a) for a in sys.argv[1:4])
    spfkit_bin = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
    if os.geteuid() != 0 or shutil.which("dpkg-deb") is None:
        print("skip: needs root and dpkg-deb")
        return SKIP
    debs = eximdeb.fetch(cache, EXIM_DAEMON)
    if debs is None:
        return 1
    root = tempfile.mkdtemp(prefix="spfkit-exim-policyd-")
    procs = []
    try:
        os.chmod(root, 0o755)
        pkgroot = os.path.join(root, "pkg")
        for deb in debs.values():
            subprocess.run(["dpkg-deb", "-x", deb, pkgroot], check=True)
        exim = os.path.join(pkgroot, "usr", "sbin", "exim4")
        missing, _ = eximdeb.missing_libs(exim, dict(os.environ))
        if missing:
            eximdeb.install_exim_libraries(EXIM_DAEMON)
            missing, _ = eximdeb.missing_libs(exim, dict(os.environ))
            if missing:
                print("FAIL: Exim's libraries missing: " + " ".join(missing))
                return 1
        _, ldd = eximdeb.missing_libs(exim, dict(os.environ))
        if "libspf2" in ldd:
            print("FAIL: %s links libspf2: not an Exim without SPF" % EXIM_DAEMON)
            return 1
        eximdeb.ensure_user()
        for d in ("spool", "log", "mail"):
            os.makedirs(os.path.join(root, d))
            shutil.chown(os.path.join(root, d), "Debian-exim", "Debian-exim")

        zone = os.path.join(root, "zone")
        port_file = os.path.join(root, "dns.port")
        with open(zone, "w") as f:
            f.write(ZONE)
        dns = subprocess.Popen([dnsd, "--zone", zone, "--port", "0", "--port-file", port_file,
                                "--timeout", "slow.example"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        procs.append(dns)
        try:
            dns_port = eximdeb.harness.dnsd_port(dns, port_file)
        except AssertionError:
            print("FAIL dnsd did not start")
            return 1

        policyd = Policyd(policyd_bin, root, dns_port)
        procs.append(policyd.proc)
        conf = os.path.join(root, "exim.conf")
        acl = doc_block("acl", DOC_SOCKET).replace(DOC_SOCKET, policyd.sock)
        with open(conf, "w") as f:
            f.write(CONF.replace("@ROOT@", root).replace("@EXIM@", exim)
                    .replace("@SPFKIT_ACL@", acl))
        t0 = time.time()
        failures = []
        problem = timeouts_agree(acl, policyd_bin)
        print(("FAIL " + problem) if problem else "ok   the stanza waits longer than --time-limit")
        if problem:
            failures.append(problem)
        conf_silent = os.path.join(root, "exim-silent.conf")
        with open(conf_silent, "w") as f:
            f.write(CONF.replace("@ROOT@", root).replace("@EXIM@", exim)
                    .replace("@SPFKIT_ACL@", shorter_wait(acl, 3)))
        failures += run_cases(exim, conf, conf_silent, root, policyd)
        conf_accept = os.path.join(root, "exim-accept.conf")
        with open(conf_accept, "w") as f:
            f.write(CONF.replace("@ROOT@", root).replace("@EXIM@", exim)
                    .replace("@SPFKIT_ACL@", accept_alternative(acl)))
        failures += run_cases_down(exim, conf, conf_accept, root, policyd.sock)
        if spfkit_bin is not None:
            # the ${run} example: the same Exim, spfkit check per message
            acl = doc_block("run", DOC_SPFKIT).replace(
                DOC_SPFKIT, "%s check --dns 127.0.0.1:%d --timeout 10000 --tries 1"
                % (spfkit_bin, dns_port))
            conf = os.path.join(root, "exim-run.conf")
            with open(conf, "w") as f:
                f.write(CONF.replace("@ROOT@", root).replace("@EXIM@", exim)
                        .replace("@SPFKIT_ACL@", acl))
            failures += run_cases_run(exim, conf, root)
        print("%d failure(s) in %.1f s" % (len(failures), time.time() - t0))
        if failures:
            for name in ("mainlog", "rejectlog", "paniclog"):
                text = read(os.path.join(root, "log", name))
                if text:
                    print("# %s:\n%s" % (name, text[-2000:]))
        return 1 if failures else 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
