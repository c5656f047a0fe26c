/* Brook's stream IDs (ms << 64 | seq, as Python ints) split into and made from their two
 * 64-bit halves, for the hand-written C of the compiled core.
 *
 * On CPython 3.11 (what Brook runs on) an int's 30-bit digits are read and written directly:
 * _PyLong_AsByteArray and _PyLong_FromByteArray go a byte at a time and cost 400 to 500
 * instructions an ID, more than the rest of an XADD's C. Other versions take those. */
#ifndef BROOK_IDS_H
#define BROOK_IDS_H

#include <Python.h>
#include <stdint.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && PYLONG_BITS_IN_DIGIT == 30 \
    && defined(__SIZEOF_INT128__)
#define BROOK_LONG_DIGITS 1
#endif

static inline int split_id_slow(PyObject *entry_id, uint64_t *ms, uint64_t *seq) {
    unsigned char bytes[16];
    if (_PyLong_AsByteArray((PyLongObject *)entry_id, bytes, 16, 1, 0) < 0)
        return -1;
    *seq = *ms = 0;
    for (int k = 7; k >= 0; k--) {
        *seq = *seq << 8 | bytes[k];
        *ms = *ms << 8 | bytes[8 + k];
    }
    return 0;
}

/* An ID int as its two halves; -1 with an exception for anything else. */
static inline int split_id(PyObject *entry_id, uint64_t *ms, uint64_t *seq) {
    if (!PyLong_Check(entry_id)) {
        PyErr_SetString(PyExc_TypeError, "stream IDs are ints");
        return -1;
    }
#ifdef BROOK_LONG_DIGITS
    Py_ssize_t ndigits = Py_SIZE(entry_id);
    const digit *digits = ((PyLongObject *)entry_id)->ob_digit;
    if (ndigits >= 0 && (ndigits < 5 || (ndigits == 5 && digits[4] < (1u << 8)))) {
        unsigned __int128 value = 0;
        for (Py_ssize_t i = ndigits - 1; i >= 0; i--)
            value = value << 30 | digits[i];
        *ms = (uint64_t)(value >> 64);
        *seq = (uint64_t)value;
        return 0;
    }
#endif
    return split_id_slow(entry_id, ms, seq);  /* negative or too large: it raises */
}

/* ms << 64 | seq as a Python int. */
static inline PyObject *make_id(uint64_t ms, uint64_t seq) {
    if (!ms)
        return PyLong_FromUnsignedLongLong(seq);
#ifdef BROOK_LONG_DIGITS
    unsigned __int128 value = (unsigned __int128)ms << 64 | seq;
    Py_ssize_t ndigits = 0;
    for (unsigned __int128 rest = value; rest; rest >>= 30)
        ndigits++;
    PyLongObject *result = _PyLong_New(ndigits);
    if (result == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < ndigits; i++, value >>= 30)
        result->ob_digit[i] = (digit)(value & PyLong_MASK);
    return (PyObject *)result;
#else
    unsigned char bytes[16];
    for (int k = 0; k < 8; k++) {
        bytes[k] = (unsigned char)(seq >> (8 * k));
        bytes[8 + k] = (unsigned char)(ms >> (8 * k));
    }
    return _PyLong_FromByteArray(bytes, 16, 1, 0);
#endif
}

#endif
