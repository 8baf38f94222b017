"""Shared pieces of the real-MTA tests of spfkit-milter (issue 9).

Everything listens on 127.0.0.1, on ports picked at run time:

- Dnsd: tests/dnsd serving a zone text, with names that never answer;
- Milter: the milter under test (spfkit-milter),
  started with spfkit-milter's command line; its exit status is checked;
- Sink: a small SMTP server that keeps every delivered message;
- Postfix: a private Postfix instance (main.cf/master.cf in a temporary
  folder, smtpd on a loopback port, relayhost = the sink, XCLIENT allowed
  from 127.0.0.0/8 so the test can present any client address);
- session(): one SMTP transaction with optional XCLIENT and extra headers;
- Cases: runs named cases, keeps going after a failure, prints a summary.

Cleanup: every object registers itself with a Cleanup stack, which the
test's `finally:` (and SIGTERM, which meson sends on timeout) unwinds.
"""
import glob
import os
import shutil
import signal
import smtplib
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77

ENV = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
# Another apt or dpkg run (a test beside this one, the machine's own
# updates) holds the dpkg lock for a while: wait for it, do not fail.
APT_WAIT = ["-o", "DPkg::Lock::Timeout=600"]

# Set by SIGTERM (meson's timeout: it signals the process group, then
# sends SIGKILL 0.5 s later): stop everything at once, wait for nothing.
HURRY = False


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, timeout, proc=None, what="server"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError("%s exited with status %s before listening on 127.0.0.1:%d"
                                 % (what, proc.returncode, port))
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("%s did not listen on 127.0.0.1:%d within %d s" % (what, port, timeout))


def need_root():
    if os.geteuid() != 0:
        print("skipped: needs root to run a private MTA")
        sys.exit(SKIP)


# Issue 27: inside a private network namespace (unshare -n, ip netns exec)
# /etc/resolv.conf may point at tests/dnsd and nothing outside answers, so
# apt cannot fetch: a test that installs there passes only where the
# package happened to be installed. Every install goes first, outside;
# each call below refuses inside a namespace even when nothing is
# missing, so such a test fails on every machine, not just a fresh one.
ENSURED_ENV = "SPFKIT_TEST_ENSURED"  # what was installed before entering one
# The namespaces the test started in, as the first process to import this
# module saw them; children (unshare ... python3 test.py --inner) inherit it.
NAMESPACES_ENV = "SPFKIT_TEST_NAMESPACES"


def _namespaces():
    out = []
    for ns in ("net", "mnt"):
        try:
            out.append(os.readlink("/proc/self/ns/" + ns))
        except OSError:
            out.append(ns + ":?")
    return ",".join(out)


os.environ.setdefault(NAMESPACES_ENV, _namespaces())


def in_private_namespace():
    """Whether this process runs in a network or mount namespace other than
    the one the test started in (its first process imports this module
    before it enters any)."""
    return os.environ[NAMESPACES_ENV] != _namespaces()


def refuse_in_namespace(what):
    if in_private_namespace():
        raise AssertionError("%s inside a private namespace, where apt cannot reach its "
                             "mirrors: install before entering it (issue 27)" % what)


def mark_ensured(*packages):
    """Remember, for children entering a namespace, what is installed."""
    have = set(filter(None, os.environ.get(ENSURED_ENV, "").split(",")))
    os.environ[ENSURED_ENV] = ",".join(sorted(have | set(packages)))
    ENV[ENSURED_ENV] = os.environ[ENSURED_ENV]


def require_ensured(package):
    """Inside a namespace: PACKAGE must have been ensured before entering."""
    if package not in os.environ.get(ENSURED_ENV, "").split(","):
        raise AssertionError("%s is used inside a private namespace but was not installed "
                             "before entering it (call ensure_* first; issue 27)" % package)


