/* One of Redis's stream listpacks (a node of an RDB stream) as Brook's IDs and rows.
 *
 * Hand-written part of the compiled core (docs/performance.md, "RDB files"): every stream a
 * Redis file, a full synchronisation from a Redis master or a RESTORE brings goes through it,
 * node by node. In compiled Python it took 1.75 µs an entry, 20 times Redis's load.
 * brook.rdb.decode._stream_node is the same function in Python: the pure build runs it,
 * and the tests compare the two, errors included (the same checks, in the same order, with the
 * same texts, raised here as ValueError).
 *
 * First the listpack's elements (brook.rdb.containers.listpack_items' checks), then the stream
 * node in them (t_stream.c): the master entry (live count, deleted count, field names, a 0),
 * then each entry as flags, ms and seq deltas from the node's key, its fields (values only
 * with SAMEFIELDS), and its element count. Deleted entries are skipped, counted.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../types/_decimal.h"
#include "../types/_ids.h"
#include "../types/_listpack.h"

#define FLAG_DELETED 1
#define FLAG_SAMEFIELDS 2

typedef struct {
    int is_int;
    int64_t value;
    const unsigned char *data;
    Py_ssize_t size;
} Element;

static PyObject *refuse(const char *text) {
    PyErr_SetString(PyExc_ValueError, text);
    return NULL;
}

/* Every element of the listpack into ``items`` (room for ``capacity``); their number, or -1
 * with ValueError. */
