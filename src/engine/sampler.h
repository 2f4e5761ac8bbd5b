/* sampler.h — choosing the next token from logits.
 *
 * Order (each step sees the previous step's output; a knob that is off is skipped):
 *   1. penalties, over the last repeat_last_n tokens of the history (-1 = all,
 *      0 = none). For each distinct token t in that window, seen c times:
 *        repetition (llama.cpp / CTRL): logit > 0 ? logit / repeat_penalty
 *                                                 : logit * repeat_penalty
 *        then logit -= presence_penalty + c * frequency_penalty (OpenAI).
 *   2. temperature: logit / temperature. temperature <= 0 (or NaN) = greedy:
 *      the argmax of the penalized logits, lowest id on ties; steps 3–6 skipped.
 *   3. top-k: keep the k highest (ties: lower id first).
 *   4. softmax over what is kept.
 *   5. top-p: keep the smallest prefix of the sorted distribution whose mass
 *      is >= top_p (at least one token).
 *   6. min-p: drop tokens whose probability is < min_p × the largest.
 *   7. renormalize and draw with a seeded xoshiro256** PRNG.
 * NaN logits count as -inf; when the best logit is ±inf the result is the
 * argmax. Out-of-range history ids are ignored.
 *
 * Speed (151,936-token vocabulary): nothing is allocated per call (buffers
 * come from sampler_init). Only candidates are sorted; the whole vocabulary
 * only in degenerate cases (all weights in one bucket, top_k near n_vocab).
 *   greedy: one vectorized argmax pass.
 *   top-k: one pass keeping a k-sized heap; 16-token blocks with nothing above
 *     the heap's minimum are skipped with one vector compare; then k are sorted.
 *   no top-k: weights e^((logit - max) / T) for every token (a branch-free,
 *     vectorized exp, ~1 ulp, with AVX2 / AVX-512 versions of the same IEEE
 *     operations, so every ISA gives the same bits); top-p buckets the weights
 *     by their float exponent (+2 mantissa bits) and sorts only the bucket
 *     where the cumulative mass crosses top_p; min-p alone collects the
 *     tokens within log(min_p) of the best.
 * Same seed + same logits + same history = same token, at any thread count or ISA. */
#ifndef WICK_ENGINE_SAMPLER_H
#define WICK_ENGINE_SAMPLER_H

#include <stdint.h>

#include "wick.h"

typedef struct sampler {
    int n_vocab;
    float *logit;    /* [n_vocab] penalized logits, indexed by token id */
    float *w;        /* [n_vocab] weights e^((logit - max) / temperature), by token id */
    float *val;      /* [n_vocab] candidate values (heap, sorted list) */
    int32_t *id;     /* [n_vocab] candidate ids */
    int32_t *count;  /* [n_vocab] occurrences in the penalty window; all zero between calls */
    uint64_t rng[4];
} sampler;

int sampler_init(sampler *s, int n_vocab, wick_error *err);
void sampler_free(sampler *s);
void sampler_seed(sampler *s, uint64_t seed);
/* A uniform double in [0, 1). */
double sampler_uniform(sampler *s);
/* Index of the largest of n values, lowest index on ties, NaN ignored (0 if all NaN). */
int32_t sampler_argmax(const float *logits, int n);
/* The next token from n_vocab logits. history: the sequence's tokens so far
 * (prompt + generated), n_history of them (may be NULL when 0). */
int32_t sampler_sample(sampler *s, const wick_sampling *p, const float *logits,
                       const int32_t *history, int n_history);
/* The distribution sampler_sample draws from, after every knob: out[n_vocab]
 * gets each token's probability (0 outside the candidates; greedy: 1 at the
 * argmax). Uses no randomness. For speculative sampling (spec_accept.h). */
void sampler_dist(sampler *s, const wick_sampling *p, const float *logits, const int32_t *history, int n_history,
                  float *out);
/* Draw i with probability dist[i] / Σ dist (entries <= 0 never) with s's PRNG. */
int32_t sampler_draw_dist(sampler *s, const float *dist, int n);

#endif
