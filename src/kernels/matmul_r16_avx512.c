/* matmul_r16_avx512.c — owns the AVX-512 VNNI matmul kernels for the
 * interleaved Q8_0/Q4_0 layouts (WICK_Q8_0_R16 / WICK_Q4_0_R16, layout in
 * matmul_impl.h; scalar twin in matmul_r16.c).
 *
 * Lane i of a 16-row group's vectors belongs to row i: per 32-column block,
 * 8 (Q8_0) or 4 (Q4_0, split into low/high nibbles) 64-byte vectors, and
 * the 16 rows' fp16 scales. Per token and block, 8 VPDPBUSD with broadcasts
 * of the token's 4-byte activation groups leave Σ u·x in lane i;
 * Σ (u - off)·x = Σ u·x - off·Σx (off = 128 or 8) uses the block sums
 * prepared with the activations. Then one int->float conversion and one FMA
 * per block and 16 rows, in block order: the same integer sums and float
 * operations as the file-layout AVX-512 kernel (matmul_plain_avx512.c), so results
 * are bit-identical to it.
 *
 * Decode (n <= MM_STREAM_MAX_N) streams each pair of groups once (one
 * sequential stream, see matmul_impl.h), reading each block's scales line
 * (its last) after the dot products: read first, on Zen 4 (no software
 * prefetch) it leaves the stream waiting on that line. The prefetches go
 * ahead in the style kernel_prefetch_n(kt, n) picks for the CPU (none; into
 * L1 and, further, into L2; or non-temporal), every broadcast of activation
 * bytes feeding both groups' VPDPBUSD: with several tokens the broadcasts'
 * loads, not the dot products, bound a one-group kernel, so a pair does more
 * multiply-adds per load.
 *
 * Prefill works on row blocks of RB rows (their KC-block chunk stays in L2)
 * and tiles of up to T tokens: each tile's activations for the chunk are
 * first copied into a small token-interleaved buffer (xtile, in L1), so that
 * every token is a fixed displacement from one pointer; then each pair of
 * groups runs over the chunk with one broadcast of activation bytes feeding
 * two VPDPBUSD (a lone group at a range edge takes the one-group tile). Per
 * row and token the integer sums and float operations are the same as
 * decode's, block by block. */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu.h"
#include "kernels/matmul_impl.h"

#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

#define KC 32          /* blocks per prefill chunk (32 rows × 32 blocks = 32 KiB of Q8_0) */
#define RB 256         /* rows per prefill row block (× KC blocks: 272 KiB of Q8_0, in L2) */
#define T 6            /* tokens per prefill tile */
#define SG 8           /* tokens per pass of the streaming (decode) kernel over a lone group */
/* Tokens per pass over a pair: past this the kernel's registers spill
 * (Q4_0 needs two more for its nibbles); n tokens go in ceil(n / SG2) equal
 * passes, except 6-8 tokens of Q4_0 (r16_decode_q4_wide). */
#define SG2(base) ((base) == WICK_Q8_0 ? 6 : 5)
#define SPLIT_MAX 2 /* up to this many tokens a pair's sums run as two chains each */
#define DCHUNK 8 /* blocks per chunk when the decode kernel makes several passes over a pair */

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

/* Column group g of group h's block as unsigned bytes (Q4_0: groups 0-3 are
 * the low nibbles of vector g, 4-7 the high nibbles of vector g-4). */
T512 INLINE __m512i r16_group(const int base, const char *blk, int h, int g) {
    if (base == WICK_Q8_0) return _mm512_loadu_si512((const void *)(blk + 64 * (2 * g + h)));
    const __m512i v = _mm512_loadu_si512((const void *)(blk + 64 * (2 * (g & 3) + h)));
    return _mm512_and_si512(g < 4 ? v : _mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0f));
}

/* The 8 column groups of group h's block (blk: the pair's block), lane i = row i. */
T512 INLINE void r16_load(const int base, const char *blk, int h, __m512i G[8]) {
#pragma GCC unroll 8
    for (int g = 0; g < 8; g++) G[g] = r16_group(base, blk, h, g);
}

/* Group h's 16 fp16 scales of block b of the pair at pp, as floats. */
T512 INLINE __m512 r16_dw(const int base, const char *pp, int b, int h) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(pp + mm_r16_scales_at(base, b, h))));
}

