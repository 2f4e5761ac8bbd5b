/* quantize_k.c — owns the K-quant quantizers: Q2_K, Q3_K, Q4_K, Q5_K and
 * Q6_K rows (layouts in core/tensor.h), built as llama.cpp's reference
 * quantizers (quantize_row_q*_K_ref, the ones llama-quantize uses without
 * an importance matrix) are: every sub-block gets its own searched step (and
 * offset) by quant_fit.c, the super-block then quantizes those steps onto
 * its 4-, 6- or 8-bit scale grid under one fp16 d (and dmin), and every
 * element is finally re-rounded against the scales as stored, so the
 * integers agree with what dequantization will multiply them by.
 *
 * Importance weights per type (llama.cpp's choices):
 *   Q2_K  |x|, error measured as Σ w·|x - x'| (16 per sub-block, 2 bits)
 *   Q4_K, Q5_K  rms(sub-block) + |x|, squared error (32 per sub-block)
 *   Q3_K, Q6_K  x², squared error (16 per sub-block, symmetric) */
#include "kernels/quantize.h"

#include <math.h>
#include <string.h>

#include "core/tensor.h"
#include "kernels/convert.h"
#include "kernels/quant_fit.h"

/* ---- Q4_K / Q5_K: 8 affine sub-blocks of 32 under 6-bit scales and mins ---- */

static void pack_scale_min_k4(uint8_t s[12], int j, int sc, int m) {
    if (j < 4) {
        s[j] = (uint8_t)sc;
        s[j + 4] = (uint8_t)m;
    } else {
        s[j + 4] = (uint8_t)((sc & 15) | (m & 15) << 4);
        s[j - 4] |= (uint8_t)((sc >> 4) << 6);
        s[j] |= (uint8_t)((m >> 4) << 6);
    }
}

/* Fit one super-block of 256 to 8 sub-blocks with quants in [0, nmax]:
 * writes d, dmin, the packed scales and L (element order). */
static void fit_k4(const float *x, int nmax, const qfit_fan *fan, uint16_t *d_out, uint16_t *dmin_out,
                   uint8_t scales[12], uint8_t L[256]) {
    float step[8], off[8], w[32], max_step = 0.0f, max_off = 0.0f;
    for (int j = 0; j < 8; j++) {
        const float *xb = x + 32 * j;
        float s2 = 0.0f;
        for (int l = 0; l < 32; l++) s2 += xb[l] * xb[l];
        const float rms = sqrtf(s2 / 32.0f);
        for (int l = 0; l < 32; l++) w[l] = rms + fabsf(xb[l]);
        step[j] = qfit_affine(32, nmax, xb, w, L + 32 * j, &off[j], fan);
        max_step = fmaxf(max_step, step[j]);
        max_off = fmaxf(max_off, off[j]);
    }
    const float inv_s = max_step > 0.0f ? 63.0f / max_step : 0.0f;
    const float inv_m = max_off > 0.0f ? 63.0f / max_off : 0.0f;
    memset(scales, 0, 12);
    int ls[8], lm[8];
    for (int j = 0; j < 8; j++) {
        ls[j] = qfit_round(inv_s * step[j], 0, 63);
        lm[j] = qfit_round(inv_m * off[j], 0, 63);
        pack_scale_min_k4(scales, j, ls[j], lm[j]);
    }
    *d_out = qfit_fp16(max_step / 63.0f);
    *dmin_out = qfit_fp16(max_off / 63.0f);
    const float d = fp16_to_f32(*d_out), dmin = fp16_to_f32(*dmin_out);
    for (int j = 0; j < 8; j++) {
        const float dj = d * (float)ls[j], mj = dmin * (float)lm[j];
        if (dj == 0.0f) continue;
        for (int l = 0; l < 32; l++) L[32 * j + l] = (uint8_t)qfit_round((x[32 * j + l] + mj) / dj, 0, nmax);
    }
}

static void quantize_q4_k(const float *x, block_q4_K *y, int64_t nb) {
    static const qfit_fan fan = {-1.0f, 0.1f, 20, false};
    uint8_t L[256];
    for (int64_t i = 0; i < nb; i++, x += WICK_QK_K) {
        fit_k4(x, 15, &fan, &y[i].d, &y[i].dmin, y[i].scales, L);
        /* qs[32p + l]: element 64p + l in the low nibble, 64p + 32 + l in the high one */
        for (int p = 0; p < 4; p++)
            for (int l = 0; l < 32; l++) y[i].qs[32 * p + l] = (uint8_t)(L[64 * p + l] | L[64 * p + 32 + l] << 4);
    }
}

