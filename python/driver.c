/*
 * spfkit._spfkit.Driver: evaluations on an event loop's thread, for
 * spfkit.aio. The sans-I/O evaluator (eval.h) files questions; this
 * sends them to a c-ares resolver of the driver's own (cares.h, "any
 * other event loop, by hand"), whose sockets the loop watches through
 * the `watch(fd, events)` callable; the loop calls process_fd() when a
 * socket is ready and process_timeout() when timeout() ms have passed.
 * Each answer goes into its evaluation, which is stepped again; at the
 * end `done(result)` is called. A zone resolver has no sockets: its
 * evaluations end inside start().
 *
 * Why c-ares and not DNS in Python: the same hardened client as every
 * other front end (EDNS0, TCP after truncation, retries, the bounded
 * reader), and the loop only sees sockets (docs/python.md measures it).
 *
 * Everything runs on the loop's thread with the GIL held: a step of the
 * evaluator takes microseconds, and the waits are the loop's.
 */
#include <string.h>

#include "list.h"
#include "spfkit_py.h"

struct job;

struct question {
	struct job *job;
	uint32_t id;
	uint64_t handle;
	struct question *next;
};

struct driver;

struct job {
	struct driver *d;
	unsigned long token;
	struct spfkit_eval *ev;
	PyObject *context; /* strong */
	PyObject *done;    /* strong */
	PyObject *trace;   /* list or NULL */
	struct question *questions;
	int rc;            /* first error of an answer */
	struct spfkit__link link; /* in the driver's jobs */
};

struct driver {
	PyObject_HEAD
	struct spfkit_resolver *dns;
	struct spfkit_py_resolver *settings; /* strong */
	PyObject *watch;                     /* strong; None for a zone */
	struct spfkit__list jobs; /* of struct job */
	unsigned long next_token;
	int pumped; /* a zone: answers come from wait(0) */
};

static const struct spfkit_dns_answer refused = {
	.status = SPFKIT_DNS_TEMPFAIL, .detail = "the resolver refused the question"};
static const struct spfkit_dns_answer out_of_time = {
	.status = SPFKIT_DNS_TEMPFAIL, .detail = "evaluation time budget exceeded"};

static void on_watch(void *arg, int fd, unsigned events)
{
	struct driver *d = arg;
	PyObject *r;

	if (d->watch == NULL || d->watch == Py_None)
		return;
	r = PyObject_CallFunction(d->watch, "iI", fd, events);
	if (r == NULL)
		PyErr_WriteUnraisable(d->watch);
	Py_XDECREF(r);
}

static void job_unlink(struct driver *d, struct job *j)
{
	spfkit__list_unlink(&d->jobs, &j->link);
}

/* The job of a link of d->jobs; NULL for NULL (the walk's end). */
static struct job *job_of(const struct spfkit__link *k)
{
	return SPFKIT__LIST_ENTRY(k, struct job, link);
}

/* Cancel every open question; with `answer`, hand it in for each. */
static void job_cancel(struct driver *d, struct job *j, const struct spfkit_dns_answer *answer)
{
	while (j->questions != NULL) {
		struct question *q = j->questions;

		j->questions = q->next;
		spfkit_resolver_cancel(d->dns, q->handle);
		if (answer != NULL && j->rc == 0)
			j->rc = spfkit_eval_answer(j->ev, q->id, answer);
		PyMem_Free(q);
	}
}

static void job_free(struct driver *d, struct job *j)
{
	job_cancel(d, j, NULL);
	spfkit_eval_free(j->ev);
	Py_XDECREF(j->context);
	Py_XDECREF(j->done);
	Py_XDECREF(j->trace);
	PyMem_Free(j);
}

