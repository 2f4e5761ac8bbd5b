/* prefix_cache.c — the automatic prefix cache (see prefix_cache.h).
 *
 * Per block: whether it is cached (has a content key in the index), its key,
 * its parent's key, how many positions it holds (KV_BLOCK_SIZE, or fewer for
 * a kept tail), its token ids, and its place in the LRU list while no
 * sequence holds it. Per sequence: the root of its chain, how many of its
 * leading blocks are cached or were checked against the cache (n_reg), and
 * the key of the last of those (the next block's parent).
 *
 * The index is open addressing over the keys (tombstones, rebuilt when they
 * pile up); the children of a key (for the partly matching block) are found
 * by a scan of the pool, which is short next to a prefill. */
#include "kv/prefix_cache.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "core/error.h"
#include "kv/block_disk.h"

enum { SLOT_EMPTY = -1, SLOT_TOMB = -2 };

struct prefix_cache {
    kv_key identity;
    int max_cached;
    /* per block */
    bool *cached;        /* has a key and is in the index */
    kv_key *key, *parent;
    bool *has_parent;
    int32_t *n_tok;      /* positions the cached content holds */
    int32_t *tok;        /* [n_blocks][KV_BLOCK_SIZE] */
    int32_t *lru_prev, *lru_next; /* -1 = none; in the list iff cached and ref 0 */
    bool *in_lru;
    int32_t lru_head, lru_tail;   /* head = least recently used */
    int n_lru;
    /* index: key -> block */
    int32_t *slots;
    size_t cap;
    int n_tomb;
    /* per sequence */
    kv_key *root, *chain;
    int *n_reg;
    int *limit;          /* positions that may be cached (INT_MAX = all; see prefix_set_limit) */
    int n_full;          /* cached full blocks, silent ones aside */
    bool *silent;        /* per block: a span's stored rows, not a prefix: no KV events, not in n_full */
    bool quiet;          /* blocks cached now are silent (prefix_set_quiet) */
    block_disk *disk;    /* --cache-dir; NULL = none */
    bool events_pending;
    kv_event_fn on_event;
    void *event_user;
};

/* ---- keys ---- */

kv_key prefix_block_key(kv_key parent, const int32_t *tokens, int n) {
    unsigned char buf[16 + 4 + KV_BLOCK_SIZE * 4];
    memcpy(buf, &parent.lo, 8);
    memcpy(buf + 8, &parent.hi, 8);
    int32_t n32 = n;
    memcpy(buf + 16, &n32, 4);
    memcpy(buf + 20, tokens, (size_t)n * 4);
    XXH128_hash_t h = XXH3_128bits(buf, 20 + (size_t)n * 4);
    return (kv_key){h.low64, h.high64};
}

kv_key prefix_root(const kv_cache *kv, const char *salt) {
    const prefix_cache *pc = kv->pc;
    const uint64_t id[7] = {pc ? pc->identity.lo : 0, pc ? pc->identity.hi : 0, (uint64_t)kv->n_layer,
                            (uint64_t)kv->n_kv_heads, (uint64_t)kv->head_dim, (uint64_t)kv->type, KV_BLOCK_SIZE};
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    XXH3_128bits_update(&st, id, sizeof id);
    if (salt && *salt) {
        XXH3_128bits_update(&st, "salt", 4);
        XXH3_128bits_update(&st, salt, strlen(salt));
    }
    XXH128_hash_t h = XXH3_128bits_digest(&st);
    return (kv_key){h.low64, h.high64};
}

kv_key prefix_span_root(const kv_cache *kv, const char *salt, const int32_t *anchor, int n_anchor) {
    const kv_key base = prefix_root(kv, salt);
    const int32_t n = n_anchor;
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    XXH3_128bits_update(&st, &base, sizeof base);
    XXH3_128bits_update(&st, "span pre-RoPE K", 15);
    XXH3_128bits_update(&st, &n, sizeof n);
    if (n_anchor > 0) XXH3_128bits_update(&st, anchor, (size_t)n_anchor * sizeof *anchor);
    XXH128_hash_t h = XXH3_128bits_digest(&st);
    return (kv_key){h.low64, h.high64};
}

