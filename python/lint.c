/*
 * Context.lint() and Context.tree(): `spfkit lint` and `spfkit tree` as
 * Python data, from <spfkit/publish.h>. The walk runs with the GIL
 * released, over a DNS backend of the Context's Resolver pool, as a
 * check does. The dicts have the keys of `spfkit lint --json` and
 * `spfkit tree --json` (docs/lint.md, docs/tree.md), plus "stopped" and
 * "unanswered" (and lint's "flatten_note", which only its text shows); address counts are ints (the JSON gives IPv6 counts as
 * strings, over a double's range); record text is str, UTF-8 with bytes
 * that are not kept as surrogates (surrogateescape), as everywhere in
 * the module.
 */
#include <string.h>

#include "spfkit_py.h"

static PyObject *str_or_none(const char *s)
{
	return spfkit_py_text(s, s != NULL ? strlen(s) : 0);
}


/* d when every spfkit_py_put() went well; else NULL (the exception set) and d dropped. */
static PyObject *finish(PyObject *d, int ok)
{
	if (!ok) {
		Py_XDECREF(d);
		return NULL;
	}
	return d;
}

static PyObject *records_list(const struct spfkit_tree_record *r, size_t n)
{
	PyObject *list = PyList_New((Py_ssize_t)n);
	size_t i;

	for (i = 0; list != NULL && i < n; i++) {
		PyObject *v = spfkit_py_text(r[i].text, r[i].len);

		if (v == NULL) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, v);
	}
	return list;
}

/* ---- lint -------------------------------------------------------------- */

static PyObject *finding_dict(const struct spfkit_lint_finding *f)
{
	PyObject *d = PyDict_New();
	int ok = d != NULL;

	ok = ok && spfkit_py_put(d, "id", PyUnicode_FromString(f->id)) == 0;
	ok = ok && spfkit_py_put(d, "severity",
				 PyUnicode_FromString(spfkit_lint_severity_name(f->severity))) == 0;
	ok = ok && spfkit_py_put(d, "domain", str_or_none(f->domain)) == 0;
	ok = ok && spfkit_py_put(d, "term", str_or_none(f->term)) == 0;
	ok = ok && spfkit_py_put(d, "offset", f->offset >= 0 ? PyLong_FromLong(f->offset)
							     : Py_NewRef(Py_None)) == 0;
	ok = ok && spfkit_py_put(d, "message", str_or_none(f->message)) == 0;
	ok = ok && spfkit_py_put(d, "fix", str_or_none(f->fix)) == 0;
	ok = ok && spfkit_py_put(d, "rfc7208_section", PyUnicode_FromString(f->section)) == 0;
	ok = ok && spfkit_py_put(d, "provider", PyBool_FromLong(f->provider)) == 0;
	/* as `spfkit lint --json`: only on findings that carry a code */
	if (f->reason != SPFKIT_REASON_NONE)
		ok = ok && spfkit_py_put(d, "reason", PyUnicode_FromString(spfkit_reason_name(f->reason))) == 0;
	return finish(d, ok);
}

static PyObject *uint_or_none(int have, unsigned v)
{
	return have ? PyLong_FromUnsignedLong(v) : Py_NewRef(Py_None);
}

static PyObject *costs_list(const struct spfkit_lint_summary *s)
{
	PyObject *list = PyList_New((Py_ssize_t)s->ncosts);
	size_t i;

	for (i = 0; list != NULL && i < s->ncosts; i++) {
		const struct spfkit_lint_cost *c = &s->costs[i];
		PyObject *v = Py_BuildValue("{s:N,s:l,s:I,s:I,s:I}", "term", str_or_none(c->term),
					    "offset", c->offset, "cost", c->cost, "total", c->total,
					    "after_flatten", c->after_flatten);

		if (v == NULL) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, v);
	}
	return list;
}

