/* SortedKeys: a sorted sequence of distinct byte strings, stored packed.
 *
 * The sorted set's order keys (brook/types/zset.py) live here on the compiled build; the pure
 * build keeps a sortedcontainers.SortedList (and, for a listpack, one pickled ``bytes``),
 * which the tests compare this type with. Keys compare as Python compares bytes: memcmp over
 * the shorter length, then the shorter first.
 *
 * Layout. Keys are copied into *leaves*: one PyMem block each, a 12-byte header, a table of
 * 2-byte offsets (``off[i]``: in 13 bits where key i starts, which is where key i - 1 ends;
 * in the top 3 the count of zero bytes that ended key i's first eight and are not stored: a
 * small integer score's prefix is 1-2 bytes) and the keys' bytes back to back. A leaf holds
 * at most LEAF_MAX_KEYS keys and LEAF_MAX_BYTES bytes, and a key stored in over BIG_KEY bytes
 * gets a leaf to itself, so offsets stay under 8 KB; a key costs its length plus two bytes,
 * less its prefix's zeros, against a ``bytes`` object's 33-byte header and a list slot for the
 * SortedList. The object holds the leaf pointers in order, and a Fenwick tree of the leaves'
 * counts for ranks after them in the same block (a single leaf's pointer is in the object).
 * The object is 64 bytes; the compiled build's SortedSet (brook/types/zset.py) is a Python
 * subclass adding no fields, so a small sorted set is that object and one leaf.
 *
 * Why two levels and not a B+tree: the leaves do what a B+tree's leaves would, and the one
 * level above them is a plain array, which a binary search over the leaves' last keys reads
 * for a key lookup (log2 of the leaves' count, 13 for a million keys), and the Fenwick tree
 * answers "how many keys before leaf j" and "which leaf holds rank r" in O(log leaves) with a
 * counter update per add or remove. What the array costs is a memmove of leaf pointers when
 * a leaf splits or goes (8 bytes per 64-128 keys: 80 KB for a million keys, once per ~64
 * inserts), and the tree is rebuilt in O(leaves) on the next rank lookup after such a change
 * (sortedcontainers' scheme, with the same amortised cost). A B+tree saves those linear
 * steps but needs counted inner nodes kept right through splits and merges: more code to
 * get wrong for a gain that only shows past tens of millions of keys.
 *
 * Within a leaf an add or remove moves the keys after it (at most a few KB: memmove speed);
 * a leaf that outgrows its limits splits in two, except that an add past the last key (or
 * before the first) starts a new leaf, so keys added in ascending order -- timestamps as
 * scores, a job queue's usual pattern -- fill leaves instead of leaving them half full. A
 * leaf that falls below LEAF_MIN_KEYS merges with a neighbour when the two fit in one.
 *
 * Nothing here calls back into Python while the structure is being changed (keys are bytes,
 * compared in C), and iterators re-find their place by rank after any change, so a change
 * during iteration never reads freed memory (it may skip or repeat keys, as a list's would).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include "structmember.h"
#include <string.h>

#define LEAF_MAX_KEYS 128
#define LEAF_MAX_BYTES 4096
#define LEAF_MIN_KEYS 32
#define BUILD_FILL_KEYS 96    /* a leaf built from a sorted list: room for adds left */
#define BUILD_FILL_BYTES 3072
#define MAX_KEY ((Py_ssize_t)1 << 30) /* offsets are 32-bit: a leaf stays under 4 GB */
#define LINEAR_LEAVES 8       /* up to this many leaves, ranks are summed without the tree */

typedef struct {
    uint32_t used;  /* bytes of keys */
    uint32_t dcap;  /* room for keys' bytes, after off[kcap] */
    uint16_t count; /* keys */
    uint16_t kcap;  /* room in off[] */
    uint16_t off[]; /* OFF_MASK: where key i starts; above: the zero bytes its prefix dropped */
} Leaf;

#define OFF_BITS 13
#define OFF_MASK ((1u << OFF_BITS) - 1)
#define BIG_KEY 1024 /* a stored key longer than this gets a leaf of its own */

typedef struct {
    PyObject_HEAD
    union {
        Leaf **many;      /* while cap > 1: cap leaf pointers in order, then the rank tree */
        Leaf *one;        /* while cap is 1: the only leaf (NULL when empty) */
    };
    Py_ssize_t size;      /* keys */
    uint64_t version;     /* changes with every change of the keys (iterators check it) */
    struct MemberIndex *index; /* NULL, or UNBUILT, or the member index (below) */
    PyObject *zeros;      /* a sorted set's members scored -0 (brook.types.zset), or NULL */
    uint32_t nleaves;
    uint32_t cap : 31;    /* room for leaf pointers */
    uint32_t tree_ok : 1; /* the rank tree is current */
} SortedKeys;

/* The leaf pointers, in order. */
static inline Leaf **LEAVES(SortedKeys *s) {
    return s->cap > 1 ? s->many : &s->one;
}

/* The rank tree: a Fenwick tree of the leaves' counts, 1-based, after the leaf pointers (cap
 * + 1 entries); used past LINEAR_LEAVES leaves, so only while cap > 1. */
static inline Py_ssize_t *TREE(SortedKeys *s) {
    return (Py_ssize_t *)(s->many + s->cap);
}

static PyTypeObject SortedKeysType;
static PyTypeObject SortedKeysIterType;

/* -- leaves ---------------------------------------------------------------------------------- */

static inline char *leaf_data(Leaf *l) {
    return (char *)(l->off + l->kcap);
}

static inline uint32_t off_at(const Leaf *l, uint32_t i) {
    return l->off[i] & OFF_MASK;
}

/* The zero bytes dropped from the end of key i's 8-byte prefix. */
static inline unsigned dropped(const Leaf *l, uint32_t i) {
    return l->off[i] >> OFF_BITS;
}

static inline uint32_t key_start(const Leaf *l, uint32_t i) {
    return i < l->count ? off_at(l, i) : l->used;
}

/* Key i as stored (its prefix short of dropped(l, i) zero bytes). */
static inline const char *stored_at(Leaf *l, uint32_t i, Py_ssize_t *len) {
    *len = (Py_ssize_t)(key_start(l, i + 1) - off_at(l, i));
    return leaf_data(l) + off_at(l, i);
}

/* Key i's length as given. */
static inline Py_ssize_t key_len(const Leaf *l, uint32_t i) {
    return (Py_ssize_t)(key_start(l, i + 1) - off_at(l, i)) + dropped(l, i);
}

static inline size_t leaf_bytes(const Leaf *l) {
    return sizeof(Leaf) + (size_t)l->kcap * sizeof(uint16_t) + l->dcap;
}

static inline int compare(const char *a, Py_ssize_t alen, const char *b, Py_ssize_t blen) {
    int c = memcmp(a, b, (size_t)(alen < blen ? alen : blen));
    if (c) {
        return c;
    }
    return alen < blen ? -1 : alen > blen;
}

/* How many zero bytes end a key's first eight (at most 7; none for a key under 8 bytes): a
 * score's prefix often ends in zeros (every small integer's does), which are not stored. */
static inline unsigned trailing_zeros(const char *key, Py_ssize_t len) {
    unsigned t = 0;
    if (len >= 8) {
        while (t < 7 && !key[7 - t]) {
            t++;
        }
    }
    return t;
}