void prefix_set_quiet(kv_cache *kv, bool on) {
    if (kv->pc) kv->pc->quiet = on;
}

void prefix_set_limit(kv_cache *kv, int s, int n) {
    if (kv->pc) kv->pc->limit[s] = n < 0 ? 0 : n;
}

/* ---- index ---- */

static size_t slot_of(const prefix_cache *pc, kv_key k) { return (size_t)(k.lo ^ (k.hi * 0x9E3779B97F4A7C15ull)) & (pc->cap - 1); }

static int32_t index_find(const prefix_cache *pc, kv_key k) {
    for (size_t i = slot_of(pc, k);; i = (i + 1) & (pc->cap - 1)) {
        int32_t b = pc->slots[i];
        if (b == SLOT_EMPTY) return -1;
        if (b >= 0 && kv_key_eq(pc->key[b], k)) return b;
    }
}

static void index_put(prefix_cache *pc, int32_t b) {
    size_t i = slot_of(pc, pc->key[b]);
    while (pc->slots[i] >= 0) i = (i + 1) & (pc->cap - 1);
    if (pc->slots[i] == SLOT_TOMB) pc->n_tomb--;
    pc->slots[i] = b;
}

static void index_rebuild(prefix_cache *pc, int n_blocks) {
    for (size_t i = 0; i < pc->cap; i++) pc->slots[i] = SLOT_EMPTY;
    pc->n_tomb = 0;
    for (int32_t b = 0; b < n_blocks; b++)
        if (pc->cached[b]) index_put(pc, b);
}

static void index_del(prefix_cache *pc, int n_blocks, int32_t b) {
    for (size_t i = slot_of(pc, pc->key[b]);; i = (i + 1) & (pc->cap - 1)) {
        if (pc->slots[i] == SLOT_EMPTY) return;
        if (pc->slots[i] == b) {
            pc->slots[i] = SLOT_TOMB;
            pc->n_tomb++;
            break;
        }
    }
    if ((size_t)pc->n_tomb * 4 > pc->cap) index_rebuild(pc, n_blocks);
}

/* ---- LRU list of cached blocks no sequence holds ---- */

static void lru_remove(prefix_cache *pc, int32_t b) {
    if (!pc->in_lru[b]) return;
    int32_t p = pc->lru_prev[b], n = pc->lru_next[b];
    if (p >= 0) pc->lru_next[p] = n;
    else pc->lru_head = n;
    if (n >= 0) pc->lru_prev[n] = p;
    else pc->lru_tail = p;
    pc->lru_prev[b] = pc->lru_next[b] = -1;
    pc->in_lru[b] = false;
    pc->n_lru--;
}

static void lru_push_recent(prefix_cache *pc, int32_t b) {
    pc->lru_prev[b] = pc->lru_tail;
    pc->lru_next[b] = -1;
    if (pc->lru_tail >= 0) pc->lru_next[pc->lru_tail] = b;
    else pc->lru_head = b;
    pc->lru_tail = b;
    pc->in_lru[b] = true;
    pc->n_lru++;
}

/* ---- cache membership ---- */

static void emit(prefix_cache *pc, kv_event_kind kind, int32_t b) {
    if (!pc->on_event) return;
    pc->events_pending = true;
    kv_event ev = {.kind = kind};
    if (b >= 0) {
        ev.key = pc->key[b];
        ev.parent = pc->parent[b];
        ev.has_parent = pc->has_parent[b];
        ev.tokens = pc->tok + (size_t)b * KV_BLOCK_SIZE;
        ev.n_tokens = pc->n_tok[b];
    }
    pc->on_event(pc->event_user, &ev);
}

