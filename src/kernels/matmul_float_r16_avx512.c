/* matmul_float_r16_avx512.c — owns the AVX-512 kernels of the F16/BF16
 * interleaved layouts (matmul_float_r16.h; twin mm_float_r16_rows_scalar).
 *
 * Lane i of every vector is row i of a 16-row group, so a token's dot product
 * with 16 rows is one accumulator updated column by column in order (THE
 * DEFINITION's single chain): the halves layouts widen a column's 16
 * elements (F16: VCVTPH2PS; BF16_R16H: zero-extended to dwords, shifted into
 * the high half) and FMA them with the token's activation broadcast;
 * BF16_R16 takes a column pair per VDPBF16PS with the token's BF16 pair
 * broadcast.
 *
 * Prefill: row blocks of RBG groups, column chunks of KC (their weights stay
 * in L2), tiles of two groups × up to FT tokens (24 accumulators): per column
 * (pair), two weight vectors and FT broadcasts from a token-interleaved copy
 * of the tile's activations (in L1) feed 2·FT FMAs. Decode (n <= 16) streams
 * a 64-row block at a time, one sequential stream feeding four accumulator
 * chains (they hide the FMA latency; matmul() hands decode rows out in such
 * blocks), up to 4 tokens a pass, with the prefetches of kernel_prefetch_n(). */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <string.h>

#include "kernels/cpu.h"
#include "kernels/matmul_float_r16.h"
#include "kernels/matmul_impl.h"

#define TF __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

#define FT 12   /* tokens per prefill tile */
#define KC 256  /* columns per prefill chunk */
#define RBG 32  /* groups per prefill row block (512 rows) */
#define DT 4    /* tokens per decode pass */

#define PAIR 256 /* bytes from one column pair's vector of a group to the next (four groups interleaved) */

/* Group q's pointer: its vector of column pair 0 (pair j's at + j·PAIR). */
TF INLINE const char *gptr(const char *w, int cols, int q) {
    return w + (size_t)(q / 4) * (size_t)cols * 2 * MM_FLOAT_R16_BLOCK_ROWS + mm_float_r16_vec_at(q % 4, 0);
}

/* Half h of a halves-layout pair vector p (column 2j + h of the group's 16
 * rows) widened exactly to float: F16 by VCVTPH2PS, BF16 by putting each
 * element in the high half of a zeroed dword. */
TF INLINE __m512 half_col(const int lay, const char *p, int h) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)(p + 32 * h));
    if (lay == WICK_F16_R16) return _mm512_cvtph_ps(v);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));
}

TF INLINE __m512 dpbf(__m512 acc, __m512i w, uint32_t xpair) {
    return _mm512_dpbf16_ps(acc, (__m512bh)w, (__m512bh)_mm512_set1_epi32((int)xpair));
}

/* ---- prefill ---- */

typedef union xtile {
    float f[KC][FT];         /* halves layouts: x[t][k0 + k] at f[k][t] */
    uint32_t b[KC / 2][FT];  /* BF16_R16: the BF16 pair (2j, 2j+1) of token t at b[j][t] */
} xtile;

TF INLINE void pack_x(const int lay, xtile *xt, const float *x, const uint16_t *xb, int cols, int t0, int C, int k0,
                      int kc) {
    for (int c = 0; c < C; c++) {
        if (lay != WICK_BF16_R16) {
            const float *s = x + (size_t)(t0 + c) * cols + k0;
            for (int k = 0; k < kc; k++) xt->f[k][c] = s[k];
        } else {
            const uint16_t *s = xb + (size_t)(t0 + c) * cols + k0;
            for (int j = 0; j < kc / 2; j++) memcpy(&xt->b[j][c], s + 2 * j, 4);
        }
    }
}

/* NG groups (their gptr in g) × C tokens over columns [k0, k0+kc). */
TF INLINE void tile(const int lay, const int NG, const int C, const char *const g[2], const xtile *xt, int k0,
                    int kc, float *y0, int ldy, bool first, __mmask16 m) {
    __m512 acc[2][FT];
#pragma GCC unroll 2
    for (int q = 0; q < NG; q++)
#pragma GCC unroll 12
        for (int c = 0; c < C; c++)
            acc[q][c] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m, y0 + (size_t)c * ldy + 16 * q);
    if (lay != WICK_BF16_R16) {
        for (int j = 0; j < kc / 2; j++) { /* column pairs: both halves of one 64-byte vector */
            const size_t at = (size_t)(k0 / 2 + j) * PAIR;
#pragma GCC unroll 2
            for (int h = 0; h < 2; h++) {
                __m512 w[2];
#pragma GCC unroll 2
                for (int q = 0; q < NG; q++) w[q] = half_col(lay, g[q] + at, h);
#pragma GCC unroll 12
                for (int c = 0; c < C; c++) {
                    const __m512 xv = _mm512_set1_ps(xt->f[2 * j + h][c]);
#pragma GCC unroll 2
                    for (int q = 0; q < NG; q++) acc[q][c] = _mm512_fmadd_ps(w[q], xv, acc[q][c]);
                }
            }
        }
    } else {
        for (int j = 0; j < kc / 2; j++) {
            __m512i w[2];
#pragma GCC unroll 2
            for (int q = 0; q < NG; q++) w[q] = _mm512_loadu_si512((const void *)(g[q] + (size_t)(k0 / 2 + j) * PAIR));
#pragma GCC unroll 12
            for (int c = 0; c < C; c++)
#pragma GCC unroll 2
                for (int q = 0; q < NG; q++) acc[q][c] = dpbf(acc[q][c], w[q], xt->b[j][c]);
        }
    }
