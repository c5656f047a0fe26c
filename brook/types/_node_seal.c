/* A stream's open node sealed into its blob, in one pass.
 *
 * Hand-written part of the compiled core (docs/performance.md, "The third pass"): every node an
 * XADD fills and every node an AOF replay builds is sealed once, and in compiled Python that
 * costs about 3,200 instructions per entry (each 128-bit ID split again, a bytes object per
 * column, the join). brook.types.stream_node._seal_blob is the same function in Python: the pure
 * build runs it, and the tests compare the two.
 *
 * The blob's layout is documented in brook/types/stream_node.py. A column's typecode is the
 * narrowest of B, H, I, L (1, 2, 4, 8 bytes on the 64-bit Linux Brook builds on) that holds its
 * largest value, as the Python twin picks it; values are in native byte order.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_ids.h"
#include "_rows.h"

#define HEADER_SIZE 20

typedef struct {
    const char *data;
    Py_ssize_t size;
} Piece;

/* The typecode and width of a column whose largest value is top. */
static char column_code(uint64_t top, int *width) {
    if (top < 256) {
        *width = 1;
        return 'B';
    }
    if (top < 65536) {
        *width = 2;
        return 'H';
    }
    if (top < 4294967296ULL) {
        *width = 4;
        return 'I';
    }
    *width = 8;
    return 'L';
}

static char *put_column(char *out, const uint64_t *values, Py_ssize_t n, int width) {
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t v = values[i];
        switch (width) {
        case 1: *out = (char)v; break;
        case 2: { uint16_t w = (uint16_t)v; memcpy(out, &w, 2); break; }
        case 4: { uint32_t w = (uint32_t)v; memcpy(out, &w, 4); break; }
        default: memcpy(out, &v, 8); break;
        }
        out += width;
    }
    return out;
}

static uint64_t top_of(const uint64_t *values, Py_ssize_t n) {
    uint64_t top = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (values[i] > top)
            top = values[i];
    return top;
}

/* Growable arrays of the pass over the entries. */
typedef struct {
    uint64_t *values;
    Py_ssize_t size, capacity;
} Column;

