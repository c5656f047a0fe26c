/* A set's members, packed: no Python object per member.
 *
 * The Python twin is brook.types.member_set.MemberSet (a dict of the members); brook.types.set's
 * SetValue holds one or the other and keeps Redis's encoding rules (docs/architecture.md,
 * "Hand-written C", says why this one exists: a dict slot and a bytes object cost about 90 bytes
 * a member, Redis's hash table about 50).
 *
 * The three forms are Redis's three encodings, and the iteration order each one gives is the
 * order users see (SMEMBERS, SSCAN):
 *
 * - INTSET: the members' values as sorted int64s (members are canonical decimal integers,
 *   Redis's string2ll); lookups bisect, an insertion moves the tail. Iterated in numeric order.
 * - LISTPACK: the members packed one after another, each a length (one byte below 255, else
 *   255 and four bytes) and its bytes; lookups walk the buffer, as Redis walks a listpack.
 *   Iterated in insertion order.
 * - HASHTABLE: a power-of-two array of 8-byte slots with linear probing, at a load factor from
 *   1/8 to 3/4. A slot is 0 (empty), a member of at most 7 bytes in the slot itself (the low
 *   byte is its length * 2 + 1, the other seven its bytes), or a pointer to a block holding the
 *   member's 32-bit hash, its length (as above) and its bytes. The hash is Python's hash of the
 *   member as ``bytes`` (cached in the argument's object, so a lookup hashes nothing twice);
 *   a member in a slot is rehashed when needed (resizing, deleting, SSCAN). Deletion shifts the
 *   entries after the hole back (no tombstones), so a member lies in the unbroken run of
 *   occupied slots starting at its home slot (hash & mask): SSCAN's cursor is Redis's
 *   reverse-binary count over home slots, as brook/types/_keytable.c's walk, and a random
 *   member is a random occupied slot. Iterated in slot order.
 *
 * Conversions (Redis's, upwards, and to an intset for SINTERSTORE's result) rebuild the data in
 * the target form from the current iteration order; a hash table does not become a listpack.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define INTSET 0
#define LISTPACK 1
#define HASHTABLE 2
#define MIN_SLOTS 4 /* Redis's DICT_HT_INITIAL_SIZE */
#define INLINE_MAX 7
#define LONG_LENGTH 255 /* a packed length's marker: four bytes of length follow */

/* What a set holds; the object is this and its header. */
typedef struct {
    void *data;       /* int64_t[] (INTSET), packed members (LISTPACK), slots (HASHTABLE) */
    Py_ssize_t count; /* members */
    size_t size;      /* LISTPACK: bytes in use; HASHTABLE: slots - 1 (the mask) */
    uint32_t room;    /* INTSET, LISTPACK: bytes allocated, in 16-byte units */
    uint8_t kind;
} Members;

typedef struct {
    PyObject_HEAD
    Members s;
} MemberSet;

/* A hash table's block for a member longer than INLINE_MAX. */
typedef struct {
    uint32_t hash;
    unsigned char body[]; /* the packed length, then the member's bytes */
} Entry;

static PyTypeObject MemberSetType;

/* -- random numbers ------------------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t next_random(void) {
    /* xorshift64*: quality enough for sampling, and no call into Python's random */
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* A number below ``n`` (n > 0). */
static size_t random_below(size_t n) {
    return (size_t)(next_random() % (uint64_t)n);
}

/* -- integers ------------------------------------------------------------------------------- */

/* Redis's string2ll: an optional '-', no '+', no leading zeros, no "-0", 64-bit range. */
static int strict_int(const char *s, Py_ssize_t n, int64_t *out) {
    if (n < 1 || n > 20) {
        return 0;
    }
    const char *p = s, *end = s + n;
    int negative = *p == '-';
    if (negative && ++p == end) {
        return 0;
    }
    if (*p == '0') {
        if (negative || p + 1 != end) {
            return 0;
        }
        *out = 0;
        return 1;
    }
    uint64_t v = 0;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') {
            return 0;
        }
        unsigned digit = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - digit) / 10) {
            return 0;
        }
        v = v * 10 + digit;
    }
    if (negative) {
        if (v > (uint64_t)INT64_MAX + 1) {
            return 0;
        }
        *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    } else {
        if (v > (uint64_t)INT64_MAX) {
            return 0;
        }
        *out = (int64_t)v;
    }
    return 1;
}