def apt_install(*packages):
    """apt-get install PACKAGES (an apt-get update and a retry when it fails).
    Raises with apt's message: a missing MTA is a failure, not a skip."""
    refuse_in_namespace("apt-get install %s" % " ".join(packages))
    cmd = ["apt-get", "install", "-y", "-q", "--no-install-recommends"] + APT_WAIT + list(packages)
    r = subprocess.run(cmd, env=ENV, capture_output=True)
    if r.returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=ENV, capture_output=True)
        r = subprocess.run(cmd, env=ENV, capture_output=True)
    if r.returncode != 0:
        raise AssertionError("apt-get install %s failed: %s"
                             % (" ".join(packages), r.stderr.decode(errors="replace")[-800:]))


def apt_download(dest, *packages):
    """The .deb of each of PACKAGES in DEST, fetched with apt-get download
    when DEST has none yet (an apt-get update and a retry when it fails):
    {package: path}. For MTAs that conflict with the installed Postfix,
    unpacked with dpkg-deb -x; refused inside a namespace, like installs."""
    refuse_in_namespace("apt-get download %s" % " ".join(packages))
    os.makedirs(dest, exist_ok=True)

    def found():
        return {p: sorted(glob.glob(os.path.join(dest, p + "_*.deb"))) for p in packages}

    missing = [p for p, debs in found().items() if not debs]
    if missing:
        cmd = ["apt-get", "download"] + missing
        r = subprocess.run(cmd, cwd=dest, env=ENV, capture_output=True)
        if r.returncode != 0:
            subprocess.run(["apt-get", "update", "-q"], env=ENV, capture_output=True)
            r = subprocess.run(cmd, cwd=dest, env=ENV, capture_output=True)
        if r.returncode != 0:
            raise AssertionError("apt-get download %s failed: %s"
                                 % (" ".join(missing), r.stderr.decode(errors="replace")[-800:]))
    have = found()
    lacking = [p for p, debs in have.items() if not debs]
    if lacking:
        raise AssertionError("no .deb of %s in %s after apt-get download"
                             % (" ".join(lacking), dest))
    return {p: debs[-1] for p, debs in have.items()}


def installed(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True)
    return r.returncode == 0 and b"install ok installed" in r.stdout


def ensure_packages(*packages):
    """apt-get install those of PACKAGES that are not installed."""
    refuse_in_namespace("ensure_packages(%s)" % ", ".join(packages))
    need = [p for p in packages if not installed(p)]
    if need:
        apt_install(*need)
    mark_ensured(*packages)


def ensure_postfix():
    refuse_in_namespace("ensure_postfix()")
    if not (shutil.which("postfix") or os.path.exists("/usr/sbin/postfix")):
        if not shutil.which("apt-get"):
            raise AssertionError("postfix is not installed and there is no apt-get to "
                                 "install it")
        subprocess.run(["debconf-set-selections"], env=ENV, capture_output=True,
                       input=b"postfix postfix/main_mailer_type select No configuration\n")
        apt_install("postfix")
    mark_ensured("postfix")


class Cleanup:
    """A stack of stop functions, unwound once, also on SIGTERM."""

    def __init__(self):
        self.stack = []
        self.done = False
        signal.signal(signal.SIGTERM, self._on_term)

    def _on_term(self, signum, frame):
        global HURRY
        HURRY = True
        print("SIGTERM: stopping everything this test started", flush=True)
        self.run()
        sys.exit(1)

    def push(self, fn):
        self.stack.append(fn)

    def run(self):
        if self.done:
            return
        self.done = True
        while self.stack:
            fn = self.stack.pop()
            try:
                fn()
            except Exception as e:  # keep unwinding
                print("cleanup: %s" % e, file=sys.stderr)


