/* A sealed stream node as Redis's stream listpack, in one pass over its blob.
 *
 * Hand-written part of the compiled core (docs/performance.md, "RDB files"): every stream an
 * RDB file, a full synchronisation or a DUMP holds goes through it, node by node. In compiled
 * Python, decoding the blob into rows and encoding them again as a listpack took 3.5 µs an
 * entry, 25 times Redis's SAVE. The Python twin is brook.rdb.encode's decode-and-encode path
 * (stream_node.decode, then encode.stream_listpack): the pure build runs it, and the tests
 * compare the two.
 *
 * The listpack is Redis's stream node (t_stream.c): the master entry (count, deleted, the
 * field names, a 0), then each entry as flags, ms and seq deltas from the master ID, its fields
 * (values only when its names are the master's: SAMEFIELDS), and its element count. Only live
 * entries are written, so "deleted" is 0 and the master is the first live entry, as a node
 * Redis compacted would be. Strings that spell a 64-bit integer are stored as integers, as
 * lpAppend stores them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_buffer.h"
#include "_listpack.h"
#include "_sealed_blob.h"

#define FLAG_NONE 0
#define FLAG_SAMEFIELDS 2

/* An integer entry; -1 with MemoryError. */
static int put_int(Buffer *buf, int64_t value) {
    if (buffer_reserve(buf, LP_MAX_INT_ELEMENT) < 0)
        return -1;
    buf->size += lp_put_int(buffer_end(buf), value);
    return 0;
}

/* A string entry (an integer one when it spells an integer, as lpAppend stores it); -1 with
 * MemoryError. */
static int put_string(Buffer *buf, const unsigned char *text, Py_ssize_t size) {
    int64_t value;
    if (lp_string_int(text, size, &value))
        return put_int(buf, value);
    if (buffer_reserve(buf, size + 10) < 0)
        return -1;
    unsigned char *out = buffer_end(buf);
    int head = lp_put_string_head(out, size);
    memcpy(out + head, text, (size_t)size);
    buf->size += head + size;
    buf->size += lp_put_backlen(buffer_end(buf), (uint64_t)(head + size));
    return 0;
}

/* Where one stored entry's strings are: its first string's index in the length column and
 * byte offset in the strings, and its field count (-1: the master's names, values only). */
typedef struct {
    Py_ssize_t first, offset, nfields;
} Place;

typedef struct {
    const unsigned char *data;
    Py_ssize_t size;
} Text;

/* The field names of entry ``place`` into ``names`` (room for its field count). */
static void names_of(const SealedBlob *node, const Place *place, const Text *master_names,
                     Text *names) {
    if (place->nfields < 0) {
        memcpy(names, master_names, sizeof(*names) * (size_t)node->nmaster);
        return;
    }
    const unsigned char *at = node->strings + place->offset;
    for (Py_ssize_t k = 0; k < 2 * place->nfields; k++) {
        Py_ssize_t size = (Py_ssize_t)column_value(node->len_column, node->len_width,
                                                   place->first + k);
        if (k % 2 == 0)
            names[k / 2] = (Text){at, size};
        at += size;
    }
}

static int same_names(const Text *a, const Text *b, Py_ssize_t n) {
    for (Py_ssize_t k = 0; k < n; k++)
        if (a[k].size != b[k].size || memcmp(a[k].data, b[k].data, (size_t)a[k].size) != 0)
            return 0;
    return 1;
}

static int is_dead(const unsigned char *dead, Py_ssize_t dead_size, Py_ssize_t i) {
    return i / 8 < dead_size && (dead[i / 8] >> (i % 8)) & 1;
}

/* node_listpack(blob, master_ms, master_seq, dead) -> (ms, seq, listpack) of the node's live
 * entries, the first live entry's ID as the master; None when no entry is live. ``dead`` is
 * the node's deleted-entries bitmask as little-endian bytes (b"": none). */
