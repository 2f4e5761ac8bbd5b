/* test_post_probs.c — post-sampling probabilities (sampler_post_probs and
 * wick_request.post_sampling_probs): the reported probabilities of the
 * drawn token and of the top candidates equal an independent
 * double-precision computation of the documented order (penalties,
 * temperature, top-k, softmax, top-p, min-p, renormalize) within 1e-5, and
 * sampler_dist's exactly; they list only the survivors, best first, and sum
 * to 1 when all survivors fit; greedy reports 1 with zero-probability
 * runners-up (within top_k, none a processor ruled out); reporting never
 * touches the PRNG, so the same seed draws the same tokens with or without
 * it, through the scheduler too (stories260K), and speculative decoding
 * under a grammar reports what plain decoding does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tuning.h"
#include "engine/sampler.h"
#include "wick.h"

#define TOP WICK_MAX_TOP_LOGPROBS
#define TOL 1e-5

/* ---- the reference ---- */

/* prob[0..n): the distribution drawn from (temperature > 0), in double. */
static void reference(const float *logits, int n, const wick_sampling *p, const int32_t *hist, int n_hist,
                      double *prob) {
    double *z = malloc((size_t)n * sizeof *z);
    int *cnt = calloc((size_t)n, sizeof *cnt), *ord = malloc((size_t)n * sizeof *ord);
    for (int i = 0; i < n; i++) z[i] = logits[i];
    int w = p->repeat_last_n < 0 || p->repeat_last_n > n_hist ? n_hist : p->repeat_last_n;
    for (int i = n_hist - w; i < n_hist; i++) cnt[hist[i]]++;
    for (int t = 0; t < n; t++) {
        if (!cnt[t]) continue;
        const double rp = p->repeat_penalty;
        if (rp > 0 && rp != 1) z[t] = z[t] > 0 ? z[t] / rp : z[t] * rp;
        z[t] -= p->presence_penalty + cnt[t] * (double)p->frequency_penalty;
    }
    for (int i = 0; i < n; i++) z[i] /= p->temperature, ord[i] = i;
    for (int i = 1; i < n; i++) /* insertion sort, best first (the fixtures have no ties) */
        for (int k = i; k > 0 && z[ord[k]] > z[ord[k - 1]]; k--) {
            const int t = ord[k];
            ord[k] = ord[k - 1];
            ord[k - 1] = t;
        }
    int m = p->top_k > 0 && p->top_k < n ? p->top_k : n;
    double sum = 0;
    for (int r = 0; r < m; r++) sum += exp(z[ord[r]] - z[ord[0]]);
    for (int i = 0; i < n; i++) prob[i] = 0;
    for (int r = 0; r < m; r++) prob[ord[r]] = exp(z[ord[r]] - z[ord[0]]) / sum;
    if (p->top_p > 0 && p->top_p < 1) {
        double cum = 0;
        for (int r = 0; r < m; r++)
            if ((cum += prob[ord[r]]) >= p->top_p) {
                m = r + 1;
                break;
            }
    }
    const double pmax = prob[ord[0]];
    if (p->min_p > 0)
        while (m > 1 && prob[ord[m - 1]] < p->min_p * pmax) m--;
    sum = 0;
    for (int r = 0; r < m; r++) sum += prob[ord[r]];
    for (int i = 0; i < n; i++) prob[i] = 0;
    for (int r = 0; r < m; r++) prob[ord[r]] = exp(z[ord[r]] - z[ord[0]]); /* renormalized below */
    double s2 = 0;
    for (int r = 0; r < m; r++) s2 += prob[ord[r]];
    for (int r = 0; r < m; r++) prob[ord[r]] /= s2;
    free(z);
    free(cnt);
    free(ord);
}

/* ---- fixtures ---- */

#define NV 48
#define NL 1024
static float L48[NV], L1k[NL];
static int32_t hist[40];

