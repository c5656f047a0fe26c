/* A database's keys: per key its value and its access field, in one block.
 *
 * The Python twin is brook.types.keytable.KeyTable (a dict of values, a dict of access fields
 * and a ScanIndex); docs/architecture.md, "Hand-written C", says why this one exists: a Python
 * dict pair costs a key object, a value object and two dict slots per key (180 bytes for a
 * small string key), and the table below costs one block and one slot.
 *
 * Layout. Each entry is one PyMem block: its hash, its access field, the key's bytes and then
 * either the value's bytes (a ``bytes`` of at most EMBED_MAX bytes, Redis's embstr limit) or a
 * reference to the value object. The slots are a power-of-two array of entry pointers with
 * linear probing; deletion shifts the entries after the hole back (no tombstones), so every
 * entry lies in the unbroken run of occupied slots that starts at its home slot
 * (hash & mask). That invariant is what SCAN needs: the cursor is Redis's reverse-binary
 * count over home slots, and a home slot's keys are found by walking its run, so the walk has
 * dictScan's guarantees across resizes (brook/commands/scan.py explains the scheme).
 *
 * The access field is Redis's 24-bit object field: the LRU clock (seconds, low 24 bits) or,
 * under an LFU policy, the minute of the last decrement (16 bits) and a logarithmic counter
 * (8 bits). Storing a value counts as an access, as every command's write did before.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EMBED_MAX 44
#define MIN_SLOTS 8
#define FIELD_MASK 0xFFFFFFu
#define OBJECT_FLAG (1u << 24) /* the entry holds a reference, not bytes */
#define LFU_INIT_VAL 5

typedef struct {
    uint32_t hash;     /* the key's hash, low 32 bits */
    uint32_t field;    /* the access field, plus OBJECT_FLAG */
    uint32_t key_len;
    uint32_t val_len;  /* an embedded value's length */
    char data[];       /* the key, then the value's bytes or a PyObject* */
} Entry;

typedef struct {
    PyObject_HEAD
    Entry **slots;            /* NULL while empty */
    size_t mask;              /* slots - 1 (0 while empty) */
    Py_ssize_t used;
    unsigned long long clock; /* the keyspace's LRU clock, in seconds */
    uint32_t *slot_counts;    /* keys per cluster hash slot, once track_slots() was called */
    char lfu;                 /* the field is LFU's */
    int log_factor;
    int decay_time;
} KeyTable;

/* -- random numbers (LFU's probabilistic increment, random_key) ----------------------------- */

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

/* -- entries -------------------------------------------------------------------------------- */

static inline PyObject *entry_object(const Entry *e) {
    PyObject *value;
    memcpy(&value, e->data + e->key_len, sizeof value);
    return value;
}

/* The value as a new reference. */
static PyObject *entry_value(const Entry *e) {
    if (e->field & OBJECT_FLAG) {
        PyObject *value = entry_object(e);
        Py_INCREF(value);
        return value;
    }
    return PyBytes_FromStringAndSize(e->data + e->key_len, e->val_len);
}

static void entry_free(Entry *e) {
    if (e->field & OBJECT_FLAG) {
        Py_DECREF(entry_object(e));
    }
    PyMem_Free(e);
}

static PyObject *entry_key(const Entry *e) {
    return PyBytes_FromStringAndSize(e->data, e->key_len);
}

/* -- access fields (Redis's evict.c) ------------------------------------------------------- */

static uint32_t lfu_minutes(const KeyTable *t) {
    return (uint32_t)((t->clock / 60) & 0xFFFF);
}

static uint32_t lfu_decayed(const KeyTable *t, uint32_t field) {
    uint32_t counter = field & 0xFF;
    if (!t->decay_time) {
        return counter;
    }
    uint32_t then = (field >> 8) & 0xFFFF, now = lfu_minutes(t);
    uint32_t elapsed = now >= then ? now - then : 0xFFFF - then + now;
    uint32_t periods = elapsed / (uint32_t)t->decay_time;
    return periods > counter ? 0 : counter - periods;
}

