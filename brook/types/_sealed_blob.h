/* Reading a sealed stream node's blob: its header and columns, for the hand-written C that
 * walks one (brook.types._resp_pack, brook.types._node_listpack).
 *
 * The layout is documented in brook/types/stream_node.py. Columns are unsigned, in native byte
 * order, 1, 2, 4 or 8 bytes wide by their array typecode.
 */
#ifndef BROOK_SEALED_BLOB_H
#define BROOK_SEALED_BLOB_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#define SEALED_HEADER_SIZE 20

typedef struct {
    Py_ssize_t count, nmaster, nstr, nodd;
    int ms_width, seq_width, odd_width, len_width;
    const unsigned char *ms_column, *seq_column, *odd_column, *len_column;
    const unsigned char *strings, *end;  /* the concatenated strings, and the blob's end */
} SealedBlob;

static int sealed_width(char code) {
    switch (code) {
    case 'B': return 1;
    case 'H': return (int)sizeof(unsigned short);
    case 'I': return (int)sizeof(unsigned int);
    case 'L': return (int)sizeof(unsigned long);
    case 'Q': return (int)sizeof(unsigned long long);
    default: return 0;
    }
}

static inline uint64_t column_value(const unsigned char *column, int width, Py_ssize_t i) {
    switch (width) {
    case 1: return column[i];
    case 2: { uint16_t v; memcpy(&v, column + 2 * i, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, column + 4 * i, 4); return v; }
    default: { uint64_t v; memcpy(&v, column + 8 * i, 8); return v; }
    }
}

static uint32_t sealed_header_u32(const unsigned char *blob, int index) {
    uint32_t v;
    memcpy(&v, blob + 4 * index, 4);  /* "<I": little-endian, as on every platform built here */
    return v;
}

/* The blob's header and where its columns start; -1 with ValueError when they do not fit. */
static int sealed_blob_open(SealedBlob *node, const unsigned char *blob, Py_ssize_t size) {
    if (size < SEALED_HEADER_SIZE)
        goto malformed;
    node->count = sealed_header_u32(blob, 0);
    node->nmaster = sealed_header_u32(blob, 1);
    node->nstr = sealed_header_u32(blob, 2);
    node->nodd = sealed_header_u32(blob, 3);
    node->ms_width = sealed_width((char)blob[16]);
    node->seq_width = sealed_width((char)blob[17]);
    node->odd_width = sealed_width((char)blob[18]);
    node->len_width = sealed_width((char)blob[19]);
    if (!node->ms_width || !node->seq_width || !node->odd_width || !node->len_width)
        goto malformed;
    node->end = blob + size;
    /* (each column checked against the bytes left before its end is computed) */
    Py_ssize_t left = size - SEALED_HEADER_SIZE;
    Py_ssize_t columns[4] = {node->count * node->ms_width, node->count * node->seq_width,
                             2 * node->nodd * node->odd_width, node->nstr * node->len_width};
    const unsigned char *at = blob + SEALED_HEADER_SIZE;
    const unsigned char **starts[4] = {&node->ms_column, &node->seq_column, &node->odd_column,
                                       &node->len_column};
    for (int k = 0; k < 4; k++) {
        if (columns[k] > left)
            goto malformed;
        *starts[k] = at;
        at += columns[k];
        left -= columns[k];
    }
    node->strings = at;
    if (node->nmaster > node->nstr || node->nodd > node->count)
        goto malformed;
    return 0;
malformed:
    PyErr_SetString(PyExc_ValueError, "malformed stream node");
    return -1;
}

#endif
