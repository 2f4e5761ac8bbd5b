/* sampler.c — temperature / top-k / top-p sampling (see sampler.h). */
#include "engine/sampler.h"

#include <math.h>
#include <stdlib.h>

#include "core/error.h"

int sampler_init(sampler *s, int n_vocab, wick_error *err) {
    s->n_vocab = n_vocab;
    s->val = malloc((size_t)n_vocab * sizeof *s->val);
    s->id = malloc((size_t)n_vocab * sizeof *s->id);
    if (!s->val || !s->id) {
        sampler_free(s);
        return wick_fail(err, "out of memory");
    }
    sampler_seed(s, 0);
    return 0;
}

void sampler_free(sampler *s) {
    free(s->val);
    free(s->id);
    s->val = NULL;
    s->id = NULL;
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
    int32_t best = 0;
    for (int i = 1; i < n; i++)
        if (logits[i] > logits[best]) best = i;
    return best;
}

/* Sort candidates by value, descending; ties by lower id first. */
static void sort_desc(float *val, int32_t *id, int n) {
    for (int gap = n / 2; gap > 0; gap /= 2) /* shellsort: no allocation, fine for k ≪ vocab */
        for (int i = gap; i < n; i++) {
            float v = val[i];
            int32_t d = id[i];
            int j = i;
            while (j >= gap && (val[j - gap] < v || (val[j - gap] == v && id[j - gap] > d))) {
                val[j] = val[j - gap];
                id[j] = id[j - gap];
                j -= gap;
            }
            val[j] = v;
            id[j] = d;
        }
}

/* Move the k largest candidates to the front (quickselect), in any order. */
static void select_top(float *val, int32_t *id, int n, int k) {
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        float pivot = val[(lo + hi) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (val[i] > pivot) i++;
            while (val[j] < pivot) j--;
            if (i <= j) {
                float tv = val[i];
                val[i] = val[j];
                val[j] = tv;
                int32_t ti = id[i];
                id[i] = id[j];
                id[j] = ti;
                i++;
                j--;
            }
        }
        if (k - 1 <= j)
            hi = j;
        else if (k - 1 >= i)
            lo = i;
        else
            break;
    }
}

int32_t sampler_sample(sampler *s, const wick_sampling *p, const float *logits) {
    int n = s->n_vocab;
    if (!(p->temperature > 0)) return sampler_argmax(logits, n);
    float inv_t = 1.0f / p->temperature;
    for (int i = 0; i < n; i++) {
        s->val[i] = logits[i] * inv_t;
        s->id[i] = i;
    }
    int k = n;
    if (p->top_k > 0 && p->top_k < n) {
        select_top(s->val, s->id, n, p->top_k);
        k = p->top_k;
    }
    sort_desc(s->val, s->id, k);
    float mx = s->val[0];
    double sum = 0;
    for (int i = 0; i < k; i++) {
        s->val[i] = expf(s->val[i] - mx);
        sum += s->val[i];
    }
    if (p->top_p > 0 && p->top_p < 1) {
        double cum = 0;
        for (int i = 0; i < k; i++) {
            cum += s->val[i] / sum;
            if (cum >= p->top_p) {
                k = i + 1;
                break;
            }
        }
        sum = 0;
        for (int i = 0; i < k; i++) sum += s->val[i];
    }
    double r = sampler_uniform(s) * sum, acc = 0;
    for (int i = 0; i < k; i++) {
        acc += s->val[i];
        if (r < acc) return s->id[i];
    }
    return s->id[k - 1];
}
