/* matmul_quant_avx2.c — owns the AVX2 kernels of the file-layout Q4_1, Q5_0,
 * Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K and IQ4_XS matrices (twin:
 * mm_quant_rows_scalar; the arithmetic is THE DEFINITION of matmul_quant.h, so the
 * results are the scalar twin's, bit for bit). Also used on AVX-512 machines
 * for matrices the interleaved layouts do not take (rows not a multiple of 16).
 *
 * One weight row at a time against up to 4 tokens: a block is unpacked once
 * into 32-byte vectors of unsigned quants in element order (vector v =
 * elements 32v..32v+31), then per token VPMADDUBSW with the activation bytes
 * (pair sums within int16: |u| <= 63, or |value| <= 127 for the IQ4 types,
 * which go through the sign trick) and VPMADDWD with the sub-block scales
 * (K types: per 128-bit half, for 16-element sub-blocks) or ones give int32
 * lanes; their sum is the block's exact integer. Offsets (Σ off·x) and mins
 * (Σ m·bsum) are added as integers from the activation sums. Then the
 * definition's fmaf steps, as scalar FMAs. */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <string.h>

#include "kernels/matmul_impl.h"
#include "kernels/matmul_quant.h"
#include "kernels/quant_blocks.h"

#define T256 __attribute__((target("avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

T256 INLINE int32_t hsum8(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

/* fmaf(a, b, c) with one rounding (the FMA instruction). */
T256 INLINE float fma1(float a, float b, float c) {
    return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)));
}

T256 INLINE float half(uint16_t h) { return _cvtsh_ss(h); }

/* 16 bytes of nibbles (Q4_0 order: byte j = elements j, j+16) as 32 quants in element order. */
T256 INLINE __m256i nibbles32(const uint8_t *qs) {
    const __m128i v = _mm_loadu_si128((const __m128i *)qs);
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(v, 4), v);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0f));
}

/* Bit j of h as byte j (0 or 0x10), j < 32. */
T256 INLINE __m256i bits_to_0x10(uint32_t h) {
    const __m256i shuf = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3,
                                          3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    const __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32((int)h), shuf);
    const __m256i on = _mm256_cmpeq_epi8(_mm256_and_si256(b, bit), bit);
    return _mm256_and_si256(on, _mm256_set1_epi8(0x10));
}

T256 INLINE __m256i iq4_values(__m256i nib) {
    const __m256i tbl = _mm256_broadcastsi128_si256(
        _mm_setr_epi8(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113));
    return _mm256_shuffle_epi8(tbl, nib);
}

/* Σ u·x (u unsigned <= 63) as int16 pairs times int16 scales s: int32 lanes. */
T256 INLINE __m256i dot_scaled(__m256i u, const int8_t *x, __m256i s) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, _mm256_loadu_si256((const __m256i *)x)), s);
}
/* Σ v·x for signed v (|v| <= 127): the sign trick keeps VPMADDUBSW from saturating. */
T256 INLINE __m256i dot_signed(__m256i v, const int8_t *x, __m256i s) {
    const __m256i xs = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)x), v);
    return _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(v), xs), s);
}

/* ---- 32-element blocks against Q8_0 activations ---- */

typedef struct xa {
    const block_q8_0 *b;
    const int32_t *s;
    const float *d;
} xa;

/* One row of nb blocks of `type` against NT tokens' activations. */
T256 INLINE void row_a(const int type, const int NT, const char *wr, int nb, const xa *x, float *y, int ldy) {
    const __m256i ones = _mm256_set1_epi16(1);
    float acc[4] = {0, 0, 0, 0};
    for (int b = 0; b < nb; b++) {
        __m256i u;
        float d, m = 0.0f;
        int off = 0;
        switch (type) {
        case WICK_Q4_1: {
            const block_q4_1 *w = (const block_q4_1 *)wr + b;
            u = nibbles32(w->qs), d = half(w->d), m = half(w->m);
            break;
        }
        case WICK_Q5_0: {
            const block_q5_0 *w = (const block_q5_0 *)wr + b;
            u = _mm256_or_si256(nibbles32(w->qs), bits_to_0x10(q5_high_bits(w->qh))), d = half(w->d), off = 16;
            break;
        }
        case WICK_Q5_1: {
            const block_q5_1 *w = (const block_q5_1 *)wr + b;
            u = _mm256_or_si256(nibbles32(w->qs), bits_to_0x10(q5_high_bits(w->qh))), d = half(w->d), m = half(w->m);
            break;
        }
        default: { /* IQ4_NL: signed values */
            const block_iq4_nl *w = (const block_iq4_nl *)wr + b;
            u = iq4_values(nibbles32(w->qs)), d = half(w->d);
            break;
        }
        }
#pragma GCC unroll 4
        for (int t = 0; t < NT; t++) {
            const size_t k = (size_t)t * nb + b;
            const __m256i s = type == WICK_IQ4_NL ? dot_signed(u, x->b[k].qs, ones) : dot_scaled(u, x->b[k].qs, ones);
            const int32_t is = hsum8(s) - off * x->s[k];
            acc[t] = fma1((float)is, d * x->d[k], acc[t]);
            if (type == WICK_Q4_1 || type == WICK_Q5_1) acc[t] = fma1(m, x->d[k] * (float)x->s[k], acc[t]);
        }
    }
#pragma GCC unroll 4
    for (int t = 0; t < NT; t++) y[(size_t)t * ldy] = acc[t];
}

