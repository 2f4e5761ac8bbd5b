/* kv_cache.c — the paged KV cache (see kv_cache.h). The block pool is one
 * anonymous map: pages are committed only when a block is first written
 * (low block ids are handed out first, so memory grows with the positions in
 * use), and marked for transparent huge pages (a sequence's blocks can lie
 * anywhere in the pool: with 4 KiB pages, a TLB miss per block and head). */
#include "kv/kv_cache.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/error.h"
#include "core/tensor.h"
#include "kernels/ops.h"
#include "kv/prefix_cache.h"

/* Zeroed, lazily committed, huge pages where the kernel has them; NULL on failure. */
static void *kv_map(size_t bytes) {
    if (bytes == 0) return NULL;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    madvise(p, bytes, MADV_HUGEPAGE);
    return p;
}

int kv_cache_init(kv_cache *kv, int n_layer, int n_kv_heads, int head_dim, int n_ctx, int n_seq, int type,
                  wick_error *err) {
    return kv_cache_init_pool(kv, n_layer, n_kv_heads, head_dim, n_ctx, n_seq, 0, type, err);
}

int kv_cache_init_pool(kv_cache *kv, int n_layer, int n_kv_heads, int head_dim, int n_ctx, int n_seq,
                       int n_blocks, int type, wick_error *err) {
    memset(kv, 0, sizeof *kv);
    if (type != WICK_F32 && type != WICK_F16)
        return wick_fail(err, "KV cache type %s is not supported (use F32 or F16)", dtype_name(type));
    const int row_elems = n_kv_heads * head_dim;
    kv->n_layer = n_layer;
    kv->n_kv_heads = n_kv_heads;
    kv->head_dim = head_dim;
    kv->row_elems = row_elems;
    kv->n_ctx = n_ctx;
    kv->n_seq = n_seq;
    kv->type = type;
    kv->elem_bytes = type == WICK_F16 ? 2 : 4;
    kv->max_blocks_seq = (n_ctx + KV_BLOCK_SIZE - 1) / KV_BLOCK_SIZE;
    if (n_blocks < 0) return wick_fail(err, "KV pool of %d blocks", n_blocks);
    kv->n_blocks = n_blocks ? n_blocks : kv->max_blocks_seq * n_seq;
    kv->part_bytes = (size_t)KV_BLOCK_SIZE * (size_t)row_elems * kv->elem_bytes;
    kv->map_bytes = (size_t)kv->n_blocks * (size_t)n_layer * 2 * kv->part_bytes;
    kv->base = kv_map(kv->map_bytes);
    kv->tables = malloc((size_t)n_seq * (size_t)kv->max_blocks_seq * sizeof *kv->tables);
    kv->n_seq_blocks = calloc((size_t)n_seq, sizeof *kv->n_seq_blocks);
    kv->len = calloc((size_t)n_seq, sizeof *kv->len);
    kv->tokens = malloc((size_t)n_seq * (size_t)n_ctx * sizeof *kv->tokens);
    kv->free_list = malloc((size_t)kv->n_blocks * sizeof *kv->free_list);
    kv->ref = calloc((size_t)kv->n_blocks, sizeof *kv->ref);
    if (!kv->base || !kv->tables || !kv->n_seq_blocks || !kv->len || !kv->tokens ||
        !kv->free_list || !kv->ref) {
        kv_cache_free(kv);
        return wick_fail(err, "out of memory allocating the KV cache (%zu MiB)",
                         kv->map_bytes >> 20);
    }
    /* Hand out low block ids first. */
    for (int i = 0; i < kv->n_blocks; i++) kv->free_list[i] = kv->n_blocks - 1 - i;
    kv->n_free = kv->n_blocks;
    return 0;
}

void kv_cache_free(kv_cache *kv) {
    prefix_cache_free(kv);
    if (kv->base) munmap(kv->base, kv->map_bytes);
    free(kv->ref);
    free(kv->tables);
    free(kv->n_seq_blocks);
    free(kv->len);
    free(kv->tokens);
    free(kv->free_list);
    memset(kv, 0, sizeof *kv);
}

int32_t kv_take_block(kv_cache *kv) {
    if (kv->n_free > 0) return kv->free_list[--kv->n_free];
    return kv->pc ? prefix_evict_one(kv) : -1;
}

static int32_t *seq_table(const kv_cache *kv, int s) { return kv->tables + (size_t)s * kv->max_blocks_seq; }

void kv_hold(kv_cache *kv, int s, int32_t b) {
    if (kv->ref[b]++ == 0 && kv->pc) prefix_on_hold(kv, b);
    seq_table(kv, s)[kv->n_seq_blocks[s]++] = b;
}

