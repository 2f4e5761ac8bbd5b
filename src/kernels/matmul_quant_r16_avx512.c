/* matmul_quant_r16_avx512.c — owns the AVX-512 VNNI kernels of the
 * interleaved layouts of matmul_quant_r16.h (Q4_1, Q5_0, Q5_1, IQ4_NL and
 * the K types Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS). Twin:
 * mm_quant_r16_rows_scalar; the arithmetic is THE DEFINITION of matmul_quant.h.
 *
 * Lane i of every vector is row i of a 16-row group. A block is unpacked
 * into "group vectors" of unsigned bytes, vector v holding elements 4v..4v+3
 * of each row (4-bit quants: and/shift; fifth and high bits: shifted into
 * place from their planes; IQ4 values: a byte shuffle of value + 128), and
 * VPDPBUSD with a broadcast of the token's 4 activation bytes leaves Σ u·x
 * per row. Offsets (value = u - off) start the chain at -off·Σx. K types
 * multiply each sub-block's sum by its scale (VPMULLD) into an int32 per
 * super-block, and their mins Σ m_j·bsum_j go through VPDPWSSD; then one or
 * two FMAs per block and row, in block order: exactly the definition.
 *
 * Decode (n <= MM_STREAM_MAX_N) streams each group once with the
 * prefetches of kernel_prefetch_n(kt, n), unpacking every block and applying it
 * to up to SG tokens. Prefill unpacks a chunk of rows × blocks once into a
 * per-thread buffer (group vectors, scales as int32 or float vectors), then
 * runs tiles of two groups × T tokens over it, so that unpacking costs once
 * per chunk rather than once per token. */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <string.h>

#include "kernels/cpu.h"
#include "kernels/matmul_impl.h"
#include "kernels/matmul_q8k.h"
#include "kernels/matmul_quant_r16.h"

#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

#define SG 4  /* tokens per pass of the decode kernel over a group */
#define T 4   /* tokens per prefill tile */
#define RBG 4 /* 16-row groups per prefill chunk */

/* ---- per-type facts ---- */

INLINE bool is_k(const int base) {
    return base == WICK_Q4_K || base == WICK_Q5_K || base == WICK_Q6_K || base == WICK_Q3_K || base == WICK_Q2_K ||
           base == WICK_IQ4_XS;
}
/* Elements per sub-block (the unit a scale covers) of a K type. */
INLINE int unit_of(const int base) {
    return base == WICK_Q6_K || base == WICK_Q3_K || base == WICK_Q2_K ? 16 : 32;
}
/* value = u - off */
INLINE int off_of(const int base) {
    switch (base) {
    case WICK_Q5_0: return 16;
    case WICK_IQ4_NL: case WICK_IQ4_XS: return 128;
    case WICK_Q6_K: return 32;
    case WICK_Q3_K: return 4;
    default: return 0;
    }
}
INLINE bool has_min(const int base) {
    return base == WICK_Q4_1 || base == WICK_Q5_1 || base == WICK_Q4_K || base == WICK_Q5_K || base == WICK_Q2_K;
}
INLINE int main_vectors(const int base) {
    switch (base) {
    case WICK_Q4_1: return 5;
    case WICK_Q5_0: return 5;
    case WICK_Q5_1: return 6;
    case WICK_IQ4_NL: return 4;
    case WICK_Q4_K: return 36;
    case WICK_Q5_K: return 44;
    case WICK_Q6_K: return 52;
    case WICK_Q3_K: return 27;
    case WICK_Q2_K: return 21;
    default: return 34; /* IQ4_XS */
    }
}
INLINE bool has_tail(const int base) {
    return base == WICK_Q5_0 || base == WICK_IQ4_NL || base == WICK_Q6_K || base == WICK_Q3_K;
}

/* ---- unpacking ---- */

