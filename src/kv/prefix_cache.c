/* prefix_cache.c — the automatic prefix cache (see prefix_cache.h): attach,
 * commit, truncate and release for sequences. The blocks, their keys and
 * their queue are the pool's; the lengths and token ids the table's. The
 * children of a key (for the partly matching block) are found by a scan of
 * the pool, which is short next to a prefill. */
#include "kv/prefix_cache.h"

#include <stdlib.h>

#include "core/error.h"

struct prefix_cache {
    block_pool *pool;
    block_table *tab;
    block_disk *disk; /* --cache-dir; NULL = none */
    kv_key identity;
    /* per sequence */
    kv_key *root, *chain; /* its chain's root; the key of its last registered block */
    int *n_reg;           /* leading blocks cached or checked against the cache */
    int *limit;           /* positions that may be cached (PREFIX_ALL = all) */
};

prefix_cache *prefix_cache_new(block_pool *pool, block_table *tab, kv_key identity, wick_error *err) {
    prefix_cache *pc = calloc(1, sizeof *pc);
    if (!pc) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    const size_t ns = (size_t)tab->n_seq;
    pc->pool = pool;
    pc->tab = tab;
    pc->identity = identity;
    pc->root = calloc(ns, sizeof *pc->root);
    pc->chain = calloc(ns, sizeof *pc->chain);
    pc->n_reg = calloc(ns, sizeof *pc->n_reg);
    pc->limit = malloc(ns * sizeof *pc->limit);
    if (!pc->root || !pc->chain || !pc->n_reg || !pc->limit) {
        prefix_cache_free(pc);
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory for the prefix cache");
        return NULL;
    }
    const kv_key root = block_root(identity, bpool_layout(pool), NULL);
    for (size_t s = 0; s < ns; s++) {
        pc->root[s] = pc->chain[s] = root;
        pc->limit[s] = PREFIX_ALL;
    }
    return pc;
}

void prefix_cache_free(prefix_cache *pc) {
    if (!pc) return;
    free(pc->root);
    free(pc->chain);
    free(pc->n_reg);
    free(pc->limit);
    free(pc);
}

kv_key prefix_identity(const prefix_cache *pc) { return pc->identity; }

void prefix_set_disk(prefix_cache *pc, block_disk *disk) { pc->disk = disk; }

/* The cached child of `parent` (has_parent alike) whose token ids match the
 * most of want[0, n_want): its id and *n, or -1. */
static int32_t best_child(const block_pool *p, kv_key parent, bool has_parent, const int32_t *want, int n_want,
                          int *n_best) {
    int32_t best = -1;
    int best_n = 0;
    for (int32_t c = 0; n_want > 0 && c < p->n_blocks; c++) {
        const block_meta *m = bpool_meta(p, c);
        if (!m->cached || !kv_key_eq(m->parent, parent) || m->has_parent != has_parent) continue;
        const int n = block_lcp(bpool_tokens(p, c), m->n_tok, want, n_want);
        if (n > best_n) {
            best = c;
            best_n = n;
        }
    }
    *n_best = best_n;
    return best;
}

static int attach(prefix_cache *pc, int s, kv_key root, const int32_t *tokens, int max_reuse, bool copy, bool silent) {
    block_pool *p = pc->pool;
    block_table *t = pc->tab;
    if (btable_len(t, s) != 0 || btable_n_blocks(t, s) != 0) return btable_len(t, s);
    pc->root[s] = root;
    kv_key key = root;
    int nb = 0;
    while ((nb + 1) * KV_BLOCK_SIZE <= max_reuse) {
        const kv_key k = block_key(key, tokens + (size_t)nb * KV_BLOCK_SIZE, KV_BLOCK_SIZE);
        int32_t b = bpool_find(p, k);
        if (b < 0 && pc->disk) b = disk_read_back(pc->disk, p, k, key, nb > 0, silent); /* a miss: maybe on disk */
        if (b < 0 || bpool_meta(p, b)->n_tok != KV_BLOCK_SIZE) break;
        btable_append(t, s, b);
        key = k;
        nb++;
    }
    pc->chain[s] = key;
    pc->n_reg[s] = nb;
    btable_record(t, s, 0, tokens, nb * KV_BLOCK_SIZE);
    /* The child of `key` that matches the most of what follows, cached or
     * on disk (the best one on disk is read back if it matches more; by key:
     * reading it back may reorder the disk's entries). */
    const int rest = max_reuse - nb * KV_BLOCK_SIZE;
    const int32_t *want = tokens + (size_t)nb * KV_BLOCK_SIZE;
    int best_n;
    int32_t best = best_child(p, key, nb > 0, want, rest, &best_n);
    kv_key disk_key = {0, 0};
    const int disk_n = rest > 0 && pc->disk ? disk_best_child(pc->disk, p, key, nb > 0, want, rest, best_n, &disk_key)
                                            : best_n;
    /* `best` is pinned (a reference no table holds: not evictable) so that
     * taking blocks below cannot evict it. */
    if (best >= 0) bpool_ref(p, best);
    if (disk_n > best_n) {
        const int32_t b = disk_read_back(pc->disk, p, disk_key, key, nb > 0, silent);
        /* matched again on the token ids read back */
        const int n = b >= 0 ? block_lcp(bpool_tokens(p, b), bpool_meta(p, b)->n_tok, want, rest) : 0;
        if (n > best_n) {
            bpool_ref(p, b);
            if (best >= 0) bpool_unref(p, best);
            best = b;
            best_n = n;
        }
    }
    if (best < 0) return btable_len(t, s);
    if (!copy) {
        /* read-only: s holds the child itself, shared */
        btable_append(t, s, best);
        bpool_unref(p, best);
    } else if (p->ref[best] == 1 && bpool_n_free(p) == 0) {
        /* Only the pin holds it and no block is free for a copy: take `best`
         * itself out of the cache (what it holds past the match is
         * overwritten); the table takes over the pin. */
        bpool_uncache(p, best);
        btable_adopt(t, s, best);
    } else {
        const int32_t d = bpool_take(p);
        if (d >= 0) {
            bpool_copy(p, d, best, best_n);
            btable_append(t, s, d);
        } else {
            best_n = 0;
        }
        bpool_unref(p, best);
    }
    btable_record(t, s, btable_len(t, s), want, best_n);
    return btable_len(t, s);
}

