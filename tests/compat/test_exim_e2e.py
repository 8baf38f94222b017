#!/usr/bin/env python3
"""Exim end to end on our libspf2.so.2 (issue 12).

  test_exim_e2e.py OUR_LIBSPF2_SO DNSD CACHE_DIR

Debian's exim4-daemon-heavy, unmodified, fetched with `apt-get download`
and unpacked with `dpkg-deb -x` into a temporary folder (Postfix stays
installed; only missing shared libraries of Exim are installed with
apt-get, and the Debian-exim user Exim insists on is created), runs with
LD_LIBRARY_PATH at our library (checked with ldd). It is run inside a
private network and mount namespace (unshare -mn), where tests/dnsd
answers on 127.0.0.1:53 and /etc/resolv.conf is bind-mounted to point at
it, so Exim's own resolver, through its own SPF DNS layer, asks dnsd.
SMTP sessions use `exim -bs -oMa ADDR`: a loopback client would get
libspf2's "localhost is always allowed" pass. The ACL is Debian's stock
CHECK_RCPT_SPF block, taken from the exim4-config package.

Everything is downloaded and installed before the namespace is entered
(tests/mta/harness.py refuses apt inside one). Exit 77 (skipped) when
not root or without unshare; packages that cannot be downloaded are a
failure.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mta"))
import harness  # noqa: E402

SKIP = 77

ZONE = """$ORIGIN example.
$TTL 300
pass    IN TXT "v=spf1 ip4:192.0.2.0/24 -all"
tf      IN TXT "v=spf1 a:sf.example -all"
guess   IN A 192.0.2.77
"""

# What both Exim tests' configurations have (this one and
# tests/policyd/test_exim_policyd_e2e.py): the main settings of a private
# Exim under @ROOT@, and local delivery into a file under @ROOT@/mail.
CONF_MAIN = r"""
primary_hostname = mx.receiver.example
exim_path = @EXIM@
domainlist local_domains = receiver.example
spool_directory = @ROOT@/spool
log_file_path = @ROOT@/log/%slog
exim_user = Debian-exim
exim_group = Debian-exim
trusted_users = root
host_lookup =
rfc1413_hosts =
smtp_enforce_sync = false
"""


def conf_delivery(mailbox):
    """The routers and transports: local recipients appended to MAILBOX."""
    return r"""
begin routers

local:
  driver = accept
  domains = +local_domains
  transport = local_file

begin transports

local_file:
  driver = appendfile
  file = %s
  user = Debian-exim
  group = Debian-exim
""" % mailbox


# the unpacked binary re-executes itself for delivery; our library stays
CONF = CONF_MAIN + r"""keep_environment = LD_LIBRARY_PATH
acl_smtp_rcpt = acl_rcpt
acl_smtp_data = acl_data

begin acl

acl_local_deny_exceptions:
  deny

acl_rcpt:
  warn
    senders = *@guess.example
    spf_guess = pass
    add_header = X-SPF-Guess: $spf_result
  warn
    spf = fail
    log_message = SPF explanation: $spf_smtp_comment
@DEBIAN_SPF_ACL@
  warn
    add_header = X-SPF-Result: $spf_result
  accept
    domains = +local_domains
  deny

acl_data:
  warn
    add_header = :at_start:${authresults{mx.receiver.example}}
  accept
""" + conf_delivery("@ROOT@/mail/user")


def debian_spf_acl(conf_root):
    """Debian's stock CHECK_RCPT_SPF block, as exim4-config ships it."""
    path = os.path.join(conf_root, "etc/exim4/conf.d/acl/30_exim4-config_check_rcpt")
    text = open(path).read()
    m = re.search(r"\.ifdef CHECK_RCPT_SPF\n\s*\.ifdef _HAVE_SPF\n(.*?)\n\s*\.endif\n\s*\.endif", text, re.S)
    if not m:
        raise SystemExit("no CHECK_RCPT_SPF block in " + path)
    return m.group(1)


def fetch(cache, daemon="exim4-daemon-heavy"):
    """The .deb files of Exim's DAEMON package (heavy links libspf2, light
    does not); None, said, when apt-get download fails: a test failure."""
    try:
        return harness.apt_download(cache, daemon, "exim4-base", "exim4-config")
    except AssertionError as e:
        print("FAIL: %s" % e)
        return None


