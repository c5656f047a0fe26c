/* A growing byte buffer on Python's allocator, for the hand-written C that builds one reply
 * or one encoded value in a pass. */
#ifndef BROOK_BUFFER_H
#define BROOK_BUFFER_H

#include <Python.h>

typedef struct {
    char *data;
    Py_ssize_t size;
    Py_ssize_t capacity;
} Buffer;

/* Room for ``more`` bytes past the end; -1 with MemoryError. */
static int buffer_reserve(Buffer *buf, Py_ssize_t more) {
    if (buf->size + more <= buf->capacity)
        return 0;
    Py_ssize_t capacity = buf->capacity * 2;
    if (capacity < buf->size + more)
        capacity = buf->size + more;
    char *data = PyMem_Realloc(buf->data, (size_t)capacity);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    buf->data = data;
    buf->capacity = capacity;
    return 0;
}

/* Where the next byte goes, as the unsigned bytes binary encoders write. */
static inline unsigned char *buffer_end(Buffer *buf) {
    return (unsigned char *)buf->data + buf->size;
}

#endif
