/* regex.c — the term store of byte regular expressions: hash-consing,
 * simplifying constructors, nullability and memoized derivatives (regex.h).
 * UTF-8 ranges and the pattern syntax are in regex_utf8.c and
 * regex_parse.c. */
#include "grammar/regex.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "grammar/regex_internal.h"

#define FIRST_INDEX 1024 /* slots of the hash-consing index at first (a power of two) */
/* The most terms a store holds (~100 MB with its index and memo): an
 * expression whose derivatives keep growing past it fails as out of memory
 * would (the request ends with an error) instead of taking all memory. */
#define MAX_TERMS (1 << 20)

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* An OR node's a is where its alternatives lie in args (a fresh place for
 * a node being built), not part of its value: the alternatives are hashed
 * instead, so that equal alternatives find the node built first. */
static uint64_t node_hash(const rx_store *s, const rx_node *n) {
    uint64_t h = mix(n->kind, n->kind == RXK_OR ? 0 : (uint64_t)(uint32_t)n->a);
    h = mix(h, (uint64_t)(uint32_t)n->b);
    h = mix(h, ((uint64_t)(uint32_t)n->min << 32) | (uint32_t)n->max);
    for (int i = 0; i < 4; i++) h = mix(h, n->set.w[i]);
    if (n->kind == RXK_OR)
        for (int32_t i = 0; i < n->b; i++) h = mix(h, (uint64_t)(uint32_t)s->args[n->a + i]);
    return h;
}

static bool node_equal(const rx_store *s, const rx_node *x, const rx_node *y) {
    if (x->kind != y->kind || x->min != y->min || x->max != y->max) return false;
    if (memcmp(&x->set, &y->set, sizeof x->set) != 0) return false;
    if (x->kind == RXK_OR)
        return x->b == y->b && memcmp(s->args + x->a, s->args + y->a, sizeof(rx_id) * (size_t)x->b) == 0;
    return x->a == y->a && x->b == y->b;
}

static bool index_grow(rx_store *s) {
    const size_t cap = s->index_cap ? s->index_cap * 2 : FIRST_INDEX;
    rx_id *idx = malloc(sizeof *idx * cap);
    if (!idx) return false;
    for (size_t i = 0; i < cap; i++) idx[i] = -1;
    for (size_t id = 0; id < s->n; id++) {
        size_t j = s->nodes[id].hash & (cap - 1);
        while (idx[j] >= 0) j = (j + 1) & (cap - 1);
        idx[j] = (rx_id)id;
    }
    free(s->index);
    s->index = idx;
    s->index_cap = cap;
    return true;
}

/* a + b, saturating at RX_INF (an unbounded length) */
static int32_t sat_add(int32_t a, int32_t b) { return a >= RX_INF - b ? RX_INF : a + b; }

/* The length of the longest string of n's language (RX_INF: unbounded),
 * from its parts': exact, since every term but ∅ matches some string. */
static int32_t max_len(const rx_store *s, const rx_node *n) {
    switch (n->kind) {
    case RXK_BYTES: return 1;
    case RXK_CONCAT: return sat_add(s->nodes[n->a].max_len, s->nodes[n->b].max_len);
    case RXK_OR: {
        int32_t m = 0;
        for (int32_t i = 0; i < n->b; i++)
            if (s->nodes[s->args[n->a + i]].max_len > m) m = s->nodes[s->args[n->a + i]].max_len;
        return m;
    }
    case RXK_REPEAT: {
        const int32_t a = s->nodes[n->a].max_len;
        if (a == 0) return 0;
        if (n->max == RX_INF || a == RX_INF || (int64_t)a * n->max >= RX_INF) return RX_INF;
        return a * n->max;
    }
    default: return 0;
    }
}

/* The id of a node equal to *n, added when new. For RXK_OR, n->a indexes the
 * alternatives at the end of s->args (taken back when the node exists). */
