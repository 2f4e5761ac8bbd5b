/* simd_math.h — vector e^x and tanh, the 8-float horizontal sum and the
 * 16-sums-in-one-vector reduction tree for the kernels
 * (internal to src/kernels).
 *
 * exp256/exp512: x is clamped to [-87, 88]; n = round(x·log2 e), r = x - n·ln 2
 * (two-part ln 2), e^r by its degree-7 Taylor polynomial (|r| <= 0.35, so the
 * truncation error is below 1e-8), then scaled by 2^n. Relative error about
 * 2 ulp over the range; inputs below -87 give ~1e-38 instead of 0.
 *
 * tanh256/tanh512: for |x| < 0.25 the odd Taylor polynomial to x^7 (relative
 * error below 1e-7), else 1 - 2/(e^{2|x|} + 1) (absolute error ~1e-7), with
 * the sign of x; ±1 beyond |x| ~ 44. */
#ifndef WICK_KERNELS_SIMD_MATH_H
#define WICK_KERNELS_SIMD_MATH_H

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define SM_T256 __attribute__((target("avx2,fma,f16c"), always_inline))
#define SM_T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"), always_inline))

#define SM_EXP_POLY(FMA, SET, r)                                   \
    do {                                                           \
        p = SET(1.0f / 5040.0f);                                   \
        p = FMA(p, r, SET(1.0f / 720.0f));                         \
        p = FMA(p, r, SET(1.0f / 120.0f));                         \
        p = FMA(p, r, SET(1.0f / 24.0f));                          \
        p = FMA(p, r, SET(1.0f / 6.0f));                           \
        p = FMA(p, r, SET(0.5f));                                  \
        p = FMA(p, r, SET(1.0f));                                  \
        p = FMA(p, r, SET(1.0f));                                  \
    } while (0)

/* Σ of the 8 lanes: (lo + hi) halves, then pairs, then the last two. */
static inline SM_T256 float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Sixteen dot products packed into one vector (attention's scores of 16
 * keys, small matmuls' 16 rows): every sum reduced by the same tree whatever
 * its place, ((e0 + e2) + (e1 + e3)) within each 128-bit lane, then
 * ((L0 + L2) + (L1 + L3)) over the lanes.
 * hsum4x: P[u] (u < 4) summed within each 128-bit lane: lane L of the result holds
 * [Σ P[0], Σ P[1], Σ P[2], Σ P[3]] over lane L's four floats. */
static inline SM_T512 __m512 hsum4x(const __m512 P[4]) {
    const __m512 q0 = _mm512_add_ps(_mm512_unpacklo_ps(P[0], P[1]), _mm512_unpackhi_ps(P[0], P[1]));
    const __m512 q1 = _mm512_add_ps(_mm512_unpacklo_ps(P[2], P[3]), _mm512_unpackhi_ps(P[2], P[3]));
    const __m512d a = _mm512_castps_pd(q0), b = _mm512_castps_pd(q1);
    return _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)), _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
}

/* hsum16: R[g] = hsum4x of sums 4g..4g+3; lane t of the result = sum t, whole. */
static inline SM_T512 __m512 hsum16(const __m512 R[4]) {
    const __m512 t01 = _mm512_add_ps(_mm512_shuffle_f32x4(R[0], R[1], 0x44), _mm512_shuffle_f32x4(R[0], R[1], 0xee));
    const __m512 t23 = _mm512_add_ps(_mm512_shuffle_f32x4(R[2], R[3], 0x44), _mm512_shuffle_f32x4(R[2], R[3], 0xee));
    return _mm512_add_ps(_mm512_shuffle_f32x4(t01, t23, 0x88), _mm512_shuffle_f32x4(t01, t23, 0xdd));
}

static inline SM_T256 __m256 exp256(__m256 x) {
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606765330187045e-06f), r);
    __m256 p;
    SM_EXP_POLY(_mm256_fmadd_ps, _mm256_set1_ps, r);
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

static inline SM_T512 __m512 exp512(__m512 x) {
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606765330187045e-06f), r);
    __m512 p;
    SM_EXP_POLY(_mm512_fmadd_ps, _mm512_set1_ps, r);
    return _mm512_scalef_ps(p, n);
}

static inline SM_T256 __m256 tanh256(__m256 x) {
    const __m256 sign = _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u));
    const __m256 ax = _mm256_andnot_ps(sign, x), one = _mm256_set1_ps(1.0f);
    const __m256 e = exp256(_mm256_add_ps(ax, ax));
    const __m256 big = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
    const __m256 x2 = _mm256_mul_ps(x, x);
    __m256 p = _mm256_set1_ps(-17.0f / 315.0f);
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(2.0f / 15.0f));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-1.0f / 3.0f));
    const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, x2), ax, ax);
    const __m256 r = _mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.25f), _CMP_LT_OQ));
    return _mm256_or_ps(r, _mm256_and_ps(x, sign));
}

static inline SM_T512 __m512 tanh512(__m512 x) {
    const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
    const __m512 ax = _mm512_abs_ps(x), one = _mm512_set1_ps(1.0f);
    const __m512 e = exp512(_mm512_add_ps(ax, ax));
    const __m512 big = _mm512_sub_ps(one, _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(e, one)));
    const __m512 x2 = _mm512_mul_ps(x, x);
    __m512 p = _mm512_set1_ps(-17.0f / 315.0f);
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(2.0f / 15.0f));
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(-1.0f / 3.0f));
    const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(p, x2), ax, ax);
    const __m512 r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.25f), _CMP_LT_OQ), big, small);
    return _mm512_castsi512_ps(
        _mm512_or_si512(_mm512_castps_si512(r), _mm512_and_si512(_mm512_castps_si512(x), sign)));
}

#endif
#endif