static void make_fixtures(void) {
    for (int i = 0; i < NV; i++) L48[i] = (float)(3.0 * sin(i * 1.7 + 0.3) + 0.04 * i - 0.5 * cos(i * 0.61));
    uint64_t x = 99;
    for (int i = 0; i < NL; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        L1k[i] = (float)(4.0 * ((double)(x >> 11) * 0x1.0p-53) - 2.0 + 0.001 * (i % 7));
    }
    L1k[1000] = 7.0f, L1k[77] = 6.5f, L1k[600] = 6.4f;
    for (int i = 0; i < 40; i++) hist[i] = (int32_t)((i * 7 + 3) % NV);
}

static wick_sampling knobs(float t, int k, float top_p, float min_p) {
    wick_sampling p = {0};
    p.temperature = t, p.top_k = k, p.top_p = top_p, p.min_p = min_p, p.repeat_last_n = 64;
    return p;
}

/* ---- sampler level ---- */

/* One case: 50 draws at a fixed seed, each followed by its report. */
static void one_case(const char *name, const float *L, int n, const wick_sampling *p, const int32_t *h, int nh) {
    sampler s;
    CHECK(sampler_init(&s, n, tt()->isa, NULL) == 0);
    sampler_cfg cfg;
    sampler_cfg_init(&cfg, p);
    double *ref = malloc((size_t)n * sizeof *ref);
    float *dist = malloc((size_t)n * sizeof *dist);
    reference(L, n, p, h, nh, ref);
    sampler_dist(&s, &cfg, L, h, nh, dist);
    int survivors = 0;
    for (int i = 0; i < n; i++) survivors += ref[i] > 0;
    const int want = survivors < TOP ? survivors : TOP;
    sampler_rng a, b;
    sampler_rng_seed(&a, 7);
    sampler_rng_seed(&b, 7);
    bool same_tokens = true, rng_kept = true, exact = true, near = true, order = true, sum_ok = true, count_ok = true;
    for (int d = 0; d < 50; d++) {
        const int32_t plain = sampler_sample(&s, &cfg, L, h, nh, &a);
        const int32_t t = sampler_sample(&s, &cfg, L, h, nh, &b);
        same_tokens &= plain == t;
        wick_token_info ti = {.id = t};
        const sampler_rng before = b;
        sampler_post_probs(&s, &cfg, L, h, nh, &ti, TOP);
        rng_kept &= memcmp(&before, &b, sizeof b) == 0;
        near &= fabs(ti.prob - ref[t]) <= TOL && ti.prob > 0;
        exact &= ti.prob == dist[t];
        count_ok &= ti.n_top == want;
        double sum = 0;
        for (int k = 0; k < ti.n_top; k++) {
            const int32_t id = ti.top_ids[k];
            near &= fabs(ti.top_probs[k] - ref[id]) <= TOL && ref[id] > 0;
            exact &= ti.top_probs[k] == dist[id];
            if (k > 0) order &= ref[ti.top_ids[k - 1]] > ref[id];
            sum += ti.top_probs[k];
        }
        if (survivors <= TOP) sum_ok &= fabs(sum - 1) <= TOL;
        if (ti.n_top > 0) order &= ref[ti.top_ids[0]] >= ref[t]; /* nothing better is left out */
    }
    CHECK_MSG(same_tokens, "%s: reporting changed the draws", name);
    CHECK_MSG(rng_kept, "%s: reporting moved the PRNG", name);
    CHECK_MSG(count_ok, "%s: not min(%d, %d survivors) candidates", name, TOP, survivors);
    CHECK_MSG(near, "%s: a probability off the reference by more than %g", name, TOL);
    CHECK_MSG(exact, "%s: a probability not sampler_dist's", name);
    CHECK_MSG(order, "%s: candidates not best first", name);
    CHECK_MSG(sum_ok, "%s: the survivors' probabilities do not sum to 1", name);
    /* n_top 0: the token's probability only */
    wick_token_info ti = {.id = sampler_sample(&s, &cfg, L, h, nh, &a)};
    sampler_post_probs(&s, &cfg, L, h, nh, &ti, 0);
    CHECK_INT(ti.n_top, 0);
    CHECK_MSG(ti.prob == dist[ti.id], "%s: n_top 0", name);
    if (getenv("WICK_TEST_VERBOSE")) fprintf(stderr, "%-28s %4d survivors\n", name, survivors);
    free(ref);
    free(dist);
    sampler_free(&s);
}