static rx_id intern(rx_store *s, rx_node *n) {
    if (s->oom) return RX_NOTHING;
    n->hash = node_hash(s, n);
    if ((s->n + 1) * 2 > s->index_cap && !index_grow(s)) goto oom;
    size_t j = n->hash & (s->index_cap - 1);
    for (; s->index[j] >= 0; j = (j + 1) & (s->index_cap - 1)) {
        const rx_node *o = &s->nodes[s->index[j]];
        if (o->hash == n->hash && node_equal(s, o, n)) {
            if (n->kind == RXK_OR) s->n_args = (size_t)n->a; /* the copy is not needed */
            return s->index[j];
        }
    }
    if (s->n >= MAX_TERMS || !GROW_ARRAY(s->nodes, s->n + 1, &s->nodes_cap)) goto oom;
    s->nodes[s->n] = *n;
    s->nodes[s->n].max_len = max_len(s, n);
    s->index[j] = (rx_id)s->n;
    return (rx_id)s->n++;
oom:
    s->oom = true;
    return RX_NOTHING;
}

rx_store *rx_store_new(void) {
    rx_store *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    rx_node nothing = {.kind = RXK_NOTHING}, eps = {.kind = RXK_EPSILON, .nullable = true};
    if (intern(s, &nothing) != RX_NOTHING || intern(s, &eps) != RX_EPSILON) {
        rx_store_free(s);
        return NULL;
    }
    return s;
}

void rx_store_free(rx_store *s) {
    if (!s) return;
    free(s->nodes);
    free(s->args);
    free(s->index);
    free(s->memo_key);
    free(s->memo_val);
    free(s->row_of);
    free(s->rows);
    free(s->first);
    free(s->first_known);
    free(s->cls_of);
    free(s->cls_maps);
    free(s->cls_index);
    free(s);
}

/* A copy of n elements of size sz, in a block of cap of them (cap >= n). */
static void *dup_array(const void *a, size_t n, size_t cap, size_t sz) {
    if (!cap) return NULL;
    void *b = malloc(cap * sz);
    if (b && n) memcpy(b, a, n * sz);
    return b;
}

rx_store *rx_store_clone(const rx_store *s) {
    rx_store *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    *c = *s;
    c->nodes = dup_array(s->nodes, s->n, s->nodes_cap, sizeof *s->nodes);
    c->args = dup_array(s->args, s->n_args, s->args_cap, sizeof *s->args);
    c->index = dup_array(s->index, s->index_cap, s->index_cap, sizeof *s->index);
    c->memo_key = dup_array(s->memo_key, s->memo_cap, s->memo_cap, sizeof *s->memo_key);
    c->memo_val = dup_array(s->memo_val, s->memo_cap, s->memo_cap, sizeof *s->memo_val);
    c->row_of = dup_array(s->row_of, s->row_of_cap, s->row_of_cap, sizeof *s->row_of);
    c->rows = dup_array(s->rows, s->n_rows * 256, s->rows_cap, sizeof *s->rows);
    c->first = dup_array(s->first, s->first_cap, s->first_cap, sizeof *s->first);
    c->first_known = dup_array(s->first_known, s->first_known_cap, s->first_known_cap, sizeof *s->first_known);
    c->cls_of = dup_array(s->cls_of, s->cls_of_cap, s->cls_of_cap, sizeof *s->cls_of);
    c->cls_maps = dup_array(s->cls_maps, s->n_cls * 256, s->cls_maps_cap, sizeof *s->cls_maps);
    c->cls_index = dup_array(s->cls_index, s->cls_index_cap, s->cls_index_cap, sizeof *s->cls_index);
    if ((s->cls_of_cap && !c->cls_of) || (s->cls_maps_cap && !c->cls_maps) || (s->cls_index_cap && !c->cls_index)) {
        rx_store_free(c);
        return NULL;
    }
    if ((s->nodes_cap && !c->nodes) || (s->args_cap && !c->args) || (s->index_cap && !c->index) ||
        (s->memo_cap && (!c->memo_key || !c->memo_val)) || (s->row_of_cap && !c->row_of) ||
        (s->rows_cap && !c->rows) || (s->first_cap && !c->first) || (s->first_known_cap && !c->first_known)) {
        rx_store_free(c);
        return NULL;
    }
    return c;
}

