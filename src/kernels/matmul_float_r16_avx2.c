/* matmul_float_r16_avx2.c — owns the AVX2 kernels of the F16/BF16 "halves"
 * interleaved layouts (WICK_F16_R16, WICK_BF16_R16H, matmul_float_r16.h;
 * twin mm_float_r16_rows_scalar) for x86-64 CPUs without AVX-512.
 *
 * Lane i of a YMM register is row i of an 8-row half ("octet") of a 16-row
 * group, so a token's dot product with 8 rows is one accumulator updated
 * column by column in order: THE DEFINITION's single chain, so results are
 * bit-identical to the twin and to the AVX-512 kernels, whatever the batch.
 * A column's 8 elements are widened (F16: VCVTPH2PS; BF16: zero-extended
 * and shifted into the high half) and FMAed with the token's activation
 * broadcast.
 *
 * Prefill (n > 1): row blocks of RBG groups × column chunks of KC (their
 * weights stay in L2) × tiles of one group (2 octets) × up to FT tokens (12
 * accumulators): per column, two widened weight vectors and FT broadcasts
 * from a token-interleaved copy of the tile's activations (in L1) feed 2·FT
 * FMAs, where the file layout's 4 rows × 2 tokens tiles fed 8 FMAs with 4
 * conversions and 2 loads and reduced each sum across lanes. Decode (one
 * token) streams a 64-row block at a time, one sequential stream feeding
 * eight accumulator chains, with the prefetches of kernel_prefetch_n(kt, 1). */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <stdalign.h>
#include <stdbool.h>

#include "kernels/cpu.h"
#include "kernels/matmul_float_r16.h"
#include "kernels/matmul_impl.h"
#include "kernels/r16_avx2.h"

#define T256 __attribute__((target("avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

#define FT 6    /* tokens per prefill tile */
#define KC 256  /* columns per prefill chunk */
#define RBG 32  /* groups per prefill row block (512 rows × KC columns: 256 KiB of F16, in L2) */
#define DG 4    /* groups per decode pass: a 64-row block's four */

#define PAIR 256 /* bytes from one column pair's vector of a group to the next (four groups interleaved) */

/* Group q's pointer: its vector of column pair 0 (pair j's at + j·PAIR). */
T256 INLINE const char *gptr(const char *w, int cols, int q) {
    return w + (size_t)(q / 4) * (size_t)cols * 2 * MM_FLOAT_R16_BLOCK_ROWS + mm_float_r16_vec_at(q % 4, 0);
}

/* Octet o of column 2j + h of a group (g: gptr) of F16 or BF16, widened. */
T256 INLINE __m256 col8(const int base, const char *g, int j, int h, int o) {
    const __m128i v = _mm_loadu_si128((const __m128i *)(g + (size_t)j * PAIR + 32 * h + 16 * o));
    if (base == WICK_F16) return _mm256_cvtph_ps(v);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
}

/* The rows of group row rt (its two octets) that lie in [r0, r1). */
typedef struct octet_masks {
    bool full[2];
    __m256i lanes[2];
} octet_masks;

T256 INLINE octet_masks masks_of(int rt, int r0, int r1) {
    octet_masks m;
    for (int o = 0; o < 2; o++) m.lanes[o] = r16_avx2_octet_lanes(rt + 8 * o, r0, r1, &m.full[o]);
    return m;
}

/* ---- prefill ---- */

static _Thread_local alignas(32) float xbuf[KC][FT]; /* x[t0 + c][k0 + k] at xbuf[k][c] */

T256 INLINE void pack_x(const float *x, int cols, int t0, int C, int k0, int kc) {
    for (int c = 0; c < C; c++) {
        const float *s = x + (size_t)(t0 + c) * cols + k0;
        for (int k = 0; k < kc; k++) xbuf[k][c] = s[k];
    }
}

/* One group (g) × C tokens over columns [k0, k0 + kc) (k0, kc even); sums
 * start at 0 if first, else continue from y. */
T256 INLINE void tile(const int base, const int C, const char *g, int k0, int kc, float *y0, int ldy, bool first,
                      const octet_masks *m) {
    __m256 acc[2][FT];
#pragma GCC unroll 2
    for (int o = 0; o < 2; o++)
#pragma GCC unroll 6
        for (int c = 0; c < C; c++)
            acc[o][c] = r16_avx2_acc_load(y0 + (size_t)c * ldy + 8 * o, first, m->full[o], m->lanes[o]);
    for (int j = 0; j < kc / 2; j++)
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            const __m256 w0 = col8(base, g, k0 / 2 + j, h, 0), w1 = col8(base, g, k0 / 2 + j, h, 1);
#pragma GCC unroll 6
            for (int c = 0; c < C; c++) {
                const __m256 xv = _mm256_broadcast_ss(&xbuf[2 * j + h][c]);
                acc[0][c] = _mm256_fmadd_ps(w0, xv, acc[0][c]);
                acc[1][c] = _mm256_fmadd_ps(w1, xv, acc[1][c]);
            }
        }
#pragma GCC unroll 2
    for (int o = 0; o < 2; o++)
#pragma GCC unroll 6
        for (int c = 0; c < C; c++) r16_avx2_acc_store(y0 + (size_t)c * ldy + 8 * o, acc[o][c], m->full[o], m->lanes[o]);
}