static void test_knobs(void) {
    wick_sampling p;
    p = knobs(1.0f, 10, 1, 0), one_case("top-k 10", L48, NV, &p, NULL, 0);
    p = knobs(0.7f, 0, 0.8f, 0), one_case("top-p 0.8, T 0.7", L48, NV, &p, NULL, 0);
    p = knobs(1.3f, 0, 1, 0.1f), one_case("min-p 0.1, T 1.3", L48, NV, &p, NULL, 0);
    p = knobs(1.0f, 0, 1, 0), one_case("no filter", L48, NV, &p, NULL, 0);
    p = knobs(2.0f, 30, 0.95f, 0), one_case("top-k 30 + top-p, T 2", L48, NV, &p, NULL, 0);
    p = knobs(0.8f, 20, 0.9f, 0.05f), p.repeat_penalty = 1.3f, p.presence_penalty = 0.4f, p.frequency_penalty = 0.3f;
    one_case("all knobs + penalties", L48, NV, &p, hist, 40);
    p = knobs(1.0f, 0, 0.97f, 0), one_case("1024: top-p 0.97", L1k, NL, &p, NULL, 0);
    p = knobs(0.5f, 0, 0.6f, 0), one_case("1024: top-p 0.6, T 0.5", L1k, NL, &p, NULL, 0);
    p = knobs(2.0f, 100, 1, 0.05f), one_case("1024: top-k 100 + min-p, T 2", L1k, NL, &p, NULL, 0);
    p = knobs(1.0f, 0, 1, 0), one_case("1024: no filter", L1k, NL, &p, NULL, 0);
}

/* Greedy: 1 at the argmax, then the runners-up by logit with 0. */
static void test_greedy(void) {
    sampler s;
    CHECK(sampler_init(&s, NV, tt()->isa, NULL) == 0);
    int ord[NV];
    for (int i = 0; i < NV; i++) ord[i] = i;
    for (int i = 1; i < NV; i++)
        for (int k = i; k > 0 && L48[ord[k]] > L48[ord[k - 1]]; k--) {
            const int t = ord[k];
            ord[k] = ord[k - 1];
            ord[k - 1] = t;
        }
    wick_sampling p = knobs(0, 0, 1, 0);
    sampler_cfg cfg;
    sampler_cfg_init(&cfg, &p);
    sampler_rng r;
    sampler_rng_seed(&r, 1);
    wick_token_info ti = {.id = sampler_sample(&s, &cfg, L48, NULL, 0, &r)};
    CHECK_INT(ti.id, ord[0]);
    sampler_post_probs(&s, &cfg, L48, NULL, 0, &ti, 10);
    CHECK(ti.prob == 1.0f);
    CHECK_INT(ti.n_top, 10);
    bool ok = true;
    for (int k = 0; k < ti.n_top; k++) ok &= ti.top_ids[k] == ord[k] && ti.top_probs[k] == (k == 0 ? 1.0f : 0.0f);
    CHECK_MSG(ok, "greedy: the argmax with 1, then the runners-up by logit with 0");
    /* within top_k */
    p.top_k = 4;
    sampler_post_probs(&s, &cfg, L48, NULL, 0, &ti, 10);
    CHECK_INT(ti.n_top, 4);
    CHECK_INT(ti.top_ids[3], ord[3]);
    p.top_k = 0;
    /* a token the mask rules out is never listed */
    token_mask mk;
    CHECK(token_mask_init(&mk, NV, NULL) == 0);
    token_mask_set(&mk, ord[1], false);
    token_mask_set(&mk, ord[3], false);
    CHECK(sampler_cfg_add(&cfg, logits_proc_mask(&mk)) == 0);
    sampler_post_probs(&s, &cfg, L48, NULL, 0, &ti, TOP);
    CHECK_INT(ti.n_top, TOP);
    ok = ti.top_ids[0] == ord[0] && ti.top_ids[1] == ord[2] && ti.top_ids[2] == ord[4];
    for (int k = 0; k < ti.n_top; k++) ok &= ti.top_ids[k] != ord[1] && ti.top_ids[k] != ord[3];
    CHECK_MSG(ok, "greedy under a mask: masked tokens listed");
    /* only two tokens allowed: two listed */
    token_mask_fill(&mk, false);
    token_mask_set(&mk, 5, true);
    token_mask_set(&mk, 9, true);
    ti.id = sampler_sample(&s, &cfg, L48, NULL, 0, &r);
    sampler_post_probs(&s, &cfg, L48, NULL, 0, &ti, TOP);
    CHECK_INT(ti.n_top, 2);
    CHECK_INT(ti.top_ids[0], ti.id);
    CHECK(ti.prob == 1.0f && ti.top_probs[1] == 0.0f);
    /* sampled under the same mask: the two share the mass */
    p.temperature = 1;
    ti.id = sampler_sample(&s, &cfg, L48, NULL, 0, &r);
    sampler_post_probs(&s, &cfg, L48, NULL, 0, &ti, TOP);
    CHECK_INT(ti.n_top, 2);
    const double e = exp((double)L48[5] - L48[9]);
    CHECK_NEAR(ti.top_probs[0] + ti.top_probs[1], 1.0, TOL);
    CHECK_NEAR(ti.top_ids[0] == 5 ? ti.top_probs[0] : ti.top_probs[1], e / (1 + e), TOL);
    token_mask_free(&mk);
    sampler_free(&s);
}