size_t rx_store_size(const rx_store *s) { return s->n; }
size_t rx_store_rows(const rx_store *s) { return s->n_rows; }
bool rx_store_ok(const rx_store *s) { return !s->oom; }

bool rx_nullable(const rx_store *s, rx_id r) { return s->nodes[r].nullable; }

rx_id rx_bytes(rx_store *s, const rx_byteset *set) {
    if (!(set->w[0] | set->w[1] | set->w[2] | set->w[3])) return RX_NOTHING;
    rx_node n = {.kind = RXK_BYTES, .set = *set};
    return intern(s, &n);
}

rx_id rx_byte_range(rx_store *s, unsigned lo, unsigned hi) {
    rx_byteset set = {{0}};
    rx_byteset_add_range(&set, lo, hi);
    return rx_bytes(s, &set);
}

rx_id rx_literal(rx_store *s, const void *bytes, size_t n) {
    const uint8_t *b = bytes;
    rx_id r = RX_EPSILON;
    for (size_t i = n; i-- > 0;) r = rx_concat(s, rx_byte_range(s, b[i], b[i]), r);
    return r;
}

rx_id rx_concat(rx_store *s, rx_id a, rx_id b) {
    if (a == RX_NOTHING || b == RX_NOTHING) return RX_NOTHING;
    if (a == RX_EPSILON) return b;
    if (b == RX_EPSILON) return a;
    const rx_node *na = &s->nodes[a];
    if (na->kind == RXK_CONCAT) { /* kept right-nested: (x y) b = x (y b) */
        const rx_id x = na->a, y = na->b;
        return rx_concat(s, x, rx_concat(s, y, b));
    }
    rx_node n = {.kind = RXK_CONCAT, .a = a, .b = b, .nullable = na->nullable && s->nodes[b].nullable};
    return intern(s, &n);
}

static int cmp_id(const void *x, const void *y) {
    const rx_id a = *(const rx_id *)x, b = *(const rx_id *)y;
    return (a > b) - (a < b);
}

/* The alternatives in list[0..n) (it is reordered): flattened, ∅ dropped,
 * byte sets merged into one, sorted and deduplicated, ε dropped when
 * another alternative is nullable. */
static rx_id or_list(rx_store *s, rx_id *list, size_t n) {
    if (s->oom) return RX_NOTHING;
    rx_id *flat = NULL;
    size_t nf = 0, cap = 0;
    rx_byteset set = {{0}};
    bool has_set = false, eps = false, other_nullable = false;
    for (size_t i = 0; i < n; i++) {
        const rx_node *x = &s->nodes[list[i]];
        const size_t k = x->kind == RXK_OR ? (size_t)x->b : 1;
        if (!GROW_ARRAY(flat, nf + k, &cap)) {
            free(flat);
            s->oom = true;
            return RX_NOTHING;
        }
        for (size_t j = 0; j < k; j++) {
            const rx_id e = x->kind == RXK_OR ? s->args[x->a + (int32_t)j] : list[i];
            const rx_node *ne = &s->nodes[e];
            if (e == RX_NOTHING) continue;
            if (e == RX_EPSILON) {
                eps = true;
                continue;
            }
            if (ne->kind == RXK_BYTES) {
                for (int w = 0; w < 4; w++) set.w[w] |= ne->set.w[w];
                has_set = true;
                continue;
            }
            other_nullable |= ne->nullable;
            flat[nf++] = e;
        }
    }
    if (has_set) {
        const rx_id b = rx_bytes(s, &set);
        if (!GROW_ARRAY(flat, nf + 1, &cap)) s->oom = true;
        else flat[nf++] = b;
    }
    if (eps && !other_nullable) {
        if (!GROW_ARRAY(flat, nf + 1, &cap)) s->oom = true;
        else flat[nf++] = RX_EPSILON;
    }
    rx_id r = RX_NOTHING;
    if (s->oom) goto out;
    qsort(flat, nf, sizeof *flat, cmp_id);
    size_t u = 0;
    for (size_t i = 0; i < nf; i++)
        if (!u || flat[u - 1] != flat[i]) flat[u++] = flat[i];
    if (u <= 1) {
        r = u ? flat[0] : RX_NOTHING;
        goto out;
    }
    if (!GROW_ARRAY(s->args, s->n_args + u, &s->args_cap)) {
        s->oom = true;
        goto out;
    }
    bool nullable = false;
    for (size_t i = 0; i < u; i++) {
        s->args[s->n_args + i] = flat[i];
        nullable |= s->nodes[flat[i]].nullable;
    }
    rx_node node = {.kind = RXK_OR, .a = (int32_t)s->n_args, .b = (int32_t)u, .nullable = nullable};
    s->n_args += u;
    r = intern(s, &node);
out:
    free(flat);
    return r;
}

