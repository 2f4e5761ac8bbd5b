/* matmul_r16_avx2.c — owns the AVX2 kernels for the interleaved Q8_0/Q4_0
 * layouts (WICK_Q8_0_R16 / WICK_Q4_0_R16, layout in matmul_impl.h; scalar
 * twin in matmul_r16.c), for x86-64 CPUs without AVX-512 VNNI.
 *
 * A 64-byte vector of the layout holds 16 rows' 4-byte column groups; its
 * two 32-byte halves ("octets", 8 rows each) are one YMM register, lane i =
 * row i. Per block, token and octet: VPMADDUBSW of the weight bytes with a
 * broadcast of the token's 4 activation bytes, then VPMADDWD with ones
 * leaves each row's 4-byte dot product in its lane (Q4_0: the nibbles are
 * unsigned, <= 15, so the 8 column groups' int16 pair sums are added before
 * VPMADDWD without saturating: 8 × 2 × 15 × 127 < 32768; then -8·Σx. Q8_0,
 * except in r16a_decode: the stored bytes are q + 128, turned back into q
 * and multiplied by the sign trick, |q| <= 128 and |x| <= 127, each group widened at once). The
 * integer sums are exact; then, per block in block order, (float)Σ times
 * d_w·d_x is added to each row's float sum: a multiply and an add, exactly
 * the scalar twin's operations, so results are bit-identical to it (and to
 * the file-layout scalar kernel).
 *
 * One token (decode of one sequence): each whole pair of groups is one pass
 * over its blocks, all four octets per block, one sequential stream. More
 * tokens: passes of up to CT tokens over one octet at a time, from a
 * token-interleaved tile of their activations (r16a_rec), over chunks of
 * blocks small enough to stay in L1 (decode: DCHUNK blocks of a pair) or L2
 * (prefill: row blocks of RB rows × KC blocks), so that only the first pass
 * reads a chunk from memory. In that first pass the pair's first octet
 * prefetches each block's lines MULTI_PF_BYTES ahead into L1, unless the
 * CPU's prefetch style for n tokens is none (cpu.h): without it the weights'
 * stream and the multiply-adds take turns instead of overlapping.
 *
 * 5 to MM_STREAM_MAX_N tokens (two or more passes; r16a_decode) walk rows
 * in blocks of RBD instead: per row block and chunk of blocks, a tile of all
 * the tokens' activations with every 4-byte column group already broadcast
 * to a vector (r16a_btok), which VPMADDUBSW reads as a memory operand. On
 * Zen 3 a broadcast, like any separate vector load, takes one of the four
 * vector pipes' slots, a folded operand does not, and the tile serves every
 * pass over every pair of the row block. Each pair's chunk (a "unit") is
 * passed over as above; every octet call of every pass prefetches its share
 * of the lines (one in `calls`) of the unit about MULTI_PF_BYTES further on
 * in the walk, into L1: the same chunk of a later pair, or the next chunk
 * (the walk jumps between pairs, so the hardware prefetchers do not help).
 * Q8_0 there splits each stored byte q + 128 into nibbles like Q4_0's
 * (Σ(q+128)·x = Σlo·x + 16·Σhi·x, each int16 sum of 8 groups below
 * 8 × 2 × 15 × 127 < 32768; then -128·Σx), so that its VPMADDUBSW also
 * reads the tile. 2 to 4 tokens are slower this way (jumps between pairs,
 * one pass to share the tile), so they keep the walk above. (The
 * measurements: docs/performance.md, "Tuning choices".) */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu.h"
#include "kernels/matmul_impl.h"
#include "kernels/r16_avx2.h"

#define T256 __attribute__((target("avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

