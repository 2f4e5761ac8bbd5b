/* earley_plan.c — masks planned per the terms a set is reading. Which
 * tokens a set allows depends on the rest of the parse only where some
 * terminal may end inside a token; up to there it is the terminals' DFAs
 * alone. So for the terms the set's items are reading (in order) a plan
 * keeps, once, from a DFA-only walk of the vocabulary:
 *   - the tokens read inside the terminals with none of them able to end
 *     before the token does (allowed, whatever the parse around);
 *   - the places where a terminal may first end (entries), grouped by the
 *     terms reached there: every entry of a group leaves the parser in the
 *     same set (the terminals' items with those terms, closed), so the set
 *     is built once per group and only the bytes after the entries are
 *     read by the parser — the subtrees below the entries, or, when they are
 *     few, their bytes merged into one small trie so that a suffix shared by
 *     many tokens (`",` after any string) is read once.
 * Inside a JSON string most masks then cost a copy and one closure instead
 * of a closure for every token holding a quote. A plan is made the first
 * time its terms are met and its suffixes merged the second (merging costs
 * more than it saves for a state met once); plans are kept per parser
 * within a memory budget; a parser's plans may be published
 * (immutable) to the later parsers of its grammar, whose stores copy its
 * own, so that the terms are the same ids (a later parser given a plan
 * unmerged merges a copy). The mask is the walk's exactly. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "grammar/earley_internal.h"
#include "grammar/regex_internal.h"

#define PLAN_MAX_TERMS 512      /* sets reading more terminals are walked */
#define MERGE_MAX_PIECES 4096   /* a group's suffixes merged into a trie up to this many tokens */
#define PLANS_MAX_BYTES (32u << 20)
#define PLANS_MAX 8192

typedef struct plan_entry {
    int slice;        /* the trie (slice) it lies in */
    uint32_t node;    /* the node where a terminal may first end */
} plan_entry;

typedef struct plan_group {
    rx_id *terms;          /* the terms reached (k of them) */
    token_trie *merged;    /* the entries' suffixes as one trie, or NULL */
    plan_entry *entries;   /* else the entries, each walked below its node */
    size_t n_entries, entries_cap;
    /* the group's tokens when its walk never completed an item begun at or
     * below the set masked (so the walk read nothing of the parse there but
     * the places below): valid for sets whose items at terminals are at
     * these places (rule, dot pairs) */
    int32_t *places;
    uint64_t places_hash;
    int32_t *ids;
    size_t n_ids;
    bool context; /* a walk of it read the parse below: never kept */
} plan_group;

typedef struct mask_plan {
    atomic_int refs;
    uint32_t whole;        /* slices taken whole (bit i) */
    int32_t *ids;          /* the tokens read inside the terminals: ids, or */
    uint64_t *bits;        /* their bitset (when more than a bitset's worth) */
    size_t n_ids;
    plan_group *groups;
    size_t n_groups;
    size_t bytes;
    bool merged; /* the groups' suffixes merged where they are few */
} mask_plan;

typedef struct plan_slot {
    uint64_t hash; /* 0: empty */
    rx_id *terms;
    int k;
    mask_plan *plan; /* NULL: met once */
} plan_slot;

/* Plans by their terms: a parser's own (mutable), or a set published for
 * the parsers of one grammar (immutable, counted references). */
struct earley_plans {
    atomic_int refs;
    const token_slices *ts; /* the slices the plans were made for */
    plan_slot *slots;
    size_t cap, n; /* cap a power of two */
    size_t bytes;
    uint64_t *scratch; /* a parser's own: a group's tokens while they are learnt */
};

static void plan_release(mask_plan *p) {
    if (!p || atomic_fetch_sub(&p->refs, 1) != 1) return;
    for (size_t g = 0; g < p->n_groups; g++) {
        free(p->groups[g].terms);
        token_trie_free(p->groups[g].merged);
        free(p->groups[g].entries);
        free(p->groups[g].places);
        free(p->groups[g].ids);
    }
    free(p->groups);
    free(p->ids);
    free(p->bits);
    free(p);
}

static void cache_clear(earley_plans *c) {
    for (size_t i = 0; i < c->cap; i++) {
        free(c->slots[i].terms);
        plan_release(c->slots[i].plan);
    }
    memset(c->slots, 0, sizeof *c->slots * c->cap);
    c->n = 0, c->bytes = 0;
}

