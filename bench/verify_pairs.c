/* verify_pairs.c — what verifying k drafted tokens costs in decode steps,
 * measured so that a shared machine's drifting memory bandwidth cancels:
 * after `depth` prefilled tokens, a one-token pass (k = 0) and a pass over
 * 1 + k tokens with logits for each alternate `pairs` times, and each pair
 * gives one ratio. Prints the median step time and ratio, and the median
 * ratio over the third of the pairs with the fastest steps (the memory at
 * its quietest) and over the rest. `wick bench --verify-cost` runs k in
 * turn instead; this is the A/B tool for one k (run two builds' copies
 * alternately and compare their lines).
 * Usage: build/bench/verify_pairs MODEL [depth 256] [threads 2] [k 4] [pairs 40] */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "engine/context.h"
#include "wick.h"

#define MAX_K 8

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: verify_pairs MODEL [depth 256] [threads 2] [k 4] [pairs 40]\n");
        return 2;
    }
    const int depth = arg_int(argc, argv, 2, 256), threads = arg_int(argc, argv, 3, 2);
    const int k = arg_int(argc, argv, 4, 4), pairs = arg_int(argc, argv, 5, 40);
    if (depth < 1 || threads < 1 || k < 1 || k > MAX_K || pairs < 3) {
        fprintf(stderr, "verify_pairs: need depth >= 1, threads >= 1, 1 <= k <= %d, pairs >= 3\n", MAX_K);
        return 2;
    }
    wick_error err;
    wick_model *m = wick_model_load(argv[1], NULL, &err);
    if (!m) {
        fprintf(stderr, "verify_pairs: %s\n", err.msg);
        return 1;
    }
    wick_context_params cp = {.n_ctx = depth + MAX_K + 8, .n_seq = 1, .n_threads = threads, .prefill_chunk = -1,
                              .max_batch = depth > 64 ? depth : 64};
    wick_context *c = wick_context_new(m, &cp, &err);
    int32_t *tok = malloc(sizeof(int32_t) * (size_t)depth), *pos = malloc(sizeof(int32_t) * (size_t)depth);
    int32_t *seq = calloc((size_t)depth, sizeof(int32_t));
    bool *want = calloc((size_t)depth, sizeof(bool));
    double *step = malloc(sizeof(double) * (size_t)pairs), *ratio = malloc(sizeof(double) * (size_t)pairs);
    double *fast = malloc(sizeof(double) * (size_t)pairs), *rest = malloc(sizeof(double) * (size_t)pairs);
    if (!c || !tok || !pos || !seq || !want || !step || !ratio || !fast || !rest ||
        context_reserve_logits(c, MAX_K + 1, &err) < 0) {
        fprintf(stderr, "verify_pairs: %s\n", c ? err.msg : "cannot create the context");
        return 1;
    }
    wick_model_info info;
    wick_model_get_info(m, &info);
    const int n_vocab = info.n_vocab;
    for (int t = 0; t < depth; t++) tok[t] = (int32_t)((t * 7919) % n_vocab), pos[t] = t;
    wick_batch pre = {.n = depth, .tokens = tok, .pos = pos, .seq = seq, .want_logits = want};
    if (wick_decode(c, &pre, &err) < 0) {
        fprintf(stderr, "verify_pairs: %s\n", err.msg);
        return 1;
    }
    for (int p = 0; p < pairs; p++) {
        double t[2];
        for (int pass = 0; pass < 2; pass++) {
            const int n = pass ? k + 1 : 1;
            int32_t bt[MAX_K + 1], bp[MAX_K + 1], bs[MAX_K + 1] = {0};
            bool bw[MAX_K + 1];
            for (int i = 0; i < n; i++) bt[i] = (int32_t)((i * 131 + p * 7) % n_vocab), bp[i] = depth + i, bw[i] = true;
            wick_batch b = {.n = n, .tokens = bt, .pos = bp, .seq = bs, .want_logits = bw};
            const double t0 = now_s();
            if (wick_decode(c, &b, &err) < 0) {
                fprintf(stderr, "verify_pairs: %s\n", err.msg);
                return 1;
            }
            t[pass] = now_s() - t0;
            wick_seq_truncate(c, 0, depth);
        }
        step[p] = t[0], ratio[p] = t[1] / t[0];
    }
    /* the fastest third of the steps (quiet memory) against the rest */
    double *sorted = malloc(sizeof(double) * (size_t)pairs);
    for (int p = 0; p < pairs; p++) sorted[p] = step[p];
    qsort(sorted, (size_t)pairs, sizeof(double), cmp_double);
    const double cut = sorted[pairs / 3];
    int nf = 0, nr = 0;
    for (int p = 0; p < pairs; p++) {
        if (step[p] <= cut) fast[nf++] = ratio[p];
        else rest[nr++] = ratio[p];
    }
    printf("k=%d depth=%d threads=%d: step median %.2f ms (min %.2f) | cost median %.3f steps | fastest third "
           "(%d) %.3f | rest %.3f\n",
           k, depth, threads, median(step, pairs) * 1e3, sorted[0] * 1e3, median(ratio, pairs), nf, median(fast, nf),
           median(rest, nr));
    free(sorted), free(tok), free(pos), free(seq), free(want), free(step), free(ratio), free(fast), free(rest);
    wick_context_free(c);
    wick_model_free(m);
    return 0;
}