#define CT 4      /* tokens per pass */
#define DCHUNK 8  /* blocks per chunk in decode (a Q8_0 pair's 8 blocks: 8.5 KiB, in L1) */
#define KC 32     /* blocks per chunk in prefill */
#define RB 256    /* rows per prefill row block (× KC blocks: 147 KiB of Q4_0, 278 of Q8_0, in L2) */
#define MULTI_PF_BYTES 8192 /* decode of several tokens: prefetch distance (r16a_rows, r16a_decode) */
#define RBD 256   /* rows per row block in r16a_decode */
#define DTILE_RECS 32 /* r16a_decode's tile: blocks per chunk × tokens, at most (10 KiB) */

/* Octets q0..q0+Q-1 of pair pp (octet q: group q/2, rows 8(q%2)..+7) × one
 * token (blocks xb, Σq per block xs, scale per block xd) over all nb blocks,
 * into y (rows in `lanes` only, unless full). */
T256 INLINE void r16a_one(const int base, const int Q, const char *pp, int q0, int nb, const block_q8_0 *xb,
                          const int32_t *xs, const float *xd, float *y, bool full, __m256i lanes) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc[4];
#pragma GCC unroll 4
    for (int q = 0; q < Q; q++) acc[q] = _mm256_setzero_ps();
    for (int b = 0; b < nb; b++) {
        const char *blk = pp + mm_r16_block_at(base, b);
        __m256i is[4];
#pragma GCC unroll 4
        for (int q = 0; q < Q; q++) is[q] = _mm256_setzero_si256();
        if (base == WICK_Q4_0) {
            const __m256i m = _mm256_set1_epi8(0x0f);
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++)
#pragma GCC unroll 4
                for (int q = 0; q < Q; q++) {
                    const int qq = q0 + q;
                    const __m256i v = _mm256_loadu_si256((const __m256i *)(blk + 64 * (2 * j + (qq >> 1)) + 32 * (qq & 1)));
                    const __m256i lo = _mm256_and_si256(v, m), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
                    const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(lo, r16_avx2_bx(xb + b, j)),
                                                       _mm256_maddubs_epi16(hi, r16_avx2_bx(xb + b, j + 4)));
                    is[q] = _mm256_add_epi16(is[q], p);
                    r16_avx2_keep(&is[q]);
                }
#pragma GCC unroll 4
            for (int q = 0; q < Q; q++)
                is[q] = _mm256_add_epi32(_mm256_madd_epi16(is[q], ones), _mm256_set1_epi32(-8 * xs[b]));
        } else {
            const __m256i flip = _mm256_set1_epi8((char)0x80);
#pragma GCC unroll 8
            for (int j = 0; j < 8; j++)
#pragma GCC unroll 4
                for (int q = 0; q < Q; q++) {
                    const int qq = q0 + q;
                    const __m256i wq = _mm256_xor_si256(
                        _mm256_loadu_si256((const __m256i *)(blk + 64 * (2 * j + (qq >> 1)) + 32 * (qq & 1))), flip);
                    const __m256i p = _mm256_maddubs_epi16(_mm256_abs_epi8(wq), _mm256_sign_epi8(r16_avx2_bx(xb + b, j), wq));
                    is[q] = _mm256_add_epi32(is[q], _mm256_madd_epi16(p, ones));
                    r16_avx2_keep(&is[q]);
                }
        }
#pragma GCC unroll 4
        for (int q = 0; q < Q; q++) {
            const int qq = q0 + q;
            const __m256 dw = _mm256_cvtph_ps(
                _mm_loadu_si128((const __m128i *)(pp + mm_r16_scales_at(base, b, qq >> 1) + 16 * (qq & 1))));
            acc[q] = _mm256_add_ps(acc[q], _mm256_mul_ps(_mm256_cvtepi32_ps(is[q]), _mm256_mul_ps(dw, _mm256_set1_ps(xd[b]))));
        }
    }
#pragma GCC unroll 4
    for (int q = 0; q < Q; q++) r16_avx2_acc_store(y + 8 * q, acc[q], full, lanes);
}