void earley_plans_release(earley_plans *c) {
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1) return;
    cache_clear(c);
    free(c->slots);
    free(c->scratch);
    free(c);
}

void earley_plans_free(earley *e) {
    earley_plans_release(e->plans);
    earley_plans_release(e->shared);
    e->plans = e->shared = NULL;
}

static uint64_t terms_hash(const rx_id *t, int k) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)k;
    for (int j = 0; j < k; j++) {
        h ^= (uint64_t)(uint32_t)t[j] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
    }
    h ^= h >> 33;
    return h ? h : 1;
}

/* The slot of terms (found, or the empty one where they would go). */
static plan_slot *cache_find(const earley_plans *c, const rx_id *t, int k, uint64_t h) {
    size_t j = h & (c->cap - 1);
    for (;; j = (j + 1) & (c->cap - 1)) {
        plan_slot *s = &c->slots[j];
        if (!s->hash) return s;
        if (s->hash == h && s->k == k && !memcmp(s->terms, t, sizeof *t * (size_t)k)) return s;
    }
}

static bool cache_grow(earley_plans *c, size_t need) {
    size_t cap = c->cap ? c->cap : 64;
    while (need * 2 > cap) cap *= 2;
    if (cap == c->cap) return true;
    plan_slot *old = c->slots, *slots = calloc(cap, sizeof *slots);
    if (!slots) return false;
    const size_t old_cap = c->cap;
    c->slots = slots, c->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].hash) *cache_find(c, old[i].terms, old[i].k, old[i].hash) = old[i];
    free(old);
    return true;
}

static earley_plans *cache_new(const token_slices *ts) {
    earley_plans *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    atomic_init(&c->refs, 1);
    c->ts = ts;
    return c;
}

/* Files terms (a copy) with plan (a reference taken) unless they are
 * there with a plan; false when out of memory. */
static bool cache_put(earley_plans *c, const rx_id *t, int k, uint64_t h, mask_plan *plan) {
    if (!cache_grow(c, c->n + 1)) return false;
    plan_slot *s = cache_find(c, t, k, h);
    if (s->hash && (s->plan || !plan)) return true;
    if (!s->hash) {
        if (!(s->terms = malloc(sizeof *t * (size_t)k))) return false;
        memcpy(s->terms, t, sizeof *t * (size_t)k);
        s->hash = h, s->k = k;
        c->n++;
    }
    if (plan) {
        atomic_fetch_add(&plan->refs, 1);
        s->plan = plan;
        c->bytes += plan->bytes;
    }
    return true;
}

earley_plans *earley_plans_publish(const earley *e) {
    const earley_plans *own = e->plans, *shared = e->shared;
    if (!own || !own->n) return NULL;
    if (shared && shared->bytes + own->bytes > PLANS_MAX_BYTES) return NULL;
    earley_plans *c = cache_new(own->ts);
    if (!c) return NULL;
    const earley_plans *from[2] = {own, shared && shared->ts == own->ts ? shared : NULL};
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; from[f] && i < from[f]->cap; i++) {
            const plan_slot *s = &from[f]->slots[i];
            if (s->hash && !cache_put(c, s->terms, s->k, s->hash, s->plan)) {
                earley_plans_release(c);
                return NULL;
            }
        }
    return c;
}

void earley_plans_use(earley *e, earley_plans *p) {
    earley_plans_release(e->shared);
    e->shared = p;
    if (p) atomic_fetch_add(&p->refs, 1);
}

/* ---- making a plan: the DFA-only walk ---- */

typedef struct plan_walk {
    rx_store *rx;
    int k, slice;
    /* per depth d: the terms live after the path's bytes, as (index among
     * the k, term) pairs, live_at[d * k ..] and live_term[d * k ..], n_live[d]
     * of them (depth 0: the set's); a set reading many terminals (the keys
     * an object may take next) keeps few live past a byte or two */
    int32_t *live_at;
    rx_id *live_term;
    int *n_live;
    rx_id *dense;    /* the k terms reached at an entry (RX_NOTHING: dead) */
    uint32_t *slots; /* the groups by their terms: index + 1, open addressing */
    size_t n_slots;  /* a power of two */
    mask_plan *plan;
    size_t groups_cap;
    bool oom;
} plan_walk;