T512 INLINE __m512i ld(const char *p, int v) { return _mm512_loadu_si512((const void *)(p + 64 * v)); }
T512 INLINE __m512i lo4(__m512i v) { return _mm512_and_si512(v, _mm512_set1_epi8(0x0f)); }
T512 INLINE __m512i hi4(__m512i v) { return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0f)); }
/* v's bytes shifted left by s bits (s may be negative: right), as 16-bit lanes (callers mask the bits they keep). */
T512 INLINE __m512i shl(__m512i v, const int s) {
    return s > 0 ? _mm512_slli_epi16(v, (unsigned)s) : s < 0 ? _mm512_srli_epi16(v, (unsigned)-s) : v;
}
T512 INLINE __m512i iq4_lookup(__m512i nib) {
    const __m512i tbl = _mm512_broadcast_i32x4(_mm_setr_epi8(1, 24, 45, 63, 79, 93, 106, 118, (char)129, (char)141,
                                                             (char)153, (char)166, (char)181, (char)197, (char)217,
                                                             (char)241)); /* IQ4_NL_VALUES + 128 */
    return _mm512_shuffle_epi8(tbl, nib);
}
/* fp16 pairs (lo | hi << 16) per lane: the low or high halves as 16 floats. */
T512 INLINE __m512 f16_lo(__m512i v) { return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(v)); }
T512 INLINE __m512 f16_hi(__m512i v) { return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(v, 16))); }
/* Bits [s, s+w) of each dword lane. */
T512 INLINE __m512i bits(__m512i v, const int s, const int w) {
    return _mm512_and_si512(_mm512_srli_epi32(v, (unsigned)s), _mm512_set1_epi32((1 << w) - 1));
}

/* Family A (32-element blocks): the block's 8 group vectors. */
T512 INLINE void a_groups(const int base, const char *p, __m512i G[8]) {
    const bool q5 = base == WICK_Q5_0 || base == WICK_Q5_1; /* the plane first, then the nibbles */
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        const __m512i v = ld(p, j + q5);
        G[j] = lo4(v);
        G[j + 4] = hi4(v);
    }
    if (q5) {
        const __m512i H = ld(p, 0), m = _mm512_set1_epi8(0x10);
#pragma GCC unroll 8
        for (int g = 0; g < 8; g++) G[g] = _mm512_or_si512(G[g], _mm512_and_si512(shl(H, 4 - g), m));
    }
    if (base == WICK_IQ4_NL)
#pragma GCC unroll 8
        for (int g = 0; g < 8; g++) G[g] = iq4_lookup(G[g]);
}

/* Family A: the block's d (and m) of the 16 rows. */
T512 INLINE void a_scales(const int base, const char *p, const char *tail, __m512 *D, __m512 *M) {
    if (base == WICK_Q4_1 || base == WICK_Q5_1) {
        const __m512i dm = ld(p, base == WICK_Q4_1 ? 4 : 5);
        *D = f16_lo(dm);
        *M = f16_hi(dm);
    } else {
        *D = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)tail));
        *M = _mm512_setzero_ps();
    }
}

/* K types: a super-block's scales. SC[u] = unit u's scale (int32), MP[t] =
 * the int16 pair of mins that multiplies the bsums pair t (bsums[2t],
 * bsums[2t+1]) in VPDPWSSD, D and DMIN as floats. */
typedef struct kscales {
    __m512i SC[16];
    __m512i MP[8];
    __m512 D, DMIN;
} kscales;

T512 INLINE __m512i pair16(__m512i a, __m512i b) { return _mm512_or_si512(a, _mm512_slli_epi32(b, 16)); }

