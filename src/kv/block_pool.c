/* block_pool.c — the KV blocks, their references, the free list, the LRU
 * queue of idle cached blocks and the key index (see block_pool.h).
 *
 * The index is open addressing over the keys of cached blocks, at least
 * twice as many slots as blocks, with tombstones (rebuilt when they pile
 * up). The LRU queue is a doubly linked list through the blocks' metadata.
 * Nothing here calls a layer above: subscribers are told through the
 * function pointers they registered. */
#include "kv/block_pool.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/error.h"
#include "core/tensor.h"
#include "kernels/ops.h"

enum { SLOT_EMPTY = -1, SLOT_TOMB = -2 };

/* Zeroed, lazily committed, huge pages where the kernel has them; NULL on failure. */
static void *map_pool(size_t bytes) {
    if (bytes == 0) return NULL;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    madvise(p, bytes, MADV_HUGEPAGE);
    return p;
}

int bpool_init(block_pool *p, kv_layout layout, int n_blocks, wick_error *err) {
    memset(p, 0, sizeof *p);
    if (layout.type != WICK_F32 && layout.type != WICK_F16)
        return wick_fail_code(err, WICK_E_UNSUPPORTED, "KV cache type %s is not supported (use F32 or F16)", dtype_name(layout.type));
    if (n_blocks < 0) return wick_fail(err, "KV pool of %d blocks", n_blocks);
    p->n_layer = layout.n_layer;
    p->n_kv_heads = layout.n_kv_heads;
    p->head_dim = layout.head_dim;
    p->row_elems = layout.n_kv_heads * layout.head_dim;
    p->type = layout.type;
    p->elem_bytes = layout.type == WICK_F16 ? 2 : 4;
    p->part_bytes = (size_t)KV_BLOCK_SIZE * (size_t)p->row_elems * p->elem_bytes;
    p->block_bytes = (size_t)p->n_layer * 2 * p->part_bytes;
    p->head_bytes = (size_t)KV_BLOCK_SIZE * (size_t)p->head_dim * p->elem_bytes;
    p->n_blocks = n_blocks;
    p->map_bytes = (size_t)n_blocks * p->block_bytes;
    const size_t nb = (size_t)n_blocks;
    p->cap = 16;
    while (p->cap < nb * 2) p->cap *= 2;
    p->base = map_pool(p->map_bytes);
    p->ref = calloc(nb, sizeof *p->ref);
    p->free_list = malloc(nb * sizeof *p->free_list);
    p->meta = calloc(nb, sizeof *p->meta);
    p->tok = malloc(nb * KV_BLOCK_SIZE * sizeof *p->tok);
    p->slots = malloc(p->cap * sizeof *p->slots);
    if (!p->base || !p->ref || !p->free_list || !p->meta || !p->tok || !p->slots) {
        const size_t mib = p->map_bytes >> 20;
        bpool_free(p);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory allocating the KV cache (%zu MiB)", mib);
    }
    /* Hand out low block ids first. */
    for (int i = 0; i < n_blocks; i++) p->free_list[i] = n_blocks - 1 - i;
    p->n_free = n_blocks;
    for (int i = 0; i < n_blocks; i++) p->meta[i].lru_prev = p->meta[i].lru_next = -1;
    p->lru_head = p->lru_tail = -1;
    for (size_t i = 0; i < p->cap; i++) p->slots[i] = SLOT_EMPTY;
    return 0;
}

void bpool_free(block_pool *p) {
    if (p->base) munmap(p->base, p->map_bytes);
    free(p->ref);
    free(p->free_list);
    free(p->meta);
    free(p->tok);
    free(p->slots);
    memset(p, 0, sizeof *p);
}

void bpool_set_budget(block_pool *p, int max_idle) { p->max_idle = max_idle; }

void bpool_on_evict(block_pool *p, bpool_evict_fn fn, void *user) {
    p->on_evict = fn;
    p->evict_user = user;
}

void bpool_set_events(block_pool *p, kv_event_fn fn, void *user) {
    p->on_event = fn;
    p->event_user = user;
}

/* ---- index ---- */

static size_t slot_of(const block_pool *p, kv_key k) {
    return (size_t)(k.lo ^ (k.hi * 0x9E3779B97F4A7C15ull)) & (p->cap - 1);
}

int32_t bpool_find(const block_pool *p, kv_key k) {
    for (size_t i = slot_of(p, k);; i = (i + 1) & (p->cap - 1)) {
        int32_t b = p->slots[i];
        if (b == SLOT_EMPTY) return -1;
        if (b >= 0 && kv_key_eq(p->meta[b].key, k)) return b;
    }
}

static void index_put(block_pool *p, int32_t b) {
    size_t i = slot_of(p, p->meta[b].key);
    while (p->slots[i] >= 0) i = (i + 1) & (p->cap - 1);
    if (p->slots[i] == SLOT_TOMB) p->n_tomb--;
    p->slots[i] = b;
}

static void index_rebuild(block_pool *p) {
    for (size_t i = 0; i < p->cap; i++) p->slots[i] = SLOT_EMPTY;
    p->n_tomb = 0;
    for (int32_t b = 0; b < p->n_blocks; b++)
        if (p->meta[b].cached) index_put(p, b);
}

static void index_del(block_pool *p, int32_t b) {
    for (size_t i = slot_of(p, p->meta[b].key);; i = (i + 1) & (p->cap - 1)) {
        if (p->slots[i] == SLOT_EMPTY) return;
        if (p->slots[i] == b) {
            p->slots[i] = SLOT_TOMB;
            p->n_tomb++;
            break;
        }
    }
    if ((size_t)p->n_tomb * 4 > p->cap) index_rebuild(p);
}

