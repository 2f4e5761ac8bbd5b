/* spec_accept.c — the acceptance rule of speculative decoding (see spec_accept.h). */
#include "engine/spec_accept.h"

#include <stddef.h>

int spec_accept(sampler *s, const spec_verify *v, sampler_rng *rng, int32_t *next) {
    const int n = s->n_vocab;
    const sampler_cfg *p = v->cfg;
    if (spec_greedy(p->p)) {
        for (int i = 0; i <= v->k; i++) {
            if (v->at_row) v->at_row(v->u, i);
            const int32_t t = sampler_sample(s, p, v->rows + (size_t)i * n, v->hist, v->n_hist + i, rng);
            if (i == v->k || t != v->hist[v->n_hist + i]) {
                *next = t;
                return i;
            }
        }
    }
    float *pd = v->pbuf;
    for (int i = 0; i < v->k; i++) {
        const int32_t x = v->hist[v->n_hist + i];
        const float *q = v->q ? v->q + (size_t)i * n : NULL;
        if (v->at_row) v->at_row(v->u, i);
        sampler_dist(s, p, v->rows + (size_t)i * n, v->hist, v->n_hist + i, pd);
        const double px = pd[x], qx = q ? q[x] : 1.0;
        const double u = sampler_uniform(rng);
        if (u * qx < px) continue; /* accepted with probability min(1, p(x) / q(x)) */
        /* rejected: the next token from max(0, p - q), normalized */
        double rest = 0;
        if (q) {
            for (int t = 0; t < n; t++) {
                const float r = pd[t] - q[t];
                pd[t] = r > 0 ? r : 0;
                rest += pd[t];
            }
        } else {
            pd[x] = 0;
            for (int t = 0; t < n; t++) rest += pd[t];
        }
        if (!(rest > 0)) /* p <= q everywhere after rounding: p itself */
            sampler_dist(s, p, v->rows + (size_t)i * n, v->hist, v->n_hist + i, pd);
        *next = sampler_draw_dist(pd, n, rng);
        return i;
    }
    if (v->at_row) v->at_row(v->u, v->k);
    *next = sampler_sample(s, p, v->rows + (size_t)v->k * n, v->hist, v->n_hist + v->k, rng);
    return v->k;
}