T512 INLINE void k_scales(const int base, const char *p, const char *tail, kscales *s) {
    switch (base) {
    case WICK_Q4_K:
    case WICK_Q5_K: {
        const __m512i S0 = ld(p, 0), S1 = ld(p, 1), S2 = ld(p, 2), DM = ld(p, 3);
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++) {
            __m512i sc, m;
            if (j < 4) {
                sc = bits(S0, 8 * j, 6);
                m = bits(S1, 8 * j, 6);
            } else {
                sc = _mm512_or_si512(bits(S2, 8 * (j - 4), 4), _mm512_slli_epi32(bits(S0, 8 * (j - 4) + 6, 2), 4));
                m = _mm512_or_si512(bits(S2, 8 * (j - 4) + 4, 4), _mm512_slli_epi32(bits(S1, 8 * (j - 4) + 6, 2), 4));
            }
            s->SC[j] = sc;
            s->MP[j] = pair16(m, m);
        }
        s->D = f16_lo(DM);
        s->DMIN = f16_hi(DM);
        break;
    }
    case WICK_Q6_K: {
#pragma GCC unroll 16
        for (int g = 0; g < 16; g++)
            s->SC[g] = _mm512_srai_epi32(_mm512_slli_epi32(ld(p, g / 4), 24 - 8 * (g % 4)), 24);
        s->D = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)tail));
        break;
    }
    case WICK_Q3_K: {
        const __m512i S[3] = {ld(p, 0), ld(p, 1), ld(p, 2)};
#pragma GCC unroll 16
        for (int g = 0; g < 16; g++) {
            const int b = g % 8; /* byte b of scales[0..7] holds the low bits: low nibble for g < 8 */
            const __m512i lo = bits(S[b / 4], 8 * (b % 4) + (g < 8 ? 0 : 4), 4);
            const __m512i hi = bits(S[2], 8 * (g % 4) + 2 * (g / 4), 2);
            s->SC[g] = _mm512_sub_epi32(_mm512_or_si512(lo, _mm512_slli_epi32(hi, 4)), _mm512_set1_epi32(32));
        }
        s->D = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)tail));
        break;
    }
    case WICK_Q2_K: {
        __m512i m[16];
#pragma GCC unroll 16
        for (int g = 0; g < 16; g++) {
            s->SC[g] = bits(ld(p, g / 4), 8 * (g % 4), 4);
            m[g] = bits(ld(p, g / 4), 8 * (g % 4) + 4, 4);
        }
#pragma GCC unroll 8
        for (int t = 0; t < 8; t++) s->MP[t] = pair16(m[2 * t], m[2 * t + 1]);
        const __m512i DM = ld(p, 4);
        s->D = f16_lo(DM);
        s->DMIN = f16_hi(DM);
        break;
    }
    default: { /* IQ4_XS */
        const __m512i DS = ld(p, 0), SL = ld(p, 1);
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++)
            s->SC[j] = _mm512_sub_epi32(
                _mm512_or_si512(bits(SL, 8 * (j / 2) + 4 * (j % 2), 4), _mm512_slli_epi32(bits(DS, 16 + 2 * j, 2), 4)),
                _mm512_set1_epi32(32));
        s->D = f16_lo(DS);
        break;
    }
    }
    (void)tail;
}

/* K types: the group vectors of unit u (4 for 16-element units, 8 for 32). */
T512 INLINE void k_groups(const int base, const char *p, int u, __m512i G[8]) {
    switch (base) {
    case WICK_Q4_K:
    case WICK_Q5_K: {
        const char *q = p + 64 * (base == WICK_Q4_K ? 4 : 12) + 64 * 8 * (u / 2);
#pragma GCC unroll 8
        for (int c = 0; c < 8; c++) G[c] = u % 2 ? hi4(ld(q, c)) : lo4(ld(q, c));
        if (base == WICK_Q5_K) {
            const __m512i m = _mm512_set1_epi8(0x10);
#pragma GCC unroll 8
            for (int c = 0; c < 8; c++) {
                const __m512i h = ld(p, 4 + c);
                const __m512i b = u < 4 ? _mm512_slli_epi16(h, (unsigned)(4 - u)) : _mm512_srli_epi16(h, (unsigned)(u - 4));
                G[c] = _mm512_or_si512(G[c], _mm512_and_si512(b, m));
            }
        }
        break;
    }
    case WICK_Q6_K: { /* unit g = 8h + 2k + c/4: group vectors c = 4(g%2) .. +3 of (h, k); qh c of half h at
                       * 4 + 24h + 2c; ql c right after it (k even: the half's first 32 ql bytes per row) or
                       * at 20 + 24h + c (k odd: its next 32) */
        const int h = u / 8, k = (u % 8) / 2, c0 = 4 * (u % 2);
        const __m512i m3 = _mm512_set1_epi8(0x30);
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {
            const __m512i H = ld(p, 4 + 24 * h + 2 * (c0 + c));
            const __m512i L = k & 1 ? ld(p, 20 + 24 * h + c0 + c) : ld(p, 5 + 24 * h + 2 * (c0 + c));
            G[c] = _mm512_or_si512(k < 2 ? lo4(L) : hi4(L), _mm512_and_si512(shl(H, 4 - 2 * k), m3));
        }
        break;
    }
    case WICK_Q3_K: {
        const int h = u / 8, k = (u % 8) / 2, c0 = 4 * (u % 2);
        const __m512i m1 = _mm512_set1_epi8(0x03), m4 = _mm512_set1_epi8(0x04);
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {
            const __m512i Q = ld(p, 11 + 8 * h + c0 + c), HM = ld(p, 3 + c0 + c);
            G[c] = _mm512_or_si512(_mm512_and_si512(shl(Q, -2 * k), m1), _mm512_and_si512(shl(HM, 2 - (4 * h + k)), m4));
        }
        break;
    }
    case WICK_Q2_K: {
        const int h = u / 8, k = (u % 8) / 2, c0 = 4 * (u % 2);
        const __m512i m1 = _mm512_set1_epi8(0x03);
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) G[c] = _mm512_and_si512(shl(ld(p, 5 + 8 * h + c0 + c), -2 * k), m1);
        break;
    }
    default: { /* IQ4_XS: unit j's 16 bytes per row are 4 vectors of nibbles, as an IQ4_NL block */
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {
            const __m512i v = ld(p, 2 + 4 * u + c);
            G[c] = iq4_lookup(lo4(v));
            G[c + 4] = iq4_lookup(hi4(v));
        }
        break;
    }
    }
}

