/*
 * spfkit.Resolver: where a Context's answers come from, and a pool of
 * backends so that checks on several threads never share one (a c-ares
 * channel or a zone resolver is one thread's at a time: cares.h,
 * zone.h). A check takes a backend, runs without the GIL, and gives it
 * back; at most SPFKIT_PY_POOL_MAX stay idle.
 */
#include <string.h>

#include "spfkit_py.h"

#define ZONE_ERR_MAX 512

int spfkit_py_resolver_make(struct spfkit_py_resolver *self, struct spfkit_resolver **out,
			    char *errbuf, size_t errlen)
{
	if (self->backend == SPFKIT_PY_ZONE) {
		int rc = spfkit_zone_resolver(self->zone, out);

		if (rc != 0)
			snprintf(errbuf, errlen, "zone resolver");
		return rc;
	}
	return spfkit_cares_new(&self->copt, NULL, out, errbuf, errlen);
}

int spfkit_py_resolver_take(struct spfkit_py_resolver *self, struct spfkit_resolver **out,
			    char *errbuf, size_t errlen)
{
	int rc;

	pthread_mutex_lock(&self->lock);
	if (self->nidle > 0) {
		*out = self->idle[--self->nidle];
		pthread_mutex_unlock(&self->lock);
		return 0;
	}
	self->made++;
	pthread_mutex_unlock(&self->lock);
	rc = spfkit_py_resolver_make(self, out, errbuf, errlen);
	if (rc != 0)
		*out = NULL;
	return rc;
}

void spfkit_py_resolver_give(struct spfkit_py_resolver *self, struct spfkit_resolver *r)
{
	if (r == NULL)
		return;
	pthread_mutex_lock(&self->lock);
	if (self->nidle < SPFKIT_PY_POOL_MAX) {
		self->idle[self->nidle++] = r;
		r = NULL;
	}
	pthread_mutex_unlock(&self->lock);
	spfkit_resolver_free(r);
}

static int load_zone(struct spfkit_py_resolver *self, PyObject *path, PyObject *text,
		     const char *origin)
{
	char err[ZONE_ERR_MAX] = "";
	PyObject *bytes = NULL;
	int rc = spfkit_zone_new(NULL, &self->zone);

	if (rc != 0) {
		spfkit_py_raise(rc, "zone", NULL);
		return -1;
	}
	if (path != NULL) {
		bytes = PyUnicode_Check(path) ? PyUnicode_EncodeFSDefault(path)
					      : spfkit_py_as_bytes(path, "zone");
		if (bytes == NULL)
			return -1;
		Py_BEGIN_ALLOW_THREADS
		rc = spfkit_zone_load_file(self->zone, PyBytes_AS_STRING(bytes), origin, err,
					   sizeof(err));
		Py_END_ALLOW_THREADS
	} else {
		bytes = spfkit_py_as_bytes(text, "zone_text");
		if (bytes == NULL)
			return -1;
		Py_BEGIN_ALLOW_THREADS
		rc = spfkit_zone_load_text(self->zone, PyBytes_AS_STRING(bytes),
					   (size_t)PyBytes_GET_SIZE(bytes), "zone_text", origin,
					   err, sizeof(err));
		Py_END_ALLOW_THREADS
	}
	Py_DECREF(bytes);
	if (rc != 0) {
		spfkit_py_raise(rc, "loading the zone", err);
		return -1;
	}
	return 0;
}

static int set_servers(struct spfkit_py_resolver *self, PyObject *servers)
{
	PyObject *bytes = spfkit_py_as_bytes(servers, "servers");
	size_t n;

	if (bytes == NULL)
		return -1;
	n = (size_t)PyBytes_GET_SIZE(bytes);
	if (memchr(PyBytes_AS_STRING(bytes), '\0', n) != NULL) {
		Py_DECREF(bytes);
		PyErr_SetString(PyExc_ValueError, "servers: a NUL byte");
		return -1;
	}
	self->servers = PyMem_RawMalloc(n + 1);
	if (self->servers == NULL) {
		Py_DECREF(bytes);
		PyErr_NoMemory();
		return -1;
	}
	memcpy(self->servers, PyBytes_AS_STRING(bytes), n + 1);
	Py_DECREF(bytes);
	self->copt.servers = self->servers;
	return 0;
}

/* The first backend is made now, so that a bad server list or an
 * unreadable resolv.conf is an error here, not at the first check. */
