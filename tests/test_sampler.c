/* test_sampler.c — the sampler against an independent double-precision
 * reference of its documented order (penalties, temperature, top-k, softmax,
 * top-p, min-p): 100,000 draws per knob must fit the expected post-filter
 * distribution (chi-square, p > 0.001), filtered tokens are never drawn,
 * seeds reproduce, greedy is the argmax, degenerate inputs stay in range,
 * the token-mask processor never lets a masked token through.
 * `test_sampler --bench` prints µs per sample for a 151,936-token vocabulary. */
#include <float.h>
#include <stdint.h>
#include <time.h>

#include "check.h"
#include "tuning.h"
#include "engine/sampler.h"
#include "kernels/cpu.h"

#define DRAWS 100000

/* The tests' PRNGs (every draw takes one explicitly). */
static sampler_rng rng, rng2;

/* sampler_sample with knobs p (their logit biases the only processor). */
static int32_t sample(sampler *s, const wick_sampling *p, const float *L, const int32_t *h, int nh, sampler_rng *r) {
    sampler_cfg cfg;
    sampler_cfg_init(&cfg, p);
    return sampler_sample(s, &cfg, L, h, nh, r);
}

/* ---- statistics ---- */

/* Regularized upper incomplete gamma Q(a, x): the power series of P for
 * x < a + 1, else the continued fraction of Q (modified Lentz). */
static double gamma_q(double a, double x) {
    if (x <= 0) return 1.0;
    double lead = exp(-x + a * log(x) - lgamma(a));
    if (x < a + 1) {
        double term = 1.0 / a, sum = term;
        for (int n = 1; n < 100000; n++) {
            term *= x / (a + n);
            sum += term;
            if (fabs(term) < fabs(sum) * 1e-16) break;
        }
        double q = 1.0 - sum * lead;
        return q < 0 ? 0 : q;
    }
    /* Q = lead / (x + 1 - a - 1·(1-a)/(x + 3 - a - 2·(2-a)/(x + 5 - a - ...))) */
    double tiny = 1e-300, b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < 100000; i++) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < tiny) d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-16) break;
    }
    return lead * h;
}

/* P(chi-square with df degrees of freedom > x). */
static double chi2_sf(double x, int df) { return gamma_q(df / 2.0, x / 2.0); }

/* Goodness of fit of counts obs[0..n) to probabilities prob[0..n) over N draws.
 * Categories with expected count < 5 are pooled into one. Returns the p-value
 * (1 when only one category is possible). *zero_ok: no draw of a token of
 * probability 0. */
static double chi2_fit(const long *obs, const double *prob, int n, long N, bool *zero_ok) {
    double stat = 0, pool_e = 0, pool_o = 0;
    int bins = 0;
    *zero_ok = true;
    for (int i = 0; i < n; i++) {
        if (prob[i] <= 0) {
            if (obs[i] != 0) *zero_ok = false;
            continue;
        }
        double e = prob[i] * (double)N;
        if (e < 5) {
            pool_e += e;
            pool_o += (double)obs[i];
            continue;
        }
        stat += (obs[i] - e) * (obs[i] - e) / e;
        bins++;
    }
    if (pool_e > 0) {
        stat += (pool_o - pool_e) * (pool_o - pool_e) / pool_e;
        bins++;
    }
    return bins < 2 ? 1.0 : chi2_sf(stat, bins - 1);
}

/* ---- the reference: the documented order, in double ---- */