static PyObject *counts_dict(const struct spfkit_lint_summary *s)
{
	return Py_BuildValue("{s:I,s:I,s:I,s:I,s:I,s:O,s:O,s:O,s:O,s:I}", "dns_terms", s->dns_terms,
			     "dns_terms_limit", SPFKIT_LIMIT_DNS_TERMS, "void_lookups_ipv4",
			     s->void_lookups_ipv4, "void_lookups_ipv6", s->void_lookups_ipv6,
			     "void_lookups_limit", SPFKIT_LIMIT_VOID_LOOKUPS, "permerror_ipv4",
			     s->permerror_ipv4 ? Py_True : Py_False, "permerror_ipv6",
			     s->permerror_ipv6 ? Py_True : Py_False, "dynamic",
			     s->dynamic ? Py_True : Py_False, "loop", s->loop ? Py_True : Py_False,
			     "records", s->records);
}

/* What the walk counted, and (issue 31) what a fix or flatten would make of it. */
static PyObject *lookups_dict(const struct spfkit_lint_summary *s)
{
	PyObject *d = counts_dict(s);
	int ok = d != NULL;

	ok = ok && spfkit_py_put(d, "evaluated", PyBool_FromLong(s->unevaluated == 0)) == 0;
	ok = ok && spfkit_py_put(d, "dns_terms_once_fixed",
		       uint_or_none(s->unevaluated == 1, s->dns_terms_once_fixed)) == 0;
	ok = ok && spfkit_py_put(d, "dns_terms_after_flatten",
		       uint_or_none(s->flatten_checked, s->dns_terms_after_flatten)) == 0;
	ok = ok && spfkit_py_put(d, "flatten_fixes", PyBool_FromLong(s->flatten_fixes)) == 0;
	ok = ok && spfkit_py_put(d, "by_term", costs_list(s)) == 0;
	return finish(d, ok);
}

static PyObject *lint_dict(const struct spfkit_lint *l)
{
	const struct spfkit_lint_summary *s = spfkit_lint_summary(l);
	PyObject *d = PyDict_New(), *list;
	size_t i, n = spfkit_lint_count(l);
	int ok = d != NULL;

	ok = ok && spfkit_py_put(d, "domain", str_or_none(s->domain)) == 0;
	ok = ok && spfkit_py_put(d, "record", spfkit_py_text(s->record, s->record_len)) == 0;
	ok = ok && spfkit_py_put(d, "spf_records", records_list(s->spf_records, s->nspf_records)) == 0;
	ok = ok && spfkit_py_put(d, "lookups", lookups_dict(s)) == 0;
	list = ok ? PyList_New((Py_ssize_t)n) : NULL;
	ok = ok && list != NULL;
	for (i = 0; ok && i < n; i++) {
		PyObject *f = finding_dict(spfkit_lint_finding(l, i));

		ok = f != NULL;
		if (ok)
			PyList_SET_ITEM(list, (Py_ssize_t)i, f);
	}
	if (list != NULL && !ok)
		Py_DECREF(list);
	else if (list != NULL)
		ok = spfkit_py_put(d, "findings", list) == 0;
	ok = ok && spfkit_py_put(d, "summary",
		       Py_BuildValue("{s:n,s:n,s:n,s:{s:n,s:n,s:n}}", "error",
				     (Py_ssize_t)s->errors, "warning", (Py_ssize_t)s->warnings,
				     "notice", (Py_ssize_t)s->notices, "provider", "error",
				     (Py_ssize_t)s->provider_errors, "warning",
				     (Py_ssize_t)s->provider_warnings, "notice",
				     (Py_ssize_t)s->provider_notices)) == 0;
	ok = ok && spfkit_py_put(d, "exit_status", PyLong_FromLong(s->status)) == 0;
	ok = ok && spfkit_py_put(d, "stopped", PyBool_FromLong(s->stopped)) == 0;
	ok = ok && spfkit_py_put(d, "unanswered", PyLong_FromUnsignedLong(s->unanswered)) == 0;
	ok = ok && spfkit_py_put(d, "flatten_note", str_or_none(s->flatten_note)) == 0;
	return finish(d, ok);
}

