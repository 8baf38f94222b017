"""A milter client (the MTA's side of the milter protocol, version 6),
enough to drive spfkit-milter without an MTA: option negotiation, the
SMTP-stage commands with their macros, headers, end of message, abort,
quit; the replies and header edits parsed.

Wire format (libmilter's mfdef.h): every packet is a 4-byte big-endian
length (command byte + data), the command byte, the data.
"""
import socket
import struct

# commands (MTA -> milter)
ABORT, BODY, CONNECT, MACRO, BODYEOB, HELO, HEADER, MAIL, EOH, OPTNEG, QUIT, RCPT, DATA = \
    b"A", b"B", b"C", b"D", b"E", b"H", b"L", b"M", b"N", b"O", b"Q", b"R", b"T"
# protocol flags (mfdef.h)
P_NOCONNECT, P_NOHELO, P_NOMAIL, P_NORCPT, P_NOBODY, P_NOHDRS, P_NOEOH, P_NR_HDR = \
    0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x40, 0x80
P_NOUNKNOWN, P_NODATA = 0x100, 0x200
ALL_STEPS = 0x1FFFFF
ACTIONS = 0x1FF
# final replies
FINAL = {b"a": "accept", b"c": "continue", b"r": "reject", b"t": "tempfail", b"y": "reply",
         b"d": "discard", b"4": "shutdown", b"f": "connfail", b"s": "skip"}


class Closed(Exception):
    pass


class Milter:
    def __init__(self, addr, timeout=30.0, offer_steps=ALL_STEPS):
        if isinstance(addr, str):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        else:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(addr)
        self.offer_steps = offer_steps
        self.proto = 0
        self.actions = 0

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    # ---- wire ----
    def send(self, cmd, data=b""):
        self.sock.sendall(struct.pack(">I", len(data) + 1) + cmd + data)

    def _read_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise Closed("milter closed the connection")
            buf += chunk
        return buf

    def read(self):
        (n,) = struct.unpack(">I", self._read_exact(4))
        if n < 1 or n > 1 << 24:
            raise ValueError("bad packet length %d" % n)
        pkt = self._read_exact(n)
        return pkt[:1], pkt[1:]

    def read_until_final(self):
        """Header edits and the like, then the final reply: (final, data, edits)."""
        edits = []
        while True:
            cmd, data = self.read()
            if cmd in FINAL:
                return FINAL[cmd], data, edits
            edits.append(parse_edit(cmd, data))

    # ---- steps ----
    def negotiate(self):
        self.send(OPTNEG, struct.pack(">III", 6, ACTIONS, self.offer_steps))
        cmd, data = self.read()
        assert cmd == b"O", cmd
        version, self.actions, self.proto = struct.unpack(">III", data[:12])
        assert version == 6, version
        return self.actions, self.proto

    def macros(self, stage, pairs):
        data = stage
        for k, v in pairs.items():
            data += z(k) + z(v)
        self.send(MACRO, data)

    def step(self, cmd, data=b"", skip_flag=0, noreply_flag=0):
        """Send a command unless negotiated away; the final reply, or None."""
        if skip_flag and self.proto & skip_flag:
            return None
        self.send(cmd, data)
        if noreply_flag and self.proto & noreply_flag:
            return None
        final, rdata, edits = self.read_until_final()
        assert not edits, edits
        return final, rdata

    def connect(self, ip, hostname="client.example", port=25, macros=None):
        if macros:
            self.macros(CONNECT, macros)
        if ip is None:
            data = z(hostname) + b"U"
        else:
            fam = b"6" if ":" in ip else b"4"
            data = z(hostname) + fam + struct.pack(">H", port) + z(ip)
        return self.step(CONNECT, data, P_NOCONNECT)

    def helo(self, name, macros=None):
        if macros:
            self.macros(HELO, macros)
        return self.step(HELO, z(name), P_NOHELO)

    def mail(self, sender, macros=None, args=()):
        """MAIL FROM: the address, then the ESMTP parameters (as Postfix and Sendmail send them)."""
        if macros:
            self.macros(MAIL, macros)
        return self.step(MAIL, z(sender) + b"".join(z(a) for a in args), P_NOMAIL)

    def rcpt(self, rcpt):
        return self.step(RCPT, z(rcpt), P_NORCPT)

    def data(self):
        return self.step(DATA, b"", P_NODATA)

    def header(self, name, value):
        return self.step(HEADER, z(name) + z(value), P_NOHDRS, P_NR_HDR)

    def eoh(self):
        return self.step(EOH, b"", P_NOEOH)

    def body(self, chunk):
        return self.step(BODY, chunk, P_NOBODY)

    def eom(self, macros=None):
        if macros:
            self.macros(BODYEOB, macros)
        self.send(BODYEOB)
        return self.read_until_final()

    def abort(self):
        self.send(ABORT)

    def quit(self):
        self.send(QUIT)
        self.close()


def z(s):
    """A NUL-terminated field; bytes as given, str as UTF-8."""
    if isinstance(s, str):
        s = s.encode("utf-8", "surrogateescape")
    return s + b"\0"


def parse_edit(cmd, data):
    if cmd in (b"i", b"m"):
        (idx,) = struct.unpack(">I", data[:4])
        name, value = data[4:].split(b"\0")[:2]
        return (cmd.decode(), idx, name.decode(), value.decode())
    if cmd == b"h":
        name, value = data.split(b"\0")[:2]
        return ("h", None, name.decode(), value.decode())
    return (cmd.decode(), None, None, data)