/* ---- dot products ---- */

T512 INLINE __m512i bcast4(const int8_t *x) {
    int32_t v;
    memcpy(&v, x, 4);
    return _mm512_set1_epi32(v);
}

/* Σ_v G[v]·x[4v..4v+3] over NV group vectors, from `start` (two chains). */
T512 INLINE __m512i dot_groups(const int NV, const __m512i *G, const int8_t *x, __m512i start) {
    __m512i a = start, b = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int v = 0; v < NV; v += 2) {
        a = _mm512_dpbusd_epi32(a, G[v], bcast4(x + 4 * v));
        b = _mm512_dpbusd_epi32(b, G[v + 1], bcast4(x + 4 * v + 4));
    }
    return _mm512_add_epi32(a, b);
}

/* Σ_t MP[t]·(bsums[2t], bsums[2t+1]): a K super-block's min sum. */
T512 INLINE __m512i min_sum(const kscales *s, const block_q8_K *x) {
    __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int t = 0; t < 8; t += 2) {
        a = _mm512_dpwssd_epi32(a, s->MP[t], bcast4((const int8_t *)(x->bsums + 2 * t)));
        b = _mm512_dpwssd_epi32(b, s->MP[t + 1], bcast4((const int8_t *)(x->bsums + 2 * t + 2)));
    }
    return _mm512_add_epi32(a, b);
}

/* Σx of unit u of a Q8_K block (the offset correction's factor). */
INLINE int32_t unit_bsum(const int base, const block_q8_K *x, int u) {
    return unit_of(base) == 16 ? x->bsums[u] : x->bsums[2 * u] + x->bsums[2 * u + 1];
}

/* The block's float steps, as the definition: acc = fma(i1, d·dx, acc), then
 * the min term (K: -(dmin·dx)·i2; Q4_1/Q5_1: m·(dx·xsum)). */
T512 INLINE __m512 k_step(const int base, __m512 acc, __m512i i1, __m512i i2, const kscales *s, float dx) {
    const __m512 vdx = _mm512_set1_ps(dx);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i1), _mm512_mul_ps(s->D, vdx), acc);
    if (has_min(base)) acc = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(i2), _mm512_mul_ps(s->DMIN, vdx), acc);
    return acc;
}

/* vdx = dx and vmx = dx·xsum of the token's block, broadcast. */
T512 INLINE __m512 a_step(const int base, __m512 acc, __m512i is, __m512 D, __m512 M, __m512 vdx, __m512 vmx) {
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), _mm512_mul_ps(D, vdx), acc);
    if (has_min(base)) acc = _mm512_fmadd_ps(M, vmx, acc);
    return acc;
}
T512 INLINE __m512 min_factor(const int base, float dx, int32_t xsum) {
    return has_min(base) ? _mm512_set1_ps(dx * (float)xsum) : _mm512_setzero_ps();
}

/* ---- activations ---- */

typedef struct acts {
    const block_q8_0 *xb; /* family A: Q8_0 blocks, sums, scales (matmul_impl.h) */
    const int32_t *xs;
    const float *xd;
    const block_q8_K *xk; /* K types */
    int nb;
} acts;

static acts acts_of(int base, const void *xq, int cols, int n) {
    acts a = {0};
    if (is_k(base)) {
        a.xk = xq;
        a.nb = cols / WICK_QK_K;
    } else {
        a.xb = xq;
        a.xs = (const int32_t *)((const char *)xq + mm_xq_sums_offset(cols, n));
        a.xd = (const float *)((const char *)xq + mm_xq_scales_offset(cols, n));
        a.nb = cols / WICK_QK;
    }
    return a;
}

/* ---- decode: stream a group once per SG tokens ---- */

