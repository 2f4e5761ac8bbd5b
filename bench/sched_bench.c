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
#include "wick.h"

typedef struct rec {
    double t_first, t_last;
    double *ts; /* time of each token (up to cap) */
    int n, cap;
    bool done;
} rec;

static bool on_token(void *user, const wick_token_info *ti, const char *text, size_t len) {
    (void)ti, (void)text, (void)len;
    rec *r = user;
    double t = now_s();
    if (r->n < r->cap) r->ts[r->n] = t;
    if (r->n++ == 0) r->t_first = t;
    r->t_last = t;
    return true;
}

static void on_done(void *user, const wick_request_result *res) {
    (void)res;
    ((rec *)user)->done = true;
}

/* Run n concurrent requests; returns aggregate decode tok/s; *ttft gets the
 * median TTFT (s), *steady the steady rate (above). */
static double run(wick_context *c, int n, int n_prompt, int n_gen, int round, double *ttft, double *steady) {
    wick_error err;
    wick_sched *s = wick_sched_new(c, NULL, &err);
    if (!s) {
        fprintf(stderr, "sched: %s\n", err.msg);
        exit(1);
    }
    rec *recs = calloc((size_t)n, sizeof *recs);
    for (int i = 0; i < n; i++) {
        recs[i].cap = n_gen + 1;
        recs[i].ts = malloc((size_t)recs[i].cap * sizeof(double));
        if (!recs[i].ts) exit(1);
    }
    int32_t *prompt = malloc((size_t)n_prompt * sizeof *prompt);
    wick_context_profile_reset(c);
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        /* Distinct prompts (no prefix reuse between requests or rounds). */
        for (int k = 0; k < n_prompt; k++) prompt[k] = 100 + (k * 7 + i * 131 + round * 977) % 20000;
        wick_request r = {.prompt = prompt, .n_prompt = n_prompt, .n_predict = n_gen, .ignore_eos = true,
                          .logprobs = -1, .on_token = on_token, .on_done = on_done, .user = &recs[i]};
        if (wick_sched_submit(s, &r, &err) < 0) {
            fprintf(stderr, "submit: %s\n", err.msg);
            exit(1);
        }
    }
    while (wick_sched_step(s, &err) > 0) {
    }
    double first = 1e30, last = 0, *tt = malloc((size_t)n * sizeof *tt);
    long toks = 0;
    for (int i = 0; i < n; i++) {
        if (recs[i].t_first < first) first = recs[i].t_first;
        if (recs[i].t_last > last) last = recs[i].t_last;
        toks += recs[i].n;
        tt[i] = recs[i].t_first - t0;
    }
    *ttft = median(tt, n);
    /* all streams decoding: (latest first token, earliest last token] */
    double a = 0, b = 1e30;
    for (int i = 0; i < n; i++) {
        if (recs[i].t_first > a) a = recs[i].t_first;
        if (recs[i].t_last < b) b = recs[i].t_last;
    }
    long in_ab = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < recs[i].n && k < recs[i].cap; k++) in_ab += recs[i].ts[k] > a && recs[i].ts[k] <= b;
    *steady = b > a ? (double)in_ab / (b - a) : 0;
    if (wick_context_profiling(c)) { /* WICK_PROFILE=1: where the time went */
        wick_profile p;
        wick_context_profile(c, &p);
        fprintf(stderr, "%d streams: %lld passes, %lld tokens:", n, (long long)p.n_forward, (long long)p.n_tokens);
        for (int op = 0; op < WICK_OP_COUNT; op++) fprintf(stderr, " %s %.0f ms", wick_op_name(op), p.ms[op]);
        fputc('\n', stderr);
    }
    wick_sched_free(s);
    free(tt);
    for (int i = 0; i < n; i++) free(recs[i].ts);
    free(recs);
    free(prompt);
    /* Decode throughput: tokens after each request's first, over the span. */
    return (double)(toks - n) / (last - first);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL [-c N] [-p P] [-n G] [-t T] [-r R] [-b BUDGET] [--kv-type f32|f16]\n", argv[0]);
        return 2;
    }
    int conc = 8, n_prompt = 128, n_gen = 128, threads = 2, reps = 3, kv_type = 0, budget = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-c")) conc = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-p")) n_prompt = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-n")) n_gen = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-t")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-r")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-b")) budget = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--kv-type")) kv_type = !strcmp(argv[i + 1], "f16");
    }
    wick_error err;
    wick_model *m = wick_model_load(argv[1], NULL, &err);
    if (!m) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
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
