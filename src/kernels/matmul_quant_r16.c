/* matmul_quant_r16.c — owns the interleaved layouts of matmul_quant_r16.h:
 * each type's description as data (dword segments, the Q5 bit plane, the
 * tail), the repacking of 16 file rows into a group and of one block back,
 * and the scalar twin of the AVX-512 kernels (each block unpacked to the
 * file layout and stepped by THE DEFINITION of matmul_quant.h, so it is
 * bit-identical to them). */
#include "kernels/matmul_quant_r16.h"

#include <string.h>

#include "kernels/matmul_impl.h"
#include "kernels/matmul_q8k.h"
#include "kernels/matmul_quant.h"
#include "kernels/quant_blocks.h"

/* Where a block's file bytes go in its group's main part. */
typedef struct r16_seg {
    uint8_t at;   /* file byte offset */
    uint8_t n;    /* dwords (= vectors) */
    uint8_t dst;  /* first vector */
    uint8_t step; /* vectors from one dword's to the next's */
} r16_seg;

typedef struct r16_desc {
    int base;
    int main_vectors;
    int tail_at;   /* file offset of the fp16 d that goes to the tail, or -1 */
    int plane_at;  /* file offset of Q5 fifth bits, or -1 */
    int plane_dst; /* their vector */
    r16_seg seg[7];
    int n_seg;
} r16_desc;

static const r16_desc DESCS[] = {
    {WICK_Q4_1, 5, -1, -1, 0, {{4, 4, 0, 1}, {0, 1, 4, 1}}, 2},
    {WICK_Q5_0, 5, 0, 2, 0, {{6, 4, 1, 1}}, 1},
    {WICK_Q5_1, 6, -1, 4, 0, {{8, 4, 1, 1}, {0, 1, 5, 1}}, 2},
    {WICK_IQ4_NL, 4, 0, -1, 0, {{2, 4, 0, 1}}, 1},
    {WICK_Q4_K, 36, -1, -1, 0, {{4, 3, 0, 1}, {0, 1, 3, 1}, {16, 32, 4, 1}}, 3},
    {WICK_Q5_K, 44, -1, -1, 0, {{4, 3, 0, 1}, {0, 1, 3, 1}, {16, 8, 4, 1}, {48, 32, 12, 1}}, 4},
    {WICK_Q6_K, 52, 208, -1, 0, /* qh and the low ql of each half alternate */
     {{192, 4, 0, 1}, {128, 8, 4, 2}, {0, 8, 5, 2}, {32, 8, 20, 1}, {160, 8, 28, 2}, {64, 8, 29, 2}, {96, 8, 44, 1}},
     7},
    {WICK_Q3_K, 27, 108, -1, 0, {{96, 3, 0, 1}, {0, 8, 3, 1}, {32, 16, 11, 1}}, 3},
    {WICK_Q2_K, 21, -1, -1, 0, {{0, 4, 0, 1}, {80, 1, 4, 1}, {16, 16, 5, 1}}, 3},
    {WICK_IQ4_XS, 34, -1, -1, 0, {{0, 1, 0, 1}, {4, 1, 1, 1}, {8, 32, 2, 1}}, 3},
};
#define N_DESCS (int)(sizeof DESCS / sizeof DESCS[0])

static const r16_desc *desc_of(int base) {
    for (int i = 0; i < N_DESCS; i++)
        if (DESCS[i].base == base) return &DESCS[i];
    return NULL;
}

int mm_quant_r16_base(int wtype) {
    return wtype >= WICK_Q4_1_R16 && wtype < WICK_R16_END ? DESCS[wtype - WICK_Q4_1_R16].base : -1;
}

int mm_quant_r16_of(int base) {
    for (int i = 0; i < N_DESCS; i++)
        if (DESCS[i].base == base) return WICK_Q4_1_R16 + i;
    return -1;
}