T512 INLINE void decode_group(const int base, const int C, const int pf, const size_t ntab, const char *gp, int nb, const acts *a,
                              const int tok[SG], float *const yp[SG], __mmask16 mask) {
    const size_t mb = 64 * (size_t)main_vectors(base), tb = has_tail(base) ? 32 : 0;
    const size_t nta = pf == PREFETCH_NTA ? ntab : 0;
    __m512 acc[SG];
#pragma GCC unroll 4
    for (int c = 0; c < C; c++) acc[c] = _mm512_setzero_ps();
    for (int b = 0; b < nb; b++) {
        const char *p = gp + mm_quant_r16_main_at(mb, tb, nb, b), *tail = gp + mm_quant_r16_tail_at(mb, tb, b);
        /* Prefetches first for both families (base is a constant: one branch
         * is compiled). A K super-block's span (2-3.4 KiB) is prefetched at
         * once when the pass has SG tokens (the units of an SG-token pass are
         * slower with prefetches among them), but spread over its units, a
         * sixteenth each, when it has fewer: a burst of 36-52 lines' pairs of
         * prefetches at a one-token block's start, then none for the rest of
         * the block, leaves the stream short of the memory's rate
         * (docs/performance.md, "Tuning choices"). */
        const char *kstart = b & 1 ? p : tail; /* an even block's span starts at its pair's tails */
        const size_t kspan = (size_t)(p - kstart) + mb;
        const bool spread = C < SG;
        if (is_k(base)) {
            if (!spread) cpu_prefetch_ahead(pf, kstart, kspan, nta);
        } else { /* constant spans, so that the prefetches unroll */
            cpu_prefetch_ahead_unrolled(pf, p, mb, nta);
            if (tb && !(b & 1)) cpu_prefetch_ahead_unrolled(pf, tail, 2 * tb, nta);
        }
        if (!is_k(base)) {
            __m512i G[8], is[SG];
            __m512 D, M;
            a_groups(base, p, G);
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) {
                const size_t k = (size_t)tok[c] * nb + b;
                is[c] = dot_groups(8, G, a->xb[k].qs, _mm512_set1_epi32(-off_of(base) * a->xs[k]));
            }
            a_scales(base, p, tail, &D, &M);
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) {
                const size_t k = (size_t)tok[c] * nb + b;
                acc[c] = a_step(base, acc[c], is[c], D, M, _mm512_set1_ps(a->xd[k]), min_factor(base, a->xd[k], a->xs[k]));
            }
            continue;
        }
        kscales s;
        k_scales(base, p, tail, &s);
        __m512i isc[SG];
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) isc[c] = _mm512_setzero_si512();
        const int U = unit_of(base), NU = WICK_QK_K / U;
#pragma GCC unroll 16
        for (int u = 0; u < NU; u++) { /* unrolled: each unit's shifts are constants */
            __m512i G[8];
            if (spread) { /* unit u's sixteenth (or eighth) of the span, in whole lines */
                const size_t o0 = (kspan * (size_t)u / NU) & ~(size_t)63;
                const size_t o1 = u + 1 == NU ? kspan : (kspan * (size_t)(u + 1) / NU) & ~(size_t)63;
                cpu_prefetch_ahead(pf, kstart + o0, o1 - o0, nta);
            }
            k_groups(base, p, u, G);
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) {
                const block_q8_K *x = a->xk + (size_t)tok[c] * nb + b;
                const __m512i start = _mm512_set1_epi32(-off_of(base) * unit_bsum(base, x, u));
                const __m512i S = dot_groups(U / 4, G, x->qs + U * u, start);
                isc[c] = _mm512_add_epi32(isc[c], _mm512_mullo_epi32(S, s.SC[u]));
            }
        }
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) {
            const block_q8_K *x = a->xk + (size_t)tok[c] * nb + b;
            const __m512i im = has_min(base) ? min_sum(&s, x) : _mm512_setzero_si512();
            acc[c] = k_step(base, acc[c], isc[c], im, &s, x->d);
        }
    }
#pragma GCC unroll 4
    for (int c = 0; c < C; c++) _mm512_mask_storeu_ps(yp[c], mask, acc[c]);
}

T512 INLINE void decode_group_c(const int base, int C, const int pf, const size_t ntab, const char *gp, int nb, const acts *a,
                                const int tok[SG], float *const yp[SG], __mmask16 mask) {
    switch (C) {
    case 1: decode_group(base, 1, pf, ntab, gp, nb, a, tok, yp, mask); break;
    case 2: decode_group(base, 2, pf, ntab, gp, nb, a, tok, yp, mask); break;
    case 3: decode_group(base, 3, pf, ntab, gp, nb, a, tok, yp, mask); break;
    default: decode_group(base, 4, pf, ntab, gp, nb, a, tok, yp, mask); break;
    }
}
_Static_assert(SG == 4, "decode_group_c instantiates C = 1..4");

