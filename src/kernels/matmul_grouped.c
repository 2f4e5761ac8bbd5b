/* matmul_grouped.c — owns matmul_grouped(): many products y = x · Wᵀ, each
 * with its own weight, activation rows and output, run in one pool hand-off
 * (a mixture-of-experts layer's experts: the k chosen experts' gate and up
 * matrices for one token, or every used expert over its group of tokens).
 *
 * Steps: (1) prepare each distinct activation block once (quantized to Q8_0
 * blocks for Q8_0/Q4_0 weights, to Q8_K blocks for Q6_K, nothing for float
 * weights) into the caller's scratch; (2) split the tasks' output rows into
 * units of MM_GROUP_ROWS rows (a pair of groups for Q8_0/Q4_0 interleaved,
 * MM_GROUP_ROWS_BATCH for many tokens; a unit never spans two tasks) and hand them
 * out by work stealing (core/steal.h), so each thread streams one contiguous
 * run of weights and a thread left idle takes the back half of another's.
 * Every output row is computed by matmul_rows exactly as matmul() computes
 * it, so results are bit-identical to separate matmul() calls whatever the
 * thread count or grouping. */
#include <string.h>

#include "core/steal.h"
#include "kernels/matmul.h"
#include "kernels/matmul_impl.h"

#define MM_GROUP_ROWS 16 /* rows per unit: one AVX-512 tile, an R16 group, a 64-byte line of y */
#define MM_GROUP_ROWS_PAIR 32 /* the interleaved Q8_0/Q4_0 layouts: a pair of groups, one stream (matmul_impl.h) */
#define MM_GROUP_ROWS_BATCH 128 /* rows per unit of a task past MM_STREAM_MAX_N tokens (the prefill kernels
                                   prepare their activation tiles per call) */

/* Rows per unit of task k. */
static int64_t unit_rows(const mm_task *k) {
    if (k->n > MM_STREAM_MAX_N) return MM_GROUP_ROWS_BATCH;
    return mm_r16_base(k->W->type) >= 0 ? MM_GROUP_ROWS_PAIR : MM_GROUP_ROWS;
}
#define MM_GROUP_OWN 2   /* units the owner takes at a time (as matmul.c's decode split) */

static size_t pad64(size_t b) { return (b + 63) & ~(size_t)63; }

size_t matmul_grouped_scratch_bound(int wtype, int cols, int total_rows, int n_blocks) {
    if (matmul_x_kind(wtype) == 0) return 0;
    return matmul_scratch_bytes(wtype, cols, total_rows) + (size_t)n_blocks * 4 * 64;
}

typedef struct prep_job {
    const kernel_tuning *kt;
    mm_task *t;
    int nt;
    int64_t total; /* activation rows to prepare, over the tasks that own their block */
} prep_job;

static void prep_one(const kernel_tuning *kt, const mm_task *k) {
    matmul_prepare_x(kt, NULL, k->W->type, k->x, k->n, (int)k->W->ne[0], (void *)k->xq);
}

/* Thread ith prepares the blocks whose first row falls in its share of the rows. */
static void prep_task(void *arg, int ith, int nth) {
    const prep_job *j = arg;
    int64_t lo, hi, at = 0;
    pool_split(j->total, ith, nth, 1, &lo, &hi);
    for (int i = 0; i < j->nt; i++) {
        const mm_task *k = &j->t[i];
        if (k->unit0 != -2) continue; /* not a block owner (see matmul_grouped) */
        if (at >= lo && at < hi) prep_one(j->kt, k);
        at += k->n;
    }
}

typedef struct grouped_job {
    const kernel_tuning *kt;
    const mm_task *t;
    int nt;
    steal_set *ranges;
    int64_t units;
} grouped_job;

