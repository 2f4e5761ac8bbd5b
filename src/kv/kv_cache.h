/* kv_cache.h — the paged KV cache as the engine and the forward pass use it:
 * a facade over the kv/ stack, which it builds and wires together. It is the
 * top of kv/; the layers below never call it.
 *
 *   block_key     content keys: block chains, roots, span roots
 *   block_pool    the blocks and their memory, references, free list, LRU
 *                 queue of idle cached blocks, key index, KV events
 *   block_table   per-sequence block tables, token ids, lengths
 *   prefix_cache  attach / commit / truncate / release of sequences
 *   block_disk    the cache folder, subscribed to the pool's evictions
 *   kv_check      the invariants (tests)
 *
 * Each sequence owns a block table (its blocks in position order) and the
 * token ids it holds, so a later request can reuse its longest common
 * prefix through the prefix cache (off: kv_cache_init alone). Blocks are
 * reference-counted: free, held by one or more sequences (read-only when
 * more than one, or once cached), or idle (cached, held by none,
 * evictable). All memory is reserved at init; the pool's pages are
 * committed as blocks are first written.
 *
 * The forward pass's reads and writes (kv_view, kv_store) go straight to the
 * pool's memory through the sequence's table. */
#ifndef WICK_KV_KV_CACHE_H
#define WICK_KV_KV_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/attention.h"
#include "kv/block_disk.h"
#include "kv/block_key.h"
#include "kv/block_pool.h"
#include "kv/block_table.h"
#include "kv/prefix_cache.h"
#include "wick.h"

/* A limit that lets every position of a sequence be cached (kv_attach,
 * kv_release). */
#define KV_NO_LIMIT PREFIX_ALL

/* Initialized in place and never copied: the layers point at each other. */
typedef struct kv_cache {
    block_pool pool;
    block_table tab;
    prefix_cache *pc; /* NULL: no prefix cache */
    block_disk *disk; /* NULL: no cache folder */
} kv_cache;

int kv_cache_init(kv_cache *kv, int n_layer, int n_kv_heads, int head_dim, int n_ctx, int n_seq, int type,
                  wick_error *err);
/* The same with a pool of n_blocks blocks shared by all sequences (0 = n_seq
 * full contexts); a sequence may then find no free block (kv_reserve fails
 * and the scheduler preempts). */
int kv_cache_init_pool(kv_cache *kv, int n_layer, int n_kv_heads, int head_dim, int n_ctx, int n_seq,
                       int n_blocks, int type, wick_error *err);
/* Everything still cached is written to the cache folder first, if any. */
void kv_cache_free(kv_cache *kv);

/* ---- the prefix cache and its folder ---- */

/* Turn the prefix cache on. identity names everything but the tokens that
 * decides a block's contents (model, weight type, RoPE; the KV layout and
 * type are added here). max_cached: blocks kept while held by no sequence
 * (0 = as many as the pool has room for). */
int kv_enable_prefix_cache(kv_cache *kv, kv_key identity, int max_cached, wick_error *err);
/* Keep blocks in dir too (block_disk.h): evicted blocks are written there,
 * and all cached ones when the cache is freed; a miss looks there. The
 * folder's blocks of this model are indexed now. max_bytes: 0 = 10 GiB.
 * warn_fn (may be NULL) hears of the first failure of each kind. */
int kv_set_cache_dir(kv_cache *kv, const char *dir, size_t max_bytes, disk_warn_fn warn_fn, void *warn_user,
                     wick_error *err);
/* Hear of blocks entering and leaving the prefix cache (nothing without one). */
void kv_set_events(kv_cache *kv, kv_event_fn fn, void *user);
/* A FLUSH event if any event came since the last one. */
static inline void kv_flush_events(kv_cache *kv) { bpool_flush_events(&kv->pool); }
/* Files of the cache folder skipped or failed, and the last reason. */
int kv_disk_warnings(const kv_cache *kv, const char **last);
/* The cache folder's failures of each kind (zeros without one); any thread. */
void kv_disk_errors(const kv_cache *kv, uint64_t counts[WICK_CACHE_ERR_KINDS]);

/* The root key of chains for requests with this salt (NULL or "" = none). */
kv_key kv_root(const kv_cache *kv, const char *salt);
/* The root key of span-cache chains (engine/spans.c): blocks holding a
 * span's K before RoPE and its V, computed after the anchor ids. */
