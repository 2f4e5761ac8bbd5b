/* matmul_impl.h — internal interface between the matmul dispatcher
 * (matmul.c) and its per-ISA kernels (matmul_scalar.c, matmul_avx2.c,
 * matmul_avx512.c). Not for use outside src/kernels. */
#ifndef WICK_KERNELS_MATMUL_IMPL_H
#define WICK_KERNELS_MATMUL_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"

/* Geometry of the quantized activations (see matmul_quantize_x). */
static inline size_t mm_xq_blocks_bytes(int cols, int n) {
    size_t b = (size_t)n * (size_t)(cols / WICK_QK) * sizeof(block_q8_0);
    return (b + 63) & ~(size_t)63;
}

/* Same contract as matmul_rows; wtype is one of the five supported types. */
void mm_rows_scalar(int wtype, const void *w, int cols, const float *x, const void *xq, int n,
                    float *y, int ldy, int r0, int r1);
#if defined(__x86_64__) || defined(__i386__)
void mm_rows_avx2(int wtype, const void *w, int cols, const float *x, const void *xq, int n,
                  float *y, int ldy, int r0, int r1);
void mm_rows_avx512(int wtype, const void *w, int cols, const float *x, const void *xq, int n,
                    float *y, int ldy, int r0, int r1);
#endif

#endif