/* Units [u0, u0 + nu) (they may span several tasks). */
static void run_units(const grouped_job *j, int64_t u0, int64_t nu) {
    int lo = 0, hi = j->nt - 1;
    while (lo < hi) { /* the last task starting at or before u0 */
        const int mid = (lo + hi + 1) / 2;
        if (j->t[mid].unit0 <= u0) lo = mid;
        else hi = mid - 1;
    }
    const int64_t end = u0 + nu;
    for (int i = lo; i < j->nt; i++) {
        const mm_task *k = &j->t[i];
        if (k->unit0 >= end) break;
        const int64_t rows = k->W->ne[1], ur = unit_rows(k), units = k->n > 0 ? (rows + ur - 1) / ur : 0;
        const int64_t a = u0 > k->unit0 ? u0 - k->unit0 : 0, b = end - k->unit0 < units ? end - k->unit0 : units;
        if (b <= a) continue;
        const int64_t r1 = b * ur < rows ? b * ur : rows;
        const mm_call c = {.kt = j->kt, .wtype = k->W->type, .w = k->W->data, .cols = (int)k->W->ne[0], .x = k->x,
                           .xq = k->xq, .n = k->n, .y = k->y, .ldy = k->ldy, .r0 = (int)(a * ur), .r1 = (int)r1};
        matmul_rows(&c);
    }
}

static void grouped_task(void *arg, int ith, int nth) {
    const grouped_job *j = arg;
    if (!j->ranges) { /* one thread */
        (void)nth;
        run_units(j, 0, j->units);
        return;
    }
    int64_t u0, nu;
    while ((nu = steal_own(j->ranges, ith, MM_GROUP_OWN, &u0)) > 0) run_units(j, u0, nu);
    while ((nu = steal_take(j->ranges, ith, &u0)) > 0) run_units(j, u0, nu);
}

int matmul_grouped(const kernel_tuning *kt, wick_pool *pool, mm_task *t, int nt, void *scratch, size_t scratch_bytes) {
    /* (1) activation blocks: a task whose (x, n, cols, kind) an earlier task
     * has shares that task's block. unit0 == -2 marks an owner until step 2. */
    size_t used = 0;
    int64_t prep_rows = 0, prep_elems = 0, work = 0;
    for (int i = 0; i < nt; i++) {
        mm_task *k = &t[i];
        k->xq = NULL;
        k->unit0 = -1;
        const int kind = matmul_x_kind(k->W->type);
        if (k->n <= 0 || kind == 0) continue;
        const int cols = (int)k->W->ne[0];
        for (int p = 0; p < i && !k->xq; p++)
            if (t[p].xq && t[p].x == k->x && t[p].n == k->n && t[p].W->ne[0] == cols && matmul_x_kind(t[p].W->type) == kind)
                k->xq = t[p].xq;
        if (k->xq) continue;
        const size_t b = pad64(matmul_scratch_bytes(k->W->type, cols, k->n));
        if (used + b > scratch_bytes) return -1;
        k->xq = (char *)scratch + used;
        k->unit0 = -2;
        used += b;
        prep_rows += k->n;
        prep_elems += (int64_t)k->n * cols;
    }
    if (prep_rows > 0) {
        prep_job pj = {kt, t, nt, prep_rows};
        pool_run(prep_elems >= (1 << 15) && prep_rows >= 2 ? pool : NULL, prep_task, &pj);
    }
    /* (2) units, numbered task after task */
    int64_t units = 0;
    for (int i = 0; i < nt; i++) {
        mm_task *k = &t[i];
        k->unit0 = units;
        if (k->n <= 0) continue;
        units += (k->W->ne[1] + unit_rows(k) - 1) / unit_rows(k);
        work += k->W->ne[1] * k->W->ne[0] * (int64_t)k->n;
    }
    if (units == 0) return 0;
    grouped_job j = {kt, t, nt, NULL, units};
    steal_set ranges;
    const int nth = pool_size(pool);
    if (work < (1 << 14) || nth < 2) pool = NULL;
    else if (steal_init(&ranges, units, nth)) j.ranges = &ranges;
    else pool = NULL;
    pool_run(pool, grouped_task, &j);
    return 0;
}
