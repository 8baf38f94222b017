/*
 * Result.trace: each event of the evaluator's trace hook (eval.h) as a
 * dict, the same steps `spfkit check --trace` prints. The hook runs
 * inside an evaluation that released the GIL, so it takes it back for
 * each event; a failure (out of memory) is left set for check() to see.
 */
#include <string.h>

#include "spfkit_py.h"

static const char *const kind_names[] = {
	[SPFKIT_TRACE_QUERY] = "query",   [SPFKIT_TRACE_ANSWER] = "answer",
	[SPFKIT_TRACE_CHECK] = "check",   [SPFKIT_TRACE_RECORD] = "record",
	[SPFKIT_TRACE_TERM] = "term",     [SPFKIT_TRACE_COUNT] = "count",
	[SPFKIT_TRACE_RESULT] = "result", [SPFKIT_TRACE_NOTE] = "note",
};

/* Text always, empty rather than None: a record's data may be empty. */
static PyObject *text_of(const char *s, size_t len)
{
	return spfkit_py_text(s != NULL ? s : "", len);
}

/* One record's data as Python: an address, (pref, name), a name or text. */
static PyObject *rr_value(const struct spfkit_dns_rr *rr)
{
	struct spfkit_ip ip;
	char buf[SPFKIT_IP_TEXT_MAX];

	switch (rr->type) {
	case SPFKIT_RR_A:
	case SPFKIT_RR_AAAA:
		if (rr->len != (rr->type == SPFKIT_RR_A ? 4u : 16u))
			break;
		memset(&ip, 0, sizeof(ip));
		ip.family = rr->type == SPFKIT_RR_A ? 4 : 6;
		memcpy(ip.addr, rr->data, rr->len);
		return PyUnicode_FromString(spfkit_ip_format(&ip, buf, sizeof(buf)));
	case SPFKIT_RR_MX:
		return Py_BuildValue("(iN)", rr->pref,
				     text_of((const char *)rr->data, rr->len));
	default:
		break;
	}
	return text_of((const char *)rr->data, rr->len);
}

static PyObject *answer_dict(const struct spfkit_dns_answer *a)
{
	PyObject *records = PyList_New((Py_ssize_t)a->count);
	size_t i;

	if (records == NULL)
		return NULL;
	for (i = 0; i < a->count; i++) {
		PyObject *v = rr_value(&a->rrs[i]);

		if (v == NULL) {
			Py_DECREF(records);
			return NULL;
		}
		PyList_SET_ITEM(records, (Py_ssize_t)i, v);
	}
	return Py_BuildValue("{s:s,s:I,s:N,s:s}", "status", spfkit_dns_status_name(a->status),
			     "ttl", (unsigned)a->ttl, "records", records, "detail",
			     a->detail != NULL ? a->detail : "");
}


static int fill_kind(PyObject *d, const struct spfkit_trace_event *e)
{
	char type[16];

	switch (e->kind) {
	case SPFKIT_TRACE_QUERY:
	case SPFKIT_TRACE_ANSWER:
		if (spfkit_py_put(d, "name",
				       text_of(e->name, e->name != NULL ? strlen(e->name) : 0)) < 0 ||
		    spfkit_py_put(d, "qtype", PyUnicode_FromString(spfkit_rrtype_name(e->qtype, type,
									 sizeof(type)))) < 0 ||
		    spfkit_py_put(d, "id", PyLong_FromUnsignedLong(e->query_id)) < 0)
			return -1;
		if (e->kind == SPFKIT_TRACE_ANSWER && e->answer != NULL)
			return spfkit_py_put(d, "answer", answer_dict(e->answer));
		return 0;
	case SPFKIT_TRACE_TERM:
		if (spfkit_py_put(d, "matched", PyBool_FromLong(e->matched)) < 0)
			return -1;
		if (e->matched && spfkit_py_put(d, "result",
				      PyUnicode_FromString(spfkit_result_name(e->result))) < 0)
			return -1;
		break;
	case SPFKIT_TRACE_COUNT:
		return spfkit_py_put(d, "dns_terms", PyLong_FromUnsignedLong(e->dns_terms)) < 0 ||
		       spfkit_py_put(d, "void_lookups", PyLong_FromUnsignedLong(e->void_lookups)) < 0 ? -1 : 0;
	case SPFKIT_TRACE_RESULT:
		return spfkit_py_put(d, "result", PyUnicode_FromString(spfkit_result_name(e->result)));
	default:
		break;
	}
	if (e->text != NULL)
		return spfkit_py_put(d, "text", text_of(e->text, e->text_len));
	return 0;
}

static PyObject *event_dict(const struct spfkit_trace_event *e)
{
	const char *kind = (size_t)e->kind < sizeof(kind_names) / sizeof(kind_names[0]) &&
					   kind_names[e->kind] != NULL
				   ? kind_names[e->kind]
				   : "other";
	PyObject *d = Py_BuildValue("{s:s,s:I}", "kind", kind, "depth", e->depth);

	if (d == NULL)
		return NULL;
	if ((e->domain != NULL && spfkit_py_put(d, "domain", text_of(e->domain, strlen(e->domain))) < 0) ||
	    fill_kind(d, e) < 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

void spfkit_py_trace_collect(void *arg, const struct spfkit_trace_event *event)
{
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *d;

	if (!PyErr_Occurred()) { /* after a failure, the trace is lost anyway */
		d = event_dict(event);
		if (d != NULL) {
			PyList_Append((PyObject *)arg, d);
			Py_DECREF(d);
		}
	}
	PyGILState_Release(g);
}