/* ---- 256-element super-blocks against Q8_K activations ---- */

/* One super-block unpacked: 8 vectors of 32 quants in element order, the int16
 * scales for VPMADDWD per vector, the integer factors of the offset and min
 * terms, d and dmin. */
typedef struct kblk {
    __m256i u[8], s[8];
    __m256i f16; /* per 16 elements as int16: the min (Σ m·bsum), or the scale (Σ off·sc·bsum) */
    float d, dmin;
} kblk;

/* int16 scales of vector v: the low 128 bits scale elements 32v..32v+15, the high 32v+16.. */
T256 INLINE __m256i scale_pair(int lo, int hi) {
    return _mm256_set_m128i(_mm_set1_epi16((short)hi), _mm_set1_epi16((short)lo));
}

T256 INLINE void unpack_k(const int type, const char *wb, kblk *k) {
    switch (type) {
    case WICK_Q4_K:
    case WICK_Q5_K: {
        const uint8_t *sc = type == WICK_Q4_K ? ((const block_q4_K *)wb)->scales : ((const block_q5_K *)wb)->scales;
        const uint8_t *qs = type == WICK_Q4_K ? ((const block_q4_K *)wb)->qs : ((const block_q5_K *)wb)->qs;
        const uint16_t d = type == WICK_Q4_K ? ((const block_q4_K *)wb)->d : ((const block_q5_K *)wb)->d;
        const uint16_t dmin = type == WICK_Q4_K ? ((const block_q4_K *)wb)->dmin : ((const block_q5_K *)wb)->dmin;
        const __m256i m4 = _mm256_set1_epi8(0x0f);
        __m256i H = _mm256_setzero_si256();
        if (type == WICK_Q5_K) H = _mm256_loadu_si256((const __m256i *)((const block_q5_K *)wb)->qh);
#pragma GCC unroll 4
        for (int p = 0; p < 4; p++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * p));
            k->u[2 * p] = _mm256_and_si256(q, m4);
            k->u[2 * p + 1] = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
        }
        if (type == WICK_Q5_K) {
            const __m256i m = _mm256_set1_epi8(0x10);
#pragma GCC unroll 8
            for (int j = 0; j < 8; j++) {
                const __m256i b = j < 4 ? _mm256_slli_epi16(H, 4 - j) : _mm256_srli_epi16(H, j - 4);
                k->u[j] = _mm256_or_si256(k->u[j], _mm256_and_si256(b, m));
            }
        }
        /* the 6-bit scales and mins of q4k_scale_min, all 8 at once: bytes
         * of u[0..1] the scales, of u[2..3] the mins */
        uint32_t u[4];
        memcpy(u, sc, 12);
        const uint32_t k6 = 0x3f3f3f3f, k4 = 0x0f0f0f0f, k2 = 0x03030303;
        u[3] = ((u[2] >> 4) & k4) | (((u[1] >> 6) & k2) << 4);
        const uint32_t mins_lo = u[1] & k6;
        u[1] = (u[2] & k4) | (((u[0] >> 6) & k2) << 4);
        u[2] = mins_lo;
        u[0] &= k6;
        uint8_t b8[16];
        memcpy(b8, u, 16);
        for (int j = 0; j < 8; j++) k->s[j] = _mm256_set1_epi16((short)b8[j]);
        const __m128i two = _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
        k->f16 = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)b8), two));
        k->d = half(d), k->dmin = half(dmin);
        break;
    }
    case WICK_Q6_K: {
        const block_q6_K *w = (const block_q6_K *)wb;
        const __m256i m4 = _mm256_set1_epi8(0x0f), m3 = _mm256_set1_epi8(0x30);
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            const __m256i A = _mm256_loadu_si256((const __m256i *)(w->ql + 64 * h));
            const __m256i B = _mm256_loadu_si256((const __m256i *)(w->ql + 64 * h + 32));
            const __m256i Q = _mm256_loadu_si256((const __m256i *)(w->qh + 32 * h));
            k->u[4 * h + 0] = _mm256_or_si256(_mm256_and_si256(A, m4), _mm256_and_si256(_mm256_slli_epi16(Q, 4), m3));
            k->u[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(B, m4), _mm256_and_si256(_mm256_slli_epi16(Q, 2), m3));
            k->u[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(A, 4), m4), _mm256_and_si256(Q, m3));
            k->u[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(B, 4), m4),
                                              _mm256_and_si256(_mm256_srli_epi16(Q, 2), m3));
        }
        for (int v = 0; v < 8; v++) k->s[v] = scale_pair(w->scales[2 * v], w->scales[2 * v + 1]);
        k->f16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w->scales));
        k->d = half(w->d);
        break;
    }
    case WICK_Q3_K: {
        const block_q3_K *w = (const block_q3_K *)wb;
        const __m256i m1 = _mm256_set1_epi8(0x03), m4 = _mm256_set1_epi8(0x04);
        const __m256i HM = _mm256_loadu_si256((const __m256i *)w->hmask);
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            const __m256i Q = _mm256_loadu_si256((const __m256i *)(w->qs + 32 * h));
#pragma GCC unroll 4
            for (int kk = 0; kk < 4; kk++) {
                const int hb = 4 * h + kk; /* hmask bit -> bit 2 */
                const __m256i hi = hb <= 2 ? _mm256_slli_epi16(HM, 2 - hb) : _mm256_srli_epi16(HM, hb - 2);
                k->u[4 * h + kk] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(Q, 2 * kk), m1),
                                                   _mm256_and_si256(hi, m4));
            }
        }
        int8_t sc16[16];
        q3k_scales(w->scales, sc16);
        for (int v = 0; v < 8; v++) k->s[v] = scale_pair(sc16[2 * v], sc16[2 * v + 1]);
        k->f16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)sc16));
        k->d = half(w->d);
        break;
    }
    case WICK_Q2_K: {
        const block_q2_K *w = (const block_q2_K *)wb;
        const __m256i m1 = _mm256_set1_epi8(0x03);
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            const __m256i Q = _mm256_loadu_si256((const __m256i *)(w->qs + 32 * h));
#pragma GCC unroll 4
            for (int kk = 0; kk < 4; kk++) k->u[4 * h + kk] = _mm256_and_si256(_mm256_srli_epi16(Q, 2 * kk), m1);
        }
        for (int v = 0; v < 8; v++) k->s[v] = scale_pair(w->scales[2 * v] & 15, w->scales[2 * v + 1] & 15);
        k->f16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(_mm_loadu_si128((const __m128i *)w->scales), 4),
                                                     _mm_set1_epi8(0x0f)));
        k->d = half(w->d), k->dmin = half(w->dmin);
        break;
    }
    default: { /* IQ4_XS: signed values */
        const block_iq4_xs *w = (const block_iq4_xs *)wb;
        for (int j = 0; j < 8; j++) {
            k->u[j] = iq4_values(nibbles32(w->qs + 16 * j));
            k->s[j] = _mm256_set1_epi16((short)iq4xs_scale(w, j));
        }
        k->d = half(w->d);
        break;
    }
    }
}