/* ``v`` in decimal into ``out`` (21 bytes at least); its length. */
static Py_ssize_t format_int(int64_t v, char *out) {
    char digits[20];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        digits[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    Py_ssize_t length = 0;
    if (v < 0) {
        out[length++] = '-';
    }
    while (n) {
        out[length++] = digits[--n];
    }
    return length;
}

static int compare_ints(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The index of ``v`` in the sorted ints, or where it would go (``*found`` says which). */
static Py_ssize_t int_position(const Members *s, int64_t v, int *found) {
    const int64_t *ints = s->data;
    Py_ssize_t low = 0, high = s->count;
    while (low < high) {
        Py_ssize_t middle = low + (high - low) / 2;
        if (ints[middle] < v) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    *found = low < s->count && ints[low] == v;
    return low;
}

/* -- packed lengths (a listpack's entries, a hash table's blocks) ----------------------------- */

static inline size_t length_bytes(Py_ssize_t n) {
    return n < LONG_LENGTH ? 1 : 5;
}

static inline unsigned char *write_packed(unsigned char *p, const char *bytes, Py_ssize_t n) {
    if (n < LONG_LENGTH) {
        *p++ = (unsigned char)n;
    } else {
        uint32_t length = (uint32_t)n;
        *p++ = LONG_LENGTH;
        memcpy(p, &length, 4);
        p += 4;
    }
    memcpy(p, bytes, (size_t)n);
    return p + n;
}

/* Read the packed member at ``p``; the position after it. */
static inline const unsigned char *read_packed(const unsigned char *p, const char **bytes,
                                               Py_ssize_t *n) {
    if (*p < LONG_LENGTH) {
        *n = *p;
        *bytes = (const char *)p + 1;
        return p + 1 + *n;
    }
    uint32_t length;
    memcpy(&length, p + 1, 4);
    *n = (Py_ssize_t)length;
    *bytes = (const char *)p + 5;
    return p + 5 + length;
}

/* -- compact buffers (INTSET, LISTPACK) ----------------------------------------------------- */

static inline size_t round16(size_t n) {
    return (n + 15) & ~(size_t)15;
}

/* Room for ``needed`` bytes: exactly (to pymalloc's 16-byte step) while small, with a quarter
 * more above 512 bytes so that a growing large buffer is not copied on every addition. */
static int reserve(Members *s, size_t needed) {
    size_t have = (size_t)s->room * 16;
    if (needed <= have) {
        return 0;
    }
    size_t want = round16(needed <= 512 ? needed : needed + needed / 4);
    if (want / 16 > UINT32_MAX) {
        PyErr_NoMemory();
        return -1;
    }
    void *data = PyMem_Realloc(s->data, want);
    if (!data) {
        PyErr_NoMemory();
        return -1;
    }
    s->data = data;
    s->room = (uint32_t)(want / 16);
    return 0;
}

/* Give back a buffer less than half used. */
static void trim(Members *s, size_t used) {
    size_t have = (size_t)s->room * 16;
    if (used * 2 >= have) {
        return;
    }
    if (!used) {
        PyMem_Free(s->data);
        s->data = NULL;
        s->room = 0;
        return;
    }
    size_t want = round16(used <= 512 ? used : used + used / 4);
    void *data = PyMem_Realloc(s->data, want);
    if (data) { /* else the larger buffer stands */
        s->data = data;
        s->room = (uint32_t)(want / 16);
    }
}

/* The byte offset of the packed member equal to ``bytes``, or -1. */
static Py_ssize_t packed_find(const Members *s, const char *bytes, Py_ssize_t n) {
    const unsigned char *start = s->data, *p = start, *end = start + s->size;
    while (p < end) {
        const char *member;
        Py_ssize_t length;
        const unsigned char *next = read_packed(p, &member, &length);
        if (length == n && !memcmp(member, bytes, (size_t)n)) {
            return p - start;
        }
        p = next;
    }
    return -1;
}

/* The byte offset of the ``index``-th packed member. */
static size_t packed_offset(const Members *s, Py_ssize_t index) {
    const unsigned char *start = s->data, *p = start;
    const char *member;
    Py_ssize_t length;
    while (index--) {
        p = read_packed(p, &member, &length);
    }
    return (size_t)(p - start);
}

static void packed_remove(Members *s, size_t at) {
    unsigned char *start = s->data;
    const char *member;
    Py_ssize_t length;
    size_t after = (size_t)(read_packed(start + at, &member, &length) - start);
    memmove(start + at, start + after, s->size - after);
    s->size -= after - at;
    s->count--;
    trim(s, s->size);
}

static int packed_append(Members *s, const char *bytes, Py_ssize_t n) {
    if (reserve(s, s->size + length_bytes(n) + (size_t)n) < 0) {
        return -1;
    }
    unsigned char *end = write_packed((unsigned char *)s->data + s->size, bytes, n);
    s->size = (size_t)(end - (unsigned char *)s->data);
    s->count++;
    return 0;
}

static int int_insert(Members *s, Py_ssize_t at, int64_t v) {
    if (reserve(s, ((size_t)s->count + 1) * sizeof(int64_t)) < 0) {
        return -1;
    }
    int64_t *ints = s->data;
    memmove(ints + at + 1, ints + at, (size_t)(s->count - at) * sizeof(int64_t));
    ints[at] = v;
    s->count++;
    return 0;
}

static void int_remove(Members *s, Py_ssize_t at) {
    int64_t *ints = s->data;
    memmove(ints + at, ints + at + 1, (size_t)(s->count - at - 1) * sizeof(int64_t));
    s->count--;
    trim(s, (size_t)s->count * sizeof(int64_t));
}

/* -- the hash table ------------------------------------------------------------------------- */

static inline uint64_t inline_word(const char *bytes, Py_ssize_t n) {
    uint64_t word = (uint64_t)n << 1 | 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        word |= (uint64_t)(unsigned char)bytes[i] << (8 * (i + 1));
    }
    return word;
}

static inline Py_ssize_t inline_read(uint64_t word, char *out) {
    Py_ssize_t n = (Py_ssize_t)((word & 0xFF) >> 1);
    for (Py_ssize_t i = 0; i < n; i++) {
        out[i] = (char)(word >> (8 * (i + 1)));
    }
    return n;
}

static inline const Entry *slot_entry(uint64_t word) {
    return (const Entry *)(uintptr_t)word;
}

/* The member a slot holds (``scratch``: 8 bytes for a member kept in the slot). */
static inline void slot_member(uint64_t word, char *scratch, const char **bytes, Py_ssize_t *n) {
    if (word & 1) {
        *n = inline_read(word, scratch);
        *bytes = scratch;
    } else {
        read_packed(slot_entry(word)->body, bytes, n);
    }
}

static inline uint32_t slot_hash(uint64_t word) {
    if (word & 1) {
        char scratch[8];
        Py_ssize_t n = inline_read(word, scratch);
        return (uint32_t)_Py_HashBytes(scratch, n);
    }
    return slot_entry(word)->hash;
}

static void free_slot(uint64_t word) {
    if (word && !(word & 1)) {
        PyMem_Free((void *)(uintptr_t)word);
    }
}

/* The slot holding the member, or -1. */
static Py_ssize_t table_find(const Members *s, const char *bytes, Py_ssize_t n, uint32_t hash) {
    const uint64_t *slots = s->data;
    size_t mask = s->size, i = hash & mask;
    if (n <= INLINE_MAX) {
        uint64_t word = inline_word(bytes, n);
        for (;; i = (i + 1) & mask) {
            if (slots[i] == word) {
                return (Py_ssize_t)i;
            }
            if (!slots[i]) {
                return -1;
            }
        }
    }
    for (;; i = (i + 1) & mask) {
        uint64_t word = slots[i];
        if (!word) {
            return -1;
        }
        if (!(word & 1) && slot_entry(word)->hash == hash) {
            const char *member;
            Py_ssize_t length;
            read_packed(slot_entry(word)->body, &member, &length);
            if (length == n && !memcmp(member, bytes, (size_t)n)) {
                return (Py_ssize_t)i;
            }
        }
    }
}

static void place(uint64_t *slots, size_t mask, uint64_t word, uint32_t hash) {
    size_t i = hash & mask;
    while (slots[i]) {
        i = (i + 1) & mask;
    }
    slots[i] = word;
}

/* Rehash into ``count`` slots (a power of two, above the members). */
static int table_resize(Members *s, size_t count) {
    uint64_t *slots = PyMem_Calloc(count, sizeof(uint64_t));
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    uint64_t *old = s->data;
    if (old) {
        for (size_t i = 0; i <= s->size; i++) {
            if (old[i]) {
                place(slots, count - 1, old[i], slot_hash(old[i]));
            }
        }
        PyMem_Free(old);
    }
    s->data = slots;
    s->size = count - 1;
    return 0;
}

static size_t slots_for(Py_ssize_t members) {
    size_t count = MIN_SLOTS;
    while ((size_t)members * 4 > count * 3) {
        count <<= 1;
    }
    return count;
}

/* Add a member known to be absent. */
static int table_insert(Members *s, const char *bytes, Py_ssize_t n, uint32_t hash) {
    if (!s->data || ((size_t)s->count + 1) * 4 > (s->size + 1) * 3) {
        if (table_resize(s, s->data ? (s->size + 1) * 2 : MIN_SLOTS) < 0) {
            return -1;
        }
    }
    uint64_t word;
    if (n <= INLINE_MAX) {
        word = inline_word(bytes, n);
    } else {
        Entry *e = PyMem_Malloc(sizeof(Entry) + length_bytes(n) + (size_t)n);
        if (!e) {
            PyErr_NoMemory();
            return -1;
        }
        e->hash = hash;
        write_packed(e->body, bytes, n);
        word = (uint64_t)(uintptr_t)e;
    }
    place(s->data, s->size, word, hash);
    s->count++;
    return 0;
}

/* Empty slot ``i`` (its block is the caller's) and shift back the entries of its run that may
 * move closer home; then shrink a table less than an eighth full. */
static void table_remove(Members *s, size_t i) {
    uint64_t *slots = s->data;
    size_t mask = s->size, j = i;
    for (;;) {
        j = (j + 1) & mask;
        uint64_t word = slots[j];
        if (!word) {
            break;
        }
        size_t home = slot_hash(word) & mask;
        /* the entry stays when its home lies cyclically in (i, j] */
        int stays = i < j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            slots[i] = word;
            i = j;
        }
    }
    slots[i] = 0;
    s->count--;
    size_t count = mask + 1;
    if (count > MIN_SLOTS && (size_t)s->count * 8 < count) {
        size_t wanted = MIN_SLOTS;
        while (wanted < (size_t)s->count * 2) {
            wanted <<= 1;
        }
        if (table_resize(s, wanted) < 0) {
            PyErr_Clear(); /* a sparse table is still a correct one */
        }
    }
}

/* -- the forms together --------------------------------------------------------------------- */

static void members_free(Members *s) {
    if (s->kind == HASHTABLE && s->data) {
        uint64_t *slots = s->data;
        for (size_t i = 0; i <= s->size; i++) {
            free_slot(slots[i]);
        }
    }
    PyMem_Free(s->data);
    s->data = NULL;
    s->count = 0;
    s->size = 0;
    s->room = 0;
}

/* A walk over the members in the set's order. */
typedef struct {
    const Members *s;
    size_t position; /* INTSET: index; LISTPACK: byte offset; HASHTABLE: slot */
    char scratch[24];
} Walk;

static void walk_start(Walk *w, const Members *s) {
    w->s = s;
    w->position = 0;
}

/* The next member (valid until the next call); 0 at the end. */
static int walk_next(Walk *w, const char **bytes, Py_ssize_t *n) {
    const Members *s = w->s;
    switch (s->kind) {
    case INTSET:
        if (w->position >= (size_t)s->count) {
            return 0;
        }
        *n = format_int(((const int64_t *)s->data)[w->position++], w->scratch);
        *bytes = w->scratch;
        return 1;
    case LISTPACK:
        if (w->position >= s->size) {
            return 0;
        }
        w->position = (size_t)(read_packed((const unsigned char *)s->data + w->position, bytes, n)
                               - (const unsigned char *)s->data);
        return 1;
    default: {
        const uint64_t *slots = s->data;
        if (!slots) {
            return 0;
        }
        while (w->position <= s->size) {
            uint64_t word = slots[w->position++];
            if (word) {
                slot_member(word, w->scratch, bytes, n);
                return 1;
            }
        }
        return 0;
    }
    }
}

/* The member's hash as the hash table keeps it. */
static int member_hash(PyObject *member, uint32_t *hash) {
    Py_hash_t h = PyObject_Hash(member); /* cached in the bytes object */
    if (h == -1 && PyErr_Occurred()) {
        return -1;
    }
    *hash = (uint32_t)h;
    return 0;
}

/* Add to ``s`` a member known not to be there (conversions). */
static int add_absent(Members *s, const char *bytes, Py_ssize_t n) {
    if (s->kind == LISTPACK) {
        return packed_append(s, bytes, n);
    }
    return table_insert(s, bytes, n, (uint32_t)_Py_HashBytes(bytes, n));
}

/* Rebuild ``s`` in form ``kind`` (ValueError if it is an intset and a member is no integer,
 * or a listpack from a hash table, whose order is no listpack's). */
static int convert(Members *s, int kind) {
    if (kind == s->kind) {
        return 0;
    }
    if (kind == LISTPACK && s->kind == HASHTABLE) {
        PyErr_SetString(PyExc_ValueError, "a hash table converts to an intset only");
        return -1;
    }
    Members fresh = {NULL, 0, 0, 0, (uint8_t)kind};
    Walk w;
    const char *bytes;
    Py_ssize_t n;
    walk_start(&w, s);
    if (kind == INTSET) {
        if (s->count && reserve(&fresh, (size_t)s->count * sizeof(int64_t)) < 0) {
            return -1;
        }
        int64_t *ints = fresh.data;
        while (walk_next(&w, &bytes, &n)) {
            if (!strict_int(bytes, n, &ints[fresh.count++])) {
                members_free(&fresh);
                PyErr_SetString(PyExc_ValueError, "an intset holds integers only");
                return -1;
            }
        }
        if (fresh.count) {
            qsort(ints, (size_t)fresh.count, sizeof(int64_t), compare_ints);
        }
    } else {
        if (kind == HASHTABLE && table_resize(&fresh, slots_for(s->count)) < 0) {
            return -1;
        }
        while (walk_next(&w, &bytes, &n)) {
            if (add_absent(&fresh, bytes, n) < 0) {
                members_free(&fresh);
                return -1;
            }
        }
    }
    members_free(s);
    *s = fresh;
    return 0;
}

static int check_member(PyObject *member) {
    if (!PyBytes_Check(member)) {
        PyErr_Format(PyExc_TypeError, "members are bytes, not %.100s", Py_TYPE(member)->tp_name);
        return -1;
    }
    if (PyBytes_GET_SIZE(member) > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "member too long");
        return -1;
    }
    return 0;
}

