#!/usr/bin/env python3
"""The Debian packages, installed, behind real MTAs, then purged (issue 27).

  test_packages_e2e.py SOURCE_ROOT DNSD WORK_DIR
  test_packages_e2e.py --build SOURCE_ROOT WORK_DIR   (packages-build)

Builds the packages of debian/ once (a copy of SOURCE_ROOT in WORK_DIR,
dpkg-buildpackage -us -uc -b with DEB_BUILD_OPTIONS=nocheck), installs
them with `apt-get install ./*.deb` (after a simulation shows that apt
removes nothing but Debian's libspf2-2 and libspf2-dev), and checks:

- the units pass `systemd-analyze verify` and are hardened; the system
  users exist; /etc/spfkit/*.conf are conffiles;
- in a private network and mount namespace (unshare -mn: tests/dnsd on
  127.0.0.53:53, /etc/resolv.conf bind-mounted to point at it), a private
  Postfix (tests/mta/harness.py) asks the installed spfkit-policyd, run
  with the ExecStart line of its installed unit as it stands (socket in
  Postfix's private/, --user spfkit-policyd): a forged sender refused with
  550 5.7.23, a genuine one delivered with Received-SPF: pass;
- the installed spfkit-milter, run with its unit's ExecStart, as the
  milter of a private Postfix: forged refused at MAIL FROM, genuine
  delivered with Authentication-Results: spf=pass;
- the README's migration: Postfix runs postfix-policyd-spf-python's
  policyd-spf in spawn form with its own /etc/postfix-policyd-spf-python/
  policyd-spf.conf, then the same master.cf with one line changed
  (argv=/usr/sbin/spfkit-policyd), the configuration untouched: the same
  decisions, now spfkit's;
- Debian's Exim (exim4-daemon-heavy, unpacked, tests/compat/test_exim_e2e.py's
  configuration and checks, no LD_LIBRARY_PATH) loads the installed
  libspf2-2-spfkit and gives its decisions;
- `apt-get install libspf2-2 libspf2-dev` puts Debian's libspf2 back;
  `apt-get purge` of every package leaves none of the files `dpkg -L`
  listed that were not there before, and no *spfkit* name under /etc,
  /usr, /lib, /var/lib or /var/spool/postfix; Exim on the
  restored libspf2 refuses the forged sender and accepts the genuine one.

Whatever fails, Debian's libspf2-2 and libspf2-dev are installed again at
the end and our packages purged. Every install happens before a namespace
is entered. Exit 77 (skipped) when not root or without unshare.
"""
import fcntl
import glob
import hashlib
import json
import os
import pwd
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "mta"))
sys.path.insert(0, os.path.join(HERE, "..", "compat"))
import harness  # noqa: E402
import test_exim_e2e as exim_e2e  # noqa: E402
from harness import expect  # noqa: E402

SKIP = 77
PACKAGES = ["libspfkit1", "libspfkit-dev", "spfkit", "spfkit-policyd", "spfkit-milter",
            "spfkit-smtpd-filter", "libspf2-2-spfkit"]
DEBIAN_LIBSPF2 = ["libspf2-2", "libspf2-dev"]
# what dpkg-buildpackage runs before it reads debian/control's Build-Depends
BUILD_TOOLS = ["dpkg-dev", "fakeroot"]
UNITS = ["/lib/systemd/system/spfkit-policyd.service",
         "/lib/systemd/system/spfkit-milter.service"]
POLICY_SOCKET = "/var/spool/postfix/private/spfkit-policyd"
# (not /var/cache: man-db keeps there the pages shown, and systemd-analyze
# verify shows the units' man: links; other tests keep .debs there)
LEFTOVER_ROOTS = ["/etc", "/usr", "/lib", "/var/lib", "/var/spool/postfix"]
HELO = "client.sender.test"
GENUINE_IP, FORGED_IP = "192.0.2.10", "203.0.113.5"
ZONE = '$TTL 300\npass.example. TXT "v=spf1 ip4:192.0.2.0/24 -all"\n'