static uint32_t lfu_incremented(const KeyTable *t, uint32_t counter) {
    if (counter == 255) {
        return 255;
    }
    double base = counter > LFU_INIT_VAL ? counter - LFU_INIT_VAL : 0;
    double r = (double)(next_random() >> 11) / 9007199254740992.0; /* [0, 1) */
    return r < 1.0 / (base * t->log_factor + 1) ? counter + 1 : counter;
}

/* A new key's field. */
static uint32_t fresh_field(const KeyTable *t) {
    if (t->lfu) {
        return lfu_minutes(t) << 8 | LFU_INIT_VAL;
    }
    return (uint32_t)(t->clock & FIELD_MASK);
}

/* An existing key's field after one more access. */
static uint32_t accessed_field(const KeyTable *t, uint32_t field) {
    if (t->lfu) {
        return lfu_minutes(t) << 8 | lfu_incremented(t, lfu_decayed(t, field & FIELD_MASK));
    }
    return (uint32_t)(t->clock & FIELD_MASK);
}

static inline void touch_entry(const KeyTable *t, Entry *e) {
    e->field = (e->field & OBJECT_FLAG) | accessed_field(t, e->field);
}

/* -- cluster hash slots ------------------------------------------------------------------- */

/* A key's Redis Cluster hash slot, as brook.cluster.slots.key_slot computes it (tests compare
 * the two): CRC16 (XMODEM, polynomial 0x1021, from 0) of the key, or of its hash tag -- what
 * lies between the first '{' and the first '}' after it, when not empty. */
#define HASH_SLOTS 16384
static uint16_t crc16_table[256];

static void crc16_init(void) {
    for (unsigned i = 0; i < 256; i++) {
        uint16_t crc = (uint16_t)(i << 8);
        for (int bit = 0; bit < 8; bit++) {
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
        }
        crc16_table[i] = crc;
    }
}

static unsigned crc16_slot(const char *bytes, size_t size) {
    uint16_t crc = 0;
    for (size_t i = 0; i < size; i++) {
        crc = (uint16_t)((crc << 8) ^ crc16_table[((crc >> 8) ^ (uint8_t)bytes[i]) & 0xFF]);
    }
    return crc & (HASH_SLOTS - 1);
}

static unsigned hash_slot(const char *key, size_t size) {
    const char *open = memchr(key, '{', size);
    if (open) {
        size_t after = (size_t)(open - key) + 1;
        const char *close = memchr(open + 1, '}', size - after);
        if (close && close > open + 1) {
            return crc16_slot(open + 1, (size_t)(close - open - 1));
        }
    }
    return crc16_slot(key, size);
}

/* -- slots --------------------------------------------------------------------------------- */

static int key_parts(PyObject *key, const char **bytes, Py_ssize_t *size, uint32_t *hash) {
    if (!PyBytes_Check(key)) {
        PyErr_Format(PyExc_TypeError, "keys are bytes, not %.100s", Py_TYPE(key)->tp_name);
        return -1;
    }
    Py_hash_t h = PyObject_Hash(key); /* cached in the bytes object */
    if (h == -1 && PyErr_Occurred()) {
        return -1;
    }
    *bytes = PyBytes_AS_STRING(key);
    *size = PyBytes_GET_SIZE(key);
    *hash = (uint32_t)h;
    return 0;
}

/* The slot holding the key, or -1. */
static Py_ssize_t find(const KeyTable *t, const char *key, Py_ssize_t size, uint32_t hash) {
    if (!t->slots) {
        return -1;
    }
    size_t mask = t->mask, i = hash & mask;
    for (;;) {
        const Entry *e = t->slots[i];
        if (!e) {
            return -1;
        }
        if (e->hash == hash && e->key_len == (uint32_t)size && !memcmp(e->data, key, size)) {
            return (Py_ssize_t)i;
        }
        i = (i + 1) & mask;
    }
}