/* Several tokens' activations for one block, token-interleaved (a tile of
 * these per chunk, packed once for all the octets that use it), so that
 * every token's bytes are a fixed displacement from one pointer: with a
 * pointer per token, their reloads from the stack were a third of the
 * kernel's instructions. */
typedef struct r16a_rec {
    int8_t qs[CT][WICK_QK];
    int32_t m8s[CT]; /* -8·Σq: Q4_0's offset term, ready to broadcast */
    float d[CT];
} r16a_rec;

/* Octet q of pair pp × C tokens over blocks [b0, b0 + nbk), activations
 * xr[kb] for block b0 + kb; y0 is token 0's output for the octet's row 0. */
T256 INLINE void r16a_tiled(const int base, const int C, const char *pp, int q, int b0, int nbk, bool first,
                            const r16a_rec *xr, float *y0, int ldy, bool full, __m256i lanes, bool pf) {
    const __m256i ones = _mm256_set1_epi16(1);
    const int h = q >> 1, o = 32 * (q & 1);
    __m256 acc[CT];
#pragma GCC unroll 4
    for (int c = 0; c < C; c++) {
        float *yo = y0 + (size_t)c * ldy;
        acc[c] = r16_avx2_acc_load(yo, first, full, lanes);
    }
    for (int kb = 0; kb < nbk; kb++) {
        const char *blk = pp + mm_r16_block_at(base, b0 + kb);
        if (pf) /* the pair's block MULTI_PF_BYTES ahead, into L1 */
#pragma GCC unroll 32
            for (size_t off = 0; off < mm_r16_block_at(base, 1); off += 64)
                _mm_prefetch(blk + MULTI_PF_BYTES + off, _MM_HINT_T0);
        const r16a_rec *r = xr + kb;
        __m256i is[CT];
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) is[c] = _mm256_setzero_si256();
        if (base == WICK_Q4_0) {
            const __m256i m = _mm256_set1_epi8(0x0f);
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++) {
                const __m256i v = _mm256_loadu_si256((const __m256i *)(blk + 64 * (2 * j + h) + o));
                const __m256i lo = _mm256_and_si256(v, m), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
#pragma GCC unroll 4
                for (int c = 0; c < C; c++) {
                    is[c] = _mm256_add_epi16(is[c], _mm256_maddubs_epi16(lo, r16_avx2_bx4(r->qs[c] + 4 * j)));
                    r16_avx2_keep(&is[c]);
                    is[c] = _mm256_add_epi16(is[c], _mm256_maddubs_epi16(hi, r16_avx2_bx4(r->qs[c] + 4 * j + 16)));
                    r16_avx2_keep(&is[c]);
                }
            }
#pragma GCC unroll 4
            for (int c = 0; c < C; c++)
                is[c] = _mm256_add_epi32(_mm256_madd_epi16(is[c], ones), _mm256_set1_epi32(r->m8s[c]));
        } else {
            const __m256i flip = _mm256_set1_epi8((char)0x80);
#pragma GCC unroll 8
            for (int j = 0; j < 8; j++) {
                const __m256i wq = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(blk + 64 * (2 * j + h) + o)), flip);
                const __m256i aw = _mm256_abs_epi8(wq);
#pragma GCC unroll 4
                for (int c = 0; c < C; c++) {
                    is[c] = _mm256_add_epi32(
                        is[c], _mm256_madd_epi16(_mm256_maddubs_epi16(aw, _mm256_sign_epi8(r16_avx2_bx4(r->qs[c] + 4 * j), wq)), ones));
                    r16_avx2_keep(&is[c]);
                }
            }
        }
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(pp + mm_r16_scales_at(base, b0 + kb, h) + o / 2)));
#pragma GCC unroll 4
        for (int c = 0; c < C; c++)
            acc[c] = _mm256_add_ps(acc[c], _mm256_mul_ps(_mm256_cvtepi32_ps(is[c]), _mm256_mul_ps(dw, _mm256_set1_ps(r->d[c]))));
    }
