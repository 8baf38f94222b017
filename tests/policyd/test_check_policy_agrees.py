#!/usr/bin/env python3
"""`spfkit check --format policy` answers what spfkit-policyd answers.

  test_check_policy_agrees.py SPFKIT_POLICYD SPFKIT ZONE

For each client below, the daemon (spawn mode, default configuration,
answers from ZONE) gets the Postfix policy request and `spfkit check
--format policy` the same client on its command line: the two action
lines must be the same, byte for byte (both go through mta/decision.c;
this catches the CLI's check flow drifting from mta/checker.c's).
"""
import os
import subprocess
import sys
import tempfile

POLICYD, SPFKIT, ZONE = (os.path.abspath(a) for a in sys.argv[1:4])
RECEIVER = "mx.example.org"

# ip, sender, helo: every result, HELO deciding, the null sender, a
# local address (skip_addresses), no HELO name (the sender's domain stands in)
CASES = [
    ("192.0.2.10", "alice@mx-only.example", "mail.mx-only.example"),
    ("192.0.2.10", "bob@nomail.example", "mail.example"),
    ("192.0.2.21", "eve@soft.example", "mail.example"),
    ("192.0.2.10", "frank@maybe.example", "mail.example"),
    ("192.0.2.10", "grace@plain.example", "mail.example"),
    ("192.0.2.10", "heidi@broken.example", "mail.example"),
    ("192.0.2.10", "ivan@explained.example", "mail.example"),
    ("192.0.2.10", "alice@mx-only.example", "gw.example"),
    ("192.0.2.40", "bob@nomail.example", "gw.example"),
    ("192.0.2.30", "", "gw.example"),
    ("192.0.2.40", "", "gw.example"),
    ("127.0.0.1", "bob@nomail.example", "mail.example"),
    ("198.51.100.7", "carol@shop.example", "mail.example"),
    ("2001:db8:100::1", "carol@shop.example", "mail.example"),
    ("192.0.2.10", "dave@void.example", "mail.example"),
    ("192.0.2.10", "bob@nomail.example", ""),
]


def daemon_answer(conf, ip, sender, helo):
    req = ("request=smtpd_access_policy\nprotocol_state=RCPT\nclient_address=%s\n"
           "sender=%s\nhelo_name=%s\nrecipient=u@receiver.example\n\n" % (ip, sender, helo))
    r = subprocess.run([POLICYD, "--zone", ZONE, "--receiver", RECEIVER, "--log", "stderr",
                        "-c", conf], input=req.encode(), capture_output=True, timeout=30)
    if r.returncode != 0:
        raise AssertionError("spfkit-policyd exit %d: %s" % (r.returncode, r.stderr.decode()))
    out = r.stdout.decode()
    if not out.endswith("\n\n") or out.count("\n") != 2:
        raise AssertionError("daemon answer %r" % out)
    return out[:-2]


def check_answer(ip, sender, helo):
    r = subprocess.run([SPFKIT, "check", "--format", "policy", "--zone", ZONE, "--receiver",
                        RECEIVER, "--ip", ip, "--sender", sender, "--helo", helo],
                       capture_output=True, timeout=30)
    out = r.stdout.decode()
    if r.stderr or not out.endswith("\n") or out.count("\n") != 1 or r.returncode in (2, 8):
        raise AssertionError("spfkit check: exit %d, %r %r" % (r.returncode, out, r.stderr))
    return out[:-1]


def main():
    failed = 0
    with tempfile.TemporaryDirectory(prefix="spfkit-agree-") as tmp:
        conf = os.path.join(tmp, "policyd-spf.conf")  # empty: the defaults
        open(conf, "w").close()
        for ip, sender, helo in CASES:
            got, want = check_answer(ip, sender, helo), daemon_answer(conf, ip, sender, helo)
            name = "%s <%s> %s" % (ip, sender, helo or "(no helo)")
            if got == want:
                print("ok   %s: %s" % (name, got[:70]))
            else:
                failed += 1
                print("FAIL %s:\n  spfkit check: %s\n  policyd:      %s" % (name, got, want))
    print("%d of %d disagree" % (failed, len(CASES)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