/* ---- tree -------------------------------------------------------------- */

static PyObject *count_of(const char *decimal)
{
	return PyLong_FromString(decimal, NULL, 10);
}

static PyObject *voids_dict(const struct spfkit_tree_node *n)
{
	PyObject *names = PyList_New((Py_ssize_t)n->nvoids);
	size_t i;

	if (names == NULL)
		return NULL;
	for (i = 0; i < n->nvoids; i++) {
		const struct spfkit_tree_void *v = &n->voids[i];
		PyObject *e = Py_BuildValue("{s:N,s:N,s:O,s:O}", "type", str_or_none(v->type),
					    "name", str_or_none(v->name), "ipv4",
					    v->ipv4 ? Py_True : Py_False, "ipv6",
					    v->ipv6 ? Py_True : Py_False);

		if (e == NULL) {
			Py_DECREF(names);
			return NULL;
		}
		PyList_SET_ITEM(names, (Py_ssize_t)i, e);
	}
	return Py_BuildValue("{s:I,s:I,s:I,s:I,s:N}", "ipv4_here", n->voids_ipv4_here, "ipv6_here",
			     n->voids_ipv6_here, "ipv4_subtree", n->voids_ipv4_subtree,
			     "ipv6_subtree", n->voids_ipv6_subtree, "names", names);
}

static PyObject *addresses_dict(const struct spfkit_tree_node *n)
{
	return Py_BuildValue("{s:N,s:N,s:N,s:N,s:O}", "ipv4_here", count_of(n->ipv4_here),
			     "ipv6_here", count_of(n->ipv6_here), "ipv4_subtree",
			     count_of(n->ipv4_subtree), "ipv6_subtree", count_of(n->ipv6_subtree),
			     "plus_all", n->plus_all ? Py_True : Py_False);
}

static PyObject *strings_list(const char *const *s, size_t n)
{
	PyObject *list = PyList_New((Py_ssize_t)n);
	size_t i;

	for (i = 0; list != NULL && i < n; i++) {
		PyObject *v = str_or_none(s[i]);

		if (v == NULL) {
			Py_CLEAR(list);
			break;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, v);
	}
	return list;
}

static const char *how_name(enum spfkit_tree_how how)
{
	return how == SPFKIT_TREE_INCLUDE ? "include" : how == SPFKIT_TREE_REDIRECT ? "redirect" : "top";
}

/* The tree's depth is bounded by lint's walk, so is this recursion. */
static PyObject *node_dict(const struct spfkit_tree_node *n)
{
	const struct spfkit_tree_node *c;
	PyObject *d = PyDict_New(), *children = NULL;
	int ok = d != NULL;

	ok = ok && spfkit_py_put(d, "domain", str_or_none(n->domain)) == 0;
	ok = ok && spfkit_py_put(d, "how", PyUnicode_FromString(how_name(n->how))) == 0;
	ok = ok && spfkit_py_put(d, "via", str_or_none(n->via)) == 0;
	ok = ok && spfkit_py_put(d, "record", spfkit_py_text(n->record, n->record_len)) == 0;
	if (ok && n->nother_records > 0) /* as the JSON: only where a name has several */
		ok = spfkit_py_put(d, "other_records", records_list(n->other_records, n->nother_records)) == 0;
	ok = ok && spfkit_py_put(d, "ttl", n->has_ttl ? PyLong_FromUnsignedLong(n->ttl)
						      : Py_NewRef(Py_None)) == 0;
	ok = ok && spfkit_py_put(d, "lookups", Py_BuildValue("{s:I,s:I}", "here", n->lookups_here, "subtree",
						 n->lookups_subtree)) == 0;
	ok = ok && spfkit_py_put(d, "void_lookups", voids_dict(n)) == 0;
	ok = ok && spfkit_py_put(d, "addresses", addresses_dict(n)) == 0;
	ok = ok && spfkit_py_put(d, "dynamic", strings_list(n->dynamic, n->ndynamic)) == 0;
	ok = ok && spfkit_py_put(d, "problem", str_or_none(n->problem)) == 0;
	ok = ok && spfkit_py_put(d, "error", PyBool_FromLong(n->error)) == 0;
	ok = ok && spfkit_py_put(d, "loop", PyBool_FromLong(n->loop)) == 0;
	ok = ok && spfkit_py_put(d, "repeated", PyBool_FromLong(n->repeated)) == 0;
	children = ok ? PyList_New(0) : NULL;
	ok = ok && children != NULL;
	for (c = n->child; ok && c != NULL; c = c->next) {
		PyObject *cd = node_dict(c);

		ok = cd != NULL && PyList_Append(children, cd) == 0;
		Py_XDECREF(cd);
	}
	if (children != NULL && !ok)
		Py_DECREF(children);
	else if (children != NULL)
		ok = spfkit_py_put(d, "children", children) == 0;
	return finish(d, ok);
}

