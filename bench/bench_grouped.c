/* bench_grouped.c — times one mixture-of-experts hand-off (matmul_grouped):
 * the gate and up matrices of E experts (rows × cols each, Q8_0/Q4_0
 * repacked as the loader does), every expert given n tokens, against one
 * dense matmul of the same rows and tokens — the grouping's own cost — and
 * reports GMAC/s and the weights' GB/s (median of the repeats).
 * Usage: build/bench/bench_grouped [q4_0|q8_0|f16|...] [experts] [rows] [cols] [n] [threads] [repeats] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/tensor.h"
#include "core/threadpool.h"
#include "kernels/convert.h"
#include "kernels/matmul.h"

#include "bench_tuning.h"
#include "bench_util.h"

static int cmp_d(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    const int type = dtype_from_name(argc > 1 ? argv[1] : "q4_0");
    const int E = arg_int(argc, argv, 2, 32), rows = arg_int(argc, argv, 3, 768);
    const int cols = arg_int(argc, argv, 4, 2048), n = arg_int(argc, argv, 5, 16);
    const int threads = arg_int(argc, argv, 6, 2), reps = arg_int(argc, argv, 7, 7);
    if (type < 0 || !dtype_supported(type) || E < 1 || E > 512 || rows < 16 || cols < 256 || cols % 256 || n < 1 ||
        threads < 1 || reps < 1 || reps > 99) {
        fprintf(stderr, "usage: bench_grouped [type] [experts] [rows] [cols, a multiple of 256] [n] [threads] [repeats]\n");
        return 2;
    }
    wick_error err;
    wick_pool *pool = threads > 1 ? pool_new(threads, &err) : NULL;
    const size_t rb = dtype_row_bytes(type, cols), mb = rb * (size_t)rows;
    const int nm = 2 * E; /* gate and up of each expert, one stack as the loader keeps it */
    char *w = aligned_alloc(64, mb * nm);
    float *row = malloc(sizeof(float) * cols), *x = malloc(sizeof(float) * (size_t)n * cols * E);
    float *y = malloc(sizeof(float) * (size_t)n * rows * nm);
    if (!w || !row || !x || !y) return 1;
    srand(1);
    for (size_t r = 0; r < (size_t)rows * nm; r++) {
        for (int c = 0; c < cols; c++) row[c] = (float)(rand() / (double)RAND_MAX - 0.5);
        quantize_row(type, row, w + r * rb, cols);
    }
    for (size_t i = 0; i < (size_t)n * cols * E; i++) x[i] = (float)(rand() / (double)RAND_MAX - 0.5);
    wick_tensor all = {"w", type, 2, {cols, (int64_t)rows * nm, 1, 1}, w, mb * nm};
    if (matmul_repack_type(bench_kt(), &all) >= 0) all.type = matmul_repack(bench_kt(), pool, &all, w);
    wick_tensor *v = malloc(sizeof *v * nm);
    mm_task *tasks = malloc(sizeof *tasks * nm);
    for (int i = 0; i < nm; i++) {
        v[i] = all;
        v[i].ne[1] = rows;
        v[i].data = w + (size_t)i * mb;
        v[i].nbytes = mb;
        /* expert i/2 has its own n tokens */
        tasks[i] = (mm_task){.W = &v[i], .x = x + (size_t)(i / 2) * n * cols, .n = n, .y = y + (size_t)i * n * rows, .ldy = rows};
    }
    const size_t sbytes = matmul_grouped_scratch_bound(all.type, cols, n * E, E);
    void *scratch = aligned_alloc(64, sbytes + 64);
    wick_tensor dense = all; /* one matmul of all rows over n tokens: the same MACs as every expert's */
    float *yd = malloc(sizeof(float) * (size_t)n * rows * nm);
    void *mm = aligned_alloc(64, matmul_scratch_bytes(all.type, cols, n) + 64);
    double tg[99], td[99];
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        matmul_grouped(bench_kt(), pool, tasks, nm, scratch, sbytes);
        double t1 = now_s();
        matmul(bench_kt(), pool, &dense, x, n, yd, rows * nm, mm);
        double t2 = now_s();
        tg[r] = t1 - t0;
        td[r] = t2 - t1;
    }
    qsort(tg, (size_t)reps, sizeof *tg, cmp_d);
    qsort(td, (size_t)reps, sizeof *td, cmp_d);
    const double macs = (double)rows * nm * cols * n, bytes = (double)mb * nm;
    printf("%s %d experts x (gate, up) %d x %d, %d tokens each, %d threads: grouped %.3f ms (%.1f GMAC/s, %.1f GB/s), "
           "dense %.3f ms (%.1f GMAC/s, %.1f GB/s)\n",
           dtype_name(type), E, rows, cols, n, threads, tg[reps / 2] * 1e3, macs / tg[reps / 2] * 1e-9,
           bytes / tg[reps / 2] * 1e-9, td[reps / 2] * 1e3, macs / td[reps / 2] * 1e-9, bytes / td[reps / 2] * 1e-9);
    pool_free(pool);
    free(w), free(row), free(x), free(y), free(v), free(tasks), free(scratch), free(yd), free(mm);
    return 0;
}
