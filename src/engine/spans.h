/* spans.h — span requests (wick.h, "span requests"): the layout of a
 * request's sequence (which slots hold the prefix, each span and the
 * suffix, their RoPE positions, which slots are placed rather than
 * computed), and the work done when the request's prefill reaches a placed
 * run: find the span's pre-RoPE K and V in the span cache, or compute the
 * span in isolation (A ++ S as an ordinary sequence, capturing K before
 * RoPE: a job whose tokens the scheduler batches with everyone else's),
 * then place it (K rotated once to the placed positions, V copied).
 *
 * The span cache is the prefix cache's block store (kv/prefix_cache.c)
 * under a root of its own (kv_span_root: model, KV layout and type,
 * cache salt, anchor ids): a span's blocks hold its rows 0..L-1 of K
 * before RoPE and V, chained by their token ids like any cached prefix, so
 * they share the pool, its LRU eviction, its budget and --cache-dir. */
#ifndef WICK_ENGINE_SPANS_H
#define WICK_ENGINE_SPANS_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/context.h"
#include "kv/kv_cache.h"
#include "wick.h"

typedef struct span_seg {
    int slot, len;   /* first slot in the request's sequence, tokens */
    int blend;       /* leading tokens computed in place (blend_first_k), <= len */
    int rope;        /* RoPE position of its first token */
    int32_t *tokens; /* len ids */
    bool counted;    /* its lookup is in the request's statistics */
} span_seg;

typedef struct span_plan {
    int n_prefix, n_spans;
    span_seg *spans;     /* in slot order */
    int q_slot, q_rope;  /* the suffix: first slot and its RoPE position (later slots follow on) */
    int32_t *anchor;     /* A */
    int n_anchor;
    kv_key anchor_root;  /* A computed as an ordinary prefix (kv_root) */
    kv_key store_root;   /* the span cache's chains */
} span_plan;

/* Check sp and lay it out: tokens (capacity c->n_ctx) gets P, the spans in
 * slot order and Q; *n_tokens their count. NULL with err for an empty span or
 * suffix, a bad anchor or position mode, ids out of range or a layout longer
 * than the context. */
span_plan *span_plan_new(const wick_context *c, const wick_spans *sp, const char *salt, int32_t *tokens,
                         int *n_tokens, wick_error *err);
void span_plan_free(span_plan *p);
int32_t span_rope_pos(const span_plan *p, int slot);
/* The first slot >= from that is placed rather than computed (INT32_MAX if none). */
int span_next_placed(const span_plan *p, int from);
/* Blocks the computation of the largest span still to place from slot
 * `from` on may take at once (A ++ S and the stored rows; 0 if none). */
int span_blocks_needed(const span_plan *p, int from);

#define SPAN_NO_BLOCKS (-2)
#define SPAN_MISS (-3)

/* The span whose placed run starts at slot frontier, or NULL. */
span_seg *span_at(span_plan *p, int frontier);
/* Sequence seq holds slots [0, frontier of g): if the span cache holds g,
 * place it now and return the new frontier; else SPAN_MISS (nothing
 * changed), or -1 with err. The first time a span of p is placed, its placed
 * tokens are added to *queries, and to *hits if the cache had them. */
int span_place_cached(wick_context *c, span_plan *p, span_seg *g, int seq, int *hits, int *queries, wick_error *err);

/* Computing a span in isolation, as a job whose tokens ride in the
 * scheduler's batches (one job at a time per context): c->span_iso runs
 * A ++ S as an ordinary sequence (the anchor's cached blocks reused), and
 * with span_job_capture set on the forward pass, each span row's K before
 * RoPE and V go to c->span_pre.
 * Start: 0, SPAN_NO_BLOCKS (with err; nothing held) or -1. */
int span_job_start(wick_context *c, const span_plan *p, const span_seg *g, wick_error *err);
/* Token i of A ++ S. */
int32_t span_job_token(const span_plan *p, const span_seg *g, int i);
static inline fwd_capture span_job_capture(const wick_context *c, const span_plan *p) {
    return (fwd_capture){c->span_iso, p->n_anchor, c->span_pre};
}
/* After the job's last token: place g into seq and let both sequences go
 * (the span's rows into the span cache unless it is off). The new
 * frontier, or -1 with err. */
int span_job_finish(wick_context *c, span_plan *p, span_seg *g, int seq, int *hits, int *queries, wick_error *err);
/* Drop a job (its request ended or gave its blocks back): nothing past the
 * anchor's cached blocks is kept. */
void span_job_abort(wick_context *c);

#endif