static void cache_add(kv_cache *kv, int32_t b, kv_key k, kv_key parent, bool has_parent, const int32_t *tokens,
                      int n) {
    prefix_cache *pc = kv->pc;
    pc->cached[b] = true;
    pc->key[b] = k;
    pc->parent[b] = parent;
    pc->has_parent[b] = has_parent;
    pc->n_tok[b] = n;
    pc->silent[b] = pc->quiet;
    memcpy(pc->tok + (size_t)b * KV_BLOCK_SIZE, tokens, (size_t)n * sizeof *tokens);
    index_put(pc, b);
    if (n == KV_BLOCK_SIZE && !pc->silent[b]) {
        pc->n_full++;
        emit(pc, KV_EVENT_STORED, b);
    }
}

static void cache_drop(kv_cache *kv, int32_t b) {
    prefix_cache *pc = kv->pc;
    if (!pc->cached[b]) return;
    lru_remove(pc, b);
    index_del(pc, kv->n_blocks, b);
    pc->cached[b] = false;
    if (pc->n_tok[b] == KV_BLOCK_SIZE && !pc->silent[b]) {
        pc->n_full--;
        emit(pc, KV_EVENT_REMOVED, b);
    }
    pc->n_tok[b] = 0;
    pc->silent[b] = false;
}

static void store_on_disk(kv_cache *kv, int32_t b) {
    prefix_cache *pc = kv->pc;
    if (pc->disk && pc->cached[b])
        disk_store(pc->disk, kv, b, pc->key[b], pc->parent[b], pc->has_parent[b], pc->tok + (size_t)b * KV_BLOCK_SIZE,
                   pc->n_tok[b]);
}

int32_t prefix_evict_one(kv_cache *kv) {
    prefix_cache *pc = kv->pc;
    if (!pc || pc->lru_head < 0) return -1;
    int32_t b = pc->lru_head;
    store_on_disk(kv, b);
    cache_drop(kv, b);
    return b;
}

void prefix_on_hold(kv_cache *kv, int32_t b) { lru_remove(kv->pc, b); }

bool prefix_on_idle(kv_cache *kv, int32_t b) {
    prefix_cache *pc = kv->pc;
    if (!pc->cached[b]) return false;
    lru_push_recent(pc, b);
    /* over budget: the oldest cached blocks go to the free list */
    while (pc->max_cached && pc->n_lru > pc->max_cached) {
        int32_t e = prefix_evict_one(kv);
        kv->free_list[kv->n_free++] = e;
    }
    return true; /* in the LRU list, or evicted just now and freed */
}

int prefix_cached_blocks(const kv_cache *kv) { return kv->pc ? kv->pc->n_lru : 0; }
int prefix_full_blocks(const kv_cache *kv) { return kv->pc ? kv->pc->n_full : 0; }

void prefix_flush_events(kv_cache *kv) {
    prefix_cache *pc = kv->pc;
    if (!pc || !pc->events_pending || !pc->on_event) return;
    pc->events_pending = false;
    kv_event ev = {.kind = KV_EVENT_FLUSH};
    pc->on_event(pc->event_user, &ev);
}

/* ---- setup ---- */