#pragma GCC unroll 4
    for (int c = 0; c < C; c++) {
        float *yo = y0 + (size_t)c * ldy;
        r16_avx2_acc_store(yo, acc[c], full, lanes);
    }
}

/* Decode of several tokens: one token's activations of one block with each
 * 4-byte column group already broadcast to a whole vector, so the kernel
 * reads them as memory operands (on Zen 3 a separate broadcast, or any
 * vector load, takes one of the four vector pipes' slots; a folded operand
 * does not). A tile of these, [block of the chunk][token], is built once per
 * row block and chunk and serves every pair of the row block. */
typedef struct r16a_btok {
    __m256i g[8]; /* column group j's 4 bytes in every lane */
    __m256i off;  /* the unsigned weights' offset term in every lane: -8·Σq (Q4_0), -128·Σq (Q8_0) */
    __m256 d;     /* the block's scale in every lane */
} r16a_btok;

/* Octet q of pair pp × C tokens over blocks [b0, b0 + nbk), token c's
 * activations for block b0 + kb at xt[kb·n + c]; y0 is token 0's output for
 * the octet's row 0. With pf, lines pf0, pf0 + pfs, ... of each block at
 * the same offset from pf are prefetched into L1 (this call's share of a
 * later unit of the walk, r16a_decode). */
T256 INLINE void r16a_dtile(const int base, const int C, const char *pp, int q, int b0, int nbk, bool first,
                            const r16a_btok *xt, int n, float *y0, int ldy, bool full, __m256i lanes,
                            const char *pf, int pf0, int pfs) {
    const __m256i ones = _mm256_set1_epi16(1);
    const int h = q >> 1, o = 32 * (q & 1);
    const size_t bb = mm_r16_block_at(base, 1);
    __m256 acc[CT];
#pragma GCC unroll 4
    for (int c = 0; c < C; c++) acc[c] = r16_avx2_acc_load(y0 + (size_t)c * ldy, first, full, lanes);
    for (int kb = 0; kb < nbk; kb++) {
        const char *blk = pp + mm_r16_block_at(base, b0 + kb);
        if (pf)
            for (size_t off = 64 * (size_t)pf0; off < bb; off += 64 * (size_t)pfs) _mm_prefetch(pf + kb * bb + off, _MM_HINT_T0);
        const r16a_btok *r = xt + (size_t)kb * n;
        __m256i is[CT];
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) is[c] = _mm256_setzero_si256();
        if (base == WICK_Q4_0) {
            const __m256i m = _mm256_set1_epi8(0x0f);
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++) {
                const __m256i v = _mm256_loadu_si256((const __m256i *)(blk + 64 * (2 * j + h) + o));
                const __m256i lo = _mm256_and_si256(v, m), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
#pragma GCC unroll 4
                for (int c = 0; c < C; c++) {
                    is[c] = _mm256_add_epi16(is[c], _mm256_maddubs_epi16(lo, r[c].g[j]));
                    r16_avx2_keep(&is[c]);
                    is[c] = _mm256_add_epi16(is[c], _mm256_maddubs_epi16(hi, r[c].g[j + 4]));
                    r16_avx2_keep(&is[c]);
                }
            }
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) is[c] = _mm256_add_epi32(_mm256_madd_epi16(is[c], ones), r[c].off);
        } else { /* the stored bytes u = q + 128 as two nibbles: Σu·x = Σlo·x + 16·Σhi·x, then -128·Σx */
            const __m256i m = _mm256_set1_epi8(0x0f);
            __m256i ih[CT];
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) ih[c] = _mm256_setzero_si256();
#pragma GCC unroll 8
            for (int j = 0; j < 8; j++) {
                const __m256i v = _mm256_loadu_si256((const __m256i *)(blk + 64 * (2 * j + h) + o));
                const __m256i lo = _mm256_and_si256(v, m), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
#pragma GCC unroll 4
                for (int c = 0; c < C; c++) {
                    is[c] = _mm256_add_epi16(is[c], _mm256_maddubs_epi16(lo, r[c].g[j]));
                    r16_avx2_keep(&is[c]);
                    ih[c] = _mm256_add_epi16(ih[c], _mm256_maddubs_epi16(hi, r[c].g[j]));
                    r16_avx2_keep(&ih[c]);
                }
            }
            const __m256i sixteens = _mm256_set1_epi16(16);
