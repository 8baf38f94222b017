#!/usr/bin/python3
"""Run by test_system_resolver.py inside `unshare -mn`: tests/dnsd on
127.0.0.53:53 with /etc/resolv.conf bind-mounted to it (tests/mta's
harness.private_resolver()), then the issue's acceptance command, for
spfkit and for pyspf, each a fresh `python3 -c` using the system's
resolver. Prints both answers; exit status 1 when they differ."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ["SPFKIT_SOURCE_ROOT"], "tests", "mta"))
import harness  # noqa: E402

ZONE = """$TTL 300
example.org.      IN TXT "v=spf1 ip4:192.0.2.0/24 mx -all exp=why.example.org"
example.org.      IN MX 10 mx.example.org.
mx.example.org.   IN A 198.51.100.7
why.example.org.  IN TXT "%{i} may not send for %{d}"
"""
CASES = [("192.0.2.1", "a@example.org"), ("198.51.100.7", "a@example.org"),
         ("203.0.113.9", "a@example.org"), ("192.0.2.1", "a@nothing.example.org")]
COMMAND = "import %s as spf; print(spf.check2(i=%r, s=%r, h='mx.example.org'))"


# The sanitizer build preloads libasan into Python (tests/python/meson.build):
# for the spfkit child only, not for ip(8), dnsd or pyspf's interpreter.
SANITIZER = {k: os.environ.pop(k) for k in ("LD_PRELOAD", "PYTHONMALLOC") if k in os.environ}


def main():
    cleanup = harness.Cleanup()
    failed = 0
    try:
        tmp = harness.TempDir(cleanup, "spfkit-py-ns-")
        harness.private_resolver(cleanup, tmp, os.environ["SPFKIT_DNSD"], ZONE)
        for ip, sender in CASES:
            out = {}
            for module in ("spfkit", "spf"):
                env = dict(os.environ, **(SANITIZER if module == "spfkit" else {}))
                r = subprocess.run([sys.executable, "-c", COMMAND % (module, ip, sender)],
                                   capture_output=True, text=True, timeout=60, check=False,
                                   env=env)
                out[module] = r.stdout.strip() if r.returncode == 0 else "exit %d: %s" % (
                    r.returncode, r.stderr.strip()[-300:])
            same = out["spfkit"] == out["spf"]
            failed += not same
            print("%s %s %s: spfkit %s, pyspf %s" % ("ok" if same else "FAIL", ip, sender,
                                                     out["spfkit"], out["spf"]), flush=True)
    finally:
        cleanup.run()
    return 1 if failed else 0


sys.exit(main())
