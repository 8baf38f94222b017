/*
 * spfkit.Context: a libspfkit context (receiver, limits, default
 * explanation, record cache) with the Resolver its checks use.
 * check() evaluates with the GIL released; any number of threads may
 * call it at once (spfkit.h: a context is read-only after setup; each
 * check takes a DNS backend of its own from the Resolver's pool).
 */
#include <string.h>
#include <time.h>

#include "spfkit_py.h"

static int parse_identity(const char *name, enum spfkit_identity *out)
{
	if (strcmp(name, "mailfrom") == 0)
		*out = SPFKIT_IDENTITY_MAILFROM;
	else if (strcmp(name, "helo") == 0)
		*out = SPFKIT_IDENTITY_HELO;
	else {
		PyErr_Format(PyExc_ValueError, "identity must be 'mailfrom' or 'helo', not '%.50s'",
			     name);
		return -1;
	}
	return 0;
}

static int parse_ip(PyObject *ip, struct spfkit_ip *out)
{
	Py_ssize_t n;
	const char *s;

	if (!PyUnicode_Check(ip)) {
		PyErr_Format(PyExc_TypeError, "ip must be str, not %.100s", Py_TYPE(ip)->tp_name);
		return -1;
	}
	s = PyUnicode_AsUTF8AndSize(ip, &n);
	if (s == NULL)
		return -1;
	if (spfkit_ip_parse(s, (size_t)n, out) != 0) {
		PyErr_Format(PyExc_ValueError, "'%.100s' does not appear to be an IPv4 or IPv6 address",
			     s);
		return -1;
	}
	return 0;
}

void spfkit_py_request_clear(struct spfkit_py_request *r)
{
	Py_CLEAR(r->sender_bytes);
	Py_CLEAR(r->helo_bytes);
	Py_CLEAR(r->record_bytes);
}

int spfkit_py_request_parse(const struct spfkit_py_context *self, PyObject *args,
			    PyObject *kwargs, struct spfkit_py_request *out)
{
	static char *kwlist[] = {"ip", "sender", "helo", "identity", "record", "trace", "now", NULL};
	PyObject *ip, *sender, *helo, *record = Py_None;
	const char *identity = "mailfrom";
	long long now = 0;
	int trace = 0;

	memset(out, 0, sizeof(*out));
	spfkit_request_init(&out->req);
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|$sOpL", kwlist, &ip, &sender, &helo,
					 &identity, &record, &trace, &now))
		return -1;
	out->trace = trace;
	out->req.now = now != 0 ? (int64_t)now
				: self->fixed_now != 0 ? self->fixed_now : (int64_t)time(NULL);
	if (parse_ip(ip, &out->req.ip) < 0 || parse_identity(identity, &out->req.identity) < 0)
		return -1;
	out->sender_bytes = spfkit_py_as_bytes(sender, "sender");
	if (out->sender_bytes == NULL)
		goto fail;
	out->helo_bytes = spfkit_py_as_bytes(helo, "helo");
	if (out->helo_bytes == NULL)
		goto fail;
	out->req.sender = PyBytes_AS_STRING(out->sender_bytes);
	out->req.sender_len = (size_t)PyBytes_GET_SIZE(out->sender_bytes);
	out->req.helo = PyBytes_AS_STRING(out->helo_bytes);
	out->req.helo_len = (size_t)PyBytes_GET_SIZE(out->helo_bytes);
	if (record != Py_None) {
		out->record_bytes = spfkit_py_as_bytes(record, "record");
		if (out->record_bytes == NULL)
			goto fail;
		out->record = PyBytes_AS_STRING(out->record_bytes);
		out->record_len = (size_t)PyBytes_GET_SIZE(out->record_bytes);
	}
	return 0;
fail:
	spfkit_py_request_clear(out);
	return -1;
}

/* One evaluation, blocking, with the GIL released (the trace hook takes
 * it back for each event). */
static int run_check(struct spfkit_py_context *self, const struct spfkit_py_request *r,
		     struct spfkit_eval **ev, char *errbuf, size_t errlen)
{
	struct spfkit_resolver *dns = NULL;
	int rc;

