/* test_spec_dist.c — speculative sampling through the scheduler keeps the
 * target's distribution end to end: many seeded requests of 3 new tokens
 * (top-k 4, temperature 1.5) on a random model, speculating with another
 * random model as the draft (drafts mostly rejected: the residual draws),
 * with the target itself as the draft (every draft accepted) and with
 * prompt lookup (certain drafts); the joint histogram of the 3 tokens
 * (64 cells) against p(t1) p(t2 | t1) p(t3 | t1 t2) computed from the
 * target's logits with sampler_dist: chi-square p > 0.001. The first token
 * comes from the prompt's logits; the second and third from verification
 * passes (a draft for each, or a draft and the token after it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "chi2.h"
#include "engine/sampler.h"
#include "cli/testmodel.h"
#include "wick.h"

#define N_REQ 12000
#define K 4

typedef struct rec {
    int32_t ids[3];
    int n;
} rec;

static bool on_token(void *user, const wick_token_info *ti, const char *text, size_t len) {
    (void)text, (void)len;
    rec *r = user;
    if (r->n < 3) r->ids[r->n] = ti->id;
    r->n++;
    return true;
}

static void on_done(void *user, const wick_request_result *res) {
    (void)user, (void)res;
}

/* The target's post-knob distribution after prompt ++ extra (n_extra tokens). */
static void target_dist(wick_model *m, const int32_t *prompt, int n_prompt, const int32_t *extra, int n_extra,
                        const wick_sampling *smp, sampler *s, float *out) {
    wick_error err;
    wick_context_params cp = {.n_ctx = 64, .n_threads = 1};
    wick_context *c = wick_context_new(m, &cp, &err);
    int32_t toks[16], pos[16], seq[16] = {0};
    const int n = n_prompt + n_extra;
    for (int i = 0; i < n; i++) toks[i] = i < n_prompt ? prompt[i] : extra[i - n_prompt], pos[i] = i;
    wick_batch b = {.n = n, .tokens = toks, .pos = pos, .seq = seq};
    CHECK_MSG(wick_decode(c, &b, &err) == 0, "%s", err.msg);
    sampler_cfg cfg;
    sampler_cfg_init(&cfg, smp);
    sampler_dist(s, &cfg, wick_logits(c, 0), toks, n, out);
    wick_context_free(c);
}

static int find(const int32_t *ids, int32_t t) {
    for (int i = 0; i < K; i++)
        if (ids[i] == t) return i;
    return -1;
}