/* The group of terms t (k of them), added when new; NULL when out of memory. */
static plan_group *group_of(plan_walk *w, const rx_id *t) {
    mask_plan *p = w->plan;
    const size_t bytes = sizeof *t * (size_t)w->k;
    if ((p->n_groups + 1) * 2 > w->n_slots) {
        const size_t n = w->n_slots ? w->n_slots * 2 : 16;
        uint32_t *slots = calloc(n, sizeof *slots);
        if (!slots) return NULL;
        for (size_t g = 0; g < p->n_groups; g++) {
            size_t j = terms_hash(p->groups[g].terms, w->k) & (n - 1);
            while (slots[j]) j = (j + 1) & (n - 1);
            slots[j] = (uint32_t)g + 1;
        }
        free(w->slots);
        w->slots = slots, w->n_slots = n;
    }
    size_t j = terms_hash(t, w->k) & (w->n_slots - 1);
    for (; w->slots[j]; j = (j + 1) & (w->n_slots - 1))
        if (!memcmp(p->groups[w->slots[j] - 1].terms, t, bytes)) return &p->groups[w->slots[j] - 1];
    if (p->n_groups >= w->groups_cap) {
        const size_t cap = w->groups_cap ? w->groups_cap * 2 : 4;
        plan_group *gs = realloc(p->groups, sizeof *gs * cap);
        if (!gs) return NULL;
        p->groups = gs, w->groups_cap = cap;
    }
    plan_group *g = &p->groups[p->n_groups];
    *g = (plan_group){.terms = malloc(bytes)};
    if (!g->terms) return NULL;
    memcpy(g->terms, t, bytes);
    w->slots[j] = (uint32_t)++p->n_groups;
    p->bytes += bytes + sizeof *g;
    return g;
}

static int plan_step(void *ctx, size_t node, size_t depth, uint8_t c) {
    plan_walk *w = ctx;
    if (w->oom) return TRIE_REFUSE;
    const size_t k = (size_t)w->k;
    const int32_t *up_at = w->live_at + (depth - 1) * k;
    const rx_id *up_term = w->live_term + (depth - 1) * k;
    int32_t *at = w->live_at + depth * k;
    rx_id *term = w->live_term + depth * k;
    int n = 0;
    bool ends = false;
    for (int i = 0; i < w->n_live[depth - 1]; i++) {
        const rx_id t = rx_next(w->rx, up_term[i], c);
        if (t == RX_NOTHING) continue;
        at[n] = up_at[i], term[n++] = t;
        ends |= rx_nullable_fast(w->rx, t);
    }
    w->n_live[depth] = n;
    if (!n) return TRIE_REFUSE;
    if (!ends) return TRIE_DESCEND;
    for (size_t j = 0; j < k; j++) w->dense[j] = RX_NOTHING;
    for (int i = 0; i < n; i++) w->dense[at[i]] = term[i];
    plan_group *g = group_of(w, w->dense);
    if (!g || !GROW_ARRAY(g->entries, g->n_entries + 1, &g->entries_cap)) {
        w->oom = true;
        return TRIE_REFUSE;
    }
    g->entries[g->n_entries++] = (plan_entry){.slice = w->slice, .node = (uint32_t)node};
    w->plan->bytes += sizeof *g->entries;
    return TRIE_TAKE_NODE;
}

/* Merges a group's entries' suffixes (the bytes after each entry of the
 * tokens below it) into one trie when they are few. */
