/* matmul_quant_r16_k_avx2.c — owns the AVX2 kernels of the interleaved
 * Q4_K and Q6_K layouts (WICK_Q4_K_R16, WICK_Q6_K_R16; layout in
 * matmul_quant_r16.h, scalar twin in matmul_quant_r16.c), for x86-64 CPUs
 * without AVX-512 VNNI. In a Qwen2.5-0.5B-shaped Q4_K_M file these are the
 * ffn_down matrices (4864 columns: whole super-blocks).
 *
 * As for Q5_0 (matmul_quant_r16_avx2.c), each 32-byte half ("octet", 8
 * rows) of a group's 64-byte vector is one YMM register, lane i = row i,
 * holding 4 consecutive bytes of the row's block. The quants are unpacked
 * lane-wise (nibbles; Q6_K's two high bits shifted in from qh) and meet a
 * broadcast of the token's 4 activation bytes in VPMADDUBSW. The int16
 * pair sums of one sub-block are added while they cannot overflow (Q4_K: 8
 * vectors, 8 × 2 × 15 × 127 < 32768; Q6_K: 2, 2 × 2 × 63 × 127 < 32768),
 * then VPMADDWD with the row's sub-block scale (a byte shuffle of the
 * scale vectors) gives int32 lanes. Q4_K's 6-bit scales and mins are
 * decoded 8 rows at once with q4k_scale_min's bit moves; its min term
 * Σ m_j·(bsum_2j + bsum_2j+1) and Q6_K's offset term -32·Σ sc_g·bsum_g
 * are VPMADDWD of the rows' factors with pairs of the token's bsums. Every
 * lane's int32 is the exact integer of THE DEFINITION (matmul_quant.h);
 * then per block, in block order, its one or two FMAs. So results are
 * bit-identical to the scalar twin.
 *
 * One token: each group is one pass over its blocks, both octets per block.
 * More tokens: passes of up to CT tokens over one octet at a time, over
 * chunks of blocks that stay in L1 (decode) or L2 (prefill). Each unit of
 * work (a sub-block's vectors against C tokens) keeps only its own int16
 * sums live: with all of a block's unpacked quants in registers the
 * kernels spilled and ran slower than the file layout's.
 *
 * Q4_K gains at every token count. Q6_K's two high bits cost as much
 * unpacking as the file layout's, so it gains only where many tokens share
 * it (prefill); its decode runs at the file layout's rate, and not for want
 * of arithmetic (the measurements: docs/performance.md, "Tuning choices").
 *
 * Why one token takes octet 0 of a block, then octet 1: the first pass
 * touches every line of the block (the low 32 bytes of each), the second
 * hits L1, which keeps more lines in flight. Taking both octets together,
 * each activation broadcast feeding both (GCC otherwise hoists all 64 of a
 * block's broadcasts and spills them), runs the same in cache but streams
 * from memory far slower. */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernels/matmul_impl.h"
#include "kernels/matmul_quant_r16.h"
#include "kernels/r16_avx2.h"

#define T256 __attribute__((target("avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

#define DCHUNK 4  /* blocks per chunk in decode (a group's 4 Q6_K blocks: 13 KiB, in L1) */
#define KC 4      /* blocks per chunk in prefill */
#define RB 128    /* rows per prefill row block (× KC blocks: 104 KiB of Q6_K, in L2) */
#define CT R16_AVX2_CT

/* Token c's Q8_K blocks. */
INLINE const block_q8_K *xk(const r16_avx2_tokens *x, int c) { return x->b[c]; }

INLINE size_t main_bytes(const int type) { return 64 * (size_t)(type == WICK_Q4_K ? 36 : 52); }
INLINE size_t tail_bytes(const int type) { return type == WICK_Q6_K ? 32 : 0; }

T256 INLINE __m256i ld(const char *mp, int v, int o) {
    return _mm256_loadu_si256((const __m256i *)(mp + 64 * v + 32 * o));
}

/* Byte j of each lane, zero-extended into both of its int16 halves. */
T256 INLINE __m256i ubyte_pair(__m256i v, const int j) {
    const __m256i idx = _mm256_setr_epi8(j, -1, j, -1, 4 + j, -1, 4 + j, -1, 8 + j, -1, 8 + j, -1, 12 + j, -1, 12 + j,
                                         -1, j, -1, j, -1, 4 + j, -1, 4 + j, -1, 8 + j, -1, 8 + j, -1, 12 + j, -1,
                                         12 + j, -1);
    return _mm256_shuffle_epi8(v, idx);
}