/* The end: done(Result) or done(exception); the job is gone after. */
static void job_finish(struct driver *d, struct job *j, int rc)
{
	PyObject *done = j->done, *arg, *r;

	j->done = NULL;
	job_unlink(d, j);
	job_cancel(d, j, NULL);
	if (rc == 0) {
		arg = spfkit_py_result_new(j->context, j->ev, j->trace);
		j->ev = NULL; /* the Result owns it now, or freed it */
	} else {
		arg = spfkit_py_raise(rc, "check", NULL);
	}
	if (arg == NULL) {
		PyObject *type, *tb;

		PyErr_Fetch(&type, &arg, &tb);
		PyErr_NormalizeException(&type, &arg, &tb);
		Py_XDECREF(type);
		Py_XDECREF(tb);
	}
	job_free(d, j);
	r = PyObject_CallOneArg(done, arg);
	if (r == NULL)
		PyErr_WriteUnraisable(done);
	Py_XDECREF(r);
	Py_XDECREF(arg);
	Py_DECREF(done);
}

static void on_answer(void *arg, const struct spfkit_dns_answer *answer);

static void send_question(struct driver *d, struct job *j, const struct spfkit_question *q)
{
	struct question *nq = PyMem_Malloc(sizeof(*nq));
	int rc;

	if (nq == NULL) {
		j->rc = SPFKIT_ENOMEM;
		return;
	}
	nq->job = j;
	nq->id = q->id;
	rc = spfkit_resolver_submit(d->dns, q->name, q->name_len, q->type, on_answer, nq,
				    &nq->handle);
	if (rc != 0) { /* a failed submit never calls back */
		PyMem_Free(nq);
		if (j->rc == 0)
			j->rc = spfkit_eval_answer(j->ev, q->id, &refused);
		return;
	}
	nq->next = j->questions;
	j->questions = nq;
}

/* Step until the evaluation waits or ends. 1: it ended (and j is gone). */
static int job_advance(struct driver *d, struct job *j)
{
	struct spfkit_question q;
	int rc;

	for (;;) {
		if (j->rc != 0) {
			job_finish(d, j, j->rc);
			return 1;
		}
		rc = spfkit_eval_step(j->ev, &q);
		if (rc == SPFKIT_STEP_QUERY) {
			send_question(d, j, &q);
			continue;
		}
		if (rc == SPFKIT_STEP_WAIT && j->questions == NULL)
			rc = SPFKIT_ESTATE; /* waiting for nothing: a bug, not a hang */
		if (rc == SPFKIT_STEP_WAIT)
			return 0;
		job_finish(d, j, rc);
		return 1;
	}
}

static void on_answer(void *arg, const struct spfkit_dns_answer *answer)
{
	struct question *q = arg, **p;
	struct job *j = q->job;

	for (p = &j->questions; *p != NULL; p = &(*p)->next)
		if (*p == q) {
			*p = q->next;
			break;
		}
	if (j->rc == 0)
		j->rc = spfkit_eval_answer(j->ev, q->id, answer);
	PyMem_Free(q);
	job_advance(j->d, j);
}

/* A zone answers from wait(0), at once; run it until nothing is queued. */
static int pump(struct driver *d)
{
	int n;

	do
		n = spfkit_resolver_wait(d->dns, 0);
	while (n > 0);
	return n;
}

static struct job *job_new(struct driver *d, PyObject *context, PyObject *done)
{
	struct job *j = PyMem_Calloc(1, sizeof(*j));

	if (j == NULL) {
		PyErr_NoMemory();
		return NULL;
	}
	j->d = d;
	j->token = ++d->next_token;
	Py_INCREF(context);
	j->context = context;
	Py_INCREF(done);
	j->done = done;
	spfkit__list_push_front(&d->jobs, &j->link);
	return j;
}

static int job_begin(struct job *j, const struct spfkit_py_request *r)
{
	const struct spfkit_ctx *ctx = ((struct spfkit_py_context *)j->context)->ctx;

	if (r->record != NULL)
		return spfkit_eval_new_record(ctx, &r->req, r->record, r->record_len, &j->ev);
	return spfkit_eval_new(ctx, &r->req, &j->ev);
}