static bool merge_group(const token_slices *ts, plan_group *g, int32_t n_vocab, size_t *bytes) {
    if (g->n_entries < 2) return true;
    size_t n = 0;
    for (size_t i = 0; i < g->n_entries; i++) {
        size_t first;
        n += token_trie_pieces_under(token_slices_trie(ts, g->entries[i].slice), g->entries[i].node, &first);
        if (n > MERGE_MAX_PIECES) return true;
    }
    token_piece *ps = malloc(sizeof *ps * (n ? n : 1));
    if (!ps) return false;
    size_t m = 0, total = 0;
    for (size_t i = 0; i < g->n_entries; i++) {
        const token_trie *t = token_slices_trie(ts, g->entries[i].slice);
        const size_t at = token_trie_node_depth(t, g->entries[i].node);
        size_t first;
        const size_t cnt = token_trie_pieces_under(t, g->entries[i].node, &first);
        for (size_t q = first; q < first + cnt; q++) {
            const int32_t id = token_trie_piece_id(t, q);
            size_t len;
            const uint8_t *b = token_trie_bytes(t, id, &len);
            if (!b || len <= at) continue; /* the entry's own tokens: allowed already */
            ps[m++] = (token_piece){.bytes = b + at, .len = (uint32_t)(len - at), .id = id};
            total += len - at;
        }
    }
    token_trie *merged = token_trie_of_pieces(n_vocab, ps, m);
    free(ps);
    if (!merged) return false;
    g->merged = merged;
    free(g->entries);
    g->entries = NULL, g->n_entries = 0, g->entries_cap = 0;
    *bytes += total * sizeof(uint32_t) * 4;
    return true;
}

/* Merges the suffixes of p's groups (once). */
static bool plan_merge(const token_slices *ts, mask_plan *p) {
    const int32_t n_vocab = token_trie_vocab(token_slices_trie(ts, 0));
    for (size_t g = 0; g < p->n_groups; g++)
        if (!p->groups[g].merged && !merge_group(ts, &p->groups[g], n_vocab, &p->bytes)) return false;
    p->merged = true;
    return true;
}

static void walk_free(plan_walk *w) {
    free(w->live_at);
    free(w->live_term);
    free(w->n_live);
    free(w->dense);
    free(w->slots);
}

static mask_plan *plan_make(earley *e, const token_slices *ts, const rx_id *slice_terms, const rx_id *set_terms,
                            int k) {
    const int n = token_slices_count(ts);
    const int32_t n_vocab = token_trie_vocab(token_slices_trie(ts, 0));
    const size_t words = token_mask_words(n_vocab);
    mask_plan *p = calloc(1, sizeof *p);
    if (p) atomic_init(&p->refs, 1);
    uint64_t *acc = calloc(words, sizeof *acc);
    plan_walk w = {.rx = e->rx, .k = k, .plan = p};
    int depth = 0;
    for (int i = 0; i <= n; i++)
        if (token_trie_max_depth(token_slices_trie(ts, i)) > depth) depth = token_trie_max_depth(token_slices_trie(ts, i));
    const size_t cells = (size_t)k * ((size_t)depth + 1);
    w.live_at = malloc(sizeof *w.live_at * cells);
    w.live_term = malloc(sizeof *w.live_term * cells);
    w.n_live = malloc(sizeof *w.n_live * ((size_t)depth + 1));
    w.dense = malloc(sizeof *w.dense * (size_t)k);
    if (!p || !acc || !w.live_at || !w.live_term || !w.n_live || !w.dense) goto fail;
    for (int j = 0; j < k; j++) w.live_at[j] = j, w.live_term[j] = set_terms[j];
    w.n_live[0] = k;
    for (int i = 0; i <= n; i++) {
        if (i < n && earley_set_reads_slice(e, slice_terms[i])) {
            p->whole |= 1u << i;
            continue;
        }
        w.slice = i;
        token_trie_walk_nodes(token_slices_trie(ts, i), plan_step, &w, acc);
        if (w.oom) goto fail;
    }
    /* the tokens allowed alone, less those of the slices taken whole */
    size_t cnt = 0;
    for (size_t x = 0; x < words; x++) cnt += (size_t)token_mask_bits(acc[x]);
    p->n_ids = cnt;
    if (cnt * sizeof(int32_t) < words * sizeof(uint64_t)) {
        if (!(p->ids = malloc(sizeof *p->ids * (cnt ? cnt : 1)))) goto fail;
        size_t m = 0;
        for (size_t x = 0; x < words; x++)
            for (uint64_t b = acc[x]; b; b &= b - 1) p->ids[m++] = (int32_t)(x * 64 + (size_t)__builtin_ctzll(b));
        free(acc);
        p->bytes += cnt * sizeof(int32_t);
    } else {
        p->bits = acc;
        p->bytes += words * sizeof *acc;
    }
    acc = NULL;
    walk_free(&w);
    return p;
fail:
    free(acc);
    walk_free(&w);
    plan_release(p);
    return NULL;
}

