/*
 * spfkit.Result: one finished evaluation. It owns the evaluation (the
 * library's result and its strings live as long as it does) and holds
 * its Context, which must outlive it (eval.h). Fields are read when
 * asked for; the header texts come from output.h.
 */
#include <stddef.h>
#include <string.h>

#include "spfkit_py.h"

#define HEADER_MAX 4096 /* output.h keeps a header line within RFC 5322's 998 */

static const struct spfkit_result *res_of(PyObject *obj)
{
	return spfkit_eval_result(((struct spfkit_py_result *)obj)->ev);
}

PyObject *spfkit_py_result_new(PyObject *context, struct spfkit_eval *ev, PyObject *trace)
{
	struct spfkit_py_result *self;

	self = PyObject_New(struct spfkit_py_result, &spfkit_py_result_type);
	if (self == NULL) {
		spfkit_eval_free(ev);
		return NULL;
	}
	self->ev = ev;
	Py_INCREF(context);
	self->context = context;
	if (trace == NULL)
		trace = Py_None;
	Py_INCREF(trace);
	self->trace = trace;
	return (PyObject *)self;
}

static void result_dealloc(PyObject *obj)
{
	struct spfkit_py_result *self = (struct spfkit_py_result *)obj;

	spfkit_eval_free(self->ev); /* before the context it was made from */
	Py_XDECREF(self->trace);
	Py_XDECREF(self->context);
	PyObject_Free(obj);
}

static PyObject *str_or_none(const char *s)
{
	if (s == NULL)
		Py_RETURN_NONE;
	return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "surrogateescape");
}

/* A string field of struct spfkit_result; closure is its offset. */
static PyObject *get_str(PyObject *obj, void *closure)
{
	const char *base = (const char *)res_of(obj);
	const char *s;

	memcpy(&s, base + (size_t)(uintptr_t)closure, sizeof(s));
	return str_or_none(s);
}

static PyObject *get_result(PyObject *obj, void *unused)
{
	(void)unused;
	return PyUnicode_FromString(spfkit_result_name(res_of(obj)->code));
}

static PyObject *get_identity(PyObject *obj, void *unused)
{
	(void)unused;
	return PyUnicode_FromString(res_of(obj)->identity == SPFKIT_IDENTITY_HELO ? "helo"
										 : "mailfrom");
}

static PyObject *get_trace(PyObject *obj, void *unused)
{
	PyObject *t = ((struct spfkit_py_result *)obj)->trace;

	(void)unused;
	Py_INCREF(t);
	return t;
}

static PyObject *get_counters(PyObject *obj, void *unused)
{
	const struct spfkit_result *r = res_of(obj);

	(void)unused;
	return Py_BuildValue("{s:I,s:I,s:I,s:I,s:I,s:I}", "dns_terms", r->dns_terms,
			     "void_lookups", r->void_lookups, "queries", r->queries, "depth",
			     r->depth, "memo_answers", r->memo_answers, "planned", r->planned);
}

/* A formatter of output.h into a str: the first call sizes the text. */
static PyObject *formatted(int n, const char *buf)
{
	if (n < 0)
		return spfkit_py_raise(n, "format", NULL);
	if (n >= HEADER_MAX)
		n = HEADER_MAX - 1; /* cannot happen: output.h caps its values */
	return PyUnicode_DecodeUTF8(buf, n, "surrogateescape");
}

static PyObject *received_spf(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"with_name", NULL};
	char buf[HEADER_MAX];
	int with_name = 1;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|p", kwlist, &with_name))
		return NULL;
	return formatted(spfkit_format_received_spf(res_of(obj), with_name, buf, sizeof(buf)), buf);
}

static PyObject *auth_results(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"authserv_id", "with_name", NULL};
	const char *authserv = NULL;
	char buf[HEADER_MAX];
	int with_name = 0;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zp", kwlist, &authserv, &with_name))
		return NULL;
	return formatted(spfkit_format_auth_results(res_of(obj), authserv, with_name, buf,
						    sizeof(buf)),
			 buf);
}