static PyObject *tree_dict(const struct spfkit_lint *l)
{
	const struct spfkit_lint_summary *s = spfkit_lint_summary(l);
	const struct spfkit_tree_node *root = spfkit_lint_tree(l);
	PyObject *d = PyDict_New();
	int ok = d != NULL;

	ok = ok && spfkit_py_put(d, "domain", str_or_none(s->domain)) == 0;
	ok = ok && spfkit_py_put(d, "tree", root != NULL ? node_dict(root) : Py_NewRef(Py_None)) == 0;
	ok = ok && spfkit_py_put(d, "total", Py_BuildValue("{s:I,s:I,s:I,s:I,s:I,s:I}", "dns_terms",
					       s->dns_terms, "dns_terms_limit",
					       SPFKIT_LIMIT_DNS_TERMS, "void_lookups_ipv4",
					       s->void_lookups_ipv4, "void_lookups_ipv6",
					       s->void_lookups_ipv6, "void_lookups_limit",
					       SPFKIT_LIMIT_VOID_LOOKUPS, "records", s->records)) == 0;
	ok = ok && spfkit_py_put(d, "exit_status", PyLong_FromLong(s->tree_status)) == 0;
	ok = ok && spfkit_py_put(d, "stopped", PyBool_FromLong(s->stopped)) == 0;
	ok = ok && spfkit_py_put(d, "unanswered", PyLong_FromUnsignedLong(s->unanswered)) == 0;
	return finish(d, ok);
}

/* ---- the run ------------------------------------------------------------ */

/* record= given as its character-strings (a list or tuple of str or bytes):
 * the bytes objects (kept alive in *keep) and their pointers and lengths
 * (PyMem, freed by the caller) into opt. 0, or -1 with an exception. */
static int take_strings(PyObject *record, PyObject **keep, const char ***strs, size_t **lens,
			struct spfkit_lint_options *opt)
{
	Py_ssize_t i, n = PySequence_Fast_GET_SIZE(record);

	if ((size_t)n > SPFKIT_LINT_MAX_STRINGS) {
		PyErr_Format(PyExc_ValueError, "record: more than %u strings",
			     SPFKIT_LINT_MAX_STRINGS);
		return -1;
	}
	*keep = PyTuple_New(n);
	*strs = PyMem_Calloc((size_t)n + 1, sizeof(**strs));
	*lens = PyMem_Calloc((size_t)n + 1, sizeof(**lens));
	if (*keep == NULL || *strs == NULL || *lens == NULL) {
		if (!PyErr_Occurred())
			PyErr_NoMemory();
		return -1;
	}
	for (i = 0; i < n; i++) {
		PyObject *b = spfkit_py_as_bytes(PySequence_Fast_GET_ITEM(record, i), "record string");

		if (b == NULL)
			return -1;
		PyTuple_SET_ITEM(*keep, i, b);
		(*strs)[i] = PyBytes_AS_STRING(b);
		(*lens)[i] = (size_t)PyBytes_GET_SIZE(b);
	}
	opt->strings = *strs;
	opt->string_lens = *lens;
	opt->nstrings = (size_t)n;
	return 0;
}

