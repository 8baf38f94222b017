#!/usr/bin/env python3
"""libspf2's own DNS path, SPF_server_new(SPF_DNS_CACHE, 0) as smf-spf and
milter-greylist call it, against tests/dnsd on 127.0.0.1 (the library's
resolv layer reads $SPFKIT_DNS_SERVERS before /etc/resolv.conf).

  test_resolv.py CONSUMER DNSD
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mta"))
import harness  # noqa: E402  (tests/mta/harness.py)

CONSUMER, DNSD = sys.argv[1], sys.argv[2]

ZONE = """$ORIGIN example.
$TTL 300
pass    IN TXT "v=spf1 ip4:192.0.2.0/24 -all"
inc     IN TXT "v=spf1 include:pass.example mx -all"
inc     IN MX 10 mail.inc.example.
mail.inc IN A 198.51.100.25
broken  IN TXT "v=spf1 a:sf.example -all"
"""

# (ip, sender, helo, want result, want text in the output)
CASES = [
    ("192.0.2.5", "alice@pass.example", "h.example", "pass mechanism",
     "mx.receiver.example: domain of pass.example designates 192.0.2.5 as permitted sender"),
    ("203.0.113.5", "alice@pass.example", "h.example", "fail mechanism",
     "does not designate 203.0.113.5 as permitted sender"),
    ("198.51.100.25", "bob@inc.example", "h.example", "pass mechanism",
     "domain of inc.example designates 198.51.100.25"),
    ("192.0.2.5", "carol@broken.example", "h.example", "temperror none",
     "encountered temporary error during SPF processing of domain of broken.example"),
    ("192.0.2.5", "dave@nothing.example", "h.example", "none (invalid reason)",
     "domain of nothing.example does not provide an SPF record"),
    ("127.0.0.1", "erin@pass.example", "h.example", "pass localhost",
     "localhost is always allowed."),
]


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as root:
        zone = os.path.join(root, "zone")
        port_file = os.path.join(root, "port")
        with open(zone, "w") as f:
            f.write(ZONE)
        dnsd = subprocess.Popen([DNSD, "--zone", zone, "--port", "0", "--port-file", port_file,
                                 "--servfail", "sf.example"], stdout=subprocess.DEVNULL)
        try:
            port = harness.dnsd_port(dnsd, port_file)
            env = dict(os.environ, SPFKIT_DNS_SERVERS="127.0.0.1:%d" % port)
            for ip, sender, helo, want, text in CASES:
                out = subprocess.run([CONSUMER, "--resolv", ip, sender, helo], env=env,
                                     capture_output=True, text=True, timeout=60)
                line = out.stdout.strip()
                if out.returncode != 0 or not line.startswith(want + " |") or text not in line:
                    print("FAIL %s %s: got %r (rc %d, stderr %r), want %r with %r"
                          % (ip, sender, line, out.returncode, out.stderr[-500:], want, text))
                    failures += 1
                else:
                    print("ok %s %s: %s" % (ip, sender, line))
        finally:
            dnsd.terminate()
            dnsd.wait(10)
    print("%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