/* A writable copy of an unmerged plan (its groups hold entries only), for a
 * parser that merges it: cheaper than walking the vocabulary again. */
static mask_plan *plan_copy(const mask_plan *g, int k, size_t words) {
    mask_plan *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    atomic_init(&p->refs, 1);
    p->whole = g->whole, p->n_ids = g->n_ids, p->bytes = g->bytes;
    bool ok = true;
    if (g->bits) ok = (p->bits = malloc(sizeof *p->bits * words)) && memcpy(p->bits, g->bits, sizeof *p->bits * words);
    else ok = (p->ids = malloc(sizeof *p->ids * (g->n_ids ? g->n_ids : 1))) &&
              memcpy(p->ids, g->ids, sizeof *p->ids * g->n_ids);
    if (ok && g->n_groups) ok = (p->groups = calloc(g->n_groups, sizeof *p->groups)) != NULL;
    for (size_t i = 0; ok && i < g->n_groups; i++) {
        const plan_group *from = &g->groups[i];
        if (from->merged || from->ids) { /* half merged (out of memory there): not copied */
            ok = false;
            break;
        }
        plan_group *to = &p->groups[p->n_groups++];
        ok = (to->terms = malloc(sizeof *to->terms * (size_t)k)) &&
             (to->entries = malloc(sizeof *to->entries * (from->n_entries ? from->n_entries : 1)));
        if (!ok) break;
        memcpy(to->terms, from->terms, sizeof *to->terms * (size_t)k);
        memcpy(to->entries, from->entries, sizeof *to->entries * from->n_entries);
        to->n_entries = to->entries_cap = from->n_entries;
    }
    if (!ok) {
        plan_release(p);
        return NULL;
    }
    return p;
}

/* ---- using a plan ---- */

/* The (rule, dot) of the current set's items at terminals, in order. */
static void set_places(const earley *e, int32_t *places) {
    int j = 0;
    for (size_t i = e->set_start[e->n_sets - 1]; i < e->n_items; i++)
        if (e->items[i].term >= 0) places[j++] = e->items[i].rule, places[j++] = e->items[i].dot;
}

/* Walks group g from the current set (the parser ends where it started). */
static void group_walk(earley *e, const token_slices *ts, const plan_group *g, uint64_t *mask) {
    if (!earley_push_terms(e, g->terms)) return; /* only when out of memory */
    if (g->merged) earley_walk_lone_under(e, g->merged, 0, mask);
    for (size_t i = 0; i < g->n_entries; i++)
        earley_walk_lone_under(e, token_slices_trie(ts, g->entries[i].slice), g->entries[i].node, mask);
    earley_pop(e, 1);
}

/* Walks group g into the scratch bitset and keeps its tokens when the walk
 * read nothing of the parse at or below the current set (own plans only). */
static void group_learn(earley *e, const token_slices *ts, plan_group *g, int k, const int32_t *places,
                        uint64_t *scratch, size_t words, size_t *bytes) {
    memset(scratch, 0, sizeof *scratch * words);
    e->floor = e->n_sets - 1, e->below = false;
    group_walk(e, ts, g, scratch);
    e->floor = SIZE_MAX;
    if (e->below || e->failed) {
        g->context = !e->failed;
        return;
    }
    size_t n = 0;
    for (size_t x = 0; x < words; x++) n += (size_t)token_mask_bits(scratch[x]);
    g->places = malloc(sizeof *places * 2 * (size_t)k);
    g->ids = malloc(sizeof *g->ids * (n ? n : 1));
    if (!g->places || !g->ids) {
        free(g->places), free(g->ids);
        g->places = g->ids = NULL;
        return;
    }
    memcpy(g->places, places, sizeof *places * 2 * (size_t)k);
    g->places_hash = terms_hash(places, 2 * k);
    size_t m = 0;
    for (size_t x = 0; x < words; x++)
        for (uint64_t b = scratch[x]; b; b &= b - 1) g->ids[m++] = (int32_t)(x * 64 + (size_t)__builtin_ctzll(b));
    g->n_ids = n;
    *bytes += n * sizeof *g->ids + sizeof *places * 2 * (size_t)k;
}

