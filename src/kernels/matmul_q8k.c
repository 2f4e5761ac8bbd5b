/* matmul_q8k.c — owns the preparation of Q8_K activations for the K-type
 * matmuls (see matmul_q8k.h): scratch size, and the rows split over the pool
 * (quantize_row_q8_k_isa in convert.c does each row); where kernel_tuning.act_nt
 * says so, rows go out with non-temporal stores from a buffer of the
 * writer's own. */
#include "kernels/matmul_q8k.h"

#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/ops.h"

size_t mm_q8k_xq_bytes(int cols, int n) { return (size_t)n * (size_t)(cols / WICK_QK_K) * sizeof(block_q8_K); }

typedef struct q8k_job {
    const float *x;
    int n, cols;
    void *xq;
    int isa;
    bool act_nt; /* kernel_tuning.act_nt */
} q8k_job;

/* A thread's own buffer for the rows it quantizes before copying them out
 * non-temporally (kernel_tuning.act_nt). */
static _Thread_local _Alignas(64) char q8k_own[1 << 16];

static void q8k_task(void *arg, int ith, int nth) {
    const q8k_job *j = arg;
    const int nb = j->cols / WICK_QK_K;
    int64_t lo, hi;
    pool_split(j->n, ith, nth, 1, &lo, &hi);
    const int m = (int)(hi - lo);
    /* A decode row, or a pool thread's part of a batch: into this thread's
     * own buffer, then out with non-temporal stores (kernel_tuning.act_nt in cpu.h;
     * the other threads read xq next). */
    if (m > 0 && (nth > 1 || j->n == 1) && j->act_nt && mm_q8k_xq_bytes(j->cols, m) <= sizeof q8k_own) {
        for (int64_t i = lo; i < hi; i++)
            quantize_row_q8_k_isa(j->x + i * j->cols, (block_q8_K *)q8k_own + (i - lo) * nb, nb, j->isa);
        copy_nt((block_q8_K *)j->xq + lo * nb, q8k_own, mm_q8k_xq_bytes(j->cols, m));
        return;
    }
    for (int64_t i = lo; i < hi; i++) quantize_row_q8_k_isa(j->x + i * j->cols, (block_q8_K *)j->xq + i * nb, nb, j->isa);
}

void mm_q8k_quantize_x(const kernel_tuning *kt, wick_pool *pool, const float *x, int n, int cols, void *xq) {
    q8k_job j = {x, n, cols, xq, kt->isa, kt->act_nt};
    if ((int64_t)n * cols < (1 << 15) || n < 2) pool = NULL; /* not worth a hand-off */
    pool_run(pool, q8k_task, &j);
}
