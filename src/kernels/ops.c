/* ops.c — owns the small row kernels of the forward pass: RMSNorm, RoPE,
 * SiLU gating, residual add and softmax, and the non-temporal copy that
 * hands decode activations to the other threads (see ops.h).
 *
 * Mostly scalar C (a small share of the time); SiLU and softmax, which
 * call exp once per element, have AVX2 / AVX-512 versions (simd_math.h,
 * ~2 ulp) chosen by the active ISA, and so does RMSNorm's sum of squares
 * (double lanes in a fixed order: the same bits on every ISA). RoPE
 * computes each angle as (double)pos * inv_freq[i] and its cos/sin in
 * double, rounding once to float, so a rotation by p then q matches one by
 * p+q to float precision. */
#include "kernels/ops.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/simd_math.h"

/* Σ x² in double over 8 lanes (element i into lane i % 8; each square is
 * exact in double), the lanes summed in a fixed tree: the order the SIMD
 * versions keep, so every ISA gives the same bits. */
static double sumsq_lanes(const double s[8]) {
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

double rmsnorm_sumsq_scalar(const float *x, int n) {
    double s[8] = {0};
    for (int i = 0; i < n; i++) s[i % 8] += (double)x[i] * x[i];
    return sumsq_lanes(s);
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,fma,f16c"))) static double sumsq_avx2(const float *x, int n) {
    __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256d a = _mm256_cvtps_pd(_mm_loadu_ps(x + i)), b = _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4));
        lo = _mm256_fmadd_pd(a, a, lo);
        hi = _mm256_fmadd_pd(b, b, hi);
    }
    double s[8];
    _mm256_storeu_pd(s, lo);
    _mm256_storeu_pd(s + 4, hi);
    for (; i < n; i++) s[i % 8] += (double)x[i] * x[i];
    return sumsq_lanes(s);
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"))) static double sumsq_avx512(const float *x, int n) {
    __m512d acc = _mm512_setzero_pd();
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m512d a = _mm512_cvtps_pd(_mm256_loadu_ps(x + i));
        acc = _mm512_fmadd_pd(a, a, acc);
    }
    double s[8];
    _mm512_storeu_pd(s, acc);
    for (; i < n; i++) s[i % 8] += (double)x[i] * x[i];
    return sumsq_lanes(s);
}

/* out[i] = x[i] * scale (* w[i]) for the vector part; elementwise, so the
 * same bits as the scalar loop. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"))) static int
scale_avx512(float *out, const float *x, float scale, const float *w, int n) {
    const __m512 sc = _mm512_set1_ps(scale);
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_mul_ps(_mm512_loadu_ps(x + i), sc);
        if (w) v = _mm512_mul_ps(v, _mm512_loadu_ps(w + i));
        _mm512_storeu_ps(out + i, v);
    }
    return i;
}
#endif

void rmsnorm(const kernel_tuning *kt, float *out, const float *x, const float *w, int n, float eps) {
    double ss;
    int i = 0;
#if defined(__x86_64__) || defined(__i386__)
    const cpu_isa isa = kt->isa;
    if (isa >= ISA_AVX512) ss = sumsq_avx512(x, n);
    else if (isa >= ISA_AVX2) ss = sumsq_avx2(x, n);
    else
#endif
        ss = rmsnorm_sumsq_scalar(x, n);
    const float scale = (float)(1.0 / sqrt(ss / n + (double)eps));
#if defined(__x86_64__) || defined(__i386__)
    if (isa >= ISA_AVX512) i = scale_avx512(out, x, scale, w, n);
#endif
    if (w) {
        for (; i < n; i++) out[i] = x[i] * scale * w[i];
    } else {
        for (; i < n; i++) out[i] = x[i] * scale;
    }
}

#define ROPE_MAX_PAIRS 512

void rope_angles(int32_t pos, const float *inv_freq, int i0, int i1, float *cs, float *sn) {
    for (int i = i0; i < i1; i++) {
        const double a = (double)pos * (double)inv_freq[i];
        cs[i - i0] = (float)cos(a);
        sn[i - i0] = (float)sin(a);
    }
}

#if defined(__x86_64__) || defined(__i386__)
/* Pairs (i, i + half) for i in [i0, i0 + 16k) of one head: a·c - b·s and
 * a·s + b·c as separate multiplies and adds, the scalar loop's bits. */
