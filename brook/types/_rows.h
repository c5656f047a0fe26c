/* A stream entry's field list against its node's master field names, for the hand-written C
 * of the compiled core. */
#ifndef BROOK_ROWS_H
#define BROOK_ROWS_H

#include <Python.h>
#include <string.h>

/* Do a row's names equal the master's (Redis's SAMEFIELDS)? */
static inline int same_fields(PyObject *const *row, Py_ssize_t nrow, PyObject *const *names,
                              Py_ssize_t nnames) {
    if (nrow != 2 * nnames)
        return 0;
    for (Py_ssize_t k = 0; k < nnames; k++) {
        PyObject *a = row[2 * k], *b = names[k];
        if (a == b)
            continue;
        if (!PyBytes_Check(a) || !PyBytes_Check(b) || PyBytes_GET_SIZE(a) != PyBytes_GET_SIZE(b)
            || memcmp(PyBytes_AS_STRING(a), PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(a)))
            return 0;
    }
    return 1;
}

#endif
