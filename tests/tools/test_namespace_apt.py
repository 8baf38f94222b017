#!/usr/bin/env python3
"""No package is installed from inside a namespace (issue 27).

  test_namespace_apt.py

libspf2-opendmarc-e2e once started Postfix inside its private network and
mount namespace, where /etc/resolv.conf points at tests/dnsd; Postfix was
installed there on demand, which only works where it was already
installed: on a fresh machine apt could not resolve its mirror. The shared
test helpers (tests/mta/harness.py) now refuse every install call inside
a namespace, whether or not anything is missing, and a Postfix started
inside one must have been installed before it was entered. This runs
them in children under `unshare` and checks each refusal, and that the
same calls outside are accepted. A second check reads every test script
that enters a network or mount namespace with unshare (each runs itself
again with --inner there): no function reached from its inner() may call
apt-get, apt, dpkg or the helpers' installers, which the first check
would miss when a script calls apt itself.

Exit 77 (skipped) when not root or without unshare.
"""
import ast
import glob
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
MTA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mta")
sys.path.insert(0, MTA_DIR)
import harness  # noqa: E402

SKIP = 77

# each child: python code run with harness imported, and what must come of it
REFUSED = "inside a private namespace, where apt cannot reach its mirrors"
NOT_BEFORE = "was not installed before entering it"
CASES = [
    # (name, unshare flags or None, environment additions, code, wanted output)
    ("ensure_packages of an installed package, in a network namespace", ["-n"], {},
     "harness.ensure_packages('dpkg')", REFUSED),
    ("apt_install, in a network namespace", ["-n"], {},
     "harness.apt_install('hello')", REFUSED),
    ("ensure_postfix, in a mount namespace", ["-m"], {},
     "harness.ensure_postfix()", REFUSED),
    ("apt_download (an MTA to unpack), in a network namespace", ["-n"], {},
     "harness.apt_download('/nonexistent', 'hello')", REFUSED),
    # libspf2-opendmarc-e2e's pattern: nothing ensured before unshare -mn
    ("a Postfix started in the namespaces, not installed before", ["-mn"], {},
     "harness.Postfix(None, None, 0, '')", NOT_BEFORE),
    ("a Postfix installed before the namespaces were entered", ["-mn"],
     {harness.ENSURED_ENV: "opendmarc,postfix"},
     "harness.require_ensured('postfix'); print('accepted')", "accepted"),
    # packages-e2e's own apt-get and dpkg --purge (its install of the built
    # .deb files, Debian's libspf2 put back, ours purged)
    ("packages-e2e's apt(), in a network namespace", ["-n"], {},
     "sys.path.insert(0, %r); import test_packages_e2e as t; t.apt(['install', 'hello'], [])"
     % os.path.join(MTA_DIR, "..", "packaging"), REFUSED),
    ("packages-e2e's dpkg --purge, in a mount namespace", ["-m"], {},
     "sys.path.insert(0, %r); import test_packages_e2e as t; t.dpkg_purge()"
     % os.path.join(MTA_DIR, "..", "packaging"), REFUSED),
    ("ensure_packages of an installed package, outside", None, {},
     "harness.ensure_packages('dpkg'); print('accepted', harness.in_private_namespace())",
     "accepted False"),
]


def run_child(flags, env_add, code):
    prog = "import sys; sys.path.insert(0, %r); import harness\n%s\n" % (MTA_DIR, code)
    env = dict(os.environ)
    env.pop(harness.ENSURED_ENV, None)
    env.update(env_add)
    cmd = [sys.executable, "-B", "-c", prog]
    if flags is not None:
        cmd = ["unshare"] + flags + cmd
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


TESTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
INSTALLERS = {"apt_install", "apt_download", "ensure_packages", "ensure_postfix",
              "install_exim_libraries"}
APT_PROGRAMS = {"apt-get", "apt", "aptitude", "dpkg"}


def callee(call):
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def namespace_commands(tree):
    """The lists ["unshare", "-n..."/"-m..."/"--net"/"--mount", ...] of a script."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.List) and node.elts:
            words = [e.value for e in node.elts if isinstance(e, ast.Constant)
                     and isinstance(e.value, str)]
            if words[:1] == ["unshare"] and any(
                    w.startswith("--net") or w.startswith("--mount") or
                    (w.startswith("-") and not w.startswith("--") and set(w[1:]) & {"n", "m"})
                    for w in words[1:]):
                out.append((node, words))
    return out


def apt_in_namespace(path):
    """The apt calls a script makes inside its namespaces: [(line, what)],
    None when it enters none. A script running itself again (--inner) is
    followed from inner() through the functions it calls; any other
    command is read word by word (a shell script in a string included)."""
    tree = ast.parse(open(path).read(), path)
    commands = namespace_commands(tree)
    if not commands:
        return None
    found = []
    for node, words in commands:
        for w in words:
            if set(w.replace(";", " ").split()) & APT_PROGRAMS:
                found.append((node.lineno, "%r in the unshare command" % w))
    if not any("--inner" in words for _, words in commands):
        return found
    funcs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    if "inner" not in funcs:
        return found + [(0, "runs itself with --inner but has no inner()")]
    seen, todo = set(), ["inner"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for node in ast.walk(funcs[name]):
            if isinstance(node, ast.Call):
                c = callee(node)
                if c in INSTALLERS:
                    found.append((node.lineno, "%s() in %s()" % (c, name)))
                elif c in funcs:
                    todo.append(c)
            elif isinstance(node, ast.List) and node.elts and isinstance(
                    node.elts[0], ast.Constant) and node.elts[0].value in APT_PROGRAMS:
                found.append((node.lineno, "%s in %s()" % (node.elts[0].value, name)))
    return found


def static_check(paths):
    """Failures of the scan of PATHS; prints what it read."""
    failures = 0
    scanned = 0
    for path in paths:
        found = apt_in_namespace(path)
        if found is None:
            continue
        scanned += 1
        rel = os.path.relpath(path, TESTS_DIR)
        for line, what in found:
            print("FAIL %s:%d: %s, inside its namespace" % (rel, line, what))
            failures += 1
    print("%s %d scripts entering a namespace read, no apt call inside"
          % ("ok  " if not failures else "FAIL", scanned) if not failures else
          "FAIL %d apt call(s) inside a namespace" % failures)
    return failures, scanned


def main():
    if "--scan" in sys.argv:  # only the static check, on the files given
        failures, _ = static_check(sys.argv[sys.argv.index("--scan") + 1:])
        return 1 if failures else 0
    failures, scanned = static_check(sorted(glob.glob(os.path.join(TESTS_DIR, "*", "*.py"))))
    if scanned < 3:  # libspf2-exim-e2e, libspf2-opendmarc-e2e, packages-e2e at least
        print("FAIL only %d scripts entering a namespace found" % scanned)
        failures += 1
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        print("skip: needs root and unshare")
        return 1 if failures else SKIP
    for name, flags, env_add, code, want in CASES:
        status, out = run_child(flags, env_add, code)
        refused = want != "accepted" and not want.startswith("accepted")
        ok = want in out and (status != 0) == refused
        print("%s %s" % ("ok  " if ok else "FAIL", name))
        if not ok:
            print("    status %d, want %r in:\n%s" % (status, want, out[-1500:]))
            failures += 1
    print("%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