void kv_unhold(kv_cache *kv, int32_t b) {
    if (--kv->ref[b] > 0) return;
    if (kv->pc && prefix_on_idle(kv, b)) return;
    kv->free_list[kv->n_free++] = b;
}

int kv_reserve(kv_cache *kv, int s, int new_len, wick_error *err) {
    if (new_len > kv->n_ctx)
        return wick_fail(err, "sequence needs %d positions but the context holds %d", new_len,
                         kv->n_ctx);
    int need = (new_len + KV_BLOCK_SIZE - 1) / KV_BLOCK_SIZE;
    while (kv->n_seq_blocks[s] < need) {
        int32_t b = kv_take_block(kv);
        if (b < 0) return wick_fail(err, "KV cache is full (%d blocks)", kv->n_blocks);
        kv_hold(kv, s, b);
    }
    return 0;
}

int kv_blocks_used(const kv_cache *kv) {
    return kv->n_blocks - kv->n_free - (kv->pc ? prefix_cached_blocks(kv) : 0);
}

int kv_blocks_available(const kv_cache *kv) { return kv->n_free + (kv->pc ? prefix_cached_blocks(kv) : 0); }

void kv_truncate(kv_cache *kv, int s, int from) {
    if (from < 0) from = 0;
    if (from >= kv->len[s]) return;
    int keep = (from + KV_BLOCK_SIZE - 1) / KV_BLOCK_SIZE;
    int32_t *table = seq_table(kv, s);
    while (kv->n_seq_blocks[s] > keep) kv_unhold(kv, table[--kv->n_seq_blocks[s]]);
    const int i = from / KV_BLOCK_SIZE;
    if (from % KV_BLOCK_SIZE && kv->pc && !prefix_may_write(kv, s, i)) {
        /* others read block i: write into a private copy of it */
        const int32_t b = table[i], d = kv_take_block(kv);
        if (d >= 0) {
            kv_copy_block(kv, d, b, from % KV_BLOCK_SIZE);
            kv->ref[d] = 1;
            table[i] = d;
        } else {
            kv->n_seq_blocks[s] = i;
            from = i * KV_BLOCK_SIZE;
        }
        kv_unhold(kv, b);
    }
    kv->len[s] = from;
    if (kv->pc) prefix_on_truncate(kv, s, from / KV_BLOCK_SIZE);
}

char *kv_block_run(const kv_cache *kv, int32_t b, int r) {
    const size_t block_bytes = (size_t)kv->n_layer * 2 * kv->part_bytes;
    const size_t head_bytes = (size_t)KV_BLOCK_SIZE * (size_t)kv->head_dim * kv->elem_bytes;
    const int part = r / kv->n_kv_heads, h = r % kv->n_kv_heads;
    return (char *)kv->base + (size_t)b * block_bytes + (size_t)part * kv->part_bytes + (size_t)h * head_bytes;
}

void kv_copy_block(kv_cache *kv, int32_t dst, int32_t src, int n) {
    const size_t run = (size_t)n * (size_t)kv->head_dim * kv->elem_bytes;
    for (int r = 0; r < KV_BLOCK_RUNS(kv); r++) memcpy(kv_block_run(kv, dst, r), kv_block_run(kv, src, r), run);
}

attn_kv kv_view(const kv_cache *kv, int il, int s) {
    const char *k = (const char *)kv->base + (size_t)il * 2 * kv->part_bytes;
    attn_kv v = {
        .k = k,
        .v = k + kv->part_bytes,
        .type = kv->type,
        .blocks = kv->tables + (size_t)s * kv->max_blocks_seq,
        .block_size = KV_BLOCK_SIZE,
        .block_stride = (size_t)kv->n_layer * 2 * kv->part_bytes,
        .head_stride = (size_t)KV_BLOCK_SIZE * (size_t)kv->head_dim * kv->elem_bytes,
        .row_stride = (size_t)kv->head_dim * kv->elem_bytes,
    };
    return v;
}

void kv_store(kv_cache *kv, int il, int s, int p, const float *k, const float *v) {
    const attn_kv view = kv_view(kv, il, s);
    const int hd = kv->head_dim;
    for (int h = 0; h < kv->n_kv_heads; h++) {
        char *kd = (char *)attn_kv_at(&view, view.k, p, h), *vd = (char *)attn_kv_at(&view, view.v, p, h);
        if (kv->type == WICK_F16) {
            f32_to_f16_row(k + (size_t)h * hd, (uint16_t *)kd, hd);
            f32_to_f16_row(v + (size_t)h * hd, (uint16_t *)vd, hd);
        } else {
            memcpy(kd, k + (size_t)h * hd, (size_t)hd * sizeof(float));
            memcpy(vd, v + (size_t)h * hd, (size_t)hd * sizeof(float));
        }
    }
}