static PyObject *node_listpack(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4 || !PyBytes_CheckExact(args[0]) || !PyBytes_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "node_listpack(blob: bytes, master_ms: int, "
                                         "master_seq: int, dead: bytes)");
        return NULL;
    }
    const unsigned char *blob = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    uint64_t master_ms = PyLong_AsUnsignedLongLong(args[1]);
    if (master_ms == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    uint64_t master_seq = PyLong_AsUnsignedLongLong(args[2]);
    if (master_seq == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    const unsigned char *dead = (const unsigned char *)PyBytes_AS_STRING(args[3]);
    Py_ssize_t dead_size = PyBytes_GET_SIZE(args[3]);
    SealedBlob node;
    if (sealed_blob_open(&node, blob, PyBytes_GET_SIZE(args[0])) < 0)
        return NULL;

    PyObject *result = NULL;
    Buffer buf = {NULL, 0, 0};
    Place *places = PyMem_Malloc(sizeof(Place) * (size_t)(node.count + 1));
    Text *master_names = PyMem_Malloc(sizeof(Text) * (size_t)(node.nmaster + 1));
    Text *first_names = NULL, *names = NULL;
    if (places == NULL || master_names == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* Where every entry's strings are, checked against the blob's bounds. */
    const unsigned char *at = node.strings;
    Py_ssize_t next = 0, odd = 0, widest = node.nmaster;
    for (Py_ssize_t k = 0; k < node.nmaster; k++) {
        Py_ssize_t size = (Py_ssize_t)column_value(node.len_column, node.len_width, next++);
        if (size > node.end - at)
            goto malformed;
        master_names[k] = (Text){at, size};
        at += size;
    }
    for (Py_ssize_t i = 0; i < node.count; i++) {
        Place *place = &places[i];
        place->first = next;
        place->offset = at - node.strings;
        place->nfields = -1;
        Py_ssize_t nstrings = node.nmaster;
        if (odd < node.nodd
                && (Py_ssize_t)column_value(node.odd_column, node.odd_width, odd) == i) {
            place->nfields = (Py_ssize_t)column_value(node.odd_column, node.odd_width,
                                                      node.nodd + odd);
            odd++;
            nstrings = 2 * place->nfields;
            if (place->nfields > widest)
                widest = place->nfields;
        }
        if (nstrings > node.nstr - next)
            goto malformed;
        for (Py_ssize_t k = 0; k < nstrings; k++) {
            Py_ssize_t size = (Py_ssize_t)column_value(node.len_column, node.len_width, next++);
            if (size > node.end - at)
                goto malformed;
            at += size;
        }
    }

    Py_ssize_t first = 0;
    while (first < node.count && is_dead(dead, dead_size, first))
        first++;
    if (first == node.count) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    first_names = PyMem_Malloc(sizeof(Text) * (size_t)(widest + 1));
    names = PyMem_Malloc(sizeof(Text) * (size_t)(widest + 1));
    if (first_names == NULL || names == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* The IDs: ms = master ms + delta; seq as stored, or plus the master's when delta is 0. */
#define ENTRY_MS(i) (master_ms + column_value(node.ms_column, node.ms_width, (i)))
#define ENTRY_SEQ(i) (column_value(node.seq_column, node.seq_width, (i)) \
                      + (column_value(node.ms_column, node.ms_width, (i)) ? 0 : master_seq))
    uint64_t lp_ms = ENTRY_MS(first), lp_seq = ENTRY_SEQ(first);
    Py_ssize_t nnames = places[first].nfields < 0 ? node.nmaster : places[first].nfields;
    names_of(&node, &places[first], master_names, first_names);
    Py_ssize_t live = 0;
    for (Py_ssize_t i = first; i < node.count; i++)
        live += !is_dead(dead, dead_size, i);

    Py_ssize_t estimate = LP_HEADER_SIZE + (node.end - node.strings) + 64 * (node.count + 1);
    if (buffer_reserve(&buf, estimate) < 0)
        goto done;
    buf.size = LP_HEADER_SIZE;
    Py_ssize_t elements = 4 + nnames;
    if (put_int(&buf, live) < 0 || put_int(&buf, 0) < 0 || put_int(&buf, nnames) < 0)
        goto done;
    for (Py_ssize_t k = 0; k < nnames; k++)
        if (put_string(&buf, first_names[k].data, first_names[k].size) < 0)
            goto done;
    if (put_int(&buf, 0) < 0)
        goto done;
    for (Py_ssize_t i = first; i < node.count; i++) {
        if (is_dead(dead, dead_size, i))
            continue;
        const Place *place = &places[i];
        Py_ssize_t nfields = place->nfields < 0 ? node.nmaster : place->nfields;
        names_of(&node, place, master_names, names);
        int same = nfields == nnames && same_names(names, first_names, nnames);
        int64_t ms_delta = (int64_t)(ENTRY_MS(i) - lp_ms);
        int64_t seq_delta = (int64_t)(ENTRY_SEQ(i) - lp_seq);
        if (put_int(&buf, same ? FLAG_SAMEFIELDS : FLAG_NONE) < 0 || put_int(&buf, ms_delta) < 0
                || put_int(&buf, seq_delta) < 0 || (!same && put_int(&buf, nfields) < 0))
            goto done;
        /* The entry's strings: values only when the master's names are its own. */
        const unsigned char *text = node.strings + place->offset;
        for (Py_ssize_t k = 0; k < (place->nfields < 0 ? nfields : 2 * nfields); k++) {
            Py_ssize_t size = (Py_ssize_t)column_value(node.len_column, node.len_width,
                                                       place->first + k);
            if (place->nfields < 0) {  /* values only in the blob */
                if (!same && put_string(&buf, names[k].data, names[k].size) < 0)
                    goto done;
                if (put_string(&buf, text, size) < 0)
                    goto done;
            } else if (!same || k % 2 == 1) {
                if (put_string(&buf, text, size) < 0)
                    goto done;
            }
            text += size;
        }
        if (put_int(&buf, same ? nnames + 3 : 2 * nfields + 4) < 0)
            goto done;
        elements += same ? nnames + 4 : 2 * nfields + 5;
    }
#undef ENTRY_MS
#undef ENTRY_SEQ
    if (buffer_reserve(&buf, 1) < 0)
        goto done;
    *buffer_end(&buf) = LP_EOF;
    buf.size++;
    uint32_t total = (uint32_t)buf.size;
    uint16_t stored_count = elements < LP_COUNT_UNKNOWN ? (uint16_t)elements : LP_COUNT_UNKNOWN;
    memcpy(buf.data, &total, 4);
    memcpy(buf.data + 4, &stored_count, 2);
    PyObject *listpack = PyBytes_FromStringAndSize(buf.data, buf.size);
    if (listpack == NULL)
        goto done;
    result = Py_BuildValue("(KKN)", (unsigned long long)lp_ms, (unsigned long long)lp_seq,
                           listpack);
    goto done;

malformed:
    PyErr_SetString(PyExc_ValueError, "malformed stream node");
done:
    PyMem_Free(places);
    PyMem_Free(master_names);
    PyMem_Free(first_names);
    PyMem_Free(names);
    PyMem_Free(buf.data);
    return result;
}

static PyMethodDef methods[] = {
    {"node_listpack", (PyCFunction)(void (*)(void))node_listpack, METH_FASTCALL,
     "A sealed stream node's live entries as Redis's stream listpack."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_node_listpack", NULL, -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__node_listpack(void) {
    return PyModule_Create(&module);
}