/* Key i compared with a key as given. */
static inline int compare_at(Leaf *l, uint32_t i, const char *key, Py_ssize_t len) {
    Py_ssize_t n;
    const char *k = stored_at(l, i, &n);
    unsigned t = dropped(l, i);
    if (!t) {
        return compare(k, n, key, len);
    }
    char head[8];
    memcpy(head, k, 8 - t);
    memset(head + 8 - t, 0, t);
    int c = memcmp(head, key, (size_t)(len < 8 ? len : 8));
    if (c || len < 8) {
        return c ? c : 1; /* a shorter ``key`` equal so far is a prefix of key i */
    }
    return compare(k + 8 - t, n - (8 - t), key + 8, len - 8);
}

/* Key i as given, into ``out`` (key_len bytes). */
static inline void copy_key(Leaf *l, uint32_t i, char *out) {
    Py_ssize_t n;
    const char *k = stored_at(l, i, &n);
    unsigned t = dropped(l, i);
    if (!t) {
        memcpy(out, k, (size_t)n);
        return;
    }
    memcpy(out, k, 8 - t);
    memset(out + 8 - t, 0, t);
    memcpy(out + 8, k + 8 - t, (size_t)n - (8 - t));
}

/* Key i's first 8 bytes (it has at least 8). */
static inline void copy_prefix(Leaf *l, uint32_t i, char *out) {
    unsigned t = dropped(l, i);
    memcpy(out, leaf_data(l) + off_at(l, i), 8 - t);
    memset(out + 8 - t, 0, t);
}

/* A leaf with room for ``count`` keys of ``used`` bytes, plus an eighth more when ``slack``
 * and the leaf is past pymalloc's small blocks (a small sorted set's one leaf stays exact:
 * growing it by a copy costs less than the room would); the block is rounded up to the
 * allocator's 16-byte step and the rounding given to the bytes. */
static Leaf *leaf_alloc(size_t count, size_t used, int slack) {
    size_t kcap = count ? count : 1, dcap = used;
    if (slack && sizeof(Leaf) + kcap * sizeof(uint16_t) + dcap > 512) {
        kcap += kcap / 8 + 1;
        dcap += dcap / 8 + 8;
    }
    size_t block = (sizeof(Leaf) + kcap * sizeof(uint16_t) + dcap + 15) & ~(size_t)15;
    Leaf *l = PyMem_Malloc(block);
    if (!l) {
        PyErr_NoMemory();
        return NULL;
    }
    l->count = 0;
    l->used = 0;
    l->kcap = (uint16_t)kcap;
    l->dcap = (uint32_t)(block - sizeof(Leaf) - kcap * sizeof(uint16_t));
    return l;
}

/* Append keys [a, b) of ``src`` to ``dst``, which has room for them. */
static void leaf_append_from(Leaf *dst, Leaf *src, uint32_t a, uint32_t b) {
    uint32_t from = key_start(src, a), to = key_start(src, b);
    memcpy(leaf_data(dst) + dst->used, leaf_data(src) + from, to - from);
    for (uint32_t i = a; i < b; i++) { /* the offset moves, its dropped count stays */
        dst->off[dst->count++] = (uint16_t)(src->off[i] - from + dst->used);
    }
    dst->used += to - from;
}

/* Store a key at ``at`` of ``data``, its prefix's last ``t`` zero bytes dropped; the bytes
 * stored. */
static inline uint32_t put_key(char *data, uint32_t at, const char *key, Py_ssize_t len,
                               unsigned t) {
    if (!t) {
        memcpy(data + at, key, (size_t)len);
        return (uint32_t)len;
    }
    memcpy(data + at, key, 8 - t);
    memcpy(data + at + 8 - t, key + 8, (size_t)len - 8);
    return (uint32_t)len - t;
}

static void leaf_append(Leaf *l, const char *key, Py_ssize_t len) {
    unsigned t = trailing_zeros(key, len);
    l->off[l->count++] = (uint16_t)(l->used | (t << OFF_BITS));
    l->used += put_key(leaf_data(l), l->used, key, len, t);
}

