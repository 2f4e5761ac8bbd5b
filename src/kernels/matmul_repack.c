/* matmul_repack.c — owns the decision to use the interleaved ("R16")
 * layouts, the parallel repack at load, and the dequantization of one row
 * (embedding lookups of a tied, repacked token_embd) for every type that has
 * one. The layouts themselves are matmul_r16.c's (Q8_0/Q4_0, described in
 * matmul_impl.h), matmul_quant_r16.c's and matmul_float_r16.c's. */
#include <stdlib.h>
#include <string.h>

#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/matmul_impl.h"
#include "kernels/matmul_float_r16.h"
#include "kernels/matmul_quant_r16.h"

/* The interleaved type of W regardless of the ISA, or -1. */
static int r16_type(const kernel_tuning *kt, const wick_tensor *W) {
    if (W && W->ne[2] == 1 && W->ne[3] == 1 && mm_float_r16_type(kt, W->type, W->ne[1], W->ne[0]) >= 0)
        return mm_float_r16_type(kt, W->type, W->ne[1], W->ne[0]);
    const int be = W ? dtype_block_elems(W->type) : 0;
    if (!W || be <= 1 || W->ne[1] % 16 != 0 || W->ne[1] <= 0 || W->ne[0] % be != 0 || W->ne[0] <= 0 ||
        W->ne[2] != 1 || W->ne[3] != 1)
        return -1;
    if (W->type == WICK_Q8_0 || W->type == WICK_Q4_0) /* groups go in pairs (matmul_impl.h) */
        return W->ne[1] % 32 != 0 ? -1 : W->type == WICK_Q8_0 ? WICK_Q8_0_R16 : WICK_Q4_0_R16;
    return mm_quant_r16_of(W->type);
}

/* The file type of any interleaved type, or -1. */
static int any_r16_base(int wtype) {
    const int b = mm_r16_base(wtype);
    return b >= 0 ? b : mm_quant_r16_base(wtype);
}

/* An interleaved layout only where the kernel table has a SIMD kernel for
 * it under the active ISA (matmul_table.c): AVX-512 every one; AVX2 Q8_0,
 * Q4_0, Q5_0, Q4_K, Q6_K and the F16/BF16 halves layouts. */
int matmul_repack_type(const kernel_tuning *kt, const wick_tensor *W) {
    const int to = kt->isa >= ISA_AVX2 ? r16_type(kt, W) : -1;
    if (to < 0) return to;
    return mm_kernel_simd(kt->isa, to) ? to : -1;
}

int matmul_repack_unit_rows(int to) {
    return mm_float_r16_base(to) >= 0 ? MM_FLOAT_R16_BLOCK_ROWS : mm_r16_base(to) >= 0 ? 32 : 16;
}

typedef struct repack_job {
    int base, to, nb;
    int unit_rows;  /* rows packed together: 16 (a group), 32 for Q8_0/Q4_0 (a pair), 64 for F16/BF16 (a block) */
    int64_t groups; /* units */
    const char *src;
    char *dst;
    _Atomic int failed;
} repack_job;

static void repack_task(void *arg, int ith, int nth) {
    repack_job *j = arg;
    int64_t lo, hi;
    pool_split(j->groups, ith, nth, 1, &lo, &hi);
    if (lo >= hi) return;
    const size_t gb = (size_t)j->unit_rows * dtype_row_bytes(j->base, (int64_t)j->nb * dtype_block_elems(j->base));
    char *tmp = NULL;
    if (j->src == j->dst && !(tmp = malloc(gb))) {
        j->failed = 1;
        return;
    }
    for (int64_t g = lo; g < hi; g++) {
        const char *s = j->src + (size_t)g * gb;
        if (tmp) s = memcpy(tmp, s, gb);
        if (j->base == WICK_F16 || j->base == WICK_BF16) mm_float_r16_pack_block(j->to, s, j->dst + (size_t)g * gb, j->nb);
        else if (j->base == WICK_Q8_0 || j->base == WICK_Q4_0) mm_r16_pack_pair(j->base, s, j->dst + (size_t)g * gb, j->nb);
        else mm_quant_r16_pack_group(j->base, s, j->dst + (size_t)g * gb, j->nb);
    }
    free(tmp);
}

int matmul_repack(const kernel_tuning *kt, wick_pool *pool, const wick_tensor *W, void *dst) {
    const int to = r16_type(kt, W);
    if (to < 0) return -1;
    const int unit = matmul_repack_unit_rows(to);
    repack_job j = {W->type, to, (int)(W->ne[0] / dtype_block_elems(W->type)), unit, W->ne[1] / unit, W->data, dst, 0};
    pool_run(pool, repack_task, &j);
    return j.failed ? -1 : to;
}

void matmul_weight_row(const wick_tensor *W, int64_t r, float *dst) {
    const int64_t cols = W->ne[0];
    if (mm_float_r16_base(W->type) >= 0) {
        const int fb = mm_float_r16_base(W->type);
        const int64_t B = MM_FLOAT_R16_BLOCK_ROWS;
        mm_float_r16_row_f32(W->type, (const char *)W->data + (size_t)(r / B) * (size_t)B * dtype_row_bytes(fb, cols), (int)cols,
                        (int)(r % B), dst);
        return;
    }
    const int base = any_r16_base(W->type);
    if (base < 0) {
        dequantize_row(W->type, (const char *)W->data + (size_t)r * dtype_row_bytes(W->type, cols), dst, cols);
        return;
    }
    if (base != WICK_Q8_0 && base != WICK_Q4_0) {
        const int be = dtype_block_elems(base), nb = (int)(cols / be);
        const char *g = (const char *)W->data + (size_t)(r / 16) * 16 * dtype_row_bytes(base, cols);
        for (int b = 0; b < nb; b++) {
            char blk[256];
            mm_quant_r16_unpack_block(base, g, nb, (int)(r % 16), b, blk);
            dequantize_row(base, blk, dst + (size_t)b * be, be);
        }
        return;
    }
    const int nb = (int)(cols / WICK_QK);
    for (int b = 0; b < nb; b++) {
        block_q8_0 blk; /* large enough for either block type */
        mm_r16_unpack_block(base, W->data, nb, r, b, &blk);
        dequantize_row(base, &blk, dst + (size_t)b * WICK_QK, WICK_QK);
    }
}