/* Decode: NG groups × C tokens over blocks [b0, b1), pp the groups'
 * pair: NG = 2 both (C <= SG2), NG = 1 group h0 (C <= SG), one stream either
 * way. The sums start at 0 if first, else continue from y. */
T512 INLINE void r16_decode(const int base, const int NG, const int C, const int pf, const size_t ntab, const char *pp, int h0,
                            int b0, int b1, bool first, const block_q8_0 *const xb[SG],
                            const int32_t *const xs[SG], const float *const xd[SG], float *const yp[SG],
                            __mmask16 m) {
    const size_t wb = mm_r16_block_bytes(base);
    const int off = base == WICK_Q8_0 ? 128 : 8;
    const size_t nta = pf == PREFETCH_NTA ? ntab : 0;
    __m512 acc[2][SG];
#pragma GCC unroll 2
    for (int q = 0; q < NG; q++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) acc[q][c] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m, yp[c] + 16 * q);
    for (int b = b0; b < b1; b++) {
        const char *blk = pp + mm_r16_block_at(base, b);
        cpu_prefetch_ahead_unrolled(pf, blk, 2 * wb + 64, nta); /* the pair's block, ahead */
        __m512 dw[2];
        if (NG == 1) {
            __m512i G[8], is[SG];
            r16_load(base, blk, h0, G);
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) is[c] = r16_dot(G, xb[c] + b, xs[c][b], off);
            dw[0] = r16_dw(base, pp, b, h0);
#pragma GCC unroll 8
            for (int c = 0; c < C; c++)
                acc[0][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[c]), _mm512_mul_ps(dw[0], _mm512_set1_ps(xd[c][b])), acc[0][c]);
            continue;
        }
        /* NG == 2 from here. Few tokens: two chains per sum (groups 0-3, 4-7)
         * for more independent VPDPBUSD in flight. */
        const int SPLIT = C <= SPLIT_MAX ? 2 : 1;
        __m512i is[2][SG], is2[2][SG];
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) {
            is[0][c] = is[1][c] = _mm512_set1_epi32(-off * xs[c][b]);
            is2[0][c] = is2[1][c] = _mm512_setzero_si512();
        }
#pragma GCC unroll 8
        for (int g = 0; g < 8; g++) {
            const __m512i w0 = r16_group(base, blk, 0, g), w1 = r16_group(base, blk, 1, g);
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) {
                const __m512i xv = xbcast(xb[c] + b, g);
                if (SPLIT == 2 && g >= 4) {
                    is2[0][c] = _mm512_dpbusd_epi32(is2[0][c], w0, xv);
                    is2[1][c] = _mm512_dpbusd_epi32(is2[1][c], w1, xv);
                } else {
                    is[0][c] = _mm512_dpbusd_epi32(is[0][c], w0, xv);
                    is[1][c] = _mm512_dpbusd_epi32(is[1][c], w1, xv);
                }
            }
        }
        if (SPLIT == 2)
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) {
                is[0][c] = _mm512_add_epi32(is[0][c], is2[0][c]);
                is[1][c] = _mm512_add_epi32(is[1][c], is2[1][c]);
            }
#pragma GCC unroll 2
        for (int q = 0; q < NG; q++) dw[q] = r16_dw(base, pp, b, h0 + q);
#pragma GCC unroll 2
        for (int q = 0; q < NG; q++)
#pragma GCC unroll 8
            for (int c = 0; c < C; c++)
                acc[q][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[q][c]), _mm512_mul_ps(dw[q], _mm512_set1_ps(xd[c][b])),
                                            acc[q][c]);
    }
#pragma GCC unroll 2
    for (int q = 0; q < NG; q++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) _mm512_mask_storeu_ps(yp[c] + 16 * q, m, acc[q][c]);
}

/* Decode of a Q4_0 pair for C = 6..8 tokens in one pass over the row
 * (instead of ceil(C / 5) passes over 8-block chunks): per block, two
 * sub-batches of up to 4 tokens, each unpacking the block's nibbles again
 * (from L1) for its dot products, all 2 × C float accumulators in
 * registers. Per row and token the same integer sums and float steps as
 * r16_decode, block by block, in fewer instructions. (One group at a time,
 * its 8 group vectors unpacked once for all 8 tokens, spills registers;
 * 9-16 tokens keep passes of up to 5, faster than two passes of 6-8.) Where
 * nt, the sums go out with non-temporal stores (the caller checked that the
 * lines allow them). */