rx_id rx_or_list(rx_store *s, rx_id *list, size_t n) { return or_list(s, list, n); }

rx_id rx_or(rx_store *s, rx_id a, rx_id b) {
    if (a == b) return a;
    rx_id l[2] = {a, b};
    return or_list(s, l, 2);
}

rx_id rx_repeat(rx_store *s, rx_id a, int32_t min, int32_t max) {
    if (min < 0 || max < min) return RX_NOTHING;
    if (max == 0 || a == RX_EPSILON) return RX_EPSILON;
    if (a == RX_NOTHING) return min == 0 ? RX_EPSILON : RX_NOTHING;
    if (min == 1 && max == 1) return a;
    const rx_node *na = &s->nodes[a];
    if (na->kind == RXK_REPEAT && na->min == 0 && na->max == RX_INF && min <= 1 && max == RX_INF) return a; /* (x*)* */
    rx_node n = {.kind = RXK_REPEAT, .a = a, .min = min, .max = max, .nullable = min == 0 || na->nullable};
    return intern(s, &n);
}

/* ---- derivatives ---- */

static bool memo_get(const rx_store *s, uint64_t key, rx_id *out) {
    if (!s->memo_cap) return false;
    for (size_t j = (key * 0x9e3779b97f4a7c15ull) >> 20 & (s->memo_cap - 1);; j = (j + 1) & (s->memo_cap - 1)) {
        if (s->memo_key[j] == 0) return false;
        if (s->memo_key[j] == key) {
            *out = s->memo_val[j];
            return true;
        }
    }
}

static void memo_put_at(uint64_t *keys, rx_id *vals, size_t cap, uint64_t key, rx_id v) {
    size_t j = (key * 0x9e3779b97f4a7c15ull) >> 20 & (cap - 1);
    while (keys[j] != 0 && keys[j] != key) j = (j + 1) & (cap - 1);
    keys[j] = key;
    vals[j] = v;
}

static void memo_put(rx_store *s, uint64_t key, rx_id v) {
    if ((s->memo_n + 1) * 2 > s->memo_cap) {
        const size_t cap = s->memo_cap ? s->memo_cap * 2 : 4096;
        uint64_t *k = calloc(cap, sizeof *k);
        rx_id *v2 = malloc(cap * sizeof *v2);
        if (!k || !v2) {
            free(k), free(v2);
            return; /* a memo is an optimisation: carry on without it */
        }
        for (size_t i = 0; i < s->memo_cap; i++)
            if (s->memo_key[i]) memo_put_at(k, v2, cap, s->memo_key[i], s->memo_val[i]);
        free(s->memo_key), free(s->memo_val);
        s->memo_key = k, s->memo_val = v2, s->memo_cap = cap;
    }
    size_t before = 0;
    rx_id old;
    if (!memo_get(s, key, &old)) before = 1;
    memo_put_at(s->memo_key, s->memo_val, s->memo_cap, key, v);
    s->memo_n += before;
}

