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
#include "sched_run.h"
#include "wick.h"

/* One round of n requests (sched_run.h), sampled at temperature 1 (seeded),
 * under g or unconstrained (g NULL). */
static double run(wick_context *c, int n, int n_prompt, int n_gen, int round, const wick_grammar *g, double *ttft,
                  double *steady) {
    const sched_run_opts o = {.grammar = g, .sample = true};
    return sched_run(c, n, n_prompt, n_gen, round, &o, ttft, steady);
}

static const char *DEFAULT_SCHEMA =
    "{\"type\":\"array\",\"minItems\":200,\"items\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"},"
    "\"name\":{\"type\":\"string\"}},\"required\":[\"id\",\"name\"],\"additionalProperties\":false}}";

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL [-c N] [-p P] [-n G] [-t T] [-r R] [--schema FILE]\n", argv[0]);
        return 2;
    }
    sched_args a = {.conc = 8, .n_prompt = 64, .n_gen = 128, .threads = 2, .reps = 5};
    const char *schema_file = NULL;
    for (int i = 2; i + 1 < argc; i += 2)
        if (!sched_arg(&a, argv[i], argv[i + 1]) && !strcmp(argv[i], "--schema")) schema_file = argv[i + 1];
    int conc = a.conc, n_prompt = a.n_prompt, n_gen = a.n_gen, threads = a.threads, reps = a.reps;
    wick_error err;
    wick_model *m = sched_model_load(argv[1]);
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
