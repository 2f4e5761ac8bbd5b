/* sampler.c — penalties, temperature, top-k / top-p / min-p and the seeded
 * draw (order and semantics in sampler.h); wick_sampling_default. */
#include "engine/sampler.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

wick_sampling wick_sampling_default(void) {
    wick_sampling p = {0};
    p.temperature = 0.8f;
    p.top_k = 40;
    p.top_p = 0.95f;
    p.min_p = 0.05f;
    p.repeat_penalty = 1.0f;
    p.repeat_last_n = 64;
    return p;
}

int sampler_init(sampler *s, int n_vocab, wick_error *err) {
    memset(s, 0, sizeof *s);
    if (n_vocab <= 0) return wick_fail(err, "sampler: vocabulary size %d must be positive", n_vocab);
    s->n_vocab = n_vocab;
    s->logit = malloc((size_t)n_vocab * sizeof *s->logit);
    s->val = malloc((size_t)n_vocab * sizeof *s->val);
    s->id = malloc((size_t)n_vocab * sizeof *s->id);
    s->count = calloc((size_t)n_vocab, sizeof *s->count);
    if (!s->logit || !s->val || !s->id || !s->count) {
        sampler_free(s);
        return wick_fail(err, "out of memory");
    }
    sampler_seed(s, 0);
    return 0;
}

void sampler_free(sampler *s) {
    free(s->logit);
    free(s->val);
    free(s->id);
    free(s->count);
    s->logit = s->val = NULL;
    s->id = s->count = NULL;
}

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void sampler_seed(sampler *s, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) s->rng[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

double sampler_uniform(sampler *s) {
    uint64_t *r = s->rng;
    uint64_t out = rotl(r[1] * 5, 7) * 9, t = r[1] << 17;
    r[2] ^= r[0];
    r[3] ^= r[1];
    r[1] ^= r[2];
    r[0] ^= r[3];
    r[2] ^= t;
    r[3] = rotl(r[3], 45);
    return (double)(out >> 11) * 0x1.0p-53;
}

int32_t sampler_argmax(const float *logits, int n) {
    int32_t best = -1;
    float bv = 0;
    for (int i = 0; i < n; i++) {
        float v = logits[i];
        if (v == v && (best < 0 || v > bv)) {
            bv = v;
            best = i;
        }
    }
    return best < 0 ? 0 : best;
}

/* ---- candidate heaps: ordered by value, then lower id first ---- */

static inline bool worse(float av, int32_t ai, float bv, int32_t bi) {
    return av < bv || (av == bv && ai > bi);
}

/* Min-heap (root = worst) sift-down of element i among n. */
static void sift_down(float *v, int32_t *id, int i, int n) {
    float xv = v[i];
    int32_t xi = id[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && worse(v[c + 1], id[c + 1], v[c], id[c])) c++;
        if (!worse(v[c], id[c], xv, xi)) break;
        v[i] = v[c];
        id[i] = id[c];
        i = c;
    }
    v[i] = xv;
    id[i] = xi;
}

static void heapify(float *v, int32_t *id, int n) {
    for (int i = n / 2 - 1; i >= 0; i--) sift_down(v, id, i, n);
}

/* Sort n candidates best first (value descending, ties by lower id). */
static void sort_desc(float *v, int32_t *id, int n) {
    heapify(v, id, n);
    for (int end = n - 1; end > 0; end--) {
        float tv = v[0];
        int32_t ti = id[0];
        v[0] = v[end];
        id[0] = id[end];
        v[end] = tv;
        id[end] = ti;
        sift_down(v, id, 0, end);
    }
}