rx_id rx_deriv(rx_store *s, rx_id r, uint8_t c) {
    if (r <= RX_EPSILON || s->oom) return RX_NOTHING;
    const uint64_t key = ((uint64_t)(uint32_t)r << 8 | c) + 1; /* never 0: 0 marks an empty slot */
    rx_id out;
    if ((size_t)r < s->row_of_cap && s->row_of[r] >= 0 && (out = s->rows[(size_t)s->row_of[r] * 256 + c]) >= 0) return out;
    if (memo_get(s, key, &out)) return out;
    const rx_node n = s->nodes[r]; /* a copy: constructors may move the array */
    switch (n.kind) {
    case RXK_BYTES: out = rx_byteset_has(&n.set, c) ? RX_EPSILON : RX_NOTHING; break;
    case RXK_CONCAT: {
        const rx_id head = rx_concat(s, rx_deriv(s, n.a, c), n.b);
        out = s->nodes[n.a].nullable ? rx_or(s, head, rx_deriv(s, n.b, c)) : head;
        break;
    }
    case RXK_OR: {
        rx_id *d = malloc(sizeof *d * (size_t)n.b);
        if (!d) {
            s->oom = true;
            return RX_NOTHING;
        }
        for (int32_t i = 0; i < n.b; i++) d[i] = rx_deriv(s, s->args[n.a + i], c);
        out = or_list(s, d, (size_t)n.b);
        free(d);
        break;
    }
    case RXK_REPEAT: {
        const int32_t min = n.min > 0 ? n.min - 1 : 0, max = n.max == RX_INF ? RX_INF : n.max - 1;
        out = rx_concat(s, rx_deriv(s, n.a, c), rx_repeat(s, n.a, min, max));
        break;
    }
    default: out = RX_NOTHING; break;
    }
    if (!s->oom) memo_put(s, key, out);
    return out;
}

bool rx_matches(rx_store *s, rx_id r, const void *bytes, size_t n) {
    const uint8_t *b = bytes;
    for (size_t i = 0; i < n && r != RX_NOTHING; i++) r = rx_deriv(s, r, b[i]);
    return rx_nullable(s, r);
}

rx_id rx_next_slow(rx_store *s, rx_id r, uint8_t c) {
    const rx_id d = rx_deriv(s, r, c);
    if (s->oom) return d;
    const uint8_t *cls = rx_class_map(s, r); /* NULL: out of memory, one byte filed */
    if ((size_t)r >= s->row_of_cap) {
        size_t cap = s->row_of_cap;
        if (!GROW_ARRAY(s->row_of, (size_t)r + 1, &cap)) return d; /* the table is an optimisation */
        for (size_t i = s->row_of_cap; i < cap; i++) s->row_of[i] = -1;
        s->row_of_cap = cap;
    }
    if (s->row_of[r] < 0) {
        if (!GROW_ARRAY(s->rows, (s->n_rows + 1) * 256, &s->rows_cap)) return d;
        for (size_t i = 0; i < 256; i++) s->rows[s->n_rows * 256 + i] = -1;
        s->row_of[r] = (int32_t)s->n_rows++;
    }
    rx_id *row = s->rows + (size_t)s->row_of[r] * 256;
    row[c] = d;
    if (cls)
        for (int b = 0; b < 256; b++)
            if (cls[b] == cls[c]) row[b] = d; /* the same derivative */
    return d;
}

#define CONTAINS_BUDGET 1024 /* state pairs rx_contains explores before it gives up (answering no) */

/* A pair (small's state, big's state) seen by rx_contains. */
static bool pair_seen(uint64_t *set, size_t cap, uint64_t key) {
    for (size_t j = (key * 0x9e3779b97f4a7c15ull) >> 20 & (cap - 1);; j = (j + 1) & (cap - 1)) {
        if (set[j] == key) return true;
        if (set[j] == 0) {
            set[j] = key;
            return false;
        }
    }
}

/* The partitions of the last pair of states whose bytes were listed, and
 * their refinement (consecutive pairs of a walk mostly share them). */
typedef struct pair_classes {
    int32_t last_a, last_b;
    uint8_t cls[256];
} pair_classes;

/* One byte per class of both a's and b's byte partitions into out (the
 * other bytes of a class have the same derivatives in both); their count. */
