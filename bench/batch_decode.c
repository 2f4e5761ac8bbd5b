/* batch_decode.c — aggregate decode throughput of S concurrent sequences:
 * each step is one wick_decode holding one new token of every sequence (what
 * a continuous-batching server runs once every request is past its prompt),
 * with logits for every token. For each S in the list, the S sequences are
 * first prefilled with a short prompt of their own (`depth` tokens), then
 * `steps` decode steps are timed; the S values are measured in rounds
 * (S = 1, 2, 4, ... then again) so that a shared machine's drifting memory
 * bandwidth spreads over all of them alike. Prints per S the median step
 * time, the aggregate tok/s and its ratio to S = 1 (medians over rounds).
 * With WICK_PROFILE=1, also the time per op type per step (summed over rounds).
 * Usage: build/bench/batch_decode MODEL [threads 2] [rounds 5] [steps 16] [depth 32] [S list, e.g. 1,2,4,8,16] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wick.h"
#include "bench_util.h"

#define MAX_S 64
#define MAX_ROUNDS 99

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: batch_decode MODEL [threads 2] [rounds 5] [steps 16] [depth 32] [S list 1,2,4,8,16]\n");
        return 2;
    }
    const int threads = arg_int(argc, argv, 2, 2), rounds = arg_int(argc, argv, 3, 5);
    const int steps = arg_int(argc, argv, 4, 16), depth = arg_int(argc, argv, 5, 32);
    int ss[16], ns = 0, smax = 1;
    {
        const char *p = argc > 6 ? argv[6] : "1,2,4,8,16";
        while (*p && ns < 16) {
            const int v = atoi(p);
            if (v < 1 || v > MAX_S) {
                fprintf(stderr, "batch_decode: S must lie in [1, %d]\n", MAX_S);
                return 2;
            }
            ss[ns++] = v;
            if (v > smax) smax = v;
            while (*p && *p != ',') p++;
            if (*p == ',') p++;
        }
    }
    if (threads < 1 || rounds < 1 || rounds > MAX_ROUNDS || steps < 1 || depth < 1 || ns == 0) return 2;
    wick_error err;
    wick_model *m = wick_model_load(argv[1], NULL, &err);
    if (!m) {
        fprintf(stderr, "batch_decode: %s\n", err.msg);
        return 1;
    }
    wick_model_info info;
    wick_model_get_info(m, &info);
    const int n_ctx = depth + steps + 8;
    wick_context_params cp = {.n_ctx = n_ctx, .n_seq = smax, .n_threads = threads, .prefill_chunk = 0,
                              .max_batch = depth > smax ? depth : smax};
    wick_context *c = wick_context_new(m, &cp, &err);
    if (!c) {
        fprintf(stderr, "batch_decode: %s\n", err.msg);
        return 1;
    }
    int32_t *tok = malloc(sizeof(int32_t) * (size_t)(depth > smax ? depth : smax)), *pos = malloc(sizeof(int32_t) * (size_t)(depth > smax ? depth : smax));
    int32_t *seq = malloc(sizeof(int32_t) * (size_t)(depth > smax ? depth : smax));
    bool *want = malloc(sizeof(bool) * (size_t)smax);
    double t_step[16][MAX_ROUNDS], prof_ms[16][WICK_OP_COUNT] = {{0}};
    const bool prof = wick_context_profiling(c);
    uint32_t rng = 12345;
    printf("model %s, %d threads, %d rounds of %d steps per S, %d-token prompts\n", argv[1], threads, rounds, steps, depth);
    for (int r = 0; r < rounds; r++)
        for (int si = 0; si < ns; si++) {
            const int S = ss[si];
            for (int s = 0; s < S; s++) { /* a fresh prompt per sequence */
                wick_seq_truncate(c, s, 0);
                for (int i = 0; i < depth; i++) {
                    rng = rng * 1664525u + 1013904223u;
                    tok[i] = (int32_t)(rng >> 8) % info.n_vocab, pos[i] = i, seq[i] = s;
                }
                wick_batch b = {.n = depth, .tokens = tok, .pos = pos, .seq = seq};
                if (wick_decode(c, &b, &err) != 0) {
                    fprintf(stderr, "batch_decode: %s\n", err.msg);
                    return 1;
                }
            }
            for (int s = 0; s < S; s++) want[s] = true;
            wick_context_profile_reset(c);
            const double t0 = now_s();
            for (int k = 0; k < steps; k++) {
                for (int s = 0; s < S; s++) {
                    rng = rng * 1664525u + 1013904223u;
                    tok[s] = (int32_t)(rng >> 8) % info.n_vocab, pos[s] = depth + k, seq[s] = s;
                }
                wick_batch b = {.n = S, .tokens = tok, .pos = pos, .seq = seq, .want_logits = want};
                if (wick_decode(c, &b, &err) != 0) {
                    fprintf(stderr, "batch_decode: %s\n", err.msg);
                    return 1;
                }
            }
            t_step[si][r] = (now_s() - t0) / steps;
            if (prof) {
                wick_profile pr;
                wick_context_profile(c, &pr);
                for (int o = 0; o < WICK_OP_COUNT; o++) prof_ms[si][o] += pr.ms[o] / steps / rounds;
            }
        }
    double base = 0;
    printf("%4s %10s %12s %8s\n", "S", "step ms", "tok/s", "vs S=1");
    for (int si = 0; si < ns; si++) {
        const double med = median(t_step[si], rounds), tps = ss[si] / med;
        if (ss[si] == 1) base = tps;
        if (base > 0) printf("%4d %10.2f %12.1f %8.2f\n", ss[si], med * 1e3, tps, tps / base);
        else printf("%4d %10.2f %12.1f %8s\n", ss[si], med * 1e3, tps, "-");
    }
    for (int si = 0; si < ns && prof; si++) {
        printf("S=%d ms/step:", ss[si]);
        for (int o = 0; o < WICK_OP_COUNT; o++) printf(" %s %.2f", wick_op_name(o), prof_ms[si][o]);
        printf("\n");
    }
    free(tok), free(pos), free(seq), free(want);
    wick_context_free(c);
    wick_model_free(m);
    return 0;
}