def stop_process(p, timeout=10):
    """SIGTERM, then SIGKILL; returns the exit status."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(0.2 if HURRY else timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return p.returncode


class TempDir:
    def __init__(self, cleanup, prefix):
        self.path = tempfile.mkdtemp(prefix=prefix)
        os.chmod(self.path, 0o755)
        cleanup.push(lambda: shutil.rmtree(self.path, ignore_errors=True))

    def write(self, name, text, mode=0o644):
        path = os.path.join(self.path, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        return path


def dnsd_port(proc, port_file, timeout=10):
    """The port tests/dnsd (PROC) wrote to PORT_FILE once it listens;
    AssertionError when it exits first or writes none within TIMEOUT s."""
    deadline = time.time() + timeout
    while True:
        try:
            with open(port_file) as f:
                text = f.read().strip()
            if text:  # not just created
                return int(text)
        except OSError:
            pass
        if time.time() > deadline or proc.poll() is not None:
            raise AssertionError("dnsd did not start (status %s)" % proc.poll())
        time.sleep(0.02)


def start_dnsd(dnsd, folder, zone, args=(), stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL, timeout=10):
    """tests/dnsd (the program DNSD) serving ZONE, written to FOLDER/zone,
    on 127.0.0.1 with ARGS; (process, port) once it listens, or
    AssertionError with nothing left running."""
    zone_file = os.path.join(folder, "zone")
    with open(zone_file, "w") as f:
        f.write(zone)
    port_file = os.path.join(folder, "dns.port")
    proc = subprocess.Popen([dnsd, "--zone", zone_file, "--port", "0", "--port-file", port_file]
                            + list(args), stdout=stdout, stderr=stderr)
    try:
        return proc, dnsd_port(proc, port_file, timeout)
    except AssertionError:
        stop_process(proc)
        raise


class Dnsd:
    """tests/dnsd on 127.0.0.1 with ZONE; names in TIMEOUTS never answer."""

    def __init__(self, cleanup, tmp, dnsd, zone, timeouts=()):
        self.log = open(os.path.join(tmp.path, "dnsd.log"), "w")
        cleanup.push(self.log.close)
        self.proc, self.port = start_dnsd(dnsd, tmp.path, zone,
                                          [a for name in timeouts for a in ("--timeout", name)],
                                          stdout=self.log, stderr=subprocess.STDOUT)
        cleanup.push(lambda: stop_process(self.proc))


PRIVATE_DNS_ADDR = "127.0.0.53"


def private_resolver(cleanup, tmp, dnsd, zone):
    """Inside a private network and mount namespace (unshare -mn): loopback
    up, tests/dnsd serving ZONE on 127.0.0.53:53 and /etc/resolv.conf
    bind-mounted to point at it, so every program's own resolver asks it."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    resolv = tmp.write("resolv.conf", "nameserver %s\noptions timeout:2 attempts:1\n"
                       % PRIVATE_DNS_ADDR)
    subprocess.run(["mount", "--bind", resolv, "/etc/resolv.conf"], check=True)
    zone_file = tmp.write("zone", zone)
    port_file = os.path.join(tmp.path, "dns.port")
    log = open(os.path.join(tmp.path, "dnsd.log"), "w")
    proc = subprocess.Popen([dnsd, "--zone", zone_file, "--listen", PRIVATE_DNS_ADDR,
                             "--port", "53", "--port-file", port_file],
                            stdout=log, stderr=subprocess.STDOUT)
    cleanup.push(lambda: (stop_process(proc), log.close()))
    deadline = time.time() + 10
    while not os.path.exists(port_file):
        if time.time() > deadline or proc.poll() is not None:
            raise AssertionError("dnsd did not start on %s:53 (status %s)"
                                 % (PRIVATE_DNS_ADDR, proc.poll()))
        time.sleep(0.05)
    return proc


def milter_conf(authserv_id, skip_addresses, reject="Fail"):
    """spfkit-milter's configuration (policyd-spf.conf format) in the real-MTA
    tests: HELO and MAIL FROM results REJECT refuses ("False": none),
    temperror deferred, Authentication-Results as AUTHSERV_ID."""
    return """# spfkit-milter, policyd-spf.conf format
HELO_reject = {reject}
Mail_From_reject = {reject}
PermError_reject = False
TempError_Defer = True
Header_Type = AR
Authserv_Id = {id}
skip_addresses = {skip}
Lookup_Time = 3
""".format(reject=reject, id=authserv_id, skip=skip_addresses)