static int pair_bytes(rx_store *s, pair_classes *pc, rx_id a, rx_id b, uint8_t *out) {
    if (!rx_class_map(s, a) || !rx_class_map(s, b)) {
        for (int c = 0; c < 256; c++) out[c] = (uint8_t)c;
        return 256;
    }
    if (s->cls_of[a] != pc->last_a || s->cls_of[b] != pc->last_b) {
        pc->last_a = s->cls_of[a], pc->last_b = s->cls_of[b];
        rx_class_refine(pc->cls, s->cls_maps + (size_t)pc->last_a * 256, s->cls_maps + (size_t)pc->last_b * 256);
    }
    int n = 0, seen = -1; /* classes are numbered by their first byte's order */
    for (int c = 0; c < 256; c++)
        if (pc->cls[c] > seen) seen = pc->cls[c], out[n++] = (uint8_t)c;
    return n;
}

/* Walks the pairs of states the strings of small's language reach in both:
 * contained unless some string is accepted by small and not by big (or, for
 * prefixes, leads big to ∅: every other term has a non-empty language). */
static bool contains_walk(rx_store *s, rx_id big, rx_id small, bool prefix) {
    enum { CAP = 4 * CONTAINS_BUDGET };
    uint64_t *seen = calloc(CAP, sizeof *seen);
    rx_id(*todo)[2] = malloc(sizeof *todo * CONTAINS_BUDGET);
    bool ok = seen && todo;
    size_t n = 0, head = 0;
    if (ok) {
        todo[n][0] = small, todo[n][1] = big, n++;
        pair_seen(seen, CAP, ((uint64_t)(uint32_t)small << 32 | (uint32_t)big) + 1);
    }
    pair_classes pc = {.last_a = -1, .last_b = -1};
    uint8_t bytes[256];
    while (ok && head < n) {
        const rx_id a = todo[head][0], b = todo[head][1];
        head++;
        if (!prefix && rx_nullable(s, a) && !rx_nullable(s, b)) ok = false;
        const int n_bytes = pair_bytes(s, &pc, a, b, bytes);
        for (int i = 0; i < n_bytes && ok; i++) {
            const uint8_t c = bytes[i];
            const rx_id a2 = rx_deriv(s, a, c);
            if (a2 == RX_NOTHING) continue;
            const rx_id b2 = rx_deriv(s, b, c);
            if (b2 == RX_NOTHING) ok = false;
            else if (!pair_seen(seen, CAP, ((uint64_t)(uint32_t)a2 << 32 | (uint32_t)b2) + 1)) {
                if (n == CONTAINS_BUDGET) ok = false;
                else todo[n][0] = a2, todo[n][1] = b2, n++;
            }
        }
    }
    free(seen);
    free(todo);
    return ok && !s->oom;
}

/* Prefix containment of unit{a,n} in big, walked a unit at a time: the
 * states big reaches after whole units are collected step by step (j units,
 * j = 1, 2, ...), each found by a walk of (unit's state, big's state) pairs
 * from the states of step j − 1 that are new; once a step brings no new
 * state (or j reaches n) every state big can reach is known to read on. A
 * pair walk over small's own states would pair each of big's states with
 * every count of units read so far: inside a string that is a vocabulary
 * slice's 30 characters times their UTF-8 bytes. 1 yes, 0 no, -1 not
 * decided within the budget. */