#pragma GCC unroll 2
    for (int q = 0; q < NG; q++)
#pragma GCC unroll 12
        for (int c = 0; c < C; c++) _mm512_mask_storeu_ps(y0 + (size_t)c * ldy + 16 * q, m, acc[q][c]);
}

TF INLINE void tile_c(const int lay, const int NG, int C, const char *const g[2], const xtile *xt, int k0, int kc,
                      float *y0, int ldy, bool first, __mmask16 m) {
    switch (C) {
#define CASE(N) \
    case N: tile(lay, NG, N, g, xt, k0, kc, y0, ldy, first, m); break;
        CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8) CASE(9) CASE(10) CASE(11)
#undef CASE
    default: tile(lay, NG, FT, g, xt, k0, kc, y0, ldy, first, m); break;
    }
}
_Static_assert(FT == 12, "tile_c instantiates C = 1..12");

static _Thread_local xtile xbuf __attribute__((aligned(64)));

TF INLINE void prefill(const int lay, const char *w, int cols, const float *x, const uint16_t *xb, int n, float *y,
                       int ldy, int r0, int r1) {
    const int g_first = r0 / 16, g_end = (r1 + 15) / 16;
    for (int g0 = g_first; g0 < g_end; g0 += RBG) {
        const int g1 = g_end - g0 < RBG ? g_end : g0 + RBG;
        for (int k0 = 0; k0 < cols; k0 += KC) {
            const int kc = cols - k0 < KC ? cols - k0 : KC;
            for (int t0 = 0; t0 < n; t0 += FT) {
                const int C = n - t0 < FT ? n - t0 : FT;
                pack_x(lay, &xbuf, x, xb, cols, t0, C, k0, kc);
                for (int q = g0; q < g1;) {
                    const int rt = 16 * q;
                    const int lo = r0 > rt ? r0 - rt : 0, hi = r1 - rt < 16 ? r1 - rt : 16;
                    const __mmask16 m = (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));
                    float *y0 = y + (size_t)t0 * ldy + rt;
                    const char *const g[2] = {gptr(w, cols, q), gptr(w, cols, q + 1)};
                    if (m == 0xffff && q + 1 < g1 && r1 - rt - 16 >= 16) {
                        tile_c(lay, 2, C, g, &xbuf, k0, kc, y0, ldy, k0 == 0, m);
                        q += 2;
                    } else {
                        tile_c(lay, 1, C, g, &xbuf, k0, kc, y0, ldy, k0 == 0, m);
                        q += 1;
                    }
                }
            }
        }
    }
}

/* ---- decode ---- */

#define DG 4 /* groups per decode pass: a 64-row block's four, one stream with four FMA chains in
                flight (a token's chain per group is serial) */

TF INLINE void dec(const int lay, const int NG, const int C, const int pf, const size_t ntab, const char *const g[DG], int cols,
                   const float *const xf[DT], const uint16_t *const xh[DT], float *const yp[DT],
                   const __mmask16 m[DG]) {
    const size_t nta = pf == PREFETCH_NTA ? ntab : 0;
    __m512 acc[DG][DT];
#pragma GCC unroll 4
    for (int q = 0; q < NG; q++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) acc[q][c] = _mm512_setzero_ps();
    for (int j = 0; j < cols / 2; j++) {
#pragma GCC unroll 4
        for (int q = 0; q < NG; q++) cpu_prefetch_ahead(pf, g[q] + (size_t)j * PAIR, 64, nta);
        if (lay != WICK_BF16_R16) {
#pragma GCC unroll 2
            for (int h = 0; h < 2; h++) {
                __m512 w[DG];
#pragma GCC unroll 4
                for (int q = 0; q < NG; q++) w[q] = half_col(lay, g[q] + (size_t)j * PAIR, h);
#pragma GCC unroll 4
                for (int c = 0; c < C; c++) {
                    const __m512 xv = _mm512_set1_ps(xf[c][2 * j + h]);
#pragma GCC unroll 4
                    for (int q = 0; q < NG; q++) acc[q][c] = _mm512_fmadd_ps(w[q], xv, acc[q][c]);
                }
            }
        } else {
            __m512i w[DG];
#pragma GCC unroll 4
            for (int q = 0; q < NG; q++) w[q] = _mm512_loadu_si512((const void *)(g[q] + (size_t)j * PAIR));
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) {
                uint32_t xp;
                memcpy(&xp, xh[c] + 2 * j, 4);
#pragma GCC unroll 4
                for (int q = 0; q < NG; q++) acc[q][c] = dpbf(acc[q][c], w[q], xp);
            }
        }
    }
#pragma GCC unroll 4
    for (int c = 0; c < C; c++)
#pragma GCC unroll 4
        for (int q = 0; q < NG; q++) _mm512_mask_storeu_ps(yp[c] + 16 * q, m[q], acc[q][c]);
}

