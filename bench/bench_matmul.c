/* bench_matmul.c — times one matmul kernel on one thread, for choosing
 * kernel changes by measurement: y = x·Wᵀ with random W (rows × cols) in the
 * given type (Q8_0/Q4_0 repacked as the loader does for the active ISA) and n
 * activation rows. Prints GMAC/s (median of the repeats) and the kernel used.
 * With a thread count the matmul runs on a pool of that many threads, and
 * every repeat is preceded by a bandwidth probe on as many threads (256 MiB
 * read), so the weight stream's rate is also given as a share of the
 * memory's rate in the same moment (median of the per-repeat ratios); for a
 * matrix much larger than the last-level cache that is the decode kernel's
 * efficiency.
 * Usage: build/bench/bench_matmul [TYPE] [rows] [cols] [n] [repeats] [threads]   (TYPE: any type
 * quantize_row writes) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/tensor.h"
#include "core/threadpool.h"
#include "core/weight_alloc.h"
#include "cli/bench_measure.h"
#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"

#include "bench_tuning.h"
#include "bench_util.h"

int main(int argc, char **argv) {
    const int type = dtype_from_name(argc > 1 ? argv[1] : "q8_0");
    const int rows = arg_int(argc, argv, 2, 4864), cols = arg_int(argc, argv, 3, 896);
    const int n = arg_int(argc, argv, 4, 128), reps = arg_int(argc, argv, 5, 9);
    const int threads = arg_int(argc, argv, 6, 0);
    if (type < 0 || !dtype_supported(type) || !quantize_row_supported(type) || rows < 16 || cols < 32 ||
        cols % dtype_block_elems(type) || n < 1 || reps < 1 || reps > 99 || threads < 0 || threads > 64) {
        fprintf(stderr, "usage: bench_matmul [TYPE: f32 f16 bf16 q8_0 q4_0 q6_k ...] [rows] [cols, a multiple of the type's block] [n] [repeats] [threads]\n");
        return 2;
    }
    float *wf = malloc(sizeof(float) * (size_t)rows * cols), *x = malloc(sizeof(float) * (size_t)n * cols);
    float *y = malloc(sizeof(float) * (size_t)n * rows);
    const size_t wbytes = dtype_row_bytes(type, cols) * (size_t)rows;
    /* as the loader allocates weights: on 4 KiB pages the 151936 × 896 matrix
     * streamed 3% (Q8_0) and 7% (Q5_0) slower with the memory quiet */
    void *w = weight_alloc(wbytes);
    if (!wf || !x || !y || !w) return 1;
    srand(1);
    for (size_t i = 0; i < (size_t)rows * cols; i++) wf[i] = (float)(rand() / (double)RAND_MAX - 0.5);
    for (size_t i = 0; i < (size_t)n * cols; i++) x[i] = (float)(rand() / (double)RAND_MAX - 0.5);
    for (int r = 0; r < rows; r++)
        quantize_row(type, wf + (size_t)r * cols, (char *)w + dtype_row_bytes(type, cols) * r, cols);
    wick_tensor W = {.name = "w", .type = type, .n_dims = 2, .ne = {cols, rows, 1, 1}, .data = w, .nbytes = wbytes};
    if (matmul_repack_type(bench_kt(), &W) >= 0) W.type = matmul_repack(bench_kt(), NULL, &W, w);
    void *scratch = malloc(matmul_scratch_bytes(W.type, cols, n) + 64);
    if (!scratch) return 1;
    wick_pool *pool = threads > 0 ? pool_new(threads, NULL) : NULL;
    if (threads > 0 && !pool) return 1;
    double t[99], share[99];
    matmul(bench_kt(), pool, &W, x, n, y, rows, scratch); /* warm-up */
    for (int k = 0; k < reps; k++) {
        const double bw = threads > 0 ? bench_membw((size_t)256 << 20, threads, 2, NULL) : 0;
        double t0 = now_s();
        matmul(bench_kt(), pool, &W, x, n, y, rows, scratch);
        t[k] = now_s() - t0;
        share[k] = bw > 0 ? wbytes / t[k] * 1e-9 / bw : 0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    qsort(share, (size_t)reps, sizeof *share, cmp_double);
    const double macs = (double)rows * cols * n;
    printf("%s %d x %d, n %d, %d thread%s, %s: %.3f ms, %.1f GMAC/s, %.2f GB/s of weights", dtype_name(type), rows,
           cols, n, threads > 0 ? threads : 1, threads > 1 ? "s" : "", cpu_isa_name(bench_kt()->isa),
           t[reps / 2] * 1e3, macs / t[reps / 2] * 1e-9, wbytes / t[reps / 2] * 1e-9);
    if (threads > 0) printf(", %.0f%% of the memory's rate", 100 * share[reps / 2]);
    printf("\n");
    pool_free(pool);
    free(wf), free(x), free(y), free(w), free(scratch);
    return 0;
}