static int units_walk(rx_store *s, rx_id big, rx_id unit, int32_t n) {
    enum { CAP = 4 * CONTAINS_BUDGET };
    uint64_t *seen = calloc(CAP, sizeof *seen);                /* (unit state, big state) pairs, + 1 */
    uint64_t *states = calloc(CAP, sizeof *states);            /* big's states after whole units, + 1 */
    rx_id(*todo)[2] = malloc(sizeof *todo * CONTAINS_BUDGET);  /* this step's pairs */
    rx_id *fresh = malloc(sizeof *fresh * CONTAINS_BUDGET);    /* big's states new at a step */
    int verdict = seen && states && todo && fresh ? 1 : -1;
    size_t n_pairs = 0, n_fresh = 0, n_states = 0;
    if (verdict == 1) {
        fresh[n_fresh++] = big;
        pair_seen(states, CAP, (uint64_t)(uint32_t)big + 1);
        n_states++;
    }
    pair_classes pc = {.last_a = -1, .last_b = -1};
    uint8_t bytes[256];
    for (int32_t step = 0; verdict == 1 && n_fresh && step < n; step++) {
        size_t n_todo = 0, head = 0;
        for (size_t i = 0; i < n_fresh; i++) {
            if (pair_seen(seen, CAP, ((uint64_t)(uint32_t)unit << 32 | (uint32_t)fresh[i]) + 1)) continue;
            if (n_pairs++ == CONTAINS_BUDGET) verdict = -1;
            else todo[n_todo][0] = unit, todo[n_todo][1] = fresh[i], n_todo++;
        }
        n_fresh = 0;
        while (verdict == 1 && head < n_todo) {
            const rx_id a = todo[head][0], b = todo[head][1];
            head++;
            const int n_bytes = pair_bytes(s, &pc, a, b, bytes);
            for (int i = 0; i < n_bytes && verdict == 1; i++) {
                const rx_id a2 = rx_deriv(s, a, bytes[i]);
                if (a2 == RX_NOTHING) continue;
                const rx_id b2 = rx_deriv(s, b, bytes[i]);
                if (b2 == RX_NOTHING) {
                    verdict = 0; /* a string of units (and a part of one) big cannot read */
                    break;
                }
                if (rx_nullable(s, a2) && !pair_seen(states, CAP, (uint64_t)(uint32_t)b2 + 1)) { /* a unit read */
                    if (++n_states > CONTAINS_BUDGET) verdict = -1;
                    else fresh[n_fresh++] = b2;
                }
                if (a2 != RX_EPSILON && !pair_seen(seen, CAP, ((uint64_t)(uint32_t)a2 << 32 | (uint32_t)b2) + 1)) {
                    if (n_pairs++ == CONTAINS_BUDGET || n_todo == CONTAINS_BUDGET) verdict = -1;
                    else todo[n_todo][0] = a2, todo[n_todo][1] = b2, n_todo++;
                }
            }
        }
    }
    free(seen);
    free(states);
    free(todo);
    free(fresh);
    return s->oom ? -1 : verdict;
}

static bool contains(rx_store *s, rx_id big, rx_id small, bool prefix);

/* A sufficient case of prefix containment, read from the terms' structure:
 * is every string of j ≤ n units (strings of `unit`; n RX_INF: any j) a
 * prefix of one of big's? Yes when big is
 *   - X{lo,m} with unit ⊆ X and m ≥ n (j units are a prefix of X^max(j,lo));
 *   - H·T where H answers yes (every term but ∅ matches some string, so a
 *     prefix of H's is one of H·T's), or where unit ⊆ H and T answers yes
 *     for n − 1 units (the first unit read by H, the rest a prefix of T's);
 *   - an alternation one of whose alternatives answers yes.
 * This is the check of a vocabulary slice (a repeat of one character)
 * against a string's terminal: inside a string every position is a new
 * term, and a walk of state pairs (a slice has a state per character and
 * UTF-8 byte) would pay each time. Depth-bounded; no means "not shown". */
static bool units_prefix(rx_store *s, rx_id big, rx_id unit, int32_t n, int depth) {
    if (n == 0) return true;
    if (depth > 32) return false;
    const rx_node nb = s->nodes[big];
    switch (nb.kind) {
    case RXK_REPEAT:
        return nb.max >= n && contains(s, nb.a, unit, false);
    case RXK_CONCAT:
        if (units_prefix(s, nb.a, unit, n, depth + 1)) return true;
        return contains(s, nb.a, unit, false) && units_prefix(s, nb.b, unit, n == RX_INF ? n : n - 1, depth + 1);
    case RXK_OR:
        for (int32_t i = 0; i < nb.b; i++)
            if (units_prefix(s, s->args[nb.a + i], unit, n, depth + 1)) return true;
        return false;
    default:
        return false;
    }
}