TF INLINE void dec_c(const int lay, const int NG, int C, const int pf, const size_t ntab, const char *const g[DG], int cols,
                     const float *const xf[DT], const uint16_t *const xh[DT], float *const yp[DT],
                     const __mmask16 m[DG]) {
    switch (C) {
    case 1: dec(lay, NG, 1, pf, ntab, g, cols, xf, xh, yp, m); break;
    case 2: dec(lay, NG, 2, pf, ntab, g, cols, xf, xh, yp, m); break;
    case 3: dec(lay, NG, 3, pf, ntab, g, cols, xf, xh, yp, m); break;
    default: dec(lay, NG, 4, pf, ntab, g, cols, xf, xh, yp, m); break;
    }
}
_Static_assert(DT == 4, "dec_c instantiates C = 1..4");

TF INLINE void decode_pf(const int lay, const int pf, const size_t ntab, const char *w, int cols, const float *x, const uint16_t *xb,
                         int n, float *y, int ldy, int r0, int r1) {
    for (int rt = r0 & ~15; rt < r1;) {
        /* the range's groups up to the end of their 64-row block (one stream),
         * each with the mask of its rows in [r0, r1) */
        __mmask16 m[DG] = {0};
        const char *g[DG];
        int NG = 0;
        for (; NG < DG - (rt / 16) % 4 && rt + 16 * NG < r1; NG++) {
            const int g0 = rt + 16 * NG, lo = r0 > g0 ? r0 - g0 : 0, hi = r1 - g0 < 16 ? r1 - g0 : 16;
            m[NG] = (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));
            g[NG] = gptr(w, cols, g0 / 16);
        }
        for (int i0 = 0; i0 < n; i0 += DT) {
            const int C = n - i0 < DT ? n - i0 : DT;
            const float *xf[DT];
            const uint16_t *xh[DT];
            float *yp[DT];
            for (int c = 0; c < DT; c++) {
                const int i = i0 + (c < C ? c : 0);
                xf[c] = x + (size_t)i * cols;
                xh[c] = xb ? xb + (size_t)i * cols : NULL;
                yp[c] = y + (size_t)i * ldy + rt;
            }
            switch (NG) {
            case 4: dec_c(lay, 4, C, pf, ntab, g, cols, xf, xh, yp, m); break;
            case 3: dec_c(lay, 3, C, pf, ntab, g, cols, xf, xh, yp, m); break;
            case 2: dec_c(lay, 2, C, pf, ntab, g, cols, xf, xh, yp, m); break;
            default: dec_c(lay, 1, C, pf, ntab, g, cols, xf, xh, yp, m); break;
            }
        }
        rt += 16 * NG;
    }
}

TF INLINE void rows_of(const kernel_tuning *kt, const int lay, const void *w, int cols, const float *x, const void *xq, int n, float *y,
                       int ldy, int r0, int r1) {
    const uint16_t *xb = lay == WICK_BF16_R16 ? xq : NULL;
    if (n > MM_STREAM_MAX_N) {
        prefill(lay, w, cols, x, xb, n, y, ldy, r0, r1);
        return;
    }
    const size_t ntab = (size_t)kt->nta_bytes;
    switch (kernel_prefetch_n(kt, n)) {
    case PREFETCH_NTA: decode_pf(lay, PREFETCH_NTA, ntab, w, cols, x, xb, n, y, ldy, r0, r1); break;
    case PREFETCH_L1L2: decode_pf(lay, PREFETCH_L1L2, ntab, w, cols, x, xb, n, y, ldy, r0, r1); break;
    case PREFETCH_L2: decode_pf(lay, PREFETCH_L2, ntab, w, cols, x, xb, n, y, ldy, r0, r1); break;
    default: decode_pf(lay, PREFETCH_OFF, ntab, w, cols, x, xb, n, y, ldy, r0, r1); break;
    }
}

TF void mm_float_r16_rows_avx512(const mm_call *c) {
    if (c->r1 <= c->r0 || c->n <= 0) return;
    if (c->wtype == WICK_F16_R16) rows_of(c->kt, WICK_F16_R16, c->w, c->cols, c->x, c->xq, c->n, c->y, c->ldy, c->r0, c->r1);
    else if (c->wtype == WICK_BF16_R16H) rows_of(c->kt, WICK_BF16_R16H, c->w, c->cols, c->x, c->xq, c->n, c->y, c->ldy, c->r0, c->r1);
    else rows_of(c->kt, WICK_BF16_R16, c->w, c->cols, c->x, c->xq, c->n, c->y, c->ldy, c->r0, c->r1);
}

#endif
