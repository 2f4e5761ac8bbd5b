/* forward.h — one transformer forward pass over a batch of tokens that may
 * belong to several sequences (each contiguous, at its own positions),
 * writing K/V into the paged cache and logits only for the rows asked for.
 *
 * Per layer: RMSNorm → Q/K/V projections (+bias) → per-head q/k RMSNorm
 * (Qwen3, Gemma 3) → RoPE (its own step) → store K/V → attention per
 * sequence → output projection (→ post-norm, Gemma) + residual (scaled,
 * Granite) → RMSNorm → gated FFN (SwiGLU or GeGLU; or a mixture of experts,
 * model/moe.h) (→ post-norm) + residual. The features beyond Llama's are
 * hyperparameters (hparams.h) and arch flags (arch.h); with them off, the
 * pass is the Llama one. */
#ifndef WICK_MODEL_FORWARD_H
#define WICK_MODEL_FORWARD_H

#include <stddef.h>

#include "core/threadpool.h"
#include "kv/kv_cache.h"
#include "model/model.h"

/* Span computation (engine/spans.c): for tokens of sequence seq at
 * positions >= from, K after its norms and before RoPE, and V, are also
 * written to sequence dst at position pos - from. */
typedef struct fwd_capture {
    int seq, from, dst;
} fwd_capture;

/* What one forward call does beyond the plain pass; NULL (or all zero) =
 * nothing beyond it. Everything a caller varies between calls travels here,
 * never in the scratch or the model. */
typedef struct fwd_opts {
    wick_profile *prof;         /* non-NULL: time every op into it (see forward.c) */
    const fwd_capture *capture; /* non-NULL: K / V capture for a span */
    /* Run only the first n_layer layers, then the final norm and output head
     * (self-speculative drafting, engine/draft_model.c); 0 = all. The KV cache
     * passed to forward then needs only that many layers. */
    int n_layer;
} fwd_opts;

/* Activation buffers, sized once for max_tokens rows and max_logits logit rows. */
typedef struct forward_scratch {
    int max_tokens, max_logits;
    float *x, *xb, *q, *k, *v, *att, *hb, *hb2; /* [max_tokens][...] */
    float *rope_cs, *rope_sn;                   /* [max_tokens][rope sets][rot_dim / 2]: this batch's angles */
    float *out_in;                              /* [max_logits][n_embd] */
    float *logits;                              /* [max_logits][n_vocab] */
    void *mm;                                   /* matmul activation scratch */
    size_t mm_bytes;
    void *block; /* the single allocation behind all of the above */
    bool rope_long;     /* LongRoPE: this context uses the long-context frequencies */
    struct moe_scratch *moe;    /* mixture-of-experts layers' buffers (model/moe.h); NULL = none */
} forward_scratch;

int forward_scratch_init(forward_scratch *s, const wick_model *m, int max_tokens, int max_logits,
                         wick_error *err);
void forward_scratch_free(forward_scratch *s);
/* A context of n_ctx positions per sequence: LongRoPE models use their long
 * frequencies when n_ctx exceeds the original context (llama.cpp's rule). */
void forward_scratch_set_ctx(forward_scratch *s, const wick_model *m, int n_ctx);

/* The frequencies of RoPE set `set` (0: global, 1: the sliding layers' local
 * set) in a pass with this scratch, and the factor of its cos/sin. */
static inline const float *forward_rope_freqs(const wick_model *m, const forward_scratch *s, int set) {
    if (set == 1) return m->inv_freq_local;
    return s->rope_long && m->inv_freq_long ? m->inv_freq_long : m->inv_freq;
}
static inline double forward_rope_mscale(const wick_model *m, int set) {
    return set == 0 ? (double)m->hp.rope_attn_factor : 1.0;
}
/* RoPE angles of one position for set `set` (rope_angles' bits when the factor is 1). */
void forward_rope_angles(const wick_model *m, const forward_scratch *s, int set, int32_t pos, float *cs, float *sn);

/* Run the batch with options o (may be NULL). Rows with want_logits (or the
 * last row when want_logits is NULL) get logits in s->logits, in batch
 * order. Returns the number of logit rows, or -1 with err. The caller has
 * validated the batch and reserved KV blocks; this function records the
 * batch's token ids in the cache (kv_record: the sequences' lengths grow). */
int forward(const wick_model *m, kv_cache *kv, forward_scratch *s, wick_pool *pool, const wick_batch *b,
            const fwd_opts *o, wick_error *err);

#endif
