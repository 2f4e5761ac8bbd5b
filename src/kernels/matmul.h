/* matmul.h — y = x · Wᵀ for every weight type (F32, F16, BF16, Q8_0, Q4_0, Q6_K).
 *
 * W is a 2-D tensor with ne = {cols, rows}. x holds n rows of `cols` floats;
 * y row i (stride ldy floats) gets `rows` outputs. n == 1 is decode
 * (matrix-vector, memory-bound); n > 1 is prefill (matrix-matrix). For Q8_0
 * and Q4_0 the activations are first quantized to Q8_0 blocks in `scratch`
 * and dot products run in integers (as llama.cpp does); F16/BF16 convert to
 * f32 and use FMA; Q6_K quantizes the activations to Q8_K-style 256-element
 * blocks instead (see kernels/matmul_q8k.h). Work is split across the pool's threads by output rows. */
#ifndef WICK_KERNELS_MATMUL_H
#define WICK_KERNELS_MATMUL_H

#include <stddef.h>

#include "core/tensor.h"
#include "kernels/cpu.h"
#include "core/threadpool.h"

/* Bytes of scratch matmul() needs for n activation rows of `cols`. */
size_t matmul_scratch_bytes(int wtype, int cols, int n);

void matmul(const kernel_tuning *kt, wick_pool *pool, const wick_tensor *W, const float *x, int n, float *y, int ldy,
            void *scratch);

/* y[i] = x · W[i]ᵀ for up to 4 weights with the same column count (Q/K/V,
 * gate/up): x is quantized once and all rows are split over the pool in one
 * hand-off. Results are bit-identical to separate matmul() calls. */
void matmul_multi(const kernel_tuning *kt, wick_pool *pool, const wick_tensor *const *W, int nw, const float *x, int n,
                  float *const *y, const int *ldy, void *scratch);

/* Quantized activations for Q8_0/Q4_0 weights, as matmul() prepares them in
 * scratch (matmul_scratch_bytes of them): the n rows of x quantized to Q8_0
 * (row i's blocks at xq + i*(cols/32)*34 bytes, bit-exact with quantize_row),
 * then per-block data the SIMD kernels use (sum of the 32 quants, scale as
 * f32). Uses the pool's threads when n*cols is large (pool may be NULL). */
void matmul_quantize_x(const kernel_tuning *kt, wick_pool *pool, const float *x, int n, int cols, void *xq);
/* Recompute the per-block data from the Q8_0 blocks already in xq (for
 * callers that fill the blocks themselves, e.g. tests; quants must lie in
 * [-127, 127], as quantize_row's do). */
void matmul_xq_finish(void *xq, int n, int cols);

/* How weights of a type take their activations (mm_act, matmul_quant.h): 0
 * as floats (xq NULL), 1 as Q8_0 blocks (matmul_quantize_x), 2 as Q8_K blocks
 * (the K types), 3 rounded to BF16 (interleaved BF16). Weights of the same
 * kind and column count can share one preparation. */
int matmul_x_kind(int wtype);
/* Prepare n rows of x for weights of wtype into scratch (matmul_scratch_bytes
 * of them) as matmul() does; returns the xq to pass to matmul_rows (NULL for
 * float weights). */
const void *matmul_prepare_x(const kernel_tuning *kt, wick_pool *pool, int wtype, const float *x, int n, int cols, void *scratch);

/* One row-range product, the argument every row kernel takes (matmul_impl.h):
 * y[i*ldy + r] = x_i · W_r for tokens i < n and rows r in [r0, r1). w is the
 * weight data of type wtype (file layout or interleaved), `cols` columns; xq
 * is x prepared by matmul_prepare_x (NULL for float weights, which read x).
 * kt is the tuning the SIMD kernels read (the scalar twins ignore it). */
typedef struct mm_call {
    const kernel_tuning *kt;
    int wtype;
    const void *w;
    int cols;
    const float *x;
    const void *xq;
    int n;
    float *y;
    int ldy;
    int r0, r1;
} mm_call;

/* Row-range entry points used by matmul() and by tests comparing ISAs: the
 * kernel of c->kt's ISA for c->wtype, and its scalar twin (bit-identical). */
void matmul_rows(const mm_call *c);
void matmul_rows_scalar(const mm_call *c);

/* Interleaved layouts of Q8_0/Q4_0 matrices for the AVX-512 VNNI kernels
 * (rows a multiple of 16; same byte size as the file layout; never written
 * to files). A wick_tensor of these types works with matmul(),
 * matmul_multi() and matmul_weight_row() under every ISA. */
#define WICK_Q8_0_R16 (WICK_DTYPE_COUNT + 1)
#define WICK_Q4_0_R16 (WICK_DTYPE_COUNT + 2)

/* The interleaved type W would be repacked to with the active ISA, or -1
 * (not AVX-512, not Q8_0/Q4_0, rows not a multiple of 16). */
int matmul_repack_type(const kernel_tuning *kt, const wick_tensor *W);
/* The rows one packing unit of interleaved type `to` spans (16, or 64 for
 * F16/BF16): a matrix whose parts must stay apart (the experts of a stack)
 * can be repacked whole only if each part is a multiple of it. */
int matmul_repack_unit_rows(int to);
/* Repack W's data into dst (W->nbytes bytes; dst may be W->data itself)
 * using the pool's threads, whatever the ISA (the other ISAs run the
 * interleaved types with the scalar kernel); returns the new type, or -1
 * (not Q8_0/Q4_0 with rows a multiple of 16, out of memory). */
int matmul_repack(const kernel_tuning *kt, wick_pool *pool, const wick_tensor *W, void *dst);
/* Row r of W as cols floats (any supported or interleaved type). */
void matmul_weight_row(const wick_tensor *W, int64_t r, float *dst);

/* ---- many products in one hand-off (matmul_grouped.c) ----
 * One task: y = x · Wᵀ for n rows of x (W->ne[0] columns), y row i at
 * y + i*ldy. Tasks may differ in weight, type, x, n and output; tasks with
 * the same x, n and column count share one preparation of x. */
typedef struct mm_task {
    const wick_tensor *W;
    const float *x;
    int n; /* 0 = nothing to do */
    float *y;
    int ldy;
    /* set by matmul_grouped: */
    const void *xq;
    int64_t unit0;
} mm_task;

/* Run every task, splitting all their rows over the pool in one hand-off;
 * each output row is bit-identical to what matmul() gives for it. scratch
 * holds the prepared activations; returns -1 (nothing done) if
 * scratch_bytes is too small. */
int matmul_grouped(const kernel_tuning *kt, wick_pool *pool, mm_task *tasks, int n_tasks, void *scratch, size_t scratch_bytes);
/* Scratch enough for tasks of weight type wtype and `cols` columns whose
 * distinct activation blocks (at most n_blocks) hold total_rows rows. */
size_t matmul_grouped_scratch_bound(int wtype, int cols, int total_rows, int n_blocks);

#endif
