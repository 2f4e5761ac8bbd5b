/* step_matmuls.c — times the weight matmuls of one decode step of a
 * Qwen2.5-0.5B-shaped model with random weights, n tokens at once (a step of
 * n sequences), apart from everything else a step does: 24 layers of Q/K/V
 * (1152 × 896), O (896 × 896), gate+up (9728 × 896) and down (896 × 4864),
 * then the 151936 × 896 output matrix. The weights (~280 MB in Q4_0) are
 * far larger than the caches, so they stream from memory as in a real step.
 * Prints the median and lower quartile of the layers' and the output
 * matrix's times. To compare two builds of a kernel, run each build's binary
 * in turn, several times.
 * Usage: build/bench/step_matmuls [n tokens] [steps] [threads] [TYPE] */
#include <stdio.h>
#include <stdlib.h>

#include "core/tensor.h"
#include "core/threadpool.h"
#include "core/weight_alloc.h"
#include "kernels/convert.h"
#include "kernels/matmul.h"

#include "bench_tuning.h"
#include "bench_util.h"

#define LAYERS 24

static int make_weights(int type, int rows, int cols, wick_tensor *W) {
    const size_t rb = dtype_row_bytes(type, cols), bytes = rb * (size_t)rows;
    void *w = weight_alloc(bytes);
    float *row = malloc(sizeof(float) * (size_t)cols);
    if (!w || !row) return -1;
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) row[c] = (float)(rand() / (double)RAND_MAX - 0.5);
        quantize_row(type, row, (char *)w + rb * (size_t)r, cols);
    }
    free(row);
    *W = (wick_tensor){.name = "w", .type = type, .n_dims = 2, .ne = {cols, rows, 1, 1}, .data = w, .nbytes = bytes};
    if (matmul_repack_type(bench_kt(), W) >= 0) W->type = matmul_repack(bench_kt(), NULL, W, w);
    return 0;
}

int main(int argc, char **argv) {
    const int n = arg_int(argc, argv, 1, 8), steps = arg_int(argc, argv, 2, 15), threads = arg_int(argc, argv, 3, 2);
    const int type = dtype_from_name(argc > 4 ? argv[4] : "q4_0");
    if (n < 1 || n > 64 || steps < 1 || steps > 999 || threads < 1 || threads > 64 || type < 0 ||
        !dtype_supported(type) || !quantize_row_supported(type) || 896 % dtype_block_elems(type) ||
        4864 % dtype_block_elems(type)) {
        fprintf(stderr, "usage: step_matmuls [n tokens 1-64] [steps] [threads] [TYPE, default q4_0]\n");
        return 2;
    }
    static const int shapes[4][2] = {{1152, 896}, {896, 896}, {9728, 896}, {896, 4864}};
    wick_tensor W[LAYERS][4], head;
    srand(1);
    for (int l = 0; l < LAYERS; l++)
        for (int k = 0; k < 4; k++)
            if (make_weights(type, shapes[k][0], shapes[k][1], &W[l][k]) < 0) return 1;
    if (make_weights(type, 151936, 896, &head) < 0) return 1;
    float *x = malloc(sizeof(float) * (size_t)n * 4864), *y = malloc(sizeof(float) * (size_t)n * 151936);
    void *scratch = malloc(matmul_scratch_bytes(type, 4864, n) + 64);
    double *tl = malloc(sizeof(double) * steps), *th = malloc(sizeof(double) * steps);
    wick_pool *pool = pool_new(threads, NULL);
    if (!x || !y || !scratch || !tl || !th || !pool) return 1;
    for (int i = 0; i < n * 4864; i++) x[i] = (float)(rand() / (double)RAND_MAX - 0.5);
    for (int s = -1; s < steps; s++) { /* step -1 warms up */
        const double t0 = now_s();
        for (int l = 0; l < LAYERS; l++)
            for (int k = 0; k < 4; k++) matmul(bench_kt(), pool, &W[l][k], x, n, y, shapes[k][0], scratch);
        const double t1 = now_s();
        matmul(bench_kt(), pool, &head, x, n, y, 151936, scratch);
        const double t2 = now_s();
        if (s >= 0) tl[s] = (t1 - t0) * 1e3, th[s] = (t2 - t1) * 1e3;
    }
    const double ml = median(tl, steps), mh = median(th, steps); /* sorts both */
    printf("%s, %d tokens, %d threads, %d steps: layers %.2f ms (lower quartile %.2f), output matrix %.2f ms (%.2f)\n",
           dtype_name(type), n, threads, steps, ml, tl[steps / 4], mh, th[steps / 4]);
    pool_free(pool);
    return 0;
}
