/* attention_impl.h — what the attention kernels share (attention.c, which
 * owns the work split, the AVX-512 batched kernel and the reference, and
 * attention_avx2.c): how a query's keys are cut into tiles, and the AVX2
 * kernel's entry. Internal to src/kernels. */
#ifndef WICK_KERNELS_ATTENTION_IMPL_H
#define WICK_KERNELS_ATTENTION_IMPL_H

#include <stdint.h>

#include "kernels/attention.h"

/* The first tile of keys from lo: lo rounded down to a multiple of 16
 * within its KV block (see attend_batch_t for why), and the end (exclusive)
 * of the tile starting at p0 for keys up to hi: its block's end or hi + 1. */
static inline int32_t attn_tile_first(int32_t lo, int bs) { return lo / bs * bs + ((lo % bs) & ~15); }
static inline int32_t attn_tile_end(int32_t p0, int32_t hi, int bs) {
    const int32_t blk_end = (p0 / bs + 1) * bs;
    return blk_end < hi + 1 ? blk_end : hi + 1;
}

/* The first key a query at pos attends to (its sliding window's, else 0). */
static inline int32_t attn_first_key(const attn_params *p, int32_t pos) {
    return p->window > 0 && pos - p->window + 1 > 0 ? pos - p->window + 1 : 0;
}

#if defined(__x86_64__) || defined(__i386__)
/* One (query row, head) on AVX2 (head_dim a multiple of 8): q over keys
 * [attn_first_key, pos] of KV head kvh into out (attention_avx2.c). */
void attend_one_avx2(const attn_params *p, const float *q, int32_t pos, const attn_kv *kv, int kvh, float *out);
#endif

#endif