/* A member looked up in several sets: its bytes, and its hash and integer value once a set
 * needed them. */
typedef struct {
    const char *bytes;
    Py_ssize_t n;
    uint32_t hash;
    char hashed;  /* hash is set */
    char parsed;  /* 1: value is set; -1: not an integer */
    int64_t value;
} Probe;

static void probe_start(Probe *p, const char *bytes, Py_ssize_t n) {
    p->bytes = bytes;
    p->n = n;
    p->hashed = 0;
    p->parsed = 0;
}

/* Where the member is: an index (INTSET), byte offset (LISTPACK) or slot (HASHTABLE); -1 when
 * absent. For an absent intset member, ``*gap`` is where it would go (-1: not an integer). */
static Py_ssize_t probe_find(const Members *s, Probe *p, Py_ssize_t *gap) {
    switch (s->kind) {
    case INTSET: {
        if (!p->parsed) {
            p->parsed = strict_int(p->bytes, p->n, &p->value) ? 1 : -1;
        }
        if (p->parsed < 0) {
            *gap = -1;
            return -1;
        }
        int found;
        Py_ssize_t at = int_position(s, p->value, &found);
        *gap = at;
        return found ? at : -1;
    }
    case LISTPACK:
        return packed_find(s, p->bytes, p->n);
    default:
        if (!s->data) {
            return -1;
        }
        if (!p->hashed) {
            p->hash = (uint32_t)_Py_HashBytes(p->bytes, p->n);
            p->hashed = 1;
        }
        return table_find(s, p->bytes, p->n, p->hash);
    }
}