static PyObject *smtp_reply(PyObject *obj, PyObject *unused)
{
	struct spfkit_smtp_reply reply;
	char buf[HEADER_MAX];
	int n;

	(void)unused;
	spfkit_smtp_reply_for(res_of(obj), &reply);
	if (reply.code == 0)
		Py_RETURN_NONE;
	n = spfkit_format_smtp_reply(res_of(obj), buf, sizeof(buf));
	if (n < 0)
		return spfkit_py_raise(n, "smtp_reply", NULL);
	return Py_BuildValue("(isN)", reply.code, reply.enhanced, formatted(n, buf));
}

static PyObject *result_repr(PyObject *obj)
{
	const struct spfkit_result *r = res_of(obj);

	return PyUnicode_FromFormat("<spfkit.Result %s mechanism=%s domain=%s>",
				    spfkit_result_name(r->code),
				    r->mechanism != NULL ? r->mechanism : "None",
				    r->domain != NULL ? r->domain : "None");
}

static PyMethodDef result_methods[] = {
	{"received_spf", (PyCFunction)(void (*)(void))received_spf, METH_VARARGS | METH_KEYWORDS,
	 "received_spf(with_name=True) -> the Received-SPF header (RFC 7208 9.1), one line"},
	{"authentication_results", (PyCFunction)(void (*)(void))auth_results,
	 METH_VARARGS | METH_KEYWORDS,
	 "authentication_results(authserv_id=None, with_name=False) -> the spf= entry of "
	 "Authentication-Results (RFC 8601), with 'authserv_id; ' in front when given"},
	{"smtp_reply", smtp_reply, METH_NOARGS,
	 "smtp_reply() -> (550, '5.7.23', text) for fail, permerror and temperror "
	 "(RFC 7372); None when the result is no reason to refuse"},
	{NULL, NULL, 0, NULL},
};

#define STR_GETTER(field, doc) \
	{#field, get_str, NULL, doc, (void *)(uintptr_t)offsetof(struct spfkit_result, field)}
static PyGetSetDef result_getset[] = {
	{"result", get_result, NULL, "'pass', 'fail', 'softfail', 'neutral', 'none', "
	 "'temperror' or 'permerror'", NULL},
	STR_GETTER(explanation, "fail only: the expanded exp= text or the default explanation"),
	STR_GETTER(mechanism, "the term that decided ('-all', 'default' ...), or None"),
	STR_GETTER(domain, "the domain whose record decided, or None"),
	STR_GETTER(problem, "permerror and temperror: why, naming the input"),
	STR_GETTER(identity_domain, "the domain checked: MAIL FROM's, or the HELO name"),
	STR_GETTER(sender, "the sender as used: MAIL FROM, or postmaster@helo"),
	STR_GETTER(helo, "the HELO name"),
	STR_GETTER(client_ip, "the client address, text form"),
	STR_GETTER(receiver, "the receiver (%{r})"),
	{"identity", get_identity, NULL, "'mailfrom' or 'helo'", NULL},
	{"counters", get_counters, NULL,
	 "dict: dns_terms, void_lookups (RFC 7208 4.6.4), queries, depth, memo_answers, planned",
	 NULL},
	{"trace", get_trace, NULL,
	 "the evaluation step by step (a list of dicts) when check(trace=True), else None",
	 NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

static PyObject *result_new_unused(PyTypeObject *t, PyObject *a, PyObject *k)
{
	(void)t;
	(void)a;
	(void)k;
	PyErr_SetString(PyExc_TypeError, "a Result comes from Context.check()");
	return NULL;
}

PyTypeObject spfkit_py_result_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "spfkit.Result",
	.tp_basicsize = sizeof(struct spfkit_py_result),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "The result of one SPF check (Context.check()).",
	.tp_new = result_new_unused,
	.tp_dealloc = result_dealloc,
	.tp_repr = result_repr,
	.tp_methods = result_methods,
	.tp_getset = result_getset,
};