T512 INLINE void r16_decode_q4_wide(const int C, const int pf, const size_t ntab, const char *pp, int b0, int b1, bool first, bool nt,
                                    const block_q8_0 *const xb[SG], const int32_t *const xs[SG],
                                    const float *const xd[SG], float *const yp[SG]) {
    const size_t wb = mm_r16_block_bytes(WICK_Q4_0);
    const size_t nta = pf == PREFETCH_NTA ? ntab : 0;
    __m512 acc[2][SG];
#pragma GCC unroll 2
    for (int q = 0; q < 2; q++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) acc[q][c] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(yp[c] + 16 * q);
    for (int b = b0; b < b1; b++) {
        const char *blk = pp + mm_r16_block_at(WICK_Q4_0, b);
        cpu_prefetch_ahead_unrolled(pf, blk, 2 * wb + 64, nta);
#pragma GCC unroll 2
        for (int s = 0; s < 2; s++) {
            const int c0 = 4 * s, cn = C - c0 < 4 ? C - c0 : 4;
            __m512i is[2][4];
#pragma GCC unroll 4
            for (int c = 0; c < cn; c++) is[0][c] = is[1][c] = _mm512_set1_epi32(-8 * xs[c0 + c][b]);
#pragma GCC unroll 8
            for (int g = 0; g < 8; g++) {
                const __m512i w0 = r16_group(WICK_Q4_0, blk, 0, g), w1 = r16_group(WICK_Q4_0, blk, 1, g);
#pragma GCC unroll 4
                for (int c = 0; c < cn; c++) {
                    const __m512i xv = xbcast(xb[c0 + c] + b, g);
                    is[0][c] = _mm512_dpbusd_epi32(is[0][c], w0, xv);
                    is[1][c] = _mm512_dpbusd_epi32(is[1][c], w1, xv);
                }
            }
#pragma GCC unroll 2
            for (int q = 0; q < 2; q++) {
                const __m512 dw = r16_dw(WICK_Q4_0, pp, b, q);
#pragma GCC unroll 4
                for (int c = 0; c < cn; c++)
                    acc[q][c0 + c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[q][c]),
                                                     _mm512_mul_ps(dw, _mm512_set1_ps(xd[c0 + c][b])), acc[q][c0 + c]);
            }
        }
    }
    if (nt) {
#pragma GCC unroll 2
        for (int q = 0; q < 2; q++)
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) _mm512_stream_ps(yp[c] + 16 * q, acc[q][c]);
        return;
    }
#pragma GCC unroll 2
    for (int q = 0; q < 2; q++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) _mm512_storeu_ps(yp[c] + 16 * q, acc[q][c]);
}

T512 INLINE void r16_decode_q4_wide_c(int C, const int pf, const size_t ntab, const char *pp, int b0, int b1, bool first, bool nt,
                                      const block_q8_0 *const xb[SG], const int32_t *const xs[SG],
                                      const float *const xd[SG], float *const yp[SG]) {
    switch (C) {
    case 6: r16_decode_q4_wide(6, pf, ntab, pp, b0, b1, first, nt, xb, xs, xd, yp); break;
    case 7: r16_decode_q4_wide(7, pf, ntab, pp, b0, b1, first, nt, xb, xs, xd, yp); break;
    default: r16_decode_q4_wide(8, pf, ntab, pp, b0, b1, first, nt, xb, xs, xd, yp); break;
    }
}

/* Decode for n tokens (<= SG2 with a pair, <= SG alone) and prefetch style
 * pf, all constants in each instance. */
T512 INLINE void r16_decode_c(const int base, const int NG, int n, const int pf, const size_t ntab, const char *pp, int h0,
                              int b0, int b1, bool first, const block_q8_0 *const xb[SG],
                              const int32_t *const xs[SG], const float *const xd[SG], float *const yp[SG],
                              __mmask16 m) {
#define R16_CASE(NG, C, H) r16_decode(base, NG, C, pf, ntab, pp, H, b0, b1, first, xb, xs, xd, yp, m)
    if (NG == 2) {
        switch (n) {
        case 1: R16_CASE(2, 1, 0); break;
        case 2: R16_CASE(2, 2, 0); break;
        case 3: R16_CASE(2, 3, 0); break;
        case 4: R16_CASE(2, 4, 0); break;
        case 5: R16_CASE(2, 5, 0); break;
        default: R16_CASE(2, SG2(base), 0); break;
        }
        return;
    }
    switch (n) {
    case 1: R16_CASE(1, 1, h0); break;
    case 2: R16_CASE(1, 2, h0); break;
    case 3: R16_CASE(1, 3, h0); break;
    case 4: R16_CASE(1, 4, h0); break;
    case 5: R16_CASE(1, 5, h0); break;
    case 6: R16_CASE(1, 6, h0); break;
    case 7: R16_CASE(1, 7, h0); break;
    default: R16_CASE(1, 8, h0); break;
    }
#undef R16_CASE
}
_Static_assert(SG == 8 && SG2(WICK_Q8_0) == 6 && SG2(WICK_Q4_0) == 5, "r16_decode_c instantiates C = 1..SG2 / 1..SG");

