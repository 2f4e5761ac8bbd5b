/* matmul_repack_avx512.c — owns the AVX-512 VNNI matmul kernels for the
 * interleaved Q8_0/Q4_0 layouts (WICK_Q8_0_R16 / WICK_Q4_0_R16, layout in
 * matmul_impl.h; scalar twin in matmul_repack.c).
 *
 * A 16-row group is one sequential stream: per 32-column block, 8 (Q8_0) or
 * 4 (Q4_0, split into low/high nibbles) 64-byte vectors whose lane i belongs
 * to row i, then the group's fp16 scales. Per token and block, 8 VPDPBUSD
 * with broadcasts of the token's 4-byte activation groups leave Σ u·x in
 * lane i; Σ (u - off)·x = Σ u·x - off·Σx (off = 128 or 8) uses the block
 * sums prepared with the activations. Then one int->float conversion and one
 * FMA per block and 16 rows, in block order: the same integer sums and float
 * operations as the file-layout AVX-512 kernel (matmul_avx512.c), so results
 * are bit-identical to it. Decode (n <= 3) streams each group once with
 * software prefetches ahead (into L1 and, further, into L2); prefill applies
 * each loaded weight vector to up to 8 tokens, KC blocks at a time so the
 * group's chunk stays in L1. */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <string.h>

#include "kernels/matmul_impl.h"

#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

#define KC 32          /* blocks per prefill chunk: 16 rows × 32 blocks = 16 KiB (Q8_0) */
/* Decode prefetch distances: into L1 a little ahead, into L2 further ahead
 * (more lines in flight than L1's fill buffers allow; measured on the
 * 2-core AVX-512 machine: Q4_0 2 threads 21.8 -> 25.7 GB/s from DRAM). */
#define PF_BYTES 4096
#define PF2_BYTES 16384

/* The 8 column groups of one block as unsigned bytes, lane i = row i. */
T512 INLINE void r16_load(const int base, const char *p, __m512i G[8]) {
    if (base == WICK_Q8_0) {
#pragma GCC unroll 8
        for (int g = 0; g < 8; g++) G[g] = _mm512_loadu_si512((const void *)(p + 64 * g));
        return;
    }
    const __m512i m4 = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        const __m512i v = _mm512_loadu_si512((const void *)(p + 64 * j));
        G[j] = _mm512_and_si512(v, m4);
        G[j + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
    }
}

T512 INLINE __m512i xbcast(const block_q8_0 *xb, int g) {
    int32_t v;
    memcpy(&v, xb->qs + 4 * g, 4);
    return _mm512_set1_epi32(v);
}

/* Σ_g dpbusd over one block, starting from -off·Σx (two chains for ILP). */
T512 INLINE __m512i r16_dot(const __m512i G[8], const block_q8_0 *xb, int32_t xsum, int off) {
    __m512i a = _mm512_set1_epi32(-off * xsum), b = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int g = 0; g < 4; g++) {
        a = _mm512_dpbusd_epi32(a, G[g], xbcast(xb, g));
        b = _mm512_dpbusd_epi32(b, G[g + 4], xbcast(xb, g + 4));
    }
    return _mm512_add_epi32(a, b);
}

/* Decode: one group × C <= 3 tokens over all nb blocks. */
T512 INLINE void r16_decode(const int base, const int C, const char *gp, int nb,
                            const block_q8_0 *const xb[3], const int32_t *const xs[3],
                            const float *const xd[3], float *const yp[3], __mmask16 m) {
    const size_t wb = mm_r16_block_bytes(base);
    const int off = base == WICK_Q8_0 ? 128 : 8;
    const uint16_t *sc = (const uint16_t *)(gp + (size_t)nb * wb);
    __m512 acc[3];
#pragma GCC unroll 3
    for (int c = 0; c < C; c++) acc[c] = _mm512_setzero_ps();
    for (int b = 0; b < nb; b++) {
        const char *p = gp + (size_t)b * wb;
#pragma GCC unroll 8
        for (size_t o = 0; o < wb; o += 64) {
            _mm_prefetch(p + PF_BYTES + o, _MM_HINT_T0);
            _mm_prefetch(p + PF2_BYTES + o, _MM_HINT_T1);
        }
        __m512i G[8];
        r16_load(base, p, G);
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(sc + (size_t)b * 16)));
#pragma GCC unroll 3
        for (int c = 0; c < C; c++) {
            const __m512i is = r16_dot(G, xb[c] + b, xs[c][b], off);
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), _mm512_mul_ps(dw, _mm512_set1_ps(xd[c][b])), acc[c]);
        }
    }
#pragma GCC unroll 3
    for (int c = 0; c < C; c++) _mm512_mask_storeu_ps(yp[c], m, acc[c]);
}

/* Prefill: one group × C <= 8 tokens over blocks [b0, b0+nbk); xb/xs/xd
 * point at block b0 of each token; acc continues from y unless first. */
