/* block_key.h — content keys of KV blocks, the bottom of the kv/ stack (it
 * depends on nothing else in kv/).
 *
 * A block of KV_BLOCK_SIZE positions is named by what decides its K and V:
 * its key is XXH3-128 of its parent block's key, its length and its token
 * ids, so a key names a whole prefix, not only the block's own ids. A chain
 * starts from a root key naming everything else that decides the contents:
 * the model (weights, weight type, RoPE: the caller's identity), the KV
 * layout and element type, and the request's cache salt. Span chains
 * (engine/spans.c) start from a root of their own, derived from an ordinary
 * root and the anchor ids the span was computed after.
 *
 * Keys are stable across builds and processes: they name the files of the
 * cache folder (block_disk.h). */
#ifndef WICK_KV_BLOCK_KEY_H
#define WICK_KV_BLOCK_KEY_H

#include <stdbool.h>
#include <stdint.h>

/* Positions per block (why this size: block_pool.h). A key covers at most
 * this many token ids. */
#define KV_BLOCK_SIZE 128

typedef struct kv_key {
    uint64_t lo, hi;
} kv_key;

static inline bool kv_key_eq(kv_key a, kv_key b) { return a.lo == b.lo && a.hi == b.hi; }

/* How many leading token ids a[0, na) and b[0, nb) share (how far a block's
 * contents match what a sequence wants). */
static inline int block_lcp(const int32_t *a, int na, const int32_t *b, int nb) {
    const int n = na < nb ? na : nb;
    int i = 0;
    while (i < n && a[i] == b[i]) i++;
    return i;
}

/* What a root names besides the model: the KV layout and element type. */
typedef struct kv_layout {
    int n_layer, n_kv_heads, head_dim, type;
} kv_layout;

/* The key of a block of n (1..KV_BLOCK_SIZE) token ids whose parent block's
 * key is parent (the chain's root for the first block). A block read back
 * from disk is checked with it: its key must be that of its own parent and
 * token ids. */
kv_key block_key(kv_key parent, const int32_t *tokens, int n);

/* The root of chains for a model (identity), a KV layout and a cache salt
 * (NULL or "" = none). */
kv_key block_root(kv_key identity, kv_layout layout, const char *salt);

/* The root of span-cache chains: blocks holding a span's K before RoPE and
 * its V, computed after the anchor ids; root is the ordinary root of the
 * request's model, layout and salt. */
kv_key block_span_root(kv_key root, const int32_t *anchor, int n_anchor);

#endif
