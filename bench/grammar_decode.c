/* grammar_decode.c — what structured output costs in decode speed: the
 * scheduler's aggregate decode tok/s with every request under a JSON Schema
 * against the same requests unconstrained, one stream and N streams, in
 * one run, alternating (plain 1, constrained 1, plain N, constrained N), R
 * repeats, medians of the per-repeat ratios. Sampling at temperature 1
 * (seeded); the schema (an array of at least 200 {id, name} objects) cannot
 * end within G tokens, so every request generates G tokens.
 *
 *   build/bench/grammar_decode MODEL [-c 8] [-p 64] [-n 128] [-t 2] [-r 5] [--schema FILE]
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
static double run(wick_context *c, int n, int n_prompt, int n_gen, int round, const wick_grammar *g, double *ttft, double *steady) {
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
                          .logprobs = -1, .on_token = on_token, .on_done = on_done, .user = &recs[i], .grammar = g};
        r.sampling = wick_sampling_default();
        r.sampling.temperature = 1.0f;
        r.sampling.seed = (uint64_t)(i + 1);
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
    wick_sched_free(s);
    free(tt);
    for (int i = 0; i < n; i++) free(recs[i].ts);
    free(recs);
    free(prompt);
    /* Decode throughput: tokens after each request's first, over the span. */
    return (double)(toks - n) / (last - first);
}

static const char *DEFAULT_SCHEMA =
    "{\"type\":\"array\",\"minItems\":200,\"items\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"},"
    "\"name\":{\"type\":\"string\"}},\"required\":[\"id\",\"name\"],\"additionalProperties\":false}}";

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL [-c N] [-p P] [-n G] [-t T] [-r R] [--schema FILE]\n", argv[0]);
        return 2;
    }
    int conc = 8, n_prompt = 64, n_gen = 128, threads = 2, reps = 5;
    const char *schema_file = NULL;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-c")) conc = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-p")) n_prompt = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-n")) n_gen = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-t")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-r")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--schema")) schema_file = argv[i + 1];
    }
    wick_error err;
    wick_model *m = wick_model_load(argv[1], NULL, &err);
    if (!m) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    char *text = NULL;
    if (schema_file) {
        FILE *f = fopen(schema_file, "rb");
        if (!f) return 1;
        fseek(f, 0, SEEK_END);
        const long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        text = calloc(1, (size_t)len + 1);
        if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) return 1;
        fclose(f);
    }
    wick_grammar_spec sp = {.kind = WICK_GRAMMAR_JSON_SCHEMA, .text = text ? text : DEFAULT_SCHEMA};
    wick_grammar *g = wick_grammar_compile(m, &sp, &err);
    free(text);
    if (!g) {
        fprintf(stderr, "schema: %s\n", err.msg);
        return 1;
    }
    wick_context_params cp = {.n_ctx = n_prompt + n_gen + 8, .n_seq = conc, .n_threads = threads, .prefill_chunk = -1};
    wick_context *c = wick_context_new(m, &cp, &err);
    if (!c) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double p1[64], g1[64], pn[64], gn[64], r1[64], rn[64], t[64];
    if (reps > 64) reps = 64;
    for (int r = 0; r < reps; r++) {
        p1[r] = run(c, 1, n_prompt, n_gen, 4 * r, NULL, &t[0], &t[1]);
        g1[r] = run(c, 1, n_prompt, n_gen, 4 * r + 1, g, &t[0], &t[1]);
        pn[r] = run(c, conc, n_prompt, n_gen, 4 * r + 2, NULL, &t[0], &t[1]);
        gn[r] = run(c, conc, n_prompt, n_gen, 4 * r + 3, g, &t[0], &t[1]);
        r1[r] = g1[r] / p1[r];
        rn[r] = gn[r] / pn[r];
        printf("repeat %d: 1 stream %.1f plain, %.1f constrained (%.3f); %d streams %.1f plain, %.1f constrained (%.3f)\n", r,
               p1[r], g1[r], r1[r], conc, pn[r], gn[r], rn[r]);
    }
    printf("\n| streams | plain tok/s | constrained tok/s | constrained / plain |\n|---|---|---|---|\n");
    printf("| 1 | %.1f | %.1f | %.3f |\n| %d | %.1f | %.1f | %.3f |\n", median(p1, reps), median(g1, reps), median(r1, reps),
           conc, median(pn, reps), median(gn, reps), median(rn, reps));
    wick_context_free(c);
    wick_grammar_free(g);
    wick_model_free(m);
    return 0;
}