int prefix_cache_enable(kv_cache *kv, kv_key identity, int max_cached, wick_error *err) {
    if (kv->pc) return 0;
    if (max_cached < 0) return wick_fail(err, "prefix cache budget of %d blocks", max_cached);
    prefix_cache *pc = calloc(1, sizeof *pc);
    if (!pc) return wick_fail(err, "out of memory");
    const size_t nb = (size_t)kv->n_blocks, ns = (size_t)kv->n_seq;
    pc->identity = identity;
    pc->max_cached = max_cached;
    pc->cap = 16;
    while (pc->cap < nb * 2) pc->cap *= 2;
    pc->cached = calloc(nb, sizeof *pc->cached);
    pc->key = calloc(nb, sizeof *pc->key);
    pc->parent = calloc(nb, sizeof *pc->parent);
    pc->has_parent = calloc(nb, sizeof *pc->has_parent);
    pc->n_tok = calloc(nb, sizeof *pc->n_tok);
    pc->silent = calloc(nb, sizeof *pc->silent);
    pc->tok = malloc(nb * KV_BLOCK_SIZE * sizeof *pc->tok);
    pc->lru_prev = malloc(nb * sizeof *pc->lru_prev);
    pc->lru_next = malloc(nb * sizeof *pc->lru_next);
    pc->in_lru = calloc(nb, sizeof *pc->in_lru);
    pc->slots = malloc(pc->cap * sizeof *pc->slots);
    pc->root = calloc(ns, sizeof *pc->root);
    pc->chain = calloc(ns, sizeof *pc->chain);
    pc->n_reg = calloc(ns, sizeof *pc->n_reg);
    pc->limit = malloc(ns * sizeof *pc->limit);
    kv->pc = pc;
    if (!pc->cached || !pc->key || !pc->parent || !pc->has_parent || !pc->n_tok || !pc->silent || !pc->tok || !pc->lru_prev ||
        !pc->lru_next || !pc->in_lru || !pc->slots || !pc->root || !pc->chain || !pc->n_reg ||
        !pc->limit) {
        prefix_cache_free(kv);
        return wick_fail(err, "out of memory for the prefix cache");
    }
    for (size_t i = 0; i < nb; i++) pc->lru_prev[i] = pc->lru_next[i] = -1;
    pc->lru_head = pc->lru_tail = -1;
    for (size_t i = 0; i < pc->cap; i++) pc->slots[i] = SLOT_EMPTY;
    kv_key root = prefix_root(kv, NULL);
    for (size_t s = 0; s < ns; s++) {
        pc->root[s] = pc->chain[s] = root;
        pc->limit[s] = INT_MAX;
    }
    return 0;
}

void prefix_cache_free(kv_cache *kv) {
    prefix_cache *pc = kv->pc;
    if (!pc) return;
    if (pc->disk) { /* everything still cached goes to disk */
        for (int32_t b = 0; b < kv->n_blocks; b++) store_on_disk(kv, b);
        disk_close(pc->disk);
    }
    free(pc->cached);
    free(pc->key);
    free(pc->parent);
    free(pc->has_parent);
    free(pc->n_tok);
    free(pc->tok);
    free(pc->lru_prev);
    free(pc->lru_next);
    free(pc->in_lru);
    free(pc->slots);
    free(pc->root);
    free(pc->chain);
    free(pc->n_reg);
    free(pc->limit);
    free(pc->silent);
    free(pc);
    kv->pc = NULL;
}

int prefix_cache_set_dir(kv_cache *kv, const char *dir, size_t max_bytes, void (*warn_fn)(void *, const char *),
                         void *warn_user, wick_error *err) {
    prefix_cache *pc = kv->pc;
    if (!pc) return wick_fail(err, "the prefix cache is off: no cache directory");
    disk_close(pc->disk);
    pc->disk = disk_open(dir, max_bytes, pc->identity, kv, warn_fn, warn_user, err);
    return pc->disk ? 0 : -1;
}

int prefix_disk_warnings(const kv_cache *kv, const char **last) {
    const block_disk *d = kv->pc ? kv->pc->disk : NULL;
    if (last) *last = disk_last_warning(d);
    return disk_warnings(d);
}

void prefix_disk_errors(const kv_cache *kv, uint64_t counts[WICK_CACHE_ERR_KINDS]) {
    disk_errors(kv->pc ? kv->pc->disk : NULL, counts);
}

/* Read the block filed on disk under key into a fresh block, cached (held by
 * none unless the caller holds it). parent, has_parent: what the caller's
 * chain says its parent is. The block's id, or -1: not on disk, or it could
 * not be read back or is not the block key names (it is computed again).
 *
 * Taking a block may evict one, and writing that one to disk may delete the
 * oldest files to make room and reorder the disk's entries: nothing here
 * holds an entry across it; the block is looked up by key afterwards, made
 * the most recent first so that it is not the one deleted, and what enters
 * the cache (parent, token ids) is what the file holds, checked against key. */
