/* sampler.h — choosing the next token from logits.
 *
 * Order (each step sees the previous step's output; a knob that is off is skipped):
 *   0. logits processors (sampler_cfg), in their order, on a copy of the
 *      logits: the request's logit biases first (wick_sampling.logit_bias,
 *      added to their tokens' logits), then any others (a token mask: every
 *      id it does not allow becomes -inf). Greedy picks, draws and
 *      sampler_dist all see the processed logits.
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
 *   7. renormalize and draw with a seeded xoshiro256** PRNG: the caller's
 *      (sampler_rng, one per request), passed to every call that draws.
 * NaN logits count as -inf; when the best logit is ±inf the result is the
 * argmax (so when every id is masked: the lowest id). Out-of-range history
 * ids are ignored.
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
 * Same seed + same logits + same history = same token, at any thread count or ISA.
 * A sampler's buffers serve one call at a time; the PRNG and the processors'
 * state belong to the caller, so one sampler serves many requests in turn. */
#ifndef WICK_ENGINE_SAMPLER_H
#define WICK_ENGINE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu.h"
#include "wick.h"

typedef struct sampler {
    int n_vocab;
    cpu_isa isa;     /* the vector kernels' ISA (the model's kernel_tuning.isa) */
    float *logit;    /* [n_vocab] processed and penalized logits, indexed by token id */
    float *w;        /* [n_vocab] weights e^((logit - max) / temperature), by token id */
    float *val;      /* [n_vocab] candidate values (heap, sorted list) */
    int32_t *id;     /* [n_vocab] candidate ids */
    int32_t *count;  /* [n_vocab] occurrences in the penalty window; all zero between calls */
} sampler;

/* xoshiro256** state. Each request owns one, seeded from its seed; every
 * draw advances it. */
typedef struct sampler_rng {
    uint64_t s[4];
} sampler_rng;

/* ---- logits processors ----
 * A processor changes the logits before the knobs (penalties, temperature,
 * top-k / top-p / min-p). It works on the sampler's copy, never on the
 * forward pass's rows. */
typedef struct logits_proc logits_proc;
struct logits_proc {
    /* Change logits[0, n_vocab) in place. */
    void (*apply)(const logits_proc *self, float *logits, int n_vocab);
    const void *data; /* what apply reads (a bias list, a token mask, ...) */
    int n;            /* entries of data, where it is a list */
};

/* Adds bias[i].bias to the logit of bias[i].token (ids out of range are
 * ignored); reads the n entries at each call. */
logits_proc logits_proc_bias(const wick_logit_bias *bias, int n);

/* A set of allowed token ids: a bitset the owner may rewrite between calls
 * (a grammar fills it at every step). */
typedef struct token_mask {
    uint64_t *bits;  /* [(n_vocab + 63) / 64]: bit i % 64 of word i / 64 set = token i allowed */
    int n_vocab;
} token_mask;

/* A mask of n_vocab ids, all allowed. 0 or -1 with err. */
int token_mask_init(token_mask *m, int n_vocab, wick_error *err);
void token_mask_free(token_mask *m);
/* Allow every id (all true) or none (all false). */
void token_mask_fill(token_mask *m, bool all);
static inline void token_mask_set(token_mask *m, int32_t id, bool allowed) {
    if (id < 0 || id >= m->n_vocab) return;
    const uint64_t bit = 1ull << (id & 63);
    m->bits[id >> 6] = allowed ? m->bits[id >> 6] | bit : m->bits[id >> 6] & ~bit;
}
static inline bool token_mask_allows(const token_mask *m, int32_t id) {
    return id >= 0 && id < m->n_vocab && (m->bits[id >> 6] >> (id & 63) & 1);
}
/* Every id m does not allow (ids past m->n_vocab included) gets -inf; reads
 * m's bits at each call. */
logits_proc logits_proc_mask(const token_mask *m);

/* How one sequence samples: its knobs and its processors, applied in order. */
#define SAMPLER_MAX_PROCS 4
typedef struct sampler_cfg {
    const wick_sampling *p;
    logits_proc procs[SAMPLER_MAX_PROCS];
    int n_procs;
} sampler_cfg;

/* cfg for knobs p (kept by pointer, as are p's biases): the processor list
 * starts with p's logit biases when it has any. */
void sampler_cfg_init(sampler_cfg *cfg, const wick_sampling *p);
/* Append a processor: 0, or -1 when the list is full. */
int sampler_cfg_add(sampler_cfg *cfg, logits_proc proc);

int sampler_init(sampler *s, int n_vocab, cpu_isa isa, wick_error *err);
void sampler_free(sampler *s);
void sampler_rng_seed(sampler_rng *r, uint64_t seed);
/* A uniform double in [0, 1). */
double sampler_uniform(sampler_rng *r);
/* Index of the largest of n values, lowest index on ties, NaN ignored (0 if all NaN). */
int32_t sampler_argmax(const float *logits, int n);
/* The next token from n_vocab logits, drawn with rng (greedy draws nothing).
 * history: the sequence's tokens so far (prompt + generated), n_history of
 * them (may be NULL when 0). */
int32_t sampler_sample(sampler *s, const sampler_cfg *cfg, const float *logits, const int32_t *history,
                       int n_history, sampler_rng *rng);
/* The distribution sampler_sample draws from, after every processor and
 * knob: out[n_vocab] gets each token's probability (0 outside the
 * candidates; greedy: 1 at the argmax). Uses no randomness. For speculative
 * sampling (spec_accept.h). */
void sampler_dist(sampler *s, const sampler_cfg *cfg, const float *logits, const int32_t *history, int n_history,
                  float *out);
/* Draw i with probability dist[i] / Σ dist (entries <= 0 never) with rng. */
int32_t sampler_draw_dist(const float *dist, int n, sampler_rng *rng);

/* The distribution sampler_sample draws from (as sampler_dist), reported
 * for the token ti->id drawn from it: its probability into ti->prob, and
 * the n_top most likely candidates the knobs kept into ti->top_ids /
 * top_probs (best first, lower id on ties), ti->n_top of them. When one
 * token takes all the mass (greedy, an infinite logit, every weight rounded
 * to 0) it has 1 and the runners-up follow with 0: greedy's by processed
 * logit, within top_k when set, none a processor set to -inf. Uses no
 * randomness; the sampler's buffers are overwritten. */
void sampler_post_probs(sampler *s, const sampler_cfg *cfg, const float *logits, const int32_t *history,
                        int n_history, wick_token_info *ti, int n_top);

/* The log-softmax of the raw logits (as the model gave them, before any
 * processor or knob) at ti->id into ti->logprob, and the n_top most likely
 * ids with theirs into ti->top_ids / top_logprobs (best first, lower id on
 * ties), ti->n_top of them. */
void sampler_logprobs(const float *logits, int n_vocab, wick_token_info *ti, int n_top);

#endif