	Py_BEGIN_ALLOW_THREADS
	rc = spfkit_py_resolver_take(self->resolver, &dns, errbuf, errlen);
	if (rc == 0 && r->record != NULL)
		rc = spfkit_check_record(self->ctx, dns, &r->req, r->record, r->record_len, ev);
	else if (rc == 0)
		rc = spfkit_check(self->ctx, dns, &r->req, ev);
	spfkit_py_resolver_give(self->resolver, dns);
	Py_END_ALLOW_THREADS
	return rc;
}

static PyObject *context_check(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	struct spfkit_py_context *self = (struct spfkit_py_context *)obj;
	struct spfkit_py_request r;
	struct spfkit_eval *ev = NULL;
	PyObject *trace = NULL, *res;
	char err[256] = "";
	int rc;

	if (self->ctx == NULL) {
		PyErr_SetString(PyExc_RuntimeError, "Context not initialised");
		return NULL;
	}
	if (spfkit_py_request_parse(self, args, kwargs, &r) < 0)
		return NULL;
	if (r.trace) {
		trace = PyList_New(0);
		if (trace == NULL) {
			spfkit_py_request_clear(&r);
			return NULL;
		}
		r.req.trace = spfkit_py_trace_collect;
		r.req.trace_arg = trace;
	}
	rc = run_check(self, &r, &ev, err, sizeof(err));
	spfkit_py_request_clear(&r);
	if (rc == 0 && trace != NULL && PyErr_Occurred())
		rc = SPFKIT_ENOMEM; /* the trace could not be kept */
	if (rc != 0) {
		spfkit_eval_free(ev);
		Py_XDECREF(trace);
		if (PyErr_Occurred())
			return NULL;
		if (rc == SPFKIT_EINVAL)
			return PyErr_Format(PyExc_ValueError,
					    "invalid request: %s (a sender or HELO name over %u "
					    "bytes or with a NUL, or a record that is not v=spf1)",
					    spfkit_strerror(rc), SPFKIT_IDENTITY_MAX);
		return spfkit_py_raise(rc, "check", err);
	}
	res = spfkit_py_result_new(obj, ev, trace);
	Py_XDECREF(trace);
	return res;
}

static int context_init(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"resolver", "receiver", "default_explanation", "lookahead",
				 "record_memo", "time_budget_ms", "dns_terms", "void_lookups",
				 "now", NULL};
	struct spfkit_py_context *self = (struct spfkit_py_context *)obj;
	PyObject *resolver = Py_None;
	const char *receiver = NULL, *expl = NULL;
	int lookahead = 1, memo = 0;
	unsigned budget = 0, terms = 0, voids = 0;
	long long now = 0;
	struct spfkit_config cfg;
	int rc;

	if (self->ctx != NULL) {
		PyErr_SetString(PyExc_RuntimeError, "Context.__init__ called twice");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$zzppIIIL", kwlist, &resolver, &receiver,
					 &expl, &lookahead, &memo, &budget, &terms, &voids, &now))
		return -1;
	if (resolver == Py_None) {
		resolver = PyObject_CallNoArgs((PyObject *)&spfkit_py_resolver_type);
		if (resolver == NULL)
			return -1;
	} else if (!PyObject_TypeCheck(resolver, &spfkit_py_resolver_type)) {
		PyErr_SetString(PyExc_TypeError, "resolver must be an spfkit.Resolver");
		return -1;
	} else {
		Py_INCREF(resolver);
	}
	self->resolver = (struct spfkit_py_resolver *)resolver;
	self->fixed_now = (int64_t)now;
	spfkit_config_init(&cfg);
	cfg.receiver = receiver;
	cfg.default_explanation = expl;
	cfg.no_lookahead = !lookahead;
	cfg.record_memo = memo;
	cfg.time_budget_ms = budget;
	cfg.limits.dns_terms = terms;
	cfg.limits.void_lookups = voids;
	rc = spfkit_ctx_new(&cfg, &self->ctx);
	if (rc == SPFKIT_EINVAL) {
		PyErr_SetString(PyExc_ValueError,
				"default_explanation is not a valid macro-string (RFC 7208 7.1)");
		return -1;
	}
	if (rc != 0) {
		spfkit_py_raise(rc, "context", NULL);
		return -1;
	}
	return 0;
}

