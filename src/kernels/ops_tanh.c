/* ops_tanh.c — owns the row kernels built on tanh: GELU gating (GeGLU, Gemma)
 * and soft-capping (Gemma 2 logits), plus the small scaled adds the
 * architectures with GELU (Gemma) and soft-capping need (see ops.h).
 *
 * Each has a scalar twin (libm tanhf / expf) and AVX2 / AVX-512 versions
 * (simd_math.h's exp and tanh, ~1e-7 relative) picked by the active ISA;
 * tests/test_kernels.c compares them on random inputs of odd lengths.
 * GELU is evaluated as x·sigmoid(2t), t = sqrt(2/pi)·(x + 0.044715·x³):
 * 0.5·(1 + tanh(t)) = 1 / (1 + e^{-2t}) exactly, and the sigmoid form keeps
 * its relative accuracy for large negative x where 1 + tanh(t) cancels. */
#include <math.h>

#include "kernels/cpu.h"
#include "kernels/ops.h"
#include "kernels/simd_math.h"

#define GELU_K0 0.7978845608028654f /* sqrt(2/pi) */
#define GELU_K1 0.044715f

static inline float gelu_tanh_scalar(float x) {
    const float t = GELU_K0 * (x + GELU_K1 * x * x * x);
    return x / (1.0f + expf(-2.0f * t));
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,fma,f16c"))) static int gelu_mul_avx2(float *g, const float *u, int n) {
    int i = 0;
    const __m256 k0 = _mm256_set1_ps(-2.0f * GELU_K0), k1 = _mm256_set1_ps(GELU_K1), one = _mm256_set1_ps(1.0f);
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(g + i);
        const __m256 inner = _mm256_fmadd_ps(_mm256_mul_ps(k1, x), _mm256_mul_ps(x, x), x);
        const __m256 den = _mm256_add_ps(one, exp256(_mm256_mul_ps(k0, inner)));
        _mm256_storeu_ps(g + i, _mm256_mul_ps(_mm256_div_ps(x, den), _mm256_loadu_ps(u + i)));
    }
    return i;
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"))) static int gelu_mul_avx512(float *g, const float *u,
                                                                                             int n) {
    int i = 0;
    const __m512 k0 = _mm512_set1_ps(-2.0f * GELU_K0), k1 = _mm512_set1_ps(GELU_K1), one = _mm512_set1_ps(1.0f);
    for (; i + 16 <= n; i += 16) {
        const __m512 x = _mm512_loadu_ps(g + i);
        const __m512 inner = _mm512_fmadd_ps(_mm512_mul_ps(k1, x), _mm512_mul_ps(x, x), x);
        const __m512 den = _mm512_add_ps(one, exp512(_mm512_mul_ps(k0, inner)));
        _mm512_storeu_ps(g + i, _mm512_mul_ps(_mm512_div_ps(x, den), _mm512_loadu_ps(u + i)));
    }
    return i;
}

__attribute__((target("avx2,fma,f16c"))) static int softcap_avx2(float *x, int n, float cap) {
    int i = 0;
    const __m256 c = _mm256_set1_ps(cap), inv = _mm256_set1_ps(1.0f / cap);
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, _mm256_mul_ps(c, tanh256(_mm256_mul_ps(_mm256_loadu_ps(x + i), inv))));
    return i;
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"))) static int softcap_avx512(float *x, int n,
                                                                                           float cap) {
    int i = 0;
    const __m512 c = _mm512_set1_ps(cap), inv = _mm512_set1_ps(1.0f / cap);
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(x + i, _mm512_mul_ps(c, tanh512(_mm512_mul_ps(_mm512_loadu_ps(x + i), inv))));
    return i;
}
#endif

void gelu_mul(const kernel_tuning *kt, float *g, const float *u, int n) {
    int i = 0;
#if defined(__x86_64__) || defined(__i386__)
    const cpu_isa isa = kt->isa;
    if (isa >= ISA_AVX512) i = gelu_mul_avx512(g, u, n);
    else if (isa >= ISA_AVX2) i = gelu_mul_avx2(g, u, n);
#endif
    for (; i < n; i++) g[i] = gelu_tanh_scalar(g[i]) * u[i];
}

void softcap_row(const kernel_tuning *kt, float *x, int n, float cap) {
    int i = 0;
#if defined(__x86_64__) || defined(__i386__)
    const cpu_isa isa = kt->isa;
    if (isa >= ISA_AVX512) i = softcap_avx512(x, n, cap);
    else if (isa >= ISA_AVX2) i = softcap_avx2(x, n, cap);
#endif
    const float inv = 1.0f / cap;
    for (; i < n; i++) x[i] = cap * tanhf(x[i] * inv);
}

void vec_scale(float *x, int n, float s) {
    for (int i = 0; i < n; i++) x[i] *= s;
}

void vec_add_scaled(float *restrict y, const float *restrict x, float s, int n) {
    for (int i = 0; i < n; i++) y[i] += s * x[i];
}

void rope_angles_scaled(int32_t pos, const float *inv_freq, double mscale, int i0, int i1, float *cs, float *sn) {
    for (int i = i0; i < i1; i++) {
        const double a = (double)pos * (double)inv_freq[i];
        cs[i - i0] = (float)(cos(a) * mscale);
        sn[i - i0] = (float)(sin(a) * mscale);
    }
}