# policyd-spf's line of master.cf, as postfix-policyd-spf-python's
# README.Debian gives it, and the one line the README changes
SPAWN_CF = """\
policyd-spf  unix  -       n       n       -       0       spawn
    user=policyd-spf argv=/usr/bin/policyd-spf
"""
MIGRATED_LINE = ("    user=policyd-spf argv=/usr/bin/policyd-spf",
                 "    user=policyd-spf argv=/usr/sbin/spfkit-policyd")


def run(cmd, **kw):
    kw.setdefault("env", harness.ENV)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def status(pkg):
    r = run(["dpkg-query", "-W", "-f=${Status}", pkg])
    return r.stdout.strip() if r.returncode == 0 else "unknown"


def purged(pkg):
    return status(pkg) in ("unknown", "unknown ok not-installed")


def apt(args, allowed_removals):
    """apt-get -y ARGS, after a simulation: removing a package not in
    ALLOWED_REMOVALS fails the test before anything changes. Refused inside
    a namespace, as harness's installs are (issue 27)."""
    harness.refuse_in_namespace("apt-get %s" % " ".join(args))
    sim = run(["apt-get", "-s", "-y"] + args)
    expect(sim.returncode == 0, "apt-get -s %s: %s" % (" ".join(args), sim.stderr[-800:]))
    removed = {line.split()[1] for line in sim.stdout.splitlines() if line.startswith("Purg ")
               or line.startswith("Remv ")}
    expect(removed <= set(allowed_removals), "apt-get %s would remove %s: refused"
           % (" ".join(args), " ".join(sorted(removed - set(allowed_removals)))))
    r = run(["apt-get", "-y", "-q", "--no-install-recommends", "-o", "DPkg::Lock::Timeout=600"]
            + args)
    expect(r.returncode == 0, "apt-get %s: %s" % (" ".join(args), r.stderr[-800:]))
    return removed


def build_debs(source, work):
    """A copy of the tree without build folders, built with dpkg-buildpackage."""
    tree = os.path.join(work, "spfkit")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(tree)
    pack = subprocess.Popen(["tar", "-cf", "-", "--exclude-vcs", "--exclude=./build*",
                             "--exclude=./fuzz/out", "--exclude=./bench/out",
                             "--exclude=./obj-*", "--exclude=./debian/.debhelper",
                             "--exclude=./debian/tmp", "."], cwd=source, stdout=subprocess.PIPE)
    subprocess.run(["tar", "-xf", "-", "-C", tree], stdin=pack.stdout, check=True)
    expect(pack.wait() == 0, "tar of %s failed" % source)
    t0 = time.time()
    env = dict(harness.ENV, DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=2")
    r = run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=tree, env=env)
    expect(r.returncode == 0, "dpkg-buildpackage: %s" % (r.stdout + r.stderr)[-2500:])
    debs = {p: glob.glob(os.path.join(work, "%s_*.deb" % p)) for p in PACKAGES}
    expect(all(len(d) == 1 for d in debs.values()), "built: %r" % debs)
    print("built %d packages in %.0f s" % (len(debs), time.time() - t0))
    shutil.rmtree(tree, ignore_errors=True)
    return [d[0] for d in debs.values()]


def source_state(source):
    """A digest of what the packages are built from (the commit, the
    changes to it, untracked files), or None outside a git checkout."""
    parts = []
    for args in (["rev-parse", "HEAD"], ["diff", "HEAD"],
                 ["ls-files", "--others", "--exclude-standard"]):
        r = subprocess.run(["git", "-C", source] + args, capture_output=True)
        if r.returncode != 0:
            return None
        parts.append(r.stdout)
    return hashlib.sha256(b"\0".join(parts)).hexdigest()


def debs_for(source, work):
    """The packages of SOURCE in WORK/debs: built by packages-build while the
    other tests run (meson starts it first), or here when it did not run.
    The lock makes a build in progress finish before anyone reads it."""
    debs_dir, state = os.path.join(work, "debs"), source_state(source)
    stamp = os.path.join(debs_dir, "source-state")
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "debs.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        debs = [glob.glob(os.path.join(debs_dir, "%s_*.deb" % p)) for p in PACKAGES]
        if state is not None and all(len(d) == 1 for d in debs) and \
                os.path.exists(stamp) and open(stamp).read() == state:
            print("the packages packages-build made for this source")
            return [d[0] for d in debs]
        built = build_debs(source, debs_dir)
        if state is not None:
            with open(stamp, "w") as f:
                f.write(state)
        return built


