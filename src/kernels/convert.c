/* convert.c — owns element conversions: fp16/bf16 <-> f32 and whole-row
 * quantization/dequantization for F32, F16, BF16, Q8_0, Q4_0 and Q6_K, and
 * the dispatch to the other block types' quantizers (quantize.h) and
 * dequantizers (dequant.h); see convert.h.
 *
 * The scalar quantizers follow llama.cpp's reference definitions exactly:
 *   Q8_0: amax = max|x|, d = amax/127, id = d ? 1/d : 0, q = roundf(x*id)
 *   Q4_0: m = the x with the largest |x| (first one, sign kept), d = m/-8,
 *         id = d ? 1/d : 0, q = MIN(15, (int8_t)(x*id + 8.5f)), j and j+16 share byte j
 * and the scale is stored as fp16 rounded to nearest even. The AVX2 and
 * AVX-512 Q8_0 quantizers (used on activations before every quantized
 * matmul) produce identical bytes: same float operations, and roundf's
 * half-away-from-zero rounding done exactly with trunc + compare. */
#include "kernels/convert.h"

#include <math.h>
#include <string.h>

#include "core/tensor.h"
#include "kernels/cpu.h"
#include "kernels/dequant.h"
#include "kernels/quantize.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WICK_X86 1
#else
#define WICK_X86 0
#endif

/* ---- scalar element conversions ---- */

static inline uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float fp16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0) {
        /* zero or subnormal: m * 2^-24, exact in f32 */
        float v = (float)m * 0x1p-24f;
        return bits_f32(f32_bits(v) | sign);
    }
    if (e == 31) return bits_f32(sign | 0x7f800000u | (m ? 0x400000u | (m << 13) : 0)); /* quiet nan */
    return bits_f32(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t f32_to_fp16(float f) {
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) { /* inf or nan (keep nan quiet and non-zero) */
        if (ax == 0x7f800000u) return sign | 0x7c00;
        return sign | 0x7e00 | (uint16_t)((ax >> 13) & 0x3ff);
    }
    int E = (int)(ax >> 23);
    uint32_t mant = ax & 0x7fffff;
    int e = E - 127 + 15;
    if (e >= 31) return sign | 0x7c00; /* overflow */
    if (e >= 1) {
        uint32_t h = ((uint32_t)e << 10) | (mant >> 13);
        uint32_t rem = mant & 0x1fff;
        if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++; /* carry may reach inf: correct */
        return sign | (uint16_t)h;
    }
    /* result is a half subnormal (or zero): round(|f| / 2^-24) */
    if (E == 0) return sign; /* f32 subnormals are far below half's range */
    uint32_t full = mant | 0x800000;
    int s = 126 - E; /* |f| / 2^-24 = full / 2^s */
    if (s >= 25) return sign;
    uint32_t h = full >> s;
    uint32_t rem = full & ((1u << s) - 1), half = 1u << (s - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return sign | (uint16_t)h;
}

float bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t f32_to_bf16(float f) {
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40); /* quiet nan */
    x += 0x7fffu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* ---- scalar row quantizers (the llama.cpp reference definitions) ---- */

static void quantize_q8_0_scalar(const float *x, block_q8_0 *y, int64_t nb) {
    for (int64_t b = 0; b < nb; b++) {
        const float *xb = x + b * WICK_QK;
        float amax = 0.0f;
        for (int j = 0; j < WICK_QK; j++) {
            float a = fabsf(xb[j]);
            if (a > amax) amax = a;
        }
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = f32_to_fp16(d);
        for (int j = 0; j < WICK_QK; j++) y[b].qs[j] = (int8_t)roundf(xb[j] * id);
    }
}

static void quantize_q4_0_scalar(const float *x, block_q4_0 *y, int64_t nb) {
    for (int64_t b = 0; b < nb; b++) {
        const float *xb = x + b * WICK_QK;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < WICK_QK; j++) {
            float a = fabsf(xb[j]);
            if (a > amax) {
                amax = a;
                max = xb[j];
            }
        }
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = f32_to_fp16(d);
        for (int j = 0; j < WICK_QK / 2; j++) {
            int q0 = (int8_t)(xb[j] * id + 8.5f);
            int q1 = (int8_t)(xb[j + WICK_QK / 2] * id + 8.5f);
            if (q0 > 15) q0 = 15;
            if (q1 > 15) q1 = 15;
            y[b].qs[j] = (uint8_t)(q0 | (q1 << 4));
        }
    }
}

