"""examples/spf_smtpd.py (aiosmtpd + spfkit.aio) over tests/dnsd: a
sender whose domain designates 127.0.0.1 is accepted and its message
stored with a Received-SPF header; one whose domain says -all is refused
at MAIL FROM with 550 5.7.23 and the domain's explanation; a domain
whose DNS times out gets 451 4.7.24."""
import mailbox
import os
import signal
import smtplib
import subprocess
import sys

import pytest

EXAMPLE = os.path.join(os.environ["SPFKIT_SOURCE_ROOT"], "examples", "spf_smtpd.py")
ZONE = """$TTL 300
good.example.    IN TXT "v=spf1 ip4:127.0.0.1 -all"
bad.example.     IN TXT "v=spf1 ip4:192.0.2.1 -all exp=why.bad.example"
why.bad.example. IN TXT "%{i} is not a server of %{d}"
"""


@pytest.fixture
def server(dnsd_factory, tmp_path):
    d = dnsd_factory(ZONE, ["--timeout", "slow.example"])
    mbox = str(tmp_path / "mbox")
    proc = subprocess.Popen([sys.executable, EXAMPLE, "--port", "0", "--dns", d.servers,
                             "--receiver", "mx.test.example", "--mbox", mbox],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()
    assert line.startswith("listening on 127.0.0.1:"), line + proc.stdout.read()
    yield int(line.rsplit(":", 1)[1]), mbox
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_spf_at_mail_from(server):
    port, mbox = server
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as s:
        s.ehlo("client.good.example")
        code, msg = s.mail("alice@bad.example")
        assert (code, msg) == (550, b"5.7.23 127.0.0.1 is not a server of bad.example")
        s.rset()
        code, msg = s.mail("carol@slow.example")
        assert code == 451 and msg.startswith(b"4.7.24"), (code, msg)
        s.rset()
        assert s.mail("bob@good.example")[0] == 250
        assert s.rcpt("postmaster@mx.test.example")[0] == 250
        assert s.data(b"Subject: hello\r\n\r\nbody\r\n")[0] == 250
    msgs = list(mailbox.mbox(mbox))
    assert len(msgs) == 1
    assert msgs[0]["Subject"] == "hello"
    spf = msgs[0]["Received-SPF"]
    assert spf.startswith("pass (mx.test.example: domain of bob@good.example designates "
                          "127.0.0.1 as permitted sender)"), spf