#pragma GCC unroll 4
            for (int c = 0; c < C; c++)
                is[c] = _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(is[c], ones), _mm256_madd_epi16(ih[c], sixteens)),
                                         r[c].off);
        }
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(pp + mm_r16_scales_at(base, b0 + kb, h) + o / 2)));
#pragma GCC unroll 4
        for (int c = 0; c < C; c++)
            acc[c] = _mm256_add_ps(acc[c], _mm256_mul_ps(_mm256_cvtepi32_ps(is[c]), _mm256_mul_ps(dw, r[c].d)));
    }
#pragma GCC unroll 4
    for (int c = 0; c < C; c++) r16_avx2_acc_store(y0 + (size_t)c * ldy, acc[c], full, lanes);
}

T256 INLINE void r16a_doctet(const int base, int C, const char *pp, int q, int b0, int nbk, bool first,
                             const r16a_btok *xt, int n, float *y0, int ldy, bool full, __m256i lanes,
                             const char *pf, int pf0, int pfs) {
    switch (C) {
    case 4: r16a_dtile(base, 4, pp, q, b0, nbk, first, xt, n, y0, ldy, full, lanes, pf, pf0, pfs); break;
    case 3: r16a_dtile(base, 3, pp, q, b0, nbk, first, xt, n, y0, ldy, full, lanes, pf, pf0, pfs); break;
    case 2: r16a_dtile(base, 2, pp, q, b0, nbk, first, xt, n, y0, ldy, full, lanes, pf, pf0, pfs); break;
    default: r16a_dtile(base, 1, pp, q, b0, nbk, first, xt, n, y0, ldy, full, lanes, pf, pf0, pfs); break;
    }
}

/* Rows [r0, r1) × n tokens (CT + 1..MM_STREAM_MAX_N), decode: row blocks of
 * RBD rows; per row block and chunk of blocks, the broadcast tile of all n
 * tokens, then each pair's chunk (a "unit") in passes of up to CT tokens
 * over its octets. With pf_on, each octet call of each pass prefetches its
 * share of the unit about MULTI_PF_BYTES ahead in the walk. */