static Py_ssize_t listpack_elements(const unsigned char *blob, Py_ssize_t end, Element **items) {
    if (end < 7) {
        refuse("listpack too short");
        return -1;
    }
    uint32_t total;
    uint16_t count;
    memcpy(&total, blob, 4);
    memcpy(&count, blob + 4, 2);
    if (total != (uint64_t)end || blob[end - 1] != 0xFF) {
        refuse("listpack size disagrees");
        return -1;
    }
    Py_ssize_t capacity = (end - LP_HEADER_SIZE) / 2 + 1;  /* an element takes 2 bytes or more */
    Element *found = PyMem_Malloc(sizeof(Element) * (size_t)capacity);
    if (found == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t n = 0, pos = LP_HEADER_SIZE, last = end - 1;
    const char *error = NULL;
    while (pos < last) {
        unsigned char first = blob[pos];
        Element *item = &found[n];
        item->is_int = 0;
        if (first < 0x80) {
            item->is_int = 1;
            item->value = first;
            pos += 2;
        } else if (first < 0xC0) {  /* 6-bit string length */
            Py_ssize_t size = first & 0x3F, start = pos + 1;
            item->data = blob + start;
            item->size = size;
            pos = start + size + lp_backlen_size(size + 1);
        } else if (first < 0xE0) {  /* 13-bit integer */
            if (pos + 1 >= last) {
                error = "listpack entry past the end";
                break;
            }
            int64_t value = (int64_t)(first & 0x1F) << 8 | blob[pos + 1];
            item->is_int = 1;
            item->value = value >= 4096 ? value - 8192 : value;
            pos += 3;
        } else if (first < 0xF0) {  /* 12-bit string length */
            if (pos + 1 >= last) {
                error = "listpack entry past the end";
                break;
            }
            Py_ssize_t size = (Py_ssize_t)(first & 0x0F) << 8 | blob[pos + 1], start = pos + 2;
            item->data = blob + start;
            item->size = size;
            pos = start + size + lp_backlen_size(size + 2);
        } else if (first == 0xF0) {  /* 32-bit string length */
            if (pos + 5 > last) {
                error = "listpack entry past the end";
                break;
            }
            uint32_t size;
            memcpy(&size, blob + pos + 1, 4);
            Py_ssize_t start = pos + 5;
            item->data = blob + start;
            item->size = (Py_ssize_t)size;
            pos = start + (Py_ssize_t)size + lp_backlen_size((Py_ssize_t)size + 5);
        } else if (first <= 0xF4) {
            static const int widths[] = {2, 3, 4, 8};
            int width = widths[first - 0xF1];
            Py_ssize_t start = pos + 1;
            if (start + width > last) {
                error = "listpack entry past the end";
                break;
            }
            uint64_t bits = 0;
            for (int k = 0; k < width; k++)
                bits |= (uint64_t)blob[start + k] << (8 * k);
            if (width < 8 && bits >> (8 * width - 1))  /* sign-extend */
                bits |= ~(uint64_t)0 << (8 * width);
            item->is_int = 1;
            item->value = (int64_t)bits;
            pos = start + width + 1;
        } else {
            error = "bad listpack encoding";
            break;
        }
        n++;
        if (pos > last) {
            error = "listpack entry past the end";
            break;
        }
    }
    if (error == NULL && pos != last)
        error = "listpack entry past the end";
    if (error == NULL && count != LP_COUNT_UNKNOWN && count != n)
        error = "listpack count disagrees";
    if (error != NULL) {
        PyMem_Free(found);
        refuse(error);
        return -1;
    }
    *items = found;
    return n;
}

/* An element as a string: its bytes, or an integer's decimal text. */
static PyObject *text_of(const Element *item) {
    if (!item->is_int)
        return PyBytes_FromStringAndSize((const char *)item->data, item->size);
    char digits[24];
    int negative = item->value < 0;
    digits[0] = '-';
    uint64_t magnitude = negative ? 0 - (uint64_t)item->value : (uint64_t)item->value;
    int size = negative + write_u64(digits + negative, magnitude);
    return PyBytes_FromStringAndSize(digits, size);
}

static int is_int(const Element *item, int64_t value) {
    return item->is_int && item->value == value;
}

/* stream_rows(blob, master, previous) -> (ids, rows, last): the node's live entries and the
 * last ID it holds, deleted or not; ``master`` is the node's key, ``previous`` the ID every
 * entry must exceed (-1: none). */
static PyObject *stream_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3 || !PyBytes_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "stream_rows(blob: bytes, master: int, previous: int)");
        return NULL;
    }
    uint64_t master_ms, master_seq, previous_ms = 0, previous_seq = 0;
    if (split_id(args[1], &master_ms, &master_seq) < 0)
        return NULL;
    int overflow = 0;
    long long previous_small = PyLong_AsLongLongAndOverflow(args[2], &overflow);
    if (previous_small == -1 && PyErr_Occurred())
        return NULL;
    int has_previous = overflow != 0 || previous_small >= 0;
    if (has_previous && split_id(args[2], &previous_ms, &previous_seq) < 0)
        return NULL;
    unsigned __int128 previous = (unsigned __int128)previous_ms << 64 | previous_seq;

    Element *items = NULL;
    Py_ssize_t end = listpack_elements((const unsigned char *)PyBytes_AS_STRING(args[0]),
                                       PyBytes_GET_SIZE(args[0]), &items);
    if (end < 0)
        return NULL;
    PyObject *result = NULL, *ids = NULL, *rows = NULL, *names = NULL, *last = NULL;
    const char *error = NULL;
    if (end == 0) {
        error = "empty listpack inside stream";
        goto done;
    }
    if (!items[0].is_int || !items[1].is_int || !items[2].is_int || items[2].value < 0
            || 3 + items[2].value >= end) {
        error = "bad stream master entry";
        goto done;
    }
    int64_t live = items[0].value, deleted = items[1].value;
    Py_ssize_t nnames = (Py_ssize_t)items[2].value;
    names = PyTuple_New(nnames);
    if (names == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < nnames; k++) {
        PyObject *name = text_of(&items[3 + k]);
        if (name == NULL)
            goto done;
        PyTuple_SET_ITEM(names, k, name);
    }
    if (!is_int(&items[3 + nnames], 0)) {
        error = "bad stream master entry";
        goto done;
    }
    ids = PyList_New(0);
    rows = PyList_New(0);
    if (ids == NULL || rows == NULL)
        goto done;
    Py_ssize_t pos = 4 + nnames;
    int64_t seen_deleted = 0;
    while (pos < end) {
        if (pos + 3 > end) {
            error = "stream entry past the end";
            goto done;
        }
        const Element *flags = &items[pos], *ms_delta = &items[pos + 1];
        const Element *seq_delta = &items[pos + 2];
        if (!flags->is_int || !ms_delta->is_int || !seq_delta->is_int) {
            error = "bad stream entry header";
            goto done;
        }
        pos += 3;
        int same = (flags->value & FLAG_SAMEFIELDS) != 0;
        Py_ssize_t nfields = nnames, stop;
        int64_t counted;
        if (same) {
            stop = pos + nnames;
            counted = nnames + 3;
        } else {
            if (pos >= end || !items[pos].is_int || items[pos].value <= 0) {
                error = "bad stream entry field count";
                goto done;
            }
            if (items[pos].value > end) {  /* (more fields than the listpack has elements) */
                error = "bad stream entry length";
                goto done;
            }
            nfields = (Py_ssize_t)items[pos].value;
            pos += 1;
            stop = pos + 2 * nfields;
            counted = 2 * (int64_t)nfields + 4;
        }
        if (stop >= end || !is_int(&items[stop], counted) || nfields == 0) {
            error = "bad stream entry length";
            goto done;
        }
        __int128 ms = (__int128)master_ms + ms_delta->value;
        __int128 seq = (__int128)master_seq + seq_delta->value;
        if (ms < 0 || ms > (__int128)UINT64_MAX || seq < 0 || seq > (__int128)UINT64_MAX) {
            error = "stream entry IDs out of order";
            goto done;
        }
        unsigned __int128 entry_id = (unsigned __int128)ms << 64 | (uint64_t)seq;
        if (has_previous && entry_id <= previous) {
            error = "stream entry IDs out of order";
            goto done;
        }
        previous = entry_id;
        has_previous = 1;
        if (flags->value & FLAG_DELETED) {
            seen_deleted++;
            pos = stop + 1;
            continue;
        }
        PyObject *row = PyList_New(2 * nfields);
        if (row == NULL)
            goto done;
        int failed = PyList_Append(rows, row) < 0;
        Py_DECREF(row);
        if (failed)
            goto done;
        for (Py_ssize_t k = 0; k < nfields; k++) {
            PyObject *name, *value;
            if (same) {
                name = Py_NewRef(PyTuple_GET_ITEM(names, k));
                value = text_of(&items[pos + k]);
            } else {
                name = text_of(&items[pos + 2 * k]);
                value = name == NULL ? NULL : text_of(&items[pos + 2 * k + 1]);
            }
            if (name == NULL || value == NULL) {
                Py_XDECREF(name);
                goto done;
            }
            PyList_SET_ITEM(row, 2 * k, name);
            PyList_SET_ITEM(row, 2 * k + 1, value);
        }
        PyObject *entry = make_id((uint64_t)ms, (uint64_t)seq);
        if (entry == NULL)
            goto done;
        failed = PyList_Append(ids, entry) < 0;
        Py_DECREF(entry);
        if (failed)
            goto done;
        pos = stop + 1;
    }
    if (PyList_GET_SIZE(ids) != live || seen_deleted != deleted) {
        error = "stream node counts disagree";
        goto done;
    }
    if (has_previous)
        last = make_id((uint64_t)(previous >> 64), (uint64_t)previous);
    else
        last = PyLong_FromLong(-1);
    if (last != NULL)
        result = PyTuple_Pack(3, ids, rows, last);

done:
    if (error != NULL)
        refuse(error);
    PyMem_Free(items);
    Py_XDECREF(names);
    Py_XDECREF(ids);
    Py_XDECREF(rows);
    Py_XDECREF(last);
    return result;
}

static PyMethodDef methods[] = {
    {"stream_rows", (PyCFunction)(void (*)(void))stream_rows, METH_FASTCALL,
     "A Redis stream listpack's live entries as IDs and rows, and its last ID."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_stream_rows", NULL, -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__stream_rows(void) {
    return PyModule_Create(&module);
}