/* ---- through the scheduler ---- */

#define MAXT 64
typedef struct rec {
    wick_token_info t[MAXT];
    int n;
    bool done;
    wick_request_result res;
} rec;

static bool rec_token(void *user, const wick_token_info *ti, const char *text, size_t len) {
    rec *o = user;
    if (o->n < MAXT) o->t[o->n++] = *ti;
    (void)text, (void)len;
    return true;
}

static void rec_done(void *user, const wick_request_result *res) {
    rec *o = user;
    o->res = *res;
    o->res.error = NULL, o->res.tail = NULL;
    o->done = true;
}

static void run(wick_sched *s, const int32_t *ids, int n, const wick_sampling *sp, int logprobs, bool post,
                const wick_grammar *g, wick_spec_method spec, rec *o) {
    wick_error err;
    memset(o, 0, sizeof *o);
    wick_request r = {.prompt = ids, .n_prompt = n, .n_predict = 40, .sampling = *sp, .logprobs = logprobs,
                      .post_sampling_probs = post, .grammar = g, .on_token = rec_token, .on_done = rec_done,
                      .user = o, .ignore_eos = true};
    r.spec.method = spec;
    CHECK_MSG(wick_sched_submit(s, &r, &err) > 0, "%s", err.msg);
    int left, guard = 0;
    while ((left = wick_sched_step(s, &err)) > 0 && guard++ < 100000) {
    }
    CHECK_MSG(left == 0 && o->done, "step: %s", left < 0 ? err.msg : "did not finish");
}

static bool same_ids(const rec *a, const rec *b) {
    bool ok = a->n == b->n;
    for (int k = 0; ok && k < a->n; k++) ok = a->t[k].id == b->t[k].id;
    return ok;
}

