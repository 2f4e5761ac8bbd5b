/* matmul_q6k.c — owns the Q6_K weight matmul's activation quantization
 * (Q8_K-style blocks, see matmul_q6k.h), its scalar reference kernel (the
 * twin the AVX2/AVX-512 kernels in matmul_q6k_avx2.c / matmul_q6k_avx512.c
 * are tested against) and the choice of kernel per ISA.
 *
 * Scalar kernel: per super-block the exact int32 isum of matmul_q6k.h,
 * then s += (fp16_to_f32(d_w) * d_x) * isum in float, in block order. */
#include "kernels/matmul_q6k.h"

#include <math.h>
#include <string.h>

#include "kernels/convert.h"
#include "kernels/cpu.h"

size_t mm_q6k_xq_bytes(int cols, int n) {
    return (size_t)n * (size_t)(cols / WICK_QK_K) * sizeof(block_q8_K);
}

void mm_q6k_quantize_row(const float *x, block_q8_K *y, int nb) {
    quantize_row_q8_k_isa(x, y, nb, cpu_isa_active());
}

typedef struct q8k_job {
    const float *x;
    int n, cols;
    void *xq;
} q8k_job;

static void q8k_task(void *arg, int ith, int nth) {
    const q8k_job *j = arg;
    const int nb = j->cols / WICK_QK_K;
    int64_t lo, hi;
    pool_split(j->n, ith, nth, 1, &lo, &hi);
    for (int64_t i = lo; i < hi; i++)
        mm_q6k_quantize_row(j->x + i * j->cols, (block_q8_K *)j->xq + i * nb, nb);
}

void mm_q6k_quantize_x(wick_pool *pool, const float *x, int n, int cols, void *xq) {
    q8k_job j = {x, n, cols, xq};
    if ((int64_t)n * cols < (1 << 15) || n < 2) pool = NULL; /* not worth a hand-off */
    pool_run(pool, q8k_task, &j);
}

/* The exact integer product of one weight and one activation super-block. */
static int32_t q6k_block_isum(const block_q6_K *w, const block_q8_K *x) {
    int8_t q[WICK_QK_K];
    for (int h = 0; h < 2; h++)
        for (int l = 0; l < 32; l++) {
            const uint8_t a = w->ql[64 * h + l], b = w->ql[64 * h + 32 + l], hb = w->qh[32 * h + l];
            q[128 * h + l] = (int8_t)(((a & 15) | ((hb & 3) << 4)) - 32);
            q[128 * h + 32 + l] = (int8_t)(((b & 15) | (((hb >> 2) & 3) << 4)) - 32);
            q[128 * h + 64 + l] = (int8_t)(((a >> 4) | (((hb >> 4) & 3) << 4)) - 32);
            q[128 * h + 96 + l] = (int8_t)(((b >> 4) | (((hb >> 6) & 3) << 4)) - 32);
        }
    int32_t isum = 0;
    for (int g = 0; g < WICK_QK_K / 16; g++) {
        int32_t s = 0;
        for (int j = 0; j < 16; j++) s += (int32_t)q[16 * g + j] * x->qs[16 * g + j];
        isum += (int32_t)w->scales[g] * s;
    }
    return isum;
}

void mm_q6k_rows_scalar(const void *w, int cols, const void *xq, int n, float *y, int ldy, int r0,
                        int r1) {
    const int nb = cols / WICK_QK_K;
    const block_q6_K *W = w;
    const block_q8_K *X = xq;
    for (int r = r0; r < r1; r++) {
        const block_q6_K *wr = W + (size_t)r * nb;
        for (int i = 0; i < n; i++) {
            const block_q8_K *xr = X + (size_t)i * nb;
            float s = 0.0f;
            for (int b = 0; b < nb; b++)
                s += (fp16_to_f32(wr[b].d) * xr[b].d) * (float)q6k_block_isum(&wr[b], &xr[b]);
            y[(size_t)i * ldy + r] = s;
        }
    }
}

void mm_q6k_rows(const void *w, int cols, const void *xq, int n, float *y, int ldy, int r0, int r1) {
    if (r1 <= r0 || n <= 0) return;
#if defined(__x86_64__) || defined(__i386__)
    switch (cpu_isa_active()) {
    case ISA_AVX512:
        mm_q6k_rows_avx512(w, cols, xq, n, y, ldy, r0, r1);
        return;
    case ISA_AVX2:
        mm_q6k_rows_avx2(w, cols, xq, n, y, ldy, r0, r1);
        return;
    default:
        break;
    }
#endif
    mm_q6k_rows_scalar(w, cols, xq, n, y, ldy, r0, r1);
}
