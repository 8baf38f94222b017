"""spfkit: libspfkit's SPF (RFC 7208) evaluator for Python.

pyspf's API, for code written for it (`import spfkit as spf`):

    spf.check2(i='192.0.2.1', s='a@example.org', h='mx.example.org')
        -> ('pass', 'sender SPF authorized')
    spf.check(i, s, h) -> (result, code, explanation)
    spf.query(i, s, h).check() -> (result, code, explanation)

The native API: a Context holds the settings and a Resolver (the
system's servers, given servers, or a zone), and check() gives a Result:

    ctx = spfkit.Context(spfkit.Resolver(servers='127.0.0.1:5353'),
                         receiver='mx.example.net')
    r = ctx.check('192.0.2.1', 'a@example.org', 'mx.example.org', trace=True)
    r.result, r.explanation, r.mechanism, r.counters, r.trace
    r.received_spf(), r.authentication_results('mx.example.net')

check() runs without the GIL, from any number of threads at once. For
asyncio, spfkit.aio.AsyncContext: `await ctx.check(...)`.
See docs/python.md for the differences from pyspf.
"""
from ._spfkit import Context, Error, Resolver, Result, library_version
from ._pyspf import (DEFAULT_SPF, EXPLANATIONS, MAX_LOOKUP, MAX_MX, MAX_PER_LOOKUP_TIME,
                     MAX_PTR, MAX_VOID_LOOKUPS, RESULTS, AmbiguityWarning, PermError,
                     TempError, check, check2, query, quote_value, set_resolver,
                     split_email)

__version__ = library_version

__all__ = ["Context", "Error", "Resolver", "Result", "library_version", "check", "check2",
           "query", "AmbiguityWarning", "PermError", "TempError", "set_resolver",
           "split_email", "quote_value", "RESULTS", "EXPLANATIONS", "DEFAULT_SPF",
           "MAX_LOOKUP", "MAX_MX", "MAX_PTR", "MAX_VOID_LOOKUPS", "MAX_PER_LOOKUP_TIME"]
