/* LZF in C (the twins of brook.rdb.lzf's _compress and _decompress).
 *
 * Redis compresses every string longer than 20 bytes in its RDB files when that saves space,
 * stream listpacks included, so loading a Redis dump.rdb decompresses most of its bytes, and
 * writing one tries to compress every such string: the Python loops cost about a microsecond
 * per run or input byte, these a few nanoseconds. The format is liblzf's (see lzf.py); errors
 * are the twin's, as LzfError (a ValueError) with its messages, and the compressor finds the
 * twin's matches (the same hash table), so both write the same bytes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_LITERAL 32
#define MAX_OFFSET (1 << 13)
#define MAX_MATCH 264
#define HASH_BITS 14
#define MIN_HASH_BITS 8
#define HASH_MULTIPLIER 2654435761u

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

static inline uint32_t slot_of(const unsigned char *at, int bits) {
    uint32_t value = (uint32_t)at[0] << 16 | (uint32_t)at[1] << 8 | at[2];
    return (uint32_t)(value * HASH_MULTIPLIER) >> (32 - bits);
}

/* The twin's _table_bits: about one slot per input byte, between 2**8 and 2**14. */
static int table_bits(Py_ssize_t size) {
    int bits = 0;
    for (Py_ssize_t rest = size - 1; rest > 0; rest >>= 1)
        bits++;
    return bits < MIN_HASH_BITS ? MIN_HASH_BITS : bits > HASH_BITS ? HASH_BITS : bits;
}

/* Literal runs of data[start:stop] (at most MAX_LITERAL bytes each) onto out. */
static unsigned char *put_literals(unsigned char *out, const unsigned char *data,
                                   Py_ssize_t start, Py_ssize_t stop) {
    while (start < stop) {
        Py_ssize_t run = stop - start < MAX_LITERAL ? stop - start : MAX_LITERAL;
        *out++ = (unsigned char)(run - 1);
        memcpy(out, data + start, (size_t)run);
        out += run;
        start += run;
    }
    return out;
}

/* compress(data, limit): ``data`` compressed, or None when that takes more than ``limit``
 * bytes. */
static PyObject *compress(PyObject *Py_UNUSED(module), PyObject *const *args,
                          Py_ssize_t nargs) {
    if (nargs != 2 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "compress(data: bytes, limit: int)");
        return NULL;
    }
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    Py_ssize_t end = PyBytes_GET_SIZE(args[0]);
    Py_ssize_t limit = PyLong_AsSsize_t(args[1]);
    if (limit == -1 && PyErr_Occurred())
        return NULL;
    if (limit < 0)
        Py_RETURN_NONE;
    /* Room for the worst case: every byte a literal, one control byte per run. */
    unsigned char *buffer = PyMem_Malloc((size_t)(end + end / MAX_LITERAL + 16));
    int bits = table_bits(end);
    Py_ssize_t *table = PyMem_Malloc(sizeof(Py_ssize_t) << bits);
    if (buffer == NULL || table == NULL) {
        PyMem_Free(buffer);
        PyMem_Free(table);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t k = 0; k < ((Py_ssize_t)1 << bits); k++)
        table[k] = -1;
    unsigned char *out = buffer;
    Py_ssize_t literal_start = 0, pos = 0, last = end - 2;
    PyObject *result = NULL;
    while (pos < last) {
        uint32_t slot = slot_of(data + pos, bits);
        Py_ssize_t candidate = table[slot];
        table[slot] = pos;
        Py_ssize_t offset = pos - candidate - 1;
        if (candidate < 0 || offset >= MAX_OFFSET || memcmp(data + candidate, data + pos, 3)) {
            pos++;
            continue;
        }
        Py_ssize_t length = 3, most = end - pos < MAX_MATCH ? end - pos : MAX_MATCH;
        while (length < most && data[candidate + length] == data[pos + length])
            length++;
        out = put_literals(out, data, literal_start, pos);
        Py_ssize_t code = length - 2;
        if (code < 7) {
            *out++ = (unsigned char)(code << 5 | offset >> 8);
        } else {
            *out++ = (unsigned char)(7 << 5 | offset >> 8);
            *out++ = (unsigned char)(code - 7);
        }
        *out++ = (unsigned char)(offset & 0xFF);
        if (out - buffer > limit)
            goto none;
        Py_ssize_t stop = pos + length;
        for (Py_ssize_t inner = pos + 1; inner < (stop < last ? stop : last); inner++)
            table[slot_of(data + inner, bits)] = inner;
        pos = literal_start = stop;
    }
    out = put_literals(out, data, literal_start, end);
    if (out - buffer > limit)
        goto none;
    result = PyBytes_FromStringAndSize((const char *)buffer, out - buffer);
    goto done;
none:
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(buffer);
    PyMem_Free(table);
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
    {"compress", (PyCFunction)(void (*)(void))compress, METH_FASTCALL,
     "``data`` compressed, or None when that takes more than ``limit`` bytes."},
    {"set_error", (PyCFunction)set_error, METH_O, "The exception class errors are raised as."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef lzf_module = {
    PyModuleDef_HEAD_INIT, "_lzf", "LZF, in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__lzf(void) {
    Py_INCREF(PyExc_ValueError);
    LzfError = PyExc_ValueError;
    return PyModule_Create(&lzf_module);
}