/* The k best of L[0..n) into s->val / s->id, sorted best first. NaN = -inf. */
static void top_k_select(sampler *s, const float *L, int n, int k) {
    float *v = s->val;
    int32_t *id = s->id;
    for (int i = 0; i < k; i++) {
        float x = L[i];
        v[i] = x == x ? x : -INFINITY;
        id[i] = i;
    }
    heapify(v, id, k);
    /* Ids arrive in increasing order, so a newcomer beats the root only if
     * strictly greater; blocks of 16 with nothing above the root are skipped. */
    int i = k;
    for (; i + 16 <= n; i += 16) {
        float t = v[0];
        int any = 0;
        for (int j = 0; j < 16; j++) any |= L[i + j] > t;
        if (!any) continue;
        for (int j = 0; j < 16; j++)
            if (L[i + j] > v[0]) {
                v[0] = L[i + j];
                id[0] = i + j;
                sift_down(v, id, 0, k);
            }
    }
    for (; i < n; i++)
        if (L[i] > v[0]) {
            v[0] = L[i];
            id[0] = i;
            sift_down(v, id, 0, k);
        }
    sort_desc(v, id, k);
}

/* ---- penalties ---- */

static bool penalties_on(const wick_sampling *p) {
    return (p->repeat_penalty > 0 && p->repeat_penalty != 1) || p->presence_penalty != 0 ||
           p->frequency_penalty != 0;
}

/* Copy logits into s->logit (NaN → -inf) and apply the penalties of the
 * history window; leaves s->count all zero. */
static void apply_penalties(sampler *s, const wick_sampling *p, const float *logits,
                            const int32_t *hist, int n_hist) {
    int n = s->n_vocab;
    float *L = s->logit;
    for (int i = 0; i < n; i++) {
        float x = logits[i];
        L[i] = x == x ? x : -INFINITY;
    }
    int32_t *cnt = s->count;
    for (int i = 0; i < n_hist; i++)
        if (hist[i] >= 0 && hist[i] < n) cnt[hist[i]]++;
    float rp = p->repeat_penalty > 0 ? p->repeat_penalty : 1.0f;
    for (int i = 0; i < n_hist; i++) {
        int32_t t = hist[i];
        if (t < 0 || t >= n || cnt[t] == 0) continue;
        float x = L[t];
        if (rp != 1.0f) x = x > 0 ? x / rp : x * rp;
        x -= p->presence_penalty + (float)cnt[t] * p->frequency_penalty;
        L[t] = x == x ? x : -INFINITY; /* inf - inf: keep NaN out */
        cnt[t] = 0;
    }
}

/* ---- the draw ---- */

/* val/id[0..m): weights sorted best first (val[0] = the largest, = 1), of a
 * distribution whose total weight is Z. Apply top-p and min-p, renormalize,
 * draw. */
static int32_t draw_sorted(sampler *s, const wick_sampling *p, int m, double Z) {
    const float *v = s->val;
    if (p->top_p > 0 && p->top_p < 1) {
        double target = (double)p->top_p * Z, cum = 0;
        for (int i = 0; i < m; i++) {
            cum += v[i];
            if (cum >= target) {
                m = i + 1;
                break;
            }
        }
    }
    if (p->min_p > 0) {
        float cut = (p->min_p < 1 ? p->min_p : 1.0f) * v[0];
        while (m > 1 && v[m - 1] < cut) m--;
    }
    double S = 0;
    for (int i = 0; i < m; i++) S += v[i];
    double r = sampler_uniform(s) * S, acc = 0;
    for (int i = 0; i < m; i++) {
        acc += v[i];
        if (r < acc) return s->id[i];
    }
    while (m > 1 && v[m - 1] <= 0) m--; /* rounding at the very end of the range */
    return s->id[m - 1];
}

/* Draw from weights w[0..n) (indexed by token id), total S. */
static int32_t draw_ids(sampler *s, const float *w, const int32_t *ids, int n, double S) {
    double r = sampler_uniform(s) * S, acc = 0;
    int last = 0;
    for (int i = 0; i < n; i++) {
        if (w[i] > 0) last = i;
        acc += w[i];
        if (r < acc) return ids ? ids[i] : i;
    }
    return ids ? ids[last] : last;
}

