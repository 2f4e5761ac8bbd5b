/* block_pool.h — the KV blocks and their memory, their reference counts, the
 * free list, the queue of evictable cached blocks and the key -> block index
 * (the model: vLLM v1's BlockPool). Above block_key.h only: it calls nothing
 * in kv/ above it; evictions and the changes of what is cached are reported
 * to subscribers (the cache folder writes an evicted block out; the server
 * turns KV events into vLLM's).
 *
 * Memory: one anonymous map of n_blocks blocks. A block is one run of
 * memory, [layer][K, V][kv head][position][head_dim], so memory is committed
 * as positions are used, whatever the number of layers (a layer-major pool
 * faults in a page per layer for K and for V on a fresh process's first
 * token). Within a block the values are head-major: attention reads one KV
 * head's keys of a block as one contiguous run, which the hardware
 * prefetchers follow (position-major rows would make it a head_dim slice
 * every n_kv_heads x head_dim values). KV_BLOCK_SIZE (128) positions make
 * that run long enough for the prefetchers; the cost is memory committed a
 * block at a time. Low block ids are handed out first, so memory grows with
 * the positions in use; the map is marked for transparent huge pages (a
 * sequence's blocks can lie anywhere in it).
 *
 * A block is in exactly one state:
 *   free     ref 0, not cached, on the free list (a stack: the lowest ids
 *            on top at the start);
 *   held     ref >= 1 (block tables and pins hold it), cached or not;
 *   idle     ref 0, cached, in the LRU queue (evictable).
 * A cached block has a content key, unique in the index, its parent's key,
 * the positions it holds (KV_BLOCK_SIZE, or fewer for a sequence's kept
 * tail) and their token ids. A block is taken from the free list first;
 * when that is empty the least recently used idle block is evicted (its
 * evict subscriber hears of it first, while it is intact) and handed out.
 * Idle blocks beyond the budget are evicted to the free list as soon as they
 * become idle.
 *
 * KV events: a full, non-silent block entering the index is STORED, leaving
 * it REMOVED; bpool_flush_events ends a batch with FLUSH. Silent blocks (a
 * span's stored rows, not a prefix) are announced by no event and not
 * counted as full blocks. */
#ifndef WICK_KV_BLOCK_POOL_H
#define WICK_KV_BLOCK_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/attention.h"
#include "kv/block_key.h"
#include "wick.h"

_Static_assert(KV_BLOCK_SIZE <= ATTN_MAX, "attention tiles hold at most ATTN_MAX positions");

typedef enum kv_event_kind { KV_EVENT_STORED, KV_EVENT_REMOVED, KV_EVENT_FLUSH } kv_event_kind;

/* A full block entering (STORED: key, parent, its tokens) or leaving
 * (REMOVED: key) the cache; FLUSH ends a batch of events. */
typedef struct kv_event {
    kv_event_kind kind;
    kv_key key, parent;
    bool has_parent; /* false: the block is the first of its chain */
    const int32_t *tokens;
    int n_tokens;
} kv_event;

typedef void (*kv_event_fn)(void *user, const kv_event *ev);

typedef struct block_pool block_pool;

/* Block b is being evicted: cached, held by none, its contents and metadata
 * intact until the call returns. */
typedef void (*bpool_evict_fn)(void *user, const block_pool *p, int32_t b);

/* What the pool knows of a block besides its memory. */
typedef struct block_meta {
    kv_key key, parent;        /* while cached */
    int32_t n_tok;             /* positions the cached content holds (0: not cached) */
    int32_t lru_prev, lru_next; /* -1 = none; in the queue iff idle */
    bool cached, has_parent, silent, in_lru;
} block_meta;

struct block_pool {
    /* layout */
    int n_layer, n_kv_heads, head_dim, row_elems; /* row_elems = n_kv_heads x head_dim */
    int type;                                      /* WICK_F32 or WICK_F16 */
    size_t elem_bytes;
    size_t part_bytes;  /* one layer's K (or V) of one block */
    size_t block_bytes; /* one block, all layers */
    size_t head_bytes;  /* one KV head's run within a part */
    size_t map_bytes;
    int n_blocks;
    void *base; /* [n_blocks][n_layer][K, V][n_kv_heads][KV_BLOCK_SIZE][head_dim] */
    /* holding */
    int32_t *ref;       /* [n_blocks] table entries and pins naming each block */
    int32_t *free_list; /* stack of free block ids */
    int n_free;
    /* caching */
    block_meta *meta;   /* [n_blocks] */
    int32_t *tok;       /* [n_blocks][KV_BLOCK_SIZE] token ids of cached blocks */
    int32_t lru_head, lru_tail; /* head = least recently used */
    int n_lru;
    int max_idle;       /* idle blocks kept (0 = as many as the pool holds) */
    int32_t *slots;     /* the index: open addressing over the keys */
    size_t cap;
    int n_tomb;
    int n_full;         /* cached full blocks, silent ones aside */
    /* subscribers */
    bpool_evict_fn on_evict;
    void *evict_user;
    kv_event_fn on_event;
    void *event_user;
    bool events_pending;
};