__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"))) static int
rope_halves_avx512(float *hd, int half, int i0, int i1, const float *cs, const float *sn) {
    int i = i0;
    for (; i + 16 <= i1; i += 16) {
        const __m512 a = _mm512_loadu_ps(hd + i), b = _mm512_loadu_ps(hd + i + half);
        const __m512 c = _mm512_loadu_ps(cs + (i - i0)), s = _mm512_loadu_ps(sn + (i - i0));
        _mm512_storeu_ps(hd + i, _mm512_sub_ps(_mm512_mul_ps(a, c), _mm512_mul_ps(b, s)));
        _mm512_storeu_ps(hd + i + half, _mm512_add_ps(_mm512_mul_ps(a, s), _mm512_mul_ps(b, c)));
    }
    return i;
}
#endif

void rope_rotate(const kernel_tuning *kt, float *row, int n_heads, int head_dim, int rot_dim, int i0, int i1, const float *cs,
                 const float *sn, rope_style style) {
    const int half = rot_dim / 2;
#if defined(__x86_64__) || defined(__i386__)
    const bool simd = style == ROPE_HALVES && kt->isa >= ISA_AVX512;
#else
    const bool simd = false;
#endif
    for (int h = 0; h < n_heads; h++) {
        float *hd = row + (int64_t)h * head_dim;
        int i = i0;
#if defined(__x86_64__) || defined(__i386__)
        if (simd) i = rope_halves_avx512(hd, half, i0, i1, cs, sn);
#endif
        for (; i < i1; i++) {
            const int ia = style == ROPE_INTERLEAVED ? 2 * i : i;
            const int ib = style == ROPE_INTERLEAVED ? 2 * i + 1 : i + half;
            const float a = hd[ia], b = hd[ib], c = cs[i - i0], s = sn[i - i0];
            hd[ia] = a * c - b * s;
            hd[ib] = a * s + b * c;
        }
    }
}