/* Byte j of each lane, sign-extended into both of its int16 halves. */
T256 INLINE __m256i sbyte_pair(__m256i v, const int j) {
    const __m256i idx = _mm256_setr_epi8(-1, j, -1, j, -1, 4 + j, -1, 4 + j, -1, 8 + j, -1, 8 + j, -1, 12 + j, -1,
                                         12 + j, -1, j, -1, j, -1, 4 + j, -1, 4 + j, -1, 8 + j, -1, 8 + j, -1, 12 + j,
                                         -1, 12 + j);
    return _mm256_srai_epi16(_mm256_shuffle_epi8(v, idx), 8);
}

/* Dword k of p in every lane. */
T256 INLINE __m256i dword_all(__m128i p, const int k) {
    return _mm256_permutevar8x32_epi32(_mm256_castsi128_si256(p), _mm256_set1_epi32(k));
}

/* Int16 pairs of the token's bsums: dwords (b[4v], b[4v+2]), (b[4v+1], b[4v+3]) for v = 0, 1 of h (16 sums of
 * a Q8_K block: h = 0 the first eight, 1 the last). */
T256 INLINE __m128i bsum_pairs(const int16_t *bs) {
    const __m128i pat = _mm_setr_epi8(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15);
    return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)bs), pat);
}

/* Q4_K, octet o of block (main part mp), C tokens: i1 = Σ_j sc_j·Σ q·x, i2 = Σ_j m_j·(bsum_2j + bsum_2j+1);
 * then acc = fma(i1, d·dx, acc), acc = fma(i2, -(dmin·dx), acc). Sub-block 2p's quants are the low nibbles of
 * vectors 4+8p .. 4+8p+7, 2p+1's their high nibbles. */
T256 INLINE void q4k_block(const int C, const char *mp, int o, const r16_avx2_tokens *x, int b, __m256 *acc) {
    const __m256i m4 = _mm256_set1_epi8(0x0f), k6 = _mm256_set1_epi8(0x3f), k2 = _mm256_set1_epi8(0x03);
    const __m256i S0 = ld(mp, 0, o), S2 = ld(mp, 2, o);
    /* q4k_scale_min per lane: bytes of U0, U1 the scales 0..7 (U2, U3 the mins, below) */
    const __m256i U0 = _mm256_and_si256(S0, k6);
    const __m256i U1 = _mm256_or_si256(_mm256_and_si256(S2, m4),
                                       _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(S0, 6), k2), 4));
    __m256i i1[CT];
#pragma GCC unroll 8
    for (int j = 0; j < 8; j++) {
        const int p = j / 2, hi = j % 2;
        __m256i t[CT];
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            const __m256i v = ld(mp, 4 + 8 * p + k, o);
            const __m256i u = _mm256_and_si256(hi ? _mm256_srli_epi16(v, 4) : v, m4);
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) {
                const __m256i pk = _mm256_maddubs_epi16(u, r16_avx2_bx4(xk(x, c)[b].qs + 32 * j + 4 * k));
                t[c] = k ? _mm256_add_epi16(t[c], pk) : pk;
                r16_avx2_keep(&t[c]);
            }
        }
        const __m256i s = ubyte_pair(j < 4 ? U0 : U1, j % 4);
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) {
            const __m256i sj = _mm256_madd_epi16(t[c], s);
            i1[c] = j ? _mm256_add_epi32(i1[c], sj) : sj;
            r16_avx2_keep(&i1[c]);
        }
    }
    const __m256i S1 = ld(mp, 1, o), lo8 = _mm256_set1_epi32(0x00ff00ff);
    const __m256i U2 = _mm256_and_si256(S1, k6);
    const __m256i U3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(S2, 4), m4),
                                       _mm256_slli_epi32(_mm256_and_si256(_mm256_srli_epi32(S1, 6), k2), 4));
    const __m256i M02 = _mm256_and_si256(U2, lo8), M13 = _mm256_and_si256(_mm256_srli_epi32(U2, 8), lo8);
    const __m256i M46 = _mm256_and_si256(U3, lo8), M57 = _mm256_and_si256(_mm256_srli_epi32(U3, 8), lo8);
    /* d | dmin << 16 per lane -> d of the 8 rows, dmin of the 8 rows */
    const __m256i DV = _mm256_permute4x64_epi64(
        _mm256_shuffle_epi8(ld(mp, 3, o), _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15, 0, 1,
                                                          4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15)),
        0xd8);
    const __m256 D = _mm256_cvtph_ps(_mm256_castsi256_si128(DV)), DM = _mm256_cvtph_ps(_mm256_extracti128_si256(DV, 1));
