/* prefix_cache.h — the automatic prefix cache over the KV block pool: every
 * full block a sequence computes gets a content key, XXH3-128 of its parent
 * block's key, its length and its token ids; the chain starts from a root key
 * naming the model (weights, weight type, RoPE), the KV layout and type and
 * the request's cache salt. A block whose key is known is never computed
 * again: a new sequence walks its prompt's chain and holds every cached block
 * it finds (shared, read-only), then copies the best partly matching block
 * (a full block or the kept tail of a finished sequence) up to the last
 * matching token, and computes only the rest.
 *
 * Blocks held by no sequence stay cached, in least-recently-used order, and
 * are evicted (oldest first, leaves before their parents) when a sequence
 * needs a block and none is free, or when more than the cache's budget of
 * blocks sit unused. Evicting and storing full blocks can be observed through
 * an event callback (the server turns these into vLLM KV events).
 *
 * Exactness: the kernels are batch-invariant, so a block's K and V depend
 * only on the tokens at and before its positions; a reused block holds the
 * same bits the sequence would have computed. */
#ifndef WICK_KV_PREFIX_CACHE_H
#define WICK_KV_PREFIX_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kv/kv_cache.h"

typedef struct kv_key {
    uint64_t lo, hi;
} kv_key;

static inline bool kv_key_eq(kv_key a, kv_key b) { return a.lo == b.lo && a.hi == b.hi; }

/* The key of a block of n token ids whose parent block's key is parent (the
 * chain's root key for the first block). A block read back from disk is
 * checked with it: its key must be that of its own parent and token ids. */
kv_key prefix_block_key(kv_key parent, const int32_t *tokens, int n);

typedef enum kv_event_kind { KV_EVENT_STORED, KV_EVENT_REMOVED, KV_EVENT_FLUSH } kv_event_kind;

/* A full block entering (STORED: key, parent, its tokens) or leaving
 * (REMOVED: key) the cache; FLUSH ends
 * a batch of events (prefix_flush_events, after each scheduler step). */
typedef struct kv_event {
    kv_event_kind kind;
    kv_key key, parent;
    bool has_parent; /* false: the block is the first of its chain */
    const int32_t *tokens;
    int n_tokens;
} kv_event;

typedef void (*kv_event_fn)(void *user, const kv_event *ev);

/* Turn the cache on for kv. identity names everything but the tokens that
 * decides a block's contents (model, weight type, RoPE; the KV layout and
 * type are added here). max_cached: blocks kept while held by no sequence
 * (0 = as many as the pool has room for). */
int prefix_cache_enable(kv_cache *kv, kv_key identity, int max_cached, wick_error *err);
void prefix_cache_free(kv_cache *kv);
void prefix_cache_set_events(kv_cache *kv, kv_event_fn fn, void *user);
/* Keep blocks in dir too (block_disk.h): evicted blocks are written there,
 * and all cached ones when the cache is freed; a miss looks there. The
 * folder's blocks of this model are indexed now. max_bytes: 0 = 10 GiB.
 * warn_fn (may be NULL) hears of the first failure of each kind. */
int prefix_cache_set_dir(kv_cache *kv, const char *dir, size_t max_bytes, void (*warn_fn)(void *, const char *),
                         void *warn_user, wick_error *err);
/* Files of the cache directory skipped or failed, and the last reason. */
int prefix_disk_warnings(const kv_cache *kv, const char **last);
/* The cache directory's failures of each kind (zeros without one); any thread. */
void prefix_disk_errors(const kv_cache *kv, uint64_t counts[WICK_CACHE_ERR_KINDS]);


/* The root key of chains for requests with this salt (NULL or "" = none). */
kv_key prefix_root(const kv_cache *kv, const char *salt);

/* The root key of span-cache chains (engine/spans.c): blocks holding a
 * span's K before RoPE and its V, computed after the anchor ids. */
kv_key prefix_span_root(const kv_cache *kv, const char *salt, const int32_t *anchor, int n_anchor);
/* While on, blocks entering the cache (committed, or read back from disk)
 * are a span's stored rows rather than a prefix: no KV events announce
 * them (a router would take their token ids for a cached prompt prefix) and
 * prefix_full_blocks does not count them. */
void prefix_set_quiet(kv_cache *kv, bool on);
/* Only positions [0, n) of sequence s may enter the cache (commit and the
 * kept tail); what lies past them is not what an ordinary prefill of its
 * tokens computes (placed spans). Reset by prefix_release. */
void prefix_set_limit(kv_cache *kv, int s, int n);

/* Start the empty sequence s on tokens[0, n) with the cached blocks of its
 * chain from root, reusing at most max_reuse tokens. Returns the tokens now
 * held (its length). */
int prefix_attach(kv_cache *kv, int s, kv_key root, const int32_t *tokens, int max_reuse);
/* The same for a sequence that is only read (a span's stored rows): the
 * partly matching block is held as it is, shared, rather than copied, so a
 * hit takes no block. s must not be written before prefix_release. */
int prefix_attach_read(kv_cache *kv, int s, kv_key root, const int32_t *tokens, int n);
/* Put the blocks sequence s has filled since the last call in the cache. */
void prefix_commit(kv_cache *kv, int s);
/* End sequence s: its partly filled last block is kept as a cached tail and
 * every block it held is let go (cached blocks stay until evicted). */
void prefix_release(kv_cache *kv, int s);

/* Cached blocks held by no sequence. */
int prefix_cached_blocks(const kv_cache *kv);
/* Full blocks in the cache, held or not (those STORED and not REMOVED). */
int prefix_full_blocks(const kv_cache *kv);
/* A FLUSH event if any event came since the last one. */
void prefix_flush_events(kv_cache *kv);
/* Evict the least recently used cached block; its id, or -1 if none. */
int32_t prefix_evict_one(kv_cache *kv);

/* For kv_cache.c: b was taken by a sequence (leaves the LRU list) or let go
 * by the last one (enters it, or the free list if it is not cached). */
void prefix_on_hold(kv_cache *kv, int32_t b);
bool prefix_on_idle(kv_cache *kv, int32_t b);
/* For kv_truncate: s keeps only its first n_full blocks whole and writes
 * into block n_full next; a cached block there must stop being cached or be
 * copied. Returns whether s may write into table entry n_full as it is. */
bool prefix_may_write(kv_cache *kv, int s, int n_full);
void prefix_on_truncate(kv_cache *kv, int s, int n_full);

/* Check every invariant of the pool and the cache; 0, or -1 with a message. */
int prefix_check(const kv_cache *kv, char *msg, size_t cap);

#endif
