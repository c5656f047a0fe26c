/* A sealed stream node's entries as RESP, in one pass over its blob.
 *
 * The hand-written part of the compiled core (docs/performance.md, "The third pass"): every
 * XREADGROUP and XRANGE page of a consumer group's worker encodes the nodes it reads, and in
 * compiled Python that costs about 5,000 instructions per entry (a bytes object per piece, the
 * join, the column ints). Here it is one buffer. brook.types.stream_node._pack_sealed_resp is the
 * same function in Python: the pure build runs it, and the tests compare the two.
 *
 * The blob's layout is documented in brook/types/stream_node.py (read through _sealed_blob.h).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_buffer.h"
#include "_decimal.h"
#include "_sealed_blob.h"

/* "$<len>\r\n<data>\r\n"; the caller has reserved len + 26 bytes. */
static void put_bulk(Buffer *buf, const char *data, Py_ssize_t len) {
    char *out = buf->data + buf->size;
    *out++ = '$';
    out += write_u64(out, (uint64_t)len);
    *out++ = '\r';
    *out++ = '\n';
    memcpy(out, data, (size_t)len);
    out += len;
    *out++ = '\r';
    *out++ = '\n';
    buf->size = out - buf->data;
}

static PyObject *malformed(void) {
    PyErr_SetString(PyExc_ValueError, "malformed stream node");
    return NULL;
}

/* pack_node(blob, master_ms, master_seq) -> (body, offsets, ms, seqs): entry i's RESP is
 * body[offsets[i]:offsets[i + 1]], its ID ms[i]-seqs[i]. */
