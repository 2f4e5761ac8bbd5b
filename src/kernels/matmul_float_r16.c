/* matmul_float_r16.c — owns the F16/BF16 interleaved layouts of
 * matmul_float_r16.h: when to use them, packing and unpacking, the BF16
 * rounding of the activations, and the scalar twin of the AVX-512 and AVX2
 * kernels (THE DEFINITION written out, so bit-identical to them). */
#include "kernels/matmul_float_r16.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/matmul_impl.h"

int mm_float_r16_type(const kernel_tuning *kt, int type, int64_t rows, int64_t cols) {
    if (rows <= 0 || rows % MM_FLOAT_R16_BLOCK_ROWS != 0 || cols <= 0 || cols % 2 != 0) return -1;
    if (type == WICK_F16) return WICK_F16_R16;
    if (type == WICK_BF16) return kt->bf16_dp ? WICK_BF16_R16 : WICK_BF16_R16H;
    return -1;
}

/* Byte offset in a block of layout wtype of row i's (i < 64) element k. */
static size_t at(int wtype, int i, int k) {
    const size_t v = mm_float_r16_vec_at(i / 16, k / 2), l = (size_t)(i % 16);
    return mm_float_r16_halves(wtype) ? v + (size_t)(k % 2) * 32 + 2 * l : v + 4 * l + 2 * (size_t)(k % 2);
}

void mm_float_r16_pack_block(int to, const void *src, void *dst, int cols) {
    const uint16_t *s = src;
    for (int i = 0; i < MM_FLOAT_R16_BLOCK_ROWS; i++)
        for (int k = 0; k < cols; k++) memcpy((char *)dst + at(to, i, k), s + (size_t)i * cols + k, 2);
}

void mm_float_r16_unpack_row(int wtype, const void *block, int cols, int row, void *dst) {
    uint16_t *d = dst;
    for (int k = 0; k < cols; k++) memcpy(d + k, (const char *)block + at(wtype, row, k), 2);
}

void mm_float_r16_row_f32(int wtype, const void *block, int cols, int row, float *dst) {
    for (int k = 0; k < cols; k++) {
        uint16_t h;
        memcpy(&h, (const char *)block + at(wtype, row, k), 2);
        dst[k] = mm_float_r16_base(wtype) == WICK_F16 ? fp16_to_f32(h) : bf16_to_f32(h);
    }
}

size_t mm_float_r16_xq_bytes(int wtype, int cols, int n) {
    return wtype == WICK_BF16_R16 ? (size_t)n * (size_t)cols * 2 : 0;
}

void mm_float_r16_prepare_x(int wtype, const float *x, int n, int cols, void *xq) {
    if (wtype != WICK_BF16_R16) return;
    quantize_row(WICK_BF16, x, xq, (int64_t)n * cols);
}

/* One VDPBF16PS step of one lane: BF16 inputs with a zero exponent read as
 * zero, the result flushed to zero below FLT_MIN. */
static float bf16_daz(uint16_t h) { return (h & 0x7f80) ? bf16_to_f32(h) : 0.0f; }

static float dp(float acc, uint16_t w, uint16_t x) {
    const float r = fmaf(bf16_daz(w), bf16_daz(x), acc);
    return fabsf(r) < FLT_MIN ? copysignf(0.0f, r) : r;
}

void mm_float_r16_rows_scalar(const mm_call *c) {
    const void *w = c->w, *xq = c->xq;
    const float *x = c->x;
    const int wtype = c->wtype, cols = c->cols, n = c->n, ldy = c->ldy, r0 = c->r0, r1 = c->r1;
    float *y = c->y;
    const int base = mm_float_r16_base(wtype);
    const size_t bb = (size_t)cols * 2 * MM_FLOAT_R16_BLOCK_ROWS;
    uint16_t row[8192];
    for (int r = r0; r < r1; r++) {
        const char *g = (const char *)w + (size_t)(r / MM_FLOAT_R16_BLOCK_ROWS) * bb;
        for (int t = 0; t < n; t++) {
            float acc = 0.0f;
            for (int k0 = 0; k0 < cols; k0 += 8192) { /* the row back in chunks */
                const int kn = cols - k0 < 8192 ? cols - k0 : 8192;
                for (int k = 0; k < kn; k++) memcpy(row + k, g + at(wtype, r % MM_FLOAT_R16_BLOCK_ROWS, k0 + k), 2);
                if (mm_float_r16_halves(wtype)) {
                    const float *xt = x + (size_t)t * cols + k0;
                    for (int k = 0; k < kn; k++)
                        acc = fmaf(base == WICK_F16 ? fp16_to_f32(row[k]) : bf16_to_f32(row[k]), xt[k], acc);
                } else {
                    const uint16_t *xb = (const uint16_t *)xq + (size_t)t * cols + k0;
                    for (int k = 0; k < kn; k += 2) {
                        acc = dp(acc, row[k + 1], xb[k + 1]);
                        acc = dp(acc, row[k], xb[k]);
                    }
                }
            }
            y[(size_t)t * ldy + r] = acc;
        }
    }
}
