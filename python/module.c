/*
 * The module spfkit._spfkit: its types, its exception, the names of the
 * results and the library's version.
 */
#include "spfkit_py.h"

PyObject *spfkit_py_error;

PyObject *spfkit_py_raise(int err, const char *doing, const char *detail)
{
	if (err == SPFKIT_ENOMEM)
		return PyErr_NoMemory();
	if (detail != NULL && detail[0] != '\0')
		PyErr_Format(spfkit_py_error, "%s: %s (%s)", doing, spfkit_strerror(err), detail);
	else
		PyErr_Format(spfkit_py_error, "%s: %s", doing, spfkit_strerror(err));
	return NULL;
}

PyObject *spfkit_py_as_bytes(PyObject *o, const char *what)
{
	if (PyUnicode_Check(o))
		return PyUnicode_AsUTF8String(o);
	if (PyBytes_Check(o)) {
		Py_INCREF(o);
		return o;
	}
	PyErr_Format(PyExc_TypeError, "%s must be str or bytes, not %.100s", what,
		     Py_TYPE(o)->tp_name);
	return NULL;
}

int spfkit_py_put(PyObject *d, const char *key, PyObject *v)
{
	int rc;

	if (v == NULL)
		return -1;
	rc = PyDict_SetItemString(d, key, v);
	Py_DECREF(v);
	return rc;
}

PyObject *spfkit_py_text(const char *s, size_t len)
{
	if (s == NULL)
		Py_RETURN_NONE;
	return PyUnicode_DecodeUTF8(s, (Py_ssize_t)len, "surrogateescape");
}

/* result_name(code) -> "pass" ...: the library's names, for tests. */
static PyObject *result_names(PyObject *mod, PyObject *unused)
{
	PyObject *t = PyTuple_New(SPFKIT_RESULT_PERMERROR + 1);
	int i;

	(void)mod;
	(void)unused;
	if (t == NULL)
		return NULL;
	for (i = 0; i <= SPFKIT_RESULT_PERMERROR; i++) {
		PyObject *s = PyUnicode_FromString(spfkit_result_name((enum spfkit_result_code)i));

		if (s == NULL) {
			Py_DECREF(t);
			return NULL;
		}
		PyTuple_SET_ITEM(t, i, s);
	}
	return t;
}

static PyMethodDef module_methods[] = {
	{"result_names", result_names, METH_NOARGS,
	 "result_names() -> the seven results of RFC 7208 section 2.6, by code"},
	{NULL, NULL, 0, NULL},
};

static int add_type(PyObject *m, PyTypeObject *t, const char *name)
{
	if (PyType_Ready(t) < 0)
		return -1;
	Py_INCREF(t);
	if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
		Py_DECREF(t);
		return -1;
	}
	return 0;
}

static int module_exec(PyObject *m)
{
	spfkit_py_error = PyErr_NewExceptionWithDoc(
		"spfkit.Error",
		"An API failure (a DNS backend that cannot start, a zone that does not load); "
		"never an SPF result, which is data in Result.",
		NULL, NULL);
	if (spfkit_py_error == NULL)
		return -1;
	Py_INCREF(spfkit_py_error);
	if (PyModule_AddObject(m, "Error", spfkit_py_error) < 0) {
		Py_DECREF(spfkit_py_error);
		return -1;
	}
	if (add_type(m, &spfkit_py_resolver_type, "Resolver") < 0 ||
	    add_type(m, &spfkit_py_context_type, "Context") < 0 ||
	    add_type(m, &spfkit_py_result_type, "Result") < 0 ||
	    add_type(m, &spfkit_py_driver_type, "Driver") < 0)
		return -1;
	if (PyModule_AddStringConstant(m, "library_version", spfkit_version()) < 0 ||
	    PyModule_AddIntConstant(m, "READ", SPFKIT_CARES_READ) < 0 ||
	    PyModule_AddIntConstant(m, "WRITE", SPFKIT_CARES_WRITE) < 0)
		return -1;
	return 0;
}

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "spfkit._spfkit",
	.m_doc = "libspfkit's SPF (RFC 7208) evaluator; use the package spfkit.",
	.m_size = -1,
	.m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__spfkit(void);

PyMODINIT_FUNC PyInit__spfkit(void)
{
	PyObject *m = PyModule_Create(&module_def);

	if (m == NULL)
		return NULL;
	if (module_exec(m) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