static PyObject *pack_node(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3 || !PyBytes_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "pack_node(blob: bytes, master_ms: int, master_seq: int)");
        return NULL;
    }
    const unsigned char *blob = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    Py_ssize_t blob_size = PyBytes_GET_SIZE(args[0]);
    uint64_t master_ms = PyLong_AsUnsignedLongLong(args[1]);
    if (master_ms == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    uint64_t master_seq = PyLong_AsUnsignedLongLong(args[2]);
    if (master_seq == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    SealedBlob node;
    if (sealed_blob_open(&node, blob, blob_size) < 0)
        return NULL;
    Py_ssize_t count = node.count, nmaster = node.nmaster, nstr = node.nstr, nodd = node.nodd;
    int ms_width = node.ms_width, seq_width = node.seq_width;
    int odd_width = node.odd_width, len_width = node.len_width;
    const unsigned char *ms_column = node.ms_column, *seq_column = node.seq_column;
    const unsigned char *odd_column = node.odd_column, *len_column = node.len_column;
    const unsigned char *strings = node.strings, *end = node.end;

    Buffer buf = {NULL, 0, 0};
    PyObject *offsets = PyList_New(count + 1), *ms_list = PyList_New(count);
    PyObject *seq_list = PyList_New(count), *body = NULL, *last_ms_obj = NULL;
    if (offsets == NULL || ms_list == NULL || seq_list == NULL)
        goto fail;
    PyList_SET_ITEM(offsets, 0, PyLong_FromLong(0));

    /* The master's names, and where each entry's strings start. */
    /* The master's names, each already encoded as a bulk string: name k's is
     * name_bulks[bulk_at[k]:bulk_at[k + 1]]. */
    Py_ssize_t *bulk_at = PyMem_Malloc(sizeof(*bulk_at) * (size_t)(nmaster + 1));
    const unsigned char *at = strings;
    Py_ssize_t names_size = 0;
    for (Py_ssize_t k = 0; k < nmaster; k++)
        names_size += (Py_ssize_t)column_value(len_column, len_width, k) + 25;
    char *name_bulks = PyMem_Malloc((size_t)names_size + 1);
    if (bulk_at == NULL || name_bulks == NULL) {
        PyErr_NoMemory();
        goto fail_names;
    }
    Buffer names_buf = {name_bulks, 0, names_size + 1};
    Py_ssize_t next_len = 0;  /* index in the length column of the next string */
    bulk_at[0] = 0;
    for (Py_ssize_t k = 0; k < nmaster; k++) {
        Py_ssize_t size = (Py_ssize_t)column_value(len_column, len_width, next_len++);
        if (size > end - at)
            goto bad_names;
        put_bulk(&names_buf, (const char *)at, size);
        bulk_at[k + 1] = names_buf.size;
        at += size;
    }
    /* Common entries: header, ID, array header, names and values; the values' bytes are
     * what is left of the blob. Odd entries reserve their own way. */
    if (buffer_reserve(&buf, count * (80 + names_buf.size + 25 * nmaster) + (end - at) + 64) < 0)
        goto fail_names;

    Py_ssize_t odd = 0;  /* the next odd entry's place in the odd columns */
    uint64_t last_ms = 0;
    char ms_text[22];  /* "<ms>-" of the last millisecond seen */
    int ms_size = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t delta = column_value(ms_column, ms_width, i);
        uint64_t seq = column_value(seq_column, seq_width, i);
        uint64_t ms = master_ms + delta;
        if (!delta)
            seq += master_seq;
        if (last_ms_obj == NULL || ms != last_ms) {  /* one int and one text per millisecond */
            Py_XDECREF(last_ms_obj);
            last_ms_obj = PyLong_FromUnsignedLongLong(ms);
            if (last_ms_obj == NULL)
                goto fail_names;
            last_ms = ms;
            ms_size = write_u64(ms_text, ms);
            ms_text[ms_size++] = '-';
        }
        Py_INCREF(last_ms_obj);
        PyList_SET_ITEM(ms_list, i, last_ms_obj);
        PyObject *seq_obj = PyLong_FromUnsignedLongLong(seq);
        if (seq_obj == NULL)
            goto fail_names;
        PyList_SET_ITEM(seq_list, i, seq_obj);

        int is_odd = odd < nodd && (Py_ssize_t)column_value(odd_column, odd_width, odd) == i;
        Py_ssize_t nfields = nmaster;
        if (is_odd) {
            nfields = (Py_ssize_t)column_value(odd_column, odd_width, nodd + odd);
            odd++;
        }
        /* "*2\r\n$<n>\r\n<ms>-<seq>\r\n*<2 nfields>\r\n" */
        if (buffer_reserve(&buf, 80) < 0)
            goto fail_names;
        char id_text[41];
        memcpy(id_text, ms_text, (size_t)ms_size);
        int id_size = ms_size + write_u64(id_text + ms_size, seq);
        char *out = buf.data + buf.size;
        memcpy(out, "*2\r\n", 4);
        buf.size += 4;
        put_bulk(&buf, id_text, id_size);
        out = buf.data + buf.size;
        *out++ = '*';
        out += write_u64(out, (uint64_t)(2 * nfields));
        *out++ = '\r';
        *out++ = '\n';
        buf.size = out - buf.data;
        for (Py_ssize_t k = 0; k < nfields; k++) {
            if (next_len >= nstr - (is_odd ? 1 : 0))
                goto bad_names;
            Py_ssize_t name_size = 0;
            if (is_odd) {
                name_size = (Py_ssize_t)column_value(len_column, len_width, next_len++);
                if (name_size > end - at)
                    goto bad_names;
            }
            Py_ssize_t value_size = (Py_ssize_t)column_value(len_column, len_width, next_len++);
            if (value_size > end - at - name_size)
                goto bad_names;
            /* the name's bulk: the master's, encoded once, or the entry's own */
            Py_ssize_t name_room = is_odd ? name_size + 26 : bulk_at[k + 1] - bulk_at[k];
            if (buffer_reserve(&buf, name_room + value_size + 26) < 0)
                goto fail_names;
            if (is_odd) {
                put_bulk(&buf, (const char *)at, name_size);
                at += name_size;
            } else {
                memcpy(buf.data + buf.size, name_bulks + bulk_at[k], (size_t)name_room);
                buf.size += name_room;
            }
            put_bulk(&buf, (const char *)at, value_size);
            at += value_size;
        }
        PyObject *offset = PyLong_FromSsize_t(buf.size);
        if (offset == NULL)
            goto fail_names;
        PyList_SET_ITEM(offsets, i + 1, offset);
    }
    PyMem_Free(bulk_at);
    PyMem_Free(name_bulks);
    Py_XDECREF(last_ms_obj);
    body = PyBytes_FromStringAndSize(buf.data, buf.size);
    PyMem_Free(buf.data);
    if (body == NULL)
        goto fail_lists;
    PyObject *result = PyTuple_Pack(4, body, offsets, ms_list, seq_list);
    Py_DECREF(body);
    Py_DECREF(offsets);
    Py_DECREF(ms_list);
    Py_DECREF(seq_list);
    return result;

bad_names:
    malformed();
fail_names:
    PyMem_Free(bulk_at);
    PyMem_Free(name_bulks);
fail:
    Py_XDECREF(last_ms_obj);
    PyMem_Free(buf.data);
fail_lists:
    Py_XDECREF(offsets);
    Py_XDECREF(ms_list);
    Py_XDECREF(seq_list);
    return NULL;
}

static PyMethodDef methods[] = {
    {"pack_node", (PyCFunction)(void (*)(void))pack_node, METH_FASTCALL,
     "A sealed stream node's entries as RESP: (body, offsets, ms, seqs)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_resp_pack", "A sealed stream node's entries as RESP.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__resp_pack(void) {
    return PyModule_Create(&module);
}