T256 INLINE void tile_c(const int base, int C, const char *g, int k0, int kc, float *y0, int ldy, bool first,
                        const octet_masks *m) {
    switch (C) {
    case 1: tile(base, 1, g, k0, kc, y0, ldy, first, m); break;
    case 2: tile(base, 2, g, k0, kc, y0, ldy, first, m); break;
    case 3: tile(base, 3, g, k0, kc, y0, ldy, first, m); break;
    case 4: tile(base, 4, g, k0, kc, y0, ldy, first, m); break;
    case 5: tile(base, 5, g, k0, kc, y0, ldy, first, m); break;
    default: tile(base, FT, g, k0, kc, y0, ldy, first, m); break;
    }
}
_Static_assert(FT == 6, "tile_c instantiates C = 1..6");

T256 INLINE void prefill(const int base, const char *w, int cols, const float *x, int n, float *y, int ldy, int r0, int r1) {
    const int g_first = r0 / 16, g_end = (r1 + 15) / 16;
    for (int g0 = g_first; g0 < g_end; g0 += RBG) {
        const int g1 = g_end - g0 < RBG ? g_end : g0 + RBG;
        for (int k0 = 0; k0 < cols; k0 += KC) {
            const int kc = cols - k0 < KC ? cols - k0 : KC;
            for (int t0 = 0; t0 < n; t0 += FT) {
                const int C = n - t0 < FT ? n - t0 : FT;
                pack_x(x, cols, t0, C, k0, kc);
                for (int q = g0; q < g1; q++) {
                    const octet_masks m = masks_of(16 * q, r0, r1);
                    tile_c(base, C, gptr(w, cols, q), k0, kc, y + (size_t)t0 * ldy + 16 * q, ldy, k0 == 0, &m);
                }
            }
        }
    }
}

/* ---- decode ---- */

/* NG groups (g) of one 64-row block, one token: octet o of group q into yp + 16q + 8o. */
T256 INLINE void dec(const int base, const int NG, const int pf, const size_t ntab, const char *const g[DG], int cols, const float *x, float *yp,
                     const octet_masks m[DG]) {
    const size_t nta = pf == PREFETCH_NTA ? ntab : 0;
    __m256 acc[DG][2];
#pragma GCC unroll 4
    for (int q = 0; q < NG; q++) acc[q][0] = acc[q][1] = _mm256_setzero_ps();
    for (int j = 0; j < cols / 2; j++) {
#pragma GCC unroll 4
        for (int q = 0; q < NG; q++) cpu_prefetch_ahead(pf, g[q] + (size_t)j * PAIR, 64, nta);
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            const __m256 xv = _mm256_broadcast_ss(x + 2 * j + h);
#pragma GCC unroll 4
            for (int q = 0; q < NG; q++)
#pragma GCC unroll 2
                for (int o = 0; o < 2; o++) acc[q][o] = _mm256_fmadd_ps(col8(base, g[q], j, h, o), xv, acc[q][o]);
        }
    }
#pragma GCC unroll 4
    for (int q = 0; q < NG; q++)
#pragma GCC unroll 2
        for (int o = 0; o < 2; o++) r16_avx2_acc_store(yp + 16 * q + 8 * o, acc[q][o], m[q].full[o], m[q].lanes[o]);
}

T256 INLINE void decode_pf(const int base, const int pf, const size_t ntab, const char *w, int cols, const float *x, float *y, int r0, int r1) {
    for (int rt = r0 & ~15; rt < r1;) {
        /* the range's groups up to the end of their 64-row block (one stream) */
        octet_masks m[DG];
        const char *g[DG];
        int NG = 0;
        for (; NG < DG - (rt / 16) % 4 && rt + 16 * NG < r1; NG++) {
            m[NG] = masks_of(rt + 16 * NG, r0, r1);
            g[NG] = gptr(w, cols, (rt + 16 * NG) / 16);
        }
        switch (NG) {
        case 4: dec(base, 4, pf, ntab, g, cols, x, y + rt, m); break;
        case 3: dec(base, 3, pf, ntab, g, cols, x, y + rt, m); break;
        case 2: dec(base, 2, pf, ntab, g, cols, x, y + rt, m); break;
        default: dec(base, 1, pf, ntab, g, cols, x, y + rt, m); break;
        }
        rt += 16 * NG;
    }
}

T256 INLINE void rows_of(const kernel_tuning *kt, const int base, const void *w, int cols, const float *x, int n, float *y, int ldy, int r0,
                         int r1) {
    if (n > 1) {
        prefill(base, w, cols, x, n, y, ldy, r0, r1);
        return;
    }
    const size_t ntab = (size_t)kt->nta_bytes;
    switch (kernel_prefetch_n(kt, 1)) {
    case PREFETCH_NTA: decode_pf(base, PREFETCH_NTA, ntab, w, cols, x, y, r0, r1); break;
    case PREFETCH_L1L2: decode_pf(base, PREFETCH_L1L2, ntab, w, cols, x, y, r0, r1); break;
    case PREFETCH_L2: decode_pf(base, PREFETCH_L2, ntab, w, cols, x, y, r0, r1); break;
    default: decode_pf(base, PREFETCH_OFF, ntab, w, cols, x, y, r0, r1); break;
    }
}

T256 void mm_float_r16_rows_avx2(const mm_call *c) {
    /* the halves layouts read x itself, not xq */
    if (c->r1 <= c->r0 || c->n <= 0) return;
    if (c->wtype == WICK_F16_R16) rows_of(c->kt, WICK_F16, c->w, c->cols, c->x, c->n, c->y, c->ldy, c->r0, c->r1);
    else rows_of(c->kt, WICK_BF16, c->w, c->cols, c->x, c->n, c->y, c->ldy, c->r0, c->r1);
}

#endif