static void quantize_q8_k_scalar(const float *x, block_q8_K *y, int64_t nb) {
    for (int64_t b = 0; b < nb; b++) {
        const float *xb = x + b * WICK_QK_K;
        float amax = 0.0f;
        for (int j = 0; j < WICK_QK_K; j++) amax = fmaxf(amax, fabsf(xb[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = d;
        for (int j = 0; j < WICK_QK_K; j++) {
            float v = roundf(xb[j] * id);
            y[b].qs[j] = (int8_t)(v > 127.0f ? 127.0f : v < -127.0f ? -127.0f : v);
        }
        for (int g = 0; g < WICK_QK_K / 16; g++) {
            int s = 0;
            for (int j = 0; j < 16; j++) s += y[b].qs[16 * g + j];
            y[b].bsums[g] = (int16_t)s;
        }
    }
}

/* Q6_K (layout in tensor.h): dequantization is llama.cpp's
 * dequantize_row_q6_K bit for bit, x = (d * scale) * (q - 32) in float. Its
 * quantizer is in quantize_k.c with the other K-quants. */
static inline int q6k_q(const block_q6_K *b, int e) {
    const int h = e >> 7, k = (e >> 5) & 3, l = e & 31;
    const uint8_t lo = b->ql[64 * h + 32 * (k & 1) + l];
    const int low4 = k < 2 ? (lo & 15) : (lo >> 4);
    const int high2 = (b->qh[32 * h + l] >> (2 * k)) & 3;
    return low4 | (high2 << 4);
}

static void dequantize_q6_k(const block_q6_K *x, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const float d = fp16_to_f32(x[i].d);
        for (int e = 0; e < WICK_QK_K; e++)
            y[i * WICK_QK_K + e] = d * (float)x[i].scales[e / 16] * (float)(q6k_q(&x[i], e) - 32);
    }
}

/* ---- SIMD Q8_0 quantizers (bit-identical to the scalar one) ---- */

#if WICK_X86
/* roundf (half away from zero) of floats that hold |v| < 2^23, exactly:
 * t = trunc(v); v - t is exact; step by ±1 when |v - t| >= 0.5. */
__attribute__((target("avx2,fma,f16c"))) static inline __m256 round_away_avx2(__m256 v) {
    const __m256 sign_mask = _mm256_set1_ps(-0.0f);
    __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m256 frac = _mm256_andnot_ps(sign_mask, _mm256_sub_ps(v, t));
    __m256 ge = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
    __m256 one = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_and_ps(sign_mask, v));
    return _mm256_add_ps(t, _mm256_and_ps(ge, one));
}

__attribute__((target("avx2,fma,f16c"))) static void quantize_q8_0_avx2(const float *x,
                                                                          block_q8_0 *y,
                                                                          int64_t nb) {
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (int64_t b = 0; b < nb; b++) {
        const float *xb = x + b * WICK_QK;
        __m256 v0 = _mm256_loadu_ps(xb), v1 = _mm256_loadu_ps(xb + 8);
        __m256 v2 = _mm256_loadu_ps(xb + 16), v3 = _mm256_loadu_ps(xb + 24);
        __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_and_ps(v0, abs_mask), _mm256_and_ps(v1, abs_mask)),
                                 _mm256_max_ps(_mm256_and_ps(v2, abs_mask), _mm256_and_ps(v3, abs_mask)));
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        const float amax = _mm_cvtss_f32(m4);
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = f32_to_fp16(d);
        const __m256 vid = _mm256_set1_ps(id);
        __m256i i0 = _mm256_cvttps_epi32(round_away_avx2(_mm256_mul_ps(v0, vid)));
        __m256i i1 = _mm256_cvttps_epi32(round_away_avx2(_mm256_mul_ps(v1, vid)));
        __m256i i2 = _mm256_cvttps_epi32(round_away_avx2(_mm256_mul_ps(v2, vid)));
        __m256i i3 = _mm256_cvttps_epi32(round_away_avx2(_mm256_mul_ps(v3, vid)));
        /* pack 32 -> 16 -> 8 bits; packs work per 128-bit lane, fix the order after */
        __m256i p01 = _mm256_packs_epi32(i0, i1), p23 = _mm256_packs_epi32(i2, i3);
        __m256i p = _mm256_packs_epi16(p01, p23);
        p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)y[b].qs, p);
    }
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) static inline __m512
round_away_avx512(__m512 v) {
    __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    __m512 frac = _mm512_abs_ps(_mm512_sub_ps(v, t));
    __mmask16 ge = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ);
    __m512 one = _mm512_castsi512_ps(_mm512_or_si512(
        _mm512_castps_si512(_mm512_set1_ps(1.0f)),
        _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32((int)0x80000000u))));
    return _mm512_mask_add_ps(t, ge, t, one);
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) static void
quantize_q8_0_avx512(const float *x, block_q8_0 *y, int64_t nb) {
    for (int64_t b = 0; b < nb; b++) {
        const float *xb = x + b * WICK_QK;
        __m512 v0 = _mm512_loadu_ps(xb), v1 = _mm512_loadu_ps(xb + 16);
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = f32_to_fp16(d);
        const __m512 vid = _mm512_set1_ps(id);
        __m512i i0 = _mm512_cvttps_epi32(round_away_avx512(_mm512_mul_ps(v0, vid)));
        __m512i i1 = _mm512_cvttps_epi32(round_away_avx512(_mm512_mul_ps(v1, vid)));
        _mm_storeu_si128((__m128i *)y[b].qs, _mm512_cvtsepi32_epi8(i0));
        _mm_storeu_si128((__m128i *)(y[b].qs + 16), _mm512_cvtsepi32_epi8(i1));
    }
}