T256 INLINE void row_k(const int type, const int NT, const char *wr, int nb, const block_q8_K *X, float *y,
                       int ldy) {
    const size_t bb = dtype_block_bytes(type);
    const bool mins = type == WICK_Q4_K || type == WICK_Q5_K || type == WICK_Q2_K;
    const int off = type == WICK_Q6_K ? 32 : type == WICK_Q3_K ? 4 : 0;
    float acc[4] = {0, 0, 0, 0};
    kblk k;
    for (int b = 0; b < nb; b++) {
        unpack_k(type, wr + (size_t)b * bb, &k);
#pragma GCC unroll 4
        for (int t = 0; t < NT; t++) {
            const block_q8_K *x = X + (size_t)t * nb + b;
            __m256i s = _mm256_setzero_si256();
#pragma GCC unroll 8
            for (int v = 0; v < 8; v++)
                s = _mm256_add_epi32(s, type == WICK_IQ4_XS ? dot_signed(k.u[v], x->qs + 32 * v, k.s[v])
                                                             : dot_scaled(k.u[v], x->qs + 32 * v, k.s[v]));
            /* Σ over the 16 sub-blocks of f16·bsum: the min term, or the offset's */
            const __m256i fb = off || mins ? _mm256_madd_epi16(k.f16, _mm256_loadu_si256((const __m256i *)x->bsums))
                                           : _mm256_setzero_si256();
            if (off) s = _mm256_sub_epi32(s, _mm256_slli_epi32(fb, off == 32 ? 5 : 2));
            const int32_t i1 = hsum8(s), i2 = mins ? hsum8(fb) : 0;
            acc[t] = fma1((float)i1, k.d * x->d, acc[t]);
            if (mins) acc[t] = fma1((float)i2, -(k.dmin * x->d), acc[t]);
        }
    }
#pragma GCC unroll 4
    for (int t = 0; t < NT; t++) y[(size_t)t * ldy] = acc[t];
}