/* The first position whose key is >= ``key`` (> with ``right``). */
static uint32_t leaf_bisect(Leaf *l, const char *key, Py_ssize_t len, int right) {
    uint32_t lo = 0, hi = l->count;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        int c = compare_at(l, mid, key, len);
        if (c < 0 || (right && c == 0)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Insert ``key`` at position ``pos`` of *lp, growing it (a new block) when full. */
static int leaf_insert(Leaf **lp, uint32_t pos, const char *key, Py_ssize_t len) {
    Leaf *l = *lp;
    unsigned t = trailing_zeros(key, len);
    uint32_t n = (uint32_t)len - t;
    if (l->count + 1u > l->kcap || (size_t)l->used + n > l->dcap) {
        Leaf *g = leaf_alloc((size_t)l->count + 1, (size_t)l->used + n, 1);
        if (!g) {
            return -1;
        }
        leaf_append_from(g, l, 0, pos);
        leaf_append(g, key, len);
        leaf_append_from(g, l, pos, l->count);
        PyMem_Free(l);
        *lp = g;
        return 0;
    }
    uint32_t at = key_start(l, pos);
    char *data = leaf_data(l);
    memmove(data + at + n, data + at, l->used - at);
    put_key(data, at, key, len, t);
    for (uint32_t i = l->count; i > pos; i--) {
        l->off[i] = (uint16_t)(l->off[i - 1] + n);
    }
    l->off[pos] = (uint16_t)(at | (t << OFF_BITS));
    l->count++;
    l->used += n;
    return 0;
}

/* Remove positions [a, b) of *lp; a leaf left mostly empty moves to a smaller block. */
static void leaf_erase(Leaf **lp, uint32_t a, uint32_t b) {
    Leaf *l = *lp;
    uint32_t from = key_start(l, a), to = key_start(l, b), gone = to - from;
    char *data = leaf_data(l);
    memmove(data + from, data + to, l->used - to);
    for (uint32_t i = b; i < l->count; i++) {
        l->off[i - (b - a)] = (uint16_t)(l->off[i] - gone);
    }
    l->count = (uint16_t)(l->count - (b - a));
    l->used -= gone;
    if (l->count && (l->used * 4 < l->dcap || l->count * 4 < l->kcap) && leaf_bytes(l) > 256) {
        Leaf *small = leaf_alloc(l->count, l->used, 1);
        if (small) { /* else keep the large block: nothing is lost */
            leaf_append_from(small, l, 0, l->count);
            PyMem_Free(l);
            *lp = small;
        } else {
            PyErr_Clear();
        }
    }
}

/* An indexed SortedKeys whose member index (below) is not built yet. */
static char unbuilt_marker;
#define UNBUILT ((struct MemberIndex *)&unbuilt_marker)

static inline int index_built(const SortedKeys *s) {
    return s->index && s->index != UNBUILT;
}

/* -- the leaf array and the rank tree --------------------------------------------------------- */

static int reserve_leaves(SortedKeys *s, Py_ssize_t want) {
    if (want <= s->cap) {
        return 0;
    }
    Py_ssize_t cap = s->cap * 2 > want ? s->cap * 2 : want;
    if (cap < 4) {
        cap = 4;
    }
    if (cap >= (Py_ssize_t)1 << 30) {
        PyErr_NoMemory();
        return -1;
    }
    Leaf **grown = PyMem_Malloc((size_t)cap * sizeof(Leaf *) + (size_t)(cap + 1) * sizeof(Py_ssize_t));
    if (!grown) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(grown, LEAVES(s), (size_t)s->nleaves * sizeof(Leaf *));
    if (s->cap > 1) {
        PyMem_Free(s->many);
    }
    s->many = grown;
    s->cap = (uint32_t)cap;
    s->tree_ok = 0;
    return 0;
}

/* The leaves changed: the rank tree is built again when next needed. */
static inline void stale_tree(SortedKeys *s) {
    s->tree_ok = 0;
}

/* Put ``l`` at index j of the leaf array. */
static int insert_leaf(SortedKeys *s, Py_ssize_t j, Leaf *l) {
    if (reserve_leaves(s, s->nleaves + 1) < 0) {
        return -1;
    }
    memmove(LEAVES(s) + j + 1, LEAVES(s) + j, (size_t)(s->nleaves - j) * sizeof(Leaf *));
    LEAVES(s)[j] = l;
    s->nleaves++;
    stale_tree(s);
    return 0;
}

/* Drop leaves [a, b) from the array (already freed or moved). */
static void drop_leaves(SortedKeys *s, Py_ssize_t a, Py_ssize_t b) {
    memmove(LEAVES(s) + a, LEAVES(s) + b, (size_t)(s->nleaves - b) * sizeof(Leaf *));
    s->nleaves -= b - a;
    stale_tree(s);
}

static int build_tree(SortedKeys *s) {
    Py_ssize_t n = s->nleaves;
    Py_ssize_t *t = TREE(s);
    t[0] = 0;
    for (Py_ssize_t i = 1; i <= n; i++) {
        t[i] = LEAVES(s)[i - 1]->count;
    }
    for (Py_ssize_t i = 1; i <= n; i++) {
        Py_ssize_t parent = i + (i & -i);
        if (parent <= n) {
            t[parent] += t[i];
        }
    }
    s->tree_ok = 1;
    return 0;
}

/* Leaf j's count changed by ``delta``. */
static inline void counted(SortedKeys *s, Py_ssize_t j, Py_ssize_t delta) {
    s->size += delta;
    s->version++;
    if (s->tree_ok) {
        Py_ssize_t *tree = TREE(s);
        for (Py_ssize_t i = j + 1; i <= s->nleaves; i += i & -i) {
            tree[i] += delta;
        }
    }
}

/* The keys in leaves before leaf j; -1 on a memory error. */
static Py_ssize_t keys_before(SortedKeys *s, Py_ssize_t j) {
    if (j == s->nleaves) {
        return s->size;
    }
    if (s->nleaves <= LINEAR_LEAVES) {
        Py_ssize_t total = 0;
        for (Py_ssize_t i = 0; i < j; i++) {
            total += LEAVES(s)[i]->count;
        }
        return total;
    }
    if (!s->tree_ok && build_tree(s) < 0) {
        return -1;
    }
    Py_ssize_t total = 0, *tree = TREE(s);
    for (Py_ssize_t i = j; i > 0; i -= i & -i) {
        total += tree[i];
    }
    return total;
}

/* The leaf holding rank ``rank`` (0 <= rank < size) and the position in it. */
static int locate(SortedKeys *s, Py_ssize_t rank, Py_ssize_t *leaf, uint32_t *pos) {
    Py_ssize_t n = s->nleaves;
    if (rank < LEAVES(s)[0]->count) { /* the low end: pops, LIMIT 0 n */
        *leaf = 0;
        *pos = (uint32_t)rank;
        return 0;
    }
    Py_ssize_t last = LEAVES(s)[n - 1]->count;
    if (rank >= s->size - last) { /* the high end */
        *leaf = n - 1;
        *pos = (uint32_t)(rank - (s->size - last));
        return 0;
    }
    if (n <= LINEAR_LEAVES) {
        Py_ssize_t j = 0;
        while (rank >= LEAVES(s)[j]->count) {
            rank -= LEAVES(s)[j]->count;
            j++;
        }
        *leaf = j;
        *pos = (uint32_t)rank;
        return 0;
    }
    if (!s->tree_ok && build_tree(s) < 0) {
        return -1;
    }
    Py_ssize_t at = 0, step = 1, *tree = TREE(s);
    while (step * 2 <= n) {
        step *= 2;
    }
    for (; step; step /= 2) {
        if (at + step <= n && tree[at + step] <= rank) {
            at += step;
            rank -= tree[at];
        }
    }
    *leaf = at;
    *pos = (uint32_t)rank;
    return 0;
}

/* The first leaf whose last key is >= ``key`` (> with ``right``); nleaves when none is. */
static Py_ssize_t find_leaf(SortedKeys *s, const char *key, Py_ssize_t len, int right) {
    Py_ssize_t lo = 0, hi = s->nleaves;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        Leaf *l = LEAVES(s)[mid];
        int c = compare_at(l, l->count - 1u, key, len);
        if (c < 0 || (right && c == 0)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* The rank of the first key >= ``key`` (> with ``right``). */
static Py_ssize_t bisect(SortedKeys *s, const char *key, Py_ssize_t len, int right) {
    Py_ssize_t j = find_leaf(s, key, len, right);
    if (j == s->nleaves) {
        return s->size;
    }
    Py_ssize_t before = keys_before(s, j);
    if (before < 0) {
        return -1;
    }
    return before + leaf_bisect(LEAVES(s)[j], key, len, right);
}

/* Split leaf j in two (it has at least two keys). */
static int split_leaf(SortedKeys *s, Py_ssize_t j) {
    Leaf *l = LEAVES(s)[j];
    uint32_t m;
    if (l->count > LEAF_MAX_KEYS) {
        m = l->count / 2;
    } else { /* by bytes: the first key starting past the middle */
        m = 1;
        while (m < l->count - 1u && off_at(l, m) < l->used / 2) {
            m++;
        }
    }
    Leaf *left = leaf_alloc(m, off_at(l, m), 1);
    Leaf *right = left ? leaf_alloc(l->count - m, l->used - off_at(l, m), 1) : NULL;
    if (!right) {
        PyMem_Free(left);
        return -1;
    }
    leaf_append_from(left, l, 0, m);
    leaf_append_from(right, l, m, l->count);
    if (insert_leaf(s, j + 1, right) < 0) {
        PyMem_Free(left);
        PyMem_Free(right);
        return -1;
    }
    LEAVES(s)[j] = left;
    PyMem_Free(l);
    return 0;
}

/* Leaf j may have become small: merge it into a neighbour if the two fit in one leaf. */
static void maybe_merge(SortedKeys *s, Py_ssize_t j) {
    if (j < 0 || j >= s->nleaves) {
        return;
    }
    Leaf *l = LEAVES(s)[j];
    if (!l->count) {
        PyMem_Free(l);
        drop_leaves(s, j, j + 1);
        return;
    }
    if (l->count >= LEAF_MIN_KEYS || s->nleaves < 2) {
        return;
    }
    Py_ssize_t a = j + 1 < s->nleaves ? j : j - 1; /* merge leaves a and a + 1 */
    Leaf *x = LEAVES(s)[a], *y = LEAVES(s)[a + 1];
    if (x->count + y->count > LEAF_MAX_KEYS || (size_t)x->used + y->used > LEAF_MAX_BYTES) {
        return;
    }
    Leaf *both = leaf_alloc((size_t)x->count + y->count, (size_t)x->used + y->used, 1);
    if (!both) {
        PyErr_Clear(); /* two leaves stay two: still correct */
        return;
    }
    leaf_append_from(both, x, 0, x->count);
    leaf_append_from(both, y, 0, y->count);
    PyMem_Free(x);
    PyMem_Free(y);
    LEAVES(s)[a] = both;
    drop_leaves(s, a + 1, a + 2);
}

static void clear_all(SortedKeys *s) {
    for (Py_ssize_t i = 0; i < s->nleaves; i++) {
        PyMem_Free(LEAVES(s)[i]);
    }
    if (s->cap > 1) {
        PyMem_Free(s->many);
    }
    s->one = NULL;
    s->cap = 1;
    s->tree_ok = 0;
    s->nleaves = 0;
    s->size = 0;
    if (index_built(s)) {
        PyMem_Free(s->index);
        s->index = UNBUILT;
    }
    s->version++;
}

/* -- the member index ------------------------------------------------------------------------ *
 *
 * An indexed SortedKeys (a skiplist-encoded sorted set: every key is an 8-byte score prefix
 * then the member, and no member appears twice) finds a member's key without a walk. The
 * index holds no member: an open-addressing table (linear probing) of the members' 8-byte
 * prefixes, placed by the member's hash (Python's, so a bytes argument's cached hash serves),
 * with a one-byte tag of the hash beside each slot. A lookup takes each slot whose tag
 * matches, puts its prefix before the member and asks the leaves whether that key is there:
 * if it is, that is the member's key whoever's slot it was (two members with equal tags and
 * scores share a slot's meaning). Nine bytes a slot against a dict entry, a member object
 * and a key object: the table is what lets a large sorted set cost less than Redis's.
 *
 * Removal marks the slot GONE (the prefix and tag identify the slot to mark; if two slots hold
 * equal ones, marking either leaves the other reachable, since no EMPTY slot appears between
 * them until the next rebuild). The table is rebuilt from the leaves when GONE and live slots
 * fill three quarters of it, or when it is eight times too large. */

#define INDEX_EMPTY 0
#define INDEX_GONE 1
#define INDEX_MIN_SLOTS 16

typedef struct MemberIndex {
    size_t mask;   /* slots - 1 */
    size_t live;   /* slots holding a member's prefix */
    size_t filled; /* live and GONE slots */
    uint8_t *tags; /* after the prefixes */
    uint64_t prefix[];
} MemberIndex;

static inline uint8_t index_tag(size_t hash) {
    return (uint8_t)(2 + (hash >> (8 * sizeof(size_t) - 8)) % 254);
}

static inline size_t member_hash(const char *key, Py_ssize_t len) {
    return (size_t)_Py_HashBytes(key + 8, len - 8);
}

/* The hash of key i's member (the key has at least 8 bytes). */
static inline size_t member_hash_at(Leaf *l, uint32_t i) {
    Py_ssize_t n;
    const char *k = stored_at(l, i, &n);
    unsigned t = dropped(l, i);
    return (size_t)_Py_HashBytes(k + 8 - t, n - (8 - t));
}

static void index_put(MemberIndex *ix, size_t hash, const char *key) {
    size_t i = hash & ix->mask;
    while (ix->tags[i] > INDEX_GONE) {
        i = (i + 1) & ix->mask;
    }
    if (ix->tags[i] == INDEX_EMPTY) {
        ix->filled++;
    }
    ix->tags[i] = index_tag(hash);
    memcpy(&ix->prefix[i], key, 8);
    ix->live++;
}

/* Build the index afresh from the leaves, with room for twice the keys. */
static int index_build(SortedKeys *s) {
    size_t slots = INDEX_MIN_SLOTS;
    while (slots < (size_t)s->size * 2) {
        slots *= 2;
    }
    MemberIndex *ix = PyMem_Malloc(sizeof(MemberIndex) + slots * (sizeof(uint64_t) + 1));
    if (!ix) {
        PyErr_NoMemory();
        return -1;
    }
    ix->mask = slots - 1;
    ix->live = ix->filled = 0;
    ix->tags = (uint8_t *)(ix->prefix + slots);
    memset(ix->tags, INDEX_EMPTY, slots);
    for (Py_ssize_t j = 0; j < s->nleaves; j++) {
        Leaf *l = LEAVES(s)[j];
        for (uint32_t i = 0; i < l->count; i++) {
            if (key_len(l, i) >= 8) {
                char prefix[8];
                copy_prefix(l, i, prefix);
                index_put(ix, member_hash_at(l, i), prefix);
            }
        }
    }
    if (index_built(s)) {
        PyMem_Free(s->index);
    }
    s->index = ix;
    return 0;
}

/* A key was added to the leaves: to the index too (a failed rebuild drops the index, which
 * the next lookup builds again). */
static void index_added(SortedKeys *s, const char *key, Py_ssize_t len) {
    if (!index_built(s) || len < 8) {
        return;
    }
    MemberIndex *ix = s->index;
    if ((ix->filled + 1) * 4 > (ix->mask + 1) * 3) {
        if (index_build(s) < 0) {
            PyErr_Clear();
            PyMem_Free(s->index);
            s->index = UNBUILT;
        }
        return;
    }
    index_put(ix, member_hash(key, len), key);
}

/* Key i of leaf ``l`` is about to leave the leaves. */
static void index_removed(SortedKeys *s, Leaf *l, uint32_t pos) {
    if (!index_built(s) || key_len(l, pos) < 8) {
        return;
    }
    MemberIndex *ix = s->index;
    char prefix[8];
    copy_prefix(l, pos, prefix);
    size_t hash = member_hash_at(l, pos), i = hash & ix->mask;
    uint8_t tag = index_tag(hash);
    while (ix->tags[i] != INDEX_EMPTY) {
        if (ix->tags[i] == tag && !memcmp(&ix->prefix[i], prefix, 8)) {
            ix->tags[i] = INDEX_GONE;
            ix->live--;
            break;
        }
        i = (i + 1) & ix->mask;
    }
}

/* After removals: a table eight times larger than needed is rebuilt smaller. */
static void index_shrink(SortedKeys *s) {
    MemberIndex *ix = s->index;
    if (index_built(s) && ix->mask + 1 > INDEX_MIN_SLOTS && ix->live * 8 < ix->mask + 1
            && index_build(s) < 0) {
        PyErr_Clear(); /* the large table stays: still correct */
    }
}

/* Is ``key`` in the leaves? */
static int has_key(SortedKeys *s, const char *key, Py_ssize_t len) {
    Py_ssize_t j = find_leaf(s, key, len, 0);
    if (j == s->nleaves) {
        return 0;
    }
    Leaf *l = LEAVES(s)[j];
    return compare_at(l, leaf_bisect(l, key, len, 0), key, len) == 0;
}

/* An indexed set's key for ``member`` (a bytes object), or None. */
static PyObject *index_find(SortedKeys *s, PyObject *member) {
    if (!s->size) {
        Py_RETURN_NONE;
    }
    if (!index_built(s) && index_build(s) < 0) {
        return NULL;
    }
    Py_hash_t h = PyObject_Hash(member);
    if (h == -1) {
        return NULL;
    }
    MemberIndex *ix = s->index;
    size_t hash = (size_t)h, i = hash & ix->mask;
    uint8_t tag = index_tag(hash);
    Py_ssize_t mlen = PyBytes_GET_SIZE(member);
    PyObject *key = NULL;
    while (ix->tags[i] != INDEX_EMPTY) {
        if (ix->tags[i] == tag) {
            if (!key) {
                key = PyBytes_FromStringAndSize(NULL, mlen + 8);
                if (!key) {
                    return NULL;
                }
                memcpy(PyBytes_AS_STRING(key) + 8, PyBytes_AS_STRING(member), (size_t)mlen);
            }
            memcpy(PyBytes_AS_STRING(key), &ix->prefix[i], 8);
            if (has_key(s, PyBytes_AS_STRING(key), mlen + 8)) {
                return key;
            }
        }
        i = (i + 1) & ix->mask;
    }
    Py_XDECREF(key);
    Py_RETURN_NONE;
}

/* -- operations -------------------------------------------------------------------------------- */

static int key_arg(PyObject *arg, const char **key, Py_ssize_t *len) {
    if (!PyBytes_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "a key is bytes, not %.100s", Py_TYPE(arg)->tp_name);
        return -1;
    }
    *key = PyBytes_AS_STRING(arg);
    *len = PyBytes_GET_SIZE(arg);
    if (*len >= MAX_KEY) {
        PyErr_SetString(PyExc_OverflowError, "key too long for SortedKeys");
        return -1;
    }
    return 0;
}

/* Add ``key`` as a leaf of its own at position ``pos`` of leaf j: before it, after it, or
 * between its two parts. */
static int add_alone(SortedKeys *s, Py_ssize_t j, uint32_t pos, const char *key, Py_ssize_t len) {
    Leaf *l = LEAVES(s)[j];
    Leaf *fresh = leaf_alloc(1, (size_t)len, 0);
    if (!fresh) {
        return -1;
    }
    leaf_append(fresh, key, len);
    if (reserve_leaves(s, (Py_ssize_t)s->nleaves + 2) < 0) {
        PyMem_Free(fresh);
        return -1;
    }
    if (pos && pos < l->count) { /* leaf j's keys from ``pos`` on move to a leaf after it */
        Leaf *tail = leaf_alloc(l->count - pos, l->used - off_at(l, pos), 1);
        if (!tail) {
            PyMem_Free(fresh);
            return -1;
        }
        leaf_append_from(tail, l, pos, l->count);
        leaf_erase(&LEAVES(s)[j], pos, l->count);
        insert_leaf(s, j + 1, tail); /* room reserved: cannot fail */
    }
    insert_leaf(s, pos ? j + 1 : j, fresh);
    s->size++;
    s->version++;
    index_added(s, key, len);
    return 1;
}

/* Add a key: 1 if added, 0 if it was there, -1 on error. */
static int add_key(SortedKeys *s, const char *key, Py_ssize_t len) {
    if (!s->nleaves) {
        Leaf *l = leaf_alloc(1, (size_t)len, 0);
        if (!l) {
            return -1;
        }
        leaf_append(l, key, len);
        LEAVES(s)[0] = l;
        s->nleaves = 1;
        s->size = 1;
        s->version++;
        index_added(s, key, len);
        return 1;
    }
    Py_ssize_t j = find_leaf(s, key, len, 0);
    if (j == s->nleaves) {
        j--;
    }
    Leaf *l = LEAVES(s)[j];
    uint32_t pos = leaf_bisect(l, key, len, 0);
    if (pos < l->count && compare_at(l, pos, key, len) == 0) {
        return 0;
    }
    size_t n = (size_t)len - trailing_zeros(key, len);
    int full = l->count + 1 > LEAF_MAX_KEYS || (size_t)l->used + n > LEAF_MAX_BYTES;
    if (n > BIG_KEY || (full && (l->count == 1 || (size_t)l->used + n >= OFF_MASK))) {
        /* a long key, or one that a leaf of one long key (or an oversized leaf) cannot take
         * without offsets past OFF_MASK */
        return add_alone(s, j, pos, key, len);
    }
    if (full && ((j == s->nleaves - 1 && pos == l->count) || (j == 0 && pos == 0))) {
        /* past either end: a new leaf, the full one stays full */
        Leaf *fresh = leaf_alloc(1, (size_t)len, 1);
        if (!fresh) {
            return -1;
        }
        leaf_append(fresh, key, len);
        if (insert_leaf(s, pos ? j + 1 : 0, fresh) < 0) {
            PyMem_Free(fresh);
            return -1;
        }
        s->size++;
        s->version++;
        index_added(s, key, len);
        return 1;
    }
    if (leaf_insert(&LEAVES(s)[j], pos, key, len) < 0) {
        return -1;
    }
    counted(s, j, 1);
    index_added(s, key, len);
    l = LEAVES(s)[j];
    if (full && l->count >= 2 && split_leaf(s, j) < 0) {
        PyErr_Clear(); /* an oversized leaf is still a correct one */
    }
    return 1;
}

/* Remove ranks [start, stop) (0 <= start < stop <= size). */
static int erase_ranks(SortedKeys *s, Py_ssize_t start, Py_ssize_t stop) {
    Py_ssize_t j;
    uint32_t pos;
    if (locate(s, start, &j, &pos) < 0) {
        return -1;
    }
    Py_ssize_t left = stop - start;
    Leaf *l = LEAVES(s)[j];
    if (index_built(s)) { /* the keys leave the index first, read where they are */
        Py_ssize_t jj = j;
        uint32_t p = pos;
        for (Py_ssize_t i = 0; i < left; i++, p++) {
            if (p == LEAVES(s)[jj]->count) {
                jj++;
                p = 0;
            }
            index_removed(s, LEAVES(s)[jj], p);
        }
    }
    if (pos + left <= l->count) { /* within one leaf: the common case (a pop, a ZREM) */
        leaf_erase(&LEAVES(s)[j], pos, pos + (uint32_t)left);
        counted(s, j, -left);
        maybe_merge(s, j);
        index_shrink(s);
        return 0;
    }
    s->size -= left;
    s->version++;
    stale_tree(s);
    Py_ssize_t k = j;
    if (pos) { /* the first leaf loses its tail */
        left -= l->count - pos;
        leaf_erase(&LEAVES(s)[j], pos, l->count);
        k++;
    }
    Py_ssize_t next = k; /* the first leaf after the ones kept whole or in part */
    while (left && left >= LEAVES(s)[k]->count) { /* whole leaves go */
        left -= LEAVES(s)[k]->count;
        PyMem_Free(LEAVES(s)[k]);
        k++;
    }
    drop_leaves(s, next, k);
    if (left) { /* the next leaf loses its head */
        leaf_erase(&LEAVES(s)[next], 0, (uint32_t)left);
    }
    maybe_merge(s, next);
    maybe_merge(s, j);
    index_shrink(s);
    return 0;
}

static PyObject *key_object(Leaf *l, uint32_t i) {
    PyObject *key = PyBytes_FromStringAndSize(NULL, key_len(l, i));
    if (key) {
        copy_key(l, i, PyBytes_AS_STRING(key));
    }
    return key;
}

/* Ranks [start, stop) as a list, ascending. */
static PyObject *range_list(SortedKeys *s, Py_ssize_t start, Py_ssize_t stop) {
    Py_ssize_t count = stop > start ? stop - start : 0;
    PyObject *out = PyList_New(count);
    if (!out || !count) {
        return out;
    }
    Py_ssize_t j;
    uint32_t pos;
    if (locate(s, start, &j, &pos) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    Leaf *l = LEAVES(s)[j];
    for (Py_ssize_t i = 0; i < count; i++) {
        if (pos == l->count) {
            l = LEAVES(s)[++j];
            pos = 0;
        }
        PyObject *key = key_object(l, pos++);
        if (!key) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, key);
    }
    return out;
}

/* -- the Python type ---------------------------------------------------------------------------- */

static int build_from(SortedKeys *s, PyObject *iterable);

static PyObject *sk_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *iterable = NULL;
    int indexed = 0;
    static char *names[] = {"keys", "indexed", NULL};
    /* a subclass (the compiled build's SortedSet) has arguments of its own, for __init__ */
    if (type == &SortedKeysType && !PyArg_ParseTupleAndKeywords(
            args, kwds, "|Op:SortedKeys", names, &iterable, &indexed)) {
        return NULL;
    }
    SortedKeys *s = (SortedKeys *)type->tp_alloc(type, 0);
    if (!s) {
        return NULL;
    }
    s->cap = 1;
    s->index = indexed ? UNBUILT : NULL;
    if (iterable && build_from(s, iterable) < 0) {
        Py_DECREF(s);
        return NULL;
    }
    return (PyObject *)s;
}

/* Fill an empty SortedKeys from any iterable of distinct keys (sorted first if they are not),
 * in leaves filled to BUILD_FILL_*: one exact leaf when everything fits in one. */
static int build_from(SortedKeys *s, PyObject *iterable) {
    PyObject *list = PySequence_List(iterable);
    if (!list) {
        return -1;
    }
    Py_ssize_t n = PyList_GET_SIZE(list);
    size_t total = 0;
    int sorted = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *k;
        Py_ssize_t len;
        if (key_arg(PyList_GET_ITEM(list, i), &k, &len) < 0) {
            Py_DECREF(list);
            return -1;
        }
        total += (size_t)len;
        if (i && sorted) {
            PyObject *prev = PyList_GET_ITEM(list, i - 1);
            if (compare(PyBytes_AS_STRING(prev), PyBytes_GET_SIZE(prev), k, len) >= 0) {
                sorted = 0;
            }
        }
    }
    if (!sorted && PyList_Sort(list) < 0) {
        Py_DECREF(list);
        return -1;
    }
    for (Py_ssize_t i = 1; !sorted && i < n; i++) {
        PyObject *a = PyList_GET_ITEM(list, i - 1), *b = PyList_GET_ITEM(list, i);
        if (compare(PyBytes_AS_STRING(a), PyBytes_GET_SIZE(a), PyBytes_AS_STRING(b),
                    PyBytes_GET_SIZE(b)) == 0) {
            Py_DECREF(list);
            PyErr_SetString(PyExc_ValueError, "SortedKeys holds distinct keys");
            return -1;
        }
    }
    int one = n <= LEAF_MAX_KEYS && total <= LEAF_MAX_BYTES;
    Py_ssize_t i = 0;
    while (i < n) {
        /* the next leaf's keys: [i, e) */
        Py_ssize_t e = i;
        size_t bytes = 0;
        while (e < n && (one || (e - i < BUILD_FILL_KEYS && (e == i ||
               bytes + (size_t)PyBytes_GET_SIZE(PyList_GET_ITEM(list, e)) <= BUILD_FILL_BYTES)))) {
            bytes += (size_t)PyBytes_GET_SIZE(PyList_GET_ITEM(list, e));
            e++;
        }
        Leaf *l = leaf_alloc((size_t)(e - i), bytes, 0);
        if (!l || insert_leaf(s, s->nleaves, l) < 0) {
            PyMem_Free(l);
            Py_DECREF(list);
            return -1;
        }
        for (; i < e; i++) {
            PyObject *key = PyList_GET_ITEM(list, i);
            leaf_append(l, PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key));
        }
    }
    s->size = n;
    s->version++;
    Py_DECREF(list);
    return 0;
}