/* File fifth bits (bit j = element j) <-> the plane (byte k bit g = element 4g+k). */
static uint32_t plane_of(uint32_t h) {
    uint32_t p = 0;
    for (int g = 0; g < 8; g++)
        for (int k = 0; k < 4; k++) p |= ((h >> (4 * g + k)) & 1u) << (8 * k + g);
    return p;
}

static uint32_t bits_of(uint32_t p) {
    uint32_t h = 0;
    for (int g = 0; g < 8; g++)
        for (int k = 0; k < 4; k++) h |= ((p >> (8 * k + g)) & 1u) << (4 * g + k);
    return h;
}

/* Copy between one row's file block and its lanes in a group's block (to_group: direction). */
static void map_block(const r16_desc *d, char *file, char *main, char *tail, int i, bool to_group) {
    for (int s = 0; s < d->n_seg; s++)
        for (int k = 0; k < d->seg[s].n; k++) {
            char *f = file + d->seg[s].at + 4 * k, *g = main + 64 * (d->seg[s].dst + d->seg[s].step * k) + 4 * i;
            if (to_group) memcpy(g, f, 4);
            else memcpy(f, g, 4);
        }
    if (d->plane_at >= 0) {
        uint32_t v;
        char *f = file + d->plane_at, *g = main + 64 * d->plane_dst + 4 * i;
        memcpy(&v, to_group ? f : g, 4);
        v = to_group ? plane_of(v) : bits_of(v);
        memcpy(to_group ? g : f, &v, 4);
    }
    if (d->tail_at >= 0) {
        if (to_group) memcpy(tail + 2 * i, file + d->tail_at, 2);
        else memcpy(file + d->tail_at, tail + 2 * i, 2);
    }
}

void mm_quant_r16_pack_group(int base, const void *src, void *dst, int nb) {
    const r16_desc *d = desc_of(base);
    const size_t bb = dtype_block_bytes(base), mb = (size_t)d->main_vectors * 64, tb = d->tail_at >= 0 ? 32 : 0;
    for (int i = 0; i < 16; i++)
        for (int b = 0; b < nb; b++) {
            char blk[256];
            memcpy(blk, (const char *)src + ((size_t)i * nb + b) * bb, bb);
            map_block(d, blk, (char *)dst + mm_quant_r16_main_at(mb, tb, nb, b), (char *)dst + mm_quant_r16_tail_at(mb, tb, b), i,
                      true);
        }
}

void mm_quant_r16_unpack_block(int base, const void *group, int nb, int row, int b, void *blk) {
    const r16_desc *d = desc_of(base);
    const size_t mb = (size_t)d->main_vectors * 64, tb = d->tail_at >= 0 ? 32 : 0;
    char *g = (char *)group; /* read only: map_block copies out of it */
    map_block(d, blk, g + mm_quant_r16_main_at(mb, tb, nb, b), g + mm_quant_r16_tail_at(mb, tb, b), row, false);
}

void mm_quant_r16_rows_scalar(const mm_call *c) {
    const void *w = c->w, *xq = c->xq;
    const int cols = c->cols, n = c->n, ldy = c->ldy;
    float *y = c->y;
    const int base = mm_quant_r16_base(c->wtype);
    const int be = dtype_block_elems(base), nb = cols / be;
    const size_t bb = dtype_block_bytes(base), gb = 16 * (size_t)nb * bb;
    char row[16384];
    for (int r = c->r0; r < c->r1; r++) {
        /* the row back in the file layout, a chunk of blocks at a time */
        const int per = (int)(sizeof row / bb);
        for (int b0 = 0; b0 < nb; b0 += per) {
            const int nbk = nb - b0 < per ? nb - b0 : per;
            for (int b = 0; b < nbk; b++)
                mm_quant_r16_unpack_block(base, (const char *)w + (size_t)(r / 16) * gb, nb, r % 16, b0 + b, row + (size_t)b * bb);
            mm_quant_dot_blocks(base, row, b0, nbk, cols, xq, n, y, ldy, r, b0 == 0);
        }
    }
}