/* ---- the LRU queue of idle cached blocks ---- */

static void lru_remove(block_pool *p, int32_t b) {
    block_meta *m = &p->meta[b];
    if (!m->in_lru) return;
    const int32_t prev = m->lru_prev, next = m->lru_next;
    if (prev >= 0) p->meta[prev].lru_next = next;
    else p->lru_head = next;
    if (next >= 0) p->meta[next].lru_prev = prev;
    else p->lru_tail = prev;
    m->lru_prev = m->lru_next = -1;
    m->in_lru = false;
    p->n_lru--;
}

static void lru_push_recent(block_pool *p, int32_t b) {
    block_meta *m = &p->meta[b];
    m->lru_prev = p->lru_tail;
    m->lru_next = -1;
    if (p->lru_tail >= 0) p->meta[p->lru_tail].lru_next = b;
    else p->lru_head = b;
    p->lru_tail = b;
    m->in_lru = true;
    p->n_lru++;
}

/* ---- what is cached ---- */

static void emit(block_pool *p, kv_event_kind kind, int32_t b) {
    if (!p->on_event) return;
    p->events_pending = true;
    kv_event ev = {.kind = kind};
    if (b >= 0) {
        const block_meta *m = &p->meta[b];
        ev.key = m->key;
        ev.parent = m->parent;
        ev.has_parent = m->has_parent;
        ev.tokens = bpool_tokens(p, b);
        ev.n_tokens = m->n_tok;
    }
    p->on_event(p->event_user, &ev);
}

void bpool_flush_events(block_pool *p) {
    if (!p->events_pending || !p->on_event) return;
    p->events_pending = false;
    kv_event ev = {.kind = KV_EVENT_FLUSH};
    p->on_event(p->event_user, &ev);
}

void bpool_cache(block_pool *p, int32_t b, kv_key key, kv_key parent, bool has_parent, const int32_t *tokens,
                 int n, bool silent) {
    block_meta *m = &p->meta[b];
    m->cached = true;
    m->key = key;
    m->parent = parent;
    m->has_parent = has_parent;
    m->n_tok = n;
    m->silent = silent;
    memcpy(p->tok + (size_t)b * KV_BLOCK_SIZE, tokens, (size_t)n * sizeof *tokens);
    index_put(p, b);
    if (n == KV_BLOCK_SIZE && !silent) {
        p->n_full++;
        emit(p, KV_EVENT_STORED, b);
    }
    if (p->ref[b] == 0) lru_push_recent(p, b);
}

void bpool_uncache(block_pool *p, int32_t b) {
    block_meta *m = &p->meta[b];
    if (!m->cached) return;
    lru_remove(p, b);
    index_del(p, b);
    m->cached = false;
    if (m->n_tok == KV_BLOCK_SIZE && !m->silent) {
        p->n_full--;
        emit(p, KV_EVENT_REMOVED, b);
    }
    m->n_tok = 0;
    m->silent = false;
}

/* ---- taking and letting go ---- */

int32_t bpool_evict_one(block_pool *p) {
    const int32_t b = p->lru_head;
    if (b < 0) return -1;
    if (p->on_evict) p->on_evict(p->evict_user, p, b);
    bpool_uncache(p, b);
    return b;
}

int32_t bpool_take(block_pool *p) {
    if (p->n_free > 0) return p->free_list[--p->n_free];
    return bpool_evict_one(p);
}

void bpool_give_back(block_pool *p, int32_t b) { p->free_list[p->n_free++] = b; }

void bpool_ref(block_pool *p, int32_t b) {
    if (p->ref[b]++ == 0) lru_remove(p, b);
}

void bpool_unref(block_pool *p, int32_t b) {
    if (--p->ref[b] > 0) return;
    if (!p->meta[b].cached) {
        bpool_give_back(p, b);
        return;
    }
    lru_push_recent(p, b);
    /* over budget: the oldest idle blocks go to the free list */
    while (p->max_idle && p->n_lru > p->max_idle) bpool_give_back(p, bpool_evict_one(p));
}

/* ---- memory ---- */

char *bpool_run(const block_pool *p, int32_t b, int r) {
    const int part = r / p->n_kv_heads, h = r % p->n_kv_heads;
    return (char *)p->base + (size_t)b * p->block_bytes + (size_t)part * p->part_bytes + (size_t)h * p->head_bytes;
}

void bpool_copy(block_pool *p, int32_t dst, int32_t src, int n) {
    const size_t run = (size_t)n * (size_t)p->head_dim * p->elem_bytes;
    for (int r = 0; r < BPOOL_RUNS(p); r++) memcpy(bpool_run(p, dst, r), bpool_run(p, src, r), run);
}

void bpool_store(block_pool *p, int il, const int32_t *blocks, int pos, const float *k, const float *v) {
    const attn_kv view = bpool_view(p, il, blocks);
    const int hd = p->head_dim;
    for (int h = 0; h < p->n_kv_heads; h++) {
        char *kd = (char *)attn_kv_at(&view, view.k, pos, h), *vd = (char *)attn_kv_at(&view, view.v, pos, h);
        if (p->type == WICK_F16) {
            f32_to_f16_row(k + (size_t)h * hd, (uint16_t *)kd, hd);
            f32_to_f16_row(v + (size_t)h * hd, (uint16_t *)vd, hd);
        } else {
            memcpy(kd, k + (size_t)h * hd, (size_t)hd * sizeof(float));
            memcpy(vd, v + (size_t)h * hd, (size_t)hd * sizeof(float));
        }
    }
}
