/* bench_span_quality.c — `wick bench --span-quality`: how far each span mode
 * moves the model's output from an ordinary causal prefill of the same text.
 * Each trial samples, from the model itself (temperature 1, seeded), a
 * prefix P, N documents and a question Q (in-distribution text for a real
 * model), then for every anchor × positions × blend K runs the span request
 * and compares it with the ordinary prompt P ++ S1..SN ++ Q:
 *   KL(full || span) of the first next-token distribution (nats),
 *   top-1 agreement of that distribution,
 *   greedy match: leading generated tokens that agree (of --n-gen).
 * Means over the trials. K = "all" is every span's length: with sequential
 * positions it must give KL 0, top-1 100% and the full greedy match (the
 * blend endpoint). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "wick.h"

#define MAX_DOCS 8
#define MAX_GEN 64

typedef struct run_out {
    cli_done d;    /* first: cli_run_request's */
    float *logits; /* first token's */
    int32_t ids[MAX_GEN];
    int n;
} run_out;

static bool on_token(void *user, const wick_token_info *ti, const char *text, size_t len) {
    (void)text, (void)len;
    run_out *o = user;
    if (o->n < MAX_GEN) o->ids[o->n++] = ti->id;
    return true;
}

static void on_logits(void *user, const float *logits, int n_vocab) {
    run_out *o = user;
    if (o->n == 0) memcpy(o->logits, logits, sizeof *logits * (size_t)n_vocab);
}

static int run(wick_context *c, const wick_spans *sp, const int32_t *prompt, int n, int n_gen, run_out *o) {
    o->n = 0;
    wick_request r = {.prompt = prompt, .n_prompt = n, .n_predict = n_gen, .logprobs = -1, .on_token = on_token,
                      .on_logits = on_logits, .user = o, .ignore_eos = true, .spans = sp};
    return cli_run_request(c, &r);
}

/* n tokens sampled after [BOS] (temperature 1, this seed); malloc'd. */
static int32_t *sample(wick_context *c, int32_t bos, int n, uint64_t seed) {
    wick_generate_params gp = {.n_predict = n};
    gp.sampling.temperature = 1.0f;
    gp.sampling.seed = seed;
    int32_t *out = NULL;
    int n_out = 0;
    wick_error err;
    const int32_t start = bos >= 0 ? bos : 1;
    if (wick_generate(c, &start, 1, &gp, &out, &n_out, NULL, NULL, &err) < 0) {
        cli_error("bench: %s", err.msg);
        return NULL;
    }
    for (int i = n_out; i < n; i++) out[i] = out[i ? i - 1 : 0]; /* stopped early (EOS): pad by repeating */
    if (n_out == 0) {
        free(out);
        cli_error("bench: the model generated nothing to build documents from");
        return NULL;
    }
    return out;
}

static void softmax_d(const float *x, int n, double *p) {
    double mx = x[0], sum = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > mx) mx = x[i];
    for (int i = 0; i < n; i++) sum += p[i] = exp((double)x[i] - mx);
    for (int i = 0; i < n; i++) p[i] /= sum;
}

static int argmax(const float *x, int n) {
    int b = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[b]) b = i;
    return b;
}