static int32_t load_from_disk(kv_cache *kv, kv_key key, kv_key parent, bool has_parent) {
    prefix_cache *pc = kv->pc;
    if (disk_find(pc->disk, key) < 0) return -1;
    disk_touch(pc->disk, key);
    const int32_t b = kv_take_block(kv);
    if (b < 0) return -1;
    disk_entry en;
    if (disk_load(pc->disk, key, kv, b, &en) < 0) {
        kv->free_list[kv->n_free++] = b;
        return -1;
    }
    if (en.has_parent != has_parent || !kv_key_eq(en.parent, parent)) {
        disk_reject(pc->disk, key, "its parent is not the one its chain names");
        kv->free_list[kv->n_free++] = b;
        return -1;
    }
    cache_add(kv, b, key, en.parent, en.has_parent, en.tokens, en.n_tok);
    lru_push_recent(pc, b);
    return b;
}

void prefix_cache_set_events(kv_cache *kv, kv_event_fn fn, void *user) {
    if (!kv->pc) return;
    kv->pc->on_event = fn;
    kv->pc->event_user = user;
}

/* ---- sequences ---- */

/* A reference no table holds: b stays out of the LRU list (not evictable)
 * until kv_unhold. */
static void pin(kv_cache *kv, int32_t b) {
    if (kv->ref[b]++ == 0) lru_remove(kv->pc, b);
}

static int lcp(const int32_t *a, int na, const int32_t *b, int nb) {
    int n = na < nb ? na : nb, i = 0;
    while (i < n && a[i] == b[i]) i++;
    return i;
}

static int attach(kv_cache *kv, int s, kv_key root, const int32_t *tokens, int max_reuse, bool copy) {
    prefix_cache *pc = kv->pc;
    if (!pc || kv->len[s] != 0 || kv->n_seq_blocks[s] != 0) return kv->len[s];
    pc->root[s] = root;
    kv_key key = root;
    int nb = 0;
    while ((nb + 1) * KV_BLOCK_SIZE <= max_reuse) {
        kv_key k = prefix_block_key(key, tokens + (size_t)nb * KV_BLOCK_SIZE, KV_BLOCK_SIZE);
        int32_t b = index_find(pc, k);
        if (b < 0 && pc->disk) b = load_from_disk(kv, k, key, nb > 0); /* a miss: the block may be on disk */
        if (b < 0 || pc->n_tok[b] != KV_BLOCK_SIZE) break;
        kv_hold(kv, s, b);
        key = k;
        nb++;
    }
    pc->chain[s] = key;
    pc->n_reg[s] = nb;
    kv->len[s] = nb * KV_BLOCK_SIZE;
    if (kv->len[s] > 0) memcpy(kv_seq_tokens(kv, s), tokens, (size_t)kv->len[s] * sizeof *tokens);
    /* The cached child of `key` that matches the most of what follows. */
    const int rest = max_reuse - nb * KV_BLOCK_SIZE;
    const int32_t *want = tokens + (size_t)nb * KV_BLOCK_SIZE;
    int32_t best = -1;
    int best_n = 0;
    for (int32_t c = 0; rest > 0 && c < kv->n_blocks; c++) {
        if (!pc->cached[c] || !kv_key_eq(pc->parent[c], key) || pc->has_parent[c] != (nb > 0)) continue;
        int n = lcp(pc->tok + (size_t)c * KV_BLOCK_SIZE, pc->n_tok[c], want, rest);
        if (n > best_n) {
            best = c;
            best_n = n;
        }
    }
    /* A child on disk that matches more is read back (the best one only;
     * by key: reading it back may reorder the disk's entries). */
    kv_key disk_best = {0, 0};
    int disk_n = best_n;
    for (int i = 0; rest > 0 && pc->disk && i < disk_count(pc->disk); i++) {
        const disk_entry *en = disk_at(pc->disk, i);
        if (!kv_key_eq(en->parent, key) || en->has_parent != (nb > 0) || index_find(pc, en->key) >= 0) continue;
        int n = lcp(en->tokens, en->n_tok, want, rest);
        if (n > disk_n) {
            disk_best = en->key;
            disk_n = n;
        }
    }
    /* `best` is pinned (a reference no table holds, out of the LRU list) so
     * that taking blocks below cannot evict it. */
    if (best >= 0) pin(kv, best);
    if (disk_n > best_n) {
        const int32_t b = load_from_disk(kv, disk_best, key, nb > 0);
        /* matched again on the token ids read back */
        const int n = b >= 0 ? lcp(pc->tok + (size_t)b * KV_BLOCK_SIZE, pc->n_tok[b], want, rest) : 0;
        if (n > best_n) {
            pin(kv, b);
            if (best >= 0) kv_unhold(kv, best);
            best = b;
            best_n = n;
        }
    }
    if (best < 0) return kv->len[s];
    if (!copy) {
        /* read-only: s holds the child itself, shared */
        kv_hold(kv, s, best);
        kv_unhold(kv, best);
    } else if (kv->ref[best] == 1 && kv->n_free == 0) {
        /* Only the pin holds it and no block is free for a copy: take `best`
         * itself out of the cache (what it holds past the match is overwritten). */
        cache_drop(kv, best);
        kv->ref[best] = 0;
        kv_hold(kv, s, best);
    } else {
        int32_t d = kv_take_block(kv);
        if (d >= 0) {
            kv_copy_block(kv, d, best, best_n);
            kv_hold(kv, s, d);
        } else {
            best_n = 0;
        }
        kv_unhold(kv, best);
    }
    if (best_n > 0) memcpy(kv_seq_tokens(kv, s) + kv->len[s], want, (size_t)best_n * sizeof *want);
    kv->len[s] += best_n;
    return kv->len[s];
}