#pragma GCC unroll 4
    for (int c = 0; c < C; c++) {
        const block_q8_K *xb = &xk(x, c)[b];
        /* B_j = bsum_2j + bsum_2j+1 (int16), as pairs (B0, B2), (B1, B3), (B4, B6), (B5, B7) */
        const __m128i B = _mm_hadd_epi16(_mm_loadu_si128((const __m128i *)xb->bsums),
                                         _mm_loadu_si128((const __m128i *)(xb->bsums + 8)));
        const __m128i P = _mm_shuffle_epi8(B, _mm_setr_epi8(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15));
        const __m256i i2 = _mm256_add_epi32(
            _mm256_add_epi32(_mm256_madd_epi16(M02, dword_all(P, 0)), _mm256_madd_epi16(M13, dword_all(P, 1))),
            _mm256_add_epi32(_mm256_madd_epi16(M46, dword_all(P, 2)), _mm256_madd_epi16(M57, dword_all(P, 3))));
        const __m256 dx = _mm256_set1_ps(xb->d);
        acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i1[c]), _mm256_mul_ps(D, dx), acc[c]);
        acc[c] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(i2), _mm256_mul_ps(DM, dx), acc[c]);
    }
}

/* Q6_K quants u (0..3) of half h, dword k, octet o: elements 128h + 32u + 4k.. of the 8 rows. Low 4 bits: the low
 * (u 0, 1) or high (u 2, 3) nibbles of ql vector 5+24h+2k (u 0, 2) or 20+24h+k (u 1, 3); high 2 bits: bits 2u,
 * 2u+1 of qh vector 4+24h+2k. */
T256 INLINE __m256i q6k_quants(const char *mp, int h, int k, int o, const int u) {
    const __m256i m4 = _mm256_set1_epi8(0x0f), m3 = _mm256_set1_epi8(0x30);
    const __m256i Q = ld(mp, 4 + 24 * h + 2 * k, o), L = ld(mp, u % 2 ? 20 + 24 * h + k : 5 + 24 * h + 2 * k, o);
    const __m256i lo = _mm256_and_si256(u < 2 ? L : _mm256_srli_epi16(L, 4), m4);
    const __m256i q = u == 0 ? _mm256_slli_epi16(Q, 4) : u == 1 ? _mm256_slli_epi16(Q, 2) : u == 2 ? Q : _mm256_srli_epi16(Q, 2);
    return _mm256_or_si256(lo, _mm256_and_si256(q, m3));
}

/* Q6_K, octet o of block (main part mp, tail tp), C tokens: isum = Σ_g sc_g·Σ (q-32)·x, acc = fma(isum, d·dx,
 * acc). Sub-block g of the scales (16 elements): 8h + k/4 + 2u for q6k_quants(h, k, u). */
T256 INLINE void q6k_block(const int C, const char *mp, const char *tp, int o, const r16_avx2_tokens *x, int b, __m256 *acc) {
    __m256i is[CT];
    /* the offset term: -32 Σ_g sc_g·bsum_g, scales as int16 pairs (bytes 0, 2 | 1, 3 of each lane) */
#pragma GCC unroll 4
    for (int c = 0; c < C; c++) is[c] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++) {
        const __m256i S = ld(mp, v, o);
        const __m256i E = _mm256_srai_epi16(_mm256_slli_epi16(S, 8), 8), O = _mm256_srai_epi16(S, 8);
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) {
            const __m128i P = bsum_pairs(xk(x, c)[b].bsums + 8 * (v / 2));
            is[c] = _mm256_add_epi32(is[c], _mm256_madd_epi16(E, dword_all(P, 2 * (v % 2))));
            is[c] = _mm256_add_epi32(is[c], _mm256_madd_epi16(O, dword_all(P, 2 * (v % 2) + 1)));
        }
    }
#pragma GCC unroll 4
    for (int c = 0; c < C; c++) is[c] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(is[c], 5));
#pragma GCC unroll 1
    for (int h = 0; h < 2; h++)
#pragma GCC unroll 4
        for (int kk = 0; kk < 4; kk++) /* dwords k = 2kk, 2kk+1 */