static PyObject *driver_start(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	struct driver *d = (struct driver *)obj;
	struct spfkit_py_request r;
	PyObject *context, *done, *rest;
	struct job *j;
	unsigned long token;
	int rc;

	if (d->dns == NULL) {
		PyErr_SetString(PyExc_RuntimeError, "the Driver is closed");
		return NULL;
	}
	if (PyTuple_GET_SIZE(args) < 2 ||
	    !PyObject_TypeCheck(PyTuple_GET_ITEM(args, 0), &spfkit_py_context_type) ||
	    !PyCallable_Check(PyTuple_GET_ITEM(args, 1))) {
		PyErr_SetString(PyExc_TypeError, "start(context, done, ip, sender, helo, ...)");
		return NULL;
	}
	context = PyTuple_GET_ITEM(args, 0);
	done = PyTuple_GET_ITEM(args, 1);
	rest = PyTuple_GetSlice(args, 2, PyTuple_GET_SIZE(args));
	if (rest == NULL)
		return NULL;
	rc = spfkit_py_request_parse((struct spfkit_py_context *)context, rest, kwargs, &r);
	Py_DECREF(rest);
	if (rc < 0)
		return NULL;
	j = job_new(d, context, done);
	if (j == NULL) {
		spfkit_py_request_clear(&r);
		return NULL;
	}
	token = j->token;
	if (r.trace) {
		j->trace = PyList_New(0);
		r.req.trace = spfkit_py_trace_collect;
		r.req.trace_arg = j->trace;
	}
	if (r.trace && j->trace == NULL)
		rc = SPFKIT_ENOMEM;
	else
		rc = job_begin(j, &r);
	spfkit_py_request_clear(&r);
	if (rc != 0) {
		PyErr_Clear();
		job_finish(d, j, rc);
	} else if (job_advance(d, j) == 0 && d->pumped && pump(d) < 0) {
		PyErr_SetString(PyExc_RuntimeError, "zone resolver: wait failed");
		return NULL;
	}
	return PyLong_FromUnsignedLong(token);
}

/* The job's time is up (its budget, RFC 7208 4.6.4): every open
 * question is answered "temporary failure", so the result is temperror. */
static PyObject *driver_expire(PyObject *obj, PyObject *arg)
{
	struct driver *d = (struct driver *)obj;
	unsigned long token = PyLong_AsUnsignedLong(arg);
	struct job *j;

	if (token == (unsigned long)-1 && PyErr_Occurred())
		return NULL;
	for (j = job_of(d->jobs.head); j != NULL; j = job_of(j->link.next))
		if (j->token == token) {
			job_cancel(d, j, &out_of_time);
			job_advance(d, j);
			Py_RETURN_TRUE;
		}
	Py_RETURN_FALSE;
}

static PyObject *process_result(int n)
{
	if (n < 0)
		return spfkit_py_raise(n, "c-ares", NULL);
	return PyLong_FromLong(n);
}

static PyObject *driver_process_fd(PyObject *obj, PyObject *args)
{
	struct driver *d = (struct driver *)obj;
	unsigned events;
	int fd;

	if (!PyArg_ParseTuple(args, "iI", &fd, &events))
		return NULL;
	if (d->dns == NULL || d->pumped)
		return PyLong_FromLong(0);
	return process_result(spfkit_cares_process_fd(d->dns, fd, events));
}

static PyObject *driver_process_timeout(PyObject *obj, PyObject *unused)
{
	struct driver *d = (struct driver *)obj;

	(void)unused;
	if (d->dns == NULL || d->pumped)
		return PyLong_FromLong(0);
	return process_result(spfkit_cares_process_timeout(d->dns));
}

static PyObject *driver_timeout(PyObject *obj, PyObject *unused)
{
	struct driver *d = (struct driver *)obj;

	(void)unused;
	if (d->dns == NULL || d->pumped)
		return PyLong_FromLong(-1);
	return PyLong_FromLong(spfkit_cares_timeout(d->dns));
}

