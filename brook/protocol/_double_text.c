/* The text of a double as Redis writes it in every reply: brook.protocol.resp.format_double.
 *
 * The Python twin (brook/protocol/resp.py and brook/protocol/grisu.py) is the reference and
 * says why the digits are Grisu2's rather than the shortest; this is the same computation in
 * 64-bit integer arithmetic, for the replies that carry many scores (ZRANGE ... WITHSCORES,
 * geo distances), where the twin costs some 2 us a double in the compiled build.
 *
 * Steps: the double's rounding interval as 64-bit significands; all three scaled by the
 * cached power of ten that brings the upper bound's exponent into [-60, -32] (products keep
 * their high 64 bits, rounded half up); digits of the upper bound until what is left fits in
 * the interval; the last digit moved towards the value while that stays inside it; then the
 * layout: plain, plain with a point, or scientific.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    uint64_t frac;
    int exp;
} Scaled;

#define FIRST_POWER (-348)
#define POWER_STEP 8
#define POWER_COUNT 87
#define EXP_MIN (-60)
#define EXP_MAX (-32)

/* 10**(FIRST_POWER + i * POWER_STEP) as a 64-bit significand (rounded to nearest) and its
 * binary exponent. */
static const Scaled POWERS[POWER_COUNT] = {
    {0xfa8fd5a0081c0288ULL, -1220},
    {0xbaaee17fa23ebf76ULL, -1193},
    {0x8b16fb203055ac76ULL, -1166},
    {0xcf42894a5dce35eaULL, -1140},
    {0x9a6bb0aa55653b2dULL, -1113},
    {0xe61acf033d1a45dfULL, -1087},
    {0xab70fe17c79ac6caULL, -1060},
    {0xff77b1fcbebcdc4fULL, -1034},
    {0xbe5691ef416bd60cULL, -1007},
    {0x8dd01fad907ffc3cULL, -980},
    {0xd3515c2831559a83ULL, -954},
    {0x9d71ac8fada6c9b5ULL, -927},
    {0xea9c227723ee8bcbULL, -901},
    {0xaecc49914078536dULL, -874},
    {0x823c12795db6ce57ULL, -847},
    {0xc21094364dfb5637ULL, -821},
    {0x9096ea6f3848984fULL, -794},
    {0xd77485cb25823ac7ULL, -768},
    {0xa086cfcd97bf97f4ULL, -741},
    {0xef340a98172aace5ULL, -715},
    {0xb23867fb2a35b28eULL, -688},
    {0x84c8d4dfd2c63f3bULL, -661},
    {0xc5dd44271ad3cdbaULL, -635},
    {0x936b9fcebb25c996ULL, -608},
    {0xdbac6c247d62a584ULL, -582},
    {0xa3ab66580d5fdaf6ULL, -555},
    {0xf3e2f893dec3f126ULL, -529},
    {0xb5b5ada8aaff80b8ULL, -502},
    {0x87625f056c7c4a8bULL, -475},
    {0xc9bcff6034c13053ULL, -449},
    {0x964e858c91ba2655ULL, -422},
    {0xdff9772470297ebdULL, -396},
    {0xa6dfbd9fb8e5b88fULL, -369},
    {0xf8a95fcf88747d94ULL, -343},
    {0xb94470938fa89bcfULL, -316},
    {0x8a08f0f8bf0f156bULL, -289},
    {0xcdb02555653131b6ULL, -263},
    {0x993fe2c6d07b7facULL, -236},
    {0xe45c10c42a2b3b06ULL, -210},
    {0xaa242499697392d3ULL, -183},
    {0xfd87b5f28300ca0eULL, -157},
    {0xbce5086492111aebULL, -130},
    {0x8cbccc096f5088ccULL, -103},
    {0xd1b71758e219652cULL, -77},
    {0x9c40000000000000ULL, -50},
    {0xe8d4a51000000000ULL, -24},
    {0xad78ebc5ac620000ULL, 3},
    {0x813f3978f8940984ULL, 30},
    {0xc097ce7bc90715b3ULL, 56},
    {0x8f7e32ce7bea5c70ULL, 83},
    {0xd5d238a4abe98068ULL, 109},
    {0x9f4f2726179a2245ULL, 136},
    {0xed63a231d4c4fb27ULL, 162},
    {0xb0de65388cc8ada8ULL, 189},
    {0x83c7088e1aab65dbULL, 216},
    {0xc45d1df942711d9aULL, 242},
    {0x924d692ca61be758ULL, 269},
    {0xda01ee641a708deaULL, 295},
    {0xa26da3999aef774aULL, 322},
    {0xf209787bb47d6b85ULL, 348},
    {0xb454e4a179dd1877ULL, 375},
    {0x865b86925b9bc5c2ULL, 402},
    {0xc83553c5c8965d3dULL, 428},
    {0x952ab45cfa97a0b3ULL, 455},
    {0xde469fbd99a05fe3ULL, 481},
    {0xa59bc234db398c25ULL, 508},
    {0xf6c69a72a3989f5cULL, 534},
    {0xb7dcbf5354e9beceULL, 561},
    {0x88fcf317f22241e2ULL, 588},
    {0xcc20ce9bd35c78a5ULL, 614},
    {0x98165af37b2153dfULL, 641},
    {0xe2a0b5dc971f303aULL, 667},
    {0xa8d9d1535ce3b396ULL, 694},
    {0xfb9b7cd9a4a7443cULL, 720},
    {0xbb764c4ca7a44410ULL, 747},
    {0x8bab8eefb6409c1aULL, 774},
    {0xd01fef10a657842cULL, 800},
    {0x9b10a4e5e9913129ULL, 827},
    {0xe7109bfba19c0c9dULL, 853},
    {0xac2820d9623bf429ULL, 880},
    {0x80444b5e7aa7cf85ULL, 907},
    {0xbf21e44003acdd2dULL, 933},
    {0x8e679c2f5e44ff8fULL, 960},
    {0xd433179d9c8cb841ULL, 986},
    {0x9e19db92b4e31ba9ULL, 1013},
    {0xeb96bf6ebadf77d9ULL, 1039},
    {0xaf87023b9bf0ee6bULL, 1066}
};