static int first_backend(struct spfkit_py_resolver *self)
{
	char err[256] = "";
	struct spfkit_resolver *r = NULL;
	int rc;

	Py_BEGIN_ALLOW_THREADS
	rc = spfkit_py_resolver_take(self, &r, err, sizeof(err));
	Py_END_ALLOW_THREADS
	if (rc != 0) {
		spfkit_py_raise(rc, "resolver", err);
		return -1;
	}
	spfkit_py_resolver_give(self, r);
	return 0;
}

static int resolver_init(PyObject *obj, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = {"servers", "zone", "zone_text", "origin", "timeout_ms", "tries",
				 NULL};
	struct spfkit_py_resolver *self = (struct spfkit_py_resolver *)obj;
	PyObject *servers = Py_None, *zone = Py_None, *zone_text = Py_None;
	const char *origin = NULL;
	int timeout_ms = 0, tries = 0;

	if (self->zone != NULL || self->made != 0) {
		PyErr_SetString(PyExc_RuntimeError, "Resolver.__init__ called twice");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOzii", kwlist, &servers, &zone,
					 &zone_text, &origin, &timeout_ms, &tries))
		return -1;
	if ((zone != Py_None) + (zone_text != Py_None) + (servers != Py_None) > 1) {
		PyErr_SetString(PyExc_ValueError,
				"give one of servers, zone and zone_text (none: the system's servers)");
		return -1;
	}
	spfkit_cares_options_init(&self->copt);
	self->copt.timeout_ms = timeout_ms;
	self->copt.tries = tries;
	if (zone != Py_None || zone_text != Py_None) {
		self->backend = SPFKIT_PY_ZONE;
		if (load_zone(self, zone != Py_None ? zone : NULL, zone_text, origin) < 0)
			return -1;
	} else {
		self->backend = SPFKIT_PY_CARES;
		if (servers != Py_None && set_servers(self, servers) < 0)
			return -1;
	}
	return first_backend(self);
}

static PyObject *resolver_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
	struct spfkit_py_resolver *self;

	(void)args;
	(void)kwargs;
	self = (struct spfkit_py_resolver *)type->tp_alloc(type, 0);
	if (self == NULL)
		return NULL;
	if (pthread_mutex_init(&self->lock, NULL) != 0) {
		Py_DECREF(self);
		return PyErr_NoMemory();
	}
	return (PyObject *)self;
}

static void resolver_dealloc(PyObject *obj)
{
	struct spfkit_py_resolver *self = (struct spfkit_py_resolver *)obj;

	while (self->nidle > 0)
		spfkit_resolver_free(self->idle[--self->nidle]);
	spfkit_zone_free(self->zone); /* after its resolvers */
	PyMem_RawFree(self->servers);
	pthread_mutex_destroy(&self->lock);
	Py_TYPE(obj)->tp_free(obj);
}

static PyObject *get_kind(PyObject *obj, void *unused)
{
	const struct spfkit_py_resolver *self = (const struct spfkit_py_resolver *)obj;

	(void)unused;
	if (self->backend == SPFKIT_PY_ZONE)
		return PyUnicode_FromString("zone");
	return PyUnicode_FromString(self->servers != NULL ? "servers" : "system");
}

static PyObject *get_made(PyObject *obj, void *unused)
{
	struct spfkit_py_resolver *self = (struct spfkit_py_resolver *)obj;
	unsigned long made;

	(void)unused;
	pthread_mutex_lock(&self->lock);
	made = self->made;
	pthread_mutex_unlock(&self->lock);
	return PyLong_FromUnsignedLong(made);
}

static PyGetSetDef resolver_getset[] = {
	{"kind", get_kind, NULL, "'system', 'servers' or 'zone'", NULL},
	{"backends_made", get_made, NULL,
	 "DNS backends made so far (one per thread checking at the same time)", NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject spfkit_py_resolver_type = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "spfkit.Resolver",
	.tp_basicsize = sizeof(struct spfkit_py_resolver),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Resolver(servers=None, *, zone=None, zone_text=None, origin=None, "
		  "timeout_ms=0, tries=0)\n\n"
		  "Where answers come from: the servers of /etc/resolv.conf (no argument), "
		  "the servers given (\"127.0.0.1:5353,[::1]:53\"), or an RFC 1035 zone "
		  "file (zone=path) or text (zone_text=...) held in memory. timeout_ms and "
		  "tries are c-ares' per-try timeout and tries (0: 2000 ms, 2).",
	.tp_new = resolver_new,
	.tp_init = resolver_init,
	.tp_dealloc = resolver_dealloc,
	.tp_getset = resolver_getset,
};