static PyObject *driver_pending(PyObject *obj, PyObject *unused)
{
	const struct driver *d = (const struct driver *)obj;
	const struct job *j;
	long n = 0;

	(void)unused;
	for (j = job_of(d->jobs.head); j != NULL; j = job_of(j->link.next))
		n++;
	return PyLong_FromLong(n);
}

/* Free the resolver first: no callback runs after (resolver.h), then
 * drop the jobs without calling them back. */
static void driver_clear(struct driver *d)
{
	struct spfkit_resolver *dns = d->dns;

	d->dns = NULL;
	if (dns != NULL)
		spfkit_cares_set_watch(dns, NULL, NULL);
	while (!spfkit__list_empty(&d->jobs)) {
		struct job *j = job_of(d->jobs.head);

		job_unlink(d, j);
		while (j->questions != NULL) {
			struct question *q = j->questions;

			j->questions = q->next;
			PyMem_Free(q);
		}
		job_free(d, j);
	}
	spfkit_resolver_free(dns);
}

static PyObject *driver_close(PyObject *obj, PyObject *unused)
{
	(void)unused;
	driver_clear((struct driver *)obj);
	Py_RETURN_NONE;
}

static int driver_init(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"resolver", "watch", NULL};
	struct driver *d = (struct driver *)obj;
	PyObject *resolver, *watch = Py_None;
	char err[256] = "";
	int rc;

	if (d->settings != NULL) {
		PyErr_SetString(PyExc_RuntimeError, "Driver.__init__ called twice");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|O", kwlist, &spfkit_py_resolver_type,
					 &resolver, &watch))
		return -1;
	Py_INCREF(resolver);
	d->settings = (struct spfkit_py_resolver *)resolver;
	Py_INCREF(watch);
	d->watch = watch;
	d->pumped = d->settings->backend == SPFKIT_PY_ZONE;
	rc = spfkit_py_resolver_make(d->settings, &d->dns, err, sizeof(err));
	if (rc == 0 && !d->pumped && watch != Py_None)
		rc = spfkit_cares_set_watch(d->dns, on_watch, d);
	if (rc != 0) {
		spfkit_py_raise(rc, "resolver", err);
		return -1;
	}
	return 0;
}

static void driver_dealloc(PyObject *obj)
{
	struct driver *d = (struct driver *)obj;

	driver_clear(d);
	Py_XDECREF(d->watch);
	Py_XDECREF(d->settings);
	Py_TYPE(obj)->tp_free(obj);
}

static PyMethodDef driver_methods[] = {
	{"start", (PyCFunction)(void (*)(void))driver_start, METH_VARARGS | METH_KEYWORDS,
	 "start(context, done, ip, sender, helo, **check_options) -> token: begin a check; "
	 "done(Result or exception) is called once, possibly before start() returns"},
	{"expire", driver_expire, METH_O,
	 "expire(token): the check's time is up; its open questions fail (temperror)"},
	{"process_fd", driver_process_fd, METH_VARARGS,
	 "process_fd(fd, events): the socket is ready (READ, WRITE)"},
	{"process_timeout", driver_process_timeout, METH_NOARGS,
	 "process_timeout(): timeout() ms have passed"},
	{"timeout", driver_timeout, METH_NOARGS,
	 "timeout() -> ms until process_timeout() is due, -1 when nothing is pending"},
	{"pending", driver_pending, METH_NOARGS, "pending() -> checks not finished"},
	{"close", driver_close, METH_NOARGS,
	 "close(): drop every open check (done is not called) and the resolver"},
	{NULL, NULL, 0, NULL},
};

PyTypeObject spfkit_py_driver_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "spfkit._spfkit.Driver",
	.tp_basicsize = sizeof(struct driver),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Driver(resolver, watch=None): checks on an event loop (spfkit.aio uses it). "
		  "watch(fd, events) is told each socket to watch (events 0: stop; fd -1: "
		  "ask timeout() again).",
	.tp_new = PyType_GenericNew,
	.tp_init = driver_init,
	.tp_dealloc = driver_dealloc,
	.tp_methods = driver_methods,
};
