/* earley.c — the scannerless Earley parser (earley.h). Items of all sets
 * lie in one array, set k from set_start[k]; completion and prediction
 * follow Aycock and Horspool (a predicted nullable nonterminal also
 * advances the predicting item), so no set is revisited. */
#include "grammar/earley.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "grammar/earley_internal.h"
#include "grammar/regex_internal.h"

static rx_id term_at(const cfg *g, int32_t rule, int32_t dot) {
    const cfg_rule *r = &g->rules[rule];
    if (dot >= r->len) return -1;
    const cfg_sym s = g->syms[r->rhs + dot];
    return cfg_is_terminal(s) ? cfg_term_of(s) : -1;
}

static uint64_t item_hash(const item *it) {
    uint64_t h = (uint64_t)(uint32_t)it->rule * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)(uint32_t)it->dot * 0xc2b2ae3d27d4eb4full + (h >> 29);
    h ^= (uint64_t)(uint32_t)it->origin * 0x165667b19e3779f9ull + (h >> 31);
    h ^= (uint64_t)(uint32_t)it->term * 0xff51afd7ed558ccdull + (h >> 27);
    return h ^ (h >> 33);
}

static bool slots_grow(earley *e) {
    const size_t slots = e->slots ? e->slots * 2 : 256;
    uint32_t *it = malloc(sizeof *it * slots), *st = calloc(slots, sizeof *st);
    if (!it || !st) {
        free(it), free(st);
        return false;
    }
    free(e->slot_item), free(e->slot_stamp);
    e->slot_item = it, e->slot_stamp = st, e->slots = slots, e->epoch = 1;
    if (!e->n_sets) return true;
    /* re-file the current set's items */
    const size_t s0 = e->set_start[e->n_sets - 1];
    for (size_t i = s0; i < e->n_items; i++) {
        size_t j = item_hash(&e->items[i]) & (slots - 1);
        while (st[j] == e->epoch) j = (j + 1) & (slots - 1);
        st[j] = e->epoch, it[j] = (uint32_t)i;
    }
    return true;
}

/* Adds an item to the current (last) set unless it is there. */
static void add(earley *e, int32_t rule, int32_t dot, int32_t origin, rx_id term) {
    if (e->failed) return;
    const item x = {rule, dot, origin, term};
    const size_t s0 = e->set_start[e->n_sets - 1];
    if ((e->n_items - s0 + 1) * 2 > e->slots && !slots_grow(e)) goto oom;
    size_t j = item_hash(&x) & (e->slots - 1);
    for (; e->slot_stamp[j] == e->epoch; j = (j + 1) & (e->slots - 1)) {
        const item *y = &e->items[e->slot_item[j]];
        if (y->rule == rule && y->dot == dot && y->origin == origin && y->term == term) return;
    }
    if (e->n_items >= e->items_cap && (e->n_items >= UINT32_MAX || !GROW_ARRAY(e->items, e->n_items + 1, &e->items_cap)))
        goto oom;
    e->items[e->n_items] = x;
    e->slot_stamp[j] = e->epoch, e->slot_item[j] = (uint32_t)e->n_items;
    e->n_items++;
    return;
oom:
    e->failed = true;
}

static void advance(earley *e, const item *it) { add(e, it->rule, it->dot + 1, it->origin, term_at(e->g, it->rule, it->dot + 1)); }