/* Rows [r0, r1) × n tokens, tokens in groups of 4 then one call for the 1..3 left. */
T256 INLINE void rows_of(const int type, const void *w, int cols, const void *xq, int n, float *y, int ldy, int r0,
                         int r1) {
    const size_t rb = dtype_row_bytes(type, cols);
    const bool k = dtype_block_elems(type) == WICK_QK_K;
    const int nb = cols / dtype_block_elems(type);
    xa x = {0};
    if (!k) {
        x.b = xq;
        x.s = (const int32_t *)((const char *)xq + mm_xq_sums_offset(cols, n));
        x.d = (const float *)((const char *)xq + mm_xq_scales_offset(cols, n));
    }
    for (int r = r0; r < r1; r++) {
        const char *wr = (const char *)w + (size_t)r * rb;
        for (int i = 0; i < n;) {
            const int NT = n - i >= 4 ? 4 : n - i;
            float *yo = y + (size_t)i * ldy + r;
            if (k) {
                const block_q8_K *X = (const block_q8_K *)xq + (size_t)i * nb;
                switch (NT) {
                case 4: row_k(type, 4, wr, nb, X, yo, ldy); break;
                case 3: row_k(type, 3, wr, nb, X, yo, ldy); break;
                case 2: row_k(type, 2, wr, nb, X, yo, ldy); break;
                default: row_k(type, 1, wr, nb, X, yo, ldy); break;
                }
            } else {
                const xa xi = {x.b + (size_t)i * nb, x.s + (size_t)i * nb, x.d + (size_t)i * nb};
                switch (NT) {
                case 4: row_a(type, 4, wr, nb, &xi, yo, ldy); break;
                case 3: row_a(type, 3, wr, nb, &xi, yo, ldy); break;
                case 2: row_a(type, 2, wr, nb, &xi, yo, ldy); break;
                default: row_a(type, 1, wr, nb, &xi, yo, ldy); break;
                }
            }
            i += NT;
        }
    }
}

T256 void mm_quant_rows_avx2(const mm_call *c) {
    const void *w = c->w, *xq = c->xq;
    const int cols = c->cols, n = c->n, ldy = c->ldy, r0 = c->r0, r1 = c->r1;
    float *y = c->y;
    switch (c->wtype) {
    case WICK_Q4_1: rows_of(WICK_Q4_1, w, cols, xq, n, y, ldy, r0, r1); break;
    case WICK_Q5_0: rows_of(WICK_Q5_0, w, cols, xq, n, y, ldy, r0, r1); break;
    case WICK_Q5_1: rows_of(WICK_Q5_1, w, cols, xq, n, y, ldy, r0, r1); break;
    case WICK_IQ4_NL: rows_of(WICK_IQ4_NL, w, cols, xq, n, y, ldy, r0, r1); break;
    case WICK_Q4_K: rows_of(WICK_Q4_K, w, cols, xq, n, y, ldy, r0, r1); break;
    case WICK_Q5_K: rows_of(WICK_Q5_K, w, cols, xq, n, y, ldy, r0, r1); break;
    case WICK_Q6_K: rows_of(WICK_Q6_K, w, cols, xq, n, y, ldy, r0, r1); break;
    case WICK_Q3_K: rows_of(WICK_Q3_K, w, cols, xq, n, y, ldy, r0, r1); break;
    case WICK_Q2_K: rows_of(WICK_Q2_K, w, cols, xq, n, y, ldy, r0, r1); break;
    case WICK_IQ4_XS: rows_of(WICK_IQ4_XS, w, cols, xq, n, y, ldy, r0, r1); break;
    default: break;
    }
}

#endif