def unmet_build_depends(source):
    """The Build-Depends of SOURCE's debian/control that this machine lacks,
    as dpkg-checkbuilddeps (dpkg-buildpackage's own check) reports them:
    each relation's first alternative, versions dropped; apt installs the
    provider of a virtual name (dh-sequence-python3 is dh-python's). Read
    from the control file, not copied here: a copy went stale once."""
    check = subprocess.run(["dpkg-checkbuilddeps"], cwd=source, capture_output=True,
                           text=True)
    if check.returncode == 0:
        return []
    unmet = re.search(r"Unmet build dependencies: (.*)", check.stderr)
    if not unmet:
        raise AssertionError("dpkg-checkbuilddeps in %s: %s" % (source, check.stderr.strip()))
    words = re.sub(r"\([^)]*\)|\[[^]]*\]|<[^>]*>", " ", unmet.group(1)).split()
    names, i = [], 0
    while i < len(words):
        names.append(words[i])
        i += 1
        while i + 1 < len(words) and words[i] == "|":
            i += 2
    return names


def ensure_build_depends(source):
    harness.ensure_packages(*BUILD_TOOLS)
    harness.ensure_packages(*unmet_build_depends(source))
    still = unmet_build_depends(source)
    expect(not still, "build dependencies still unmet after apt-get: %s" % " ".join(still))


def build_only(source, work):
    """packages-build: the packages, while the tests that need no exclusive
    machine run beside it; packages-e2e installs them later."""
    cases = harness.Cases("packages-build")
    try:
        ensure_build_depends(source)
        cases.run("dpkg-buildpackage built every package",
                  lambda: expect(len(debs_for(source, work)) == len(PACKAGES), "missing"))
    except Exception as e:
        cases.fail("setup", str(e))
    return cases.summary()


def deb_paths(debs):
    """Every path the packages hold (dpkg-deb -c: what dpkg -L lists)."""
    paths = set()
    for deb in debs:
        for line in run(["dpkg-deb", "-c", deb]).stdout.splitlines():
            name = line.split()[5].lstrip(".").rstrip("/")
            if name:
                paths.add(name)
    return paths


def unit_argv(unit):
    """The ExecStart= command of UNIT, continuation lines joined."""
    text = open(unit).read().replace("\\\n", " ")
    lines = [l for l in text.splitlines() if l.startswith("ExecStart=")]
    expect(len(lines) == 1, "%s: %d ExecStart= lines" % (unit, len(lines)))
    return shlex.split(lines[0][len("ExecStart="):])


def check_units():
    if shutil.which("systemd-analyze"):
        r = run(["systemd-analyze", "verify"] + UNITS)
        expect(r.returncode == 0 and not r.stderr.strip(),
               "systemd-analyze verify: status %d: %s" % (r.returncode, r.stderr[-1500:]))
    else:
        print("note: no systemd-analyze here; the units are checked by reading them")
    for unit in UNITS:
        text = open(unit).read()
        for want in ("ProtectSystem=strict", "NoNewPrivileges=yes", "RuntimeDirectory=",
                     "ExecStart=/usr/sbin/"):
            expect(("\n" + want) in text, "%s: no %s" % (unit, want))


def check_users_and_conffiles():
    for user in ("spfkit-policyd", "spfkit-milter"):
        pw = pwd.getpwnam(user)
        expect(pw.pw_uid < 1000 and pw.pw_shell.endswith("nologin"),
               "%s: uid %d, shell %s: not a system user" % (user, pw.pw_uid, pw.pw_shell))
    for pkg, conf in (("spfkit-policyd", "/etc/spfkit/policyd-spf.conf"),
                      ("spfkit-milter", "/etc/spfkit/milter.conf"),
                      ("spfkit-smtpd-filter", "/etc/spfkit/smtpd-filter.conf")):
        listed = run(["dpkg-query", "-W", "-f=${Conffiles}", pkg]).stdout
        expect(conf in listed, "%s: %s is no conffile (%r)" % (pkg, conf, listed))