class Milter:
    """The milter under test, with spfkit-milter's command line, on an inet
    socket of 127.0.0.1. stop() fails the test when it did not exit cleanly
    (a sanitizer report, a crash)."""

    def __init__(self, cleanup, tmp, binary, conf_text, dns_port, name="milter",
                 receiver=None, env=None):
        self.name = name
        self.port = free_port()
        self.socket = "inet:%d@127.0.0.1" % self.port
        self.conf = tmp.write(name + ".conf", conf_text)
        self.log_path = os.path.join(tmp.path, name + ".log")
        args = [binary, "--foreground", "--socket", self.socket, "--config", self.conf,
                "--dns", "127.0.0.1:%d" % dns_port, "--log", "stderr"]
        if receiver:
            args += ["--receiver", receiver]
        self.log_file = open(self.log_path, "w")
        menv = dict(os.environ)
        menv.update(env or {})
        self.proc = subprocess.Popen(args, stdout=self.log_file, stderr=subprocess.STDOUT,
                                     env=menv)
        self.status = None
        cleanup.push(self._stop_quietly)
        wait_listening(self.port, 15, self.proc, "%s (%s)" % (name, binary))

    def log(self):
        return file_text(self.log_path)

    def _stop_quietly(self):
        if self.status is None:
            self.status = stop_process(self.proc)
            self.log_file.close()

    def stop(self):
        """Stop it; raise when it had died or did not exit 0 on SIGTERM."""
        died = self.proc.poll()
        self._stop_quietly()
        if died is not None:
            raise AssertionError("%s died during the test (status %d); log tail:\n%s"
                                 % (self.name, died, self.log()[-3000:]))
        if self.status != 0:
            raise AssertionError("%s exited with status %d on SIGTERM; log tail:\n%s"
                                 % (self.name, self.status, self.log()[-3000:]))


# ---- the delivery sink: a minimal SMTP server keeping each message ---------

class Sink(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, cleanup, smtputf8=False):
        self.messages = []
        # SMTPUTF8 offered: Postfix bounces an SMTPUTF8 message to a server without it
        self.smtputf8 = smtputf8
        super().__init__(("127.0.0.1", 0), SinkHandler)
        self.port = self.server_address[1]
        threading.Thread(target=self.serve_forever, daemon=True).start()

        def stop():
            if not HURRY:  # shutdown() waits up to 0.5 s for the serving loop
                self.shutdown()
            self.server_close()
        cleanup.push(stop)

    def wait(self, needle, timeout=30):
        """The delivered message containing NEEDLE (its headers unfolded)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            for m in list(self.messages):
                if needle in m:
                    return m
            time.sleep(0.1)
        raise AssertionError("no delivered message with %r within %d s (%d delivered)"
                             % (needle, timeout, len(self.messages)))


class SinkHandler(socketserver.StreamRequestHandler):
    def reply(self, text):
        self.wfile.write(text.encode() + b"\r\n")

    def handle(self):
        self.reply("220 sink.test ESMTP")
        while True:
            line = self.rfile.readline()
            if not line:
                return
            cmd = line.decode(errors="replace").strip().upper()
            if cmd.startswith("EHLO"):
                self.wfile.write(b"250-sink.test\r\n%s250 8BITMIME\r\n"
                                 % (b"250-SMTPUTF8\r\n" if self.server.smtputf8 else b""))
            elif cmd.startswith("DATA"):
                self.reply("354 go on")
                data = b""
                while not data.endswith(b"\r\n.\r\n"):
                    chunk = self.rfile.readline()
                    if not chunk:
                        return
                    data += chunk
                self.server.messages.append(data.decode(errors="replace"))
                self.reply("250 kept")
            elif cmd.startswith("QUIT"):
                self.reply("221 bye")
                return
            else:
                self.reply("250 ok")


def headers(message):
    """The message's header fields, unfolded, in order: [(name, value)]."""
    head = message.split("\r\n\r\n", 1)[0]
    out = []
    for line in head.split("\r\n"):
        if line[:1] in (" ", "\t") and out:
            out[-1] = (out[-1][0], out[-1][1] + " " + line.strip())
        elif ":" in line:
            name, value = line.split(":", 1)
            out.append((name.strip(), value.strip()))
    return out


def header_values(message, name):
    return [v for n, v in headers(message) if n.lower() == name.lower()]


