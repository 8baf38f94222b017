#!/usr/bin/env python3
"""spfkit-policyd in spawn form writes nothing but replies to its client
(issue 33, finding 6).

  test_spawn_stream.py SPFKIT_POLICYD

Postfix's spawn(8) gives the child one socket as its standard input, output
*and error*. Each case runs the daemon that way (one end of a socketpair as
descriptors 0, 1 and 2), in a private mount namespace (`unshare -m`) whose
/dev is a fresh tmpfs holding null, zero, random and urandom and, as the
case wants, no `log`, a `log` socket nobody listens on, or a `log` that is
this test's own syslog listener: the daemon looks for its syslog daemon at
the real default path, /dev/log. Two pipelined requests, then the end of
input: the stream must hold exactly the two replies, `action=...` and an
empty line each, and nothing else (the daemon's "no syslog daemon answers"
notice and its decision lines used to come first). With a listener, the
decision lines must reach it; with a configuration error, the stream stays
empty and the error reaches the listener.

Needs root (a mount namespace); exit 77 (skipped) without it.
"""
import os
import shutil
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mta"))
import harness  # noqa: E402  (tests/mta/harness.py)

BIN = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "spfkit-policyd"
SKIP = 77

ZONE = 'example.com. TXT "v=spf1 ip4:192.0.2.0/24 -all"\n'

# /dev replaced in this namespace only; the daemon is exec'd last.
PRIVATE_DEV = r"""
set -e
mount --make-rprivate /
mkdir "$T/realdev"
mount --rbind /dev "$T/realdev"
mount -t tmpfs -o mode=755 spfkit-test-dev /dev
for n in null zero random urandom; do
    touch "/dev/$n"
    mount --bind "$T/realdev/$n" "/dev/$n"
done
umount -l "$T/realdev"
if [ -n "$LOG" ]; then ln -s "$LOG" /dev/log; fi
exec "$@"
"""


def request(sender, ip):
    return ("request=smtpd_access_policy\nprotocol_state=RCPT\nprotocol_name=SMTP\n"
            "client_address=%s\nhelo_name=mx.example.com\nsender=%s\n"
            "recipient=bob@receiver.test\n\n" % (ip, sender)).encode()


def read_all(s, timeout=30):
    s.settimeout(timeout)
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:  # gone before reading what we sent: no bytes lost
            return data
        if not chunk:
            return data
        data += chunk


def spawn(tmp, log_target, conf_text, data):
    """The daemon on a socketpair as stdin, stdout and stderr, /dev/log being
    log_target (None: absent); data sent, then the end of input. (exit
    status, every byte the stream brought back)."""
    zone = os.path.join(tmp, "zone")
    conf = os.path.join(tmp, "policyd-spf.conf")
    with open(zone, "w") as f:
        f.write(ZONE)
    with open(conf, "w") as f:
        f.write(conf_text)
    env = dict(os.environ, T=tmp, LOG=log_target or "")
    ours, theirs = socket.socketpair()
    cmd = ["unshare", "-m", "sh", "-c", PRIVATE_DEV, "sh", BIN, "--zone", zone,
           "--receiver", "mx.receiver.test", conf]
    p = subprocess.Popen(cmd, stdin=theirs, stdout=theirs, stderr=theirs, env=env,
                         close_fds=True)
    theirs.close()
    with ours:
        ours.sendall(data)
        ours.shutdown(socket.SHUT_WR)
        got = read_all(ours)
    return p.wait(30), got


REPLY_PASS = (b"action=prepend Received-SPF: pass (mx.receiver.test: domain of a@example.com "
              b"designates 192.0.2.10 as permitted sender) client-ip=192.0.2.10; "
              b"envelope-from=\"a@example.com\"; helo=mx.example.com; "
              b"receiver=mx.receiver.test; identity=mailfrom; mechanism=\"ip4:192.0.2.0/24\"\n\n")
REPLY_FAIL_START = b"action=550 5.7.23 "


def check_stream(rc, got, what):
    if rc != 0:
        raise AssertionError("%s: exit status %r; stream %r" % (what, rc, got[:300]))
    if not got.startswith(REPLY_PASS):
        raise AssertionError("%s: the stream begins %r, not the first reply" % (what, got[:300]))
    rest = got[len(REPLY_PASS):]
    if not rest.startswith(REPLY_FAIL_START) or rest.count(b"\n") != 2 or \
            not rest.endswith(b"\n\n"):
        raise AssertionError("%s: after the first reply %r, not the second reply alone"
                             % (what, rest[:300]))


def requests():
    """A pass, then a fail (another client address)."""
    return request("a@example.com", "192.0.2.10") + request("b@example.com", "203.0.113.5")


def test_no_dev_log(tmp):
    """No /dev/log at all (a container, a minimal host)."""
    check_stream(*spawn(tmp, None, "debugLevel = 1\n", requests()), what="no /dev/log")
    return "two replies, nothing else"


def listener(tmp):
    """A syslog daemon's socket: (the socket, its path)."""
    path = os.path.join(tmp, "syslog.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    os.chmod(path, 0o666)
    return s, path


def test_dead_dev_log(tmp):
    """/dev/log a socket nobody listens on (a syslog daemon stopped): refused."""
    s, dead = listener(tmp)
    s.close()  # the file stays: connecting to it is refused
    check_stream(*spawn(tmp, dead, "debugLevel = 1\n", requests()), what="dead /dev/log")
    return "two replies, nothing else"


def drain(s):
    """The datagrams that came in."""
    s.setblocking(False)
    lines = []
    try:
        while True:
            lines.append(s.recv(65536).decode(errors="replace"))
    except BlockingIOError:
        pass
    return lines


def test_syslog_listener(tmp):
    """A syslog daemon at /dev/log: the decisions reach it, not the stream."""
    s, path = listener(tmp)
    with s:
        check_stream(*spawn(tmp, path, "debugLevel = 1\n", requests()), what="syslog listener")
        lines = drain(s)
    decisions = [l for l in lines if "mailfrom_result=" in l]
    if len(decisions) != 2 or not all(l.startswith("<22>") for l in decisions):
        raise AssertionError("syslog got %r, want the two decisions at mail.info" % lines)
    return "two replies on the stream, two decisions in syslog"


def test_config_error_to_syslog(tmp):
    """A configuration the daemon refuses: not a byte on the stream; the
    problem is in syslog, and the exit status says it."""
    s, path = listener(tmp)
    with s:
        rc, got = spawn(tmp, path, "HELO_reject = fail\n", requests())
        lines = drain(s)
    if got != b"":
        raise AssertionError("the stream got %r" % got[:300])
    if rc != 1:
        raise AssertionError("exit status %r, want 1" % rc)
    if not any("error: HELO_reject" in l for l in lines) or \
            not any("not starting" in l for l in lines):
        raise AssertionError("syslog got %r" % lines)
    return "exit 1, stream empty, %d lines in syslog" % len(lines)


def main():
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        print("skip: needs root and unshare(1) for a private /dev")
        return SKIP
    tests = [test_no_dev_log, test_dead_dev_log, test_syslog_listener,
             test_config_error_to_syslog]
    return harness.run_each(tests, "spfkit-spawn-stream-", mode=0o755)


if __name__ == "__main__":
    sys.exit(main())