T256 INLINE void r16a_decode(const int base, const char *wc, int nb, size_t pb, const void *xq, int n, float *y,
                             int ldy, int r0, int r1, bool pf_on) {
    const block_q8_0 *xblocks = xq;
    const int32_t *xsums = (const int32_t *)((const char *)xq + mm_xq_sums_offset(nb * WICK_QK, n));
    const float *xscales = (const float *)((const char *)xq + mm_xq_scales_offset(nb * WICK_QK, n));
    int chunk = DTILE_RECS / n;
    chunk = chunk > DCHUNK ? DCHUNK : chunk < 1 ? 1 : chunk;
    const size_t unit = (size_t)chunk * mm_r16_block_at(base, 1);
    const int ahead = unit >= MULTI_PF_BYTES ? 1 : (int)(MULTI_PF_BYTES / unit);
    const int calls = 4 * ((n + CT - 1) / CT); /* octet kernel calls per unit (fewer in a partial pair) */
    r16a_btok xt[DTILE_RECS];
    for (int rb = r0 & ~31; rb < r1; rb += RBD) {
        const int rlo = rb > (r0 & ~7) ? rb : r0 & ~7, rhi = rb + RBD < r1 ? rb + RBD : r1;
        const int p0 = rb / 32, p1 = (rhi + 31) / 32;
        for (int b0 = 0; b0 < nb; b0 += chunk) {
            const int b1 = nb - b0 < chunk ? nb : b0 + chunk;
            for (int kb = 0; kb < b1 - b0; kb++)
                for (int t = 0; t < n; t++) {
                    const size_t k = (size_t)t * nb + b0 + kb;
                    r16a_btok *r = xt + (size_t)kb * n + t;
#pragma GCC unroll 8
                    for (int j = 0; j < 8; j++) r->g[j] = r16_avx2_bx(xblocks + k, j);
                    r->off = _mm256_set1_epi32((base == WICK_Q4_0 ? -8 : -128) * xsums[k]);
                    r->d = _mm256_set1_ps(xscales[k]);
                }
            for (int p = p0; p < p1; p++) {
                const char *pp = wc + (size_t)p * pb, *pf = NULL;
                if (pf_on) { /* the unit `ahead` units on: later pairs of this chunk, then the next chunk's */
                    int tp = p + ahead, tb = b0;
                    if (tp >= p1) tp -= p1 - p0, tb = b1;
                    if (tp < p1 && tb < nb) pf = wc + (size_t)tp * pb + mm_r16_block_at(base, tb);
                }
                const int olo = p * 32 > rlo ? p * 32 : rlo, ohi = p * 32 + 32 < rhi ? p * 32 + 32 : rhi;
                for (int i = 0; i < n; i += CT) {
                    const int C = n - i < CT ? n - i : CT;
                    for (int rt = olo; rt < ohi; rt += 8) {
                        bool full;
                        const __m256i lanes = r16_avx2_octet_lanes(rt, r0, r1, &full);
                        r16a_doctet(base, C, pp, rt / 8 % 4, b0, b1 - b0, b0 == 0, xt + i, n,
                                    y + (size_t)i * ldy + rt, ldy, full, lanes, pf, i / CT * 4 + rt / 8 % 4, calls);
                    }
                }
            }
        }
    }
}

/* r16a_decode per base, out of line: the walks of 1-4 tokens and prefill
 * compile as they did without it. */
__attribute__((noinline)) T256 static void r16a_decode_q4_0(const char *wc, int nb, size_t pb, const void *xq, int n,
                                                            float *y, int ldy, int r0, int r1, bool pf_on) {
    r16a_decode(WICK_Q4_0, wc, nb, pb, xq, n, y, ldy, r0, r1, pf_on);
}
__attribute__((noinline)) T256 static void r16a_decode_q8_0(const char *wc, int nb, size_t pb, const void *xq, int n,
                                                            float *y, int ldy, int r0, int r1, bool pf_on) {
    r16a_decode(WICK_Q8_0, wc, nb, pb, xq, n, y, ldy, r0, r1, pf_on);
}

/* One octet × C tokens, C a constant in each instance. */
T256 INLINE void r16a_octet(const int base, int C, const char *pp, int q, int b0, int nbk, bool first,
                            const r16a_rec *xr, float *y0, int ldy, bool full, __m256i lanes, bool pf) {
    switch (C) {
    case 4: r16a_tiled(base, 4, pp, q, b0, nbk, first, xr, y0, ldy, full, lanes, pf); break;
    case 3: r16a_tiled(base, 3, pp, q, b0, nbk, first, xr, y0, ldy, full, lanes, pf); break;
    case 2: r16a_tiled(base, 2, pp, q, b0, nbk, first, xr, y0, ldy, full, lanes, pf); break;
    default: r16a_tiled(base, 1, pp, q, b0, nbk, first, xr, y0, ldy, full, lanes, pf); break;
    }
}
_Static_assert(CT == 4, "r16a_octet instantiates C = 1..4");