/* A pool of n_blocks blocks of this layout (type WICK_F32 or WICK_F16), all
 * free. Memory is reserved here and committed as blocks are written. */
int bpool_init(block_pool *p, kv_layout layout, int n_blocks, wick_error *err);
void bpool_free(block_pool *p);
static inline kv_layout bpool_layout(const block_pool *p) {
    return (kv_layout){p->n_layer, p->n_kv_heads, p->head_dim, p->type};
}

/* Idle blocks kept at most (0 = no bound beyond the pool). */
void bpool_set_budget(block_pool *p, int max_idle);
/* Subscribe to evictions (one subscriber; fn NULL = none). */
void bpool_on_evict(block_pool *p, bpool_evict_fn fn, void *user);
/* Subscribe to KV events (one subscriber; fn NULL = none). */
void bpool_set_events(block_pool *p, kv_event_fn fn, void *user);
/* A FLUSH event if any event came since the last one. */
void bpool_flush_events(block_pool *p);

/* A free block, or the least recently used idle one evicted; -1 if none.
 * Its ref is 0 and it is in no list: the caller refs it or gives it back. */
int32_t bpool_take(block_pool *p);
/* A block bpool_take or bpool_evict_one returned and nobody refs: back to
 * the free list. */
void bpool_give_back(block_pool *p, int32_t b);
/* Evict the least recently used idle block; its id (as from bpool_take), or
 * -1 if none is idle. */
int32_t bpool_evict_one(block_pool *p);
/* One reference more (a table entry or a pin); an idle block stops being
 * evictable. */
void bpool_ref(block_pool *p, int32_t b);
/* One reference fewer; at 0 a cached block becomes idle (the most recently
 * used; over the budget, the oldest idle ones are evicted to the free list),
 * any other goes to the free list. */
void bpool_unref(block_pool *p, int32_t b);

/* The cached block with this key, or -1. */
int32_t bpool_find(const block_pool *p, kv_key k);
/* Cache block b (not cached; its key not in the index) under key: its
 * parent's key, its n token ids (positions [0, n) of the block); silent: a
 * span's rows, not a prefix. A block held by none becomes idle, the most
 * recently used (no eviction for the budget). */
void bpool_cache(block_pool *p, int32_t b, kv_key key, kv_key parent, bool has_parent, const int32_t *tokens,
                 int n, bool silent);
/* Block b stops being cached (nothing if it is not); an idle one goes to no
 * list: the caller holds it. */
void bpool_uncache(block_pool *p, int32_t b);
static inline const block_meta *bpool_meta(const block_pool *p, int32_t b) { return &p->meta[b]; }
static inline const int32_t *bpool_tokens(const block_pool *p, int32_t b) {
    return p->tok + (size_t)b * KV_BLOCK_SIZE;
}

/* Blocks free; idle (cached, held by none); full and cached (not silent). */
static inline int bpool_n_free(const block_pool *p) { return p->n_free; }
static inline int bpool_n_idle(const block_pool *p) { return p->n_lru; }
static inline int bpool_n_full(const block_pool *p) { return p->n_full; }

/* A block is BPOOL_RUNS runs, one per layer, K then V, and KV head:
 * KV_BLOCK_SIZE rows of head_dim values each. Run r of block b: */
#define BPOOL_RUNS(p) ((p)->n_layer * 2 * (p)->n_kv_heads)
char *bpool_run(const block_pool *p, int32_t b, int r);
/* Copy positions [0, n) of every layer and head from block src to dst. */
void bpool_copy(block_pool *p, int32_t dst, int32_t src, int n);

/* The attention kernel's view of layer il of the blocks listed in blocks
 * (a sequence's table, in position order). */
static inline attn_kv bpool_view(const block_pool *p, int il, const int32_t *blocks) {
    const char *k = (const char *)p->base + (size_t)il * 2 * p->part_bytes;
    attn_kv v = {
        .k = k,
        .v = k + p->part_bytes,
        .type = p->type,
        .blocks = blocks,
        .block_size = KV_BLOCK_SIZE,
        .block_stride = p->block_bytes,
        .head_stride = p->head_bytes,
        .row_stride = (size_t)p->head_dim * p->elem_bytes,
    };
    return v;
}
/* Store position pos of the blocks listed in blocks, layer il: k and v hold
 * row_elems floats each (KV heads one after another), converted to the
 * pool's type. */
void bpool_store(block_pool *p, int il, const int32_t *blocks, int pos, const float *k, const float *v);

#endif
