/* matmul_r16.c — owns the interleaved Q8_0/Q4_0 layouts (WICK_Q8_0_R16,
 * WICK_Q4_0_R16; described in matmul_impl.h): packing a pair of 16-row
 * groups, one block of one row back in the file layout, and the scalar twin
 * of their kernels (matmul_r16_avx2.c, matmul_r16_avx512.c). */
#include <string.h>

#include "kernels/convert.h"
#include "kernels/matmul_impl.h"

/* Byte k of row i of group h (row 16h + i of the pair) in block b lies at
 * vector_at(b, h, k/4) + i*4 + k%4 of the pair; its scale at
 * scales_at(b, h) + 2*i. */
void mm_r16_pack_pair(int base, const char *src, char *dst, int nb) {
    const size_t bb = base == WICK_Q8_0 ? sizeof(block_q8_0) : sizeof(block_q4_0);
    const int nd = base == WICK_Q8_0 ? 8 : 4; /* dwords of quants per block */
    const size_t rb = bb * (size_t)nb;
    const uint32_t flip = base == WICK_Q8_0 ? 0x80808080u : 0;
    for (int r = 0; r < 32; r++) {
        const char *row = src + (size_t)r * rb;
        const int h = r / 16, i = r % 16;
        for (int b = 0; b < nb; b++) {
            const char *blk = row + (size_t)b * bb;
            memcpy(dst + mm_r16_scales_at(base, b, h) + (size_t)i * 2, blk, 2);
            for (int j = 0; j < nd; j++) {
                uint32_t v;
                memcpy(&v, blk + 2 + 4 * j, 4);
                v ^= flip;
                memcpy(dst + mm_r16_vector_at(base, b, h, j) + (size_t)i * 4, &v, 4);
            }
        }
    }
}

/* Block b of row r of a repacked matrix, back in the file layout. */
void mm_r16_unpack_block(int base, const void *w, int nb, int64_t r, int b, void *blk) {
    const char *pp = (const char *)w + (size_t)(r / 32) * 32 * dtype_row_bytes(base, (int64_t)nb * WICK_QK);
    const int h = (int)(r / 16 % 2), i = (int)(r % 16), nd = base == WICK_Q8_0 ? 8 : 4;
    const uint32_t flip = base == WICK_Q8_0 ? 0x80808080u : 0;
    char *o = blk;
    memcpy(o, pp + mm_r16_scales_at(base, b, h) + (size_t)i * 2, 2);
    for (int j = 0; j < nd; j++) {
        uint32_t v;
        memcpy(&v, pp + mm_r16_vector_at(base, b, h, j) + (size_t)i * 4, 4);
        v ^= flip;
        memcpy(o + 2 + 4 * j, &v, 4);
    }
}

/* Scalar twin: each row's blocks unpacked and dotted exactly as
 * matmul_plain.c does for the file layout. */
void mm_r16_rows_scalar(const mm_call *c) {
    const void *w = c->w, *xq = c->xq;
    const int wtype = c->wtype, cols = c->cols, n = c->n, ldy = c->ldy, r0 = c->r0, r1 = c->r1;
    float *y = c->y;
    const int base = mm_r16_base(wtype), nb = cols / WICK_QK;
    for (int r = r0; r < r1; r++)
        for (int i = 0; i < n; i++) {
            const block_q8_0 *x = (const block_q8_0 *)xq + (size_t)i * nb;
            float s = 0.0f;
            for (int b = 0; b < nb; b++) {
                union {
                    block_q8_0 q8;
                    block_q4_0 q4;
                } u;
                mm_r16_unpack_block(base, w, nb, r, b, &u);
                int32_t is = 0;
                if (base == WICK_Q8_0) {
                    for (int e = 0; e < WICK_QK; e++) is += (int32_t)u.q8.qs[e] * x[b].qs[e];
                } else {
                    const block_q4_0 *w4 = &u.q4;
                    for (int e = 0; e < WICK_QK / 2; e++) {
                        is += ((w4->qs[e] & 15) - 8) * (int32_t)x[b].qs[e];
                        is += ((w4->qs[e] >> 4) - 8) * (int32_t)x[b].qs[e + WICK_QK / 2];
                    }
                }
                s += (float)is * (fp16_to_f32(u.q8.d) * fp16_to_f32(x[b].d));
            }
            y[(size_t)i * ldy + r] = s;
        }
}
