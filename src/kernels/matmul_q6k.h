/* matmul_q6k.h — internal interface of the Q6_K weight matmul (matmul_q6k*.c),
 * used by the dispatcher in matmul.c and by tests. Not for use outside
 * src/kernels and tests.
 *
 * Activations are quantized per row to Q8_K-style super-blocks of 256
 * (block_q8_K in tensor.h: f32 scale d, int8 qs[256] with |q| <= 127, and
 * the 16 sums of each 16-element group). Row i of x has its cols/256 blocks at
 * (block_q8_K *)xq + i*(cols/256). A Q6_K weight super-block times an
 * activation super-block is the exact integer
 *     isum = Σ_g scales[g] · Σ_{e in group g} (q_e - 32) · x_e
 *          = Σ_g scales[g] · (Σ q_e·x_e - 32·bsums[g]),
 * scaled by fp16_to_f32(d_w) · d_x and accumulated in float. */
#ifndef WICK_KERNELS_MATMUL_Q6K_H
#define WICK_KERNELS_MATMUL_Q6K_H

#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "core/threadpool.h"

/* Scratch bytes for n activation rows of cols (a multiple of 256). */
size_t mm_q6k_xq_bytes(int cols, int n);
/* Quantize the n rows of x into xq (pool may be NULL). */
void mm_q6k_quantize_x(wick_pool *pool, const float *x, int n, int cols, void *xq);
/* One row: x -> nb Q8_K blocks (quantize_row_q8_k_isa of the active ISA;
 * the same bytes on every ISA). */
void mm_q6k_quantize_row(const float *x, block_q8_K *y, int nb);

/* y[i*ldy + r] = W[r] · x[i] for r in [r0, r1), i < n; w holds Q6_K rows of
 * cols, xq the prepared activations. mm_q6k_rows picks the kernel of the
 * active ISA; the others are that kernel per ISA (for tests). */
void mm_q6k_rows(const void *w, int cols, const void *xq, int n, float *y, int ldy, int r0, int r1);
void mm_q6k_rows_scalar(const void *w, int cols, const void *xq, int n, float *y, int ldy, int r0,
                        int r1);
#if defined(__x86_64__) || defined(__i386__)
void mm_q6k_rows_avx2(const void *w, int cols, const void *xq, int n, float *y, int ldy, int r0,
                      int r1);
void mm_q6k_rows_avx512(const void *w, int cols, const void *xq, int n, float *y, int ldy, int r0,
                        int r1);
#endif

#endif