/* One prefill tile's activations for blocks [b0, b0+nbk), token-interleaved:
 * quants of block kb of token c at qs[kb][c], its -off·Σq at nsum[kb][c] (the
 * offset correction the unsigned weights need) and its scale at d[kb][c]. */
typedef struct xtile {
    int8_t qs[KC][T][WICK_QK];
    int32_t nsum[KC][T];
    float d[KC][T];
} xtile;

T512 INLINE void xtile_pack(xtile *xt, int off, const block_q8_0 *xb, const int32_t *xs, const float *xd,
                            int nb, int t0, int C, int b0, int nbk) {
    for (int c = 0; c < C; c++) {
        const size_t k0 = (size_t)(t0 + c) * nb + b0;
        for (int kb = 0; kb < nbk; kb++) {
            _mm256_storeu_si256((__m256i *)xt->qs[kb][c], _mm256_loadu_si256((const __m256i *)xb[k0 + kb].qs));
            xt->nsum[kb][c] = -off * xs[k0 + kb];
            xt->d[kb][c] = xd[k0 + kb];
        }
    }
}

T512 INLINE __m512i tbcast(const xtile *xt, int kb, int c, int g) {
    int32_t v;
    memcpy(&v, xt->qs[kb][c] + 4 * g, 4);
    return _mm512_set1_epi32(v);
}

/* NG groups × C <= T tokens over the tile's nbk blocks, pp the groups' pair:
 * NG = 2 both, NG = 1 group h0; y0 is token 0's output for the first
 * group's row 0; accumulators continue from y unless first; m masks the rows
 * of a lone group. */
T512 INLINE void r16_tile(const int base, const int NG, const int C, const char *pp, int h0, int b0, int nbk, const xtile *xt, float *y0, int ldy, bool first, __mmask16 m) {
    __m512 acc[2][T];
#pragma GCC unroll 2
    for (int q = 0; q < NG; q++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++)
            acc[q][c] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m, y0 + (size_t)c * ldy + 16 * q);
    for (int kb = 0; kb < nbk; kb++) {
        __m512i is[2][T];
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) {
            const __m512i z = _mm512_set1_epi32(xt->nsum[kb][c]);
#pragma GCC unroll 2
            for (int q = 0; q < NG; q++) is[q][c] = z;
        }
#pragma GCC unroll 8
        for (int g = 0; g < 8; g++) {
            __m512i wv[2];
#pragma GCC unroll 2
            for (int q = 0; q < NG; q++) wv[q] = r16_group(base, pp + mm_r16_block_at(base, b0 + kb), h0 + q, g);
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) {
                const __m512i xv = tbcast(xt, kb, c, g);
#pragma GCC unroll 2
                for (int q = 0; q < NG; q++) is[q][c] = _mm512_dpbusd_epi32(is[q][c], wv[q], xv);
            }
        }
#pragma GCC unroll 2
        for (int q = 0; q < NG; q++) {
            const __m512 dw = r16_dw(base, pp, b0 + kb, h0 + q);
#pragma GCC unroll 8
            for (int c = 0; c < C; c++)
                acc[q][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[q][c]),
                                            _mm512_mul_ps(dw, _mm512_set1_ps(xt->d[kb][c])), acc[q][c]);
        }
    }
#pragma GCC unroll 2
    for (int q = 0; q < NG; q++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) _mm512_mask_storeu_ps(y0 + (size_t)c * ldy + 16 * q, m, acc[q][c]);
}