kv_key kv_span_root(const kv_cache *kv, const char *salt, const int32_t *anchor, int n_anchor);

/* ---- sequences ---- */

/* Start the empty sequence s on tokens[0, n) with the cached blocks of its
 * chain from root, reusing at most max_reuse tokens; only positions
 * [0, limit) of s may enter the cache until it is released (KV_NO_LIMIT:
 * all). Returns the tokens now held (its length; 0 without a prefix cache). */
int kv_attach(kv_cache *kv, int s, kv_key root, const int32_t *tokens, int max_reuse, int limit);
/* The same for a sequence that is only read (a span's stored rows): the
 * partly matching block is shared rather than copied; blocks read back from
 * disk enter the cache silent if asked. s must not be written before
 * kv_release. */
int kv_attach_read(kv_cache *kv, int s, kv_key root, const int32_t *tokens, int n, bool silent);
/* Forget the cached KV of tokens[0, n) on the chain from root (see
 * prefix_forget); the blocks forgotten (0 without a prefix cache). */
int kv_forget(kv_cache *kv, kv_key root, const int32_t *tokens, int n);
/* Put the full blocks s has filled since the last call in the cache. */
void kv_commit(kv_cache *kv, int s);
/* End s: what it computed within positions [0, limit) (and its attach's
 * limit) enters the cache, silent (a span's rows, not a prefix) if asked;
 * its partly filled last block is kept as a cached tail, and every block it
 * held is let go. Without a prefix cache its blocks go back to the pool. */
void kv_release(kv_cache *kv, int s, int limit, bool silent);

/* Make sure s has blocks for positions [0, new_len), evicting cached blocks
 * when none is free. -1 with err if new_len exceeds n_ctx or no block can be
 * had. */
static inline int kv_reserve(kv_cache *kv, int s, int new_len, wick_error *err) {
    return btable_reserve(&kv->tab, s, new_len, err);
}
/* Drop positions [from, len) of s, letting go of whole blocks. If `from`
 * falls inside a block others may read (shared or cached), s gets a private
 * copy of it; when no block is left for the copy, s is cut back to that
 * block's start instead. */
void kv_truncate(kv_cache *kv, int s, int from);
/* Positions [at, at + n) of s now hold these tokens' K and V: record the ids;
 * its length grows to at + n. */
static inline void kv_record(kv_cache *kv, int s, int at, const int32_t *tokens, int n) {
    btable_record(&kv->tab, s, at, tokens, n);
}

static inline int kv_seq_len(const kv_cache *kv, int s) { return btable_len(&kv->tab, s); }
static inline int kv_seq_blocks(const kv_cache *kv, int s) { return btable_n_blocks(&kv->tab, s); }
static inline const int32_t *kv_seq_tokens(const kv_cache *kv, int s) { return btable_tokens(&kv->tab, s); }

/* ---- blocks ---- */

static inline int kv_blocks_total(const kv_cache *kv) { return kv->pool.n_blocks; }
/* Blocks held by sequences. */
static inline int kv_blocks_used(const kv_cache *kv) {
    return kv->pool.n_blocks - bpool_n_free(&kv->pool) - bpool_n_idle(&kv->pool);
}
/* Blocks a sequence could get now: free ones and cached ones held by none. */
static inline int kv_blocks_available(const kv_cache *kv) {
    return bpool_n_free(&kv->pool) + bpool_n_idle(&kv->pool);
}
/* Cached blocks held by no sequence. */
static inline int kv_blocks_cached(const kv_cache *kv) { return bpool_n_idle(&kv->pool); }
/* Full blocks in the prefix cache, held or not (STORED and not REMOVED). */
static inline int kv_prefix_blocks(const kv_cache *kv) { return bpool_n_full(&kv->pool); }

/* ---- the forward pass ---- */

/* The attention kernel's view of layer il of sequence s. */
static inline attn_kv kv_view(const kv_cache *kv, int il, int s) {
    return bpool_view(&kv->pool, il, btable_blocks(&kv->tab, s));
}
/* Store position p of sequence s in layer il: k and v hold row_elems
 * floats each (KV heads one after another), converted to the cache's type. */
static inline void kv_store(kv_cache *kv, int il, int s, int p, const float *k, const float *v) {
    bpool_store(&kv->pool, il, btable_blocks(&kv->tab, s), p, k, v);
}

#endif