static const double *ord_cmp_z;
static int ord_cmp(const void *a, const void *b) {
    int i = *(const int *)a, j = *(const int *)b;
    double zi = ord_cmp_z[i], zj = ord_cmp_z[j];
    if (zi != zj) return zi > zj ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Indices sorted by z descending, ties by lower index. */
static void order_desc(const double *z, int n, int *ord) {
    for (int i = 0; i < n; i++) ord[i] = i;
    ord_cmp_z = z;
    qsort(ord, (size_t)n, sizeof *ord, ord_cmp);
}

typedef struct ref_info {
    double margin_p;   /* distance of the top-p cumulative at the cut from top_p */
    double margin_min; /* smallest |ratio - min_p| over the tokens min-p looks at */
} ref_info;

/* prob[0..n): the distribution the sampler should draw from. */
static void reference(const float *logits, int n, const wick_sampling *p, const int32_t *hist,
                      int n_hist, double *prob, ref_info *info) {
    double *z = malloc((size_t)n * sizeof *z);
    int *cnt = calloc((size_t)n, sizeof *cnt), *ord = malloc((size_t)n * sizeof *ord);
    bool *keep = malloc((size_t)n * sizeof *keep);
    if (info) info->margin_p = info->margin_min = INFINITY;
    for (int i = 0; i < n; i++) z[i] = isnan(logits[i]) ? -INFINITY : logits[i];
    /* 1. penalties over the window */
    int w = p->repeat_last_n < 0 ? n_hist : (p->repeat_last_n < n_hist ? p->repeat_last_n : n_hist);
    for (int i = n_hist - w; i < n_hist; i++)
        if (hist[i] >= 0 && hist[i] < n) cnt[hist[i]]++;
    for (int t = 0; t < n; t++) {
        if (!cnt[t]) continue;
        double rp = p->repeat_penalty;
        if (rp > 0 && rp != 1) z[t] = z[t] > 0 ? z[t] / rp : z[t] * rp;
        z[t] -= p->presence_penalty + cnt[t] * (double)p->frequency_penalty;
    }
    for (int i = 0; i < n; i++) prob[i] = 0;
    if (!(p->temperature > 0)) { /* 2. greedy */
        int best = 0;
        for (int i = 1; i < n; i++)
            if (z[i] > z[best]) best = i;
        prob[best] = 1;
        goto done;
    }
    for (int i = 0; i < n; i++) z[i] /= p->temperature; /* 2. temperature */
    order_desc(z, n, ord);
    int m = n; /* 3. top-k: the first m of ord */
    if (p->top_k > 0 && p->top_k < n) m = p->top_k;
    double zmax = z[ord[0]], sum = 0; /* 4. softmax */
    for (int r = 0; r < m; r++) sum += exp(z[ord[r]] - zmax);
    for (int r = 0; r < m; r++) prob[ord[r]] = exp(z[ord[r]] - zmax) / sum;
    for (int i = 0; i < n; i++) keep[i] = false;
    int kept = m;
    if (p->top_p > 0 && p->top_p < 1) { /* 5. top-p */
        double cum = 0;
        for (int r = 0; r < m; r++) {
            double before = cum;
            cum += prob[ord[r]];
            if (cum >= p->top_p) {
                kept = r + 1;
                if (info) info->margin_p = fmin(p->top_p - before, cum - p->top_p);
                break;
            }
        }
    }
    for (int r = 0; r < kept; r++) keep[ord[r]] = true;
    if (p->min_p > 0) { /* 6. min-p */
        double pmax = prob[ord[0]];
        for (int r = 0; r < kept; r++) {
            double ratio = prob[ord[r]] / pmax;
            if (info && r > 0) info->margin_min = fmin(info->margin_min, fabs(ratio - p->min_p));
            if (ratio < p->min_p) keep[ord[r]] = false;
        }
    }
    sum = 0; /* 7. renormalize */
    for (int i = 0; i < n; i++) {
        if (!keep[i]) prob[i] = 0;
        sum += prob[i];
    }
    for (int i = 0; i < n; i++) prob[i] /= sum;
done:
    free(z);
    free(cnt);
    free(ord);
    free(keep);
}

/* ---- fixtures ---- */

#define NV 48
static float fixed_logits[NV];
static int32_t fixed_hist[40];

static uint64_t lcg_state = 12345;
static double lcg_uniform(void) {
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(lcg_state >> 11) * 0x1.0p-53;
}
static double lcg_normal(void) {
    double u = lcg_uniform(), v = lcg_uniform();
    return sqrt(-2 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

static void make_fixtures(void) {
    /* Varied values in about [-4, 5], positive and negative, no ties. */
    for (int i = 0; i < NV; i++) fixed_logits[i] = (float)(3.0 * sin(i * 1.7 + 0.3) + 0.04 * i - 0.5 * cos(i * 0.61));
    /* A history with repeats of high-, low- and negative-logit tokens. */
    const int32_t h[40] = {3, 7, 7, 12, 3, 3, 20, 1, 33, 7, 45, 12, 0, 3, 8, 9, 20, 20, 20, 41,
                           2, 5, 7, 11, 13, 17, 19, 23, 29, 31, 3, 3, 47, 46, 7, 12, 26, 26, 4, 39};
    memcpy(fixed_hist, h, sizeof h);
}

static wick_sampling off(float temperature) {
    wick_sampling p = {0};
    p.temperature = temperature;
    p.repeat_last_n = 64;
    return p;
}

/* 100,000 draws with config p; chi-square against the reference. */
static void fit_case(const char *name, const float *logits, int n, const wick_sampling *p,
                     const int32_t *hist, int n_hist, long draws, uint64_t seed) {
    sampler s;
    CHECK(sampler_init(&s, n, tt()->isa, NULL) == 0);
    double *prob = malloc((size_t)n * sizeof *prob);
    long *obs = calloc((size_t)n, sizeof *obs);
    ref_info info;
    reference(logits, n, p, hist, n_hist, prob, &info);
    /* The fixture must not sit on a filter's edge, where float vs double could differ. */
    CHECK_MSG(info.margin_p > 1e-6, "%s: top-p cut too close to the edge (%g)", name, info.margin_p);
    CHECK_MSG(info.margin_min > 1e-4, "%s: min-p cut too close to the edge (%g)", name, info.margin_min);
    sampler_rng_seed(&rng, seed);
    clock_t c0 = clock();
    bool in_range = true;
    for (long d = 0; d < draws; d++) {
        int32_t t = sample(&s, p, logits, hist, n_hist, &rng);
        if (t < 0 || t >= n) {
            in_range = false;
            break;
        }
        obs[t]++;
    }
    CHECK_MSG(in_range, "%s: token out of range", name);
    bool zero_ok;
    double pv = chi2_fit(obs, prob, n, draws, &zero_ok);
    CHECK_MSG(zero_ok, "%s: a filtered-out token was drawn", name);
    CHECK_MSG(pv > 0.001, "%s: chi-square p = %g", name, pv);
    int support = 0;
    for (int i = 0; i < n; i++) support += prob[i] > 0;
    if (getenv("WICK_TEST_VERBOSE"))
        fprintf(stderr, "%-28s p = %.4f, %4d tokens kept, %6.0f ms\n", name, pv, support,
                (double)(clock() - c0) * 1e3 / CLOCKS_PER_SEC);
    free(prob);
    free(obs);
    sampler_free(&s);
}

/* ---- tests ---- */

static void test_chi2_itself(void) {
    /* Table values: chi-square quantiles. */
    CHECK_NEAR(chi2_sf(3.841459, 1), 0.05, 1e-6);
    CHECK_NEAR(chi2_sf(10.827566, 1), 0.001, 1e-8);
    CHECK_NEAR(chi2_sf(18.307038, 10), 0.05, 1e-6);
    CHECK_NEAR(chi2_sf(29.588298, 10), 0.001, 1e-8);
    CHECK_NEAR(chi2_sf(67.504807, 50), 0.05, 1e-6);
    CHECK_NEAR(chi2_sf(2.0, 2), exp(-1.0), 1e-12); /* df 2: exactly e^(-x/2) */
    CHECK_NEAR(chi2_sf(0.0, 5), 1.0, 0);
    /* Power: draws at temperature 1 must be rejected against temperature 2. */
    sampler s;
    CHECK(sampler_init(&s, NV, tt()->isa, NULL) == 0);
    wick_sampling p1 = off(1), p2 = off(2);
    double prob[NV];
    long obs[NV] = {0};
    reference(fixed_logits, NV, &p2, NULL, 0, prob, NULL);
    sampler_rng_seed(&rng, 1);
    for (int d = 0; d < DRAWS; d++) obs[sample(&s, &p1, fixed_logits, NULL, 0, &rng)]++;
    bool zero_ok;
    CHECK(chi2_fit(obs, prob, NV, DRAWS, &zero_ok) < 1e-6);
    sampler_free(&s);
}

static void test_knobs(void) {
    const float *L = fixed_logits;
    wick_sampling p;
    p = off(1.0f), fit_case("temperature 1", L, NV, &p, NULL, 0, DRAWS, 11);
    p = off(0.5f), fit_case("temperature 0.5", L, NV, &p, NULL, 0, DRAWS, 12);
    p = off(2.0f), fit_case("temperature 2", L, NV, &p, NULL, 0, DRAWS, 13);
    p = off(1.0f), p.top_k = 10, fit_case("top-k 10", L, NV, &p, NULL, 0, DRAWS, 14);
    p = off(1.0f), p.top_k = 1, fit_case("top-k 1", L, NV, &p, NULL, 0, DRAWS, 15);
    p = off(1.0f), p.top_p = 0.7f, fit_case("top-p 0.7", L, NV, &p, NULL, 0, DRAWS, 16);
    p = off(1.5f), p.top_p = 0.9f, fit_case("top-p 0.9, T 1.5", L, NV, &p, NULL, 0, DRAWS, 17);
    p = off(1.0f), p.min_p = 0.1f, fit_case("min-p 0.1", L, NV, &p, NULL, 0, DRAWS, 18);
    p = off(1.0f), p.top_p = 0.95f, p.min_p = 0.03f, fit_case("top-p 0.95 + min-p 0.03", L, NV, &p, NULL, 0, DRAWS, 19);
    p = off(1.0f), p.top_k = 20, p.top_p = 0.8f, fit_case("top-k 20 + top-p 0.8", L, NV, &p, NULL, 0, DRAWS, 20);
    p = off(1.0f), p.repeat_penalty = 1.5f, fit_case("repeat penalty 1.5", L, NV, &p, fixed_hist, 40, DRAWS, 21);
    p = off(1.0f), p.repeat_penalty = 0.7f, fit_case("repeat penalty 0.7", L, NV, &p, fixed_hist, 40, DRAWS, 22);
    p = off(1.0f), p.repeat_penalty = 2.0f, p.repeat_last_n = 8,
    fit_case("repeat penalty, last 8", L, NV, &p, fixed_hist, 40, DRAWS, 23);
    p = off(1.0f), p.presence_penalty = 1.0f, fit_case("presence 1", L, NV, &p, fixed_hist, 40, DRAWS, 24);
    p = off(1.0f), p.frequency_penalty = 0.5f, fit_case("frequency 0.5", L, NV, &p, fixed_hist, 40, DRAWS, 25);
    p = off(1.0f), p.presence_penalty = -0.5f, p.frequency_penalty = 0.3f, p.repeat_last_n = -1,
    fit_case("presence -0.5 + freq, all", L, NV, &p, fixed_hist, 40, DRAWS, 26);
    p = off(0.8f), p.top_k = 20, p.top_p = 0.9f, p.min_p = 0.05f, p.repeat_penalty = 1.3f,
    p.presence_penalty = 0.4f, p.frequency_penalty = 0.3f, p.repeat_last_n = 16;
    fit_case("all knobs", L, NV, &p, fixed_hist, 40, DRAWS, 27);
    p = off(0.8f), p.top_p = 0.9f, p.min_p = 0.05f, p.repeat_penalty = 1.3f, p.presence_penalty = 0.4f,
    p.frequency_penalty = 0.3f, p.repeat_last_n = 16;
    fit_case("all knobs but top-k", L, NV, &p, fixed_hist, 40, DRAWS, 28);
    p = wick_sampling_default(), fit_case("defaults", L, NV, &p, fixed_hist, 40, DRAWS, 29);
}

/* A larger vocabulary with a long tail: the top-p threshold search and the
 * top-k heap over many blocks. */
static void test_large_vocab(void) {
    enum { N = 1024 };
    static float L[N];
    lcg_state = 99;
    for (int i = 0; i < N; i++) L[i] = (float)(2.0 * lcg_normal());
    L[1000] = 9.0f, L[77] = 8.5f, L[600] = 8.4f;
    wick_sampling p;
    p = off(1.0f), p.top_p = 0.6f, fit_case("1024: top-p 0.6", L, N, &p, NULL, 0, 10000, 31);
    p = off(1.0f), p.top_p = 0.97f, fit_case("1024: top-p 0.97", L, N, &p, NULL, 0, 10000, 32);
    p = off(1.0f), p.top_k = 100, fit_case("1024: top-k 100", L, N, &p, NULL, 0, 10000, 33);
    p = off(0.7f), p.min_p = 0.02f, fit_case("1024: min-p 0.02", L, N, &p, NULL, 0, 10000, 34);
}

/* Every ISA level gives the very same draws (the SIMD weight pass uses the
 * same IEEE operations), on a 151,936-token vocabulary. */
static void test_isa_same(void) {
    enum { N = 151936, DR = 40 };
    float *L = malloc(N * sizeof *L);
    lcg_state = 5;
    for (int i = 0; i < N; i++) L[i] = (float)(2.5 * lcg_normal());
    for (int i = 0; i < 30; i++) L[(i * 7919) % N] = (float)(12 + 0.3 * i);
    sampler s;
    CHECK(sampler_init(&s, N, tt()->isa, NULL) == 0);
    wick_sampling cfg[4];
    cfg[0] = wick_sampling_default();
    cfg[1] = off(0.8f), cfg[1].top_p = 0.95f;
    cfg[2] = off(1.5f), cfg[2].min_p = 0.05f;
    cfg[3] = off(1.0f);
    static int32_t got[3][4][DR];
    int levels = 0;
    cpu_isa best = tt()->isa;
    SKIP_ISAS_THIS_CPU_LACKS();
    for (int isa = ISA_SCALAR; isa <= (int)best; isa++) {
        if (!tt_set_isa((cpu_isa)isa)) continue;
        s.isa = (cpu_isa)isa;
        for (int c = 0; c < 4; c++) {
            sampler_rng_seed(&rng, 77);
            for (int d = 0; d < DR; d++) got[levels][c][d] = sample(&s, &cfg[c], L, NULL, 0, &rng);
        }
        levels++;
    }
    tt_set_isa(best);
    for (int l = 1; l < levels; l++) CHECK(memcmp(got[0], got[l], sizeof got[0]) == 0);
    bool in_range = true;
    for (int c = 0; c < 4; c++)
        for (int d = 0; d < DR; d++) in_range &= got[0][c][d] >= 0 && got[0][c][d] < N;
    CHECK(in_range);
    sampler_free(&s);
    free(L);
}

static void test_seeds(void) {
    sampler s;
    CHECK(sampler_init(&s, NV, tt()->isa, NULL) == 0);
    wick_sampling p = off(0.9f);
    p.top_k = 30, p.top_p = 0.95f, p.min_p = 0.02f, p.repeat_penalty = 1.2f, p.frequency_penalty = 0.1f;
    static int32_t a[1000], b[1000], c[1000];
    int32_t *runs[3] = {a, b, c};
    uint64_t seeds[3] = {42, 42, 43};
    for (int r = 0; r < 3; r++) { /* generation-like: the history grows with each draw */
        sampler_rng_seed(&rng, seeds[r]);
        for (int i = 0; i < 1000; i++) runs[r][i] = sample(&s, &p, fixed_logits, runs[r], i, &rng);
    }
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(memcmp(a, c, sizeof a) != 0);
    /* A fresh sampler with the same seed reproduces too. */
    sampler s2;
    CHECK(sampler_init(&s2, NV, tt()->isa, NULL) == 0);
    sampler_rng_seed(&rng2, 42);
    bool same = true;
    for (int i = 0; i < 1000; i++) same &= sample(&s2, &p, fixed_logits, a, i, &rng2) == a[i];
    CHECK(same);
    sampler_free(&s);
    sampler_free(&s2);
}

static void test_greedy(void) {
    enum { N = 1000 };
    static float L[N];
    sampler s;
    CHECK(sampler_init(&s, N, tt()->isa, NULL) == 0);
    lcg_state = 7;
    bool ok = true;
    wick_sampling g = off(0);
    for (int trial = 0; trial < 50; trial++) {
        for (int i = 0; i < N; i++) L[i] = (float)lcg_normal();
        int best = 0;
        for (int i = 1; i < N; i++)
            if (L[i] > L[best]) best = i;
        sampler_rng_seed(&rng, (uint64_t)trial);
        ok &= sample(&s, &g, L, NULL, 0, &rng) == best;
    }
    CHECK(ok);
    /* Ties: lowest id. */
    for (int i = 0; i < N; i++) L[i] = 0;
    L[500] = L[300] = L[700] = 2;
    CHECK_INT(sample(&s, &g, L, NULL, 0, &rng), 300);
    /* A zeroed struct is greedy, whatever the seed. */
    wick_sampling z;
    memset(&z, 0, sizeof z);
    for (uint64_t seed = 0; seed < 5; seed++) {
        sampler_rng_seed(&rng, seed);
        CHECK_INT(sample(&s, &z, L, NULL, 0, &rng), 300);
    }
    /* Penalties still apply under greedy: 300 penalized → 500. */
    int32_t h[3] = {300, 300, 12};
    g.repeat_penalty = 1.5f;
    CHECK_INT(sample(&s, &g, L, h, 3, &rng), 500);
    g.repeat_penalty = 1, g.presence_penalty = 0.1f;
    CHECK_INT(sample(&s, &g, L, h, 3, &rng), 500);
    g.presence_penalty = 0, g.frequency_penalty = 0.1f;
    CHECK_INT(sample(&s, &g, L, h, 3, &rng), 500);
    /* repeat_last_n 0: no penalty; 1: only the last token (12) is seen. */
    g.repeat_last_n = 0;
    CHECK_INT(sample(&s, &g, L, h, 3, &rng), 300);
    g.repeat_last_n = 1;
    CHECK_INT(sample(&s, &g, L, h, 3, &rng), 300);
    /* The count buffer is left clean. */
    bool clean = true;
    for (int i = 0; i < N; i++) clean &= s.count[i] == 0;
    CHECK(clean);
    /* Negative temperature = greedy too. */
    g = off(-1);
    CHECK_INT(sample(&s, &g, L, NULL, 0, &rng), 300);
    sampler_free(&s);
}

/* Draws `draws` times; returns false if any id is out of range. Counts into obs. */
static bool draw_many(sampler *s, const wick_sampling *p, const float *L, int n, const int32_t *h,
                      int nh, int draws, long *obs) {
    for (int d = 0; d < draws; d++) {
        int32_t t = sample(s, p, L, h, nh, &rng);
        if (t < 0 || t >= n) return false;
        if (obs) obs[t]++;
    }
    return true;
}

static void test_degenerate(void) {
    enum { N = 20 };
    float L[N];
    long obs[N];
    sampler s;
    CHECK(sampler_init(&s, N, tt()->isa, NULL) == 0);
    sampler_rng_seed(&rng, 5);
    wick_sampling p;

    /* All equal: uniform; top-k keeps the lowest ids; top-p 0.52 keeps 11. */
    for (int i = 0; i < N; i++) L[i] = 1.5f;
    p = off(1);
    fit_case("all equal", L, N, &p, NULL, 0, DRAWS, 41);
    p.top_k = 5;
    memset(obs, 0, sizeof obs);
    CHECK(draw_many(&s, &p, L, N, NULL, 0, 5000, obs));
    bool ok = true;
    for (int i = 0; i < N; i++) ok &= (i < 5) == (obs[i] > 0);
    CHECK(ok);
    p = off(1), p.top_p = 0.52f;
    memset(obs, 0, sizeof obs);
    CHECK(draw_many(&s, &p, L, N, NULL, 0, 5000, obs));
    ok = true;
    for (int i = 0; i < N; i++) ok &= (i < 11) == (obs[i] > 0);
    CHECK(ok);

    /* -inf logits are never drawn; all -inf still returns a valid id. */
    for (int i = 0; i < N; i++) L[i] = (i % 3 == 0) ? 0.5f * i : -INFINITY;
    wick_sampling cfgs[5];
    cfgs[0] = off(1);
    cfgs[1] = off(1), cfgs[1].top_k = 15;
    cfgs[2] = off(1), cfgs[2].top_p = 0.9f;
    cfgs[3] = off(1), cfgs[3].min_p = 0.01f;
    cfgs[4] = wick_sampling_default(), cfgs[4].repeat_penalty = 1.3f, cfgs[4].frequency_penalty = 0.5f;
    int32_t h[4] = {3, 4, 6, 6};
    for (int c = 0; c < 5; c++) {
        memset(obs, 0, sizeof obs);
        CHECK(draw_many(&s, &cfgs[c], L, N, h, 4, 2000, obs));
        ok = true;
        for (int i = 0; i < N; i++) ok &= i % 3 == 0 || obs[i] == 0;
        CHECK_MSG(ok, "-inf drawn with config %d", c);
    }
    for (int i = 0; i < N; i++) L[i] = -INFINITY;
    for (int c = 0; c < 5; c++) CHECK(draw_many(&s, &cfgs[c], L, N, h, 4, 10, NULL));
    L[13] = -3;
    for (int c = 0; c < 5; c++) {
        memset(obs, 0, sizeof obs);
        CHECK(draw_many(&s, &cfgs[c], L, N, h, 4, 100, obs));
        CHECK_INT(obs[13], 100);
    }
    /* +inf wins; NaN is never drawn. */
    for (int i = 0; i < N; i++) L[i] = (float)i * 0.1f;
    L[9] = INFINITY;
    for (int c = 0; c < 5; c++) {
        memset(obs, 0, sizeof obs);
        CHECK(draw_many(&s, &cfgs[c], L, N, h, 4, 100, obs));
        CHECK_INT(obs[9], 100);
    }
    L[9] = NAN;
    L[0] = NAN;
    for (int c = 0; c < 5; c++) {
        memset(obs, 0, sizeof obs);
        CHECK(draw_many(&s, &cfgs[c], L, N, h, 4, 2000, obs));
        CHECK(obs[9] == 0 && obs[0] == 0);
    }
    for (int i = 0; i < N; i++) L[i] = NAN;
    for (int c = 0; c < 5; c++) CHECK(draw_many(&s, &cfgs[c], L, N, h, 4, 10, NULL));
    wick_sampling gz = off(0);
    CHECK(draw_many(&s, &gz, L, N, NULL, 0, 10, NULL));

    /* top_k > vocab = off: the very same draws as top_k 0. */
    for (int i = 0; i < N; i++) L[i] = fixed_logits[i];
    wick_sampling a = off(1), b = off(1);
    b.top_k = 1000;
    sampler s2;
    CHECK(sampler_init(&s2, N, tt()->isa, NULL) == 0);
    sampler_rng_seed(&rng, 9);
    sampler_rng_seed(&rng2, 9);
    ok = true;
    for (int d = 0; d < 1000; d++) ok &= sample(&s, &a, L, NULL, 0, &rng) == sample(&s2, &b, L, NULL, 0, &rng2);
    CHECK(ok);
    sampler_free(&s2);

    /* top_p tiny and min_p 1 (or more): always the argmax. */
    int best = sampler_argmax(L, N);
    wick_sampling q[4];
    q[0] = off(1), q[0].top_p = 1e-6f;
    q[1] = off(1), q[1].min_p = 1.0f;
    q[2] = off(1), q[2].min_p = 5.0f, q[2].top_p = 0.5f;
    q[3] = off(3), q[3].top_k = 7, q[3].min_p = 1.0f;
    for (int c = 0; c < 4; c++) {
        memset(obs, 0, sizeof obs);
        CHECK(draw_many(&s, &q[c], L, N, NULL, 0, 500, obs));
        CHECK_MSG(obs[best] == 500, "config %d", c);
    }
    /* Nonsense knobs (negative) are off, never out of range. */
    wick_sampling neg = off(1);
    neg.top_k = -3, neg.top_p = -1, neg.min_p = -2, neg.repeat_penalty = -1, neg.repeat_last_n = -7;
    int32_t bad_hist[5] = {-5, N + 3, 2, 2, INT32_MAX};
    CHECK(draw_many(&s, &neg, L, N, bad_hist, 5, 1000, NULL));
    neg.repeat_penalty = 1e30f, neg.frequency_penalty = 1e38f, neg.presence_penalty = -1e38f;
    CHECK(draw_many(&s, &neg, L, N, bad_hist, 5, 1000, NULL));
    neg.temperature = 1e-30f;
    CHECK(draw_many(&s, &neg, L, N, bad_hist, 5, 100, NULL));
    neg.temperature = 1e-45f;
    CHECK(draw_many(&s, &neg, L, N, bad_hist, 5, 100, NULL));
    neg.temperature = 1e30f;
    CHECK(draw_many(&s, &neg, L, N, bad_hist, 5, 100, NULL));
    bool clean = true;
    for (int i = 0; i < N; i++) clean &= s.count[i] == 0;
    CHECK(clean);
    sampler_free(&s);

    /* A one-token vocabulary; a bad size is an error, not a crash. */
    sampler one;
    CHECK(sampler_init(&one, 1, tt()->isa, NULL) == 0);
    float l1 = 0.3f;
    wick_sampling d = wick_sampling_default();
    CHECK_INT(sample(&one, &d, &l1, NULL, 0, &rng), 0);
    sampler_free(&one);
    wick_error err;
    CHECK(sampler_init(&one, 0, tt()->isa, &err) < 0);
}

/* The mask processor against a per-token reference: masks of words all
 * clear, all set and mixed, vocabularies ending inside a word, a model with
 * more rows than the mask (those rows masked); kept logits bit-identical. */
static void test_mask_apply(void) {
    uint64_t seed = 7;
    int wrong = 0;
    for (int round = 0; round < 40; round++) {
        const int n_mask = 64 * (1 + round % 5) + (round * 37) % 64, n_vocab = n_mask + (round % 3 == 0 ? 5 : 0);
        token_mask m;
        CHECK(token_mask_init(&m, n_mask, NULL) == 0);
        for (int w = 0; w < (n_mask + 63) / 64; w++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            const int kind = (int)(seed >> 60) % 4;
            m.bits[w] = kind == 0 ? 0 : kind == 1 ? ~0ull : (seed ^ (seed << 17)) * 0x9e3779b97f4a7c15ull;
        }
        float got[400], want[400];
        for (int i = 0; i < n_vocab; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            got[i] = (float)(int32_t)(seed >> 40) / 1000.0f;
            want[i] = i < n_mask && token_mask_allows(&m, i) ? got[i] : -INFINITY;
        }
        const logits_proc p = logits_proc_mask(&m);
        p.apply(&p, got, n_vocab);
        wrong += memcmp(got, want, sizeof *got * (size_t)n_vocab) != 0;
        token_mask_free(&m);
    }
    CHECK_MSG(wrong == 0, "%d of 40 masks applied wrong", wrong);
}

/* The token-mask processor: a masked id is never drawn, greedy takes the
 * best allowed id, sampler_dist gives masked ids 0 — and every draw and
 * distribution is the unmasked sampler's on logits with -inf at the masked
 * ids. The logit bias runs first (a biased masked id stays masked); the mask
 * is read at each call (a grammar rewrites it per step). */
static void test_mask(void) {
    enum { N = 200 }; /* three whole mask words and a partial one */
    float L[N], Linf[N], d1[N], d2[N];
    lcg_state = 31;
    for (int i = 0; i < N; i++) L[i] = (float)(1.5 * lcg_normal());
    const int32_t best = sampler_argmax(L, N);
    sampler s;
    CHECK(sampler_init(&s, N, tt()->isa, NULL) == 0);
    token_mask m;
    CHECK(token_mask_init(&m, N, NULL) == 0);
    bool all = true;
    for (int i = 0; i < N; i++) all &= token_mask_allows(&m, i);
    CHECK(all && !token_mask_allows(&m, -1) && !token_mask_allows(&m, N));
    /* allowed: ids = 1 (mod 3) and 190..199, never the best */
    token_mask_fill(&m, false);
    for (int i = 0; i < N; i++) token_mask_set(&m, i, (i % 3 == 1 || i >= 190) && i != best);
    for (int i = 0; i < N; i++) Linf[i] = token_mask_allows(&m, i) ? L[i] : -INFINITY;
    const int32_t best_allowed = sampler_argmax(Linf, N);
    CHECK(best_allowed != best && token_mask_allows(&m, best_allowed));

    wick_sampling cfgs[6];
    cfgs[0] = off(0);
    cfgs[1] = off(1);
    cfgs[2] = off(1), cfgs[2].top_k = 15;
    cfgs[3] = off(1.3f), cfgs[3].top_p = 0.9f;
    cfgs[4] = off(1), cfgs[4].min_p = 0.05f;
    cfgs[5] = wick_sampling_default(), cfgs[5].repeat_penalty = 1.3f, cfgs[5].frequency_penalty = 0.5f;
    const int32_t h[6] = {best, 1, 4, 4, 199, 2};
    for (int c = 0; c < 6; c++) {
        sampler_cfg masked, plain;
        sampler_cfg_init(&masked, &cfgs[c]);
        CHECK(sampler_cfg_add(&masked, logits_proc_mask(&m)) == 0);
        sampler_cfg_init(&plain, &cfgs[c]);
        sampler_rng_seed(&rng, 100 + (uint64_t)c);
        sampler_rng_seed(&rng2, 100 + (uint64_t)c);
        bool never = true, same = true;
        for (int d = 0; d < 3000; d++) {
            const int32_t a = sampler_sample(&s, &masked, L, h, 6, &rng);
            const int32_t b = sampler_sample(&s, &plain, Linf, h, 6, &rng2);
            never &= token_mask_allows(&m, a);
            same &= a == b;
        }
        CHECK_MSG(never, "config %d: a masked token was drawn", c);
        CHECK_MSG(same, "config %d: the mask draws other tokens than -inf logits", c);
        sampler_dist(&s, &masked, L, h, 6, d1);
        sampler_dist(&s, &plain, Linf, h, 6, d2);
        bool zero = true;
        double sum = 0;
        for (int i = 0; i < N; i++) {
            zero &= token_mask_allows(&m, i) || d1[i] == 0;
            sum += d1[i];
        }
        CHECK_MSG(zero, "config %d: sampler_dist gives a masked token mass", c);
        CHECK_NEAR(sum, 1, 1e-5);
        CHECK_MSG(memcmp(d1, d2, sizeof d1) == 0, "config %d: sampler_dist differs from -inf logits", c);
    }

    /* greedy: the best allowed id, a point mass there */
    wick_sampling g = off(0);
    sampler_cfg gm;
    sampler_cfg_init(&gm, &g);
    CHECK_INT(gm.n_procs, 0);
    CHECK(sampler_cfg_add(&gm, logits_proc_mask(&m)) == 0);
    CHECK_INT(sampler_sample(&s, &gm, L, NULL, 0, &rng), best_allowed);
    sampler_dist(&s, &gm, L, NULL, 0, d1);
    CHECK(d1[best_allowed] == 1.0f && d1[best] == 0);

    /* the logit bias first: +100 on the masked best leaves it masked, on an
     * allowed id makes it the pick */
    int32_t other = 0;
    while (!token_mask_allows(&m, other) || other == best_allowed) other++;
    const wick_logit_bias bias[2] = {{best, 100.0f}, {other, 100.0f}};
    g.logit_bias = bias;
    g.n_logit_bias = 2;
    sampler_cfg_init(&gm, &g);
    CHECK_INT(gm.n_procs, 1);
    CHECK(sampler_cfg_add(&gm, logits_proc_mask(&m)) == 0);
    CHECK_INT(gm.n_procs, 2);
    CHECK_INT(sampler_sample(&s, &gm, L, NULL, 0, &rng), other);
    /* the mask changed between calls (as a grammar's step does): the same cfg follows it */
    token_mask_set(&m, other, false);
    CHECK_INT(sampler_sample(&s, &gm, L, NULL, 0, &rng), best_allowed);
    token_mask_set(&m, best, true);
    CHECK_INT(sampler_sample(&s, &gm, L, NULL, 0, &rng), best);
    /* nothing allowed: still an id in range, for every config */
    token_mask_fill(&m, false);
    for (int c = 0; c < 6; c++) {
        sampler_cfg masked;
        sampler_cfg_init(&masked, &cfgs[c]);
        CHECK(sampler_cfg_add(&masked, logits_proc_mask(&m)) == 0);
        const int32_t t = sampler_sample(&s, &masked, L, h, 6, &rng);
        CHECK(t >= 0 && t < N);
    }
    /* a mask shorter than the vocabulary: the ids past it are not allowed */
    token_mask shorter;
    CHECK(token_mask_init(&shorter, 100, NULL) == 0);
    sampler_cfg_init(&gm, &cfgs[1]);
    CHECK(sampler_cfg_add(&gm, logits_proc_mask(&shorter)) == 0);
    sampler_dist(&s, &gm, L, NULL, 0, d1);
    bool past = true;
    for (int i = 100; i < N; i++) past &= d1[i] == 0;
    CHECK(past);
    /* the list is bounded */
    for (int i = gm.n_procs; i < SAMPLER_MAX_PROCS; i++) CHECK(sampler_cfg_add(&gm, logits_proc_mask(&m)) == 0);
    CHECK(sampler_cfg_add(&gm, logits_proc_mask(&m)) < 0);
    token_mask_free(&shorter);
    token_mask_free(&m);
    sampler_free(&s);
}

static void test_defaults(void) {
    wick_sampling d = wick_sampling_default();
    CHECK_NEAR(d.temperature, 0.8, 1e-7);
    CHECK_INT(d.top_k, 40);
    CHECK_NEAR(d.top_p, 0.95, 1e-7);
    CHECK_NEAR(d.min_p, 0.05, 1e-7);
    CHECK_NEAR(d.repeat_penalty, 1.0, 0);
    CHECK_INT(d.repeat_last_n, 64);
    CHECK(d.presence_penalty == 0 && d.frequency_penalty == 0 && d.seed == 0);
}

/* ---- benchmark ---- */

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void bench(void) {
    enum { N = 151936, REPS = 2000 };
    float *L = malloc(N * sizeof *L);
    int32_t hist[256];
    lcg_state = 2024;
    for (int i = 0; i < N; i++) L[i] = (float)(2.5 * lcg_normal());
    for (int i = 0; i < 30; i++) L[(i * 7919) % N] = (float)(12 + 0.3 * i); /* a few likely tokens */
    for (int i = 0; i < 256; i++) hist[i] = (int32_t)((i * 104729) % N);
    sampler s;
    if (sampler_init(&s, N, tt()->isa, NULL) < 0) return;
    struct {
        const char *name;
        wick_sampling p;
    } cases[10];
    int nc = 0;
    cases[nc].name = "defaults (T .8, k 40, p .95, min-p .05)", cases[nc++].p = wick_sampling_default();
    cases[nc].name = "defaults + repeat 1.1 / freq / pres", cases[nc].p = wick_sampling_default();
    cases[nc].p.repeat_penalty = 1.1f, cases[nc].p.frequency_penalty = 0.1f, cases[nc++].p.presence_penalty = 0.1f;
    cases[nc].name = "greedy", cases[nc++].p = off(0);
    cases[nc].name = "greedy + repeat 1.1", cases[nc].p = off(0), cases[nc++].p.repeat_penalty = 1.1f;
    cases[nc].name = "top-k 40 only", cases[nc].p = off(1), cases[nc++].p.top_k = 40;
    cases[nc].name = "top-p .95 + min-p .05 (no top-k)", cases[nc].p = wick_sampling_default(), cases[nc++].p.top_k = 0;
    cases[nc].name = "top-p .95 only", cases[nc].p = off(0.8f), cases[nc++].p.top_p = 0.95f;
    cases[nc].name = "min-p .05 only", cases[nc].p = off(0.8f), cases[nc++].p.min_p = 0.05f;
    cases[nc].name = "temperature only (full softmax)", cases[nc++].p = off(0.8f);
    for (int c = 0; c < nc; c++) {
        sampler_rng_seed(&rng, 1);
        long sink = 0;
        for (int r = 0; r < 50; r++) sink += sample(&s, &cases[c].p, L, hist, 256, &rng);
        double t0 = now_us();
        for (int r = 0; r < REPS; r++) sink += sample(&s, &cases[c].p, L, hist, 256, &rng);
        double us = (now_us() - t0) / REPS;
        printf("vocab %d  %-40s %8.1f us/sample  (%ld)\n", N, cases[c].name, us, sink % 10);
    }
    sampler_free(&s);
    free(L);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
        bench();
        return 0;
    }
    make_fixtures();
    RUN(test_chi2_itself);
    RUN(test_defaults);
    RUN(test_knobs);
    RUN(test_large_vocab);
    RUN(test_isa_same);
    RUN(test_seeds);
    RUN(test_greedy);
    RUN(test_degenerate);
    RUN(test_mask_apply);
    RUN(test_mask);
    return check_summary("test_sampler");
}