/* probe_find for a bytes object: -2 with an exception set (its hash, which it caches, failed). */
static Py_ssize_t locate(const Members *s, PyObject *member, Py_ssize_t *gap) {
    Probe p;
    probe_start(&p, PyBytes_AS_STRING(member), PyBytes_GET_SIZE(member));
    if (s->kind == HASHTABLE) {
        if (member_hash(member, &p.hash) < 0) {
            return -2;
        }
        p.hashed = 1;
    }
    return probe_find(s, &p, gap);
}

/* Remove the member at ``at`` (as locate gives it). */
static void remove_at(Members *s, Py_ssize_t at) {
    switch (s->kind) {
    case INTSET:
        int_remove(s, at);
        break;
    case LISTPACK:
        packed_remove(s, (size_t)at);
        break;
    default: {
        uint64_t word = ((uint64_t *)s->data)[at];
        table_remove(s, (size_t)at);
        free_slot(word);
    }
    }
}

/* The member at ``at`` (as locate gives it), as a new bytes object. */
static PyObject *member_at(const Members *s, Py_ssize_t at) {
    char scratch[24];
    const char *bytes;
    Py_ssize_t n;
    switch (s->kind) {
    case INTSET:
        n = format_int(((const int64_t *)s->data)[at], scratch);
        bytes = scratch;
        break;
    case LISTPACK:
        read_packed((const unsigned char *)s->data + at, &bytes, &n);
        break;
    default:
        slot_member(((const uint64_t *)s->data)[at], scratch, &bytes, &n);
    }
    return PyBytes_FromStringAndSize(bytes, n);
}

