/* attention.h — causal multi-head attention of query rows against a paged KV
 * cache, tiled with an online softmax (flash-attention style: no n×n score
 * matrix is ever materialized).
 *
 * The KV cache of one layer is a pool of blocks of `block_size` token rows;
 * a sequence's block table lists its blocks in position order, so the K row of
 * position p is at k + (blocks[p / bs] * bs + p % bs) * row_elems elements.
 * A row holds n_kv_heads × head_dim values. Query head h reads KV head
 * h / (n_heads / n_kv_heads) (grouped-query attention). */
#ifndef WICK_KERNELS_ATTENTION_H
#define WICK_KERNELS_ATTENTION_H

#include <stdint.h>

#include "core/threadpool.h"

typedef struct attn_kv {
    const void *k, *v;     /* this layer's block pool bases */
    int type;              /* WICK_F32 or WICK_F16 */
    const int32_t *blocks; /* the sequence's block table */
    int block_size;        /* token rows per block */
    int row_elems;         /* n_kv_heads * head_dim */
} attn_kv;

typedef struct attn_params {
    int n_heads, n_kv_heads, head_dim;
    float scale;  /* usually 1/sqrt(head_dim) */
    int window;   /* sliding window in tokens (keys p with pos-window < p <= pos); 0 = none */
} attn_params;

/* For each of n_q query rows (q + i*n_heads*head_dim) at position pos[i],
 * attend over key positions [max(0, pos[i]-window+1), pos[i]] and write
 * out + i*n_heads*head_dim. Split over (row, head) pairs across the pool. */
void attention(wick_pool *pool, const attn_params *p, const float *q, int n_q,
               const int32_t *pos, const attn_kv *kv, float *out);

/* Single-thread reference for tests: the plain two-pass softmax. */
void attention_reference(const attn_params *p, const float *q, int n_q, const int32_t *pos,
                         const attn_kv *kv, float *out);

#endif