/* Completes and predicts over the current set until nothing is added. */
static void closure(earley *e) {
    const cfg *g = e->g;
    const int32_t k = (int32_t)e->n_sets - 1;
    for (size_t i = e->set_start[k]; i < e->n_items && !e->failed; i++) {
        const item it = e->items[i];
        const cfg_rule *ru = &g->rules[it.rule];
        if (it.dot == ru->len) { /* complete: advance the items of the origin set waiting for lhs */
            if ((size_t)it.origin <= e->floor) e->below = true;
            if (it.origin == k) { /* the set being built */
                for (size_t j = e->set_start[k]; j < e->n_items; j++) {
                    const item w = e->items[j];
                    const cfg_rule *rw = &g->rules[w.rule];
                    if (w.dot < rw->len && g->syms[rw->rhs + w.dot] == ru->lhs) advance(e, &w);
                }
            } else {
                const size_t end = e->wait_start[it.origin + 1];
                for (size_t j = e->wait_start[it.origin]; j < end; j++) {
                    const item w = e->items[e->wait[j]];
                    const cfg_rule *rw = &g->rules[w.rule];
                    if (g->syms[rw->rhs + w.dot] == ru->lhs) advance(e, &w);
                }
            }
            continue;
        }
        const cfg_sym s = g->syms[ru->rhs + it.dot];
        if (cfg_is_terminal(s)) { /* a terminal that may end here */
            if (rx_nullable_fast(e->rx, it.term)) advance(e, &it);
            continue;
        }
        for (int32_t r = g->first_rule[s]; r < g->first_rule[s + 1]; r++) add(e, r, 0, k, term_at(g, r, 0));
        if (g->nullable[s]) advance(e, &it);
    }
    for (size_t i = e->set_start[k]; i < e->n_items && !e->failed; i++) { /* file the set's waiting items */
        const item *it = &e->items[i];
        const cfg_rule *ru = &g->rules[it->rule];
        if (it->dot == ru->len || cfg_is_terminal(g->syms[ru->rhs + it->dot])) continue;
        if (e->n_wait >= e->wait_cap && !GROW_ARRAY(e->wait, e->n_wait + 1, &e->wait_cap)) e->failed = true;
        else e->wait[e->n_wait++] = (uint32_t)i;
    }
}

/* The bytes the current (last, closed) set can read: its terms' first bytes. */
static void file_next_bytes(earley *e) {
    const size_t k = e->n_sets - 1;
    if (k >= e->set_next_cap && !GROW_ARRAY(e->set_next, k + 1, &e->set_next_cap)) {
        e->failed = true;
        return;
    }
    rx_byteset b = {{0}};
    for (size_t i = e->set_start[k]; i < e->n_items; i++) {
        if (e->items[i].term < 0) continue;
        const rx_byteset *f = rx_first_fast(e->rx, e->items[i].term);
        if (!f) {
            e->failed = true;
            return;
        }
        for (int w = 0; w < 4; w++) b.w[w] |= f->w[w];
    }
    e->set_next[k] = b;
}

static bool open_set(earley *e) {
    if (e->n_sets >= e->sets_cap && !GROW_ARRAY(e->set_start, e->n_sets + 1, &e->sets_cap)) return false;
    if (e->n_sets >= e->set_distinct_cap && !GROW_ARRAY(e->set_distinct, e->n_sets + 1, &e->set_distinct_cap))
        return false;
    e->set_distinct[e->n_sets] = 0;
    if (e->n_sets >= e->set_single_cap && !GROW_ARRAY(e->set_single, e->n_sets + 1, &e->set_single_cap)) return false;
    e->set_single[e->n_sets] = -2;
    /* wait_start has one entry more than sets: set k's list ends at wait_start[k + 1] */
    if (e->n_sets + 1 >= e->wait_start_cap && !GROW_ARRAY(e->wait_start, e->n_sets + 2, &e->wait_start_cap)) return false;
    e->wait_start[e->n_sets] = e->n_wait;
    e->set_start[e->n_sets++] = e->n_items;
    if (++e->epoch == 0) { /* the stamps wrapped: clear them */
        memset(e->slot_stamp, 0, sizeof *e->slot_stamp * e->slots);
        e->epoch = 1;
    }
    return true;
}

