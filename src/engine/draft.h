/* draft.h — the drafter interface of speculative decoding: something that
 * proposes the next few tokens of a sequence cheaply, for the target model
 * to verify in one pass (engine/spec_accept.h; the scheduler drives both).
 * Drafters: a draft model (draft_model.c), the target's first N layers
 * (draft_layers.c, sharing draft_model.c's machinery), prompt lookup
 * (draft_lookup.c). A drafter serves every sequence (slot) of a context;
 * what it keeps per sequence is its own business, checked against the
 * tokens it is given at each call (a slot may change hands). */
#ifndef WICK_ENGINE_DRAFT_H
#define WICK_ENGINE_DRAFT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/threadpool.h"
#include "engine/sampler.h"
#include "wick.h"

typedef struct draft_call {
    int seq;                        /* the target's sequence (slot) */
    const int32_t *tokens;          /* the sequence so far (prompt + generated) */
    int n_tokens;
    int k;                          /* most tokens to propose (>= 1) */
    int lookup;                     /* prompt lookup's longest n-gram */
    const sampler_cfg *cfg;         /* the request's knobs and logits processors */
    sampler *smp;                   /* buffers */
    sampler_rng *rng;               /* the request's PRNG (draws advance it) */
    int32_t *out;                   /* [k] the drafts */
    /* [k][n_vocab] (NULL when greedy): the distribution each draft was drawn
     * from (sampler_dist of the drafter's logits under the same processors
     * and knobs). A drafter with point_mass set leaves it alone. */
    float *q;
} draft_call;

typedef struct drafter drafter;
typedef struct drafter_ops {
    /* Propose up to c->k tokens to follow c->tokens: how many (0 = none
     * found), or -1 with err. */
    int (*propose)(drafter *d, const draft_call *c, wick_error *err);
    /* The sequence now holds only tokens[0, n_keep) of what was proposed
     * (may be NULL: the drafter checks at each call). */
    void (*rollback)(drafter *d, int seq, int n_keep);
    void (*free)(drafter *d);
} drafter_ops;

struct drafter {
    const drafter_ops *ops;
    bool point_mass; /* drafts are certain (q is a point mass on each): prompt lookup */
};

/* The prompt-lookup drafter (stateless). */
drafter *draft_lookup_new(wick_error *err);
/* The draft-model drafter for a context of n_seq sequences of n_ctx
 * positions: the draft model's own KV cache, running on `pool`, prefill
 * catch-up in chunks of `chunk`. The vocabulary must match target's. */
drafter *draft_model_new(const wick_model *target, const wick_model *draft, int n_seq, int n_ctx, int chunk,
                         wick_pool *pool, int kv_type, wick_error *err);
/* 0 if draft has target's vocabulary (token count and every token's text), else -1 with err. */
int draft_check_vocab(const wick_model *target, const wick_model *draft, wick_error *err);
/* Self-speculation: the target's first n_layers layers, final norm and head. */
drafter *draft_layers_new(const wick_model *target, int n_layers, int n_seq, int n_ctx, int chunk, wick_pool *pool,
                          int kv_type, wick_error *err);
/* For the above two: the model drafter running the first n_layers (0 = all) of m. */
drafter *draft_model_make(const wick_model *m, int n_layers, int n_seq, int n_ctx, int chunk, wick_pool *pool,
                          int kv_type, wick_error *err);

/* The lookup rule itself (draft_lookup.c), for tests: the continuation
 * (up to k tokens, written to out) of the most recent earlier occurrence of
 * the longest suffix of tokens[0, n) of length lookup down to 1. */
int draft_lookup_find(const int32_t *tokens, int n, int lookup, int k, int32_t *out);

static inline void drafter_free(drafter *d) {
    if (d) d->ops->free(d);
}

#endif
