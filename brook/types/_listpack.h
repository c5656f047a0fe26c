/* Redis's listpack element encoding (listpack.c), for the hand-written C that writes, sizes or
 * reads listpacks: one place for the integer and string encodings, the back length and the
 * rule that decides when a string is stored as an integer. brook.rdb.containers and
 * brook.types.lpsize are the Python side. */
#ifndef BROOK_LISTPACK_H
#define BROOK_LISTPACK_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#define LP_HEADER_SIZE 6
#define LP_COUNT_UNKNOWN 65535
#define LP_EOF 0xFF
#define LP_MAX_INT_ELEMENT 10  /* bytes of the widest integer element, back length included */

/* The integer a string spells exactly (lpStringToInt64, Redis's string2ll): at most 20
 * characters, an optional '-', no '+', digits without a leading zero ("0" itself), within
 * 64 bits. 1 and *value, or 0. */
static inline int lp_string_int(const unsigned char *text, Py_ssize_t size, int64_t *value) {
    if (size == 0 || size > 20)
        return 0;
    int negative = text[0] == '-';
    const unsigned char *digits = text + negative;
    Py_ssize_t ndigits = size - negative;
    if (ndigits == 0 || (ndigits > 1 && digits[0] == '0') || (negative && digits[0] == '0'))
        return 0;
    uint64_t magnitude = 0;
    for (Py_ssize_t i = 0; i < ndigits; i++) {
        unsigned digit = (unsigned)digits[i] - '0';
        if (digit > 9 || magnitude > (UINT64_MAX - digit) / 10)
            return 0;
        magnitude = magnitude * 10 + digit;
    }
    if (negative) {
        if (magnitude > (uint64_t)INT64_MAX + 1)
            return 0;
        *value = (int64_t)(0 - magnitude);
    } else {
        if (magnitude > (uint64_t)INT64_MAX)
            return 0;
        *value = (int64_t)magnitude;
    }
    return 1;
}

/* Bytes of the back length of an element whose encoding and data take ``size`` bytes. */
static inline int lp_backlen_size(uint64_t size) {
    return size <= 127 ? 1 : size < 16383 ? 2 : size < 2097151 ? 3 : size < 268435455 ? 4 : 5;
}

/* lpEncodeBacklen at ``out``; the bytes written. */
static inline int lp_put_backlen(unsigned char *out, uint64_t size) {
    int n = lp_backlen_size(size);
    out[n - 1] = (unsigned char)(size & 127);
    for (int k = n - 2; k >= 0; k--) {
        size >>= 7;
        out[k] = (unsigned char)(size & 127);
    }
    for (int k = 1; k < n; k++)  /* every byte after the first has the high bit */
        out[k] |= 128;
    return n;
}

/* Bytes of an integer element (encoding, value and back length). */
static inline int lp_int_size(int64_t value) {
    if (value >= 0 && value <= 127)
        return 2;
    if (value >= -4096 && value <= 4095)
        return 3;
    if (value >= -32768 && value <= 32767)
        return 4;
    if (value >= -8388608 && value <= 8388607)
        return 5;
    if (value >= -2147483648LL && value <= 2147483647LL)
        return 6;
    return 10;
}

/* An integer element in the narrowest encoding at ``out`` (room for LP_MAX_INT_ELEMENT); the
 * bytes written. */
static inline int lp_put_int(unsigned char *out, int64_t value) {
    if (value >= 0 && value <= 127) {
        out[0] = (unsigned char)value;
        out[1] = 1;
        return 2;
    }
    if (value >= -4096 && value <= 4095) {
        uint64_t bits = (uint64_t)value & 0x1FFF;
        out[0] = (unsigned char)(0xC0 | bits >> 8);
        out[1] = (unsigned char)(bits & 0xFF);
        out[2] = 2;
        return 3;
    }
    int width = lp_int_size(value) - 2;  /* 2, 3, 4 or 8 bytes of value */
    out[0] = (unsigned char)(width == 8 ? 0xF4 : 0xF1 + width - 2);
    uint64_t bits = (uint64_t)value;
    for (int k = 0; k < width; k++)
        out[1 + k] = (unsigned char)(bits >> (8 * k));
    out[1 + width] = (unsigned char)(width + 1);
    return width + 2;
}

/* The encoding of a ``size``-byte string element, before its data: the bytes written at
 * ``out`` (room for 5). */
static inline int lp_put_string_head(unsigned char *out, Py_ssize_t size) {
    if (size < 64) {
        out[0] = (unsigned char)(0x80 | size);
        return 1;
    }
    if (size < 4096) {
        out[0] = (unsigned char)(0xE0 | size >> 8);
        out[1] = (unsigned char)(size & 0xFF);
        return 2;
    }
    uint32_t length = (uint32_t)size;
    out[0] = 0xF0;
    memcpy(out + 1, &length, 4);  /* little-endian, as on every platform built here */
    return 5;
}

/* Bytes of an element appended as a string (an integer one when it spells an integer). */
static inline int64_t lp_string_size(const unsigned char *text, Py_ssize_t size) {
    int64_t value;
    if (lp_string_int(text, size, &value))
        return lp_int_size(value);
    int64_t encoded = size + (size < 64 ? 1 : size < 4096 ? 2 : 5);
    return encoded + lp_backlen_size((uint64_t)encoded);
}

#endif