T512 INLINE void decode_rows(const kernel_tuning *kt, const int base, const char *w, int nb, size_t gb, const acts *a, int n, float *y,
                             int ldy, int r0, int r1) {
    const cpu_prefetch pf = kernel_prefetch_n(kt, n);
    const size_t ntab = (size_t)kt->nta_bytes;
    for (int rt = r0 & ~15; rt < r1; rt += 16) {
        const int lo = r0 > rt ? r0 - rt : 0, hi = r1 - rt < 16 ? r1 - rt : 16;
        const __mmask16 m = (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));
        const char *gp = w + (size_t)(rt / 16) * gb;
        for (int i0 = 0; i0 < n; i0 += SG) {
            const int C = n - i0 < SG ? n - i0 : SG;
            int tok[SG];
            float *yp[SG];
            for (int c = 0; c < SG; c++) {
                tok[c] = i0 + (c < C ? c : 0);
                yp[c] = y + (size_t)tok[c] * ldy + rt;
            }
            switch (pf) {
            case PREFETCH_NTA: decode_group_c(base, C, PREFETCH_NTA, ntab, gp, nb, a, tok, yp, m); break;
            case PREFETCH_L1L2: decode_group_c(base, C, PREFETCH_L1L2, ntab, gp, nb, a, tok, yp, m); break;
            case PREFETCH_L2: decode_group_c(base, C, PREFETCH_L2, ntab, gp, nb, a, tok, yp, m); break;
            default: decode_group_c(base, C, PREFETCH_OFF, ntab, gp, nb, a, tok, yp, m); break;
            }
        }
    }
}

/* ---- prefill: unpack a chunk once, then tiles over it ---- */

/* One group's block, unpacked. Family A uses G[0..7], D, DMIN (= M, its m). */
typedef struct cblock {
    __m512i G[64];
    kscales s;
} cblock;

#define KCK 4  /* K super-blocks per chunk (1024 columns) */
#define KCA 16 /* family A blocks per chunk (512 columns) */

/* Per thread: RBG groups × up to KCK super-blocks (or KCA/8 blocks' worth, see cblock_at). */
static _Thread_local cblock chunk_buf[RBG * KCK] __attribute__((aligned(64)));

/* Family A packs 8 blocks into one cblock: block b's vectors at G[8(b%8)..], its D/M in a
 * separate array (kscales holds one D). */
static _Thread_local __m512 chunk_ad[RBG * KCA], chunk_am[RBG * KCA];

T512 INLINE void unpack_chunk(const int base, const char *w, size_t gb, int nb, int g0, int ng, int b0, int nbk) {
    const size_t mb = 64 * (size_t)main_vectors(base), tb = has_tail(base) ? 32 : 0;
    for (int q = 0; q < ng; q++) {
        const char *gp = w + (size_t)(g0 + q) * gb;
        for (int kb = 0; kb < nbk; kb++) {
            const int b = b0 + kb;
            const char *p = gp + mm_quant_r16_main_at(mb, tb, nb, b), *tail = gp + mm_quant_r16_tail_at(mb, tb, b);
            if (!is_k(base)) {
                cblock *cb = &chunk_buf[q * KCK + kb / 8];
                a_groups(base, p, cb->G + 8 * (kb % 8));
                a_scales(base, p, tail, &chunk_ad[q * KCA + kb], &chunk_am[q * KCA + kb]);
                continue;
            }
            cblock *cb = &chunk_buf[q * KCK + kb];
            k_scales(base, p, tail, &cb->s);
            const int U = unit_of(base);
            for (int u = 0; u < WICK_QK_K / U; u++) { /* once per chunk: amortized over the tokens */
                __m512i G[8];
                k_groups(base, p, u, G);
                for (int v = 0; v < U / 4; v++) cb->G[u * (U / 4) + v] = G[v];
            }
        }
    }
}