def resolved_libspf2(binary):
    """The libspf2.so.2 BINARY loads (ldd, no LD_LIBRARY_PATH), its package."""
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    out = run(["ldd", binary], env=env).stdout
    line = [l.split() for l in out.splitlines() if "libspf2.so.2" in l]
    expect(len(line) == 1 and len(line[0]) >= 3, "ldd %s: %s" % (binary, out))
    path = os.path.realpath(line[0][2])
    owner = run(["dpkg", "-S", path]).stdout.split(":")[0]
    return path, owner


# ---- Exim (Debian's binary, unpacked) --------------------------------------

def prepare_exim(root, debs):
    """Exim's tree and configuration as tests/compat/test_exim_e2e.py makes
    them, without a library of its own: it loads the system's libspf2."""
    pkgroot = os.path.join(root, "pkg")
    for deb in debs.values():
        subprocess.run(["dpkg-deb", "-x", deb, pkgroot], check=True)
    exim = os.path.join(pkgroot, "usr", "sbin", "exim4")
    for d in ("spool", "log", "mail"):
        os.makedirs(os.path.join(root, d))
        shutil.chown(os.path.join(root, d), "Debian-exim", "Debian-exim")
    os.chmod(root, 0o755)
    conf = os.path.join(root, "exim.conf")
    with open(conf, "w") as f:
        f.write(exim_e2e.CONF.replace("@ROOT@", root).replace("@EXIM@", exim)
                .replace("@DEBIAN_SPF_ACL@", exim_e2e.debian_spf_acl(pkgroot)))
    with open(os.path.join(root, "zone"), "w") as f:
        f.write(exim_e2e.ZONE)
    return exim, conf


