/* ops.c — owns the small row kernels of the forward pass: RMSNorm, RoPE,
 * SiLU gating, residual add and softmax (see ops.h).
 *
 * These are scalar C written so the compiler can vectorize the simple loops;
 * they are a small share of the time. RoPE computes each angle as
 * (double)pos * inv_freq[i] and its cos/sin in double, rounding once to
 * float, so a rotation by p then q matches one by p+q to float precision. */
#include "kernels/ops.h"

#include <math.h>

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

void silu_mul(float *g, const float *u, int n) {
    for (int i = 0; i < n; i++) g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
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
    for (int i = 0; i < n; i++) {
        x[i] = expf(x[i] - m);
        sum += x[i];
    }
    const float inv = (float)(1.0 / sum);
    for (int i = 0; i < n; i++) x[i] *= inv;
}