def first_index(message, name, pred=lambda v: True):
    for i, (n, v) in enumerate(headers(message)):
        if n.lower() == name.lower() and pred(v):
            return i
    return None


def show_headers(message, limit=1500):
    return message.split("\r\n\r\n", 1)[0][:limit]


# ---- one Postfix instance -----------------------------------------------------

POSTFIX_MASTER_CF = """\
127.0.0.1:{smtp} inet n - n - - smtpd
pickup    unix  n  -  n  60   1  pickup
cleanup   unix  n  -  n  -    0  cleanup
qmgr      unix  n  -  n  300  1  qmgr
rewrite   unix  -  -  n  -    -  trivial-rewrite
bounce    unix  -  -  n  -    0  bounce
defer     unix  -  -  n  -    0  bounce
trace     unix  -  -  n  -    0  bounce
verify    unix  -  -  n  -    1  verify
flush     unix  n  -  n  1000? 0 flush
proxymap  unix  -  -  n  -    -  proxymap
smtp      unix  -  -  n  -    -  smtp
relay     unix  -  -  n  -    -  smtp
showq     unix  n  -  n  -    -  showq
error     unix  -  -  n  -    -  error
retry     unix  -  -  n  -    -  error
discard   unix  -  -  n  -    -  discard
local     unix  -  n  n  -    -  local
anvil     unix  -  -  n  -    1  anvil
scache    unix  -  -  n  -    1  scache
postlog   unix-dgram n - n - 1 postlogd
"""

# what every private Postfix here has; its users add their restrictions
POSTFIX_MAIN_CF_BASE = """\
compatibility_level = 3.6
queue_directory = {dir}/queue
data_directory = {dir}/data
mail_owner = postfix
myhostname = mx.receiver.test
mydomain = receiver.test
mydestination =
relay_domains = receiver.test
relayhost = [127.0.0.1]:{sink}
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtpd_authorized_xclient_hosts = 127.0.0.0/8
smtpd_peername_lookup = no
smtp_dns_support_level = disabled
alias_maps =
alias_database =
local_recipient_maps =
maillog_file = {dir}/maillog
maillog_file_prefixes = {dir}
"""

POSTFIX_MAIN_CF = POSTFIX_MAIN_CF_BASE + """\
smtpd_recipient_restrictions = reject_unauth_destination
milter_protocol = 6
milter_default_action = tempfail
non_smtpd_milters =
"""


class Postfix:
    """A private Postfix: smtpd on 127.0.0.1:self.smtp, mail relayed to the
    sink. EXTRA is appended to main.cf (smtpd_milters and the like)."""

    def __init__(self, cleanup, tmp, sink_port, extra, name="postfix", files=None):
        if in_private_namespace():
            require_ensured("postfix")
        else:
            ensure_postfix()
        self.start(cleanup, tmp.path, name, POSTFIX_MAIN_CF + extra, POSTFIX_MASTER_CF, files,
                   sink=sink_port)

    def start(self, cleanup, root, name, main_cf, master_cf, files=None, **fmt):
        """Make its folder ROOT/NAME, write MAIN_CF, MASTER_CF and FILES
        there, formatted with dir, smtp (smtpd's port) and FMT, start it
        (stopped by CLEANUP, when given) and wait for smtpd."""
        self.dir = os.path.join(root, name)
        os.makedirs(os.path.join(self.dir, "queue"))
        os.makedirs(os.path.join(self.dir, "data"))
        os.chmod(self.dir, 0o755)
        shutil.chown(os.path.join(self.dir, "data"), "postfix")
        self.smtp = free_port()
        fmt = dict(fmt, dir=self.dir, smtp=self.smtp)
        for fname, text in [("main.cf", main_cf), ("master.cf", master_cf)] + list(
                (files or {}).items()):
            with open(os.path.join(self.dir, fname), "w") as f:
                f.write(text.format(**fmt))
        r = subprocess.run(["postfix", "-c", self.dir, "start"], capture_output=True)
        if r.returncode != 0:
            raise AssertionError("postfix start: %s" % r.stderr.decode(errors="replace"))
        if cleanup is not None:
            cleanup.push(self.stop)
        wait_listening(self.smtp, 20, what="postfix")

    def log(self):
        return file_text(os.path.join(self.dir, "maillog"))

    def master_pid(self):
        with open(os.path.join(self.dir, "queue", "pid", "master.pid")) as f:
            return int(f.read().split()[0])

    def stop(self):
        """postfix stop, and wait for the master to be gone (its pid file
        stays behind); postfix abort when it is slow to go."""
        pid_file = os.path.join(self.dir, "queue", "pid", "master.pid")
        try:
            with open(pid_file) as f:
                pid = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return
        if HURRY:  # the master is in a session of its own: SIGTERM ends it and its children
            os.kill(pid, signal.SIGTERM)
            return
        subprocess.run(["postfix", "-c", self.dir, "stop"], capture_output=True)
        deadline = time.time() + 15
        while time.time() < deadline and pid_alive(pid):
            time.sleep(0.05)
        if pid_alive(pid):
            subprocess.run(["postfix", "-c", self.dir, "abort"], capture_output=True)
        os.unlink(pid_file)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


