/* matmul.c — owns matmul() and matmul_multi(): scratch sizing, activation
 * preparation (quantization), and the split of output rows across the pool;
 * each range of rows goes to matmul_rows, which runs the kernel the table
 * gives (matmul_table.c; kernel families in matmul_impl.h). See matmul.h for
 * the contract.
 *
 * Scratch layout for Q8_0/Q4_0 weights: see mm_xq_* in matmul_impl.h; for
 * the K types, matmul_q8k.h; for BF16_R16, matmul_float_r16.h. */
#include "kernels/matmul.h"

#include <string.h>

#include "core/steal.h"
#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/matmul_impl.h"
#include "kernels/matmul_q8k.h"
#include "kernels/matmul_quant.h"
#include "kernels/matmul_float_r16.h"
#include "kernels/matmul_quant_r16.h"
#include "kernels/ops.h"

/* The activation format the kernels of a weight type read (matmul_quant.h). */
static mm_act act_of(int wtype) {
    if (wtype == WICK_BF16_R16) return MM_ACT_BF16;
    if (mm_quant_r16_base(wtype) >= 0) wtype = mm_quant_r16_base(wtype);
    switch (wtype) {
    case WICK_Q8_0: case WICK_Q4_0: case WICK_Q8_0_R16: case WICK_Q4_0_R16:
    case WICK_Q4_1: case WICK_Q5_0: case WICK_Q5_1: case WICK_IQ4_NL:
        return MM_ACT_Q8_0;
    case WICK_Q6_K: case WICK_Q2_K: case WICK_Q3_K: case WICK_Q4_K: case WICK_Q5_K: case WICK_IQ4_XS:
        return MM_ACT_Q8_K;
    default:
        return MM_ACT_F32;
    }
}

size_t matmul_scratch_bytes(int wtype, int cols, int n) {
    switch (act_of(wtype)) {
    case MM_ACT_Q8_K: return mm_q8k_xq_bytes(cols, n);
    case MM_ACT_Q8_0: return mm_xq_bytes(cols, n);
    case MM_ACT_BF16: return mm_float_r16_xq_bytes(wtype, cols, n);
    default: return 0;
    }
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
    bool act_nt; /* kernel_tuning.act_nt */
} quant_job;

/* A thread's own buffer for the activations it quantizes before copying
 * them out non-temporally (kernel_tuning.act_nt). */
static _Thread_local _Alignas(64) char xq_own[1 << 16];

/* Rows [lo, hi) of j's x into j's xq: their blocks, then sums and scales. */
static void quant_rows(const quant_job *j, int64_t lo, int64_t hi) {
    const int nb = j->cols / WICK_QK;
    for (int64_t i = lo; i < hi; i++)
        quantize_row_q8_0_isa(j->x + i * j->cols, (block_q8_0 *)j->xq + i * nb, j->cols, j->isa);
    xq_finish_rows(j->xq, j->n, j->cols, lo, hi);
}

static void quant_task(void *arg, int ith, int nth) {
    const quant_job *j = arg;
    const int nb = j->cols / WICK_QK;
    int64_t lo, hi;
    pool_split(j->n, ith, nth, 1, &lo, &hi);
    const int m = (int)(hi - lo);
    if (m > 0 && j->act_nt && mm_xq_bytes(j->cols, m) <= sizeof xq_own) {
        /* This thread's rows as an xq of their own, then each part out with
         * non-temporal stores: the other threads read xq next, and writing
         * it in place waits on their copies of its lines (kernel_tuning.act_nt). */
        const quant_job own = {j->x + lo * j->cols, m, j->cols, xq_own, j->isa, false};
        quant_rows(&own, 0, m);
        copy_nt((block_q8_0 *)j->xq + lo * nb, xq_own, sizeof(block_q8_0) * (size_t)m * nb);
        copy_nt((char *)j->xq + mm_xq_sums_offset(j->cols, j->n) + sizeof(int32_t) * (size_t)lo * nb,
                xq_own + mm_xq_sums_offset(j->cols, m), sizeof(int32_t) * (size_t)m * nb);
        copy_nt((char *)j->xq + mm_xq_scales_offset(j->cols, j->n) + sizeof(float) * (size_t)lo * nb,
                xq_own + mm_xq_scales_offset(j->cols, m), sizeof(float) * (size_t)m * nb);
        return;
    }
    quant_rows(j, lo, hi);
}

void matmul_quantize_x(const kernel_tuning *kt, wick_pool *pool, const float *x, int n, int cols, void *xq) {
    quant_job j = {x, n, cols, xq, kt->isa, kt->act_nt};
    if ((int64_t)n * cols < (1 << 15) || n < 2) pool = NULL; /* not worth a hand-off */
    pool_run(pool, quant_task, &j);
}

int matmul_x_kind(int wtype) { return (int)act_of(wtype); }