/* The slot holding ``key``: -1 when absent, -2 with an exception set (not bytes). */
static Py_ssize_t slot_of(const KeyTable *t, PyObject *key) {
    const char *bytes;
    Py_ssize_t size;
    uint32_t hash;
    if (key_parts(key, &bytes, &size, &hash) < 0) {
        return -2;
    }
    return find(t, bytes, size, hash);
}

static Entry *find_entry(const KeyTable *t, PyObject *key) {
    Py_ssize_t at = slot_of(t, key);
    return at < 0 ? NULL : t->slots[at];
}

static void place(Entry **slots, size_t mask, Entry *e) {
    size_t i = e->hash & mask;
    while (slots[i]) {
        i = (i + 1) & mask;
    }
    slots[i] = e;
}

static int resize(KeyTable *t, size_t count) {
    Entry **slots = PyMem_Calloc(count, sizeof(Entry *));
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    if (t->slots) {
        for (size_t i = 0; i <= t->mask; i++) {
            if (t->slots[i]) {
                place(slots, count - 1, t->slots[i]);
            }
        }
        PyMem_Free(t->slots);
    }
    t->slots = slots;
    t->mask = count - 1;
    return 0;
}

/* Empty the slot at ``i`` and shift back the entries of its run that may move closer home. */
static void remove_at(KeyTable *t, size_t i) {
    Entry **slots = t->slots;
    size_t mask = t->mask, j = i;
    for (;;) {
        j = (j + 1) & mask;
        Entry *e = slots[j];
        if (!e) {
            break;
        }
        size_t home = e->hash & mask;
        /* e stays when its home lies cyclically in (i, j] */
        int stays = i < j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            slots[i] = e;
            i = j;
        }
    }
    slots[i] = NULL;
    t->used--;
}

static void shrink_if_sparse(KeyTable *t) {
    size_t count = t->mask + 1;
    if (count <= MIN_SLOTS || (size_t)t->used * 8 >= count) {
        return;
    }
    size_t wanted = MIN_SLOTS;
    while (wanted < (size_t)t->used * 2) {
        wanted <<= 1;
    }
    if (resize(t, wanted) < 0) {
        PyErr_Clear(); /* a sparse table is still a correct one */
    }
}

/* The bytes an entry holding ``value`` after a key of ``key_size`` bytes needs; whether the
 * value is kept in the entry (a short ``bytes``) rather than referenced. */
static size_t entry_size(Py_ssize_t key_size, PyObject *value, int *embed) {
    *embed = PyBytes_CheckExact(value) && PyBytes_GET_SIZE(value) <= EMBED_MAX;
    return sizeof(Entry) + (size_t)key_size
           + (*embed ? (size_t)PyBytes_GET_SIZE(value) : sizeof(PyObject *));
}

/* Write the value part of an entry sized by entry_size; the field's access bits are the
 * caller's. */
static void put_value(Entry *e, PyObject *value, int embed) {
    if (embed) {
        e->field &= FIELD_MASK;
        e->val_len = (uint32_t)PyBytes_GET_SIZE(value);
        memcpy(e->data + e->key_len, PyBytes_AS_STRING(value), e->val_len);
    } else {
        e->field |= OBJECT_FLAG;
        e->val_len = 0;
        Py_INCREF(value);
        memcpy(e->data + e->key_len, &value, sizeof value);
    }
}

/* Replace the value of the entry in slot ``at``, in its block when the allocator can (a SET
 * or INCR of a value of about the same size moves nothing). */
static int replace(KeyTable *t, Py_ssize_t at, PyObject *value) {
    Entry *old = t->slots[at];
    PyObject *previous = old->field & OBJECT_FLAG ? entry_object(old) : NULL;
    int embed;
    Entry *e = PyMem_Realloc(old, entry_size(old->key_len, value, &embed));
    if (!e) {
        PyErr_NoMemory(); /* the old entry stands */
        return -1;
    }
    t->slots[at] = e;
    e->field = accessed_field(t, e->field);
    put_value(e, value, embed);
    Py_XDECREF(previous); /* last: freeing may run arbitrary code */
    return 0;
}

