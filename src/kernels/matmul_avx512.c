/* matmul_avx512.c — owns the AVX-512 (F/BW/VL/VNNI) matmul kernels (placeholder: scalar). */
#include "kernels/matmul_impl.h"

void mm_rows_avx512(int wtype, const void *w, int cols, const float *x, const void *xq, int n,
                    float *y, int ldy, int r0, int r1) {
    mm_rows_scalar(wtype, w, cols, x, xq, n, y, ldy, r0, r1);
}
