/* matmul.c — owns matmul(): scratch sizing, activation quantization, the
 * split of output rows across the pool, and the choice of kernel per ISA
 * (the kernels themselves are in matmul_scalar.c / matmul_avx2.c /
 * matmul_avx512.c). See matmul.h for the contract.
 *
 * Scratch layout for Q8_0/Q4_0 weights: see mm_xq_* in matmul_impl.h.
 * Q6_K weights go to matmul_q6k*.c with Q8_K-style activations (matmul_q6k.h).
 * The interleaved Q8_0/Q4_0 layouts (WICK_*_R16) go to matmul_repack*.c. */
#include "kernels/matmul.h"

#include <string.h>

#include "core/steal.h"
#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/matmul_impl.h"
#include "kernels/matmul_q6k.h"

static bool is_quant(int wtype) {
    return wtype == WICK_Q8_0 || wtype == WICK_Q4_0 || mm_r16_base(wtype) >= 0;
}

size_t matmul_scratch_bytes(int wtype, int cols, int n) {
    if (wtype == WICK_Q6_K) return mm_q6k_xq_bytes(cols, n);
    if (!is_quant(wtype)) return 0;
    return mm_xq_bytes(cols, n);
}

/* Sums and f32 scales of rows [i0, i1) of the Q8_0 blocks in xq. */
static void xq_finish_rows(void *xq, int n, int cols, int64_t i0, int64_t i1) {
    const int nb = cols / WICK_QK;
    const block_q8_0 *blocks = xq;
    int32_t *sums = (int32_t *)((char *)xq + mm_xq_sums_offset(cols, n));
    float *scales = (float *)((char *)xq + mm_xq_scales_offset(cols, n));
    for (int64_t k = i0 * nb; k < i1 * nb; k++) {
        int32_t t = 0;
        for (int e = 0; e < WICK_QK; e++) t += blocks[k].qs[e];
        sums[k] = t;
        scales[k] = fp16_to_f32(blocks[k].d);
    }
}

void matmul_xq_finish(void *xq, int n, int cols) { xq_finish_rows(xq, n, cols, 0, n); }

typedef struct quant_job {
    const float *x;
    int n, cols;
    void *xq;
    int isa;
} quant_job;

static void quant_task(void *arg, int ith, int nth) {
    const quant_job *j = arg;
    const int nb = j->cols / WICK_QK;
    int64_t lo, hi;
    pool_split(j->n, ith, nth, 1, &lo, &hi);
    for (int64_t i = lo; i < hi; i++)
        quantize_row_q8_0_isa(j->x + i * j->cols, (block_q8_0 *)j->xq + i * nb, j->cols, j->isa);
    xq_finish_rows(j->xq, j->n, j->cols, lo, hi);
}

void matmul_quantize_x(wick_pool *pool, const float *x, int n, int cols, void *xq) {
    quant_job j = {x, n, cols, xq, cpu_isa_active()};
    if ((int64_t)n * cols < (1 << 15) || n < 2) pool = NULL; /* not worth a hand-off */
    pool_run(pool, quant_task, &j);
}

void matmul_rows_scalar(int wtype, const void *w, int cols, const float *x, const void *xq, int n,
                        float *y, int ldy, int r0, int r1) {
    if (wtype == WICK_Q6_K) {
        mm_q6k_rows_scalar(w, cols, xq, n, y, ldy, r0, r1);
        return;
    }
    if (mm_r16_base(wtype) >= 0) {
        mm_rows_r16_scalar(wtype, w, cols, xq, n, y, ldy, r0, r1);
        return;
    }
    mm_rows_scalar(wtype, w, cols, x, xq, n, y, ldy, r0, r1);
}

void matmul_rows(int wtype, const void *w, int cols, const float *x, const void *xq, int n,
                 float *y, int ldy, int r0, int r1) {
    if (r1 <= r0 || n <= 0) return;
    if (wtype == WICK_Q6_K) {
        mm_q6k_rows(w, cols, xq, n, y, ldy, r0, r1);
        return;
    }
    if (mm_r16_base(wtype) >= 0) { /* interleaved layouts (matmul_repack*.c) */
#if defined(__x86_64__) || defined(__i386__)
        if (cpu_isa_active() == ISA_AVX512) mm_rows_r16_avx512(wtype, w, cols, xq, n, y, ldy, r0, r1);
        else
#endif
            mm_rows_r16_scalar(wtype, w, cols, xq, n, y, ldy, r0, r1);
        return;
    }
#if defined(__x86_64__) || defined(__i386__)
    switch (cpu_isa_active()) {
    case ISA_AVX512:
        mm_rows_avx512(wtype, w, cols, x, xq, n, y, ldy, r0, r1);
        return;
    case ISA_AVX2:
        mm_rows_avx2(wtype, w, cols, x, xq, n, y, ldy, r0, r1);
        return;
    default:
        break;
    }
#endif
    mm_rows_scalar(wtype, w, cols, x, xq, n, y, ldy, r0, r1);
}

int matmul_x_kind(int wtype) {
    if (is_quant(wtype)) return 1;
    if (wtype == WICK_Q6_K) return 2;
    return 0;
}

const void *matmul_prepare_x(wick_pool *pool, int wtype, const float *x, int n, int cols, void *scratch) {
    switch (matmul_x_kind(wtype)) {
    case 1: matmul_quantize_x(pool, x, n, cols, scratch); return scratch;
    case 2: mm_q6k_quantize_x(pool, x, n, cols, scratch); return scratch;
    default: return NULL;
    }
}