static void quantize_q5_k(const float *x, block_q5_K *y, int64_t nb) {
    static const qfit_fan fan = {-0.5f, 0.1f, 15, false};
    uint8_t L[256];
    for (int64_t i = 0; i < nb; i++, x += WICK_QK_K) {
        fit_k4(x, 31, &fan, &y[i].d, &y[i].dmin, y[i].scales, L);
        memset(y[i].qh, 0, sizeof y[i].qh);
        for (int p = 0; p < 4; p++)
            for (int l = 0; l < 32; l++) {
                const int a = L[64 * p + l], b = L[64 * p + 32 + l];
                y[i].qs[32 * p + l] = (uint8_t)((a & 15) | (b & 15) << 4);
                /* bit j of qh[l]: the fifth bit of element l of sub-block j */
                y[i].qh[l] |= (uint8_t)((a >> 4) << (2 * p) | (b >> 4) << (2 * p + 1));
            }
    }
}

/* ---- Q2_K: 16 affine sub-blocks of 16 under 4-bit scales and mins ---- */

/* 2-bit quants of element 128h + 32k + l go to bits 2k of qs[32h + l] (Q2_K and Q3_K). */
static void pack_2bit(uint8_t qs[64], const uint8_t L[256]) {
    for (int h = 0; h < 2; h++)
        for (int l = 0; l < 32; l++) {
            const uint8_t *e = L + 128 * h + l;
            qs[32 * h + l] = (uint8_t)(e[0] | e[32] << 2 | e[64] << 4 | e[96] << 6);
        }
}

static void quantize_q2_k(const float *x, block_q2_K *y, int64_t nb) {
    static const qfit_fan fan = {-0.5f, 0.1f, 15, true};
    uint8_t L[256];
    for (int64_t i = 0; i < nb; i++, x += WICK_QK_K) {
        float step[16], off[16], w[16], max_step = 0.0f, max_off = 0.0f;
        for (int g = 0; g < 16; g++) {
            for (int l = 0; l < 16; l++) w[l] = fabsf(x[16 * g + l]);
            step[g] = qfit_affine(16, 3, x + 16 * g, w, L + 16 * g, &off[g], &fan);
            max_step = fmaxf(max_step, step[g]);
            max_off = fmaxf(max_off, off[g]);
        }
        const float inv_s = max_step > 0.0f ? 15.0f / max_step : 0.0f;
        const float inv_m = max_off > 0.0f ? 15.0f / max_off : 0.0f;
        for (int g = 0; g < 16; g++)
            y[i].scales[g] = (uint8_t)(qfit_round(inv_s * step[g], 0, 15) | qfit_round(inv_m * off[g], 0, 15) << 4);
        y[i].d = qfit_fp16(max_step / 15.0f);
        y[i].dmin = qfit_fp16(max_off / 15.0f);
        const float d = fp16_to_f32(y[i].d), dmin = fp16_to_f32(y[i].dmin);
        for (int g = 0; g < 16; g++) {
            const float dg = d * (float)(y[i].scales[g] & 15), mg = dmin * (float)(y[i].scales[g] >> 4);
            if (dg == 0.0f) continue;
            for (int l = 0; l < 16; l++) L[16 * g + l] = (uint8_t)qfit_round((x[16 * g + l] + mg) / dg, 0, 3);
        }
        pack_2bit(y[i].qs, L);
    }
}

/* ---- Q3_K: 16 symmetric sub-blocks of 16 under signed 6-bit scales ---- */

/* The x of largest |x| in v[0, n) (the first on a tie), its sign kept. */
static float signed_max(const float *v, int n) {
    float a = 0.0f, m = 0.0f;
    for (int i = 0; i < n; i++)
        if (fabsf(v[i]) > a) {
            a = fabsf(v[i]);
            m = v[i];
        }
    return m;
}

