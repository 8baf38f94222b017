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
same calls outside are accepted.

Exit 77 (skipped) when not root or without unshare.
"""
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
    # libspf2-opendmarc-e2e's pattern: nothing ensured before unshare -mn
    ("a Postfix started in the namespaces, not installed before", ["-mn"], {},
     "harness.Postfix(None, None, 0, '')", NOT_BEFORE),
    ("a Postfix installed before the namespaces were entered", ["-mn"],
     {harness.ENSURED_ENV: "opendmarc,postfix"},
     "harness.require_ensured('postfix'); print('accepted')", "accepted"),
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


def main():
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        print("skip: needs root and unshare")
        return SKIP
    failures = 0
    for name, flags, env_add, code, want in CASES:
        status, out = run_child(flags, env_add, code)
        refused = want != "accepted" and not want.startswith("accepted")
        ok = want in out and (status != 0) == refused
        print("%s %s" % ("ok  " if ok else "FAIL", name))
        if not ok:
            print("    status %d, want %r in:\n%s" % (status, want, out[-1500:]))
            failures += 1
    print("%d passed, %d failed" % (len(CASES) - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
