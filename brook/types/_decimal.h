/* Decimal text of unsigned 64-bit ints, for the hand-written C of the compiled core (printf
 * costs several times more). Included by each module that writes numbers. */
#ifndef BROOK_DECIMAL_H
#define BROOK_DECIMAL_H

#include <stdint.h>
#include <string.h>

static const char two_digits[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Decimal text of value at out; returns its length (at most 20). */
static inline int write_u64(char *out, uint64_t value) {
    if (value < 10) {
        out[0] = (char)('0' + value);
        return 1;
    }
    char digits[20];
    int n = 20;
    while (value >= 100) {
        n -= 2;
        memcpy(digits + n, two_digits + 2 * (value % 100), 2);
        value /= 100;
    }
    if (value < 10) {
        digits[--n] = (char)('0' + value);
    } else {
        n -= 2;
        memcpy(digits + n, two_digits + 2 * value, 2);
    }
    memcpy(out, digits + n, (size_t)(20 - n));
    return 20 - n;
}

#endif