static const uint64_t TENS[20] = {
    10000000000000000000ULL, 1000000000000000000ULL, 100000000000000000ULL,
    10000000000000000ULL, 1000000000000000ULL, 100000000000000ULL, 10000000000000ULL,
    1000000000000ULL, 100000000000ULL, 10000000000ULL, 1000000000ULL, 100000000ULL,
    10000000ULL, 1000000ULL, 100000ULL, 10000ULL, 1000ULL, 100ULL, 10ULL, 1ULL,
};

/* The high 64 bits of a * b, rounded half up. */
static inline uint64_t high_product(uint64_t a, uint64_t b) {
    unsigned __int128 product = (unsigned __int128)a * b + ((unsigned __int128)1 << 63);
    return (uint64_t)(product >> 64);
}

/* The cached power that brings an exponent ``exp`` into [EXP_MIN, EXP_MAX]; *k is its
 * decimal exponent. */
static Scaled power_for(int exp, int *k) {
    int approx = (int)(-(exp + POWER_COUNT) * 0.30102999566398114);
    int index = (approx - FIRST_POWER) / POWER_STEP;
    for (;;) {
        int current = exp + POWERS[index].exp + 64;
        if (current < EXP_MIN) {
            index++;
        } else if (current > EXP_MAX) {
            index--;
        } else {
            *k = FIRST_POWER + index * POWER_STEP;
            return POWERS[index];
        }
    }
}

/* Move the last digit down towards the value while the digits stay in the interval and get
 * closer to it. */
static void round_last(char *digits, int count, uint64_t delta, uint64_t rest, uint64_t step,
                       uint64_t distance) {
    while (rest < distance && delta - rest >= step
           && (rest + step < distance || distance - rest > rest + step - distance)) {
        digits[count - 1]--;
        rest += step;
    }
}

/* The digits of |value| (finite, non-zero) into ``digits``; their count; *exponent10 such
 * that |value| reads as digits * 10**exponent10. */
