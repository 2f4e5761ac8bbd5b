/* matmul_avx2.c — owns the AVX2+FMA+F16C matmul kernels (placeholder: scalar). */
#include "kernels/matmul_impl.h"

void mm_rows_avx2(int wtype, const void *w, int cols, const float *x, const void *xq, int n,
                  float *y, int ldy, int r0, int r1) {
    mm_rows_scalar(wtype, w, cols, x, xq, n, y, ldy, r0, r1);
}
