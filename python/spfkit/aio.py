"""spfkit for asyncio: `await AsyncContext(...).check(ip, sender, helo)`.

The evaluation is libspfkit's sans-I/O state machine; its DNS questions
go to a c-ares resolver whose sockets the running loop watches
(loop.add_reader / add_writer) and whose retransmissions are loop timers:
no thread, no blocking call. One c-ares resolver per event loop (it
belongs to that loop's thread). A zone Resolver answers at once.
`await ctx.lint(domain)` and `await ctx.tree(domain)` run lint's walk,
which does its own blocking DNS, in the loop's default executor.
"""
import asyncio
import functools
import os
import socket

from . import _spfkit
from ._spfkit import Context, Resolver


# One c-ares socket carries every check of a loop: a hundred checks at once
# against a fast server get replies of up to 4 KB each (EDNS0) faster than
# a busy loop reads them, and past the default 208 KiB receive buffer the
# kernel drops them (c-ares asks again after 2 s). Measured in
# docs/python.md: 1 MiB keeps 100 checks at once without loss.
RCVBUF = 1 << 20


def _widen(fd):
    try:
        with socket.socket(fileno=os.dup(fd)) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
    except OSError:
        pass  # not a socket we may change: the default buffer then


class _LoopDriver:
    """A Driver (C) bound to one loop: its sockets and its timer."""

    def __init__(self, loop, resolver):
        self.loop = loop
        self.timer = None
        self.watched = {}  # fd -> events
        self.driver = _spfkit.Driver(resolver, self._watch)

    def _watch(self, fd, events):
        if fd < 0:
            return  # only "the timeout moved": _rearm() runs after every call
        old = self.watched.get(fd, 0)
        if not old and events:
            _widen(fd)
        if old & _spfkit.READ and not events & _spfkit.READ:
            self.loop.remove_reader(fd)
        if old & _spfkit.WRITE and not events & _spfkit.WRITE:
            self.loop.remove_writer(fd)
        if events & _spfkit.READ and not old & _spfkit.READ:
            self.loop.add_reader(fd, self._ready, fd, _spfkit.READ)
        if events & _spfkit.WRITE and not old & _spfkit.WRITE:
            self.loop.add_writer(fd, self._ready, fd, _spfkit.WRITE)
        if events:
            self.watched[fd] = events
        else:
            self.watched.pop(fd, None)

    def _ready(self, fd, events):
        self.driver.process_fd(fd, events)
        self._rearm()

    def _on_timer(self):
        self.timer = None
        self.driver.process_timeout()
        self._rearm()

    def _rearm(self):
        ms = self.driver.timeout()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if ms >= 0:
            self.timer = self.loop.call_later(ms / 1000.0, self._on_timer)

    def start(self, context, done, args, kwargs):
        token = self.driver.start(context, done, *args, **kwargs)
        self._rearm()
        return token

    def expire(self, token):
        self.driver.expire(token)
        self._rearm()

    def close(self):
        for fd, events in list(self.watched.items()):
            self._watch(fd, 0)
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.driver.close()


class AsyncContext(Context):
    """A Context whose check() is a coroutine: `await ctx.check(ip,
    sender, helo, identity='mailfrom', record=None, trace=False, now=0)`
    gives an spfkit.Result. The same arguments as Context(); the whole
    check is capped by time_budget_ms (0: 20 s, RFC 7208 4.6.4), after
    which open questions fail and the result is temperror."""

    def __init__(self, resolver=None, **kwargs):
        if resolver is None:
            resolver = Resolver()
        super().__init__(resolver, **kwargs)
        self._budget_s = (kwargs.get("time_budget_ms") or 20000) / 1000.0
        self._drivers = {}

    def _driver(self, loop):
        for old in [lp for lp in self._drivers if lp.is_closed()]:
            self._drivers.pop(old).close()  # asyncio.run() ended: its sockets go too
        d = self._drivers.get(loop)
        if d is None:
            d = _LoopDriver(loop, self.resolver)
            self._drivers[loop] = d
        return d

    async def check(self, ip, sender, helo, **kwargs):
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        ended = []

        def done(outcome):
            ended.append(True)
            if fut.done():  # cancelled
                return
            if isinstance(outcome, BaseException):
                fut.set_exception(outcome)
            else:
                fut.set_result(outcome)

        driver = self._driver(loop)
        token = driver.start(self, done, (ip, sender, helo), kwargs)
        if fut.done():
            return fut.result()
        expiry = loop.call_later(self._budget_s, driver.expire, token)
        try:
            return await fut
        finally:
            expiry.cancel()
            if not ended:  # cancelled: end the check, its questions with it
                driver.expire(token)

    async def lint(self, domain=None, **kwargs):
        """Context.lint() in the loop's default executor: lint's walk
        (<spfkit/publish.h>) asks its questions itself and blocks, it is
        not the sans-I/O evaluator, so it runs in a thread (without the
        GIL), on a DNS backend of its own from the Resolver's pool."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            None, functools.partial(Context.lint, self, domain, **kwargs))

    async def tree(self, domain=None, **kwargs):
        """Context.tree() in the loop's default executor, as lint()."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            None, functools.partial(Context.tree, self, domain, **kwargs))

    def close(self):
        """Drop the loops' resolvers (checks still open never end)."""
        for d in self._drivers.values():
            d.close()
        self._drivers.clear()
