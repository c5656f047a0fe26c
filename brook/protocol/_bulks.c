/* Arrays of bulk strings in C: a request's framing, and the replies framed the same way.
 *
 * A request is an array of bulk strings; so are many replies (LRANGE, ZRANGE...). hiredis's
 * pack_command wrote both, through sprintf and its own string buffer, then a copy into bytes:
 * an eighth of a pipelined ZRANGEBYSCORE in the profile, and every request whose bytes hold
 * a '+', '(' or '=' (brook.protocol.framing) was encoded again that way to be checked. The
 * pure build keeps pack_command (brook.protocol.resp.array_of_bulks, FramedGets); the tests
 * compare the two.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../types/_decimal.h"


/* "<kind><value>\r\n" at out; its length. */
static inline Py_ssize_t write_header(char *out, char kind, Py_ssize_t value) {
    out[0] = kind;
    int digits = write_u64(out + 1, (uint64_t)value);
    out[1 + digits] = '\r';
    out[2 + digits] = '\n';
    return 3 + digits;
}

/* pack_bulks(items): items (a list or tuple of bytes) as an array of bulk strings; TypeError
 * for anything else, as pack_command raises for what it cannot write. */
static PyObject *pack_bulks(PyObject *Py_UNUSED(self), PyObject *items) {
    PyObject *sequence = PySequence_Fast(items, "pack_bulks takes a list or a tuple");
    if (sequence == NULL)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
    PyObject **elements = PySequence_Fast_ITEMS(sequence);
    Py_ssize_t size = 23;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (!PyBytes_CheckExact(elements[i])) {
            Py_DECREF(sequence);
            PyErr_SetString(PyExc_TypeError, "pack_bulks takes bytes only");
            return NULL;
        }
        size += 25 + PyBytes_GET_SIZE(elements[i]);
    }
    char *buf = PyMem_Malloc((size_t)size);
    if (buf == NULL) {
        Py_DECREF(sequence);
        return PyErr_NoMemory();
    }
    Py_ssize_t at = write_header(buf, '*', count);
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t length = PyBytes_GET_SIZE(elements[i]);
        at += write_header(buf + at, '$', length);
        memcpy(buf + at, PyBytes_AS_STRING(elements[i]), (size_t)length);
        at += length;
        buf[at++] = '\r';
        buf[at++] = '\n';
    }
    Py_DECREF(sequence);
    PyObject *result = PyBytes_FromStringAndSize(buf, at);
    PyMem_Free(buf);
    return result;
}

/* Is "<kind><value>\r\n" at p (before end)? Where it ends, or NULL. */
static inline const char *match_header(const char *p, const char *end, char kind,
                                       Py_ssize_t value) {
    char header[24];
    Py_ssize_t length = write_header(header, kind, value);
    if (end - p < length || memcmp(p, header, (size_t)length) != 0)
        return NULL;
    return p + length;
}

/* framed_end(data, position, request): where the request ends in data if the bytes from
 * position are exactly request (a list of bytes) written as a client writes it, an array of
 * bulk strings; -1 otherwise (another element type, another spelling of a length). */
static PyObject *framed_end(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "framed_end(data, position, request)");
        return NULL;
    }
    Py_ssize_t position = PyLong_AsSsize_t(args[1]);
    if (position == -1 && PyErr_Occurred())
        return NULL;
    PyObject *request = args[2];
    if (!PyList_CheckExact(request))
        return PyLong_FromLong(-1);
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Py_ssize_t found = -1;
    const char *start = view.buf, *end = start + view.len;
    const char *p = position >= 0 && position <= view.len ? start + position : NULL;
    Py_ssize_t count = PyList_GET_SIZE(request);
    if (p != NULL)
        p = match_header(p, end, '*', count);
    for (Py_ssize_t i = 0; p != NULL && i < count; i++) {
        PyObject *element = PyList_GET_ITEM(request, i);
        if (!PyBytes_CheckExact(element)) {
            p = NULL;
            break;
        }
        Py_ssize_t length = PyBytes_GET_SIZE(element);
        p = match_header(p, end, '$', length);
        if (p == NULL || end - p < length + 2 ||
            memcmp(p, PyBytes_AS_STRING(element), (size_t)length) != 0 ||
            p[length] != '\r' || p[length + 1] != '\n') {
            p = NULL;
            break;
        }
        p += length + 2;
    }
    if (p != NULL)
        found = p - start;
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(found);
}

static PyMethodDef methods[] = {
    {"pack_bulks", (PyCFunction)pack_bulks, METH_O,
     "A list or tuple of bytes as a RESP array of bulk strings."},
    {"framed_end", (PyCFunction)(void (*)(void))framed_end, METH_FASTCALL,
     "Where a request ends in data if it is there exactly as bulk strings, else -1."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_bulks", "Arrays of bulk strings in C.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__bulks(void) {
    return PyModule_Create(&module);
}