/* A random member's position (the set is not empty). */
static Py_ssize_t random_position(const Members *s) {
    switch (s->kind) {
    case INTSET:
        return (Py_ssize_t)random_below((size_t)s->count);
    case LISTPACK:
        return (Py_ssize_t)packed_offset(s, (Py_ssize_t)random_below((size_t)s->count));
    default: {
        const uint64_t *slots = s->data;
        for (;;) { /* at least one slot in eight is used (table_remove) */
            size_t i = (size_t)(next_random() & s->size);
            if (slots[i]) {
                return (Py_ssize_t)i;
            }
        }
    }
    }
}

/* -- the type ------------------------------------------------------------------------------- */

static int ms_add_one(MemberSet *self, PyObject *member) {
    if (check_member(member) < 0) {
        return -1;
    }
    Members *s = &self->s;
    Py_ssize_t gap = 0;
    Py_ssize_t at = locate(s, member, &gap);
    if (at == -2) {
        return -1;
    }
    if (at >= 0) {
        return 0;
    }
    const char *bytes = PyBytes_AS_STRING(member);
    Py_ssize_t n = PyBytes_GET_SIZE(member);
    switch (s->kind) {
    case INTSET: {
        int64_t v;
        if (gap < 0 || !strict_int(bytes, n, &v)) {
            PyErr_SetString(PyExc_ValueError, "an intset holds integers only");
            return -1;
        }
        return int_insert(s, gap, v) < 0 ? -1 : 1;
    }
    case LISTPACK:
        return packed_append(s, bytes, n) < 0 ? -1 : 1;
    default: {
        uint32_t hash;
        if (member_hash(member, &hash) < 0 || table_insert(s, bytes, n, hash) < 0) {
            return -1;
        }
        return 1;
    }
    }
}

static int parse_kind(PyObject *arg, int *kind) {
    long value = PyLong_AsLong(arg);
    if (value == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (value < INTSET || value > HASHTABLE) {
        PyErr_SetString(PyExc_ValueError, "kind is INTSET, LISTPACK or HASHTABLE (0, 1, 2)");
        return -1;
    }
    *kind = (int)value;
    return 0;
}

static MemberSet *ms_alloc(int kind) {
    MemberSet *self = PyObject_New(MemberSet, &MemberSetType);
    if (self) {
        self->s = (Members){NULL, 0, 0, 0, (uint8_t)kind};
    }
    return self;
}

static PyObject *ms_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"kind", "members", NULL};
    PyObject *kind_arg = NULL, *members = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:MemberSet", names, &kind_arg, &members)) {
        return NULL;
    }
    int kind = INTSET;
    if (kind_arg && parse_kind(kind_arg, &kind) < 0) {
        return NULL;
    }
    (void)type;
    MemberSet *self = ms_alloc(kind);
    if (!self) {
        return NULL;
    }
    if (members) {
        if (kind == HASHTABLE) {
            Py_ssize_t hint = PyObject_LengthHint(members, 0);
            if (hint < 0 || table_resize(&self->s, slots_for(hint)) < 0) {
                Py_DECREF(self);
                return NULL;
            }
        }
        PyObject *it = PyObject_GetIter(members), *member;
        if (!it) {
            Py_DECREF(self);
            return NULL;
        }
        while ((member = PyIter_Next(it))) {
            int added = ms_add_one(self, member);
            Py_DECREF(member);
            if (added < 0) {
                break;
            }
        }
        Py_DECREF(it);
        if (PyErr_Occurred()) {
            Py_DECREF(self);
            return NULL;
        }
    }
    return (PyObject *)self;
}

static void ms_dealloc(MemberSet *self) {
    members_free(&self->s);
    PyObject_Free(self);
}

static Py_ssize_t ms_len(MemberSet *self) {
    return self->s.count;
}

