/* r16_avx2.h — helpers shared by the AVX2 kernels of the interleaved layouts
 * (matmul_r16_avx2.c, matmul_quant_r16_avx2.c, matmul_quant_r16_k_avx2.c):
 * the broadcast of 4 activation bytes, the barrier that keeps an integer sum
 * chain in order, the lane mask of an 8-row half ("octet"), the load and
 * store of an octet's sums under it, and the row walk of the 16-row group
 * layouts (Q5_0, Q4_K, Q6_K) over their octet kernels. Internal to src/kernels; include only
 * from files compiled for x86-64. */
#ifndef WICK_KERNELS_R16_AVX2_H
#define WICK_KERNELS_R16_AVX2_H

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/tensor.h"

#define R16_AVX2 __attribute__((target("avx2,fma,f16c"))) static inline __attribute__((always_inline))

/* 4 activation bytes at p in every 32-bit lane. */
R16_AVX2 __m256i r16_avx2_bx4(const int8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

/* Column group g (bytes 4g..4g+3) of activation block xb in every lane. */
R16_AVX2 __m256i r16_avx2_bx(const block_q8_0 *xb, int g) { return r16_avx2_bx4(xb->qs + 4 * g); }

/* An empty asm that makes *v opaque: keeps a sum chain in the order written,
 * where GCC would otherwise reassociate integer adds into a tree whose
 * partial products spill to the stack. */
R16_AVX2 void r16_avx2_keep(__m256i *v) { __asm__("" : "+x"(*v)); }

/* Lanes of the octet at row rt that lie in [r0, r1); *full if all do. */
R16_AVX2 __m256i r16_avx2_octet_lanes(int rt, int r0, int r1, bool *full) {
    *full = rt >= r0 && rt + 8 <= r1;
    const __m256i idx = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(rt));
    return _mm256_and_si256(_mm256_cmpgt_epi32(idx, _mm256_set1_epi32(r0 - 1)),
                            _mm256_cmpgt_epi32(_mm256_set1_epi32(r1), idx));
}

/* An octet's float sums: 0 if first, else continued from y (the rows in
 * `lanes` only, unless full). */
R16_AVX2 __m256 r16_avx2_acc_load(const float *y, bool first, bool full, __m256i lanes) {
    return first ? _mm256_setzero_ps() : full ? _mm256_loadu_ps(y) : _mm256_maskload_ps(y, lanes);
}

/* An octet's float sums back to y (the rows in `lanes` only, unless full). */
R16_AVX2 void r16_avx2_acc_store(float *y, __m256 v, bool full, __m256i lanes) {
    if (full) _mm256_storeu_ps(y, v);
    else _mm256_maskstore_ps(y, lanes, v);
}

/* ---- the row walk of the 16-row group layouts (Q5_0, Q4_K, Q6_K) ---- */

#define R16_AVX2_CT 4 /* tokens per pass */

/* A pass's tokens for an octet kernel: token c's activation blocks
 * (block_q8_0 or block_q8_K), Σq and scale per block (Q5_0's; NULL for the K
 * types) and output for the octet's row 0. */
typedef struct r16_avx2_tokens {
    const void *b[R16_AVX2_CT];
    const int32_t *s[R16_AVX2_CT];
    const float *d[R16_AVX2_CT];
    float *y[R16_AVX2_CT];
} r16_avx2_tokens;

/* An octet kernel: octets o0..o0+Q-1 of group gp × C tokens over blocks
 * [b0, b1) of nb a row; sums start at 0 if first, else continue from y
 * (`lanes` only, unless full). The walk calls it with constant Q (1, 2) and
 * C (1..4), and inlines it: pass a function known where the walk is
 * inlined. */
typedef void (*r16_avx2_octets_fn)(int Q, int C, const char *gp, int nb, int o0, int b0, int b1, bool first,
                                   const r16_avx2_tokens *x, bool full, __m256i lanes);

/* Rows [r0, r1) of y (ldy floats a token) for n tokens of a 16-row group
 * layout (gb bytes a group, nb blocks a row; token t's blocks at xb + t·nb
 * blocks of xbb bytes, its Σq and scales at xs, xd + t·nb). One token: each
 * whole group in one pass, both octets per block (the groups one sequential
 * stream; a cut group octet by octet). More tokens: row blocks of rows_per
 * rows × chunks of `chunk` blocks × passes of up to 4 tokens × octets. */
R16_AVX2 void r16_avx2_walk16(r16_avx2_octets_fn run, const void *w, size_t gb, int nb, const void *xb, size_t xbb,
                              const int32_t *xs, const float *xd, int n, float *y, int ldy, int r0, int r1,
                              int chunk, int rows_per) {
    const char *wc = w;
    r16_avx2_tokens x;
    if (n == 1) {
        x.b[0] = xb, x.s[0] = xs, x.d[0] = xd;
        for (int rt = r0 & ~7; rt < r1;) {
            const char *gp = wc + (size_t)(rt / 16) * gb;
            bool full;
            const __m256i lanes = r16_avx2_octet_lanes(rt, r0, r1, &full);
            x.y[0] = y + rt;
            if (rt % 16 == 0 && rt + 16 <= r1 && full) {
                run(2, 1, gp, nb, 0, 0, nb, true, &x, true, lanes);
                rt += 16;
            } else {
                run(1, 1, gp, nb, rt / 8 % 2, 0, nb, true, &x, full, lanes);
                rt += 8;
            }
        }
        return;
    }
    for (int rb = r0 & ~15; rb < r1; rb += rows_per) {
        const int lo = rb > (r0 & ~7) ? rb : r0 & ~7, hi = rb + rows_per < r1 ? rb + rows_per : r1;
        for (int b0 = 0; b0 < nb; b0 += chunk) {
            const int b1 = nb - b0 < chunk ? nb : b0 + chunk;
            for (int i = 0; i < n; i += R16_AVX2_CT) {
                const int C = n - i < R16_AVX2_CT ? n - i : R16_AVX2_CT;
                for (int c = 0; c < C; c++) {
                    const size_t k = (size_t)(i + c) * nb;
                    x.b[c] = (const char *)xb + k * xbb;
                    x.s[c] = xs ? xs + k : NULL, x.d[c] = xd ? xd + k : NULL;
                }
                for (int rt = lo; rt < hi; rt += 8) {
                    bool full;
                    const __m256i lanes = r16_avx2_octet_lanes(rt, r0, r1, &full);
                    const char *gp = wc + (size_t)(rt / 16) * gb;
                    const int o = rt / 8 % 2;
                    for (int c = 0; c < C; c++) x.y[c] = y + (size_t)(i + c) * ldy + rt;
                    switch (C) {
                    case 4: run(1, 4, gp, nb, o, b0, b1, b0 == 0, &x, full, lanes); break;
                    case 3: run(1, 3, gp, nb, o, b0, b1, b0 == 0, &x, full, lanes); break;
                    case 2: run(1, 2, gp, nb, o, b0, b1, b0 == 0, &x, full, lanes); break;
                    default: run(1, 1, gp, nb, o, b0, b1, b0 == 0, &x, full, lanes); break;
                    }
                }
            }
        }
    }
}
_Static_assert(R16_AVX2_CT == 4, "r16_avx2_walk16 instantiates C = 1..4");

#endif