static void run(wick_model *m, const int32_t *prompt, int n_prompt, const wick_spec_params *sp, const char *label) {
    wick_model_info info;
    wick_model_get_info(m, &info);
    const wick_sampling smp = {.temperature = 1.5f, .top_k = K};
    /* expected joint over the top-K tokens at each step */
    sampler s;
    wick_error err;
    CHECK(sampler_init(&s, info.n_vocab, cpu_best_isa(), &err) == 0);
    float *d = malloc(sizeof(float) * (size_t)info.n_vocab);
    int32_t top1[K], top2[K][K], top3[K][K][K];
    double p1[K], p2[K][K], p3[K][K][K];
    target_dist(m, prompt, n_prompt, NULL, 0, &smp, &s, d);
    for (int i = 0, n = 0; i < info.n_vocab; i++)
        if (d[i] > 0 && n < K) top1[n] = i, p1[n++] = d[i];
    for (int a = 0; a < K; a++) {
        int32_t e1[2] = {top1[a]};
        target_dist(m, prompt, n_prompt, e1, 1, &smp, &s, d);
        for (int i = 0, n = 0; i < info.n_vocab; i++)
            if (d[i] > 0 && n < K) top2[a][n] = i, p2[a][n++] = d[i];
        for (int b = 0; b < K; b++) {
            int32_t e2[2] = {top1[a], top2[a][b]};
            target_dist(m, prompt, n_prompt, e2, 2, &smp, &s, d);
            for (int i = 0, n = 0; i < info.n_vocab; i++)
                if (d[i] > 0 && n < K) top3[a][b][n] = i, p3[a][b][n++] = d[i];
        }
    }
    if (getenv("SPEC_DIST_DEBUG")) {
        fprintf(stderr, "prompt:");
        for (int i = 0; i < n_prompt; i++) fprintf(stderr, " %d", prompt[i]);
        fprintf(stderr, "; top1: %d %d %d %d\n", top1[0], top1[1], top1[2], top1[3]);
    }
    /* the requests */
    wick_context_params cp = {.n_ctx = 64, .n_seq = 8, .n_threads = 1};
    wick_context *c = wick_context_new(m, &cp, &err);
    wick_sched *sc = wick_sched_new(c, NULL, &err);
    CHECK_MSG(wick_sched_set_spec(sc, sp, &err) == 0, "%s", err.msg);
    rec *recs = calloc(N_REQ, sizeof *recs);
    long count[K * K * K] = {0}, bad = 0;
    for (int base = 0; base < N_REQ; base += 256) {
        for (int i = base; i < base + 256 && i < N_REQ; i++) {
            wick_request r = {.prompt = prompt, .n_prompt = n_prompt, .n_predict = 3, .sampling = smp, .ignore_eos = true,
                              .logprobs = -1, .on_token = on_token, .on_done = on_done, .user = &recs[i]};
            r.sampling.seed = 1000 + (uint64_t)i;
            CHECK_MSG(wick_sched_submit(sc, &r, &err) > 0, "%s", err.msg);
        }
        int left;
        while ((left = wick_sched_step(sc, &err)) > 0) {
        }
        CHECK_MSG(left == 0, "%s", err.msg);
    }
    wick_sched_stats st;
    wick_sched_get_stats(sc, &st);
    for (int i = 0; i < N_REQ; i++) {
        const int a = find(top1, recs[i].ids[0]);
        const int b = a >= 0 ? find(top2[a], recs[i].ids[1]) : -1;
        const int e = b >= 0 ? find(top3[a][b], recs[i].ids[2]) : -1;
        if (recs[i].n != 3 || e < 0) {
            bad++;
            continue;
        }
        count[(a * K + b) * K + e]++;
    }
    CHECK_MSG(bad == 0, "%s: %ld requests gave tokens outside the top-%d", label, bad, K);
    double chi = 0;
    int df = -1;
    for (int a = 0; a < K; a++)
        for (int b = 0; b < K; b++)
            for (int e = 0; e < K; e++) {
                const double ex = p1[a] * p2[a][b] * p3[a][b][e] * N_REQ;
                const long o = count[(a * K + b) * K + e];
                if (ex < 1e-9) {
                    CHECK_MSG(o == 0, "%s: a token of probability 0", label);
                    continue;
                }
                chi += (o - ex) * (o - ex) / ex;
                df++;
            }
    const double pv = gamma_q(df / 2.0, chi / 2.0);
    CHECK_MSG(pv > 0.001, "%s: joint chi-square %.1f on %d degrees of freedom, p = %g", label, chi, df, pv);
    CHECK_MSG(st.spec_draft_tokens > 0, "%s: nothing drafted", label);
    fprintf(stderr, "%s: p = %.3f, %llu drafted, %llu accepted\n", label, pv,
            (unsigned long long)st.spec_draft_tokens, (unsigned long long)st.spec_accepted_tokens);
    free(recs);
    free(d);
    sampler_free(&s);
    wick_sched_free(sc);
    wick_context_free(c);
}

static char tmpdir[64];

static wick_model *make(uint64_t seed) {
    char path[128];
    snprintf(path, sizeof path, "%s/m%llu.gguf", tmpdir, (unsigned long long)seed);
    wick_error err;
    test_model_params p = {.arch = "llama", .format = "gguf", .shape = "tiny", .dtype = "f32", .seed = seed,
                           .out = path};
    CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
    wick_model *m = wick_model_load(path, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.msg);
    unlink(path);
    return m;
}

static void test_distribution(void) {
    wick_model *m = make(31), *other = make(32);
    if (!m || !other) return;
    /* lookup's prompt [5, x, 9, 7, 5]: its last token recurs at the start,
     * followed by x, which lookup then drafts first; x is a token among the
     * model's top K after that very prompt (the first found), so the drafts
     * are accepted at times and rejected at others */
    int32_t prompt[5] = {5, 0, 9, 7, 5};
    sampler s;
    wick_error err;
    wick_model_info info;
    wick_model_get_info(m, &info);
    CHECK(sampler_init(&s, info.n_vocab, cpu_best_isa(), &err) == 0);
    float *d = malloc(sizeof(float) * (size_t)info.n_vocab);
    const wick_sampling topk = {.temperature = 1.5f, .top_k = K};
    for (int32_t x = 10; x < info.n_vocab; x++) {
        prompt[1] = x;
        target_dist(m, prompt, 5, NULL, 0, &topk, &s, d);
        if (d[x] > 0.1f) break;
    }
    free(d);
    sampler_free(&s);
    run(m, prompt, 5, &(wick_spec_params){.draft_model = other, .draft_max = 2}, "another model as draft");
    run(m, prompt, 5, &(wick_spec_params){.draft_model = m, .draft_max = 2}, "the target as draft");
    run(m, prompt, 5, &(wick_spec_params){.draft_layers = 1, .draft_max = 2}, "layer skipping");
    run(m, prompt, 5, &(wick_spec_params){.lookup = 3, .draft_max = 2}, "prompt lookup");
    wick_model_free(other);
    wick_model_free(m);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/wick-specd-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_distribution);
    rmdir(tmpdir);
    return check_summary("test_spec_dist");
}
