"""pyspf's API (Debian's python3-spf 2.0.14, spf.py) on libspfkit.

check2(), check() and the query class take pyspf's arguments and give
its return values and exceptions, so that code written for pyspf runs
with `import spfkit as spf`. The evaluation is libspfkit's: RFC 7208
exactly, in C, with the GIL released. Differences kept (docs/python.md):

- The texts of permerror and temperror after "SPF Permanent Error: " and
  "SPF Temporary Error: " are libspfkit's (they name the input and the
  RFC rule), not pyspf's.
- An exp= explanation is given for fail only (RFC 7208 section 6.2);
  pyspf also returns it for softfail.
- The void-lookup limit is RFC 7208 section 4.6.4's: the address lookups
  of an mx's hosts are not void lookups (pyspf counts them).
- Only strict RFC processing: strict=False (lax) and strict=2 (harsh,
  pyspf's 'ambiguous' result) are read as strict=True. `local` (libspf2
  local policy) is not supported: a non-empty value raises
  NotImplementedError. `verbose` prints the trace.
- DNS goes through libspfkit's resolver (c-ares, /etc/resolv.conf, or
  set_resolver()); replacing spf.DNSLookup has no effect.
- timeout / querytime cap the whole check (RFC 7208 section 4.6.4's 20
  seconds), not each lookup.
"""
import ipaddress
import threading

from . import _spfkit

__all__ = ["check2", "check", "query", "TempError", "PermError", "AmbiguityWarning",
           "set_resolver", "split_email", "quote_value", "RESULTS", "EXPLANATIONS"]

MAX_LOOKUP = 10  # RFC 7208 section 4.6.4
MAX_MX = 10
MAX_PTR = 10
MAX_VOID_LOOKUPS = 2
MAX_PER_LOOKUP_TIME = 20  # seconds, RFC 7208 section 4.6.4
DEFAULT_SPF = "v=spf1 a/24 mx/24 ptr"

RESULTS = {"+": "pass", "-": "fail", "?": "neutral", "~": "softfail",
           "pass": "pass", "fail": "fail", "permerror": "permerror",
           "error": "temperror", "neutral": "neutral", "softfail": "softfail",
           "none": "none", "local": "local", "trusted": "trusted",
           "ambiguous": "ambiguous", "unknown": "permerror"}

# pyspf's texts, the third element of check()'s answer
EXPLANATIONS = {"pass": "sender SPF authorized",
                "fail": "SPF fail - not authorized",
                "permerror": "permanent error in processing",
                "temperror": "temporary DNS error in processing",
                "softfail": "domain owner discourages use of this host",
                "neutral": "access neither permitted nor denied",
                "none": "",
                "local": "No SPF result due to local policy",
                "trusted": "No SPF check - trusted-forwarder.org",
                "ambiguous": "No error, but results may vary"}

# pyspf's SMTP codes for each result (query.check's second element)
_CODES = {"fail": 550, "permerror": 550, "temperror": 451}


class _Problem(Exception):
    """pyspf's three exceptions: msg, mech, ext; each a direct Exception
    there, so none of ours derives from another either."""

    def __init__(self, msg, mech=None, ext=None):
        Exception.__init__(self, msg, mech)
        self.msg = msg
        self.mech = mech
        self.ext = ext

    def __str__(self):
        if self.mech:
            return "%s: %s" % (self.msg, self.mech)
        return self.msg


class AmbiguityWarning(_Problem):
    "SPF Warning - ambiguous results (pyspf's harsh mode; never raised here)"


class TempError(_Problem):
    "Temporary SPF error"


class PermError(_Problem):
    "Permanent SPF error: query() raises it for a client address that is none"


_lock = threading.Lock()
_resolver = None
_contexts = {}


def set_resolver(resolver):
    """Where check2(), check() and query() ask DNS: an spfkit.Resolver
    (None: the servers of /etc/resolv.conf, the default)."""
    global _resolver
    if resolver is not None and not isinstance(resolver, _spfkit.Resolver):
        raise TypeError("set_resolver() takes an spfkit.Resolver or None")
    with _lock:
        _resolver = resolver
        _contexts.clear()


def _context(receiver, budget_ms):
    global _resolver
    key = (receiver, budget_ms)
    with _lock:
        ctx = _contexts.get(key)
        if ctx is None:
            if _resolver is None:
                _resolver = _spfkit.Resolver()
            if len(_contexts) >= 64:  # receivers are few; never grow without bound
                _contexts.clear()
            ctx = _spfkit.Context(_resolver, receiver=receiver,
                                  default_explanation=EXPLANATIONS["fail"],
                                  time_budget_ms=budget_ms)
            _contexts[key] = ctx
        return ctx


def split_email(s, h):
    """(local-part, domain) of the sender s, postmaster and h when empty
    (pyspf's split_email)."""
    if not s:
        return "postmaster", h
    parts = s.split("@", 1)
    if parts[0] == "":
        parts[0] = "postmaster"
    if len(parts) == 2:
        return tuple(parts)
    return "postmaster", s