const void *matmul_prepare_x(const kernel_tuning *kt, wick_pool *pool, int wtype, const float *x, int n, int cols, void *scratch) {
    switch (act_of(wtype)) {
    case MM_ACT_Q8_0: matmul_quantize_x(kt, pool, x, n, cols, scratch); return scratch;
    case MM_ACT_Q8_K: mm_q8k_quantize_x(kt, pool, x, n, cols, scratch); return scratch;
    case MM_ACT_BF16: mm_float_r16_prepare_x(wtype, x, n, cols, scratch); return scratch;
    default: return NULL;
    }
}

/* ---- several weights sharing one x (Q/K/V, gate/up) in one pool hand-off ---- */

#define MM_MULTI_MAX 4
#define MM_DECODE_MAX_N 3 /* up to this many tokens a matmul streams its weights (decode) */
/* Decode: one contiguous range of rows per thread (one stream each),
 * balanced by stealing (core/steal.h); the owner takes kernel_tuning.claim_units
 * units of `align` rows at a time (32 on Zen 4, else 8; cpu.h). A shared
 * counter handing out small chunks in turn makes each chunk a cold stream
 * start; static halves keep the streams but not the balance; stealing from
 * the back of the other thread's range keeps nearly static halves' speed
 * with the balance. Each claim is an atomic update and a kernel call, so
 * claims are a few units, not one. */

typedef struct mm_multi_job {
    const kernel_tuning *kt;
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
        if (b > a) {
            const mm_call c = {.kt = j->kt, .wtype = j->W[i]->type, .w = j->W[i]->data, .cols = j->cols, .x = j->x,
                               .xq = j->xq, .n = j->n, .y = j->y[i], .ldy = j->ldy[i], .r0 = (int)a, .r1 = (int)b};
            matmul_rows(&c);
        }
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
        const int64_t own = j->kt->claim_units;
        while ((nu = steal_own(j->ranges, ith, own, &u0)) > 0) units_range(j, u0, nu);
        while ((nu = steal_take(j->ranges, ith, &u0)) > 0) units_range(j, u0, nu);
        return;
    }
    int64_t lo, hi;
    pool_split(j->total, ith, nth, j->align, &lo, &hi);
    multi_range(j, lo, hi);
}

void matmul(const kernel_tuning *kt, wick_pool *pool, const wick_tensor *W, const float *x, int n, float *y, int ldy,
            void *scratch) {
    matmul_multi(kt, pool, &W, 1, x, n, &y, &ldy, scratch);
}

void matmul_multi(const kernel_tuning *kt, wick_pool *pool, const wick_tensor *const *W, int nw, const float *x, int n,
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
        for (int i = 0; i < nw; i++) matmul(kt, pool, W[i], x, n, y[i], ldy[i], scratch);
        return;
    }
    const void *xq = matmul_prepare_x(kt, pool, W[0]->type, x, n, cols, scratch);
    /* Row parts are multiples of 16 (one AVX-512 tile, a 64-byte line of y)
     * unless that would leave a thread idle on a small matrix; 32 for the
     * interleaved Q8_0/Q4_0 layouts (a pair of groups, one stream); 64 for
     * the interleaved F16/BF16 layouts, whose decode streams 64-row blocks
     * (a unit is one; a decode call, two). */
    const int nth = pool_size(pool);
    bool flt_r16 = true, pair_r16 = true;
    for (int i = 0; i < nw; i++) {
        flt_r16 = flt_r16 && mm_float_r16_base(W[i]->type) >= 0;
        pair_r16 = pair_r16 && mm_r16_base(W[i]->type) >= 0;
    }
    int64_t align = flt_r16 ? 64 : pair_r16 ? 32 : 16;
    while (align > 1 && (total + align - 1) / align < nth) align /= 2;
    mm_multi_job j = {.kt = kt, .nw = nw, .cols = cols, .n = n, .W = W, .y = y, .ldy = ldy, .x = x, .xq = xq,
                      .total = total, .align = align};
    if (total * cols * n < (1 << 14)) pool = NULL;
    steal_set ranges; /* set up only for decode (2 KiB: not zeroed on every call) */
    bool r16 = true; /* interleaved layouts stream up to MM_STREAM_MAX_N tokens (matmul_impl.h) */
    for (int i = 0; i < nw; i++)
        r16 = r16 && (mm_r16_base(W[i]->type) >= 0 || mm_quant_r16_base(W[i]->type) >= 0 || mm_float_r16_base(W[i]->type) >= 0);
    const int stream_max = r16 && kt->isa >= ISA_AVX2 ? MM_STREAM_MAX_N : MM_DECODE_MAX_N;
    if (n <= stream_max && pool_size(pool) > 1 && steal_init(&ranges, (total + align - 1) / align, nth))
        j.ranges = &ranges;
    pool_run(pool, mm_multi_task, &j);
}
