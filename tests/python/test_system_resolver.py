"""The issue's acceptance: `python3 -c "import spfkit as spf;
print(spf.check2(i='192.0.2.1', s='a@example.org', h='mx.example.org'))"`
answers as pyspf's does, both asking a real DNS server (tests/dnsd)
through the system's resolver configuration, in a private network and
mount namespace (system_resolver_inner.py). Needs root and unshare(1)."""
import os
import shutil
import subprocess
import sys

import pytest

INNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "system_resolver_inner.py")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="needs root and unshare for a private /etc/resolv.conf")
def test_check2_with_the_system_resolver():
    r = subprocess.run(["unshare", "-mn", sys.executable, INNER], capture_output=True,
                       text=True, timeout=240, check=False)
    print(r.stdout, r.stderr)
    lines = [x for x in r.stdout.splitlines() if x.startswith(("ok ", "FAIL "))]
    assert r.returncode == 0 and len(lines) == 4, r.stdout + r.stderr
    assert "spfkit ('pass', 'sender SPF authorized')" in lines[0]
    assert "spfkit ('fail', '203.0.113.9 may not send for example.org')" in lines[2]
