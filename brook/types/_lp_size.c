/* What an XADD adds to the open node's listpack size, in one call.
 *
 * Hand-written part of the compiled core (docs/performance.md, "The third pass"): every XADD
 * and every XADD an AOF replay runs counts the bytes Redis's listpack would grow by (where
 * nodes end depends on it), and in compiled Python that costs about 2,900 instructions (the
 * 128-bit IDs split into their deltas, each value tested as an integer). brook.types.lpsize is
 * the same arithmetic in Python: the pure build runs it, and the tests compare the two.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_ids.h"
#include "_listpack.h"
#include "_rows.h"

/* Bytes of an element appended as a string (stored as an integer when it reads as one). */
static int64_t string_size(PyObject *item) {
    return lp_string_size((const unsigned char *)PyBytes_AS_STRING(item), PyBytes_GET_SIZE(item));
}

/* The sum of string_size over items[start::2]; -1 if one is not bytes. */
static int64_t values_size(PyObject *const *items, Py_ssize_t n, Py_ssize_t start) {
    int64_t total = 0;
    for (Py_ssize_t i = start; i < n; i += 2) {
        if (!PyBytes_Check(items[i]))
            return -1;
        total += string_size(items[i]);
    }
    return total;
}

/* An ID delta stored as a wrapped int64: its bytes beyond the 2 of a small one. */
static int64_t delta_extra(uint64_t delta) {
    int64_t wrapped = (int64_t)delta;
    return wrapped >= 0 && wrapped <= 127 ? 0 : lp_int_size(wrapped) - 2;
}

static int64_t count_growth(Py_ssize_t live) {
    switch (live) {
    case 127: case 4095: case 32767: case 8388607: return 1;
    case 2147483647: return 4;
    default: return 0;
    }
}

/* appended_size(entry_id, master_id, fields, names, live) -> bytes the node grows by:
 * lpsize.appended_size of the entry's ID deltas from the master. */
static PyObject *appended_size(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 5 || !PyList_Check(args[2]) || !PyList_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "appended_size(entry_id, master_id, fields: list, "
                                         "names: list, live: int)");
        return NULL;
    }
    uint64_t ms, seq, master_ms, master_seq;
    if (split_id(args[0], &ms, &seq) < 0 || split_id(args[1], &master_ms, &master_seq) < 0)
        return NULL;
    Py_ssize_t live = PyLong_AsSsize_t(args[4]);
    if (live == -1 && PyErr_Occurred())
        return NULL;
    PyObject *const *fields = PySequence_Fast_ITEMS(args[2]);
    PyObject *const *names = PySequence_Fast_ITEMS(args[3]);
    Py_ssize_t nitems = PyList_GET_SIZE(args[2]), nnames = PyList_GET_SIZE(args[3]);
    int same = same_fields(fields, nitems, names, nnames);
    int64_t values = values_size(fields, nitems, 1);
    if (values < 0)
        goto not_bytes;
    /* The entry: flags, ms and seq deltas (2 bytes each when small), values, lp-count. */
    int64_t size = 2 + 2 + 2 + values + delta_extra(ms - master_ms) + delta_extra(seq - master_seq);
    Py_ssize_t nfields = nitems >> 1;
    if (same) {
        size += (nnames < 125 ? 2 : lp_int_size(nnames + 3));
        if (live >= 127)
            size += count_growth(live);
    } else {  /* the field count, the names and a longer lp-count */
        int64_t names_size = values_size(fields, nitems, 0);
        if (names_size < 0)
            goto not_bytes;
        size += lp_int_size(nfields) + names_size + lp_int_size(2 * nfields + 4)
                + count_growth(live);
    }
    return PyLong_FromLongLong(size);

not_bytes:
    PyErr_SetString(PyExc_TypeError, "stream fields are bytes");
    return NULL;
}

static PyMethodDef methods[] = {
    {"appended_size", (PyCFunction)(void (*)(void))appended_size, METH_FASTCALL,
     "Bytes an entry adds to an open stream node's listpack."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_lp_size", "Listpack sizes of stream entries.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__lp_size(void) {
    return PyModule_Create(&module);
}