/* Q8_K: 16 vectors of 16 per block; the 16-element sums are the blocks of 16
 * bytes, summed with VPSADBW against zero after a +128 bias (exact). */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static void
quantize_q8_k_avx512(const float *x, block_q8_K *y, int64_t nb) {
    for (int64_t b = 0; b < nb; b++) {
        const float *xb = x + b * WICK_QK_K;
        __m512 v[16], m = _mm512_setzero_ps();
        for (int k = 0; k < 16; k++) {
            v[k] = _mm512_loadu_ps(xb + 16 * k);
            m = _mm512_max_ps(m, _mm512_abs_ps(v[k]));
        }
        const float amax = _mm512_reduce_max_ps(m);
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = d;
        const __m512 vid = _mm512_set1_ps(id);
        for (int k = 0; k < 16; k++) {
            const __m512i q = _mm512_cvttps_epi32(round_away_avx512(_mm512_mul_ps(v[k], vid)));
            _mm_storeu_si128((__m128i *)(y[b].qs + 16 * k), _mm512_cvtsepi32_epi8(q));
            y[b].bsums[k] = (int16_t)_mm512_reduce_add_epi32(q);
        }
    }
}

__attribute__((target("avx2,fma,f16c"))) static void quantize_q8_k_avx2(const float *x, block_q8_K *y, int64_t nb) {
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (int64_t b = 0; b < nb; b++) {
        const float *xb = x + b * WICK_QK_K;
        __m256 m = _mm256_setzero_ps();
        for (int k = 0; k < 32; k++) m = _mm256_max_ps(m, _mm256_and_ps(_mm256_loadu_ps(xb + 8 * k), abs_mask));
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        const float amax = _mm_cvtss_f32(m4);
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = d;
        const __m256 vid = _mm256_set1_ps(id);
        for (int k = 0; k < 16; k++) {
            __m256i i0 = _mm256_cvttps_epi32(round_away_avx2(_mm256_mul_ps(_mm256_loadu_ps(xb + 16 * k), vid)));
            __m256i i1 = _mm256_cvttps_epi32(round_away_avx2(_mm256_mul_ps(_mm256_loadu_ps(xb + 16 * k + 8), vid)));
            __m256i s = _mm256_add_epi32(i0, i1);
            __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
            s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
            s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
            y[b].bsums[k] = (int16_t)_mm_cvtsi128_si32(s4);
            /* 16 int32 -> 16 int8 (values within ±127: no saturation) */
            __m128i p = _mm_packs_epi32(_mm256_castsi256_si128(i0), _mm256_extracti128_si256(i0, 1));
            __m128i q = _mm_packs_epi32(_mm256_castsi256_si128(i1), _mm256_extracti128_si256(i1, 1));
            _mm_storeu_si128((__m128i *)(y[b].qs + 16 * k), _mm_packs_epi16(p, q));
        }
    }
}

/* F16 rows via F16C */
__attribute__((target("avx2,fma,f16c"))) static void fp16_to_f32_row_f16c(const uint16_t *s,
                                                                            float *d, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
    for (; i < n; i++) d[i] = fp16_to_f32(s[i]);
}