static int ms_contains(MemberSet *self, PyObject *member) {
    if (!PyBytes_Check(member)) {
        return 0; /* as a dict of bytes answers any other hashable */
    }
    Py_ssize_t gap;
    Py_ssize_t at = locate(&self->s, member, &gap);
    return at == -2 ? -1 : at >= 0;
}

static PyObject *ms_members(MemberSet *self, PyObject *Py_UNUSED(ignored)) {
    PyObject *list = PyList_New(self->s.count);
    if (!list) {
        return NULL;
    }
    Walk w;
    const char *bytes;
    Py_ssize_t n, i = 0;
    walk_start(&w, &self->s);
    while (walk_next(&w, &bytes, &n)) {
        PyObject *member = PyBytes_FromStringAndSize(bytes, n);
        if (!member) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i++, member);
    }
    return list;
}

/* Iterating gives the members present when it began: writes during the loop cannot disturb it. */
static PyObject *ms_iter(MemberSet *self) {
    PyObject *members = ms_members(self, NULL);
    if (!members) {
        return NULL;
    }
    PyObject *it = PyObject_GetIter(members);
    Py_DECREF(members);
    return it;
}

static PyObject *ms_add(MemberSet *self, PyObject *member) {
    int added = ms_add_one(self, member);
    if (added < 0) {
        return NULL;
    }
    return PyBool_FromLong(added);
}

static PyObject *ms_discard(MemberSet *self, PyObject *member) {
    if (!PyBytes_Check(member)) {
        Py_RETURN_FALSE;
    }
    Py_ssize_t gap;
    Py_ssize_t at = locate(&self->s, member, &gap);
    if (at == -2) {
        return NULL;
    }
    if (at < 0) {
        Py_RETURN_FALSE;
    }
    remove_at(&self->s, at);
    Py_RETURN_TRUE;
}