static void context_dealloc(PyObject *obj)
{
	struct spfkit_py_context *self = (struct spfkit_py_context *)obj;

	spfkit_ctx_free(self->ctx); /* every Result holds a reference: none is left */
	Py_XDECREF(self->resolver);
	Py_TYPE(obj)->tp_free(obj);
}

static PyObject *get_resolver(PyObject *obj, void *unused)
{
	struct spfkit_py_context *self = (struct spfkit_py_context *)obj;

	(void)unused;
	if (self->resolver == NULL)
		Py_RETURN_NONE;
	Py_INCREF(self->resolver);
	return (PyObject *)self->resolver;
}

static PyMethodDef context_methods[] = {
	{"check", (PyCFunction)(void (*)(void))context_check, METH_VARARGS | METH_KEYWORDS,
	 "check(ip, sender, helo, *, identity='mailfrom', record=None, trace=False, now=0) -> "
	 "Result\n\n"
	 "check_host() of RFC 7208 for the client ip, the MAIL FROM sender (may be empty: "
	 "then postmaster@helo, section 2.4) and the HELO name; identity='helo' checks the "
	 "HELO name. record: the checked domain's record given as text instead of looked "
	 "up. trace: keep every step in Result.trace. now: the time for %{t} (0: the "
	 "clock). Blocks without the GIL; safe from any number of threads."},
	{"lint", (PyCFunction)(void (*)(void))spfkit_py_context_lint, METH_VARARGS | METH_KEYWORDS,
	 "lint(domain=None, *, record=None, time_limit=0) -> dict\n\n"
	 "`spfkit lint`: check domain's SPF record and every record it includes or redirects "
	 "to, through this Context's Resolver. record: check this text instead of the "
	 "domain's (includes are still looked up); a list of strings is the TXT record's "
	 "character-strings, joined as receivers join them, their sizes and joins checked "
	 "too. time_limit: seconds for the whole walk (0: "
	 "60). The dict has the keys of `spfkit lint --json` (domain, record, lookups, "
	 "findings, summary, exit_status), and stopped and unanswered. Blocks without the "
	 "GIL."},
	{"tree", (PyCFunction)(void (*)(void))spfkit_py_context_tree, METH_VARARGS | METH_KEYWORDS,
	 "tree(domain=None, *, record=None, time_limit=0) -> dict\n\n"
	 "`spfkit tree`: the include/redirect tree of domain's record, with per record its "
	 "lookups, void lookups and address counts (ints); the keys of `spfkit tree --json` "
	 "(domain, tree, total, exit_status), and stopped and unanswered. Blocks without "
	 "the GIL."},
	{NULL, NULL, 0, NULL},
};

static PyGetSetDef context_getset[] = {
	{"resolver", get_resolver, NULL, "the Resolver its checks use", NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject spfkit_py_context_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "spfkit.Context",
	.tp_basicsize = sizeof(struct spfkit_py_context),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
	.tp_doc = "Context(resolver=None, *, receiver=None, default_explanation=None, "
		  "lookahead=True, record_memo=False, time_budget_ms=0, dns_terms=0, "
		  "void_lookups=0, now=0)\n\n"
		  "The settings of SPF checks and the Resolver they use (None: the system's "
		  "servers). receiver is %{r} and the receiver= of Received-SPF; "
		  "default_explanation is the macro-string used for fail when the domain gives "
		  "no exp=; dns_terms and void_lookups change the limits of RFC 7208 4.6.4 "
		  "(0: 10 and 2); time_budget_ms caps one check (0: 20 s); now fixes %{t}.",
	.tp_new = PyType_GenericNew,
	.tp_init = context_init,
	.tp_dealloc = context_dealloc,
	.tp_methods = context_methods,
	.tp_getset = context_getset,
};