T256 INLINE void r16a_rows(const kernel_tuning *kt, const int base, const void *w, int cols, const void *xq, int n, float *y, int ldy,
                           int r0, int r1) {
    const int nb = cols / WICK_QK;
    const size_t pb = 32 * dtype_row_bytes(base, cols);
    const block_q8_0 *xblocks = xq;
    const int32_t *xsums = (const int32_t *)((const char *)xq + mm_xq_sums_offset(cols, n));
    const float *xscales = (const float *)((const char *)xq + mm_xq_scales_offset(cols, n));
    const char *wc = w;
    if (n == 1) { /* each whole pair in one pass, all four octets per block */
        for (int rt = r0 & ~7; rt < r1;) {
            const char *pp = wc + (size_t)(rt / 32) * pb;
            bool full;
            const __m256i lanes = r16_avx2_octet_lanes(rt, r0, r1, &full);
            if (rt % 32 == 0 && rt + 32 <= r1 && full) {
                r16a_one(base, 4, pp, 0, nb, xblocks, xsums, xscales, y + rt, true, lanes);
                rt += 32;
            } else {
                r16a_one(base, 1, pp, rt / 8 % 4, nb, xblocks, xsums, xscales, y + rt, full, lanes);
                rt += 8;
            }
        }
        return;
    }
    if (n > CT && n <= MM_STREAM_MAX_N) { /* two or more passes: the broadcast tile's walk */
        const cpu_prefetch style = base == WICK_Q8_0 ? kernel_prefetch_dense(kt, n) : kernel_prefetch_n(kt, n);
        if (base == WICK_Q8_0) r16a_decode_q8_0(wc, nb, pb, xq, n, y, ldy, r0, r1, style != PREFETCH_OFF);
        else r16a_decode_q4_0(wc, nb, pb, xq, n, y, ldy, r0, r1, style != PREFETCH_OFF);
        return;
    }
    const bool prefill = n > MM_STREAM_MAX_N;
    const int chunk = prefill ? KC : DCHUNK, rows_per = prefill ? RB : 32;
    r16a_rec xt[KC];
    /* decode of several tokens: the first pass's first octet of each pair
     * prefetches the pair's blocks ahead (the other passes and octets read
     * the chunk from L1) */
    const cpu_prefetch style = base == WICK_Q8_0 ? kernel_prefetch_dense(kt, n) : kernel_prefetch_n(kt, n);
    const bool pf_on = !prefill && style != PREFETCH_OFF;
    for (int rb = r0 & ~31; rb < r1; rb += rows_per) {
        const int lo = rb > (r0 & ~7) ? rb : r0 & ~7, hi = rb + rows_per < r1 ? rb + rows_per : r1;
        for (int b0 = 0; b0 < nb; b0 += chunk) {
            const int b1 = nb - b0 < chunk ? nb : b0 + chunk;
            for (int i = 0; i < n; i += CT) {
                const int C = n - i < CT ? n - i : CT;
                for (int kb = 0; kb < b1 - b0; kb++)
                    for (int c = 0; c < C; c++) {
                        const size_t k = (size_t)(i + c) * nb + b0 + kb;
                        memcpy(xt[kb].qs[c], xblocks[k].qs, WICK_QK);
                        xt[kb].m8s[c] = -8 * xsums[k], xt[kb].d[c] = xscales[k];
                    }
                for (int rt = lo; rt < hi; rt += 8) {
                    bool full;
                    const __m256i lanes = r16_avx2_octet_lanes(rt, r0, r1, &full);
                    r16a_octet(base, C, wc + (size_t)(rt / 32) * pb, rt / 8 % 4, b0, b1 - b0, b0 == 0, xt,
                               y + (size_t)i * ldy + rt, ldy, full, lanes, pf_on && i == 0 && rt == lo);
                }
            }
        }
    }
}

T256 void mm_r16_rows_avx2(const mm_call *c) {
    if (mm_r16_base(c->wtype) == WICK_Q8_0) r16a_rows(c->kt, WICK_Q8_0, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1);
    else r16a_rows(c->kt, WICK_Q4_0, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1);
}

#endif