int prefix_attach(prefix_cache *pc, int s, kv_key root, const int32_t *tokens, int max_reuse, int limit) {
    pc->limit[s] = limit < 0 ? 0 : limit;
    return attach(pc, s, root, tokens, max_reuse, true, false);
}

int prefix_attach_read(prefix_cache *pc, int s, kv_key root, const int32_t *tokens, int n, bool silent) {
    return attach(pc, s, root, tokens, n, false, silent);
}

/* Positions of s that may enter the cache. */
static int cacheable(const prefix_cache *pc, int s) {
    const int len = btable_len(pc->tab, s);
    return len < pc->limit[s] ? len : pc->limit[s];
}

void prefix_commit(prefix_cache *pc, int s, bool silent) {
    block_pool *p = pc->pool;
    const block_table *t = pc->tab;
    const int full = cacheable(pc, s) / KV_BLOCK_SIZE;
    const int32_t *table = btable_blocks(t, s);
    while (pc->n_reg[s] < full) {
        const int i = pc->n_reg[s];
        const int32_t b = table[i];
        const int32_t *toks = btable_tokens(t, s) + (size_t)i * KV_BLOCK_SIZE;
        const kv_key k = block_key(pc->chain[s], toks, KV_BLOCK_SIZE);
        if (!bpool_meta(p, b)->cached && bpool_find(p, k) < 0)
            bpool_cache(p, b, k, pc->chain[s], i > 0, toks, KV_BLOCK_SIZE, silent);
        pc->chain[s] = k;
        pc->n_reg[s]++;
    }
}

void prefix_truncate(prefix_cache *pc, int s, int from) {
    const int before = btable_len(pc->tab, s);
    btable_truncate(pc->tab, s, from);
    const int n_full = btable_len(pc->tab, s) / KV_BLOCK_SIZE;
    if (btable_len(pc->tab, s) == before || pc->n_reg[s] <= n_full) return;
    /* the chain's key of the blocks s keeps whole */
    pc->n_reg[s] = n_full;
    kv_key k = pc->root[s];
    const int32_t *toks = btable_tokens(pc->tab, s);
    for (int i = 0; i < n_full; i++) k = block_key(k, toks + (size_t)i * KV_BLOCK_SIZE, KV_BLOCK_SIZE);
    pc->chain[s] = k;
}

void prefix_release(prefix_cache *pc, int s, int limit, bool silent) {
    block_pool *p = pc->pool;
    block_table *t = pc->tab;
    if (limit < pc->limit[s]) pc->limit[s] = limit < 0 ? 0 : limit;
    prefix_commit(pc, s, silent);
    const int len = cacheable(pc, s);
    const int full = len / KV_BLOCK_SIZE, tail = len % KV_BLOCK_SIZE;
    if (tail && btable_n_blocks(t, s) > full) {
        const int32_t b = btable_blocks(t, s)[full];
        const int32_t *toks = btable_tokens(t, s) + (size_t)full * KV_BLOCK_SIZE;
        const kv_key k = block_key(pc->chain[s], toks, tail);
        if (p->ref[b] == 1 && !bpool_meta(p, b)->cached && bpool_find(p, k) < 0)
            bpool_cache(p, b, k, pc->chain[s], full > 0, toks, tail, silent);
    }
    btable_clear(t, s);
    pc->n_reg[s] = 0;
    pc->chain[s] = pc->root[s];
    pc->limit[s] = PREFIX_ALL;
}

int prefix_forget(prefix_cache *pc, kv_key root, const int32_t *tokens, int n) {
    block_pool *p = pc->pool;
    kv_key key = root;
    int dropped = 0;
    for (int i = 0; i < n; i += KV_BLOCK_SIZE) {
        const int len = n - i < KV_BLOCK_SIZE ? n - i : KV_BLOCK_SIZE;
        const kv_key k = block_key(key, tokens + i, len);
        const int32_t b = bpool_find(p, k);
        if (b >= 0) {
            bpool_uncache(p, b);
            if (p->ref[b] == 0) bpool_give_back(p, b); /* it was idle: nobody holds it */
            dropped++;
        }
        if (pc->disk && disk_find(pc->disk, k) >= 0) {
            disk_forget(pc->disk, k);
            if (b < 0) dropped++;
        }
        key = k;
    }
    return dropped;
}