__attribute__((target("avx2,fma,f16c"))) static void f32_to_fp16_row_f16c(const float *s,
                                                                            uint16_t *d, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(d + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) d[i] = f32_to_fp16(s[i]);
}
#endif

/* ---- row entry points ---- */

void quantize_row_q8_0_isa(const float *x, void *y, int64_t n, int isa) {
    int64_t nb = n / WICK_QK;
#if WICK_X86
    if (isa >= ISA_AVX512) {
        quantize_q8_0_avx512(x, y, nb);
        return;
    }
    if (isa >= ISA_AVX2) {
        quantize_q8_0_avx2(x, y, nb);
        return;
    }
#else
    (void)isa;
#endif
    quantize_q8_0_scalar(x, y, nb);
}

void quantize_row_q8_k_isa(const float *x, void *y, int64_t nb, int isa) {
#if WICK_X86
    if (isa >= ISA_AVX512) {
        quantize_q8_k_avx512(x, y, nb);
        return;
    }
    if (isa >= ISA_AVX2) {
        quantize_q8_k_avx2(x, y, nb);
        return;
    }
#else
    (void)isa;
#endif
    quantize_q8_k_scalar(x, y, nb);
}

void dequantize_row(int type, const void *src, float *dst, int64_t n) {
    switch (type) {
    case WICK_F32:
        memcpy(dst, src, (size_t)n * sizeof(float));
        break;
    case WICK_F16: {
        const uint16_t *s = src;
#if WICK_X86
        if (cpu_best_isa() >= ISA_AVX2) {
            fp16_to_f32_row_f16c(s, dst, n);
            break;
        }
#endif
        for (int64_t i = 0; i < n; i++) dst[i] = fp16_to_f32(s[i]);
        break;
    }
    case WICK_BF16: {
        const uint16_t *s = src;
        for (int64_t i = 0; i < n; i++) dst[i] = bf16_to_f32(s[i]);
        break;
    }
    case WICK_Q8_0: {
        const block_q8_0 *b = src;
        for (int64_t i = 0; i < n / WICK_QK; i++) {
            const float d = fp16_to_f32(b[i].d);
            for (int j = 0; j < WICK_QK; j++) dst[i * WICK_QK + j] = d * (float)b[i].qs[j];
        }
        break;
    }
    case WICK_Q4_0: {
        const block_q4_0 *b = src;
        for (int64_t i = 0; i < n / WICK_QK; i++) {
            const float d = fp16_to_f32(b[i].d);
            for (int j = 0; j < WICK_QK / 2; j++) {
                dst[i * WICK_QK + j] = d * (float)((b[i].qs[j] & 15) - 8);
                dst[i * WICK_QK + j + WICK_QK / 2] = d * (float)((b[i].qs[j] >> 4) - 8);
            }
        }
        break;
    }
    case WICK_Q6_K:
        dequantize_q6_k(src, dst, n / WICK_QK_K);
        break;
    default:
        dequantize_row_more(type, src, dst, n); /* the other block types (dequant.c) */
        break;
    }
}

void quantize_row(int type, const float *src, void *dst, int64_t n) {
    switch (type) {
    case WICK_F32:
        memcpy(dst, src, (size_t)n * sizeof(float));
        break;
    case WICK_F16: {
        uint16_t *d = dst;
#if WICK_X86
        if (cpu_best_isa() >= ISA_AVX2) {
            f32_to_fp16_row_f16c(src, d, n);
            break;
        }
#endif
        for (int64_t i = 0; i < n; i++) d[i] = f32_to_fp16(src[i]);
        break;
    }
    case WICK_BF16: {
        uint16_t *d = dst;
        for (int64_t i = 0; i < n; i++) d[i] = f32_to_bf16(src[i]);
        break;
    }
    case WICK_Q8_0:
        quantize_row_q8_0_isa(src, dst, n, cpu_best_isa());
        break;
    case WICK_Q4_0:
        quantize_q4_0_scalar(src, dst, n / WICK_QK);
        break;
    default:
        quantize_row_more(type, src, dst, n); /* the other block types (quantize.h) */
        break;
    }
}

bool quantize_row_supported(int type) {
    return dtype_supported(type); /* every type wick computes with, it can also write */
}

const char *quantize_row_type_names(void) {
    return "f32, f16, bf16, q8_0, q6_k, q5_k, q5_1, q5_0, q4_k, q4_1, q4_0, iq4_nl, iq4_xs, q3_k, q2_k";
}
