/* sched_bench.c — aggregate decode throughput of the continuous-batching
 * scheduler, in-process (no HTTP): N requests of P prompt tokens each
 * generating G tokens (ignore_eos), all submitted at once on N sequences,
 * against one request alone, in the same run, alternating, R repeats.
 * Prints tok/s (generated tokens over the time from the first to the last
 * token: with N streams that window also holds the prefill of all but the
 * first prompt), TTFT p50 and the ratio, as a table and one JSON line; and
 * the steady rate: tokens over the time during which all N streams were
 * past their first token and not yet done (no prefill in it; for one stream
 * the same as the first figure).
 *
 *   build/bench/sched_bench MODEL [-c 8] [-p 128] [-n 128] [-t 2] [-r 3] [-b BUDGET] [--kv-type f32|f16]
 *
 * -b sets the token budget per step (the context's batch capacity; default
 * that of `wick serve`, 128). WICK_PROFILE=1 prints time per op type.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "sched_run.h"
#include "wick.h"

/* One round of n requests (sched_run.h), greedy; with WICK_PROFILE=1 also
 * where the round's time went (the profile sched_run reset at its start). */
static double run(wick_context *c, int n, int n_prompt, int n_gen, int round, double *ttft, double *steady) {
    const sched_run_opts o = {0};
    const double rate = sched_run(c, n, n_prompt, n_gen, round, &o, ttft, steady);
    if (wick_context_profiling(c)) {
        wick_profile p;
        wick_context_profile(c, &p);
        fprintf(stderr, "%d streams: %lld passes, %lld tokens:", n, (long long)p.n_forward, (long long)p.n_tokens);
        for (int op = 0; op < WICK_OP_COUNT; op++) fprintf(stderr, " %s %.0f ms", wick_op_name(op), p.ms[op]);
        fputc('\n', stderr);
    }
    return rate;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL [-c N] [-p P] [-n G] [-t T] [-r R] [-b BUDGET] [--kv-type f32|f16]\n", argv[0]);
        return 2;
    }
    sched_args a = {.conc = 8, .n_prompt = 128, .n_gen = 128, .threads = 2, .reps = 3};
    int kv_type = 0, budget = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (sched_arg(&a, argv[i], argv[i + 1])) continue;
        if (!strcmp(argv[i], "-b")) budget = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--kv-type")) kv_type = !strcmp(argv[i + 1], "f16");
    }
    int conc = a.conc, n_prompt = a.n_prompt, n_gen = a.n_gen, threads = a.threads, reps = a.reps;
    wick_error err;
    wick_model *m = sched_model_load(argv[1]);
    wick_context_params cp = {.n_ctx = n_prompt + n_gen + 8, .n_seq = conc, .n_threads = threads,
                              .prefill_chunk = -1, .kv_type = kv_type, .max_batch = budget};
    wick_context *c = wick_context_new(m, &cp, &err);
    if (!c) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double one[64], many[64], ttft1[64], ttftn[64], ratio[64], st1[64], stn[64], sratio[64];
    if (reps > 64) reps = 64;
    for (int r = 0; r < reps; r++) {
        one[r] = run(c, 1, n_prompt, n_gen, 2 * r, &ttft1[r], &st1[r]);
        many[r] = run(c, conc, n_prompt, n_gen, 2 * r + 1, &ttftn[r], &stn[r]);
        ratio[r] = many[r] / one[r];
        sratio[r] = st1[r] > 0 ? stn[r] / st1[r] : 0;
        printf("repeat %d: 1 stream %.1f tok/s, %d streams %.1f tok/s (%.2fx); steady %.1f, %.1f (%.2fx)\n", r, one[r],
               conc, many[r], ratio[r], st1[r], stn[r], sratio[r]);
    }
    double m1 = median(one, reps), mn = median(many, reps), mr = median(ratio, reps);
    double s1 = median(st1, reps), sn = median(stn, reps), sr = median(sratio, reps);
    double t1 = median(ttft1, reps), tn = median(ttftn, reps);
    printf("\n| streams | decode tok/s (aggregate) | steady tok/s (all decoding) | TTFT p50 (ms) |\n|---|---|---|---|\n");
    printf("| 1 | %.1f | %.1f | %.1f |\n| %d | %.1f | %.1f | %.1f |\n", m1, s1, t1 * 1e3, conc, mn, sn, tn * 1e3);
    printf("ratio %d streams / 1 stream: %.2fx, steady %.2fx (medians of per-repeat ratios)\n", conc, mr, sr);
    printf("{\"budget\":%d,\"concurrency\":%d,\"prompt\":%d,\"gen\":%d,\"threads\":%d,\"tok_s_1\":%.2f,\"tok_s_n\":%.2f,"
           "\"ratio\":%.3f,\"steady_tok_s_1\":%.2f,\"steady_tok_s_n\":%.2f,\"steady_ratio\":%.3f,"
           "\"ttft_ms_1\":%.2f,\"ttft_ms_n\":%.2f}\n",
           budget, conc, n_prompt, n_gen, threads, m1, mn, mr, s1, sn, sr, t1 * 1e3, tn * 1e3);
    wick_context_free(c);
    wick_model_free(m);
    return 0;
}