static int store(KeyTable *t, PyObject *key, PyObject *value) {
    const char *bytes;
    Py_ssize_t size;
    uint32_t hash;
    if (key_parts(key, &bytes, &size, &hash) < 0) {
        return -1;
    }
    Py_ssize_t at = find(t, bytes, size, hash);
    if (at >= 0) {
        return replace(t, at, value);
    }
    if (size > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "key too long");
        return -1;
    }
    if (!t->slots || (size_t)(t->used + 1) * 4 > (t->mask + 1) * 3) {
        if (resize(t, t->slots ? (t->mask + 1) * 2 : MIN_SLOTS) < 0) {
            return -1;
        }
    }
    int embed;
    Entry *e = PyMem_Malloc(entry_size(size, value, &embed));
    if (!e) {
        PyErr_NoMemory();
        return -1;
    }
    e->hash = hash;
    e->key_len = (uint32_t)size;
    memcpy(e->data, bytes, (size_t)size);
    e->field = fresh_field(t);
    put_value(e, value, embed);
    place(t->slots, t->mask, e);
    t->used++;
    if (t->slot_counts) {
        t->slot_counts[hash_slot(bytes, (size_t)size)]++;
    }
    return 0;
}

static int discard(KeyTable *t, PyObject *key) {
    Py_ssize_t at = slot_of(t, key);
    if (at == -2) {
        return -1;
    }
    if (at < 0) {
        PyErr_SetObject(PyExc_KeyError, key);
        return -1;
    }
    Entry *e = t->slots[at];
    if (t->slot_counts) {
        t->slot_counts[hash_slot(e->data, e->key_len)]--;
    }
    remove_at(t, (size_t)at);
    shrink_if_sparse(t);
    entry_free(e);
    return 0;
}

static void clear_entries(KeyTable *t) {
    Entry **slots = t->slots;
    size_t count = slots ? t->mask + 1 : 0;
    t->slots = NULL;
    t->mask = 0;
    t->used = 0;
    if (t->slot_counts) {
        memset(t->slot_counts, 0, HASH_SLOTS * sizeof(uint32_t));
    }
    for (size_t i = 0; i < count; i++) {
        if (slots[i]) {
            entry_free(slots[i]);
        }
    }
    PyMem_Free(slots);
}

/* -- the type ------------------------------------------------------------------------------ */

static PyObject *kt_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    if (PyTuple_GET_SIZE(args) || (kwargs && PyDict_GET_SIZE(kwargs))) {
        PyErr_SetString(PyExc_TypeError, "KeyTable() takes no arguments");
        return NULL;
    }
    KeyTable *t = PyObject_GC_New(KeyTable, type);
    if (!t) {
        return NULL;
    }
    t->slots = NULL;
    t->mask = 0;
    t->used = 0;
    t->clock = 0;
    t->slot_counts = NULL;
    t->lfu = 0;
    t->log_factor = 10;
    t->decay_time = 1;
    PyObject_GC_Track(t);
    return (PyObject *)t;
}

static int kt_traverse(KeyTable *t, visitproc visit, void *arg) {
    if (t->slots) {
        for (size_t i = 0; i <= t->mask; i++) {
            Entry *e = t->slots[i];
            if (e && e->field & OBJECT_FLAG) {
                Py_VISIT(entry_object(e));
            }
        }
    }
    return 0;
}

static int kt_clear(KeyTable *t) {
    clear_entries(t);
    return 0;
}

static void kt_dealloc(KeyTable *t) {
    PyObject_GC_UnTrack(t);
    clear_entries(t);
    PyMem_Free(t->slot_counts);
    PyObject_GC_Del(t);
}

static Py_ssize_t kt_len(KeyTable *t) {
    return t->used;
}