/* The mask from plan p (k terms). A parser's own plan comes as `mine` too
 * (the same plan, writable), with own (the plans holding it): its groups may
 * then learn their tokens. A published plan (mine NULL) is only read. */
static void plan_apply(earley *e, const token_slices *ts, const mask_plan *p, mask_plan *mine, earley_plans *own,
                       int k, uint64_t *mask) {
    const int n = token_slices_count(ts);
    const size_t words = token_mask_words(token_trie_vocab(token_slices_trie(ts, 0)));
    if (p->bits) memcpy(mask, p->bits, sizeof *mask * words);
    else {
        memset(mask, 0, sizeof *mask * words);
        for (size_t i = 0; i < p->n_ids; i++) mask[p->ids[i] >> 6] |= 1ull << (p->ids[i] & 63);
    }
    for (int i = 0; i < n; i++) {
        if (!(p->whole >> i & 1)) continue;
        const uint64_t *b = token_slices_bits(ts, i);
        for (size_t x = 0; x < words; x++) mask[x] |= b[x];
    }
    int32_t places[2 * PLAN_MAX_TERMS];
    uint64_t places_hash = 0;
    if (p->n_groups) set_places(e, places), places_hash = terms_hash(places, 2 * k);
    for (size_t g = 0; g < p->n_groups; g++) {
        const plan_group *gr = &p->groups[g];
        if (gr->ids && gr->places_hash == places_hash && !memcmp(gr->places, places, sizeof *places * 2 * (size_t)k)) {
            for (size_t i = 0; i < gr->n_ids; i++) mask[gr->ids[i] >> 6] |= 1ull << (gr->ids[i] & 63);
            continue;
        }
        if (mine && !gr->ids && !gr->context && p->merged &&
            (own->scratch || (own->scratch = malloc(sizeof *own->scratch * words)))) {
            group_learn(e, ts, &mine->groups[g], k, places, own->scratch, words, &own->bytes);
            for (size_t x = 0; x < words; x++) mask[x] |= own->scratch[x];
            continue;
        }
        group_walk(e, ts, gr, mask);
    }
}

bool earley_plan_mask(earley *e, const token_slices *ts, const rx_id *slice_terms, uint64_t *mask) {
    if (e->failed) return false;
    rx_id set_terms[PLAN_MAX_TERMS];
    int k = 0;
    for (size_t i = e->set_start[e->n_sets - 1]; i < e->n_items; i++) {
        if (e->items[i].term < 0) continue;
        if (k == PLAN_MAX_TERMS) return false;
        set_terms[k++] = e->items[i].term;
    }
    if (!k) return false;
    earley_plans *c = e->plans;
    if (c && c->ts != ts) cache_clear(c), c->ts = ts;
    if (!c && !(c = e->plans = cache_new(ts))) return false;
    const uint64_t h = terms_hash(set_terms, k);
    plan_slot *s = cache_grow(c, c->n + 1) ? cache_find(c, set_terms, k, h) : NULL;
    if (!s) return false;
    const mask_plan *given = NULL; /* the grammar's plan, when there is one */
    if (!s->plan && e->shared && e->shared->ts == ts && e->shared->cap) {
        given = cache_find(e->shared, set_terms, k, h)->plan;
        if (given && given->merged) {
            plan_apply(e, ts, given, NULL, NULL, k, mask);
            return true;
        }
    }
    if (!s->hash) {
        if (c->n >= PLANS_MAX || c->bytes > PLANS_MAX_BYTES) cache_clear(c);
        if (!cache_put(c, set_terms, k, h, NULL)) return false;
        s = cache_find(c, set_terms, k, h);
    }
    if (!s->plan) { /* met first (merged the second time), or second (a plan given unmerged) */
        const size_t words = token_mask_words(token_trie_vocab(token_slices_trie(ts, 0)));
        mask_plan *p = given ? plan_copy(given, k, words) : plan_make(e, ts, slice_terms, set_terms, k);
        if (!p) return false;
        s->plan = p;
        c->bytes += p->bytes;
        if (given && !plan_merge(ts, p)) return false;
    } else if (!s->plan->merged) {
        const size_t before = s->plan->bytes;
        if (!plan_merge(ts, s->plan)) return false;
        c->bytes += s->plan->bytes - before;
    }
    plan_apply(e, ts, s->plan, s->plan, c, k, mask);
    return true;
}
