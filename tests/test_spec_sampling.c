/* test_spec_sampling.c — speculative sampling's promise at the sampler level:
 * the tokens it emits are distributed exactly as the target's sampler
 * draws them, for every knob setting.
 *
 *   - sampler_dist (the post-knob distribution p) equals an independent
 *     reference (sort, top-k, softmax, top-p, min-p written out plainly here)
 *     for penalties, temperature, top-k, top-p, min-p and their mixes;
 *   - 100,000 speculative steps per configuration on synthetic target and
 *     draft logits (a 12-token vocabulary): the draft drawn from q under the
 *     same knobs, then spec_accept; the first emitted token's histogram
 *     against p: chi-square p-value > 0.001. Configurations: plain T=1,
 *     T=0.7 + top-k, top-p, min-p, penalties over a history + top-k + top-p,
 *     a draft far from the target, q = p; and the same with a certain draft
 *     (prompt lookup: a point mass, including a draft outside p's support);
 *   - two drafts (k = 2): the joint histogram of the two emitted tokens
 *     against p1 × p2 (rows independent of the history), 144 cells;
 *   - greedy: spec_accept keeps drafts exactly while they equal the argmax. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "chi2.h"
#include "engine/sampler.h"
#include "engine/spec_accept.h"

#define V 12
#define DRAWS 100000

/* The knobs p as a sampler configuration (their logit biases the only processor). */
static sampler_cfg cfg_of(const wick_sampling *p) {
    sampler_cfg c;
    sampler_cfg_init(&c, p);
    return c;
}

