/* matmul_plain.c — owns the portable reference matmul kernels, the twin
 * every SIMD kernel is tested against (see matmul.h).
 *
 * Float weights: one dot product per (row, token), accumulated in double.
 * Q8_0/Q4_0 weights: per block an exact int32 sum of weight × activation
 * quants, scaled by d_w*d_x (both fp16 -> f32) and accumulated in float in
 * block order, as llama.cpp's scalar vec_dot does. */
#include <string.h>

#include "kernels/convert.h"
#include "kernels/matmul_impl.h"

static float dot_row_float(int wtype, const void *wrow, const float *x, int cols) {
    double s = 0.0;
    if (wtype == WICK_F32) {
        const float *w = wrow;
        for (int c = 0; c < cols; c++) s += (double)w[c] * x[c];
    } else if (wtype == WICK_F16) {
        const uint16_t *w = wrow;
        for (int c = 0; c < cols; c++) s += (double)fp16_to_f32(w[c]) * x[c];
    } else {
        const uint16_t *w = wrow;
        for (int c = 0; c < cols; c++) s += (double)bf16_to_f32(w[c]) * x[c];
    }
    return (float)s;
}

static float dot_q8_0_q8_0(const block_q8_0 *w, const block_q8_0 *x, int nb) {
    float s = 0.0f;
    for (int b = 0; b < nb; b++) {
        int32_t is = 0;
        for (int j = 0; j < WICK_QK; j++) is += (int32_t)w[b].qs[j] * x[b].qs[j];
        s += (float)is * (fp16_to_f32(w[b].d) * fp16_to_f32(x[b].d));
    }
    return s;
}

static float dot_q4_0_q8_0(const block_q4_0 *w, const block_q8_0 *x, int nb) {
    float s = 0.0f;
    for (int b = 0; b < nb; b++) {
        int32_t is = 0;
        for (int j = 0; j < WICK_QK / 2; j++) {
            is += ((w[b].qs[j] & 15) - 8) * (int32_t)x[b].qs[j];
            is += ((w[b].qs[j] >> 4) - 8) * (int32_t)x[b].qs[j + WICK_QK / 2];
        }
        s += (float)is * (fp16_to_f32(w[b].d) * fp16_to_f32(x[b].d));
    }
    return s;
}

void mm_plain_rows_scalar(const mm_call *c) {
    const int wtype = c->wtype, cols = c->cols, n = c->n, ldy = c->ldy;
    const void *w = c->w, *xq = c->xq;
    const float *x = c->x;
    float *y = c->y;
    const size_t row_bytes = dtype_row_bytes(wtype, cols);
    const int nb = cols / WICK_QK;
    for (int r = c->r0; r < c->r1; r++) {
        const void *wrow = (const char *)w + (size_t)r * row_bytes;
        for (int i = 0; i < n; i++) {
            float v;
            if (wtype == WICK_Q8_0)
                v = dot_q8_0_q8_0(wrow, (const block_q8_0 *)xq + (size_t)i * nb, nb);
            else if (wtype == WICK_Q4_0)
                v = dot_q4_0_q8_0(wrow, (const block_q8_0 *)xq + (size_t)i * nb, nb);
            else
                v = dot_row_float(wtype, wrow, x + (size_t)i * cols, cols);
            y[(size_t)i * ldy + r] = v;
        }
    }
}