/* The tile for C tokens, with C a constant in each instance. */
T512 INLINE void r16_tile_c(const int base, const int NG, int C, const char *pp, int h0, int b0,
                            int nbk, const xtile *xt, float *y0, int ldy, bool first, __mmask16 m) {
    switch (C) {
    case 6: r16_tile(base, NG, 6, pp, h0, b0, nbk, xt, y0, ldy, first, m); break;
    case 5: r16_tile(base, NG, 5, pp, h0, b0, nbk, xt, y0, ldy, first, m); break;
    case 4: r16_tile(base, NG, 4, pp, h0, b0, nbk, xt, y0, ldy, first, m); break;
    case 3: r16_tile(base, NG, 3, pp, h0, b0, nbk, xt, y0, ldy, first, m); break;
    case 2: r16_tile(base, NG, 2, pp, h0, b0, nbk, xt, y0, ldy, first, m); break;
    default: r16_tile(base, NG, 1, pp, h0, b0, nbk, xt, y0, ldy, first, m); break;
    }
}
_Static_assert(T == 6, "r16_tile_c instantiates C = 1..6");

/* Row tile [rt, rt + 16) of [r0, r1): its rows' mask, its pair, its group's
 * place in the pair, and whether the whole pair is in range (both groups go
 * together then). */
typedef struct r16_at {
    __mmask16 m;
    const char *pp;
    int h;
    bool pair;
} r16_at;

T512 INLINE r16_at r16_locate(const char *w, size_t pb, int rt, int r0, int r1) {
    const int lo = r0 > rt ? r0 - rt : 0, hi = r1 - rt < 16 ? r1 - rt : 16;
    const __mmask16 m = (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));
    return (r16_at){m, w + (size_t)(rt / 32) * pb, rt / 16 % 2, m == 0xffff && rt % 32 == 0 && rt + 32 <= r1};
}

/* Prefill over rows [r0, r1) and n > MM_STREAM_MAX_N tokens; pb = a pair's bytes. */
T512 INLINE void r16_prefill(const int base, const char *w, int nb, size_t pb, const block_q8_0 *xb,
                             const int32_t *xs, const float *xd, int n, float *y, int ldy, int r0, int r1) {
    const int off = base == WICK_Q8_0 ? 128 : 8;
    xtile xt;
    for (int rb = r0 & ~15; rb < r1; rb += RB) {
        const int rb_end = rb + RB < r1 ? rb + RB : r1;
        for (int b0 = 0; b0 < nb; b0 += KC) {
            const int nbk = nb - b0 < KC ? nb - b0 : KC;
            for (int i = 0; i < n; i += T) {
                const int C = n - i < T ? n - i : T;
                xtile_pack(&xt, off, xb, xs, xd, nb, i, C, b0, nbk);
                for (int rt = rb; rt < rb_end;) {
                    const r16_at at = r16_locate(w, pb, rt, r0, rb_end);
                    float *y0 = y + (size_t)i * ldy + rt;
                    if (at.pair) r16_tile_c(base, 2, C, at.pp, 0, b0, nbk, &xt, y0, ldy, b0 == 0, at.m);
                    else r16_tile_c(base, 1, C, at.pp, at.h, b0, nbk, &xt, y0, ldy, b0 == 0, at.m);
                    rt += at.pair ? 32 : 16;
                }
            }
        }
    }
}