#pragma GCC unroll 4
            for (int u = 0; u < 4; u++) {
                __m256i t[CT];
#pragma GCC unroll 2
                for (int e = 0; e < 2; e++) {
                    const int k = 2 * kk + e;
                    const __m256i q = q6k_quants(mp, h, k, o, u);
#pragma GCC unroll 4
                    for (int c = 0; c < C; c++) {
                        const __m256i pk = _mm256_maddubs_epi16(q, r16_avx2_bx4(xk(x, c)[b].qs + 128 * h + 32 * u + 4 * k));
                        t[c] = e ? _mm256_add_epi16(t[c], pk) : pk;
                        r16_avx2_keep(&t[c]);
                    }
                }
                const int g = kk / 2 + 2 * u; /* + 8h */
                const __m256i s = sbyte_pair(ld(mp, 2 * h + g / 4, o), g % 4);
#pragma GCC unroll 4
                for (int c = 0; c < C; c++) {
                    is[c] = _mm256_add_epi32(is[c], _mm256_madd_epi16(t[c], s));
                    r16_avx2_keep(&is[c]);
                }
            }
    const __m256 D = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(tp + 16 * o)));
#pragma GCC unroll 4
    for (int c = 0; c < C; c++)
        acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is[c]), _mm256_mul_ps(D, _mm256_set1_ps(xk(x, c)[b].d)), acc[c]);
}

/* Octets o0..o0+Q-1 of group gp × C tokens over blocks [b0, b1), nb blocks a row. Sums start at 0 if first,
 * else continue from y (`lanes` only, unless full). */
T256 INLINE void k_run(const int type, const int Q, const int C, const char *gp, int nb, int o0, int b0, int b1,
                       bool first, const r16_avx2_tokens *x, bool full, __m256i lanes) {
    const size_t mb = main_bytes(type), tb = tail_bytes(type);
    __m256 acc[2][CT];
#pragma GCC unroll 2
    for (int q = 0; q < Q; q++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) {
            float *yo = x->y[c] + 8 * q;
            acc[q][c] = r16_avx2_acc_load(yo, first, full, lanes);
        }
    for (int b = b0; b < b1; b++) {
        const char *mp = gp + mm_quant_r16_main_at(mb, tb, nb, b), *tp = gp + mm_quant_r16_tail_at(mb, tb, b);
#pragma GCC unroll 2
        for (int q = 0; q < Q; q++) {
            if (type == WICK_Q4_K) q4k_block(C, mp, o0 + q, x, b, acc[q]);
            else q6k_block(C, mp, tp, o0 + q, x, b, acc[q]);
        }
    }
#pragma GCC unroll 2
    for (int q = 0; q < Q; q++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) {
            float *yo = x->y[c] + 8 * q;
            r16_avx2_acc_store(yo, acc[q][c], full, lanes);
        }
}

/* The octet kernels of r16_avx2_walk16 (see there). */
T256 INLINE void q4k_run(const int Q, const int C, const char *gp, int nb, int o0, int b0, int b1, bool first,
                         const r16_avx2_tokens *x, bool full, __m256i lanes) {
    k_run(WICK_Q4_K, Q, C, gp, nb, o0, b0, b1, first, x, full, lanes);
}
T256 INLINE void q6k_run(const int Q, const int C, const char *gp, int nb, int o0, int b0, int b1, bool first,
                         const r16_avx2_tokens *x, bool full, __m256i lanes) {
    k_run(WICK_Q6_K, Q, C, gp, nb, o0, b0, b1, first, x, full, lanes);
}

T256 void mm_quant_r16_k_rows_avx2(const mm_call *c) {
    const void *w = c->w, *xq = c->xq;
    const int cols = c->cols, n = c->n, ldy = c->ldy, r0 = c->r0, r1 = c->r1;
    float *y = c->y;
    const int type = mm_quant_r16_base(c->wtype), nb = cols / WICK_QK_K;
    const bool prefill = n > MM_STREAM_MAX_N;
    const size_t gb = 16 * dtype_row_bytes(type, cols);
    const int chunk = prefill ? KC : DCHUNK, rows_per = prefill ? RB : 16;
    if (type == WICK_Q4_K)
        r16_avx2_walk16(q4k_run, w, gb, nb, xq, sizeof(block_q8_K), NULL, NULL, n, y, ldy, r0, r1, chunk, rows_per);
    else r16_avx2_walk16(q6k_run, w, gb, nb, xq, sizeof(block_q8_K), NULL, NULL, n, y, ldy, r0, r1, chunk, rows_per);
}

#endif