int prefix_attach(kv_cache *kv, int s, kv_key root, const int32_t *tokens, int max_reuse) {
    return attach(kv, s, root, tokens, max_reuse, true);
}

int prefix_attach_read(kv_cache *kv, int s, kv_key root, const int32_t *tokens, int n) {
    return attach(kv, s, root, tokens, n, false);
}

void prefix_commit(kv_cache *kv, int s) {
    prefix_cache *pc = kv->pc;
    if (!pc) return;
    const int len = kv->len[s] < pc->limit[s] ? kv->len[s] : pc->limit[s];
    const int full = len / KV_BLOCK_SIZE;
    const int32_t *table = kv->tables + (size_t)s * kv->max_blocks_seq;
    while (pc->n_reg[s] < full) {
        const int i = pc->n_reg[s];
        const int32_t b = table[i];
        const int32_t *toks = kv_seq_tokens(kv, s) + (size_t)i * KV_BLOCK_SIZE;
        kv_key k = prefix_block_key(pc->chain[s], toks, KV_BLOCK_SIZE);
        if (!pc->cached[b] && index_find(pc, k) < 0) cache_add(kv, b, k, pc->chain[s], i > 0, toks, KV_BLOCK_SIZE);
        pc->chain[s] = k;
        pc->n_reg[s]++;
    }
}

void prefix_release(kv_cache *kv, int s) {
    prefix_cache *pc = kv->pc;
    int32_t *table = kv->tables + (size_t)s * kv->max_blocks_seq;
    if (pc) {
        prefix_commit(kv, s);
        const int len = kv->len[s] < pc->limit[s] ? kv->len[s] : pc->limit[s];
        const int full = len / KV_BLOCK_SIZE, tail = len % KV_BLOCK_SIZE;
        if (tail && kv->n_seq_blocks[s] > full) {
            const int32_t b = table[full];
            const int32_t *toks = kv_seq_tokens(kv, s) + (size_t)full * KV_BLOCK_SIZE;
            kv_key k = prefix_block_key(pc->chain[s], toks, tail);
            if (kv->ref[b] == 1 && !pc->cached[b] && index_find(pc, k) < 0)
                cache_add(kv, b, k, pc->chain[s], full > 0, toks, tail);
        }
    }
    /* Last block first: a chain's parents end up more recent than its leaves. */
    while (kv->n_seq_blocks[s] > 0) kv_unhold(kv, table[--kv->n_seq_blocks[s]]);
    kv->len[s] = 0;
    if (pc) {
        pc->n_reg[s] = 0;
        pc->chain[s] = pc->root[s];
        pc->limit[s] = INT_MAX;
    }
}

