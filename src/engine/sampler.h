/* sampler.h — choosing the next token from logits.
 *
 * Order: temperature 0 → argmax (lowest id on ties). Otherwise: scale by
 * 1/temperature → top-k → softmax → top-p (smallest set whose mass ≥ p) →
 * draw from a seeded xoshiro256** PRNG. Candidate buffers are allocated once
 * at init; sampling allocates nothing. Same seed + same logits = same token. */
#ifndef WICK_ENGINE_SAMPLER_H
#define WICK_ENGINE_SAMPLER_H

#include <stdint.h>

#include "wick.h"

typedef struct sampler {
    int n_vocab;
    float *val;      /* candidate logits / probabilities */
    int32_t *id;     /* candidate ids */
    uint64_t rng[4];
} sampler;

int sampler_init(sampler *s, int n_vocab, wick_error *err);
void sampler_free(sampler *s);
void sampler_seed(sampler *s, uint64_t seed);
/* A uniform double in [0, 1). */
double sampler_uniform(sampler *s);
int32_t sampler_argmax(const float *logits, int n);
int32_t sampler_sample(sampler *s, const wick_sampling *p, const float *logits);

#endif