static void sk_dealloc(SortedKeys *s) {
    clear_all(s); /* frees a built index too */
    Py_CLEAR(s->zeros);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static Py_ssize_t sk_len(SortedKeys *s) {
    return s->size;
}

static int sk_contains(SortedKeys *s, PyObject *arg) {
    const char *key;
    Py_ssize_t len;
    if (key_arg(arg, &key, &len) < 0) {
        return -1;
    }
    Py_ssize_t j = find_leaf(s, key, len, 0);
    if (j == s->nleaves) {
        return 0;
    }
    Leaf *l = LEAVES(s)[j];
    return compare_at(l, leaf_bisect(l, key, len, 0), key, len) == 0;
}

static PyObject *sk_add(SortedKeys *s, PyObject *arg) {
    const char *key;
    Py_ssize_t len;
    if (key_arg(arg, &key, &len) < 0) {
        return NULL;
    }
    int added = add_key(s, key, len);
    if (added < 0) {
        return NULL;
    }
    return PyBool_FromLong(added);
}

/* Remove a key: 1 if it was there, 0 if not, -1 on error. */
static int discard_key(SortedKeys *s, PyObject *arg) {
    const char *key;
    Py_ssize_t len;
    if (key_arg(arg, &key, &len) < 0) {
        return -1;
    }
    Py_ssize_t j = find_leaf(s, key, len, 0);
    if (j == s->nleaves) {
        return 0;
    }
    Leaf *l = LEAVES(s)[j];
    uint32_t pos = leaf_bisect(l, key, len, 0);
    if (compare_at(l, pos, key, len) != 0) {
        return 0;
    }
    index_removed(s, l, pos);
    leaf_erase(&LEAVES(s)[j], pos, pos + 1);
    counted(s, j, -1);
    maybe_merge(s, j);
    index_shrink(s);
    return 1;
}

static PyObject *sk_discard(SortedKeys *s, PyObject *arg) {
    int found = discard_key(s, arg);
    return found < 0 ? NULL : PyBool_FromLong(found);
}

static PyObject *sk_remove(SortedKeys *s, PyObject *arg) {
    int found = discard_key(s, arg);
    if (found < 0) {
        return NULL;
    }
    if (!found) {
        PyErr_Format(PyExc_ValueError, "%R not in SortedKeys", arg);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *bisect_method(SortedKeys *s, PyObject *arg, int right) {
    const char *key;
    Py_ssize_t len;
    if (key_arg(arg, &key, &len) < 0) {
        return NULL;
    }
    Py_ssize_t rank = bisect(s, key, len, right);
    return rank < 0 ? NULL : PyLong_FromSsize_t(rank);
}

static PyObject *sk_bisect_left(SortedKeys *s, PyObject *arg) {
    return bisect_method(s, arg, 0);
}

static PyObject *sk_bisect_right(SortedKeys *s, PyObject *arg) {
    return bisect_method(s, arg, 1);
}

/* (start, stop): the ranks of the keys from ``low`` up to (not with) ``high``, in one call
 * (a score range's two bisections). */
static PyObject *sk_span(SortedKeys *s, PyObject *const *args, Py_ssize_t nargs) {
    const char *low, *high;
    Py_ssize_t llen, hlen;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "span(low, high)");
        return NULL;
    }
    if (key_arg(args[0], &low, &llen) < 0 || key_arg(args[1], &high, &hlen) < 0) {
        return NULL;
    }
    Py_ssize_t start = bisect(s, low, llen, 0);
    Py_ssize_t stop = start < 0 ? -1 : bisect(s, high, hlen, 0);
    if (stop < 0) {
        return NULL;
    }
    return Py_BuildValue("nn", start, stop > start ? stop : start);
}

static PyObject *sk_item(SortedKeys *s, Py_ssize_t i) {
    if (i < 0 || i >= s->size) {
        PyErr_SetString(PyExc_IndexError, "SortedKeys index out of range");
        return NULL;
    }
    Py_ssize_t j;
    uint32_t pos;
    if (locate(s, i, &j, &pos) < 0) {
        return NULL;
    }
    return key_object(LEAVES(s)[j], pos);
}

static PyObject *sk_subscript(SortedKeys *s, PyObject *arg) {
    if (PyIndex_Check(arg)) {
        Py_ssize_t i = PyNumber_AsSsize_t(arg, PyExc_IndexError);
        if (i == -1 && PyErr_Occurred()) {
            return NULL;
        }
        return sk_item(s, i < 0 ? i + s->size : i);
    }
    if (!PySlice_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "SortedKeys indices are integers or slices, not %.100s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(arg, &start, &stop, &step) < 0) {
        return NULL;
    }
    Py_ssize_t count = PySlice_AdjustIndices(s->size, &start, &stop, step);
    if (step == 1) {
        return range_list(s, start, stop);
    }
    if (!count) {
        return PyList_New(0);
    }
    /* any other step: the ranks it covers, ascending, then picked */
    Py_ssize_t last = start + (count - 1) * step;
    Py_ssize_t low = step > 0 ? start : last, high = step > 0 ? last : start;
    PyObject *span = range_list(s, low, high + 1);
    if (!span) {
        return NULL;
    }
    PyObject *out = PyList_New(count);
    if (out) {
        for (Py_ssize_t i = 0; i < count; i++) {
            PyObject *key = PyList_GET_ITEM(span, start + i * step - low);
            Py_INCREF(key);
            PyList_SET_ITEM(out, i, key);
        }
    }
    Py_DECREF(span);
    return out;
}

static int sk_ass_subscript(SortedKeys *s, PyObject *arg, PyObject *value) {
    if (value) {
        PyErr_SetString(PyExc_TypeError, "SortedKeys keys are added, not assigned");
        return -1;
    }
    Py_ssize_t start, stop;
    if (PyIndex_Check(arg)) {
        start = PyNumber_AsSsize_t(arg, PyExc_IndexError);
        if (start == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (start < 0) {
            start += s->size;
        }
        if (start < 0 || start >= s->size) {
            PyErr_SetString(PyExc_IndexError, "SortedKeys index out of range");
            return -1;
        }
        stop = start + 1;
    } else if (PySlice_Check(arg)) {
        Py_ssize_t step;
        if (PySlice_Unpack(arg, &start, &stop, &step) < 0) {
            return -1;
        }
        if (step != 1) {
            PyErr_SetString(PyExc_ValueError, "SortedKeys deletes slices of step 1 only");
            return -1;
        }
        PySlice_AdjustIndices(s->size, &start, &stop, step);
        if (stop <= start) {
            return 0;
        }
    } else {
        PyErr_Format(PyExc_TypeError, "SortedKeys indices are integers or slices, not %.100s",
                     Py_TYPE(arg)->tp_name);
        return -1;
    }
    if (start == 0 && stop == s->size) {
        clear_all(s);
        return 0;
    }
    return erase_ranks(s, start, stop);
}

static PyObject *sk_pop(SortedKeys *s, PyObject *const *args, Py_ssize_t nargs) {
    Py_ssize_t i = -1;
    if (nargs > 1) {
        PyErr_SetString(PyExc_TypeError, "pop(index=-1)");
        return NULL;
    }
    if (nargs == 1) {
        i = PyNumber_AsSsize_t(args[0], PyExc_IndexError);
        if (i == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    if (i < 0) {
        i += s->size;
    }
    PyObject *key = sk_item(s, i); /* IndexError when out of range or empty */
    if (!key) {
        return NULL;
    }
    if (erase_ranks(s, i, i + 1) < 0) {
        Py_DECREF(key);
        return NULL;
    }
    if (!s->size) {
        clear_all(s);
    }
    return key;
}

/* The key whose bytes after the first ``skip`` (8: a score) are ``member``, or None: what a
 * listpack's find does, a walk with no index. */
static PyObject *sk_find_member(SortedKeys *s, PyObject *const *args, Py_ssize_t nargs) {
    const char *member;
    Py_ssize_t mlen, skip = 8;
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "find_member(member, skip=8)");
        return NULL;
    }
    if (key_arg(args[0], &member, &mlen) < 0) {
        return NULL;
    }
    if (nargs == 2) {
        skip = PyLong_AsSsize_t(args[1]);
        if (skip == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (skip < 0) {
            PyErr_SetString(PyExc_ValueError, "skip must be >= 0");
            return NULL;
        }
    }
    if (skip == 8 && s->index) {
        return index_find(s, args[0]);
    }
    if (skip >= MAX_KEY) {
        Py_RETURN_NONE;
    }
    Py_ssize_t want = mlen + skip;
    for (Py_ssize_t j = 0; j < s->nleaves; j++) {
        Leaf *l = LEAVES(s)[j];
        for (uint32_t i = 0; i < l->count; i++) {
            Py_ssize_t n;
            const char *k = stored_at(l, i, &n);
            unsigned t = dropped(l, i);
            if (n + t != want) {
                continue;
            }
            if (!t || skip >= 8) { /* the member's bytes are stored as they are */
                if (!memcmp(k + skip - t, member, (size_t)mlen)) {
                    return key_object(l, i);
                }
                continue;
            }
            PyObject *key = key_object(l, i); /* a skip into the dropped zeros: rare */
            if (!key || !memcmp(PyBytes_AS_STRING(key) + skip, member, (size_t)mlen)) {
                return key;
            }
            Py_DECREF(key);
        }
    }
    Py_RETURN_NONE;
}

static PyObject *sk_sizeof(SortedKeys *s, PyObject *Py_UNUSED(ignored)) {
    size_t total = (size_t)Py_TYPE(s)->tp_basicsize;
    if (s->cap > 1) {
        total += (size_t)s->cap * sizeof(Leaf *) + (size_t)(s->cap + 1) * sizeof(Py_ssize_t);
    }
    if (index_built(s)) {
        total += sizeof(MemberIndex) + (s->index->mask + 1) * (sizeof(uint64_t) + 1);
    }
    for (Py_ssize_t j = 0; j < s->nleaves; j++) {
        total += leaf_bytes(LEAVES(s)[j]);
    }
    return PyLong_FromSize_t(total);
}

/* Replace every key: those of an iterable, indexed or not. */
static PyObject *sk_reset(SortedKeys *s, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "reset(keys, indexed)");
        return NULL;
    }
    int indexed = PyObject_IsTrue(args[1]);
    if (indexed < 0) {
        return NULL;
    }
    clear_all(s); /* frees a built index too */
    s->index = indexed ? UNBUILT : NULL;
    if (build_from(s, args[0]) < 0) {
        clear_all(s);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *sk_get_keys(SortedKeys *s, void *Py_UNUSED(closure)) {
    Py_INCREF(s);
    return (PyObject *)s;
}

static PyObject *sk_get_kind(SortedKeys *s, void *Py_UNUSED(closure)) {
    return PyLong_FromLong(s->index != NULL);
}

static PyObject *sk_index_members(SortedKeys *s, PyObject *Py_UNUSED(ignored)) {
    if (!s->index) {
        s->index = UNBUILT; /* built by the next lookup */
    }
    Py_RETURN_NONE;
}

static PyObject *sk_leaf_counts(SortedKeys *s, PyObject *Py_UNUSED(ignored)) {
    PyObject *out = PyList_New(s->nleaves);
    for (Py_ssize_t j = 0; out && j < s->nleaves; j++) {
        PyObject *n = PyLong_FromUnsignedLong(LEAVES(s)[j]->count);
        if (!n) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, j, n);
    }
    return out;
}

/* -- iteration ---------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    SortedKeys *owner;
    Py_ssize_t rank;   /* the next key's rank */
    Py_ssize_t leaf;   /* where that key is, while version matches the owner's */
    uint32_t pos;
    uint64_t version;
    int reverse;
} SortedKeysIter;

static PyObject *make_iter(SortedKeys *s, int reverse) {
    SortedKeysIter *it = PyObject_New(SortedKeysIter, &SortedKeysIterType);
    if (!it) {
        return NULL;
    }
    Py_INCREF(s);
    it->owner = s;
    it->rank = reverse ? s->size - 1 : 0;
    it->version = s->version - 1; /* locate on the first next() */
    it->reverse = reverse;
    it->leaf = 0;
    it->pos = 0;
    return (PyObject *)it;
}

static PyObject *sk_iter(SortedKeys *s) {
    return make_iter(s, 0);
}

static PyObject *sk_reversed(SortedKeys *s, PyObject *Py_UNUSED(ignored)) {
    return make_iter(s, 1);
}

static void it_dealloc(SortedKeysIter *it) {
    Py_XDECREF(it->owner);
    PyObject_Free(it);
}

static PyObject *it_next(SortedKeysIter *it) {
    SortedKeys *s = it->owner;
    if (!s) {
        return NULL;
    }
    if (it->rank < 0 || it->rank >= s->size) {
        Py_CLEAR(it->owner);
        return NULL;
    }
    if (it->version != s->version) {
        if (locate(s, it->rank, &it->leaf, &it->pos) < 0) {
            return NULL;
        }
        it->version = s->version;
    }
    Leaf *l = LEAVES(s)[it->leaf];
    PyObject *key = key_object(l, it->pos);
    if (!key) {
        return NULL;
    }
    if (it->reverse) {
        it->rank--;
        if (it->pos) {
            it->pos--;
        } else if (it->leaf) {
            it->leaf--;
            it->pos = LEAVES(s)[it->leaf]->count - 1;
        }
    } else {
        it->rank++;
        if (++it->pos == l->count) {
            it->leaf++;
            it->pos = 0;
        }
    }
    return key;
}

static PyTypeObject SortedKeysIterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "brook.types._sorted_keys.SortedKeysIterator",
    .tp_basicsize = sizeof(SortedKeysIter),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)it_dealloc,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)it_next,
};

