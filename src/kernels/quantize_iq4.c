/* quantize_iq4.c — owns the IQ4_NL and IQ4_XS quantizers (layouts in
 * core/tensor.h): 4-bit indices into the non-linear table IQ4_NL_VALUES.
 * As llama.cpp's quantize_iq4_nl / quantize_iq4_xs do without an importance
 * matrix, each block of 32 gets the step of quant_fit.c's table search with
 * weights x² (candidates mapping its extreme value onto the table's ends,
 * the negative one and just past the positive one);
 * IQ4_NL stores that step as the block's fp16 d, IQ4_XS quantizes the eight
 * steps of a super-block onto signed 6-bit scales under one fp16 d (the
 * largest step on -32). Every index is then chosen against the step as
 * stored, the nearest table entry to x / step. */
#include <math.h>
#include <string.h>

#include "core/tensor.h"
#include "kernels/convert.h"
#include "kernels/quant_fit.h"
#include "kernels/quantize.h"

/* Steps tried on each side of the table's ends (llama.cpp's ntry). */
#define IQ4_NTRY 7

/* Indices of 32 elements, x / step rounded to the nearest table entry; a
 * zero step gives the entry nearest 0. Packed as Q4_0's nibbles. */
static void pack_iq4_block(const float *x, float step, uint8_t qs[16]) {
    const float inv = step != 0.0f ? 1.0f / step : 0.0f;
    int L[32];
    for (int j = 0; j < 32; j++) L[j] = qfit_table_index(IQ4_NL_VALUES, inv * x[j]);
    for (int j = 0; j < 16; j++) qs[j] = (uint8_t)(L[j] | L[j + 16] << 4);
}

static void quantize_iq4_nl(const float *x, block_iq4_nl *y, int64_t nb) {
    float w[32];
    for (int64_t i = 0; i < nb; i++, x += WICK_QK) {
        for (int j = 0; j < 32; j++) w[j] = x[j] * x[j];
        const float step = qfit_table(32, IQ4_NL_VALUES, x, w, IQ4_NTRY);
        y[i].d = qfit_fp16(step);
        pack_iq4_block(x, fp16_to_f32(y[i].d), y[i].qs);
    }
}

static void quantize_iq4_xs(const float *x, block_iq4_xs *y, int64_t nb) {
    float w[32];
    for (int64_t i = 0; i < nb; i++, x += WICK_QK_K) {
        float step[8], amax = 0.0f, m = 0.0f;
        for (int j = 0; j < 8; j++) {
            const float *xb = x + 32 * j;
            for (int l = 0; l < 32; l++) w[l] = xb[l] * xb[l];
            step[j] = qfit_table(32, IQ4_NL_VALUES, xb, w, IQ4_NTRY);
            if (fabsf(step[j]) > amax) {
                amax = fabsf(step[j]);
                m = step[j];
            }
        }
        y[i].d = qfit_fp16(-m / 32.0f);
        const float d = fp16_to_f32(y[i].d), id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].scales_h = 0;
        memset(y[i].scales_l, 0, sizeof y[i].scales_l);
        for (int j = 0; j < 8; j++) {
            const int l = qfit_round(id * step[j], -32, 31);
            const int u = l + 32;
            y[i].scales_l[j / 2] |= (uint8_t)((u & 15) << (4 * (j % 2)));
            y[i].scales_h |= (uint16_t)((u >> 4) << (2 * j));
            pack_iq4_block(x + 32 * j, d * (float)l, y[i].qs + 16 * j);
        }
    }
}

bool quantize_row_iq4(int type, const float *src, void *dst, int64_t n) {
    switch (type) {
    case WICK_IQ4_NL: quantize_iq4_nl(src, dst, n / WICK_QK); return true;
    case WICK_IQ4_XS: quantize_iq4_xs(src, dst, n / WICK_QK_K); return true;
    default: return false;
    }
}