/* The walk, blocking, with the GIL released. */
static int run_walk(struct spfkit_py_context *self, const struct spfkit_lint_options *opt,
		    struct spfkit_lint **l, char *errbuf, size_t errlen)
{
	struct spfkit_resolver *dns = NULL;
	int rc;

	Py_BEGIN_ALLOW_THREADS
	rc = spfkit_py_resolver_take(self->resolver, &dns, errbuf, errlen);
	if (rc == 0)
		rc = spfkit_lint_run(dns, opt, l);
	spfkit_py_resolver_give(self->resolver, dns);
	Py_END_ALLOW_THREADS
	return rc;
}

static PyObject *lint_or_tree(PyObject *obj, PyObject *args, PyObject *kwargs, int tree)
{
	static char *kwlist[] = {"domain", "record", "time_limit", NULL};
	struct spfkit_py_context *self = (struct spfkit_py_context *)obj;
	PyObject *domain = Py_None, *record = Py_None, *dom = NULL, *rec = NULL, *out = NULL;
	PyObject *seq = NULL;
	const char **strs = NULL;
	size_t *lens = NULL;
	struct spfkit_lint_options opt;
	struct spfkit_lint *l = NULL;
	unsigned time_limit = 0;
	char err[256] = "";
	int rc;

	if (self->ctx == NULL) {
		PyErr_SetString(PyExc_RuntimeError, "Context not initialised");
		return NULL;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OI", kwlist, &domain, &record,
					 &time_limit))
		return NULL;
	if (domain == Py_None && record == Py_None) {
		PyErr_SetString(PyExc_TypeError, "give a domain, or a record (and maybe its domain)");
		return NULL;
	}
	spfkit_lint_options_init(&opt);
	opt.tree = tree;
	opt.time_limit_s = time_limit;
	if (domain != Py_None) {
		dom = spfkit_py_as_bytes(domain, "domain");
		if (dom == NULL)
			return NULL;
		opt.domain = PyBytes_AS_STRING(dom);
		opt.domain_len = (size_t)PyBytes_GET_SIZE(dom);
		if (memchr(opt.domain, '\0', opt.domain_len) != NULL) {
			PyErr_SetString(PyExc_ValueError, "domain contains a NUL");
			goto done;
		}
	}
	if (PyList_Check(record) || PyTuple_Check(record)) {
		seq = PySequence_Fast(record, "record");
		if (seq == NULL || take_strings(seq, &rec, &strs, &lens, &opt) < 0)
			goto done;
		if (opt.nstrings == 0) {
			PyErr_SetString(PyExc_ValueError, "record: no strings");
			goto done;
		}
	} else if (record != Py_None) {
		rec = spfkit_py_as_bytes(record, "record");
		if (rec == NULL)
			goto done;
		opt.record = PyBytes_AS_STRING(rec);
		opt.record_len = (size_t)PyBytes_GET_SIZE(rec);
	}
	rc = run_walk(self, &opt, &l, err, sizeof(err));
	if (rc == SPFKIT_E2BIG) {
		PyErr_Format(PyExc_ValueError, "record: its strings are over %u bytes in all",
			     SPFKIT_LINT_MAX_TEXT);
		goto done;
	}
	if (rc != 0) {
		spfkit_py_raise(rc, tree ? "tree" : "lint", err);
		goto done;
	}
	out = tree ? tree_dict(l) : lint_dict(l);
	spfkit_lint_free(l);
done:
	Py_XDECREF(dom);
	Py_XDECREF(rec);
	Py_XDECREF(seq);
	PyMem_Free(strs);
	PyMem_Free(lens);
	return out;
}

PyObject *spfkit_py_context_lint(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	return lint_or_tree(obj, args, kwargs, 0);
}

PyObject *spfkit_py_context_tree(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	return lint_or_tree(obj, args, kwargs, 1);
}