# ---- the SMTP client ------------------------------------------------------------

def message_text(sender, tag, extra_headers=(), from_header=None):
    lines = list(extra_headers)
    lines += ["From: %s" % (from_header or sender or "<>"),
              "To: bob@receiver.test",
              "Subject: spfkit e2e %s" % tag,
              "Message-ID: <%s@tester.localhost>" % tag,
              "", "hello from %s" % tag, ""]
    return "\r\n".join(lines).encode()


def session(port, helo, sender, tag, client_ip=None, xclient_extra="", body=True,
            extra_headers=(), from_header=None, source=None, rcpt="bob@receiver.test",
            mail_options=(), data=None):
    """One SMTP transaction. XCLIENT ADDR=CLIENT_IP when CLIENT_IP is given
    (Postfix); SOURCE binds the client socket to a loopback address (for
    MTAs without XCLIENT). RCPT is one recipient or a list; MAIL_OPTIONS
    go on MAIL FROM, each an extension the server must offer; DATA (bytes)
    is sent instead of the message_text() made from SENDER and TAG.
    Returns (stage, code, text) of the first refusal, or of DATA ("data")
    when everything was accepted; with BODY false, of RCPT ("rcpt")."""
    s = smtplib.SMTP(timeout=60, source_address=(source, 0) if source else None)
    try:
        s.connect("127.0.0.1", port)
        if client_ip is not None:
            s.ehlo("tester.localhost")
            code, msg = s.docmd("XCLIENT", ("ADDR=%s NAME=[UNAVAILABLE] %s"
                                            % (client_ip, xclient_extra)).strip())
            if code != 220:
                raise AssertionError("XCLIENT refused: %d %s" % (code, msg.decode()))
            s.ehlo_resp = s.helo_resp = None
        code, msg = s.ehlo(helo)
        if code != 250:
            return "ehlo", code, msg.decode()
        for ext in mail_options:
            expect(s.has_extn(ext), "the server does not offer %s" % ext)
        code, msg = s.mail(sender, list(mail_options))
        if code != 250:
            return "mail", code, msg.decode()
        for r in [rcpt] if isinstance(rcpt, str) else rcpt:
            code, msg = s.rcpt(r)
            if code != 250:
                return "rcpt", code, msg.decode()
        if not body:
            return "rcpt", code, msg.decode()
        if data is None:
            data = message_text(sender, tag, extra_headers, from_header)
        code, msg = s.data(data)
        return "data", code, msg.decode()
    finally:
        try:
            s.quit()
        except (smtplib.SMTPException, OSError):
            pass


def expect(cond, what):
    if not cond:
        raise AssertionError(what)



