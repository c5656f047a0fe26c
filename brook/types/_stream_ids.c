/* Stream IDs between their text and Brook's 128-bit ints (ms << 64 | seq).
 *
 * Hand-written part of the compiled core (docs/performance.md, "The third pass"). In compiled
 * Python each 128-bit step leaves mypyc's machine-int path (a shift, an or, a format):
 * - plain_id / plain_ids read "ms-seq" IDs (each part 1 to 18 ASCII digits), as XACK's batches
 *   and the AOF's XADDs hold them by the hundred and the million: 2,700 instructions each in
 *   Python; brook.commands.stream_args.read_plain_id is the Python twin;
 * - next_auto_id makes XADD *'s ID and its text: 2,200 instructions in Python;
 *   brook.commands.streams._next_auto_id_text is the Python twin.
 * The pure build runs the twins, and the tests compare each pair.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "_decimal.h"
#include "_ids.h"

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

/* next_auto_id(now_ms, last_id) -> (entry_id, text): XADD *'s ID after last_id, the current
 * millisecond or last_id + 1 (the sequence carrying into the milliseconds). */
static PyObject *next_auto_id(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2 || !PyLong_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "next_auto_id(now_ms: int, last_id: int)");
        return NULL;
    }
    uint64_t now_ms = PyLong_AsUnsignedLongLong(args[0]);
    if (now_ms == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    uint64_t last_ms, last_seq;
    if (split_id(args[1], &last_ms, &last_seq) < 0)
        return NULL;
    uint64_t ms = now_ms, seq = 0;
    if (now_ms <= last_ms) {
        if (last_seq != UINT64_MAX) {
            ms = last_ms;
            seq = last_seq + 1;
        } else if (last_ms != UINT64_MAX) {
            ms = last_ms + 1;
        } else {
            PyErr_SetString(PyExc_OverflowError, "the stream's last ID is the largest possible");
            return NULL;
        }
    }
    char text[42];
    int size = write_u64(text, ms);
    text[size++] = '-';
    size += write_u64(text + size, seq);
    PyObject *entry_id = make_id(ms, seq);
    if (entry_id == NULL)
        return NULL;
    PyObject *text_obj = PyBytes_FromStringAndSize(text, size);
    if (text_obj == NULL) {
        Py_DECREF(entry_id);
        return NULL;
    }
    PyObject *result = PyTuple_Pack(2, entry_id, text_obj);
    Py_DECREF(entry_id);
    Py_DECREF(text_obj);
    return result;
}

static PyMethodDef methods[] = {
    {"plain_id", plain_id, METH_O, "A plain ms-seq ID as an int, -1 for any other form."},
    {"plain_ids", plain_ids, METH_O, "Every argument's plain ID, or None if one is not plain."},
    {"next_auto_id", (PyCFunction)(void (*)(void))next_auto_id, METH_FASTCALL,
     "XADD *'s ID after last_id at now_ms, and its text."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_stream_ids", "Stream IDs between their text and ints.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__stream_ids(void) {
    return PyModule_Create(&module);
}
