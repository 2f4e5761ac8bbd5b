/* ops.c — owns the small row kernels of the forward pass: RMSNorm, RoPE,
 * SiLU gating, residual add and softmax (see ops.h).
 *
 * Mostly scalar C (a small share of the time); SiLU and softmax, which
 * call exp once per element, have AVX2 / AVX-512 versions (simd_math.h,
 * ~2 ulp) chosen by the active ISA. RoPE computes each angle as
 * (double)pos * inv_freq[i] and its cos/sin in double, rounding once to
 * float, so a rotation by p then q matches one by p+q to float precision. */
#include "kernels/ops.h"

#include <math.h>

#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/simd_math.h"

void rmsnorm(float *out, const float *x, const float *w, int n, float eps) {
    double ss = 0.0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    const float scale = (float)(1.0 / sqrt(ss / n + (double)eps));
    if (w) {
        for (int i = 0; i < n; i++) out[i] = x[i] * scale * w[i];
    } else {
        for (int i = 0; i < n; i++) out[i] = x[i] * scale;
    }
}

#define ROPE_MAX_PAIRS 512

void rope(float *x, int n, int stride, int n_heads, int head_dim, int rot_dim,
          const int32_t *pos, const float *inv_freq, rope_style style) {
    const int half = rot_dim / 2;
    float cs[ROPE_MAX_PAIRS], sn[ROPE_MAX_PAIRS];
    for (int r = 0; r < n; r++) {
        float *row = x + (int64_t)r * stride;
        /* cos/sin once per row, shared by its heads (chunks of ROPE_MAX_PAIRS) */
        for (int i0 = 0; i0 < half; i0 += ROPE_MAX_PAIRS) {
            const int i1 = half - i0 < ROPE_MAX_PAIRS ? half : i0 + ROPE_MAX_PAIRS;
            for (int i = i0; i < i1; i++) {
                const double a = (double)pos[r] * (double)inv_freq[i];
                cs[i - i0] = (float)cos(a);
                sn[i - i0] = (float)sin(a);
            }
            for (int h = 0; h < n_heads; h++) {
                float *hd = row + (int64_t)h * head_dim;
                for (int i = i0; i < i1; i++) {
                    const int ia = style == ROPE_INTERLEAVED ? 2 * i : i;
                    const int ib = style == ROPE_INTERLEAVED ? 2 * i + 1 : i + half;
                    const float a = hd[ia], b = hd[ib], c = cs[i - i0], s = sn[i - i0];
                    hd[ia] = a * c - b * s;
                    hd[ib] = a * s + b * c;
                }
            }
        }
    }
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,fma,f16c"))) static int silu_mul_avx2(float *g, const float *u, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(g + i);
        const __m256 den = _mm256_add_ps(_mm256_set1_ps(1.0f), exp256(_mm256_sub_ps(_mm256_setzero_ps(), x)));
        _mm256_storeu_ps(g + i, _mm256_mul_ps(_mm256_div_ps(x, den), _mm256_loadu_ps(u + i)));
    }
    return i;
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"))) static int
silu_mul_avx512(float *g, const float *u, int n) {
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 x = _mm512_loadu_ps(g + i);
        const __m512 den = _mm512_add_ps(_mm512_set1_ps(1.0f), exp512(_mm512_sub_ps(_mm512_setzero_ps(), x)));
        _mm512_storeu_ps(g + i, _mm512_mul_ps(_mm512_div_ps(x, den), _mm512_loadu_ps(u + i)));
    }
    return i;
}

/* x[i] = exp(x[i] - m) for the vector part; returns how many were done and their sum. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"))) static int
exp_sub_avx512(float *x, int n, float m, double *sum) {
    int i = 0;
    __m512 acc = _mm512_setzero_ps();
    const __m512 vm = _mm512_set1_ps(m);
    for (; i + 16 <= n; i += 16) {
        const __m512 e = exp512(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm));
        _mm512_storeu_ps(x + i, e);
        acc = _mm512_add_ps(acc, e);
    }
    *sum = _mm512_reduce_add_ps(acc);
    return i;
}

__attribute__((target("avx2,fma,f16c"))) static int exp_sub_avx2(float *x, int n, float m,
                                                                double *sum) {
    int i = 0;
    __m256 acc = _mm256_setzero_ps();
    const __m256 vm = _mm256_set1_ps(m);
    for (; i + 8 <= n; i += 8) {
        const __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
        _mm256_storeu_ps(x + i, e);
        acc = _mm256_add_ps(acc, e);
    }
    float t[8];
    _mm256_storeu_ps(t, acc);
    double s = 0.0;
    for (int k = 0; k < 8; k++) s += t[k];
    *sum = s;
    return i;
}
#endif

void silu_mul(float *g, const float *u, int n) {
    int i = 0;
#if defined(__x86_64__) || defined(__i386__)
    const cpu_isa isa = cpu_isa_active();
    if (isa >= ISA_AVX512) i = silu_mul_avx512(g, u, n);
    else if (isa >= ISA_AVX2) i = silu_mul_avx2(g, u, n);
#endif
    for (; i < n; i++) g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

void f32_to_f16_row_scalar(const float *x, uint16_t *y, int n) {
    for (int i = 0; i < n; i++) y[i] = f32_to_fp16(x[i]);
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,fma,f16c"))) static int f32_to_f16_avx2(const float *x, uint16_t *y, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return i;
}
#endif

void f32_to_f16_row(const float *x, uint16_t *y, int n) {
    int i = 0;
#if defined(__x86_64__) || defined(__i386__)
    if (cpu_isa_active() >= ISA_AVX2) i = f32_to_f16_avx2(x, y, n);
#endif
    for (; i < n; i++) y[i] = f32_to_fp16(x[i]);
}

void vec_add(float *y, const float *x, int n) {
    for (int i = 0; i < n; i++) y[i] += x[i];
}

void softmax(float *x, int n) {
    if (n <= 0) return;
    float m = x[0];
    for (int i = 1; i < n; i++)
        if (x[i] > m) m = x[i];
    double sum = 0.0;
    int i = 0;
#if defined(__x86_64__) || defined(__i386__)
    const cpu_isa isa = cpu_isa_active();
    if (isa >= ISA_AVX512) i = exp_sub_avx512(x, n, m, &sum);
    else if (isa >= ISA_AVX2) i = exp_sub_avx2(x, n, m, &sum);
#endif
    for (; i < n; i++) {
        x[i] = expf(x[i] - m);
        sum += x[i];
    }
    const float inv = (float)(1.0 / sum);
    for (i = 0; i < n; i++) x[i] *= inv;
}