static bool contains(rx_store *s, rx_id big, rx_id small, bool prefix) {
    if (small == RX_NOTHING || big == small) return true;
    if (big == RX_NOTHING) return false;
    /* a byte starting one of small's strings must start one of big's: most
     * pairs fail here, with no walk and no memo entry */
    const rx_byteset *fb = rx_first_bytes(s, big), *fs = fb ? rx_first_bytes(s, small) : NULL;
    if (fb && fs) {
        fb = rx_first_bytes(s, big); /* the second call may have moved the array */
        for (int w = 0; w < 4; w++)
            if (fs->w[w] & ~fb->w[w]) return false;
    }
    /* a string of small's longer than any of big's is no prefix of one */
    if (prefix && s->nodes[small].max_len > s->nodes[big].max_len) return false;
    if (prefix && s->nodes[small].kind == RXK_REPEAT && units_prefix(s, big, s->nodes[small].a, s->nodes[small].max, 0))
        return true;
    /* apart from the derivatives' keys (below 2^40) */
    const uint64_t key = 1ull << 63 | (uint64_t)prefix << 62 | (uint64_t)(uint32_t)big << 31 | (uint32_t)small;
    rx_id v;
    if (memo_get(s, key, &v)) return v != 0;
    int r = -1;
    if (prefix && s->nodes[small].kind == RXK_REPEAT) r = units_walk(s, big, s->nodes[small].a, s->nodes[small].max);
    if (r < 0) r = contains_walk(s, big, small, prefix);
    memo_put(s, key, r);
    return r != 0;
}

bool rx_contains(rx_store *s, rx_id big, rx_id small) { return contains(s, big, small, false); }
bool rx_contains_prefixes(rx_store *s, rx_id big, rx_id small) { return contains(s, big, small, true); }

#define FIRST_DEPTH 256 /* nesting followed by first_of; deeper terms ask their derivatives */

/* The bytes starting a string of r's language, from its structure: every
 * term but ∅ has a non-empty language, so a byte has a live derivative
 * exactly when it starts some string (a head's, or the tail's after a
 * nullable head). Filed per term; the arrays cover r and its subterms
 * (which have smaller ids). */
static rx_byteset first_of(rx_store *s, rx_id r, int depth) {
    if (s->first_known[r]) return s->first[r];
    rx_byteset b = {{0}};
    if (depth > FIRST_DEPTH) {
        for (int c = 0; c < 256; c++)
            if (rx_next(s, r, (uint8_t)c) != RX_NOTHING) b.w[c >> 6] |= 1ull << (c & 63);
    } else {
        for (rx_id t = r; t > RX_EPSILON;) {
            const rx_node n = s->nodes[t];
            rx_byteset f = n.set;
            if (n.kind == RXK_OR) {
                f = (rx_byteset){{0}};
                for (int32_t i = 0; i < n.b; i++) {
                    const rx_byteset g = first_of(s, s->args[n.a + i], depth + 1);
                    for (int w = 0; w < 4; w++) f.w[w] |= g.w[w];
                }
            } else if (n.kind == RXK_CONCAT || n.kind == RXK_REPEAT) {
                f = first_of(s, n.a, depth + 1);
            }
            for (int w = 0; w < 4; w++) b.w[w] |= f.w[w];
            /* a concatenation's tail starts a string too when its head may be empty */
            t = n.kind == RXK_CONCAT && s->nodes[n.a].nullable ? n.b : RX_NOTHING;
        }
    }
    s->first[r] = b;
    s->first_known[r] = true;
    return b;
}

const rx_byteset *rx_first_bytes(rx_store *s, rx_id r) {
    if ((size_t)r >= s->first_cap || (size_t)r >= s->first_known_cap || !s->first_known[r]) {
        const size_t old = s->first_known_cap;
        if (!GROW_ARRAY(s->first, (size_t)r + 1, &s->first_cap) || !GROW_ARRAY(s->first_known, (size_t)r + 1, &s->first_known_cap))
            return NULL;
        for (size_t i = old; i < s->first_known_cap; i++) s->first_known[i] = false;
        first_of(s, r, 0);
    }
    return &s->first[r];
}
