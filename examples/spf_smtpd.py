#!/usr/bin/python3
"""An SMTP server that checks SPF at MAIL FROM, on aiosmtpd and spfkit.aio.

usage: spf_smtpd.py [--listen ADDR] [--port N] [--dns SERVERS | --zone FILE]
                    [--receiver NAME] [--mbox FILE]

Each MAIL FROM is checked with `await ctx.check(client ip, sender, HELO)`
on the server's own event loop (no thread): fail is refused with 550
5.7.23 (and the domain's explanation), temperror with 451 4.7.24 and
permerror with 550 5.7.24 (RFC 7372, RFC 7208 section 8); any other
result is accepted and the message gets a Received-SPF header on top
(section 9.1). Accepted messages are appended to --mbox (default: none).
Prints "listening on ADDR:PORT" once ready (--port 0 picks a free one).
"""
import argparse
import asyncio
import mailbox
import sys

from aiosmtpd.smtp import SMTP

import spfkit
from spfkit.aio import AsyncContext


class SPFHandler:
    def __init__(self, ctx, mbox):
        self.ctx = ctx
        self.mbox = mbox

    async def handle_MAIL(self, server, session, envelope, address, mail_options):
        res = await self.ctx.check(session.peer[0], address, session.host_name or "")
        reply = res.smtp_reply()
        if reply is not None:
            return reply[2]  # "550 5.7.23 ...", "451 4.7.24 ...", "550 5.7.24 ..."
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        envelope.spf_header = res.received_spf()
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.mbox is not None:
            data = envelope.content if isinstance(envelope.content, bytes) \
                else envelope.content.encode("utf-8", "surrogateescape")
            box = mailbox.mbox(self.mbox)
            box.lock()
            try:
                box.add(envelope.spf_header.encode("ascii", "replace") + b"\r\n" + data)
            finally:
                box.unlock()
                box.close()
        return "250 Message accepted"


async def serve(args):
    if args.zone:
        resolver = spfkit.Resolver(zone=args.zone)
    else:
        resolver = spfkit.Resolver(args.dns)  # None: /etc/resolv.conf
    ctx = AsyncContext(resolver, receiver=args.receiver)
    handler = SPFHandler(ctx, args.mbox)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(handler, hostname=args.receiver),
                                      args.listen, args.port)
    addr = server.sockets[0].getsockname()
    print("listening on %s:%d" % (addr[0], addr[1]), flush=True)
    async with server:
        await server.serve_forever()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--listen", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8025)
    p.add_argument("--dns", help="DNS servers, e.g. 127.0.0.1:5353 (default: resolv.conf)")
    p.add_argument("--zone", help="answer from this zone file instead of DNS")
    p.add_argument("--receiver", default="mx.example.net")
    p.add_argument("--mbox", help="append accepted messages to this mbox")
    try:
        asyncio.run(serve(p.parse_args()))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
