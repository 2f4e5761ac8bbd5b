/* dequant.c — owns the dequantization of one row of the block types beyond
 * Q8_0 / Q4_0 / Q6_K (those are in convert.c): Q4_1, Q5_0, Q5_1, IQ4_NL,
 * IQ4_XS, Q2_K, Q3_K, Q4_K and Q5_K, straight from their definitions in
 * tensor.h. Each value is computed in float as llama.cpp's dequantize_row_*
 * does (the sub-block scale times d first, then times the quant, minus the
 * min times dmin), so a dequantized row equals llama.cpp's. */
#include "kernels/dequant.h"

#include "kernels/convert.h"
#include "kernels/quant_blocks.h"

const int8_t IQ4_NL_VALUES[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

static void dq_q4_1(const block_q4_1 *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += WICK_QK) {
        const float d = fp16_to_f32(b[i].d), m = fp16_to_f32(b[i].m);
        for (int j = 0; j < WICK_QK; j++) y[j] = (float)nibble_at(b[i].qs, j) * d + m;
    }
}

static void dq_q5_0(const block_q5_0 *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += WICK_QK) {
        const float d = fp16_to_f32(b[i].d);
        const uint32_t h = q5_high_bits(b[i].qh);
        for (int j = 0; j < WICK_QK; j++) y[j] = (float)((nibble_at(b[i].qs, j) | (int)((h >> j) & 1) << 4) - 16) * d;
    }
}

static void dq_q5_1(const block_q5_1 *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += WICK_QK) {
        const float d = fp16_to_f32(b[i].d), m = fp16_to_f32(b[i].m);
        const uint32_t h = q5_high_bits(b[i].qh);
        for (int j = 0; j < WICK_QK; j++) y[j] = (float)(nibble_at(b[i].qs, j) | (int)((h >> j) & 1) << 4) * d + m;
    }
}

static void dq_iq4_nl(const block_iq4_nl *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += WICK_QK) {
        const float d = fp16_to_f32(b[i].d);
        for (int j = 0; j < WICK_QK; j++) y[j] = d * (float)IQ4_NL_VALUES[nibble_at(b[i].qs, j)];
    }
}

static void dq_iq4_xs(const block_iq4_xs *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const float d = fp16_to_f32(b[i].d);
        for (int j = 0; j < 8; j++, y += 32) {
            const float dl = d * (float)iq4xs_scale(&b[i], j);
            for (int e = 0; e < 32; e++) y[e] = dl * (float)IQ4_NL_VALUES[nibble_at(b[i].qs + 16 * j, e)];
        }
    }
}

static void dq_q4_k(const block_q4_K *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const float d = fp16_to_f32(b[i].d), dmin = fp16_to_f32(b[i].dmin);
        for (int j = 0; j < 8; j++, y += 32) {
            int sc, m;
            q4k_scale_min(b[i].scales, j, &sc, &m);
            const float d1 = d * (float)sc, m1 = dmin * (float)m;
            const uint8_t *q = b[i].qs + 32 * (j / 2);
            for (int l = 0; l < 32; l++) y[l] = d1 * (float)(j % 2 ? q[l] >> 4 : q[l] & 15) - m1;
        }
    }
}

static void dq_q5_k(const block_q5_K *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++) {
        const float d = fp16_to_f32(b[i].d), dmin = fp16_to_f32(b[i].dmin);
        for (int j = 0; j < 8; j++, y += 32) {
            int sc, m;
            q4k_scale_min(b[i].scales, j, &sc, &m);
            const float d1 = d * (float)sc, m1 = dmin * (float)m;
            const uint8_t *q = b[i].qs + 32 * (j / 2);
            for (int l = 0; l < 32; l++) {
                const int u = (j % 2 ? q[l] >> 4 : q[l] & 15) | ((b[i].qh[l] >> j) & 1) << 4;
                y[l] = d1 * (float)u - m1;
            }
        }
    }
}

static void dq_q3_k(const block_q3_K *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += WICK_QK_K) {
        const float d = fp16_to_f32(b[i].d);
        int8_t s[16];
        q3k_scales(b[i].scales, s);
        for (int e = 0; e < WICK_QK_K; e++) {
            const int h = e / 128, k = (e / 32) % 4, l = e % 32;
            int q = (b[i].qs[32 * h + l] >> (2 * k)) & 3;
            if (!((b[i].hmask[l] >> (4 * h + k)) & 1)) q -= 4;
            y[e] = d * (float)s[e / 16] * (float)q;
        }
    }
}

static void dq_q2_k(const block_q2_K *b, float *y, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, y += WICK_QK_K) {
        const float d = fp16_to_f32(b[i].d), dmin = fp16_to_f32(b[i].dmin);
        for (int e = 0; e < WICK_QK_K; e++) {
            const int h = e / 128, k = (e / 32) % 4, l = e % 32, g = e / 16;
            const int q = (b[i].qs[32 * h + l] >> (2 * k)) & 3;
            y[e] = d * (float)(b[i].scales[g] & 15) * (float)q - dmin * (float)(b[i].scales[g] >> 4);
        }
    }
}

bool dequantize_row_more(int type, const void *src, float *dst, int64_t n) {
    const int64_t nb32 = n / WICK_QK, nb256 = n / WICK_QK_K;
    switch (type) {
    case WICK_Q4_1: dq_q4_1(src, dst, nb32); return true;
    case WICK_Q5_0: dq_q5_0(src, dst, nb32); return true;
    case WICK_Q5_1: dq_q5_1(src, dst, nb32); return true;
    case WICK_IQ4_NL: dq_iq4_nl(src, dst, nb32); return true;
    case WICK_IQ4_XS: dq_iq4_xs(src, dst, nb256); return true;
    case WICK_Q4_K: dq_q4_k(src, dst, nb256); return true;
    case WICK_Q5_K: dq_q5_k(src, dst, nb256); return true;
    case WICK_Q3_K: dq_q3_k(src, dst, nb256); return true;
    case WICK_Q2_K: dq_q2_k(src, dst, nb256); return true;
    default: return false;
    }
}
