/* sched_run.h — what the decode-throughput benches (sched_bench.c,
 * grammar_decode.c) share: their common options, loading the model, and one
 * timed round of concurrent requests through the scheduler (each request's
 * token times, the aggregate decode rate, the median TTFT and the steady
 * rate with all streams decoding). Header only (static functions), as
 * bench/ builds each .c into its own program. */
#ifndef WICK_BENCH_SCHED_RUN_H
#define WICK_BENCH_SCHED_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "wick.h"

/* The options both benches take: -c streams, -p prompt tokens, -n tokens
 * generated per request, -t threads, -r repeats. */
typedef struct sched_args {
    int conc, n_prompt, n_gen, threads, reps;
} sched_args;

/* Read the option opt with its value val into a; false when opt is not one
 * of the common options (the bench's own then). */
static inline bool sched_arg(sched_args *a, const char *opt, const char *val) {
    if (!strcmp(opt, "-c")) a->conc = atoi(val);
    else if (!strcmp(opt, "-p")) a->n_prompt = atoi(val);
    else if (!strcmp(opt, "-n")) a->n_gen = atoi(val);
    else if (!strcmp(opt, "-t")) a->threads = atoi(val);
    else if (!strcmp(opt, "-r")) a->reps = atoi(val);
    else return false;
    return true;
}

/* The model at path; on an error prints it and exits 1. */
static inline wick_model *sched_model_load(const char *path) {
    wick_error err;
    wick_model *m = wick_model_load(path, NULL, &err);
    if (!m) {
        fprintf(stderr, "%s\n", err.msg);
        exit(1);
    }
    return m;
}

/* One request's record: the time of its first and last token and of each
 * token (up to cap). */
typedef struct sched_rec {
    double t_first, t_last;
    double *ts;
    int n, cap;
    bool done;
} sched_rec;

static inline bool sched_rec_on_token(void *user, const wick_token_info *ti, const char *text, size_t len) {
    (void)ti, (void)text, (void)len;
    sched_rec *r = user;
    double t = now_s();
    if (r->n < r->cap) r->ts[r->n] = t;
    if (r->n++ == 0) r->t_first = t;
    r->t_last = t;
    return true;
}

static inline void sched_rec_on_done(void *user, const wick_request_result *res) {
    (void)res;
    ((sched_rec *)user)->done = true;
}

/* How the requests of a round are made, beyond their prompts and lengths. */
typedef struct sched_run_opts {
    const wick_grammar *grammar; /* every request under it; NULL: unconstrained */
    /* true: wick_sampling_default() at temperature 1, request i seeded i + 1;
     * false: the request's zero sampling fields (greedy) */
    bool sample;
} sched_run_opts;

/* Run n concurrent requests of n_prompt tokens each generating n_gen
 * (ignore_eos) on a fresh scheduler over c, all submitted at once; prompts
 * are distinct per request and per round (no prefix reuse). Resets c's
 * profile first, so that WICK_PROFILE's counts after it are this round's.
 * Returns the aggregate decode tok/s (tokens after each request's first,
 * over the span from the first token to the last); *ttft gets the median
 * TTFT (s), *steady the rate over the time all n streams were past their
 * first token and not yet done (no prefill in it). Exits on an error. */
static inline double sched_run(wick_context *c, int n, int n_prompt, int n_gen, int round, const sched_run_opts *o,
                               double *ttft, double *steady) {
    wick_error err;
    wick_sched *s = wick_sched_new(c, NULL, &err);
    if (!s) {
        fprintf(stderr, "sched: %s\n", err.msg);
        exit(1);
    }
    sched_rec *recs = calloc((size_t)n, sizeof *recs);
    for (int i = 0; i < n; i++) {
        recs[i].cap = n_gen + 1;
        recs[i].ts = malloc((size_t)recs[i].cap * sizeof(double));
        if (!recs[i].ts) exit(1);
    }
    int32_t *prompt = malloc((size_t)n_prompt * sizeof *prompt);
    wick_context_profile_reset(c);
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < n_prompt; k++) prompt[k] = 100 + (k * 7 + i * 131 + round * 977) % 20000;
        wick_request r = {.prompt = prompt, .n_prompt = n_prompt, .n_predict = n_gen, .ignore_eos = true,
                          .logprobs = -1, .on_token = sched_rec_on_token, .on_done = sched_rec_on_done,
                          .user = &recs[i], .grammar = o->grammar};
        if (o->sample) {
            r.sampling = wick_sampling_default();
            r.sampling.temperature = 1.0f;
            r.sampling.seed = (uint64_t)(i + 1);
        }
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
    return (double)(toks - n) / (last - first);
}

#endif