/* NG (1 or 2) groups × C tokens over the chunk's nbk blocks (K types). */
T512 INLINE void k_tile(const int base, const int NG, const int C, int q0, int nbk, const acts *a, int t0, int b0,
                        float *y0, int ldy, bool first, __mmask16 mask) {
    const int U = unit_of(base), NU = WICK_QK_K / U, nb = a->nb;
    __m512 acc[2][T];
#pragma GCC unroll 2
    for (int q = 0; q < NG; q++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++)
            acc[q][c] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask, y0 + (size_t)c * ldy + 16 * q);
    for (int kb = 0; kb < nbk; kb++) {
        const cblock *cb[2] = {&chunk_buf[q0 * KCK + kb], &chunk_buf[(q0 + NG - 1) * KCK + kb]};
        const block_q8_K *x[T];
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) x[c] = a->xk + (size_t)(t0 + c) * nb + b0 + kb;
        __m512i isc[2][T];
#pragma GCC unroll 2
        for (int q = 0; q < NG; q++)
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) isc[q][c] = _mm512_setzero_si512();
        for (int u = 0; u < NU; u++) {
            __m512i S[2][T];
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) {
                const __m512i start = _mm512_set1_epi32(-off_of(base) * unit_bsum(base, x[c], u));
#pragma GCC unroll 2
                for (int q = 0; q < NG; q++) S[q][c] = start;
            }
#pragma GCC unroll 8
            for (int v = 0; v < U / 4; v++) {
                __m512i wv[2];
#pragma GCC unroll 2
                for (int q = 0; q < NG; q++) wv[q] = cb[q]->G[u * (U / 4) + v];
#pragma GCC unroll 4
                for (int c = 0; c < C; c++) {
                    const __m512i xv = bcast4(x[c]->qs + U * u + 4 * v);
#pragma GCC unroll 2
                    for (int q = 0; q < NG; q++) S[q][c] = _mm512_dpbusd_epi32(S[q][c], wv[q], xv);
                }
            }
#pragma GCC unroll 2
            for (int q = 0; q < NG; q++)
#pragma GCC unroll 4
                for (int c = 0; c < C; c++)
                    isc[q][c] = _mm512_add_epi32(isc[q][c], _mm512_mullo_epi32(S[q][c], cb[q]->s.SC[u]));
        }
#pragma GCC unroll 2
        for (int q = 0; q < NG; q++)
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) {
                const __m512i im = has_min(base) ? min_sum(&cb[q]->s, x[c]) : _mm512_setzero_si512();
                acc[q][c] = k_step(base, acc[q][c], isc[q][c], im, &cb[q]->s, x[c]->d);
            }
    }
#pragma GCC unroll 2
    for (int q = 0; q < NG; q++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) _mm512_mask_storeu_ps(y0 + (size_t)c * ldy + 16 * q, mask, acc[q][c]);
}

/* The same for family A (32-element blocks, one float step per block). */
T512 INLINE void a_tile(const int base, const int NG, const int C, int q0, int nbk, const acts *a, int t0, int b0,
                        float *y0, int ldy, bool first, __mmask16 mask) {
    const int nb = a->nb;
    __m512 acc[2][T];
#pragma GCC unroll 2
    for (int q = 0; q < NG; q++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++)
            acc[q][c] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask, y0 + (size_t)c * ldy + 16 * q);
    for (int kb = 0; kb < nbk; kb++) {
        const __m512i *G[2] = {chunk_buf[q0 * KCK + kb / 8].G + 8 * (kb % 8),
                               chunk_buf[(q0 + NG - 1) * KCK + kb / 8].G + 8 * (kb % 8)};
        size_t k[T];
        __m512i S[2][T];
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) {
            k[c] = (size_t)(t0 + c) * nb + b0 + kb;
            const __m512i start = _mm512_set1_epi32(-off_of(base) * a->xs[k[c]]);
#pragma GCC unroll 2
            for (int q = 0; q < NG; q++) S[q][c] = start;
        }
#pragma GCC unroll 8
        for (int v = 0; v < 8; v++) {
            __m512i wv[2];
#pragma GCC unroll 2
            for (int q = 0; q < NG; q++) wv[q] = G[q][v];
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) {
                const __m512i xv = bcast4(a->xb[k[c]].qs + 4 * v);
#pragma GCC unroll 2
                for (int q = 0; q < NG; q++) S[q][c] = _mm512_dpbusd_epi32(S[q][c], wv[q], xv);
            }
        }
        __m512 vdx[T], vmx[T];
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) vdx[c] = _mm512_set1_ps(a->xd[k[c]]), vmx[c] = min_factor(base, a->xd[k[c]], a->xs[k[c]]);
#pragma GCC unroll 2
        for (int q = 0; q < NG; q++) {
            const __m512 D = chunk_ad[(q0 + q) * KCA + kb], M = chunk_am[(q0 + q) * KCA + kb];
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) acc[q][c] = a_step(base, acc[q][c], S[q][c], D, M, vdx[c], vmx[c]);
        }
    }