#define N_BUCKETS 128 /* log-weight histogram: buckets 0.25 wide over [0, 31.75), then the rest */

int32_t sampler_sample(sampler *s, const wick_sampling *p, const float *logits,
                       const int32_t *history, int n_history) {
    int n = s->n_vocab;
    const float *L = logits;
    if (history && n_history > 0 && p->repeat_last_n != 0 && penalties_on(p)) {
        int w = p->repeat_last_n < 0 || p->repeat_last_n > n_history ? n_history : p->repeat_last_n;
        apply_penalties(s, p, logits, history + (n_history - w), w);
        L = s->logit;
    }
    if (!(p->temperature > 0)) return sampler_argmax(L, n);
    float inv_t = 1.0f / p->temperature;

    /* top-k: a heap scan, then the candidates are small and sorted. */
    if (p->top_k > 0 && p->top_k < n) {
        int k = p->top_k;
        top_k_select(s, L, n, k);
        float mx = s->val[0];
        if (!isfinite(mx)) return s->id[0];
        double Z = 0;
        for (int i = 0; i < k; i++) {
            float x = (s->val[i] - mx) * inv_t;
            s->val[i] = x >= -104.0f ? expf(x) : 0.0f;
            Z += s->val[i];
        }
        return draw_sorted(s, p, k, Z);
    }

    /* No top-k: the whole vocabulary. */
    float mx = -INFINITY;
    for (int i = 0; i < n; i++)
        if (L[i] > mx) mx = L[i];
    if (!isfinite(mx)) return sampler_argmax(L, n);
    float *W = s->logit; /* weights by id (in place when L is s->logit) */
    bool top_p = p->top_p > 0 && p->top_p < 1;
    float min_p = p->min_p > 0 ? (p->min_p < 1 ? p->min_p : 1.0f) : 0.0f;

    if (top_p) {
        /* Every weight and Z, plus a histogram of -log(weight); the buckets
         * whose mass first reaches top_p·Z bound the nucleus, so only tokens
         * above that weight are collected and sorted. */
        double hist[N_BUCKETS] = {0}, Z = 0;
        for (int i = 0; i < n; i++) {
            float x = (L[i] - mx) * inv_t;
            float e = x >= -104.0f ? expf(x) : 0.0f;
            W[i] = e;
            Z += e;
            float nx = -x;
            hist[nx < 31.75f ? (int)(nx * 4.0f) : N_BUCKETS - 1] += e;
        }
        double target = (double)p->top_p * Z, cum = 0;
        int b = 0;
        for (; b < N_BUCKETS; b++) {
            cum += hist[b];
            if (cum >= target) break;
        }
        b += 1; /* one bucket of margin against rounding */
        float thr = b >= N_BUCKETS - 1 ? 0.0f : expf(-0.25f * (float)(b + 1)) * 0.999f;
        if (thr < min_p) thr = min_p;
        int m = 0;
        for (int i = 0; i < n; i++)
            if (W[i] >= thr && W[i] > 0) {
                s->val[m] = W[i];
                s->id[m++] = i;
            }
        sort_desc(s->val, s->id, m);
        return draw_sorted(s, p, m, Z);
    }

    if (min_p > 0) {
        /* Only tokens within log(min_p) of the best can survive: collect those. */
        float cut = logf(min_p) - 1e-4f;
        int m = 0;
        double S = 0;
        for (int i = 0; i < n; i++) {
            float x = (L[i] - mx) * inv_t;
            if (x >= cut) {
                float e = expf(x);
                if (e >= min_p) {
                    s->val[m] = e;
                    s->id[m++] = i;
                    S += e;
                }
            }
        }
        return draw_ids(s, s->val, s->id, m, S);
    }

    double S = 0;
    for (int i = 0; i < n; i++) {
        float x = (L[i] - mx) * inv_t;
        W[i] = x >= -104.0f ? expf(x) : 0.0f;
        S += W[i];
    }
    return draw_ids(s, W, NULL, n, S);
}