bool prefix_may_write(kv_cache *kv, int s, int i) {
    const int32_t b = kv->tables[(size_t)s * kv->max_blocks_seq + i];
    if (kv->ref[b] > 1) return false;
    cache_drop(kv, b); /* only s holds it: it stops being cached */
    return true;
}

void prefix_on_truncate(kv_cache *kv, int s, int n_full) {
    prefix_cache *pc = kv->pc;
    if (pc->n_reg[s] <= n_full) return;
    pc->n_reg[s] = n_full;
    kv_key k = pc->root[s];
    const int32_t *toks = kv_seq_tokens(kv, s);
    for (int i = 0; i < n_full; i++) k = prefix_block_key(k, toks + (size_t)i * KV_BLOCK_SIZE, KV_BLOCK_SIZE);
    pc->chain[s] = k;
}

/* ---- invariants ---- */

int prefix_check(const kv_cache *kv, char *msg, size_t cap) {
    const prefix_cache *pc = kv->pc;
    const int nb = kv->n_blocks;
    int *refs = calloc((size_t)nb, sizeof *refs), *seen = calloc((size_t)nb, sizeof *seen);
    int rc = -1;
    if (!refs || !seen) {
        snprintf(msg, cap, "out of memory");
        goto out;
    }
    for (int s = 0; s < kv->n_seq; s++) {
        if (kv->n_seq_blocks[s] < (kv->len[s] + KV_BLOCK_SIZE - 1) / KV_BLOCK_SIZE) {
            snprintf(msg, cap, "sequence %d holds %d tokens in %d blocks", s, kv->len[s], kv->n_seq_blocks[s]);
            goto out;
        }
        for (int i = 0; i < kv->n_seq_blocks[s]; i++) refs[kv->tables[(size_t)s * kv->max_blocks_seq + i]]++;
    }
    for (int i = 0; i < kv->n_free; i++) seen[kv->free_list[i]]++;
    int n_lru = 0;
    if (pc)
        for (int32_t b = pc->lru_head, prev = -1; b >= 0; prev = b, b = pc->lru_next[b]) {
            if (pc->lru_prev[b] != prev || !pc->in_lru[b] || ++n_lru > nb) {
                snprintf(msg, cap, "LRU list broken at block %d", b);
                goto out;
            }
            seen[b]++;
        }
    if (pc && n_lru != pc->n_lru) {
        snprintf(msg, cap, "LRU list has %d blocks, its count says %d", n_lru, pc->n_lru);
        goto out;
    }
    for (int b = 0; b < nb; b++) {
        if (refs[b] != kv->ref[b]) {
            snprintf(msg, cap, "block %d: %d table entries, refcount %d", b, refs[b], kv->ref[b]);
            goto out;
        }
        if ((refs[b] > 0) + seen[b] != 1) {
            snprintf(msg, cap, "block %d is held %d times, free/cached-idle %d times", b, refs[b], seen[b]);
            goto out;
        }
        if (pc && pc->in_lru[b] && (!pc->cached[b] || refs[b])) {
            snprintf(msg, cap, "block %d is in the LRU list but %s", b, refs[b] ? "held" : "not cached");
            goto out;
        }
        if (pc && pc->cached[b] && index_find(pc, pc->key[b]) != b) {
            snprintf(msg, cap, "cached block %d is not found by its key", b);
            goto out;
        }
    }
    if (pc && pc->max_cached && pc->n_lru > pc->max_cached) {
        snprintf(msg, cap, "%d idle cached blocks, budget %d", pc->n_lru, pc->max_cached);
        goto out;
    }
    /* Every sequence's next write goes to a private block. */
    for (int s = 0; s < kv->n_seq; s++) {
        const int i = kv->len[s] / KV_BLOCK_SIZE;
        if (i < kv->n_seq_blocks[s]) {
            const int32_t b = kv->tables[(size_t)s * kv->max_blocks_seq + i];
            if (kv->ref[b] != 1 || (pc && pc->cached[b])) {
                snprintf(msg, cap, "sequence %d writes next into shared or cached block %d", s, b);
                goto out;
            }
        }
    }
    rc = 0;
out:
    free(refs);
    free(seen);
    return rc;
}