T512 INLINE void r16_rows(const kernel_tuning *kt, const int base, const void *w, int cols, const void *xq, int n, float *y,
                          int ldy, int r0, int r1) {
    const int nb = cols / WICK_QK;
    const size_t pb = 32 * dtype_row_bytes(base, cols);
    const block_q8_0 *xblocks = xq;
    const int32_t *xsums = (const int32_t *)((const char *)xq + mm_xq_sums_offset(cols, n));
    const float *xscales = (const float *)((const char *)xq + mm_xq_scales_offset(cols, n));
    if (n > MM_STREAM_MAX_N) {
        r16_prefill(base, w, nb, pb, xblocks, xsums, xscales, n, y, ldy, r0, r1);
        return;
    }
    const cpu_prefetch pf = base == WICK_Q8_0 ? kernel_prefetch_dense(kt, n) : kernel_prefetch_n(kt, n);
    const size_t ntab = (size_t)kt->nta_bytes;
    /* The one-pass 6-8-token Q4_0 kernel's sums go out non-temporally where
     * kernel_tuning.act_nt (Zen 4) and y's lines allow, as the quantized activations
     * do: the rows are the next hand-off's input, read by the other thread,
     * whose copies of these lines from the step before would otherwise be
     * taken back line by line. (The K types' and the Q8_0 pairs' final
     * stores gain nothing from it.) Same values. */
    const bool nt = base == WICK_Q4_0 && n >= 6 && kt->act_nt && (uintptr_t)y % 64 == 0 && ldy % 16 == 0;
    for (int rt = r0 & ~15; rt < r1;) {
        const r16_at at = r16_locate(w, pb, rt, r0, r1);
        const int NG = at.pair ? 2 : 1;
        /* tokens in equal passes of up to SG2 (a pair) or SG (a lone group):
         * the first streams the weights in, the others find them in L1 —
         * a chunk of DCHUNK blocks at a time when there are several passes
         * (a whole pair's row, 34 KiB of Q8_0 at 1,024 columns, left L1
         * before the second pass came back to it: Qwen3-0.6B shape, k = 6
         * verification 1.23 -> 1.35 decode steps before chunking) */
        const int most = at.pair ? (base == WICK_Q4_0 && n <= SG ? SG : SG2(base)) : SG, passes = (n + most - 1) / most, per = (n + passes - 1) / passes;
        const int chunk = passes > 1 ? DCHUNK : nb;
        for (int b0 = 0; b0 < nb; b0 += chunk) {
            const int b1 = nb - b0 < chunk ? nb : b0 + chunk;
            for (int i0 = 0; i0 < n; i0 += per) {
                const int C = n - i0 < per ? n - i0 : per;
                const block_q8_0 *xb[SG];
                const int32_t *xs[SG];
                const float *xd[SG];
                float *yp[SG];
                for (int c = 0; c < SG; c++) {
                    const int i = i0 + (c < C ? c : 0);
                    xb[c] = xblocks + (size_t)i * nb, xs[c] = xsums + (size_t)i * nb, xd[c] = xscales + (size_t)i * nb;
                    yp[c] = y + (size_t)i * ldy + rt;
                }
#define R16_DECODE(NG)                                                                                                  \
    switch (i0 == 0 ? pf : PREFETCH_OFF) { /* later passes find the chunk in L1 */                                    \
    case PREFETCH_NTA: r16_decode_c(base, NG, C, PREFETCH_NTA, ntab, at.pp, at.h, b0, b1, b0 == 0, xb, xs, xd, yp, at.m); break; \
    case PREFETCH_L1L2: r16_decode_c(base, NG, C, PREFETCH_L1L2, ntab, at.pp, at.h, b0, b1, b0 == 0, xb, xs, xd, yp, at.m); break; \
    case PREFETCH_L2: r16_decode_c(base, NG, C, PREFETCH_L2, ntab, at.pp, at.h, b0, b1, b0 == 0, xb, xs, xd, yp, at.m); break; \
    default: r16_decode_c(base, NG, C, PREFETCH_OFF, ntab, at.pp, at.h, b0, b1, b0 == 0, xb, xs, xd, yp, at.m); break;       \
    }
                if (at.pair && base == WICK_Q4_0 && C > SG2(base)) { /* one pass (n <= SG) */
                    switch (pf) {
                    case PREFETCH_NTA: r16_decode_q4_wide_c(C, PREFETCH_NTA, ntab, at.pp, b0, b1, b0 == 0, nt, xb, xs, xd, yp); break;
                    case PREFETCH_L1L2: r16_decode_q4_wide_c(C, PREFETCH_L1L2, ntab, at.pp, b0, b1, b0 == 0, nt, xb, xs, xd, yp); break;
                    case PREFETCH_L2: r16_decode_q4_wide_c(C, PREFETCH_L2, ntab, at.pp, b0, b1, b0 == 0, nt, xb, xs, xd, yp); break;
                    default: r16_decode_q4_wide_c(C, PREFETCH_OFF, ntab, at.pp, b0, b1, b0 == 0, nt, xb, xs, xd, yp); break;
                    }
                } else if (at.pair) { R16_DECODE(2) }
                else { R16_DECODE(1) }
#undef R16_DECODE
            }
        }
        rt += 16 * NG;
    }
    if (nt) _mm_sfence(); /* ordered before the hand-off that publishes y */
}

T512 void mm_r16_rows_avx512(const mm_call *c) {
    if (mm_r16_base(c->wtype) == WICK_Q8_0) r16_rows(c->kt, WICK_Q8_0, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1);
    else r16_rows(c->kt, WICK_Q4_0, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1);
}

#endif