void rope(const kernel_tuning *kt, float *x, int n, int stride, int n_heads, int head_dim, int rot_dim,
          const int32_t *pos, const float *inv_freq, rope_style style) {
    const int half = rot_dim / 2;
    float cs[ROPE_MAX_PAIRS], sn[ROPE_MAX_PAIRS];
    for (int r = 0; r < n; r++) {
        float *row = x + (int64_t)r * stride;
        /* cos/sin once per row, shared by its heads (chunks of ROPE_MAX_PAIRS) */
        for (int i0 = 0; i0 < half; i0 += ROPE_MAX_PAIRS) {
            const int i1 = half - i0 < ROPE_MAX_PAIRS ? half : i0 + ROPE_MAX_PAIRS;
            rope_angles(pos[r], inv_freq, i0, i1, cs, sn);
            rope_rotate(kt, row, n_heads, head_dim, rot_dim, i0, i1, cs, sn, style);
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

void silu_mul(const kernel_tuning *kt, float *g, const float *u, int n) {
    int i = 0;
#if defined(__x86_64__) || defined(__i386__)
    const cpu_isa isa = kt->isa;
    if (isa >= ISA_AVX512) i = silu_mul_avx512(g, u, n);
    else if (isa >= ISA_AVX2) i = silu_mul_avx2(g, u, n);
#endif
    for (; i < n; i++) g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

void copy_nt_scalar(void *dst, const void *src, size_t n) {
    if (n) memcpy(dst, src, n);
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2"))) static void copy_nt_avx2(char *d, const char *s, size_t n) {
    size_t head = (64 - (uintptr_t)d % 64) % 64; /* bytes up to dst's next line */
    if (head > n) head = n;
    memcpy(d, s, head);
    size_t o = head;
    for (; o + 64 <= n; o += 64) {
        _mm256_stream_si256((__m256i *)(d + o), _mm256_loadu_si256((const __m256i *)(s + o)));
        _mm256_stream_si256((__m256i *)(d + o + 32), _mm256_loadu_si256((const __m256i *)(s + o + 32)));
    }
    _mm_sfence();
    memcpy(d + o, s + o, n - o);
}
#endif

void copy_nt(void *dst, const void *src, size_t n) {
#if defined(__x86_64__) || defined(__i386__)
    if (cpu_best_isa() >= ISA_AVX2) {
        copy_nt_avx2(dst, src, n);
        return;
    }
#endif
    copy_nt_scalar(dst, src, n);
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
    if (cpu_best_isa() >= ISA_AVX2) i = f32_to_f16_avx2(x, y, n);
#endif
    for (; i < n; i++) y[i] = f32_to_fp16(x[i]);
}

void f16_to_f32_row_scalar(const uint16_t *x, float *y, int n) {
    for (int i = 0; i < n; i++) y[i] = fp16_to_f32(x[i]);
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,fma,f16c"))) static int f16_to_f32_avx2(const uint16_t *x, float *y, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))));
    return i;
}
#endif

void f16_to_f32_row(const uint16_t *x, float *y, int n) {
    int i = 0;
#if defined(__x86_64__) || defined(__i386__)
    if (cpu_best_isa() >= ISA_AVX2) i = f16_to_f32_avx2(x, y, n);
#endif
    for (; i < n; i++) y[i] = fp16_to_f32(x[i]);
}

/* One F16 head row rotated: widen, rope_rotate's arithmetic (a·c − b·s,
 * a·s + b·c, each product rounded, no FMA), narrow. */
void rope_rotate_f16_scalar(const uint16_t *src, uint16_t *dst, int head_dim, int rot_dim, const float *cs,
                            const float *sn, rope_style style) {
    float row[ROPE_F16_MAX_DIM];
    f16_to_f32_row_scalar(src, row, head_dim);
    const int half = rot_dim / 2;
    for (int i = 0; i < half; i++) {
        const int ia = style == ROPE_INTERLEAVED ? 2 * i : i;
        const int ib = style == ROPE_INTERLEAVED ? 2 * i + 1 : i + half;
        const float a = row[ia], b = row[ib], c = cs[i], s = sn[i];
        row[ia] = a * c - b * s;
        row[ib] = a * s + b * c;
    }
    f32_to_f16_row_scalar(row, dst, head_dim);
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"))) static void
rope_f16_halves_avx512(const uint16_t *src, uint16_t *dst, int head_dim, int half, const float *cs, const float *sn) {
    for (int i = 0; i < half; i += 16) {
        const __m512 a = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i)));
        const __m512 b = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i + half)));
        const __m512 c = _mm512_loadu_ps(cs + i), s = _mm512_loadu_ps(sn + i);
        const __m512 ra = _mm512_sub_ps(_mm512_mul_ps(a, c), _mm512_mul_ps(b, s));
        const __m512 rb = _mm512_add_ps(_mm512_mul_ps(a, s), _mm512_mul_ps(b, c));
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtps_ph(ra, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        _mm256_storeu_si256((__m256i *)(dst + i + half), _mm512_cvtps_ph(rb, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    for (int i = 2 * half; i < head_dim; i++) dst[i] = src[i]; /* past rot_dim: as it is */
}
#endif

void rope_rotate_f16(const kernel_tuning *kt, const uint16_t *src, uint16_t *dst, int head_dim, int rot_dim, const float *cs, const float *sn,
                     rope_style style) {
#if defined(__x86_64__) || defined(__i386__)
    if (style == ROPE_HALVES && (rot_dim / 2) % 16 == 0 && kt->isa >= ISA_AVX512) {
        rope_f16_halves_avx512(src, dst, head_dim, rot_dim / 2, cs, sn);
        return;
    }
#endif
    rope_rotate_f16_scalar(src, dst, head_dim, rot_dim, cs, sn, style);
}

void vec_add(float *restrict y, const float *restrict x, int n) {
    for (int i = 0; i < n; i++) y[i] += x[i];
}

void softmax(const kernel_tuning *kt, float *x, int n) {
    if (n <= 0) return;
    float m = x[0];
    for (int i = 1; i < n; i++)
        if (x[i] > m) m = x[i];
    double sum = 0.0;
    int i = 0;
#if defined(__x86_64__) || defined(__i386__)
    const cpu_isa isa = kt->isa;
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