#pragma GCC unroll 2
    for (int q = 0; q < NG; q++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) _mm512_mask_storeu_ps(y0 + (size_t)c * ldy + 16 * q, mask, acc[q][c]);
}

T512 INLINE void tile_c(const int base, const int NG, int C, int q0, int nbk, const acts *a, int t0, int b0,
                        float *y0, int ldy, bool first, __mmask16 mask) {
#define TILE(CC)                                                                              \
    do {                                                                                      \
        if (is_k(base)) k_tile(base, NG, CC, q0, nbk, a, t0, b0, y0, ldy, first, mask);       \
        else a_tile(base, NG, CC, q0, nbk, a, t0, b0, y0, ldy, first, mask);                  \
    } while (0)
    switch (C) {
    case 1: TILE(1); break;
    case 2: TILE(2); break;
    case 3: TILE(3); break;
    default: TILE(4); break;
    }
#undef TILE
}
_Static_assert(T == 4, "tile_c instantiates C = 1..4");

T512 INLINE void prefill_rows(const int base, const char *w, int nb, size_t gb, const acts *a, int n, float *y,
                              int ldy, int r0, int r1) {
    const int kc = is_k(base) ? KCK : KCA;
    const int g_first = r0 / 16, g_end = (r1 + 15) / 16;
    for (int g0 = g_first; g0 < g_end; g0 += RBG) {
        const int ng = g_end - g0 < RBG ? g_end - g0 : RBG;
        for (int b0 = 0; b0 < nb; b0 += kc) {
            const int nbk = nb - b0 < kc ? nb - b0 : kc;
            unpack_chunk(base, w, gb, nb, g0, ng, b0, nbk);
            for (int i = 0; i < n; i += T) {
                const int C = n - i < T ? n - i : T;
                for (int q = 0; q < ng;) {
                    const int rt = (g0 + q) * 16;
                    const int lo = r0 > rt ? r0 - rt : 0, hi = r1 - rt < 16 ? r1 - rt : 16;
                    const __mmask16 m = (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));
                    float *y0 = y + (size_t)i * ldy + rt;
                    const int rt2 = rt + 16;
                    /* pairs of groups, but for Q4_1/Q5_1, whose two more live vectors per token
                     * (dx, dx·Σx) make a pair spill registers: one group is faster */
                    if (m == 0xffff && q + 1 < ng && r1 - rt2 >= 16 && !(has_min(base) && !is_k(base))) {
                        tile_c(base, 2, C, q, nbk, a, i, b0, y0, ldy, b0 == 0, m);
                        q += 2;
                    } else {
                        tile_c(base, 1, C, q, nbk, a, i, b0, y0, ldy, b0 == 0, m);
                        q += 1;
                    }
                }
            }
        }
    }
}

T512 INLINE void rows_of(const kernel_tuning *kt, const int base, const void *w, int cols, const void *xq, int n, float *y, int ldy, int r0,
                         int r1) {
    const acts a = acts_of(base, xq, cols, n);
    const size_t gb = 16 * dtype_row_bytes(base, cols);
    if (n > MM_STREAM_MAX_N) prefill_rows(base, w, a.nb, gb, &a, n, y, ldy, r0, r1);
    else decode_rows(kt, base, w, a.nb, gb, &a, n, y, ldy, r0, r1);
}

T512 void mm_quant_r16_rows_avx512(const mm_call *c) {
    if (c->r1 <= c->r0 || c->n <= 0) return;
    switch (mm_quant_r16_base(c->wtype)) {
    case WICK_Q4_1: rows_of(c->kt, WICK_Q4_1, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_Q5_0: rows_of(c->kt, WICK_Q5_0, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_Q5_1: rows_of(c->kt, WICK_Q5_1, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_IQ4_NL: rows_of(c->kt, WICK_IQ4_NL, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_Q4_K: rows_of(c->kt, WICK_Q4_K, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_Q5_K: rows_of(c->kt, WICK_Q5_K, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_Q6_K: rows_of(c->kt, WICK_Q6_K, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_Q3_K: rows_of(c->kt, WICK_Q3_K, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_Q2_K: rows_of(c->kt, WICK_Q2_K, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_IQ4_XS: rows_of(c->kt, WICK_IQ4_XS, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1); break;
    default: break;
    }
}

#endif
