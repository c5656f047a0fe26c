/* Plain stream IDs ("ms-seq", each part 1 to 18 ASCII digits) read into Brook's 128-bit ints.
 *
 * Hand-written part of the compiled core (docs/performance.md, "The third pass"): XACK's
 * batches and the AOF's XADDs hold IDs by the hundred and the million, and in compiled Python
 * one costs about 2,700 instructions (a byte at a time through the bytes object, then the
 * 128-bit int built by a shift and an or). brook.commands.stream_args.plain_id is the same
 * function in Python: the pure build runs it, and the tests compare the two.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* The ID in *ms and *seq; 0 when arg is not a plain ID. */
static int read_plain(PyObject *arg, uint64_t *ms, uint64_t *seq) {
    if (!PyBytes_Check(arg))
        return 0;
    const unsigned char *text = (const unsigned char *)PyBytes_AS_STRING(arg);
    Py_ssize_t size = PyBytes_GET_SIZE(arg), i = 0;
    uint64_t value = 0;
    while (i < size && text[i] >= '0' && text[i] <= '9')
        value = value * 10 + (uint64_t)(text[i++] - '0');
    if (i == 0 || i > 18 || i >= size || text[i] != '-')
        return 0;
    *ms = value;
    Py_ssize_t start = ++i;
    value = 0;
    while (i < size && text[i] >= '0' && text[i] <= '9')
        value = value * 10 + (uint64_t)(text[i++] - '0');
    if (i != size || i == start || i - start > 18)
        return 0;
    *seq = value;
    return 1;
}

/* ms << 64 | seq as a Python int. */
static PyObject *make_id(uint64_t ms, uint64_t seq) {
    if (!ms)
        return PyLong_FromUnsignedLongLong(seq);
    unsigned char bytes[16];
    for (int k = 0; k < 8; k++) {
        bytes[k] = (unsigned char)(seq >> (8 * k));
        bytes[8 + k] = (unsigned char)(ms >> (8 * k));
    }
    return _PyLong_FromByteArray(bytes, 16, 1, 0);
}

/* plain_id(arg) -> the ID as an int, -1 when arg is not a plain ID. */
static PyObject *plain_id(PyObject *self, PyObject *arg) {
    (void)self;
    uint64_t ms, seq;
    if (!read_plain(arg, &ms, &seq))
        return PyLong_FromLong(-1);
    return make_id(ms, seq);
}

/* plain_ids(args) -> every argument's ID, or None when one is not a plain ID. */
static PyObject *plain_ids(PyObject *self, PyObject *args) {
    (void)self;
    if (!PyList_Check(args)) {
        PyErr_SetString(PyExc_TypeError, "plain_ids expects a list of bytes");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(args);
    PyObject *ids = PyList_New(n);
    if (ids == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t ms, seq;
        if (!read_plain(PyList_GET_ITEM(args, i), &ms, &seq)) {
            Py_DECREF(ids);
            Py_RETURN_NONE;
        }
        PyObject *entry_id = make_id(ms, seq);
        if (entry_id == NULL) {
            Py_DECREF(ids);
            return NULL;
        }
        PyList_SET_ITEM(ids, i, entry_id);
    }
    return ids;
}

static PyMethodDef methods[] = {
    {"plain_id", plain_id, METH_O, "A plain ms-seq ID as an int, -1 for any other form."},
    {"plain_ids", plain_ids, METH_O, "Every argument's plain ID, or None if one is not plain."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_id_parse", "Plain stream IDs read into ints.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__id_parse(void) {
    return PyModule_Create(&module);
}