/* ---- several weights sharing one x (Q/K/V, gate/up) in one pool hand-off ---- */

#define MM_MULTI_MAX 4
#define MM_DECODE_MAX_N 3 /* up to this many tokens a matmul streams its weights (decode) */
/* Decode: one contiguous range of rows per thread (one stream each),
 * balanced by stealing (core/steal.h); the owner takes MM_OWN_UNITS units of
 * `align` rows at a time. Measured on the 2-vCPU Zen 5 machine with the
 * memory at ~80 GB/s (share of a plain read, Q4_0 1024 × 2048 / Q8_0 1024 ×
 * 2048 / Q4_0 3072 × 1024, alternating): the earlier shared counter (95% in
 * long runs, then small chunks taken in turn, each a cold stream start) 81 /
 * 93 / 92%, static halves 87 / 95 / 96%, stealing 85 / 94 / 92%: nearly
 * static's speed with the balance kept. */
#define MM_OWN_UNITS 2

typedef struct mm_multi_job {
    int nw, cols, n;
    const wick_tensor *const *W;
    float *const *y;
    const int *ldy;
    const float *x;
    const void *xq;
    int64_t total, align;
    steal_set *ranges; /* decode: units of `align` rows handed out by stealing; NULL in prefill */
} mm_multi_job;

/* Rows [lo, hi) of the weights' stacked rows. */
static void multi_range(const mm_multi_job *j, int64_t lo, int64_t hi) {
    int64_t base = 0;
    for (int i = 0; i < j->nw && lo < hi; i++) {
        const int64_t rows = j->W[i]->ne[1];
        const int64_t a = lo > base ? lo - base : 0, b = hi - base < rows ? hi - base : rows;
        if (b > a)
            matmul_rows(j->W[i]->type, j->W[i]->data, j->cols, j->x, j->xq, j->n, j->y[i], j->ldy[i],
                        (int)a, (int)b);
        base += rows;
    }
}

static void units_range(const mm_multi_job *j, int64_t u0, int64_t nu) {
    const int64_t lo = u0 * j->align, hi = (u0 + nu) * j->align;
    multi_range(j, lo, hi < j->total ? hi : j->total);
}

/* Prefill: one contiguous part per thread (each keeps its row blocks' weights
 * in its own cache). Decode: the same parts, balanced by stealing (above). */
static void mm_multi_task(void *arg, int ith, int nth) {
    mm_multi_job *j = arg;
    if (j->ranges) {
        int64_t u0, nu;
        while ((nu = steal_own(j->ranges, ith, MM_OWN_UNITS, &u0)) > 0) units_range(j, u0, nu);
        while ((nu = steal_take(j->ranges, ith, &u0)) > 0) units_range(j, u0, nu);
        return;
    }
    int64_t lo, hi;
    pool_split(j->total, ith, nth, j->align, &lo, &hi);
    multi_range(j, lo, hi);
}

void matmul(wick_pool *pool, const wick_tensor *W, const float *x, int n, float *y, int ldy,
            void *scratch) {
    matmul_multi(pool, &W, 1, x, n, &y, &ldy, scratch);
}

void matmul_multi(wick_pool *pool, const wick_tensor *const *W, int nw, const float *x, int n,
                  float *const *y, const int *ldy, void *scratch) {
    if (n <= 0 || nw <= 0) return;
    const int cols = (int)W[0]->ne[0];
    bool same = nw <= MM_MULTI_MAX;
    int64_t total = 0;
    for (int i = 0; i < nw; i++) {
        same = same && W[i]->ne[0] == cols && matmul_x_kind(W[i]->type) == matmul_x_kind(W[0]->type);
        total += W[i]->ne[1];
    }
    if (!same) {
        for (int i = 0; i < nw; i++) matmul(pool, W[i], x, n, y[i], ldy[i], scratch);
        return;
    }
    const void *xq = matmul_prepare_x(pool, W[0]->type, x, n, cols, scratch);
    /* Row parts are multiples of 16 (one AVX-512 tile, a 64-byte line of y)
     * unless that would leave a thread idle on a small matrix. */
    const int nth = pool_size(pool);
    int64_t align = 16;
    while (align > 1 && (total + align - 1) / align < nth) align /= 2;
    mm_multi_job j = {.nw = nw, .cols = cols, .n = n, .W = W, .y = y, .ldy = ldy, .x = x, .xq = xq,
                      .total = total, .align = align};
    if (total * cols * n < (1 << 14)) pool = NULL;
    steal_set ranges; /* set up only for decode (2 KiB: not zeroed on every call) */
    bool r16 = true; /* interleaved layouts stream up to MM_STREAM_MAX_N tokens (matmul_impl.h) */
    for (int i = 0; i < nw; i++) r16 = r16 && mm_r16_base(W[i]->type) >= 0;
    const int stream_max = r16 && cpu_isa_active() == ISA_AVX512 ? MM_STREAM_MAX_N : MM_DECODE_MAX_N;
    if (n <= stream_max && pool_size(pool) > 1 && steal_init(&ranges, (total + align - 1) / align, nth))
        j.ranges = &ranges;
    pool_run(pool, mm_multi_task, &j);
}