static PyMethodDef sk_methods[] = {
    {"add", (PyCFunction)sk_add, METH_O, "Insert a key; False if it was there already."},
    {"remove", (PyCFunction)sk_remove, METH_O, "Remove a key (ValueError when absent)."},
    {"discard", (PyCFunction)sk_discard, METH_O, "Remove a key if present; whether it was."},
    {"pop", (PyCFunction)(void (*)(void))sk_pop, METH_FASTCALL,
     "Remove and return the key at a rank (the last by default)."},
    {"bisect_left", (PyCFunction)sk_bisect_left, METH_O, "The rank of the first key >= key."},
    {"bisect_right", (PyCFunction)sk_bisect_right, METH_O, "The rank of the first key > key."},
    {"span", (PyCFunction)(void (*)(void))sk_span, METH_FASTCALL,
     "(start, stop): the ranks of the keys >= low and < high."},
    {"find_member", (PyCFunction)(void (*)(void))sk_find_member, METH_FASTCALL,
     "The key that is `skip` bytes (8) then `member`, or None: a walk, no bisection."},
    {"reset", (PyCFunction)(void (*)(void))sk_reset, METH_FASTCALL,
     "reset(keys, indexed): the keys of an iterable instead of those held."},
    {"index_members", (PyCFunction)sk_index_members, METH_NOARGS,
     "From now on find_member(member) looks the member up in a hash index, not by a walk: "
     "every key is an 8-byte prefix and a member, no member twice."},
    {"leaf_counts", (PyCFunction)sk_leaf_counts, METH_NOARGS,
     "The keys in each leaf (for tests of the layout)."},
    {"__sizeof__", (PyCFunction)sk_sizeof, METH_NOARGS, "The bytes held: object and leaves."},
    {"__reversed__", (PyCFunction)sk_reversed, METH_NOARGS, "Iterate descending."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef sk_getset[] = {
    {"keys", (getter)sk_get_keys, NULL,
     "The object itself: a sorted set that is a SortedKeys reads its order keys here.", NULL},
    {"kind", (getter)sk_get_kind, NULL,
     "1 when indexed (a sorted set's skiplist encoding), else 0 (listpack).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef sk_members[] = {
    {"zeros", T_OBJECT, offsetof(SortedKeys, zeros), 0,
     "A sorted set's members scored -0, or None (brook.types.zset; a set of bytes, which "
     "cannot reference the object back: the type is not tracked by the garbage collector)."},
    {NULL, 0, 0, 0, NULL},
};

static PyMappingMethods sk_as_mapping = {
    .mp_length = (lenfunc)sk_len,
    .mp_subscript = (binaryfunc)sk_subscript,
    .mp_ass_subscript = (objobjargproc)sk_ass_subscript,
};

static PySequenceMethods sk_as_sequence = {
    .sq_length = (lenfunc)sk_len,
    .sq_item = (ssizeargfunc)sk_item,
    .sq_contains = (objobjproc)sk_contains,
};

static PyTypeObject SortedKeysType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "brook.types._sorted_keys.SortedKeys",
    .tp_doc = "A sorted sequence of distinct bytes keys, packed into leaves.",
    .tp_basicsize = sizeof(SortedKeys),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = sk_new,
    .tp_getset = sk_getset,
    .tp_members = sk_members,
    .tp_dealloc = (destructor)sk_dealloc,
    .tp_iter = (getiterfunc)sk_iter,
    .tp_methods = sk_methods,
    .tp_as_mapping = &sk_as_mapping,
    .tp_as_sequence = &sk_as_sequence,
};

static struct PyModuleDef sorted_keys_module = {
    PyModuleDef_HEAD_INIT, "_sorted_keys", "A sorted set's order keys, packed, in C.", -1, NULL,
};

PyMODINIT_FUNC PyInit__sorted_keys(void) {
    if (PyType_Ready(&SortedKeysType) < 0 || PyType_Ready(&SortedKeysIterType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&sorted_keys_module);
    if (!module) {
        return NULL;
    }
    Py_INCREF(&SortedKeysType);
    if (PyModule_AddObject(module, "SortedKeys", (PyObject *)&SortedKeysType) < 0) {
        Py_DECREF(&SortedKeysType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
