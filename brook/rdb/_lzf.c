/* LZF decompression in C (brook.rdb.lzf.decompress's twin).
 *
 * Redis compresses every string longer than 20 bytes in its RDB files when that saves space,
 * stream listpacks included, so loading a Redis dump.rdb decompresses most of its bytes: the
 * Python loop costs about a microsecond per run, this one a few nanoseconds. The format is
 * liblzf's (see lzf.py); errors are the twin's, as LzfError (a ValueError) with its messages.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static PyObject *LzfError;

static PyObject *fail(const char *message) {
    PyErr_SetString(LzfError, message);
    return NULL;
}

/* decompress(data, size): the ``size`` bytes ``data`` compresses. */
static PyObject *decompress(PyObject *Py_UNUSED(module), PyObject *const *args,
                            Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "decompress(data, size)");
        return NULL;
    }
    Py_ssize_t size = PyLong_AsSsize_t(args[1]);
    if (size == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (size < 0) {
        return fail("output shorter than announced");
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    PyObject *result = PyBytes_FromStringAndSize(NULL, size);
    if (!result) {
        PyBuffer_Release(&view);
        return NULL;
    }
    const unsigned char *in = view.buf, *end = in + view.len;
    unsigned char *start = (unsigned char *)PyBytes_AS_STRING(result), *out = start;
    unsigned char *limit = start + size;
    const char *error = NULL;
    while (in < end) {
        unsigned control = *in++;
        if (control < 32) {
            size_t run = control + 1;
            if ((size_t)(end - in) < run) {
                error = "literal run past the end";
                break;
            }
            if ((size_t)(limit - out) < run) {
                error = "output longer than announced";
                break;
            }
            memcpy(out, in, run);
            out += run;
            in += run;
            continue;
        }
        size_t length = control >> 5;
        if (length == 7) {
            if (in >= end) {
                error = "truncated match";
                break;
            }
            length += *in++;
        }
        if (in >= end) {
            error = "truncated match";
            break;
        }
        length += 2;
        size_t back = ((size_t)(control & 0x1F) << 8) + *in++ + 1;
        if (back > (size_t)(out - start)) {
            error = "back reference before the start";
            break;
        }
        if ((size_t)(limit - out) < length) {
            error = "output longer than announced";
            break;
        }
        const unsigned char *from = out - back;
        while (length--) { /* byte by byte: the match may overlap what it writes */
            *out++ = *from++;
        }
    }
    PyBuffer_Release(&view);
    if (!error && out != limit) {
        error = "output shorter than announced";
    }
    if (error) {
        Py_DECREF(result);
        return fail(error);
    }
    return result;
}

/* set_error(cls): raise errors as ``cls`` (brook.rdb.lzf's LzfError), so both builds raise the
 * same class. */
static PyObject *set_error(PyObject *Py_UNUSED(module), PyObject *error) {
    Py_INCREF(error);
    Py_XSETREF(LzfError, error);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"decompress", (PyCFunction)(void (*)(void))decompress, METH_FASTCALL,
     "The ``size`` bytes ``data`` compresses (LzfError if it does not)."},
    {"set_error", (PyCFunction)set_error, METH_O, "The exception class errors are raised as."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef lzf_module = {
    PyModuleDef_HEAD_INIT, "_lzf", "LZF decompression, in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__lzf(void) {
    Py_INCREF(PyExc_ValueError);
    LzfError = PyExc_ValueError;
    return PyModule_Create(&lzf_module);
}