def quote_value(s):
    """A Received-SPF value, quoted unless a dot-atom (pyspf's quote_value)."""
    import re
    if s is None or re.match(r"[0-9a-z!#$%&'*+/=?^_`{}|~-]+([.][0-9a-z!#$%&'*+/=?^_`{}|~-]+)*$",
                             s, re.IGNORECASE):
        return s
    return '"' + s.replace("\\", r"\\").replace('"', r"\"").replace("\x00", r"\x00") + '"'


class query(object):
    """One SPF check, pyspf's way: query(i, s, h, ...).check() gives
    (result, smtp code, explanation). i is the client address, s the MAIL
    FROM sender (empty: postmaster@h, the HELO identity), h the HELO name."""

    def __init__(self, i, s, h, local=None, receiver=None, strict=True,
                 timeout=MAX_PER_LOOKUP_TIME, verbose=False, querytime=0):
        if local:
            raise NotImplementedError("spfkit: libspf2 local policy (local=) is not supported")
        self.s, self.h = s, h
        if not s and h:
            self.s = "postmaster@" + h
            self.ident = "helo"
        else:
            self.ident = "mailfrom"
        self.l, self.o = split_email(s, h)
        self.d = self.o
        self.r = receiver if receiver else "unknown"
        self.strict = strict
        self.timeout = timeout
        self.querytime = querytime
        self.verbose = verbose
        self.libspf_local = local
        self.lookups = 0
        self.void_lookups = 0
        self.mechanism = None
        self.perm_error = None
        self.prob = None
        self.mech = []
        self.result = None  # the spfkit.Result of the last check()
        self.ipaddr = None
        if i:
            self.set_ip(i)

    def set_ip(self, i):
        "The client address; PermError when it is none (pyspf's message)."
        try:
            addr = ipaddress.ip_address(i)
        except ValueError as x:
            raise PermError(str(x))
        if addr.version == 6 and addr.ipv4_mapped:
            addr = addr.ipv4_mapped
        self.ipaddr = addr
        self.c = str(addr)
        self.i = self.c

    def _budget_ms(self):
        seconds = self.querytime if self.querytime and self.querytime > 0 else self.timeout
        return max(1, int(seconds * 1000)) if seconds else 0

    def check(self, spf=None):
        """(result, code, explanation): result one of pass, fail, softfail,
        neutral, none, permerror, temperror; spf: the record to use for the
        domain instead of its DNS one."""
        ctx = _context(self.r, self._budget_ms())
        # an empty MAIL FROM: the HELO identity, postmaster@h (RFC 7208 2.4), as pyspf
        res = ctx.check(self.c, self.s if self.ident == "mailfrom" else "", self.h or "",
                        identity=self.ident, record=spf, trace=bool(self.verbose))
        if self.verbose:
            for step in res.trace:
                print(step)
        self.result = res
        counters = res.counters
        self.lookups = counters["dns_terms"]
        self.void_lookups = counters["void_lookups"]
        self.mechanism = res.mechanism if res.mechanism != "default" else None
        self.perm_error = None
        self.mech = []
        name = res.result
        if name == "fail":
            return ("fail", 550, res.explanation or EXPLANATIONS["fail"])
        if name == "permerror":
            self.prob = res.problem or ""
            self.perm_error = PermError(self.prob)
            return ("permerror", 550, "SPF Permanent Error: " + self.prob)
        if name == "temperror":
            self.prob = res.problem or ""
            return ("temperror", 451, "SPF Temporary Error: " + self.prob)
        return (name, _CODES.get(name, 250), EXPLANATIONS[name])

    def best_guess(self, spf=DEFAULT_SPF):
        """check() with a default record for domains without one (pyspf's
        best_guess): permerror reads as neutral."""
        r, c, e = self.check(spf)
        if r == "permerror":
            return ("neutral", 250, EXPLANATIONS["neutral"])
        return r, c, e

    def get_header(self, res, receiver=None, header_type="spf", aid=None, **kv):
        """The Received-SPF value (header_type 'spf') or the whole
        Authentication-Results header ('authres', aid required) of the last
        check(), in libspfkit's wording."""
        if header_type not in ("spf", "authres"):
            raise SyntaxError("Unknown results header type: {0}".format(header_type))
        if header_type == "authres" and not aid:
            raise SyntaxError("authserv-id missing for Authentication Results header type, "
                              "see RFC5451 2.3")
        if self.result is None or self.result.result != res:
            raise ValueError("get_header(%r): not the result of the last check()" % (res,))
        if header_type == "spf":
            return self.result.received_spf(with_name=False)
        return self.result.authentication_results(aid, with_name=True)


def check2(i, s, h, local=None, receiver=None, timeout=MAX_PER_LOOKUP_TIME, verbose=False,
           querytime=20):
    """(result, explanation) for the client i, MAIL FROM s and HELO h
    (pyspf's RFC 7208 interface)."""
    res, _, exp = query(i=i, s=s, h=h, local=local, receiver=receiver, timeout=timeout,
                        verbose=verbose, querytime=querytime).check()
    return res, exp


def check(i, s, h, local=None, receiver=None, verbose=False):
    """(result, code, explanation), pyspf's pre-RFC interface: permerror
    is 'unknown' (and temperror stays 'temperror', as in pyspf)."""
    res, code, exp = query(i=i, s=s, h=h, local=local, receiver=receiver,
                           verbose=verbose).check()
    if res == "permerror":
        res = "unknown"
    return res, code, exp