earley *earley_new(const cfg *g, rx_store *rx, wick_error *err) {
    if (!g->finished) {
        wick_fail(err, "grammar not finished");
        return NULL;
    }
    earley *e = calloc(1, sizeof *e);
    if (!e || !slots_grow(e)) goto oom;
    e->g = g;
    e->rx = rx ? rx : g->rx;
    e->floor = SIZE_MAX;
    if (!open_set(e)) goto oom;
    for (int32_t r = g->first_rule[g->start]; r < g->first_rule[g->start + 1]; r++) add(e, r, 0, 0, term_at(g, r, 0));
    closure(e);
    file_next_bytes(e);
    if (e->failed) goto oom;
    return e;
oom:
    earley_free(e);
    wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory starting the grammar's parser");
    return NULL;
}

void earley_free(earley *e) {
    if (!e) return;
    free(e->items);
    free(e->set_start);
    free(e->set_next);
    free(e->set_distinct);
    free(e->set_single);
    free(e->wait);
    free(e->wait_start);
    free(e->walk);
    free(e->slot_item);
    free(e->slot_stamp);
    earley_plans_free(e);
    free(e);
}

static uint64_t place_hash(const item *it) {
    const item x = {it->rule, it->dot, it->origin, -2};
    return item_hash(&x);
}

/* Do the current set's items at terminals differ in (rule, dot, origin)?
 * (Uses the slot table under a hash epoch of its own.) */
static uint8_t set_distinct(earley *e) {
    const size_t s0 = e->set_start[e->n_sets - 1];
    while ((e->n_items - s0 + 1) * 2 > e->slots)
        if (!slots_grow(e)) return 2;
    if (++e->epoch == 0) {
        memset(e->slot_stamp, 0, sizeof *e->slot_stamp * e->slots);
        e->epoch = 1;
    }
    for (size_t i = s0; i < e->n_items; i++) {
        const item *x = &e->items[i];
        if (x->term < 0) continue;
        size_t j = place_hash(x) & (e->slots - 1);
        for (; e->slot_stamp[j] == e->epoch; j = (j + 1) & (e->slots - 1)) {
            const item *y = &e->items[e->slot_item[j]];
            if (y->rule == x->rule && y->dot == x->dot && y->origin == x->origin) return 2;
        }
        e->slot_stamp[j] = e->epoch, e->slot_item[j] = (uint32_t)i;
    }
    return 1;
}

/* Files the current set's items in the slot table (they were added unhashed). */
static void file_items(earley *e) {
    const size_t s0 = e->set_start[e->n_sets - 1];
    if ((e->n_items - s0 + 1) * 2 > e->slots) { /* a larger table, where slots_grow files them */
        while ((e->n_items - s0 + 1) * 2 > e->slots)
            if (!slots_grow(e)) {
                e->failed = true;
                return;
            }
        return;
    }
    for (size_t i = s0; i < e->n_items; i++) {
        size_t j = item_hash(&e->items[i]) & (e->slots - 1);
        while (e->slot_stamp[j] == e->epoch) j = (j + 1) & (e->slots - 1);
        e->slot_stamp[j] = e->epoch, e->slot_item[j] = (uint32_t)i;
    }
}

/* Keeps the set just built, or drops it when it is empty or memory ran out. */
static bool keep_set(earley *e) {
    if (e->failed || e->n_items == e->set_start[e->n_sets - 1]) {
        e->n_items = e->set_start[--e->n_sets];
        e->n_wait = e->wait_start[e->n_sets];
        return false;
    }
    return true;
}

