/* sched_shift.c — context shift (wick_request.ctx_shift, llama-server's
 * behaviour, opt-in): a request whose history fills the context keeps its
 * first n_keep tokens, drops the n_discard after them and goes on. With
 * n_past the tokens before the last one (whose logits are still to come),
 * n_discard defaults to (n_past - n_keep) / 2, as llama-server computes it.
 *
 * llama-server moves the kept K cache in place (a RoPE delta); here the
 * sequence's KV is cut back to the kept start and the tokens after the
 * dropped run are computed again at their new positions, so the KV is exactly
 * that of a fresh request whose prompt is the kept tokens. The request's
 * sampler state (PRNG, knobs), stop-string text and grammar matcher are
 * untouched: they follow the output, not the context. Speculation is off
 * for the request from its first shift (its drafter's view would need the
 * same surgery for nothing). */
#include "engine/sched_internal.h"

#include <string.h>

/* Shift q: 0, or -1 when the pool has no block for what is recomputed. */
static int shift_one(wick_sched *s, sched_req *q) {
    kv_cache *kv = &s->c->kv;
    const int n_past = q->n_tokens - 1;
    int n_keep = q->r.ctx_shift.n_keep;
    if (n_keep > n_past - 1) n_keep = n_past - 1; /* at least one token goes */
    const int n_left = n_past - n_keep;
    int n_discard = q->r.ctx_shift.n_discard ? q->r.ctx_shift.n_discard : n_left / 2;
    if (n_discard < 1) n_discard = 1;
    if (n_discard > n_left) n_discard = n_left;
    memmove(q->tokens + n_keep, q->tokens + n_keep + n_discard,
            (size_t)(q->n_tokens - n_keep - n_discard) * sizeof *q->tokens);
    q->n_tokens -= n_discard;
    q->ctx_shifts++;
    q->ctx_dropped += n_discard;
    q->spec_method = WICK_SPEC_OFF;
    q->n_draft = 0;
    if (q->slot < 0) return 0; /* (waiting: nothing computed to drop) */
    kv_truncate(kv, q->slot, q->n_computed < n_keep ? q->n_computed : n_keep);
    q->n_computed = kv_seq_len(kv, q->slot);
    wick_error e;
    return kv_reserve(kv, q->slot, q->n_tokens, &e);
}

void sched_shift_full(wick_sched *s) {
    const int n_ctx = s->c->n_ctx;
    for (int i = 0; i < s->n_running; i++) {
        sched_req *q = s->running[i];
        if (!q->r.ctx_shift.on || q->n_tokens < n_ctx) continue;
        if (shift_one(s, q) < 0) { /* recomputed on readmission, when blocks are free */
            sched_preempt(s, q);
            i = -1; /* the running list changed: start over (q no longer fills its context) */
        }
    }
}