def run_exim(exim, conf, dnsd, root):
    """test_exim_e2e.py's SMTP sessions in its namespace; its output."""
    for d in ("log", "mail"):
        for f in glob.glob(os.path.join(root, d, "*")):
            os.unlink(f)
    env = dict(os.environ, SPFKIT_LIBSPF2_DIR="")  # empty: ld.so's own search
    r = subprocess.run(["unshare", "-mn", sys.executable, exim_e2e.__file__, "--inner", exim,
                        conf, dnsd, root], env=env, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


# ---- inside the namespaces: Postfix and the installed spfkit-policyd --------

def postfix_cases(cases, sink, pf, form, our_header):
    def forged():
        stage, code, msg = harness.session(pf.smtp, HELO, "alice@pass.example",
                                           form + "-forged", client_ip=FORGED_IP)
        expect(stage == "rcpt" and code == 550 and "5.7.23" in msg,
               "got %s %d %s, want 550 5.7.23 at RCPT" % (stage, code, msg))

    def genuine():
        tag = form + "-genuine"
        stage, code, msg = harness.session(pf.smtp, HELO, "bob@pass.example", tag,
                                           client_ip=GENUINE_IP)
        expect(code == 250, "got %s %d %s, want 250" % (stage, code, msg))
        m = sink.wait("spfkit e2e " + tag)
        spf = harness.header_values(m, "Received-SPF")
        expect(len(spf) == 1 and spf[0].lower().startswith("pass"),
               "Received-SPF: %r, want one pass" % spf)
        expect(our_header == ("designates %s as permitted sender" % GENUINE_IP in spf[0]),
               "Received-SPF %r is %sspfkit's" % (spf[0], "not " if our_header else ""))
    cases.run("%s: forged sender refused with 550 5.7.23" % form, forged)
    cases.run("%s: genuine sender delivered with Received-SPF: pass" % form, genuine)


def start_unit(cleanup, tmp, unit, runtime_dir):
    """The unit's ExecStart, verbatim, its RuntimeDirectory made first."""
    argv = unit_argv(unit)
    os.makedirs(runtime_dir, exist_ok=True)
    cleanup.push(lambda: shutil.rmtree(runtime_dir, ignore_errors=True))
    log = open(os.path.join(tmp.path, os.path.basename(unit) + ".log"), "w")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    cleanup.push(lambda: (harness.stop_process(proc), log.close()))
    print("ExecStart: " + " ".join(argv))
    return proc


def runs_as(program, user):
    uid = pwd.getpwnam(user).pw_uid
    uids = []
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            if os.readlink("/proc/%s/exe" % pid) != program:
                continue
            with open("/proc/%s/status" % pid) as f:
                uids += [int(l.split()[1]) for l in f if l.startswith("Uid:")]
        except OSError:
            continue
    expect(uid in uids, "no %s process runs as %s (uids %r)" % (program, user, uids))


def stops(proc, files):
    code = harness.stop_process(proc)
    expect(code == 0, "exit status %s on SIGTERM" % code)
    deadline = time.time() + 5  # a root helper removes them as the daemon goes
    while time.time() < deadline and any(os.path.exists(f) for f in files):
        time.sleep(0.05)
    left = [f for f in files if os.path.exists(f)]
    expect(not left, "left behind: %r" % left)


def daemon_form(cases, cleanup, tmp, sink):
    """spfkit-policyd.service's ExecStart; Postfix asks its socket in private/."""
    proc = start_unit(cleanup, tmp, UNITS[0], "/run/spfkit-policyd")
    deadline = time.time() + 15
    while not os.path.exists(POLICY_SOCKET):
        expect(time.time() < deadline and proc.poll() is None,
               "no %s (status %s)" % (POLICY_SOCKET, proc.poll()))
        time.sleep(0.05)
    pf = harness.Postfix(cleanup, tmp, sink.port,
                         "smtpd_recipient_restrictions = reject_unauth_destination,"
                         " check_policy_service unix:%s\n" % POLICY_SOCKET, name="pf-daemon")
    cases.run("daemon: the unit's ExecStart runs as spfkit-policyd after --user",
              lambda: runs_as("/usr/sbin/spfkit-policyd", "spfkit-policyd"))
    postfix_cases(cases, sink, pf, "daemon", True)
    pf.stop()
    cases.run("daemon: SIGTERM ends it, its socket and pid file removed",
              lambda: stops(proc, [POLICY_SOCKET, "/run/spfkit-policyd/spfkit-policyd.pid"]))


def milter_form(cases, cleanup, tmp, sink):
    """spfkit-milter.service's ExecStart (socket from milter.conf: 8895)."""
    proc = start_unit(cleanup, tmp, UNITS[1], "/run/spfkit-milter")
    harness.wait_listening(8895, 15, proc, "spfkit-milter")
    pf = harness.Postfix(cleanup, tmp, sink.port, "smtpd_milters = inet:127.0.0.1:8895\n",
                         name="pf-milter")
    cases.run("milter: the unit's ExecStart runs as spfkit-milter after -u",
              lambda: runs_as("/usr/sbin/spfkit-milter", "spfkit-milter"))

    def forged():
        stage, code, msg = harness.session(pf.smtp, HELO, "alice@pass.example",
                                           "milter-forged", client_ip=FORGED_IP)
        expect(stage == "mail" and code == 550 and "5.7.23" in msg,
               "got %s %d %s, want 550 5.7.23 at MAIL" % (stage, code, msg))

    def genuine():
        stage, code, msg = harness.session(pf.smtp, HELO, "bob@pass.example",
                                           "milter-genuine", client_ip=GENUINE_IP)
        expect(code == 250, "got %s %d %s, want 250" % (stage, code, msg))
        m = sink.wait("spfkit e2e milter-genuine")
        ar = harness.header_values(m, "Authentication-Results")
        expect(any("spf=pass" in v and "smtp.mailfrom=pass.example" in v for v in ar),
               "Authentication-Results: %r, want spf=pass" % ar)
    cases.run("milter: forged sender refused with 550 5.7.23", forged)
    cases.run("milter: genuine sender delivered with Authentication-Results: spf=pass",
              genuine)
    pf.stop()
    cases.run("milter: SIGTERM ends it", lambda: stops(proc, []))


def spawn_form(cases, cleanup, tmp, sink):
    """policyd-spf, then spfkit-policyd after the README's one-line change."""
    extra = ("smtpd_recipient_restrictions = reject_unauth_destination,"
             " check_policy_service unix:private/policyd-spf\npolicyd-spf_time_limit = 3600\n")
    master = harness.POSTFIX_MASTER_CF
    try:
        for form, spawn, ours in (
                ("policyd-spf (python)", SPAWN_CF, False),
                ("migrated to spfkit-policyd", SPAWN_CF.replace(*MIGRATED_LINE), True)):
            changed = [l for l in spawn.splitlines() if l not in SPAWN_CF.splitlines()]
            expect(len(changed) == (1 if ours else 0), "master.cf differs in %r" % changed)
            harness.POSTFIX_MASTER_CF = master + spawn.replace("{", "{{").replace("}", "}}")
            pf = harness.Postfix(cleanup, tmp, sink.port, extra,
                                 name="pf-spawn-%s" % ("spfkit" if ours else "python"))
            postfix_cases(cases, sink, pf, "spawn, " + form, ours)
            pf.stop()
    finally:
        harness.POSTFIX_MASTER_CF = master


def inner(dnsd):
    cases = harness.Cases("packages, postfix")
    cleanup = harness.Cleanup()
    try:
        tmp = harness.TempDir(cleanup, "spfkit-packages-e2e-")
        harness.private_resolver(cleanup, tmp, dnsd, ZONE)
        sink = harness.Sink(cleanup)
        daemon_form(cases, cleanup, tmp, sink)
        spawn_form(cases, cleanup, tmp, sink)
        milter_form(cases, cleanup, tmp, sink)
    except Exception as e:
        cases.fail("setup", str(e))
    finally:
        cleanup.run()
    return cases.summary()


# ---- outside: build, install, Exim, restore, purge -------------------------

def installed_checks(cases):
    cases.run("every package installed, Debian's libspf2-2 gone",
              lambda: expect(all(status(p) == "install ok installed" for p in PACKAGES)
                             and status("libspf2-2") != "install ok installed",
                             "status: %r" % {p: status(p) for p in PACKAGES + ["libspf2-2"]}))
    cases.run("the units pass systemd-analyze verify and are hardened", check_units)
    cases.run("system users made by postinst; /etc/spfkit files are conffiles",
              check_users_and_conffiles)


def purge_checks(cases, paths, existed, exim, conf, dnsd, root):
    def restore():
        removed = apt(["install"] + DEBIAN_LIBSPF2, ["libspf2-2-spfkit"])
        expect(removed == {"libspf2-2-spfkit"}, "apt removed %r" % removed)
        path, owner = resolved_libspf2(exim)
        expect(owner == "libspf2-2", "exim loads %s of %r, want libspf2-2's" % (path, owner))
        print("after apt-get install libspf2-2: exim loads %s (%s)" % (path, owner))
    cases.run("apt-get install libspf2-2 libspf2-dev puts Debian's libspf2 back", restore)

    def purge():
        # dpkg: apt knows no source for libspf2-2-spfkit, left in state rc
        r = dpkg_purge()
        expect(r.returncode == 0, "dpkg --purge: %s" % (r.stdout + r.stderr)[-800:])
        left = sorted(p for p in paths if os.path.lexists(p) and not existed[p])
        expect(not left, "left on disk after purge: %s" % " ".join(left[:20]))
        found = run(["find"] + LEFTOVER_ROOTS + ["-xdev", "-name", "*spfkit*"]).stdout.split()
        expect(not found, "*spfkit* after purge: %s" % " ".join(found[:20]))
        expect(all(purged(p) for p in PACKAGES),
               "dpkg still knows: %r" % {p: status(p) for p in PACKAGES})
    cases.run("apt-get purge leaves nothing of ours (%d paths of dpkg -L)" % len(paths), purge)

    def debian_works():
        code, out = run_exim(exim, conf, dnsd, root)
        for line in ("ok fail -> 550", "ok pass -> accepted"):
            expect(line in out, "exim on Debian's libspf2: no %r in:\n%s" % (line, out[-1500:]))
    cases.run("Exim on Debian's restored libspf2 refuses forged, accepts genuine mail",
              debian_works)


def dpkg_purge():
    """dpkg --purge of ours, waiting as apt's DPkg::Lock::Timeout=600 does
    while another test's apt-get holds the lock (dpkg has no such option)."""
    harness.refuse_in_namespace("dpkg --purge")
    deadline = time.time() + 600
    while True:
        r = run(["dpkg", "--purge"] + PACKAGES)
        if r.returncode == 0 or "lock" not in r.stderr or time.time() > deadline:
            return r
        time.sleep(1)


def restore_machine():
    """Debian's libspf2 installed, ours purged, whatever happened."""
    if not all(purged(p) for p in PACKAGES) or \
            any(status(p) != "install ok installed" for p in DEBIAN_LIBSPF2):
        harness.apt_install(*DEBIAN_LIBSPF2)
        dpkg_purge()
    for p in (POLICY_SOCKET, "/run/spfkit-policyd", "/run/spfkit-milter"):
        if os.path.isdir(p):
            shutil.rmtree(p, ignore_errors=True)
        elif os.path.lexists(p):
            os.unlink(p)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--inner":
        return inner(sys.argv[2])
    if len(sys.argv) == 4 and sys.argv[1] == "--build":
        return build_only(os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3]))
    source, dnsd, work = (os.path.abspath(a) for a in sys.argv[1:4])
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        print("skip: needs root and unshare")
        return SKIP
    cases = harness.Cases("packages")
    root = None
    try:
        # every install first, outside any namespace (issue 27)
        ensure_build_depends(source)
        harness.ensure_packages(*(DEBIAN_LIBSPF2 + ["postfix-policyd-spf-python"]))
        harness.ensure_postfix()
        exim_debs = exim_e2e.fetch(os.path.join(work, "exim-debs"))
        expect(exim_debs is not None, "Exim's packages could not be downloaded")
        exim_e2e.install_exim_libraries()  # libspf2-2 among them: before ours
        exim_e2e.ensure_user()
        restore_machine()  # a run that died half-way
        debs = debs_for(source, work)
        paths = deb_paths(debs)
        existed = {p: os.path.lexists(p) for p in paths}
        root = tempfile.mkdtemp(prefix="spfkit-packages-exim-")
        exim, conf = prepare_exim(root, exim_debs)

        apt(["install"] + debs, DEBIAN_LIBSPF2)
        installed_checks(cases)
        r = subprocess.run(["unshare", "-mn", sys.executable, os.path.abspath(__file__),
                            "--inner", dnsd], timeout=300)
        cases.run("Postfix with the installed spfkit-policyd (cases above)",
                  lambda: expect(r.returncode == 0, "status %d" % r.returncode))

        def exim_ours():
            path, owner = resolved_libspf2(exim)
            expect(owner == "libspf2-2-spfkit", "exim loads %s of %r" % (path, owner))
            print("ldd: exim4 loads %s (%s)" % (path, owner))
            code, out = run_exim(exim, conf, dnsd, root)
            print(out)
            expect(code == 0, "Exim on libspf2-2-spfkit: status %d" % code)
        cases.run("Debian's Exim on the installed libspf2-2-spfkit: forged, genuine, "
                  "temperror, spf_guess", exim_ours)
        purge_checks(cases, paths, existed, exim, conf, dnsd, root)
    except Exception as e:
        cases.fail("setup", str(e))
    finally:
        restore_machine()
        if root:
            shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(os.path.join(work, "debs"), ignore_errors=True)
    for p in DEBIAN_LIBSPF2:
        cases.run("%s installed at the end" % p,
                  lambda p=p: expect(status(p) == "install ok installed", status(p)))
    return cases.summary()


if __name__ == "__main__":
    sys.exit(main())
