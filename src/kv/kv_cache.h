/* kv_cache.h — the paged KV cache: a pool of blocks of KV_BLOCK_SIZE
 * positions, each block holding K and V of those positions for every layer;
 * each sequence owns a block table (its blocks in position order) and the
 * token ids it holds, so a later request can reuse its longest common
 * prefix. A block is one run of memory, [layer][K, V][kv head][position]
 * [head_dim]: memory is committed as positions are used, whatever the
 * number of layers (a layer-major pool made the first token of a fresh
 * process fault in a page per layer for K and for V: 48 huge pages, 96 MiB,
 * 160-230 ms on the Zen 5 VM for Qwen2.5-0.5B). Within a block the values
 * are head-major: attention reads one KV head's keys of a block as one
 * contiguous run (position-major rows would make it a head_dim slice every
 * n_kv_heads × head_dim values, a stride the hardware prefetchers do not
 * follow: Qwen3-0.6B's decode at 2,048 positions read its KV cache at 43-49
 * GB/s that way, 77-85 contiguously, on Zen 5). Blocks of 128 positions:
 * a head's run of keys is then 16-64 KiB, long enough for the hardware
 * prefetchers (decode at 4,096 positions, 2 threads, Zen 5, against 32:
 * Qwen3-0.6B Q4_0 33-39 -> 44-46 tok/s with F32 KV, 44-50 -> 48-60 with
 * F16); the cost is memory committed a block at a time (Qwen3-0.6B, F32:
 * 28 MiB, all layers).
 *
 * Blocks are reference-counted: a block is free, held by one or more
 * sequences (read-only when more than one, or once it is in the prefix
 * cache), or cached (in the prefix cache, held by none, evictable). The
 * prefix cache (prefix_cache.c) gives every full block a content key and
 * lets a new sequence start with the cached blocks of its prompt.
 *
 * Invariants: sequence s holds positions [0, len[s]) in exactly
 * ceil(len[s] / KV_BLOCK_SIZE) blocks once those positions are written (up
 * to what kv_reserve added ahead); the block a sequence writes next is
 * private to it (ref 1, not in the prefix cache); ref[b] is the number of
 * table entries naming b; a block is in exactly one of: the free list, some
 * table, the cache's LRU list. All memory is reserved in kv_cache_init; the
 * pool's pages are committed as blocks are first written. */
#ifndef WICK_KV_KV_CACHE_H
#define WICK_KV_KV_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/attention.h"
#include "wick.h"

#define KV_BLOCK_SIZE 128 /* positions per block */
_Static_assert(KV_BLOCK_SIZE <= ATTN_MAX, "attention tiles hold at most ATTN_MAX positions");

typedef struct prefix_cache prefix_cache;

typedef struct kv_cache {
    int n_layer, n_kv_heads, head_dim, row_elems, n_ctx, n_seq; /* row_elems = n_kv_heads × head_dim */
    int type;            /* WICK_F32 or WICK_F16 (rows converted when stored) */
    size_t elem_bytes;
    int n_blocks;        /* in the pool */
    int max_blocks_seq;  /* per sequence: ceil(n_ctx / block) */
    void *base;          /* [n_blocks][n_layer][K, V][n_kv_heads][block][head_dim], one anonymous map */
    size_t part_bytes;   /* one layer's K (or V) of one block */
    size_t map_bytes;
    int32_t *tables;     /* [n_seq][max_blocks_seq] */
    int *n_seq_blocks;   /* blocks held per sequence */
    int *len;            /* tokens per sequence */
    int32_t *tokens;     /* [n_seq][n_ctx] token ids per sequence */
    int32_t *free_list;  /* stack of free block ids */
    int n_free;
    int32_t *ref;        /* [n_blocks] sequences holding each block */
    prefix_cache *pc;    /* NULL: no prefix cache (prefix_cache.h) */
} kv_cache;

int kv_cache_init(kv_cache *kv, int n_layer, int n_kv_heads, int head_dim, int n_ctx, int n_seq, int type,
                  wick_error *err);
/* The same with a pool of n_blocks blocks shared by all sequences (0 = n_seq
 * full contexts); a sequence may then find no free block (kv_reserve fails
 * and the scheduler preempts). */
int kv_cache_init_pool(kv_cache *kv, int n_layer, int n_kv_heads, int head_dim, int n_ctx, int n_seq,
                       int n_blocks, int type, wick_error *err);
void kv_cache_free(kv_cache *kv);
/* Blocks held by sequences. */
int kv_blocks_used(const kv_cache *kv);
/* Blocks a sequence could get now: free ones and cached ones held by none. */
int kv_blocks_available(const kv_cache *kv);

/* Make sure sequence s has blocks for positions [0, new_len), evicting
 * cached blocks when none is free. -1 with err if new_len exceeds n_ctx or
 * no block can be had. */
int kv_reserve(kv_cache *kv, int s, int new_len, wick_error *err);
/* Drop positions [from, len) of sequence s, letting go of whole blocks. If
 * `from` falls inside a block others may read (shared or cached), s gets a
 * private copy of it; when no block is left for the copy, s is cut back to
 * that block's start instead. */
void kv_truncate(kv_cache *kv, int s, int from);

/* ---- for prefix_cache.c ---- */
/* A free block, or one evicted from the cache; -1 if none. ref is 0. */
int32_t kv_take_block(kv_cache *kv);
/* Append block b to s's table (ref + 1). */
void kv_hold(kv_cache *kv, int s, int32_t b);
/* One reference to b fewer; at 0 it goes to the cache (if cached) or the free list. */
void kv_unhold(kv_cache *kv, int32_t b);
/* A block is KV_BLOCK_RUNS runs, one per layer, K then V, and KV head:
 * KV_BLOCK_SIZE rows of head_dim values each. Run r of block b: */
#define KV_BLOCK_RUNS(kv) ((kv)->n_layer * 2 * (kv)->n_kv_heads)
char *kv_block_run(const kv_cache *kv, int32_t b, int r);
/* Copy positions [0, n) of every layer and head from block src to dst. */
void kv_copy_block(kv_cache *kv, int32_t dst, int32_t src, int n);

/* Store position p of sequence s in layer il: k and v hold row_elems
 * floats each (KV heads one after another), converted to the cache's type. */
void kv_store(kv_cache *kv, int il, int s, int p, const float *k, const float *v);
/* The attention kernel's view of layer il of sequence s. */
attn_kv kv_view(const kv_cache *kv, int il, int s);

static inline int32_t *kv_seq_tokens(const kv_cache *kv, int s) {
    return kv->tokens + (size_t)s * kv->n_ctx;
}

#endif