static int grisu_digits(double value, char *digits, int *exponent10) {
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    bits &= ~(1ULL << 63);
    uint64_t fraction = bits & ((1ULL << 52) - 1);
    int biased = (int)(bits >> 52);
    uint64_t upper, lower;
    int upper_exp;
    if (biased) {
        fraction += 1ULL << 52;
        int exponent = biased - 1075;
        upper = ((fraction << 1) + 1) << 10;
        upper_exp = exponent - 11;
        lower = fraction == 1ULL << 52 ? ((fraction << 2) - 1) << 9
                                        : ((fraction << 1) - 1) << 10;
        fraction <<= 11;
    } else {
        int exponent = 1 - 1075;
        upper = (fraction << 1) + 1;
        upper_exp = exponent - 1;
        while (!(upper & (1ULL << 53))) {
            upper <<= 1;
            upper_exp--;
        }
        upper <<= 10;
        upper_exp -= 10;
        lower = ((fraction << 1) - 1) << ((exponent - 1) - upper_exp);
        while (!(fraction & (1ULL << 52)))
            fraction <<= 1;
        fraction <<= 11;
    }
    int k;
    Scaled power = power_for(upper_exp, &k);
    uint64_t w = high_product(fraction, power.frac);
    uint64_t high = high_product(upper, power.frac) - 1;
    uint64_t low = high_product(lower, power.frac) + 1;
    int shift = -(upper_exp + power.exp + 64);
    *exponent10 = -k;

    uint64_t distance = high - w;
    uint64_t delta = high - low;
    uint64_t one = 1ULL << shift;
    uint64_t part1 = high >> shift;
    uint64_t part2 = high & (one - 1);
    int count = 0;
    int kappa = 10;
    const uint64_t *divisor = TENS + 10;
    while (kappa > 0) {
        uint64_t digit = part1 / *divisor;
        if (digit || count)
            digits[count++] = (char)('0' + digit);
        part1 -= digit * *divisor;
        kappa--;
        uint64_t rest = (part1 << shift) + part2;
        if (rest <= delta) {
            *exponent10 += kappa;
            round_last(digits, count, delta, rest, *divisor << shift, distance);
            return count;
        }
        divisor++;
    }
    const uint64_t *unit = TENS + 18;
    for (;;) {
        part2 *= 10;
        delta *= 10;
        kappa--;
        uint64_t digit = part2 >> shift;
        if (digit || count)
            digits[count++] = (char)('0' + digit);
        part2 &= one - 1;
        if (part2 < delta) {
            *exponent10 += kappa;
            round_last(digits, count, delta, part2, one, distance * *unit);
            return count;
        }
        unit--;
    }
}

/* d2string's layout of the digits: plain, with a point, or scientific. */
static int lay_out(const char *digits, int count, int exponent10, int negative, char *out) {
    int length = 0;
    if (negative)
        out[length++] = '-';
    int magnitude = abs(exponent10 + count - 1);
    if (exponent10 >= 0 && magnitude < count + 7) {
        memcpy(out + length, digits, count);
        length += count;
        memset(out + length, '0', exponent10);
        return length + exponent10;
    }
    if (exponent10 < 0 && (exponent10 > -7 || magnitude < 4)) {
        int point = count + exponent10;
        if (point <= 0) {
            out[length++] = '0';
            out[length++] = '.';
            memset(out + length, '0', -point);
            length += -point;
            memcpy(out + length, digits, count);
            return length + count;
        }
        memcpy(out + length, digits, point);
        length += point;
        out[length++] = '.';
        memcpy(out + length, digits + point, count - point);
        return length + count - point;
    }
    int shown = count < 18 - negative ? count : 18 - negative;
    out[length++] = digits[0];
    if (shown > 1) {
        out[length++] = '.';
        memcpy(out + length, digits + 1, shown - 1);
        length += shown - 1;
    }
    out[length++] = 'e';
    out[length++] = exponent10 + shown - 1 < 0 ? '-' : '+';
    return length + sprintf(out + length, "%d", magnitude);
}

/* (double)(LLONG_MAX / 2): the largest magnitude written as an integer. */
#define HALF_LLONG ((double)(INT64_MAX / 2))

static PyObject *format_double(PyObject *module, PyObject *arg) {
    (void)module;
    double value = PyFloat_AsDouble(arg);
    if (value == -1.0 && PyErr_Occurred())
        return NULL;
    if (isnan(value))
        return PyBytes_FromStringAndSize("nan", 3);
    if (value == 0)
        return signbit(value) ? PyBytes_FromStringAndSize("-0", 2)
                              : PyBytes_FromStringAndSize("0", 1);
    if (isinf(value))
        return value > 0 ? PyBytes_FromStringAndSize("inf", 3)
                         : PyBytes_FromStringAndSize("-inf", 4);
    char out[64];
    if (value >= -HALF_LLONG && value <= HALF_LLONG && value == (double)(int64_t)value) {
        int length = snprintf(out, sizeof out, "%lld", (long long)(int64_t)value);
        return PyBytes_FromStringAndSize(out, length);
    }
    char digits[24];
    int exponent10;
    int count = grisu_digits(value, digits, &exponent10);
    return PyBytes_FromStringAndSize(out, lay_out(digits, count, exponent10, value < 0, out));
}

static PyMethodDef METHODS[] = {
    {"format_double", format_double, METH_O, "A double's text as Redis writes it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, .m_name = "_double_text", .m_size = 0, .m_methods = METHODS,
};

PyMODINIT_FUNC PyInit__double_text(void) { return PyModule_Create(&MODULE); }
