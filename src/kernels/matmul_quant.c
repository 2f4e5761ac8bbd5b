/* matmul_quant.c — owns the scalar twins of the Q4_1, Q5_0, Q5_1, IQ4_NL,
 * Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS matmul kernels (THE DEFINITION in
 * matmul_quant.h, written out one block at a time). */
#include "kernels/matmul_quant.h"

#include <math.h>

#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/matmul_impl.h"
#include "kernels/matmul_q8k.h"
#include "kernels/quant_blocks.h"

/* ---- 32-element blocks against a Q8_0 activation block ---- */

typedef struct act32 {
    const int8_t *q; /* 32 quants */
    float d;         /* scale */
    int32_t sum;     /* Σ q */
} act32;

static float step_q5_0(float acc, const block_q5_0 *w, act32 x) {
    const uint32_t h = q5_high_bits(w->qh);
    int32_t is = 0;
    for (int j = 0; j < WICK_QK; j++) is += ((nibble_at(w->qs, j) | (int)((h >> j) & 1) << 4) - 16) * x.q[j];
    return fmaf((float)is, fp16_to_f32(w->d) * x.d, acc);
}

static float step_iq4_nl(float acc, const block_iq4_nl *w, act32 x) {
    int32_t is = 0;
    for (int j = 0; j < WICK_QK; j++) is += IQ4_NL_VALUES[nibble_at(w->qs, j)] * x.q[j];
    return fmaf((float)is, fp16_to_f32(w->d) * x.d, acc);
}

static float step_q4_1(float acc, const block_q4_1 *w, act32 x) {
    int32_t is = 0;
    for (int j = 0; j < WICK_QK; j++) is += nibble_at(w->qs, j) * x.q[j];
    acc = fmaf((float)is, fp16_to_f32(w->d) * x.d, acc);
    return fmaf(fp16_to_f32(w->m), x.d * (float)x.sum, acc);
}

static float step_q5_1(float acc, const block_q5_1 *w, act32 x) {
    const uint32_t h = q5_high_bits(w->qh);
    int32_t is = 0;
    for (int j = 0; j < WICK_QK; j++) is += (nibble_at(w->qs, j) | (int)((h >> j) & 1) << 4) * x.q[j];
    acc = fmaf((float)is, fp16_to_f32(w->d) * x.d, acc);
    return fmaf(fp16_to_f32(w->m), x.d * (float)x.sum, acc);
}

/* ---- 256-element super-blocks against a Q8_K activation block ---- */

/* The two-term step of the types with mins (Q4_K, Q5_K, Q2_K). */
static float step_min(float acc, int32_t i1, int32_t i2, uint16_t d, uint16_t dmin, float dx) {
    acc = fmaf((float)i1, fp16_to_f32(d) * dx, acc);
    return fmaf((float)i2, -(fp16_to_f32(dmin) * dx), acc);
}

static float step_q4_k(float acc, const block_q4_K *w, const block_q8_K *x) {
    int32_t i1 = 0, i2 = 0;
    for (int j = 0; j < 8; j++) {
        int sc, m;
        q4k_scale_min(w->scales, j, &sc, &m);
        const uint8_t *q = w->qs + 32 * (j / 2);
        int32_t s = 0;
        for (int l = 0; l < 32; l++) s += (j % 2 ? q[l] >> 4 : q[l] & 15) * x->qs[32 * j + l];
        i1 += sc * s;
        i2 += m * (x->bsums[2 * j] + x->bsums[2 * j + 1]);
    }
    return step_min(acc, i1, i2, w->d, w->dmin, x->d);
}

static float step_q5_k(float acc, const block_q5_K *w, const block_q8_K *x) {
    int32_t i1 = 0, i2 = 0;
    for (int j = 0; j < 8; j++) {
        int sc, m;
        q4k_scale_min(w->scales, j, &sc, &m);
        const uint8_t *q = w->qs + 32 * (j / 2);
        int32_t s = 0;
        for (int l = 0; l < 32; l++)
            s += ((j % 2 ? q[l] >> 4 : q[l] & 15) | ((w->qh[l] >> j) & 1) << 4) * x->qs[32 * j + l];
        i1 += sc * s;
        i2 += m * (x->bsums[2 * j] + x->bsums[2 * j + 1]);
    }
    return step_min(acc, i1, i2, w->d, w->dmin, x->d);
}

static float step_q2_k(float acc, const block_q2_K *w, const block_q8_K *x) {
    int32_t i1 = 0, i2 = 0;
    for (int g = 0; g < 16; g++) {
        int32_t s = 0;
        for (int e = 16 * g; e < 16 * g + 16; e++) {
            const int h = e / 128, k = (e / 32) % 4, l = e % 32;
            s += ((w->qs[32 * h + l] >> (2 * k)) & 3) * x->qs[e];
        }
        i1 += (w->scales[g] & 15) * s;
        i2 += (w->scales[g] >> 4) * x->bsums[g];
    }
    return step_min(acc, i1, i2, w->d, w->dmin, x->d);
}