int bench_span_quality(wick_model *m, int trials, int n_docs, int doc_tokens, int n_gen, int threads, bool json) {
    if (n_docs < 1 || n_docs > MAX_DOCS || trials < 1 || doc_tokens < 1 || n_gen < 1 || n_gen > MAX_GEN)
        return cli_error("bench: --span-quality wants 1..%d docs, trials >= 1, doc tokens >= 1, 1..%d generated tokens",
                         MAX_DOCS, MAX_GEN);
    wick_model_info info;
    wick_model_get_info(m, &info);
    const int V = info.n_vocab, n_prefix = 12, n_q = 12;
    const int total = (info.bos >= 0) + n_prefix + n_docs * doc_tokens + n_q;
    wick_error err;
    wick_context_params cp = {.n_ctx = total + n_gen + 8, .n_seq = 1, .n_threads = threads};
    wick_context *c = wick_context_new(m, &cp, &err);
    if (!c) return cli_error("bench: %s", err.msg);
    const char *anchors[] = {"prefix", "bos", "none"};
    const char *positions[] = {"sequential", "shared"};
    const int ks[] = {0, 4, 16, -1}; /* -1: all */
    enum { NA = 3, NP = 2, NK = 4 };
    static double kl[NA][NP][NK], top1[NA][NP][NK], match[NA][NP][NK];
    memset(kl, 0, sizeof kl), memset(top1, 0, sizeof top1), memset(match, 0, sizeof match);
    run_out full = {.logits = malloc(sizeof(float) * (size_t)V)}, sp = {.logits = malloc(sizeof(float) * (size_t)V)};
    double *pf = malloc(sizeof(double) * (size_t)V), *ps = malloc(sizeof(double) * (size_t)V);
    int32_t *flat = malloc(sizeof(int32_t) * (size_t)total);
    int rc = full.logits && sp.logits && pf && ps && flat ? 0 : cli_error("bench: out of memory");
    for (int t = 0; t < trials && rc == 0; t++) {
        int32_t *seg[MAX_DOCS + 2] = {0};
        const uint64_t seed = 1000 + (uint64_t)t * 97;
        for (int d = 0; d < n_docs + 2 && rc == 0; d++) {
            const int len = d == 0 ? n_prefix : d == n_docs + 1 ? n_q : doc_tokens;
            if (!(seg[d] = sample(c, info.bos, len, seed + (uint64_t)d))) rc = -1;
        }
        if (rc == 0) {
            int n = 0;
            int32_t prefix[1 + 12];
            int np = 0;
            if (info.bos >= 0) prefix[np++] = info.bos;
            memcpy(prefix + np, seg[0], sizeof *prefix * (size_t)n_prefix), np += n_prefix;
            memcpy(flat, prefix, sizeof *flat * (size_t)np), n = np;
            const int32_t *spans[MAX_DOCS];
            int sl[MAX_DOCS];
            for (int d = 0; d < n_docs; d++) {
                spans[d] = seg[1 + d], sl[d] = doc_tokens;
                memcpy(flat + n, seg[1 + d], sizeof *flat * (size_t)doc_tokens), n += doc_tokens;
            }
            memcpy(flat + n, seg[n_docs + 1], sizeof *flat * (size_t)n_q), n += n_q;
            rc = run(c, NULL, flat, n, n_gen, &full);
            softmax_d(full.logits, V, pf);
            const int top_full = argmax(full.logits, V);
            for (int a = 0; a < NA && rc == 0; a++)
                for (int p = 0; p < NP && rc == 0; p++)
                    for (int k = 0; k < NK && rc == 0; k++) {
                        wick_spans s = {.prefix = prefix, .n_prefix = np, .spans = spans, .span_len = sl, .n_spans = n_docs,
                                        .suffix = seg[n_docs + 1], .n_suffix = n_q,
                                        .anchor = a == 0 ? WICK_ANCHOR_PREFIX : a == 1 ? WICK_ANCHOR_BOS : WICK_ANCHOR_NONE,
                                        .positions = p ? WICK_POSITIONS_SHARED : WICK_POSITIONS_SEQUENTIAL,
                                        .blend_first_k = ks[k] < 0 ? doc_tokens : ks[k]};
                        if ((rc = run(c, &s, NULL, 0, n_gen, &sp)) != 0) break;
                        softmax_d(sp.logits, V, ps);
                        double d = 0;
                        for (int i = 0; i < V; i++)
                            if (pf[i] > 0) d += pf[i] * (log(pf[i]) - log(ps[i] > 1e-300 ? ps[i] : 1e-300));
                        kl[a][p][k] += d / trials;
                        top1[a][p][k] += (argmax(sp.logits, V) == top_full) * 100.0 / trials;
                        int mlen = 0;
                        while (mlen < full.n && mlen < sp.n && full.ids[mlen] == sp.ids[mlen]) mlen++;
                        match[a][p][k] += (double)mlen / trials;
                    }
        }
        for (int d = 0; d < n_docs + 2; d++) free(seg[d]);
    }
    free(full.logits), free(sp.logits), free(pf), free(ps), free(flat);
    wick_context_free(c);
    if (rc != 0) return 1;
    if (!json)
        printf("span quality: %d trials, %d documents of %d tokens, prefix %d, question %d tokens (sampled from the "
               "model); against the ordinary prefill of the same tokens\n"
               "| anchor | positions | blend K | KL(full‖span) nats | top-1 agree | greedy match of %d |\n"
               "|---|---|---|---|---|---|\n",
               trials, n_docs, doc_tokens, n_prefix + (info.bos >= 0), n_q, n_gen);
    else
        printf("[");
    bool first = true;
    for (int a = 0; a < NA; a++)
        for (int p = 0; p < NP; p++)
            for (int k = 0; k < NK; k++) {
                char kb[16];
                if (ks[k] < 0) snprintf(kb, sizeof kb, "all");
                else snprintf(kb, sizeof kb, "%d", ks[k]);
                if (json)
                    printf("%s{\"anchor\":\"%s\",\"positions\":\"%s\",\"blend\":\"%s\",\"kl\":%.6g,\"top1_pct\":%.1f,"
                           "\"greedy_match\":%.2f}",
                           first ? "" : ",", anchors[a], positions[p], kb, kl[a][p][k], top1[a][p][k], match[a][p][k]);
                else
                    printf("| %s | %s | %s | %.4f | %.0f%% | %.1f |\n", anchors[a], positions[p], kb, kl[a][p][k],
                           top1[a][p][k], match[a][p][k]);
                first = false;
            }
    if (json) printf("]\n");
    return 0;
}