static void test_scheduler(void) {
    const char *path = shared_path("models/stories260K/stories260K-f32.gguf");
    if (!path) path = "models/stories260K/stories260K-f32.gguf";
    wick_error err;
    wick_model *m = wick_model_load(path, NULL, &err);
    if (!m) SKIP("stories260K not found");
    wick_context_params cp = {.n_ctx = 256, .n_seq = 2, .n_threads = 1, .prefill_chunk = 16};
    wick_context *c = wick_context_new(m, &cp, &err);
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
    CHECK_MSG(s != NULL, "%s", err.msg);
    if (!s) return;
    wick_spec_params spp = {.lookup = 3, .draft_max = 4}; /* requests ask for it below */
    CHECK_MSG(wick_sched_set_spec(s, &spp, &err) == 0, "%s", err.msg);
    const char *text = "Once upon a time, there was a little girl named Lily. Once upon a time";
    int32_t ids[64];
    const int n = wick_tokenize(m, text, strlen(text), true, ids, 64, &err);
    CHECK(n > 0);
    static rec plain, raw, post;
    /* sampled: the same tokens without reports, with logprobs, with post-sampling probabilities */
    wick_sampling sp = knobs(0.9f, 20, 0.9f, 0.05f);
    sp.seed = 42;
    run(s, ids, n, &sp, -1, false, NULL, WICK_SPEC_OFF, &plain);
    run(s, ids, n, &sp, 5, false, NULL, WICK_SPEC_OFF, &raw);
    run(s, ids, n, &sp, 5, true, NULL, WICK_SPEC_OFF, &post);
    CHECK_INT(post.n, 40);
    CHECK_MSG(same_ids(&plain, &post) && same_ids(&plain, &raw), "a report changed the sampled tokens");
    bool ok = true, some_below_one = false;
    for (int k = 0; k < post.n; k++) {
        const wick_token_info *t = &post.t[k];
        ok &= t->prob > 0 && t->prob <= 1 && t->n_top >= 1 && t->n_top <= 5 && t->top_probs[0] >= t->prob;
        double sum = 0;
        for (int j = 0; j < t->n_top; j++) {
            sum += t->top_probs[j];
            if (j > 0) ok &= t->top_probs[j] <= t->top_probs[j - 1] && t->top_probs[j] > 0;
            if (t->top_ids[j] == t->id) ok &= t->top_probs[j] == t->prob;
        }
        ok &= sum <= 1 + TOL;
        some_below_one |= t->prob < 1;
        ok &= raw.t[k].logprob <= 0; /* the raw report is a logprob */
    }
    CHECK_MSG(ok, "sampled: probabilities out of shape");
    CHECK(some_below_one);
    /* greedy: 1, then runners-up with 0 */
    wick_sampling gr = knobs(0, 0, 1, 0);
    run(s, ids, n, &gr, -1, false, NULL, WICK_SPEC_OFF, &plain);
    run(s, ids, n, &gr, 5, true, NULL, WICK_SPEC_OFF, &post);
    CHECK(same_ids(&plain, &post));
    ok = true;
    for (int k = 0; k < post.n; k++) {
        const wick_token_info *t = &post.t[k];
        ok &= t->prob == 1.0f && t->n_top == 5 && t->top_ids[0] == t->id && t->top_probs[0] == 1.0f;
        for (int j = 1; j < t->n_top; j++) ok &= t->top_probs[j] == 0.0f;
    }
    CHECK_MSG(ok, "greedy: not 1 then 0s");
    /* under a grammar, speculating (prompt lookup) reports what plain decoding does */
    wick_grammar_spec gs = {.kind = WICK_GRAMMAR_REGEX, .text = ", there was a little girl named Lily\\.[a-zA-Z ,.]{20,200}"};
    wick_grammar *g = wick_grammar_compile(m, &gs, &err);
    CHECK_MSG(g != NULL, "%s", err.msg);
    static rec spec;
    run(s, ids, n, &gr, 8, true, g, WICK_SPEC_OFF, &plain);
    run(s, ids, n, &gr, 8, true, g, WICK_SPEC_LOOKUP, &spec);
    CHECK_MSG(spec.res.accepted_tokens > 0, "lookup accepted no draft (%d drafted)", spec.res.draft_tokens);
    ok = same_ids(&plain, &spec);
    for (int k = 0; ok && k < plain.n; k++)
        ok = plain.t[k].n_top == spec.t[k].n_top && plain.t[k].prob == spec.t[k].prob &&
             !memcmp(plain.t[k].top_ids, spec.t[k].top_ids, sizeof(int32_t) * (size_t)plain.t[k].n_top) &&
             !memcmp(plain.t[k].top_probs, spec.t[k].top_probs, sizeof(float) * (size_t)plain.t[k].n_top);
    CHECK_MSG(ok, "speculative decoding under a grammar: reports differ from plain decoding's");
    wick_grammar_free(g);
    wick_sched_free(s);
    wick_context_free(c);
    wick_model_free(m);
}

int main(void) {
    make_fixtures();
    RUN(test_knobs);
    RUN(test_greedy);
    RUN(test_scheduler);
    return check_summary("test_post_probs");
}