static PyObject *kt_subscript(KeyTable *t, PyObject *key) {
    Py_ssize_t at = slot_of(t, key);
    if (at == -2) {
        return NULL;
    }
    if (at < 0) {
        PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    return entry_value(t->slots[at]);
}

static int kt_ass_subscript(KeyTable *t, PyObject *key, PyObject *value) {
    return value ? store(t, key, value) : discard(t, key);
}

static int kt_contains(KeyTable *t, PyObject *key) {
    Py_ssize_t at = slot_of(t, key);
    return at == -2 ? -1 : at >= 0;
}

static PyObject *kt_keys(KeyTable *t, PyObject *Py_UNUSED(ignored)) {
    PyObject *keys = PyList_New(t->used);
    if (!keys) {
        return NULL;
    }
    Py_ssize_t n = 0;
    for (size_t i = 0; t->slots && i <= t->mask; i++) {
        if (t->slots[i]) {
            PyObject *key = entry_key(t->slots[i]);
            if (!key) {
                Py_DECREF(keys);
                return NULL;
            }
            PyList_SET_ITEM(keys, n++, key);
        }
    }
    return keys;
}

/* Iterating gives the keys present when it began: writes during the loop cannot disturb it. */
static PyObject *kt_iter(KeyTable *t) {
    PyObject *keys = kt_keys(t, NULL);
    if (!keys) {
        return NULL;
    }
    PyObject *it = PyObject_GetIter(keys);
    Py_DECREF(keys);
    return it;
}

static PyObject *kt_get(KeyTable *t, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "get(key, default=None)");
        return NULL;
    }
    Py_ssize_t at = slot_of(t, args[0]);
    if (at == -2) {
        return NULL;
    }
    if (at < 0) {
        PyObject *fallback = nargs == 2 ? args[1] : Py_None;
        Py_INCREF(fallback);
        return fallback;
    }
    return entry_value(t->slots[at]);
}

static PyObject *kt_fetch(KeyTable *t, PyObject *key) {
    Py_ssize_t at = slot_of(t, key);
    if (at == -2) {
        return NULL;
    }
    if (at < 0) {
        Py_RETURN_NONE;
    }
    Entry *e = t->slots[at];
    touch_entry(t, e);
    return entry_value(e);
}

static PyObject *kt_touch(KeyTable *t, PyObject *key) {
    Entry *e = find_entry(t, key);
    if (!e) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_FALSE;
    }
    touch_entry(t, e);
    Py_RETURN_TRUE;
}

static PyObject *kt_access(KeyTable *t, PyObject *key) {
    Entry *e = find_entry(t, key);
    if (!e) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    return PyLong_FromUnsignedLong(e->field & FIELD_MASK);
}

static PyObject *kt_set_access(KeyTable *t, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "set_access(key, field)");
        return NULL;
    }
    unsigned long field = PyLong_AsUnsignedLong(args[1]);
    if (field == (unsigned long)-1 && PyErr_Occurred()) {
        return NULL;
    }
    Entry *e = find_entry(t, args[0]);
    if (e) {
        e->field = (e->field & OBJECT_FLAG) | ((uint32_t)field & FIELD_MASK);
    } else if (PyErr_Occurred()) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *kt_configure(KeyTable *t, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "configure(lfu, log_factor, decay_time)");
        return NULL;
    }
    int lfu = PyObject_IsTrue(args[0]);
    long log_factor = PyLong_AsLong(args[1]);
    long decay_time = PyLong_AsLong(args[2]);
    if (lfu < 0 || PyErr_Occurred()) {
        return NULL;
    }
    if (log_factor < 0 || log_factor > INT_MAX || decay_time < 0 || decay_time > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "log_factor and decay_time are non-negative ints");
        return NULL;
    }
    t->log_factor = (int)log_factor;
    t->decay_time = (int)decay_time;
    if (lfu != t->lfu) { /* the fields mean something else now: every key starts afresh */
        t->lfu = (char)lfu;
        uint32_t field = fresh_field(t);
        for (size_t i = 0; t->slots && i <= t->mask; i++) {
            Entry *e = t->slots[i];
            if (e) {
                e->field = (e->field & OBJECT_FLAG) | field;
            }
        }
    }
    Py_RETURN_NONE;
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