static void quantize_q3_k(const float *x, block_q3_K *y, int64_t nb) {
    int8_t q[256];
    uint8_t L[256];
    for (int64_t i = 0; i < nb; i++, x += WICK_QK_K) {
        float step[16], w[16];
        for (int g = 0; g < 16; g++) {
            for (int l = 0; l < 16; l++) w[l] = x[16 * g + l] * x[16 * g + l];
            step[g] = qfit_symmetric_descent(16, 4, x + 16 * g, w, q + 16 * g, 5);
        }
        const float m = signed_max(step, 16);
        memset(y[i].scales, 0, sizeof y[i].scales);
        int sc[16] = {0};
        if (m != 0.0f) {
            const float inv = -32.0f / m;
            for (int g = 0; g < 16; g++) {
                sc[g] = qfit_round(inv * step[g], -32, 31);
                const int u = sc[g] + 32;
                /* low 4 bits: nibble g % 8 of scales[g % 8]; high 2 bits: bits 2(g/4) of scales[8 + g%4] */
                y[i].scales[g % 8] |= (uint8_t)((u & 15) << (g < 8 ? 0 : 4));
                y[i].scales[8 + g % 4] |= (uint8_t)((u >> 4) << (2 * (g / 4)));
            }
        }
        y[i].d = qfit_fp16(m != 0.0f ? -m / 32.0f : 0.0f);
        const float d = fp16_to_f32(y[i].d);
        memset(y[i].hmask, 0, sizeof y[i].hmask);
        for (int e = 0; e < 256; e++) {
            const float de = d * (float)sc[e / 16];
            const int v = de != 0.0f ? qfit_round(x[e] / de, -4, 3) : 0;
            /* v + 4 in 0..7: its bit 2 goes to hmask[e % 32] bit e / 32, the low bits to qs */
            const int u = v + 4;
            if (u & 4) y[i].hmask[e % 32] |= (uint8_t)(1u << (e / 32));
            L[e] = (uint8_t)(u & 3);
        }
        pack_2bit(y[i].qs, L);
    }
}

/* ---- Q6_K: 16 symmetric sub-blocks of 16 under int8 scales ---- */

static void quantize_q6_k(const float *x, block_q6_K *y, int64_t nb) {
    int8_t q[256];
    for (int64_t i = 0; i < nb; i++, x += WICK_QK_K) {
        float step[16], w[16];
        for (int g = 0; g < 16; g++) {
            for (int l = 0; l < 16; l++) w[l] = x[16 * g + l] * x[16 * g + l];
            step[g] = qfit_symmetric(16, 32, x + 16 * g, w, q + 16 * g, 9);
        }
        const float m = signed_max(step, 16);
        memset(&y[i], 0, sizeof y[i]);
        if (!(fabsf(m) >= QFIT_EPS)) continue; /* all zero: d = 0 */
        const float inv = -128.0f / m;
        y[i].d = qfit_fp16(1.0f / inv);
        for (int g = 0; g < 16; g++) y[i].scales[g] = (int8_t)qfit_round(inv * step[g], -128, 127);
        const float d = fp16_to_f32(y[i].d);
        for (int e = 0; e < 256; e++) {
            const float de = d * (float)y[i].scales[e / 16];
            const int u = (de != 0.0f ? qfit_round(x[e] / de, -32, 31) : 0) + 32;
            /* element 128h + 32k + l: low 4 bits in ql[64h + 32(k&1) + l] (high nibble for k >= 2),
             * high 2 bits at bit 2k of qh[32h + l] */
            const int h = e / 128, k = (e / 32) % 4, l = e % 32;
            y[i].ql[64 * h + 32 * (k & 1) + l] |= (uint8_t)((u & 15) << (k < 2 ? 0 : 4));
            y[i].qh[32 * h + l] |= (uint8_t)((u >> 4) << (2 * k));
        }
    }
}

bool quantize_row_k(int type, const float *src, void *dst, int64_t n) {
    const int64_t nb = n / WICK_QK_K;
    switch (type) {
    case WICK_Q2_K: quantize_q2_k(src, dst, nb); return true;
    case WICK_Q3_K: quantize_q3_k(src, dst, nb); return true;
    case WICK_Q4_K: quantize_q4_k(src, dst, nb); return true;
    case WICK_Q5_K: quantize_q5_k(src, dst, nb); return true;
    case WICK_Q6_K: quantize_q6_k(src, dst, nb); return true;
    default: return false;
    }
}