/* ---- the reference distribution, written out plainly ---- */
static void ref_dist(const wick_sampling *p, const float *logits, const int32_t *hist, int n_hist, double *out) {
    double L[V];
    for (int i = 0; i < V; i++) L[i] = logits[i];
    int w = p->repeat_last_n < 0 || p->repeat_last_n > n_hist ? n_hist : p->repeat_last_n;
    int cnt[V] = {0};
    for (int i = n_hist - w; i < n_hist; i++) cnt[hist[i]]++;
    const double rp = p->repeat_penalty > 0 ? p->repeat_penalty : 1;
    for (int t = 0; t < V; t++) {
        if (!cnt[t] || !(rp != 1 || p->presence_penalty != 0 || p->frequency_penalty != 0)) continue;
        float x = (float)L[t];
        if (rp != 1) x = x > 0 ? x / (float)rp : x * (float)rp;
        x -= p->presence_penalty + (float)cnt[t] * p->frequency_penalty;
        L[t] = x;
    }
    int order[V];
    for (int i = 0; i < V; i++) order[i] = i;
    for (int i = 1; i < V; i++) /* by logit, highest first, lower id on ties */
        for (int j = i; j > 0 && (L[order[j]] > L[order[j - 1]]); j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int m = p->top_k > 0 && p->top_k < V ? p->top_k : V;
    double pr[V], Z = 0;
    for (int i = 0; i < m; i++) Z += pr[i] = exp((L[order[i]] - L[order[0]]) / p->temperature);
    for (int i = 0; i < m; i++) pr[i] /= Z;
    if (p->top_p > 0 && p->top_p < 1) {
        double cum = 0;
        for (int i = 0; i < m; i++) {
            cum += pr[i];
            if (cum >= p->top_p) {
                m = i + 1;
                break;
            }
        }
    }
    if (p->min_p > 0)
        while (m > 1 && pr[m - 1] < p->min_p * pr[0]) m--;
    double S = 0;
    for (int i = 0; i < m; i++) S += pr[i];
    for (int i = 0; i < V; i++) out[i] = 0;
    for (int i = 0; i < m; i++) out[order[i]] = pr[i] / S;
}

typedef struct config {
    const char *name;
    wick_sampling s;
    float q_shift; /* how far the draft's logits are from the target's (0: the same) */
} config;

static const int32_t HIST[] = {3, 5, 5, 1, 3, 5, 9, 0};
#define N_HIST ((int)(sizeof HIST / sizeof HIST[0]))

static const config CONFIGS[] = {
    {"T=1", {.temperature = 1.0f}, 1.0f},
    {"T=0.7 top-k 5", {.temperature = 0.7f, .top_k = 5}, 1.0f},
    {"T=1.3 top-p 0.8", {.temperature = 1.3f, .top_p = 0.8f}, 1.0f},
    {"T=0.9 min-p 0.1", {.temperature = 0.9f, .min_p = 0.1f}, 1.0f},
    {"penalties + top-k 8 + top-p 0.9",
     {.temperature = 1.0f, .top_k = 8, .top_p = 0.9f, .repeat_penalty = 1.3f, .repeat_last_n = 6,
      .presence_penalty = 0.4f, .frequency_penalty = 0.3f},
     1.0f},
    {"far draft, T=1", {.temperature = 1.0f}, 4.0f},
    {"q = p, top-p 0.95 min-p 0.05", {.temperature = 0.8f, .top_p = 0.95f, .min_p = 0.05f}, 0.0f},
};

static void make_logits(float *p, float *q, float shift) {
    for (int i = 0; i < V; i++) {
        p[i] = 2.0f * sinf(1.7f * (float)i + 0.3f);
        q[i] = p[i] + shift * cosf(2.9f * (float)i + 1.1f);
    }
}

static void test_dist_matches_reference(void) {
    sampler s;
    wick_error err;
    CHECK(sampler_init(&s, V, cpu_best_isa(), &err) == 0);
    float lp[V], lq[V], d[V];
    double ref[V];
    make_logits(lp, lq, 1);
    for (size_t c = 0; c < sizeof CONFIGS / sizeof CONFIGS[0]; c++) {
        const sampler_cfg cc = cfg_of(&CONFIGS[c].s);
        sampler_dist(&s, &cc, lp, HIST, N_HIST, d);
        ref_dist(&CONFIGS[c].s, lp, HIST, N_HIST, ref);
        double worst = 0;
        for (int i = 0; i < V; i++) worst = fmax(worst, fabs(d[i] - ref[i]));
        CHECK_MSG(worst < 1e-5, "%s: sampler_dist differs from the reference by %g", CONFIGS[c].name, worst);
    }
    /* greedy: a point mass on the (penalized) argmax */
    wick_sampling g = {.temperature = 0, .repeat_penalty = 2.0f, .repeat_last_n = -1};
    const sampler_cfg gc = cfg_of(&g);
    sampler_rng rng;
    sampler_rng_seed(&rng, 0);
    sampler_dist(&s, &gc, lp, HIST, N_HIST, d);
    int32_t am = sampler_sample(&s, &gc, lp, HIST, N_HIST, &rng);
    CHECK(d[am] == 1.0f);
    sampler_free(&s);
}

/* One speculative step with a single draft; the first emitted token. */
static int32_t spec_one(sampler *s, const wick_sampling *p, sampler_rng *rng, const float *rows, float *q,
                        int32_t *hist, const float *lq, bool point, int32_t point_x, float *pbuf) {
    const sampler_cfg cfg = cfg_of(p);
    int32_t x;
    if (point) {
        x = point_x;
    } else {
        sampler_dist(s, &cfg, lq, hist, N_HIST, q);
        x = sampler_draw_dist(q, V, rng);
    }
    hist[N_HIST] = x;
    const spec_verify v = {.cfg = &cfg, .rows = rows, .hist = hist, .n_hist = N_HIST, .k = 1,
                           .q = point ? NULL : q, .pbuf = pbuf};
    int32_t next;
    const int j = spec_accept(s, &v, rng, &next);
    return j == 1 ? x : next;
}

static void test_distribution(void) {
    sampler s;
    wick_error err;
    CHECK(sampler_init(&s, V, cpu_best_isa(), &err) == 0);
    sampler_rng rng;
    sampler_rng_seed(&rng, 1234);
    float rows[2 * V], lq[V], q[V], pbuf[V];
    int32_t hist[N_HIST + 2];
    memcpy(hist, HIST, sizeof HIST);
    for (size_t c = 0; c < sizeof CONFIGS / sizeof CONFIGS[0]; c++) {
        const config *cf = &CONFIGS[c];
        make_logits(rows, lq, cf->q_shift);
        memcpy(rows + V, rows, sizeof(float) * V);
        double ref[V];
        ref_dist(&cf->s, rows, HIST, N_HIST, ref);
        /* a certain draft (lookup) inside and outside the support */
        int32_t outside = -1;
        for (int i = 0; i < V; i++)
            if (ref[i] == 0) outside = i;
        for (int mode = 0; mode < 3; mode++) {
            if (mode == 2 && outside < 0) continue;
            const bool point = mode > 0;
            const int32_t px = mode == 1 ? 1 : outside;
            long count[V] = {0}, accepted = 0;
            for (int it = 0; it < DRAWS; it++) {
                const int32_t t = spec_one(&s, &cf->s, &rng, rows, q, hist, lq, point, px, pbuf);
                count[t]++;
                accepted += t == hist[N_HIST];
            }
            const double pv = chi2_pvalue(count, ref, V, DRAWS);
            CHECK_MSG(pv > 0.001, "%s (%s): chi-square p = %g", cf->name,
                      mode == 0 ? "draft model" : mode == 1 ? "certain draft" : "certain draft outside p", pv);
            if (mode == 0 && cf->q_shift == 0) /* q = p: every draft accepted */
                CHECK_MSG(accepted == DRAWS, "%s: %ld of %d accepted with q = p", cf->name, accepted, DRAWS);
        }
    }
    sampler_free(&s);
}

/* k = 2: the two emitted tokens, jointly (a rejection at the first ends the
 * pass after one token; the second then comes from the next pass, here a
 * plain draw from row 2, which does not depend on the history). */
static void test_two_drafts(void) {
    sampler s;
    wick_error err;
    CHECK(sampler_init(&s, V, cpu_best_isa(), &err) == 0);
    sampler_rng rng;
    sampler_rng_seed(&rng, 99);
    const wick_sampling p = {.temperature = 0.9f, .top_k = 10};
    const sampler_cfg pc = cfg_of(&p);
    float rows[3 * V], lq1[V], lq2[V], q[2 * V], pbuf[V], tmp[V];
    make_logits(rows, lq1, 1.5f);
    for (int i = 0; i < V; i++) {
        rows[V + i] = 1.5f * cosf(0.8f * (float)i);
        lq2[i] = rows[V + i] + 0.8f * sinf(3.1f * (float)i);
        rows[2 * V + i] = 0;
    }
    (void)tmp;
    double p1[V], p2[V], joint[V * V];
    ref_dist(&p, rows, NULL, 0, p1);
    ref_dist(&p, rows + V, NULL, 0, p2);
    for (int a = 0; a < V; a++)
        for (int b = 0; b < V; b++) joint[a * V + b] = p1[a] * p2[b];
    long count[V * V] = {0};
    int32_t hist[4];
    for (int it = 0; it < DRAWS; it++) {
        sampler_dist(&s, &pc, lq1, hist, 0, q);
        hist[0] = sampler_draw_dist(q, V, &rng);
        sampler_dist(&s, &pc, lq2, hist, 0, q + V);
        hist[1] = sampler_draw_dist(q + V, V, &rng);
        const spec_verify v = {.cfg = &pc, .rows = rows, .hist = hist, .n_hist = 0, .k = 2, .q = q, .pbuf = pbuf};
        int32_t next;
        const int j = spec_accept(&s, &v, &rng, &next);
        int32_t a, b;
        if (j == 0) {
            a = next;
            b = sampler_sample(&s, &pc, rows + V, NULL, 0, &rng);
        } else {
            a = hist[0];
            b = j == 2 ? hist[1] : next;
        }
        count[a * V + b]++;
    }
    const double pv = chi2_pvalue(count, joint, V * V, DRAWS);
    CHECK_MSG(pv > 0.001, "two drafts: joint chi-square p = %g", pv);
    sampler_free(&s);
}

static void test_greedy(void) {
    sampler s;
    wick_error err;
    CHECK(sampler_init(&s, V, cpu_best_isa(), &err) == 0);
    const wick_sampling g = {0};
    const sampler_cfg gc = cfg_of(&g);
    sampler_rng rng;
    sampler_rng_seed(&rng, 0);
    float rows[4 * V], pbuf[V];
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < V; i++) rows[r * V + i] = (i == 2 + r) ? 5.0f : (float)i * 0.01f;
    /* argmaxes: 2, 3, 4, 5 */
    int32_t hist[5] = {7, 2, 3, 9};
    spec_verify v = {.cfg = &gc, .rows = rows, .hist = hist, .n_hist = 1, .k = 3, .pbuf = pbuf};
    int32_t next;
    CHECK_INT(spec_accept(&s, &v, &rng, &next), 2);
    CHECK_INT(next, 4);
    hist[3] = 4;
    CHECK_INT(spec_accept(&s, &v, &rng, &next), 3);
    CHECK_INT(next, 5);
    hist[1] = 0;
    CHECK_INT(spec_accept(&s, &v, &rng, &next), 0);
    CHECK_INT(next, 2);
    sampler_free(&s);
}

int main(void) {
    RUN(test_dist_matches_reference);
    RUN(test_greedy);
    RUN(test_distribution);
    RUN(test_two_drafts);
    return check_summary("test_spec_sampling");
}
