/* quantize_legacy.c — owns the Q4_1, Q5_0 and Q5_1 quantizers (layouts in
 * core/tensor.h). They follow llama.cpp's reference definitions exactly
 * (quantize_row_q4_1_ref, _q5_0_ref, _q5_1_ref, which llama-quantize uses
 * without an importance matrix), so wick writes the same bytes:
 *   Q4_1 / Q5_1: min and max of the block, d = (max - min) / (2^bits - 1),
 *         id = d ? 1/d : 0, q = MIN(2^bits - 1, trunc((x - min)·id + 0.5)), m = min
 *   Q5_0: m = the x of largest |x| (the first, sign kept), d = m / -16,
 *         id = d ? 1/d : 0, q = MIN(31, trunc(x·id + 16.5))
 * with d and m stored as fp16 (nearest even). The one departure: a scale
 * beyond fp16's range saturates at 65504 instead of becoming infinite, and
 * every float is clamped before its integer conversion (NaN gives 0). */
#include <math.h>
#include <string.h>

#include "core/tensor.h"
#include "kernels/convert.h"
#include "kernels/quant_fit.h"
#include "kernels/quantize.h"

/* trunc(v) clamped to [0, hi]; v >= 0 in every ordinary case, so this is the
 * reference's (uint8_t)/(int8_t) cast followed by MIN. */
static inline int trunc_clamp(float v, int hi) {
    if (!(v >= 0.0f)) return 0;
    if (v >= (float)hi) return hi;
    return (int)v;
}

/* Q4_1 / Q5_1: bits 4 or 5. q receives the 32 quants. */
static void fit_min_max(const float *x, int bits, uint16_t *d_out, uint16_t *m_out, int q[32]) {
    float min = INFINITY, max = -INFINITY;
    for (int j = 0; j < WICK_QK; j++) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
    const int hi = (1 << bits) - 1;
    const float d = (max - min) / (float)hi;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    *d_out = qfit_fp16(d);
    *m_out = qfit_fp16(min);
    for (int j = 0; j < WICK_QK; j++) q[j] = trunc_clamp((x[j] - min) * id + 0.5f, hi);
}

static void quantize_q4_1(const float *x, block_q4_1 *y, int64_t nb) {
    int q[32];
    for (int64_t i = 0; i < nb; i++, x += WICK_QK) {
        fit_min_max(x, 4, &y[i].d, &y[i].m, q);
        for (int j = 0; j < 16; j++) y[i].qs[j] = (uint8_t)(q[j] | q[j + 16] << 4);
    }
}

/* Q5_0 / Q5_1 bytes: low nibbles as Q4_0's, the fifth bits as one little-endian uint32. */
static void pack_q5(const int q[32], uint8_t qs[16], uint8_t qh[4]) {
    uint32_t h = 0;
    for (int j = 0; j < 16; j++) {
        qs[j] = (uint8_t)((q[j] & 15) | (q[j + 16] & 15) << 4);
        h |= (uint32_t)(q[j] >> 4) << j | (uint32_t)(q[j + 16] >> 4) << (j + 16);
    }
    for (int b = 0; b < 4; b++) qh[b] = (uint8_t)(h >> (8 * b));
}

static void quantize_q5_1(const float *x, block_q5_1 *y, int64_t nb) {
    int q[32];
    for (int64_t i = 0; i < nb; i++, x += WICK_QK) {
        fit_min_max(x, 5, &y[i].d, &y[i].m, q);
        pack_q5(q, y[i].qs, y[i].qh);
    }
}

static void quantize_q5_0(const float *x, block_q5_0 *y, int64_t nb) {
    int q[32];
    for (int64_t i = 0; i < nb; i++, x += WICK_QK) {
        float amax = 0.0f, m = 0.0f;
        for (int j = 0; j < WICK_QK; j++)
            if (amax < fabsf(x[j])) {
                amax = fabsf(x[j]);
                m = x[j];
            }
        const float d = m / -16.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = qfit_fp16(d);
        for (int j = 0; j < WICK_QK; j++) q[j] = trunc_clamp(x[j] * id + 16.5f, 31);
        pack_q5(q, y[i].qs, y[i].qh);
    }
}

bool quantize_row_legacy(int type, const float *src, void *dst, int64_t n) {
    const int64_t nb = n / WICK_QK;
    switch (type) {
    case WICK_Q4_1: quantize_q4_1(src, dst, nb); return true;
    case WICK_Q5_0: quantize_q5_0(src, dst, nb); return true;
    case WICK_Q5_1: quantize_q5_1(src, dst, nb); return true;
    default: return false;
    }
}