/* Room for one more item in a growable array (doubling); -1 with MemoryError. */
static int make_room(void **items, Py_ssize_t size, Py_ssize_t *capacity, size_t item_size) {
    if (size < *capacity)
        return 0;
    Py_ssize_t grown = *capacity ? *capacity * 2 : 64;
    void *moved = PyMem_Realloc(*items, item_size * (size_t)grown);
    if (moved == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *items = moved;
    *capacity = grown;
    return 0;
}

static int column_push(Column *column, uint64_t value) {
    if (make_room((void **)&column->values, column->size, &column->capacity, sizeof(uint64_t)) < 0)
        return -1;
    column->values[column->size++] = value;
    return 0;
}

typedef struct {
    Piece *pieces;
    Py_ssize_t size, capacity;
} Strings;

static int strings_push(Strings *strings, Column *lengths, PyObject *item) {
    if (!PyBytes_Check(item)) {
        PyErr_SetString(PyExc_TypeError, "stream fields are bytes");
        return -1;
    }
    if (make_room((void **)&strings->pieces, strings->size, &strings->capacity, sizeof(Piece)) < 0)
        return -1;
    Piece piece = {PyBytes_AS_STRING(item), PyBytes_GET_SIZE(item)};
    strings->pieces[strings->size++] = piece;
    return column_push(lengths, (uint64_t)piece.size);
}

/* seal_node(master_id, names, ids, rows) -> (blob, entries stored); rows[i] None = deleted. */
static PyObject *seal_node(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4 || !PyList_Check(args[1]) || !PyList_Check(args[2]) || !PyList_Check(args[3])
        || PyList_GET_SIZE(args[2]) != PyList_GET_SIZE(args[3])) {
        PyErr_SetString(PyExc_TypeError,
                        "seal_node(master_id: int, names: list, ids: list, rows: list)");
        return NULL;
    }
    uint64_t master_ms, master_seq;
    if (split_id(args[0], &master_ms, &master_seq) < 0)
        return NULL;
    PyObject *names = args[1], *ids = args[2], *rows = args[3], *result = NULL;
    Py_ssize_t nmaster = PyList_GET_SIZE(names), nentries = PyList_GET_SIZE(ids);
    Column ms_deltas = {NULL, 0, 0}, seqs = {NULL, 0, 0}, odd = {NULL, 0, 0};
    Column odd_nfields = {NULL, 0, 0}, lengths = {NULL, 0, 0};
    Strings strings = {NULL, 0, 0};
    Py_ssize_t count = 0;

    for (Py_ssize_t k = 0; k < nmaster; k++)
        if (strings_push(&strings, &lengths, PyList_GET_ITEM(names, k)) < 0)
            goto done;
    for (Py_ssize_t i = 0; i < nentries; i++) {
        PyObject *row = PyList_GET_ITEM(rows, i);
        if (row == Py_None)
            continue;  /* deleted: not stored */
        if (!PyList_Check(row) && !PyTuple_Check(row)) {
            PyErr_SetString(PyExc_TypeError, "stream rows are lists");
            goto done;
        }
        uint64_t ms, seq;
        if (split_id(PyList_GET_ITEM(ids, i), &ms, &seq) < 0)
            goto done;
        uint64_t delta = ms - master_ms;
        if (column_push(&ms_deltas, delta) < 0 || column_push(&seqs, delta ? seq : seq - master_seq) < 0)
            goto done;
        PyObject *const *items = PySequence_Fast_ITEMS(row);
        Py_ssize_t nitems = PySequence_Fast_GET_SIZE(row);
        if (same_fields(items, nitems, PySequence_Fast_ITEMS(names), nmaster)) {
            for (Py_ssize_t k = 1; k < nitems; k += 2)  /* the master's names: values only */
                if (strings_push(&strings, &lengths, items[k]) < 0)
                    goto done;
        } else {
            if (column_push(&odd, (uint64_t)count) < 0
                || column_push(&odd_nfields, (uint64_t)(nitems / 2)) < 0)
                goto done;
            for (Py_ssize_t k = 0; k < nitems; k++)
                if (strings_push(&strings, &lengths, items[k]) < 0)
                    goto done;
        }
        count++;
    }

    /* The odd column holds the indexes, then the field counts. */
    for (Py_ssize_t j = 0; j < odd_nfields.size; j++)
        if (column_push(&odd, odd_nfields.values[j]) < 0)
            goto done;
    int ms_width, seq_width, odd_width, len_width;
    char codes[4] = {
        column_code(top_of(ms_deltas.values, ms_deltas.size), &ms_width),
        column_code(top_of(seqs.values, seqs.size), &seq_width),
        column_code(top_of(odd.values, odd.size), &odd_width),
        column_code(top_of(lengths.values, lengths.size), &len_width),
    };
    Py_ssize_t size = HEADER_SIZE + count * (ms_width + seq_width) + odd.size * odd_width
                      + strings.size * len_width;
    for (Py_ssize_t s = 0; s < strings.size; s++)
        size += strings.pieces[s].size;
    PyObject *blob = PyBytes_FromStringAndSize(NULL, size);
    if (blob == NULL)
        goto done;
    char *out = PyBytes_AS_STRING(blob);
    uint32_t header[4] = {(uint32_t)count, (uint32_t)nmaster, (uint32_t)strings.size,
                          (uint32_t)odd_nfields.size};
    memcpy(out, header, 16);  /* "<IIII": little-endian, as on every platform built here */
    memcpy(out + 16, codes, 4);
    out += HEADER_SIZE;
    out = put_column(out, ms_deltas.values, ms_deltas.size, ms_width);
    out = put_column(out, seqs.values, seqs.size, seq_width);
    out = put_column(out, odd.values, odd.size, odd_width);
    out = put_column(out, lengths.values, lengths.size, len_width);
    for (Py_ssize_t s = 0; s < strings.size; s++) {
        memcpy(out, strings.pieces[s].data, (size_t)strings.pieces[s].size);
        out += strings.pieces[s].size;
    }
    result = Py_BuildValue("(Nn)", blob, count);

done:
    PyMem_Free(ms_deltas.values);
    PyMem_Free(seqs.values);
    PyMem_Free(odd.values);
    PyMem_Free(odd_nfields.values);
    PyMem_Free(lengths.values);
    PyMem_Free(strings.pieces);
    return result;
}

static PyMethodDef methods[] = {
    {"seal_node", (PyCFunction)(void (*)(void))seal_node, METH_FASTCALL,
     "An open stream node's entries as a sealed blob: (blob, entries stored)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_node_seal", "A stream's open node sealed into its blob.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__node_seal(void) {
    return PyModule_Create(&module);
}