bool earley_push(earley *e, uint8_t c) {
    if (e->failed || !rx_byteset_has(&e->set_next[e->n_sets - 1], c)) return false;
    const size_t from = e->set_start[e->n_sets - 1], to = e->n_items;
    /* known from the second byte read from the set on (most sets read one) */
    uint8_t *known = &e->set_distinct[e->n_sets - 1];
    if (*known == 3) *known = set_distinct(e);
    else if (*known == 0) *known = 3;
    const bool distinct = *known == 1;
    if (!open_set(e)) {
        e->failed = true;
        return false;
    }
    rx_store *rx = e->rx;
    bool ends = false; /* some terminal read may end here */
    rx_byteset next = {{0}};
    if (distinct) { /* the items read are distinct: appended, not hashed */
        if (e->items_cap < to + (to - from) && !GROW_ARRAY(e->items, to + (to - from), &e->items_cap)) {
            e->failed = true;
        } else {
            for (size_t i = from; i < to; i++) {
                const item it = e->items[i];
                if (it.term < 0) continue;
                const rx_id t = rx_next(rx, it.term, c);
                if (t == RX_NOTHING) continue;
                e->items[e->n_items++] = (item){it.rule, it.dot, it.origin, t};
                ends |= rx_nullable_fast(rx, t);
                const rx_byteset *f = rx_first_fast(rx, t);
                if (!f) {
                    e->failed = true;
                    break;
                }
                for (int w = 0; w < 4; w++) next.w[w] |= f->w[w];
            }
            if (ends) file_items(e);
        }
    } else {
        for (size_t i = from; i < to; i++) {
            const item it = e->items[i];
            if (it.term < 0) continue;
            const rx_id t = rx_next(rx, it.term, c);
            if (t == RX_NOTHING) continue;
            add(e, it.rule, it.dot, it.origin, t);
            ends |= rx_nullable_fast(rx, t);
        }
    }
    /* the items read are all at terminals: only one that may end completes
     * or predicts anything */
    if (ends) closure(e);
    if (!e->failed && distinct && !ends) { /* the same places as the set read from: distinct too */
        const size_t k = e->n_sets - 1;
        if (k >= e->set_next_cap && !GROW_ARRAY(e->set_next, k + 1, &e->set_next_cap)) e->failed = true;
        else e->set_next[k] = next, e->set_distinct[k] = 1;
    } else if (!e->failed) {
        file_next_bytes(e);
    }
    return keep_set(e);
}

bool earley_push_terms(earley *e, const rx_id *terms) {
    if (e->failed) return false;
    const size_t from = e->set_start[e->n_sets - 1], to = e->n_items;
    if (!open_set(e)) {
        e->failed = true;
        return false;
    }
    bool ends = false;
    size_t j = 0;
    for (size_t i = from; i < to; i++) {
        const item it = e->items[i];
        if (it.term < 0) continue;
        const rx_id t = terms[j++];
        if (t == RX_NOTHING) continue;
        add(e, it.rule, it.dot, it.origin, t);
        ends |= rx_nullable_fast(e->rx, t);
    }
    if (ends) closure(e);
    if (!e->failed) file_next_bytes(e);
    return keep_set(e);
}

void earley_pop(earley *e, size_t n) {
    if (n > e->n_sets - 1) n = e->n_sets - 1;
    if (!n) return;
    e->n_sets -= n;
    e->n_items = e->set_start[e->n_sets]; /* the removed sets' items; new sets get a new hash epoch */
    e->n_wait = e->wait_start[e->n_sets];
}

size_t earley_depth(const earley *e) { return e->n_sets - 1; }
bool earley_failed(const earley *e) { return e->failed; }

bool earley_accepting(const earley *e) {
    const cfg *g = e->g;
    for (size_t i = e->set_start[e->n_sets - 1]; i < e->n_items; i++) {
        const item *it = &e->items[i];
        const cfg_rule *r = &g->rules[it->rule];
        if (it->origin == 0 && r->lhs == g->start && it->dot == r->len) return true;
    }
    return false;
}

static bool push_cb(void *ctx, uint8_t c) { return earley_push(ctx, c); }
static void pop_cb(void *ctx, size_t n) { earley_pop(ctx, n); }

void earley_mask(earley *e, const token_trie *t, uint64_t *mask) {
    memset(mask, 0, sizeof *mask * token_mask_words(token_trie_vocab(t)));
    token_trie_walk(t, push_cb, pop_cb, e, mask);
}

