/* spec_accept.h — the acceptance rule of speculative decoding: given the
 * target's logits at the k drafted positions (and one past them) decide how
 * many drafts to keep and which token follows them.
 *
 * Greedy (temperature <= 0): draft i is kept while it equals the token the
 * sampler picks from row i (the argmax of the processed, penalized logits),
 * so the output is exactly plain greedy decoding's.
 * Sampling: with p = sampler_dist of row i (every processor and knob: logit
 * biases, a token mask, penalties over the history including the drafts
 * before it, temperature, top-k, top-p, min-p)
 * and q the drafter's distribution under the same knobs, draft x is kept
 * with probability min(1, p(x) / q(x)); on the first rejection the next
 * token is drawn from max(0, p - q) normalized, and the rest are dropped.
 * When every draft is kept the next token is drawn from row k as usual.
 * The output is then distributed exactly as the target's (Leviathan et al.
 * 2023, Chen et al. 2023). A certain draft (prompt lookup: q a point mass on
 * x) is kept with probability p(x), else the next token is drawn from p
 * with x removed. Randomness comes from the request's PRNG. */
#ifndef WICK_ENGINE_SPEC_ACCEPT_H
#define WICK_ENGINE_SPEC_ACCEPT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/sampler.h"
#include "wick.h"

/* Whether p samples greedily (the sampler's rule: temperature <= 0, NaN, or
 * so small that 1 / temperature overflows). */
static inline bool spec_greedy(const wick_sampling *p) {
    return !(p->temperature > 0) || !isfinite(1.0f / p->temperature);
}

typedef struct spec_verify {
    const sampler_cfg *cfg;  /* the request's knobs and logits processors */
    const float *rows;    /* k + 1 rows of n_vocab target logits; row i follows hist[0, n_hist + i) */
    const int32_t *hist;  /* the tokens so far, then the k drafts (hist[n_hist + i] = draft i) */
    int n_hist, k;
    const float *q;       /* [k][n_vocab] the drafter's distributions; NULL = point masses on the drafts */
    float *pbuf;          /* [n_vocab] scratch (sampling only) */
    /* Called before row i is sampled from (i = 0, 1, ... in order, up to the
     * row of the token that follows): brings cfg's processors to the
     * position after drafts 0 .. i-1 (a grammar takes draft i-1 and
     * computes its mask). NULL = nothing to do. */
    void (*at_row)(void *u, int i);
    void *u;
} spec_verify;

/* How many drafts are accepted (0..k); *next gets the token that follows
 * them. Draws advance rng. */
int spec_accept(sampler *s, const spec_verify *v, sampler_rng *rng, int32_t *next);

#endif