def expect_client_ar_gone(m, authserv_id):
    """After a client sent Authentication-Results claiming AUTHSERV_ID
    (forged-one.example, forged-two.example) and one of other.test
    (kept.example): message M has none of the former, the latter unchanged."""
    expect("forged-one.example" not in m and "forged-two.example" not in m,
           "a client's A-R with authserv-id %s survived:\n%s" % (authserv_id, show_headers(m)))
    kept = [v for v in header_values(m, "Authentication-Results") if v.startswith("other.test;")]
    expect(kept == ["other.test; spf=pass smtp.mailfrom=kept.example"],
           "the A-R of other.test is not kept unchanged: %r\n%s" % (kept, show_headers(m)))

class Cases:
    """Named cases: each runs, a failure is recorded with its message and
    the run goes on; summary() prints one line per case and returns the
    exit status (0 only when at least one case ran and all passed)."""

    def __init__(self, form):
        self.form = form
        self.results = []

    def run(self, name, fn):
        t0 = time.time()
        try:
            fn()
            self.results.append((True, name, "%.1f s" % (time.time() - t0)))
        except Exception as e:
            self.results.append((False, name, str(e)))

    def fail(self, name, why):
        self.results.append((False, name, why))

    def failed(self):
        return any(not ok for ok, _, _ in self.results)

    def summary(self):
        for ok, name, detail in self.results:
            print("%s %s: %s (%s)" % ("ok  " if ok else "FAIL", self.form, name, detail))
        passed = sum(1 for r in self.results if r[0])
        print("%s: %d passed, %d failed" % (self.form, passed, len(self.results) - passed))
        return 0 if self.results and passed == len(self.results) else 1


def run_each(tests, prefix, *args, mode=None):
    """Each of TESTS called as test(tmp, *ARGS) with a temporary folder of
    its own (PREFIX, chmod MODE when given), removed after; "ok" with what
    it returned or "FAIL" with why, a line each, one failure hiding none of
    the others. Returns the exit status: 1 when any failed."""
    failed = 0
    for t in tests:
        tmp = tempfile.mkdtemp(prefix=prefix)
        if mode is not None:
            os.chmod(tmp, mode)
        try:
            print("ok   %s: %s" % (t.__name__, t(tmp, *args)))
        except Exception as e:  # noqa: BLE001 - one failure must not hide the others
            failed += 1
            print("FAIL %s: %s" % (t.__name__, e))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%d of %d failed" % (failed, len(tests)))
    return 1 if failed else 0


def file_text(path):
    """A log file's text; "" when there is none."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def run_main(form, body):
    """A real-MTA test's main(): root needed; BODY(cases, cleanup, tails)
    starts what the test needs and runs its cases, adding to TAILS, as it
    starts each, (title, function giving its log, how many characters of
    the end) for the logs to show when a case failed (None: all of it).
    An exception in BODY is the failed case "setup"; everything started is
    stopped last. Returns the exit status (Cases.summary)."""
    need_root()
    cases = Cases(form)
    cleanup = Cleanup()
    tails = []
    try:
        body(cases, cleanup, tails)
    except Exception as e:
        cases.fail("setup", str(e))
    finally:
        if cases.failed():
            for title, log, chars in tails:
                text = log()
                print("---- %s (tail)\n%s" % (title, text[-chars:] if chars else text))
        cleanup.run()
    return cases.summary()


# ---- what a process listens on -----------------------------------------------

def _hex_addr(text):
    addr, port = text.split(":")
    if len(addr) == 8:
        ip = ".".join(str(int(addr[i:i + 2], 16)) for i in (6, 4, 2, 0))
    else:
        ip = "[ipv6 %s]" % addr
    return "%s:%d" % (ip, int(port, 16))


def tcp_listeners(pid):
    """The TCP sockets PID holds in LISTEN state, as "ip:port" strings."""
    inodes = set()
    fd_dir = "/proc/%d/fd" % pid
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if len(cols) > 9 and cols[3] == "0A" and cols[9] in inodes:
                out.append(_hex_addr(cols[1]))
    return sorted(out)


def expect_listeners(pid, want, what):
    """PID listens on TCP exactly at WANT (a list of "127.0.0.1:PORT")."""
    got = tcp_listeners(pid)
    expect(got == sorted(want), "%s listens on %r, want only %r" % (what, got, sorted(want)))