bool earley_set_reads_slice(earley *e, rx_id slice) {
    for (size_t i = e->set_start[e->n_sets - 1]; i < e->n_items; i++) {
        const rx_id t = e->items[i].term;
        if (t >= 0 && rx_contains_prefixes(e->rx, t, slice)) return true;
    }
    return false;
}

/* ---- the sliced mask's walk ----
 * Most sets a trie walk reads from have one item at a terminal (inside a
 * string, a number, a key). A byte read from such a set leaves that item
 * alone, its terminal derived, with no closure unless the terminal may end
 * there: the walk then follows the terminal's DFA state alone and pushes
 * the path into the parser only where a terminal may end or a set has
 * other items at terminals. Same sets, same masks, most Earley sets never
 * built. */

#define WALK_MAX 4097 /* the deepest trie node + 1 (token_trie's PIECE_MAX) */

typedef struct one_walk {
    earley *e;
    size_t mat; /* bytes of the current path pushed into the parser */
    /* at a depth d > mat: the only item at a terminal of the set the path
     * would reach is the one of the set at depth mat, its terminal read to term[d] */
    rx_id term[WALK_MAX];
    uint8_t path[WALK_MAX];
} one_walk;

/* The term of the current set's only item at a terminal, or -1. */
static rx_id single_term(earley *e) {
    rx_id *known = &e->set_single[e->n_sets - 1];
    if (*known == -2) {
        rx_id t = -1;
        int n = 0;
        for (size_t i = e->set_start[e->n_sets - 1]; i < e->n_items && n < 2; i++)
            if (e->items[i].term >= 0) t = e->items[i].term, n++;
        *known = n == 1 ? t : -1;
    }
    return *known;
}

static bool one_step(void *ctx, size_t d, uint8_t c) {
    one_walk *w = ctx;
    earley *e = w->e;
    if (d >= WALK_MAX || e->failed) return false; /* a failed parser refuses every byte */
    w->path[d] = c;
    if (w->mat > d - 1) {
        earley_pop(e, w->mat - (d - 1));
        w->mat = d - 1;
    }
    const rx_id from = w->mat == d - 1 ? single_term(e) : w->term[d - 1];
    if (from < 0) { /* several items at terminals (or none): the parser reads c */
        if (!earley_push(e, c)) return false;
        w->mat = d;
        return true;
    }
    const rx_id t = rx_next(e->rx, from, c);
    if (t == RX_NOTHING) return false; /* what earley_push would refuse */
    if (!rx_nullable_fast(e->rx, t)) { /* the set would be that item alone */
        w->term[d] = t;
        return true;
    }
    for (size_t k = w->mat + 1; k <= d; k++) { /* the terminal may end: the parser takes the path */
        if (!earley_push(e, w->path[k])) return false; /* only when out of memory */
        w->mat = k;
    }
    return true;
}

void earley_walk_lone_under(earley *e, const token_trie *t, size_t node, uint64_t *mask) {
    if (!e->walk && !(e->walk = malloc(sizeof *e->walk))) {
        e->failed = true;
        return;
    }
    one_walk *w = e->walk;
    w->e = e;
    w->mat = 0;
    token_trie_walk_under(t, node, one_step, w, mask);
    earley_pop(e, w->mat);
    w->mat = 0;
}

void earley_mask_sliced(earley *e, const token_slices *ts, const rx_id *terms, uint64_t *mask) {
    if (earley_plan_mask(e, ts, terms, mask)) return;
    const int n = token_slices_count(ts);
    const size_t words = token_mask_words(token_trie_vocab(token_slices_trie(ts, 0)));
    memset(mask, 0, sizeof *mask * words);
    for (int i = 0; i <= n; i++) {
        if (i < n && earley_set_reads_slice(e, terms[i])) {
            const uint64_t *b = token_slices_bits(ts, i);
            for (size_t k = 0; k < words; k++) mask[k] |= b[k];
        } else {
            earley_walk_lone_under(e, token_slices_trie(ts, i), 0, mask);
        }
    }
}