/* Append the keys whose home is ``home`` (they lie in the run starting there). */
static int extend_home(const KeyTable *t, size_t home, PyObject *found) {
    size_t mask = t->mask;
    for (size_t i = home; t->slots[i]; i = (i + 1) & mask) {
        const Entry *e = t->slots[i];
        if ((e->hash & mask) == home) {
            PyObject *key = entry_key(e);
            if (!key || PyList_Append(found, key) < 0) {
                Py_XDECREF(key);
                return -1;
            }
            Py_DECREF(key);
        }
    }
    return 0;
}

/* One SCAN call, as ScanIndex.walk: visit home slots from ``cursor`` in reverse-binary order
 * until ``count`` keys were seen or 10 * ``count`` slots were visited; the next cursor. */
static PyObject *kt_walk(KeyTable *t, PyObject *const *args, Py_ssize_t nargs) {
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
    if (!t->used) {
        return PyLong_FromLong(0);
    }
    size_t mask = t->mask;
    unsigned bits = 0;
    while ((((size_t)1) << bits) <= mask) {
        bits++;
    }
    uint64_t position = reverse_bits(cursor & mask, bits);
    Py_ssize_t budget = count * 10;
    for (;;) {
        if (extend_home(t, (size_t)reverse_bits(position, bits), found) < 0) {
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

static PyObject *kt_random_key(KeyTable *t, PyObject *Py_UNUSED(ignored)) {
    if (!t->used) {
        Py_RETURN_NONE;
    }
    for (;;) { /* at least one slot in eight is used (shrink_if_sparse) */
        const Entry *e = t->slots[next_random() & t->mask];
        if (e) {
            return entry_key(e);
        }
    }
}

/* Count keys per hash slot from now on (cluster mode: COUNTKEYSINSLOT, GETKEYSINSLOT and
 * SETSLOT NODE ask of one slot, and resharding asks of thousands). The argument is the
 * twin's slot function; here hash_slot does its work. */
static PyObject *kt_track_slots(KeyTable *t, PyObject *Py_UNUSED(slot_of)) {
    if (!t->slot_counts) {
        t->slot_counts = PyMem_Calloc(HASH_SLOTS, sizeof(uint32_t));
        if (!t->slot_counts) {
            return PyErr_NoMemory();
        }
        for (size_t i = 0; t->slots && i <= t->mask; i++) {
            Entry *e = t->slots[i];
            if (e) {
                t->slot_counts[hash_slot(e->data, e->key_len)]++;
            }
        }
    }
    Py_RETURN_NONE;
}

static int slot_argument(const KeyTable *t, PyObject *arg, long *slot) {
    if (!t->slot_counts) {
        PyErr_SetString(PyExc_RuntimeError, "track_slots() was not called");
        return -1;
    }
    *slot = PyLong_AsLong(arg);
    if (*slot == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (*slot < 0 || *slot >= HASH_SLOTS) {
        PyErr_SetString(PyExc_ValueError, "not a hash slot");
        return -1;
    }
    return 0;
}

static PyObject *kt_slot_count(KeyTable *t, PyObject *arg) {
    long slot;
    if (slot_argument(t, arg, &slot) < 0) {
        return NULL;
    }
    return PyLong_FromUnsignedLong(t->slot_counts[slot]);
}

/* Up to ``limit`` keys of a slot (-1: all), by a walk that stops when it has the slot's
 * count. */
static PyObject *kt_slot_keys(KeyTable *t, PyObject *const *args, Py_ssize_t nargs) {
    long slot;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "slot_keys(slot, limit)");
        return NULL;
    }
    if (slot_argument(t, args[0], &slot) < 0) {
        return NULL;
    }
    Py_ssize_t limit = PyLong_AsSsize_t(args[1]);
    if (limit == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_ssize_t wanted = (Py_ssize_t)t->slot_counts[slot];
    if (limit >= 0 && limit < wanted) {
        wanted = limit;
    }
    PyObject *found = PyList_New(0);
    if (!found) {
        return NULL;
    }
    for (size_t i = 0; t->slots && i <= t->mask && PyList_GET_SIZE(found) < wanted; i++) {
        Entry *e = t->slots[i];
        if (!e || hash_slot(e->data, e->key_len) != (unsigned)slot) {
            continue;
        }
        PyObject *key = entry_key(e);
        if (!key || PyList_Append(found, key) < 0) {
            Py_XDECREF(key);
            Py_DECREF(found);
            return NULL;
        }
        Py_DECREF(key);
    }
    return found;
}

static PyMethodDef kt_methods[] = {
    {"track_slots", (PyCFunction)kt_track_slots, METH_O,
     "Count keys per cluster hash slot from now on."},
    {"slot_count", (PyCFunction)kt_slot_count, METH_O, "The keys of a hash slot."},
    {"slot_keys", (PyCFunction)(void (*)(void))kt_slot_keys, METH_FASTCALL,
     "Up to limit keys of a hash slot (-1: all)."},
    {"get", (PyCFunction)(void (*)(void))kt_get, METH_FASTCALL,
     "The value, or the default (not an access)."},
    {"fetch", (PyCFunction)kt_fetch, METH_O, "The value or None, counted as an access."},
    {"touch", (PyCFunction)kt_touch, METH_O, "Count an access; whether the key is present."},
    {"access", (PyCFunction)kt_access, METH_O, "The key's access field, or None."},
    {"set_access", (PyCFunction)(void (*)(void))kt_set_access, METH_FASTCALL,
     "Put back an access field (not an access)."},
    {"configure", (PyCFunction)(void (*)(void))kt_configure, METH_FASTCALL,
     "What the access field holds: LFU or not, and LFU's parameters."},
    {"keys", (PyCFunction)kt_keys, METH_NOARGS, "The keys, as a list."},
    {"walk", (PyCFunction)(void (*)(void))kt_walk, METH_FASTCALL, "One SCAN call."},
    {"random_key", (PyCFunction)kt_random_key, METH_NOARGS, "A random key, or None."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef kt_members[] = {
    {"clock", T_ULONGLONG, offsetof(KeyTable, clock), 0, "The LRU clock, in seconds."},
    {"lfu", T_BOOL, offsetof(KeyTable, lfu), READONLY, "Whether fields are LFU's."},
    {NULL, 0, 0, 0, NULL},
};

static PyMappingMethods kt_as_mapping = {
    .mp_length = (lenfunc)kt_len,
    .mp_subscript = (binaryfunc)kt_subscript,
    .mp_ass_subscript = (objobjargproc)kt_ass_subscript,
};

static PySequenceMethods kt_as_sequence = {
    .sq_length = (lenfunc)kt_len,
    .sq_contains = (objobjproc)kt_contains,
};

static PyTypeObject KeyTableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "brook.types._keytable.KeyTable",
    .tp_doc = "A database's keys: value and access field per key.",
    .tp_basicsize = sizeof(KeyTable),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = kt_new,
    .tp_dealloc = (destructor)kt_dealloc,
    .tp_traverse = (traverseproc)kt_traverse,
    .tp_clear = (inquiry)kt_clear,
    .tp_iter = (getiterfunc)kt_iter,
    .tp_methods = kt_methods,
    .tp_members = kt_members,
    .tp_as_mapping = &kt_as_mapping,
    .tp_as_sequence = &kt_as_sequence,
};

static struct PyModuleDef keytable_module = {
    PyModuleDef_HEAD_INIT, "_keytable", "A database's keys, in C.", -1, NULL,
};

PyMODINIT_FUNC PyInit__keytable(void) {
    rng_state = ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^ (uint64_t)(uintptr_t)&rng_state;
    if (!rng_state) {
        rng_state = 0x9E3779B97F4A7C15ULL;
    }
    crc16_init();
    if (PyType_Ready(&KeyTableType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&keytable_module);
    if (!module) {
        return NULL;
    }
    Py_INCREF(&KeyTableType);
    if (PyModule_AddObject(module, "KeyTable", (PyObject *)&KeyTableType) < 0) {
        Py_DECREF(&KeyTableType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
