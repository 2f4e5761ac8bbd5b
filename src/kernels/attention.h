/* attention.h — causal multi-head attention of query rows against a paged KV
 * cache, tiled with an online softmax (flash-attention style: no n×n score
 * matrix is ever materialized).
 *
 * The KV cache of one layer is a pool of blocks of `block_size` positions;
 * a sequence's block table lists its blocks in position order. Where a
 * position's head_dim values for one KV head lie is given by three strides
 * (attn_kv_at), so the cache picks its layout: the engine's is head-major
 * within a block (a head's keys of one block are one contiguous run, which
 * decode streams), the tests also use position-major rows. Query head h
 * reads KV head h / (n_heads / n_kv_heads) (grouped-query attention). */
#ifndef WICK_KERNELS_ATTENTION_H
#define WICK_KERNELS_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "core/threadpool.h"
#include "kernels/cpu.h"

/* head_dim and a KV block's positions are at most this (per-tile scores
 * and accumulators live on the stack). */
#define ATTN_MAX 256

typedef struct attn_kv {
    const void *k, *v;     /* this layer's block pool bases */
    int type;              /* WICK_F32 or WICK_F16 */
    const int32_t *blocks; /* the sequence's block table */
    int block_size;        /* positions per block */
    size_t block_stride;   /* bytes from one block of the pool to the next */
    size_t head_stride;    /* bytes from KV head h to h + 1 at the same position */
    size_t row_stride;     /* bytes from position p to p + 1 of one head within a block */
} attn_kv;

/* The head_dim values of KV head kvh at position p, in base (kv->k or kv->v). */
static inline const char *attn_kv_at(const attn_kv *kv, const void *base, int32_t p, int kvh) {
    return (const char *)base + (size_t)kv->blocks[p / kv->block_size] * kv->block_stride +
           (size_t)kvh * kv->head_stride + (size_t)(p % kv->block_size) * kv->row_stride;
}

typedef struct attn_params {
    int n_heads, n_kv_heads, head_dim;
    float scale;  /* usually 1/sqrt(head_dim) */
    int window;   /* sliding window in tokens (keys p with pos-window < p <= pos); 0 = none */
    float softcap; /* > 0: scores become softcap·tanh(score/softcap) before the softmax (Gemma 2); 0 = none */
} attn_params;

/* For each of n_q query rows (q + i*n_heads*head_dim) at position pos[i],
 * attend over key positions [max(0, pos[i]-window+1), pos[i]] and write
 * out + i*n_heads*head_dim. Split over (row, head) pairs across the pool. */
void attention(const kernel_tuning *kt, wick_pool *pool, const attn_params *p, const float *q, int n_q,
               const int32_t *pos, const attn_kv *kv, float *out);

/* One call's arguments, for attention_multi. */
typedef struct attn_run {
    const float *q;
    int n_q;
    const int32_t *pos;
    const attn_kv *kv;
    float *out;
} attn_run;

#define ATTN_MULTI_MAX 64 /* runs per pool hand-off */

/* attention() for several sequences (each its own KV view) in one pool
 * hand-off: a decode step of many sequences pays one hand-off per layer
 * instead of one per sequence. Bit-identical to separate attention() calls
 * (a row's result does not depend on the split or on its neighbours). */
void attention_multi(const kernel_tuning *kt, wick_pool *pool, const attn_params *p, const attn_run *runs, int n_runs);

/* Single-thread reference for tests: the plain two-pass softmax. */
void attention_reference(const attn_params *p, const float *q, int n_q, const int32_t *pos,
                         const attn_kv *kv, float *out);

#endif
