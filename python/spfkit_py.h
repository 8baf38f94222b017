/*
 * spfkit for Python (issue 32): the C extension module spfkit._spfkit,
 * on the public API of libspfkit only (include/spfkit/). The package
 * spfkit (python/spfkit/) adds pyspf's API and the asyncio one on top.
 *
 * Types, one file each:
 *   Resolver (resolver.c)  where answers come from: the system's
 *                          servers, given servers, or a zone; a pool of
 *                          backends, one per thread using it at a time
 *   Context (context.c)    an spfkit_ctx and its Resolver; check()
 *                          evaluates with the GIL released; lint() and
 *                          tree() (lint.c) walk a domain's records
 *   Result (result.c)      one finished evaluation, read lazily
 *   Driver (driver.c)      evaluations on an event loop's c-ares
 *                          resolver, for spfkit.aio (asyncio)
 *
 * Threads: the GIL is released while an evaluation runs and while it
 * waits for DNS; a Context may be used by any number of threads at once
 * (the library's context is read-only after setup, and each running
 * check holds a resolver of its own from the pool). A Driver belongs to
 * the thread of its event loop.
 */
#ifndef SPFKIT_PY_H
#define SPFKIT_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>

#include <spfkit/spfkit.h>

/* ---- Resolver ------------------------------------------------------ */

enum spfkit_py_backend {
	SPFKIT_PY_CARES = 0, /* c-ares: the system's servers or given ones */
	SPFKIT_PY_ZONE,      /* the zone backend over a zone file or text */
};

/* Backends kept idle for the next check; more are freed on return. */
#define SPFKIT_PY_POOL_MAX 16

struct spfkit_py_resolver {
	PyObject_HEAD
	enum spfkit_py_backend backend;
	struct spfkit_cares_options copt;
	char *servers;            /* copt.servers points here; NULL: resolv.conf */
	struct spfkit_zone *zone; /* SPFKIT_PY_ZONE only */
	pthread_mutex_t lock;     /* the pool */
	struct spfkit_resolver *idle[SPFKIT_PY_POOL_MAX];
	size_t nidle;
	unsigned long made;       /* backends made so far (tests read it) */
};

extern PyTypeObject spfkit_py_resolver_type;

/* A new backend of self's kind (zone or c-ares), not from the pool: 0, or
 * an spfkit error with errbuf saying why. Callable without the GIL. */
int spfkit_py_resolver_make(struct spfkit_py_resolver *self, struct spfkit_resolver **out,
			    char *errbuf, size_t errlen);
/* A backend for one check: one from the pool, or a new one. 0, or an
 * spfkit error with errbuf saying why. Callable without the GIL. */
int spfkit_py_resolver_take(struct spfkit_py_resolver *self, struct spfkit_resolver **out,
			    char *errbuf, size_t errlen);
/* Give it back after the check. Callable without the GIL. */
void spfkit_py_resolver_give(struct spfkit_py_resolver *self, struct spfkit_resolver *r);

/* ---- Context ------------------------------------------------------- */

struct spfkit_py_context {
	PyObject_HEAD
	struct spfkit_ctx *ctx;
	struct spfkit_py_resolver *resolver; /* strong reference */
	int64_t fixed_now;                   /* 0: the clock at each check */
};

extern PyTypeObject spfkit_py_context_type;

/* Context.lint() and Context.tree() (lint.c): <spfkit/publish.h>'s walk. */
PyObject *spfkit_py_context_lint(PyObject *obj, PyObject *args, PyObject *kwargs);
PyObject *spfkit_py_context_tree(PyObject *obj, PyObject *args, PyObject *kwargs);

/*
 * The request of check(ip, sender, helo, ...) as the library takes it,
 * with the bytes it points to kept alive by the Python objects held
 * here. Filled by spfkit_py_request_parse(); spfkit_py_request_clear()
 * drops the references.
 */
struct spfkit_py_request {
	struct spfkit_request req;
	PyObject *sender_bytes, *helo_bytes, *record_bytes; /* owned */
	const char *record;                                 /* NULL: look it up */
	size_t record_len;
	int trace;
};

/* 0, or -1 with a Python exception (TypeError, ValueError). */
int spfkit_py_request_parse(const struct spfkit_py_context *self, PyObject *args,
			    PyObject *kwargs, struct spfkit_py_request *out);
void spfkit_py_request_clear(struct spfkit_py_request *r);

/* ---- Result -------------------------------------------------------- */

struct spfkit_py_result {
	PyObject_HEAD
	struct spfkit_eval *ev;  /* owned; its result lives as long */
	PyObject *context;       /* strong: the context outlives ev */
	PyObject *trace;         /* list of dicts, or None */
};

extern PyTypeObject spfkit_py_result_type;

/* A new Result owning ev (freed with it, also on failure). */
PyObject *spfkit_py_result_new(PyObject *context, struct spfkit_eval *ev, PyObject *trace);

/* The trace hook: appends one dict per event to the list in arg. Takes
 * the GIL itself (it runs inside an evaluation that released it). */
void spfkit_py_trace_collect(void *arg, const struct spfkit_trace_event *event);

/* ---- Driver -------------------------------------------------------- */

extern PyTypeObject spfkit_py_driver_type;

/* ---- module -------------------------------------------------------- */

/* spfkit.Error: an API failure (out of memory, a DNS backend that cannot
 * start), never an SPF result. */
extern PyObject *spfkit_py_error;

/* Raise spfkit.Error (MemoryError for SPFKIT_ENOMEM) for an spfkit
 * error code while `doing`; returns NULL. */
PyObject *spfkit_py_raise(int err, const char *doing, const char *detail);

/* Text or bytes as bytes (a new reference); str is encoded as UTF-8.
 * NULL with TypeError otherwise. */
PyObject *spfkit_py_as_bytes(PyObject *o, const char *what);

/* d[key] = v, stealing v (the lint, tree and trace dicts are built so);
 * -1 when v is NULL (its exception set) or the store fails. */
int spfkit_py_put(PyObject *d, const char *key, PyObject *v);

/* Library text as str, bytes that are not UTF-8 kept by surrogateescape;
 * None for NULL. */
PyObject *spfkit_py_text(const char *s, size_t len);

#endif
