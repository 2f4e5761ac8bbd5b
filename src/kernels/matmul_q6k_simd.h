/* matmul_q6k_simd.h — what the AVX2 and AVX-512 Q6_K kernels
 * (matmul_q6k_avx2.c, matmul_q6k_avx512.c) share: the weight prefetch and
 * the row × token-group driver around each file's one-row kernel. The
 * unpacking and the dot products stay in each file (they differ per ISA).
 * Internal to those two files; include after <immintrin.h>. */
#ifndef WICK_KERNELS_MATMUL_Q6K_SIMD_H
#define WICK_KERNELS_MATMUL_Q6K_SIMD_H

#include "kernels/matmul_q6k.h"

#ifndef Q6K_PF
#define Q6K_PF 1024
#endif

/* Decode streams the weights: fetch the 256 bytes Q6K_PF bytes past
 * super-block w (may run past the matrix; prefetches never fault). */
static inline __attribute__((always_inline)) void q6k_prefetch(const block_q6_K *w) {
    const char *pf = (const char *)w + Q6K_PF;
    _mm_prefetch(pf, _MM_HINT_T0);
    _mm_prefetch(pf + 64, _MM_HINT_T0);
    _mm_prefetch(pf + 128, _MM_HINT_T0);
    _mm_prefetch(pf + 192, _MM_HINT_T0);
}

/* Defines `ATTR void NAME(...)` with the contract of mm_q6k_rows
 * (matmul_q6k.h) from ROW(NT, wr, X, nb, y, ldy), the file's always-inline
 * kernel for one weight row against NT <= 4 token rows: tokens go in groups
 * of 4, then one call for the 1..3 left, each with a constant NT so that
 * every call is its own unrolled copy. */
#define Q6K_DEFINE_ROWS(ATTR, NAME, ROW)                                                      \
    ATTR void NAME(const void *w, int cols, const void *xq, int n, float *y, int ldy, int r0, \
                   int r1) {                                                                  \
        const int nb = cols / WICK_QK_K;                                                      \
        const block_q6_K *W = w;                                                              \
        const block_q8_K *X = xq;                                                             \
        for (int r = r0; r < r1; r++) {                                                       \
            const block_q6_K *wr = W + (size_t)r * nb;                                        \
            int i = 0;                                                                        \
            for (; i + 4 <= n; i += 4)                                                        \
                ROW(4, wr, X + (size_t)i * nb, nb, y + (size_t)i * ldy + r, ldy);             \
            switch (n - i) {                                                                  \
            case 3: ROW(3, wr, X + (size_t)i * nb, nb, y + (size_t)i * ldy + r, ldy); break;  \
            case 2: ROW(2, wr, X + (size_t)i * nb, nb, y + (size_t)i * ldy + r, ldy); break;  \
            case 1: ROW(1, wr, X + (size_t)i * nb, nb, y + (size_t)i * ldy + r, ldy); break;  \
            default: break;                                                                   \
            }                                                                                 \
        }                                                                                     \
    }

#endif