def missing_libs(exim, env):
    out = subprocess.run(["ldd", exim], env=env, capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if "not found" in line], out


def install_exim_libraries(daemon="exim4-daemon-heavy"):
    """Exim's own library dependencies (never an MTA), before any namespace."""
    out = subprocess.run(["apt-cache", "depends", daemon], capture_output=True,
                         text=True).stdout
    harness.ensure_packages(*sorted({m.group(1) for m in
                                     re.finditer(r"Depends: (lib[\w.+-]+)", out)}))


def ensure_user():
    if subprocess.run(["getent", "group", "Debian-exim"], capture_output=True).returncode != 0:
        subprocess.run(["groupadd", "--system", "Debian-exim"], check=True)
    if subprocess.run(["getent", "passwd", "Debian-exim"], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--system", "--gid", "Debian-exim", "--no-create-home",
                        "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin",
                        "Debian-exim"], check=True)


def smtp(exim, conf, env, addr, helo, sender, rcpt="user@receiver.example", body=True):
    lines = ["EHLO " + helo, "MAIL FROM:<%s>" % sender, "RCPT TO:<%s>" % rcpt]
    if body:
        lines += ["DATA", "Subject: spfkit e2e", "", "hello", "."]
    lines.append("QUIT")
    r = subprocess.run([exim, "-C", conf, "-bs", "-odi", "-oMa", addr], env=env,
                       input="\r\n".join(lines) + "\r\n", capture_output=True, text=True,
                       timeout=60)
    return r.stdout