static PyObject *ms_convert(MemberSet *self, PyObject *kind_arg) {
    int kind;
    if (parse_kind(kind_arg, &kind) < 0 || convert(&self->s, kind) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static int check_not_empty(const MemberSet *self) {
    if (!self->s.count) {
        PyErr_SetString(PyExc_KeyError, "the set is empty");
        return -1;
    }
    return 0;
}

static PyObject *ms_random_member(MemberSet *self, PyObject *Py_UNUSED(ignored)) {
    if (check_not_empty(self) < 0) {
        return NULL;
    }
    return member_at(&self->s, random_position(&self->s));
}

static PyObject *ms_pop_random(MemberSet *self, PyObject *Py_UNUSED(ignored)) {
    if (check_not_empty(self) < 0) {
        return NULL;
    }
    Py_ssize_t at = random_position(&self->s);
    PyObject *member = member_at(&self->s, at);
    if (member) {
        remove_at(&self->s, at);
    }
    return member;
}

static PyObject *ms_integer_width(MemberSet *self, PyObject *Py_UNUSED(ignored)) {
    const Members *s = &self->s;
    if (s->kind != INTSET) {
        PyErr_SetString(PyExc_ValueError, "integer_width: not an intset");
        return NULL;
    }
    if (!s->count) {
        return PyLong_FromLong(0);
    }
    char scratch[24];
    const int64_t *ints = s->data;
    Py_ssize_t low = format_int(ints[0], scratch), high = format_int(ints[s->count - 1], scratch);
    return PyLong_FromSsize_t(low > high ? low : high);
}

static PyObject *ms_all_integers(MemberSet *self, PyObject *Py_UNUSED(ignored)) {
    if (self->s.kind == INTSET) {
        Py_RETURN_TRUE;
    }
    Walk w;
    const char *bytes;
    Py_ssize_t n;
    int64_t v;
    walk_start(&w, &self->s);
    while (walk_next(&w, &bytes, &n)) {
        if (!strict_int(bytes, n, &v)) {
            Py_RETURN_FALSE;
        }
    }
    Py_RETURN_TRUE;
}

static PyObject *ms_copy(MemberSet *self, PyObject *Py_UNUSED(ignored)) {
    const Members *s = &self->s;
    MemberSet *copy = ms_alloc(s->kind);
    if (!copy) {
        return NULL;
    }
    Members *d = &copy->s;
    if (s->kind != HASHTABLE) {
        size_t used = s->kind == INTSET ? (size_t)s->count * sizeof(int64_t) : s->size;
        if (used && reserve(d, used) < 0) {
            Py_DECREF(copy);
            return NULL;
        }
        if (used) {
            memcpy(d->data, s->data, used);
        }
        d->count = s->count;
        d->size = s->size;
        return (PyObject *)copy;
    }
    if (s->data) {
        const uint64_t *slots = s->data;
        uint64_t *mine = PyMem_Calloc(s->size + 1, sizeof(uint64_t));
        if (!mine) {
            Py_DECREF(copy);
            return PyErr_NoMemory();
        }
        d->data = mine;
        d->size = s->size;
        for (size_t i = 0; i <= s->size; i++) {
            uint64_t word = slots[i];
            if (word && !(word & 1)) {
                const char *bytes;
                Py_ssize_t n;
                read_packed(slot_entry(word)->body, &bytes, &n);
                size_t size = sizeof(Entry) + length_bytes(n) + (size_t)n;
                Entry *e = PyMem_Malloc(size);
                if (!e) {
                    Py_DECREF(copy);
                    return PyErr_NoMemory();
                }
                memcpy(e, slot_entry(word), size);
                word = (uint64_t)(uintptr_t)e;
            }
            mine[i] = word;
            d->count += word != 0;
        }
    }
    return (PyObject *)copy;
}

static int append_member(PyObject *found, const char *bytes, Py_ssize_t n) {
    PyObject *member = PyBytes_FromStringAndSize(bytes, n);
    if (!member || PyList_Append(found, member) < 0) {
        Py_XDECREF(member);
        return -1;
    }
    Py_DECREF(member);
    return 0;
}

/* SMEMBERS's reply: the members as RESP bulk strings in an array (RESP2) or a set (RESP3),
 * resp.set_of_bulks's bytes, written here without a bytes object per member. */
static PyObject *ms_reply(MemberSet *self, PyObject *proto_arg) {
    long proto = PyLong_AsLong(proto_arg);
    if (proto == -1 && PyErr_Occurred()) {
        return NULL;
    }
    const Members *s = &self->s;
    Walk w;
    const char *bytes;
    Py_ssize_t n;
    size_t total = 24; /* the header */
    walk_start(&w, s);
    while (walk_next(&w, &bytes, &n)) {
        total += 1 + 20 + 2 + (size_t)n + 2;
    }
    PyObject *reply = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (!reply) {
        return NULL;
    }
    char *start = PyBytes_AS_STRING(reply), *out = start;
    out += sprintf(out, "%c%zd\r\n", proto == 2 ? '*' : '~', s->count);
    walk_start(&w, s);
    while (walk_next(&w, &bytes, &n)) {
        *out++ = '$';
        out += format_int((int64_t)n, out);
        *out++ = '\r';
        *out++ = '\n';
        memcpy(out, bytes, (size_t)n);
        out += n;
        *out++ = '\r';
        *out++ = '\n';
    }
    if (_PyBytes_Resize(&reply, out - start) < 0) {
        return NULL;
    }
    return reply;
}

/* SINTER, SINTERCARD and SDIFF's loop: this set's members (in its order) that every one of
 * ``others`` holds (``present`` true) or none of them holds (false), at most ``limit`` of them
 * (0: all). */
static PyObject *ms_select(MemberSet *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "select(others: list[MemberSet], present, limit)");
        return NULL;
    }
    PyObject *others = args[0];
    int present = PyObject_IsTrue(args[1]);
    Py_ssize_t limit = PyLong_AsSsize_t(args[2]);
    if (present < 0 || (limit == -1 && PyErr_Occurred())) {
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(others);
    for (Py_ssize_t i = 0; i < count; i++) {
        if (Py_TYPE(PyList_GET_ITEM(others, i)) != &MemberSetType) {
            PyErr_SetString(PyExc_TypeError, "select: others are MemberSets");
            return NULL;
        }
    }
    PyObject *found = PyList_New(0);
    if (!found) {
        return NULL;
    }
    Walk w;
    const char *bytes;
    Py_ssize_t n, gap;
    walk_start(&w, &self->s);
    while ((!limit || PyList_GET_SIZE(found) < limit) && walk_next(&w, &bytes, &n)) {
        Probe p;
        probe_start(&p, bytes, n);
        int keep = 1;
        for (Py_ssize_t i = 0; i < count && keep; i++) {
            const Members *other = &((MemberSet *)PyList_GET_ITEM(others, i))->s;
            keep = (probe_find(other, &p, &gap) >= 0) == present;
        }
        if (keep && append_member(found, bytes, n) < 0) {
            Py_DECREF(found);
            return NULL;
        }
    }
    return found;
}

static inline uint64_t reverse_bits(uint64_t v, unsigned bits) {
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
    v = ((v >> 8) & 0x00FF00FF00FF00FFULL) | ((v & 0x00FF00FF00FF00FFULL) << 8);
    v = ((v >> 16) & 0x0000FFFF0000FFFFULL) | ((v & 0x0000FFFF0000FFFFULL) << 16);
    v = (v >> 32) | (v << 32);
    return bits ? v >> (64 - bits) : 0;
}

/* Append the members whose home is ``home`` (they lie in the run starting there). */
static int extend_home(const Members *s, size_t home, PyObject *found) {
    const uint64_t *slots = s->data;
    size_t mask = s->size;
    for (size_t i = home; slots[i]; i = (i + 1) & mask) {
        if ((slot_hash(slots[i]) & mask) == home) {
            char scratch[8];
            const char *bytes;
            Py_ssize_t n;
            slot_member(slots[i], scratch, &bytes, &n);
            if (append_member(found, bytes, n) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* One SSCAN call, as KeyTable.walk: a hash table's home slots from ``cursor`` in reverse-binary
 * order until ``count`` members were seen or 10 * ``count`` slots visited; the next cursor. A
 * compact set gives every member and cursor 0. */
static PyObject *ms_walk(MemberSet *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyList_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "walk(cursor, count, found: list)");
        return NULL;
    }
    unsigned long long cursor = PyLong_AsUnsignedLongLongMask(args[0]);
    Py_ssize_t count = PyLong_AsSsize_t(args[1]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    PyObject *found = args[2];
    const Members *s = &self->s;
    if (s->kind != HASHTABLE) {
        Walk w;
        const char *bytes;
        Py_ssize_t n;
        walk_start(&w, s);
        while (walk_next(&w, &bytes, &n)) {
            if (append_member(found, bytes, n) < 0) {
                return NULL;
            }
        }
        return PyLong_FromLong(0);
    }
    if (!s->count) {
        return PyLong_FromLong(0);
    }
    size_t mask = s->size;
    unsigned bits = 0;
    while ((((size_t)1) << bits) <= mask) {
        bits++;
    }
    uint64_t position = reverse_bits(cursor & mask, bits);
    Py_ssize_t budget = count * 10;
    for (;;) {
        if (extend_home(s, (size_t)reverse_bits(position, bits), found) < 0) {
            return NULL;
        }
        position++;
        if (position > mask) {
            return PyLong_FromLong(0);
        }
        if (budget <= 0 || PyList_GET_SIZE(found) >= count) {
            return PyLong_FromUnsignedLongLong(reverse_bits(position, bits));
        }
        budget--;
    }
}

/* What the allocator holds for a block of ``size`` bytes: pymalloc's 16-byte steps up to 512,
 * malloc's 16-byte chunks and 8-byte header above. */
static size_t block_bytes(size_t size) {
    return size <= 512 ? round16(size) : round16(size + 8);
}

static PyObject *ms_sizeof(MemberSet *self, PyObject *Py_UNUSED(ignored)) {
    const Members *s = &self->s;
    size_t total = block_bytes(sizeof(MemberSet));
    if (s->kind != HASHTABLE) {
        total += s->room ? block_bytes((size_t)s->room * 16) : 0;
    } else if (s->data) {
        const uint64_t *slots = s->data;
        total += block_bytes((s->size + 1) * sizeof(uint64_t));
        for (size_t i = 0; i <= s->size; i++) {
            if (slots[i] && !(slots[i] & 1)) {
                const char *bytes;
                Py_ssize_t n;
                read_packed(slot_entry(slots[i])->body, &bytes, &n);
                total += block_bytes(sizeof(Entry) + length_bytes(n) + (size_t)n);
            }
        }
    }
    return PyLong_FromSize_t(total);
}

static PyMethodDef ms_methods[] = {
    {"add", (PyCFunction)ms_add, METH_O,
     "Add a member in the current form; whether it was new (ValueError: a non-integer to an "
     "intset)."},
    {"discard", (PyCFunction)ms_discard, METH_O, "Remove a member; whether it was there."},
    {"convert", (PyCFunction)ms_convert, METH_O,
     "Take form ``kind`` (ValueError: an intset of a non-integer)."},
    {"members", (PyCFunction)ms_members, METH_NOARGS, "The members in the set's order."},
    {"random_member", (PyCFunction)ms_random_member, METH_NOARGS,
     "A uniformly random member (KeyError when empty)."},
    {"pop_random", (PyCFunction)ms_pop_random, METH_NOARGS,
     "Remove and return a uniformly random member (KeyError when empty)."},
    {"integer_width", (PyCFunction)ms_integer_width, METH_NOARGS,
     "An intset's widest member in decimal (0 when empty)."},
    {"all_integers", (PyCFunction)ms_all_integers, METH_NOARGS,
     "Whether every member is an integer an intset can hold."},
    {"copy", (PyCFunction)ms_copy, METH_NOARGS, "The same members in the same form."},
    {"walk", (PyCFunction)(void (*)(void))ms_walk, METH_FASTCALL, "One SSCAN call."},
    {"reply", (PyCFunction)ms_reply, METH_O,
     "The members as a RESP set reply (an array in RESP2) for protocol ``proto``."},
    {"select", (PyCFunction)(void (*)(void))ms_select, METH_FASTCALL,
     "The members every other set holds (or none does), at most ``limit`` (0: all)."},
    {"__sizeof__", (PyCFunction)ms_sizeof, METH_NOARGS,
     "The bytes the allocators hold for the set."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef ms_fields[] = {
    {"kind", T_UBYTE, offsetof(MemberSet, s) + offsetof(Members, kind), READONLY,
     "The form: INTSET, LISTPACK or HASHTABLE (0, 1, 2)."},
    {NULL, 0, 0, 0, NULL},
};

static PySequenceMethods ms_as_sequence = {
    .sq_length = (lenfunc)ms_len,
    .sq_contains = (objobjproc)ms_contains,
};

static PyTypeObject MemberSetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "brook.types._member_set.MemberSet",
    .tp_doc = "A set's members, packed in Redis's three forms.",
    .tp_basicsize = sizeof(MemberSet),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = ms_new,
    .tp_dealloc = (destructor)ms_dealloc,
    .tp_iter = (getiterfunc)ms_iter,
    .tp_methods = ms_methods,
    .tp_members = ms_fields,
    .tp_as_sequence = &ms_as_sequence,
};

static struct PyModuleDef member_set_module = {
    PyModuleDef_HEAD_INIT, "_member_set", "A set's members, packed, in C.", -1, NULL,
};

PyMODINIT_FUNC PyInit__member_set(void) {
    rng_state = ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^ (uint64_t)(uintptr_t)&rng_state;
    if (!rng_state) {
        rng_state = 0x9E3779B97F4A7C15ULL;
    }
    if (PyType_Ready(&MemberSetType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&member_set_module);
    if (!module) {
        return NULL;
    }
    Py_INCREF(&MemberSetType);
    if (PyModule_AddObject(module, "MemberSet", (PyObject *)&MemberSetType) < 0) {
        Py_DECREF(&MemberSetType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