T512 INLINE void r16_tile(const int base, const int C, const char *gp, int nb, int b0, int nbk,
                          const block_q8_0 *const xb[8], const int32_t *const xs[8],
                          const float *const xd[8], float *const yp[8], bool first, __mmask16 m) {
    const size_t wb = mm_r16_block_bytes(base);
    const int off = base == WICK_Q8_0 ? 128 : 8;
    const uint16_t *sc = (const uint16_t *)(gp + (size_t)nb * wb) + (size_t)b0 * 16;
    const char *wp = gp + (size_t)b0 * wb;
    __m512 acc[8];
#pragma GCC unroll 8
    for (int c = 0; c < C; c++) acc[c] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m, yp[c]);
    for (int kb = 0; kb < nbk; kb++) {
        __m512i is[8];
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) is[c] = _mm512_set1_epi32(-off * xs[c][kb]);
        const char *p = wp + (size_t)kb * wb;
        if (base == WICK_Q8_0) {
#pragma GCC unroll 8
            for (int g = 0; g < 8; g++) {
                const __m512i wv = _mm512_loadu_si512((const void *)(p + 64 * g));
#pragma GCC unroll 8
                for (int c = 0; c < C; c++) is[c] = _mm512_dpbusd_epi32(is[c], wv, xbcast(xb[c] + kb, g));
            }
        } else {
            const __m512i m4 = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++) {
                const __m512i v = _mm512_loadu_si512((const void *)(p + 64 * j));
                const __m512i lo = _mm512_and_si512(v, m4), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
#pragma GCC unroll 8
                for (int c = 0; c < C; c++) is[c] = _mm512_dpbusd_epi32(is[c], lo, xbcast(xb[c] + kb, j));
#pragma GCC unroll 8
                for (int c = 0; c < C; c++) is[c] = _mm512_dpbusd_epi32(is[c], hi, xbcast(xb[c] + kb, j + 4));
            }
        }
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(sc + (size_t)kb * 16)));
#pragma GCC unroll 8
        for (int c = 0; c < C; c++)
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[c]), _mm512_mul_ps(dw, _mm512_set1_ps(xd[c][kb])), acc[c]);
    }
#pragma GCC unroll 8
    for (int c = 0; c < C; c++) _mm512_mask_storeu_ps(yp[c], m, acc[c]);
}

T512 INLINE void r16_rows(const int base, const void *w, int cols, const void *xq, int n, float *y,
                          int ldy, int r0, int r1) {
    const int nb = cols / WICK_QK;
    const size_t gb = 16 * dtype_row_bytes(base, cols);
    const block_q8_0 *xblocks = xq;
    const int32_t *xsums = (const int32_t *)((const char *)xq + mm_xq_sums_offset(cols, n));
    const float *xscales = (const float *)((const char *)xq + mm_xq_scales_offset(cols, n));
    for (int rt = r0 & ~15; rt < r1; rt += 16) {
        const int lo = r0 > rt ? r0 - rt : 0, hi = r1 - rt < 16 ? r1 - rt : 16;
        const __mmask16 m = (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));
        const char *gp = (const char *)w + (size_t)(rt / 16) * gb;
        if (n <= 3) {
            const block_q8_0 *xb[3];
            const int32_t *xs[3];
            const float *xd[3];
            float *yp[3];
            for (int c = 0; c < 3; c++) {
                const int i = c < n ? c : 0;
                xb[c] = xblocks + (size_t)i * nb, xs[c] = xsums + (size_t)i * nb, xd[c] = xscales + (size_t)i * nb;
                yp[c] = y + (size_t)i * ldy + rt;
            }
            if (n == 1) r16_decode(base, 1, gp, nb, xb, xs, xd, yp, m);
            else if (n == 2) r16_decode(base, 2, gp, nb, xb, xs, xd, yp, m);
            else r16_decode(base, 3, gp, nb, xb, xs, xd, yp, m);
            continue;
        }
        for (int b0 = 0; b0 < nb; b0 += KC) {
            const int nbk = nb - b0 < KC ? nb - b0 : KC;
            for (int i = 0; i < n; i += 8) {
                const int C = n - i < 8 ? n - i : 8;
                const block_q8_0 *xb[8];
                const int32_t *xs[8];
                const float *xd[8];
                float *yp[8];
                for (int c = 0; c < 8; c++) {
                    const int t = i + (c < C ? c : 0);
                    const size_t xi = (size_t)t * nb + b0;
                    xb[c] = xblocks + xi, xs[c] = xsums + xi, xd[c] = xscales + xi;
                    yp[c] = y + (size_t)t * ldy + rt;
                }
                const bool first = b0 == 0;
                switch (C) {
                case 8: r16_tile(base, 8, gp, nb, b0, nbk, xb, xs, xd, yp, first, m); break;
                case 7: r16_tile(base, 7, gp, nb, b0, nbk, xb, xs, xd, yp, first, m); break;
                case 6: r16_tile(base, 6, gp, nb, b0, nbk, xb, xs, xd, yp, first, m); break;
                case 5: r16_tile(base, 5, gp, nb, b0, nbk, xb, xs, xd, yp, first, m); break;
                case 4: r16_tile(base, 4, gp, nb, b0, nbk, xb, xs, xd, yp, first, m); break;
                case 3: r16_tile(base, 3, gp, nb, b0, nbk, xb, xs, xd, yp, first, m); break;
                case 2: r16_tile(base, 2, gp, nb, b0, nbk, xb, xs, xd, yp, first, m); break;
                default: r16_tile(base, 1, gp, nb, b0, nbk, xb, xs, xd, yp, first, m); break;
                }
            }
        }
    }
}

T512 void mm_rows_r16_avx512(int wtype, const void *w, int cols, const void *xq, int n, float *y,
                             int ldy, int r0, int r1) {
    if (mm_r16_base(wtype) == WICK_Q8_0) r16_rows(WICK_Q8_0, w, cols, xq, n, y, ldy, r0, r1);
    else r16_rows(WICK_Q4_0, w, cols, xq, n, y, ldy, r0, r1);
}

#endif