static float step_q3_k(float acc, const block_q3_K *w, const block_q8_K *x) {
    int8_t sc[16];
    q3k_scales(w->scales, sc);
    int32_t is = 0;
    for (int g = 0; g < 16; g++) {
        int32_t s = 0;
        for (int e = 16 * g; e < 16 * g + 16; e++) {
            const int h = e / 128, k = (e / 32) % 4, l = e % 32;
            int q = (w->qs[32 * h + l] >> (2 * k)) & 3;
            if (!((w->hmask[l] >> (4 * h + k)) & 1)) q -= 4;
            s += q * x->qs[e];
        }
        is += sc[g] * s;
    }
    return fmaf((float)is, fp16_to_f32(w->d) * x->d, acc);
}

static float step_iq4_xs(float acc, const block_iq4_xs *w, const block_q8_K *x) {
    int32_t is = 0;
    for (int j = 0; j < 8; j++) {
        int32_t s = 0;
        for (int e = 0; e < 32; e++) s += IQ4_NL_VALUES[nibble_at(w->qs + 16 * j, e)] * x->qs[32 * j + e];
        is += iq4xs_scale(w, j) * s;
    }
    return fmaf((float)is, fp16_to_f32(w->d) * x->d, acc);
}

static float step_q6_k(float acc, const block_q6_K *w, const block_q8_K *x) {
    int32_t is = 0;
    for (int g = 0; g < 16; g++) {
        int32_t s = 0;
        for (int e = 16 * g; e < 16 * g + 16; e++) {
            const int h = e / 128, k = (e / 32) % 4, l = e % 32;
            const uint8_t lo = w->ql[64 * h + 32 * (k & 1) + l];
            const int q = ((k < 2 ? lo & 15 : lo >> 4) | ((w->qh[32 * h + l] >> (2 * k)) & 3) << 4) - 32;
            s += q * x->qs[e];
        }
        is += w->scales[g] * s;
    }
    return fmaf((float)is, fp16_to_f32(w->d) * x->d, acc);
}

static bool is_blocks32(int wtype) {
    return wtype == WICK_Q4_1 || wtype == WICK_Q5_0 || wtype == WICK_Q5_1 || wtype == WICK_IQ4_NL;
}

/* acc continued over weight blocks [b0, b0 + nbk) (wb: block b0) for token i. */
static float dot_blocks(int wtype, const void *wb, int b0, int nbk, int cols, const void *xq, int n, int i,
                        float acc) {
    if (is_blocks32(wtype)) {
        const int nb = cols / WICK_QK;
        const block_q8_0 *xb = (const block_q8_0 *)xq + (size_t)i * nb;
        const int32_t *xs = (const int32_t *)((const char *)xq + mm_xq_sums_offset(cols, n)) + (size_t)i * nb;
        const float *xd = (const float *)((const char *)xq + mm_xq_scales_offset(cols, n)) + (size_t)i * nb;
        for (int k = 0; k < nbk; k++) {
            const int b = b0 + k;
            const act32 x = {xb[b].qs, xd[b], xs[b]};
            switch (wtype) {
            case WICK_Q4_1: acc = step_q4_1(acc, (const block_q4_1 *)wb + k, x); break;
            case WICK_Q5_0: acc = step_q5_0(acc, (const block_q5_0 *)wb + k, x); break;
            case WICK_Q5_1: acc = step_q5_1(acc, (const block_q5_1 *)wb + k, x); break;
            default: acc = step_iq4_nl(acc, (const block_iq4_nl *)wb + k, x); break;
            }
        }
        return acc;
    }
    const int nb = cols / WICK_QK_K;
    const block_q8_K *x = (const block_q8_K *)xq + (size_t)i * nb + b0;
    for (int k = 0; k < nbk; k++) {
        switch (wtype) {
        case WICK_Q4_K: acc = step_q4_k(acc, (const block_q4_K *)wb + k, x + k); break;
        case WICK_Q5_K: acc = step_q5_k(acc, (const block_q5_K *)wb + k, x + k); break;
        case WICK_Q6_K: acc = step_q6_k(acc, (const block_q6_K *)wb + k, x + k); break;
        case WICK_Q2_K: acc = step_q2_k(acc, (const block_q2_K *)wb + k, x + k); break;
        case WICK_Q3_K: acc = step_q3_k(acc, (const block_q3_K *)wb + k, x + k); break;
        default: acc = step_iq4_xs(acc, (const block_iq4_xs *)wb + k, x + k); break;
        }
    }
    return acc;
}

void mm_quant_dot_blocks(int wtype, const void *wb, int b0, int nbk, int cols, const void *xq, int n, float *y, int ldy,
                    int r, bool first) {
    for (int i = 0; i < n; i++) {
        float *o = y + (size_t)i * ldy + r;
        *o = dot_blocks(wtype, wb, b0, nbk, cols, xq, n, i, first ? 0.0f : *o);
    }
}

void mm_quant_rows_scalar(const mm_call *c) {
    const size_t rb = dtype_row_bytes(c->wtype, c->cols);
    const int nb = c->cols / dtype_block_elems(c->wtype);
    for (int r = c->r0; r < c->r1; r++)
        mm_quant_dot_blocks(c->wtype, (const char *)c->w + (size_t)r * rb, 0, nb, c->cols, c->xq, c->n, c->y, c->ldy, r, true);
}
