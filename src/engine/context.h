/* context.h — struct wick_context: a model's KV cache, activation scratch,
 * thread pool and sampler buffers, all sized at creation. */
#ifndef WICK_ENGINE_CONTEXT_H
#define WICK_ENGINE_CONTEXT_H

#include "core/threadpool.h"
#include "kv/kv_cache.h"
#include "engine/sampler.h"
#include "model/forward.h"
#include "model/model.h"

struct wick_context {
    wick_model *m;
    int n_ctx, n_seq, n_threads, prefill_chunk;
    wick_pool *pool;
    kv_cache kv;
    forward_scratch fs;
    int n_logits;   /* logit rows of the last batch */
    /* the KV cache's three sequences past n_seq, for span requests
     * (engine/spans.c): A ++ S computed as an ordinary sequence, the span's
     * pre-RoPE K / V captured from it, and a span found in the cache (held
     * read-only while it is placed) */
    int span_iso, span_pre, span_look;
    bool no_span_cache;
    sampler smp;       /* buffers for sampling, one request at a time (each brings its own PRNG) */
    bool profiling;    /* forward passes and sampling add their times to prof */
    wick_profile prof;
};

/* Room for at least `rows` logit rows per batch (speculative decoding:
 * every drafted token needs one); reallocates the scratch. 0 or -1. */
int context_reserve_logits(wick_context *c, int rows, wick_error *err);

/* wick_decode that may also name the span sequences, with capture (may be
 * NULL) passed to the forward pass (engine/spans.h). */
int context_decode_any(wick_context *c, const wick_batch *b, const fwd_capture *capture, wick_error *err);

#endif