def inner(exim, conf, dnsd, root):
    """Inside the namespaces: loopback up, resolv.conf at dnsd on port 53."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    resolv = os.path.join(root, "resolv.conf")
    with open(resolv, "w") as f:
        f.write("nameserver 127.0.0.1\noptions timeout:2 attempts:1\n")
    subprocess.run(["mount", "--bind", resolv, "/etc/resolv.conf"], check=True)
    zone = os.path.join(root, "zone")
    port_file = os.path.join(root, "dns.port")
    d = subprocess.Popen([dnsd, "--zone", zone, "--port", "53", "--port-file", port_file,
                          "--servfail", "sf.example"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    failures = 0
    try:
        deadline = time.time() + 10
        while not os.path.exists(port_file) and time.time() < deadline:
            time.sleep(0.05)
        env = dict(os.environ, LD_LIBRARY_PATH=os.environ["SPFKIT_LIBSPF2_DIR"])

        def want(cond, what, detail=""):
            nonlocal failures
            print(("ok " if cond else "FAIL ") + what + ("" if cond else ": " + detail))
            if not cond:
                failures += 1

        # forged sender: 550 from Debian's ACL, the explanation in the log
        out = smtp(exim, conf, env, "203.0.113.5", "client.example", "alice@pass.example",
                   body=False)
        want("550 [SPF] 203.0.113.5 is not allowed to send mail from pass.example." in out,
             "fail -> 550", out)
        log = open(os.path.join(root, "log", "mainlog")).read() if os.path.exists(
            os.path.join(root, "log", "mainlog")) else ""
        want("SPF explanation: Please see http://www.open-spf.org/Why : Reason: mechanism" in log,
             "fail -> explanation in $spf_smtp_comment", log[-1500:])

        # pass: delivered, Received-SPF at the top, $spf_result, ${authresults}
        out = smtp(exim, conf, env, "192.0.2.5", "client.example", "bob@pass.example")
        want(re.search(r"^250 OK id=", out, re.M) is not None, "pass -> accepted", out)
        mail = os.path.join(root, "mail", "user")
        msg = open(mail).read() if os.path.exists(mail) else ""
        if not msg:
            for name in ("mainlog", "paniclog", "rejectlog"):
                p = os.path.join(root, "log", name)
                if os.path.exists(p):
                    print("# " + name + ":\n" + open(p).read()[-2000:])
        # :at_start: puts it above Exim's own Received: (the DATA ACL's
        # Authentication-Results, added later, goes above both)
        spf_at = msg.find("\nReceived-SPF: pass (mx.receiver.example: domain of pass.example "
                          "designates 192.0.2.5 as permitted sender) client-ip=192.0.2.5;")
        rcvd_at = msg.find("\nReceived: ")
        want(spf_at >= 0 and 0 <= rcvd_at and spf_at < rcvd_at,
             "pass -> Received-SPF at the top of the header, above Received:", msg[:800])
        want("envelope-from=\"bob@pass.example\"; helo=client.example; "
             "receiver=mx.receiver.example; identity=mailfrom;" in msg,
             "pass -> Received-SPF keys", msg[:800])
        want("X-SPF-Result: pass" in msg, "pass -> $spf_result", msg[:800])
        want(re.search(r"Authentication-Results: mx.receiver.example;\s+spf=pass "
                       r"smtp.mailfrom=pass.example", msg) is not None,
             "pass -> ${authresults}", msg[:800])

        # temperror: 4xx defer
        out = smtp(exim, conf, env, "192.0.2.5", "client.example", "carol@tf.example",
                   body=False)
        want("451 Temporary DNS error while checking SPF record.  Try again later." in out,
             "temperror -> 451", out)

        # spf_guess: no record, the best guess passes on a/24
        if os.path.exists(mail):
            os.unlink(mail)
        out = smtp(exim, conf, env, "192.0.2.77", "client.example", "dave@guess.example")
        msg = open(mail).read() if os.path.exists(mail) else ""
        want("X-SPF-Guess: pass" in msg, "spf_guess -> pass", out + msg[:800])
    finally:
        d.terminate()
        d.wait(10)
    print("%d failure(s)" % failures)
    return 1 if failures else 0


def main():
    if sys.argv[1] == "--inner":
        return inner(*sys.argv[2:6])
    ours, dnsd, cache = sys.argv[1], sys.argv[2], sys.argv[3]
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("dpkg-deb") is None:
        print("skip: needs root, unshare and dpkg-deb")
        return SKIP
    debs = fetch(cache)
    if debs is None:
        return 1
    root = tempfile.mkdtemp(prefix="spfkit-exim-")
    try:
        pkgroot = os.path.join(root, "pkg")
        for deb in debs.values():
            subprocess.run(["dpkg-deb", "-x", deb, pkgroot], check=True)
        exim = os.path.join(pkgroot, "usr", "sbin", "exim4")
        libdir = os.path.join(root, "lib")
        os.makedirs(libdir)
        shutil.copy2(ours, os.path.join(libdir, "libspf2.so.2"))
        env = dict(os.environ, LD_LIBRARY_PATH=libdir)
        missing, _ = missing_libs(exim, env)
        if missing:
            install_exim_libraries()
            missing, _ = missing_libs(exim, env)
            if missing:
                print("FAIL: Exim's libraries missing: " + " ".join(missing))
                return 1
        _, ldd = missing_libs(exim, env)
        line = [l for l in ldd.splitlines() if "libspf2.so.2" in l]
        if not line or os.path.join(libdir, "libspf2.so.2") not in line[0]:
            print("FAIL ldd: exim4 does not load our libspf2.so.2:\n" + ldd)
            return 1
        print("ok ldd: " + line[0].strip())
        ensure_user()
        for d in ("spool", "log", "mail"):
            os.makedirs(os.path.join(root, d))
        shutil.chown(os.path.join(root, "spool"), "Debian-exim", "Debian-exim")
        shutil.chown(os.path.join(root, "log"), "Debian-exim", "Debian-exim")
        shutil.chown(os.path.join(root, "mail"), "Debian-exim", "Debian-exim")
        os.chmod(root, 0o755)
        conf = os.path.join(root, "exim.conf")
        with open(conf, "w") as f:
            f.write(CONF.replace("@ROOT@", root).replace("@EXIM@", exim).replace("@DEBIAN_SPF_ACL@",
                                                         debian_spf_acl(pkgroot)))
        with open(os.path.join(root, "zone"), "w") as f:
            f.write(ZONE)
        env = dict(os.environ, SPFKIT_LIBSPF2_DIR=libdir)
        r = subprocess.run(["unshare", "-mn", sys.executable, os.path.abspath(__file__),
                            "--inner", exim, conf, os.path.abspath(dnsd), root], env=env,
                           timeout=300)
        return r.returncode
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
