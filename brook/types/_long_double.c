/* INCRBYFLOAT, HINCRBYFLOAT and the blocking commands' fractional timeouts on the platform's
 * long double, as Redis computes them (string2ld, +, *, ceill, ld2string with LD_STR_HUMAN).
 *
 * brook.types.long_double is the Python twin: it emulates the x87 80-bit long double exactly
 * with Fractions (some 16 us an increment in the compiled build, where the command around it
 * costs 2). This module is built only where long double is that format (the #if below), so
 * both give the same results; the pure build, or any other platform, runs the twin.
 *
 * Parsing and printing run in the "C" locale (strtold_l, uselocale), as they do in Redis,
 * which never sets LC_NUMERIC, whatever locale the embedding process chose.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __APPLE__
#include <xlocale.h>
#endif

#if LDBL_MANT_DIG != 64 || LDBL_MAX_EXP != 16384 || LDBL_MIN_EXP != -16381
#error "brook.types._long_double needs the x87 80-bit long double its twin emulates"
#endif

#define MAX_LONG_DOUBLE_CHARS (5 * 1024) /* Redis's buffer for these numbers */

/* incr_by_float's error codes: brook.types.long_double has the same names and values. */
enum { INCREMENT_NOT_FLOAT = 1, CURRENT_NOT_FLOAT = 2, NOT_FINITE = 3 };

static locale_t c_locale;

/* C's isspace in the "C" locale. */
static int c_space(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* The bytes of a bytes or bytearray object (both end in a NUL past their size). */
static int text_of(PyObject *obj, const char **text, Py_ssize_t *size) {
    if (PyBytes_Check(obj)) {
        *text = PyBytes_AS_STRING(obj);
        *size = PyBytes_GET_SIZE(obj);
        return 1;
    }
    if (PyByteArray_Check(obj)) {
        *text = PyByteArray_AS_STRING(obj);
        *size = PyByteArray_GET_SIZE(obj);
        return 1;
    }
    PyErr_Format(PyExc_TypeError, "expected bytes, got %.100s", Py_TYPE(obj)->tp_name);
    return 0;
}

/* Redis's string2ld: 1 and *value when the whole text is a number ("inf" is one, NaN is not,
 * nor a leading space, nor what overflows or underflows to zero); else 0. Python's buffer
 * ends in a NUL, so strtold reads it in place (an inner NUL stops it short: refused). */
static int string2ld(const char *text, Py_ssize_t size, long double *value) {
    if (size == 0 || size >= MAX_LONG_DOUBLE_CHARS)
        return 0;
    char *end;
    errno = 0;
    long double read = strtold_l(text, &end, c_locale);
    if (c_space(text[0]) || end != text + size ||
        (errno == ERANGE && (read == HUGE_VALL || read == -HUGE_VALL ||
                             fpclassify(read) == FP_ZERO)) ||
        errno == EINVAL || isnan(read))
        return 0;
    *value = read;
    return 1;
}

/* ld2string(LD_STR_HUMAN) as createStringObjectFromLongDouble stores a finite value:
 * printf("%.17Lf"), trailing zeros and a bare '.' removed, "-0" as "0"; b"" when the text
 * does not fit Redis's buffer (it never does below 2**16384, but Redis checks). */
static PyObject *format_long_double(long double value) {
    char buf[MAX_LONG_DOUBLE_CHARS];
    locale_t previous = uselocale(c_locale);
    int length = snprintf(buf, sizeof buf, "%.17Lf", value);
    uselocale(previous);
    if (length < 0 || (size_t)length + 1 > sizeof buf)
        return PyBytes_FromStringAndSize("", 0);
    if (memchr(buf, '.', (size_t)length) != NULL) {
        while (buf[length - 1] == '0')
            length--;
        if (buf[length - 1] == '.')
            length--;
    }
    if (length == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        length = 1;
    }
    return PyBytes_FromStringAndSize(buf, length);
}

/* incr_by_float(current, increment) -> the text of current + increment (current None: 0), or
 * the error code of the first check that fails: the increment, current, the sum's NaN or
 * infinity. */
static PyObject *incr_by_float(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "incr_by_float expects current and increment");
        return NULL;
    }
    const char *text;
    Py_ssize_t size;
    long double increment, current = 0;
    if (!text_of(args[1], &text, &size))
        return NULL;
    if (!string2ld(text, size, &increment))
        return PyLong_FromLong(INCREMENT_NOT_FLOAT);
    if (args[0] != Py_None) {
        if (!text_of(args[0], &text, &size))
            return NULL;
        if (!string2ld(text, size, &current))
            return PyLong_FromLong(CURRENT_NOT_FLOAT);
    }
    long double total = current + increment;
    if (isnan(total) || isinf(total))
        return PyLong_FromLong(NOT_FINITE);
    return format_long_double(total);
}

/* timeout_millis(text) -> a timeout in seconds as milliseconds, ceill(value * 1000) in long
 * double as Redis's getTimeoutFromObjectOrReply computes it; None when text is not a number;
 * 2**63 for any product above LLONG_MAX and LLONG_MIN for any below it (both errors). */
static PyObject *timeout_millis(PyObject *self, PyObject *arg) {
    (void)self;
    const char *text;
    Py_ssize_t size;
    long double seconds;
    if (!text_of(arg, &text, &size))
        return NULL;
    if (!string2ld(text, size, &seconds))
        Py_RETURN_NONE;
    long double millis = seconds * 1000.0L;
    if (millis > (long double)LLONG_MAX)
        return PyLong_FromUnsignedLongLong((unsigned long long)LLONG_MAX + 1);
    millis = ceill(millis);
    if (millis < (long double)LLONG_MIN)
        return PyLong_FromLongLong(LLONG_MIN);
    if (millis == (long double)LLONG_MAX + 1) /* 2**63 - 0.5 rounds up out of range */
        return PyLong_FromUnsignedLongLong((unsigned long long)LLONG_MAX + 1);
    return PyLong_FromLongLong((long long)millis);
}

static PyMethodDef methods[] = {
    {"incr_by_float", (PyCFunction)(void (*)(void))incr_by_float, METH_FASTCALL,
     "INCRBYFLOAT's and HINCRBYFLOAT's sum as Redis stores it, or an error code."},
    {"timeout_millis", timeout_millis, METH_O,
     "A blocking command's timeout in seconds as milliseconds, None when not a number."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_long_double", NULL, -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__long_double(void) {
    if (c_locale == (locale_t)0) {
        c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
        if (c_locale == (locale_t)0)
            return PyErr_SetFromErrno(PyExc_OSError);
    }
    return PyModule_Create(&module);
}
