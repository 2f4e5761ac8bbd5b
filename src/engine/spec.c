/* spec.c — speculative decoding in the scheduler: its drafters (prompt
 * lookup always; a draft model and the target's first layers when set up,
 * wick_sched_set_spec), each request's method and adaptive draft length,
 * drafting before the batch is built (the drafts ride behind their request's
 * last token) and, after the pass, verification by the acceptance rule
 * (spec_accept.c), the KV rollback of rejected drafts and streaming of the
 * accepted run. Drafts and verification sample through the request's own
 * sampler_cfg and PRNG, as plain decoding does. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"
#include "engine/sched_internal.h"
#include "engine/spec_accept.h"

int spec_init(wick_sched *s) {
    s->pbuf = malloc((size_t)s->c->m->hp.n_vocab * sizeof *s->pbuf);
    s->drafters[WICK_SPEC_LOOKUP] = draft_lookup_new(NULL);
    s->spec_default = WICK_SPEC_OFF;
    s->draft_max = 8;
    s->lookup = 3;
    return s->pbuf && s->drafters[WICK_SPEC_LOOKUP] ? 0 : -1;
}

void spec_free(wick_sched *s) {
    free(s->pbuf);
    for (int i = 0; i <= WICK_SPEC_LOOKUP; i++) drafter_free(s->drafters[i]);
}

int wick_sched_set_spec(wick_sched *s, const wick_spec_params *p, wick_error *err) {
    wick_context *c = s->c;
    const int draft_max = p->draft_max ? p->draft_max : 8;
    if (draft_max < 1 || draft_max > WICK_DRAFT_MAX_LIMIT)
        return wick_fail(err, "draft max must be in [1, %d], not %d", WICK_DRAFT_MAX_LIMIT, p->draft_max);
    if (p->lookup < 0 || p->lookup > 64) return wick_fail(err, "lookup n-gram must be in [1, 64], not %d", p->lookup);
    if (p->draft_layers < 0 || (p->draft_layers > 0 && p->draft_layers >= c->m->hp.n_layer))
        return wick_fail(err, "draft layers must be in [1, %d) for this %d-layer model, not %d", c->m->hp.n_layer,
                         c->m->hp.n_layer, p->draft_layers);
    if (p->default_method < WICK_SPEC_DEFAULT || p->default_method > WICK_SPEC_LOOKUP)
        return wick_fail(err, "unknown speculative method %d", (int)p->default_method);
    if (s->started || s->st.steps) return wick_fail(err, "speculation is set before the scheduler runs");
    const int kv_type = c->kv.pool.type == WICK_F16 ? 1 : 0;
    const int chunk = c->fs.max_tokens;
    if (p->draft_model && !s->drafters[WICK_SPEC_DRAFT] &&
        !(s->drafters[WICK_SPEC_DRAFT] = draft_model_new(c->m, p->draft_model, c->n_seq, c->n_ctx, chunk, c->pool,
                                                         kv_type, err)))
        return -1;
    if (p->draft_layers && !s->drafters[WICK_SPEC_LAYERS] &&
        !(s->drafters[WICK_SPEC_LAYERS] =
              draft_layers_new(c->m, p->draft_layers, c->n_seq, c->n_ctx, chunk, c->pool, kv_type, err)))
        return -1;
    /* a logit row per drafted token and one more per sequence */
    if (context_reserve_logits(c, c->n_seq * (1 + draft_max), err) < 0) return -1;
    s->draft_max = draft_max;
    if (p->lookup) s->lookup = p->lookup;
    s->spec_default = p->default_method ? (int)p->default_method
                      : p->draft_model   ? WICK_SPEC_DRAFT
                      : p->draft_layers  ? WICK_SPEC_LAYERS
                      : p->lookup        ? WICK_SPEC_LOOKUP
                                         : WICK_SPEC_OFF;
    if (s->spec_default != WICK_SPEC_OFF && !s->drafters[s->spec_default])
        return wick_fail(err, "the default speculative method has no drafter configured");
    return 0;
}

int spec_req_init(const wick_sched *s, sched_req *q, const wick_spec_request *r, wick_error *err) {
    q->spec_method = r->method == WICK_SPEC_DEFAULT ? s->spec_default : (int)r->method;
    if (q->spec_method != WICK_SPEC_OFF && !s->drafters[q->spec_method])
        return wick_fail(err, "speculative decoding with %s is not set up here",
                         r->method == WICK_SPEC_DRAFT ? "a draft model" : "layer skipping");
    q->draft_max = r->draft_max ? r->draft_max : s->draft_max;
    q->lookup = r->lookup ? r->lookup : s->lookup;
    q->acc = 4, q->rej = 1; /* a prior of 80% acceptance */
    return 0;
}

/* The next draft length: the run of accepted drafts expected at the recent
 * acceptance rate a (a / (1 - a)), plus one; 1 .. draft_max. */
static int draft_len(const sched_req *q) {
    double a = q->acc / (q->acc + q->rej);
    if (a > 0.95) a = 0.95;
    int k = 1 + (int)lround(a / (1 - a));
    return k < q->draft_max ? k : q->draft_max;
}

/* Every decoding request with a drafter proposes this step's drafts, within
 * the logit rows and batch tokens left beyond one per running request and
 * the tokens it may still generate (which the context has room for: see
 * request_clamp_predict); then the KV blocks for them are reserved where
 * the pool has them (drafts never preempt anyone). */
void spec_draft_all(wick_sched *s) {
    wick_context *c = s->c;
    kv_cache *kv = &c->kv;
    const int V = c->m->hp.n_vocab;
    int rows_left = c->fs.max_logits - s->n_running, tok_left = s->budget;
    for (int i = 0; i < s->n_running; i++) tok_left -= s->running[i]->n_tokens - s->running[i]->n_computed == 1;
    for (int i = 0; i < s->n_running; i++) {
        sched_req *q = s->running[i];
        q->n_draft = 0;
        if (q->spec_method == WICK_SPEC_OFF || q->n_tokens - q->n_computed != 1 || q->n_predict == 0) continue;
        drafter *d = s->drafters[q->spec_method];
        int k = draft_len(q);
        const int left = q->n_predict - q->n_gen - 1;
        if (k > left) k = left;
        if (k > c->n_ctx - q->n_tokens - 1) k = c->n_ctx - q->n_tokens - 1; /* (a context-shifting request's room) */
        if (k > rows_left) k = rows_left;
        if (k > tok_left) k = tok_left;
        if (k < 1) continue;
        const bool want_q = !d->point_mass && !spec_greedy(&q->r.sampling);
        /* a drafter samples without the grammar's mask (it holds the next
         * position's only); verification applies the grammar at every draft */
        sampler_cfg dcfg = q->cfg;
        if (q->gm) dcfg.n_procs--;
        if (want_q && !q->q && !(q->q = malloc((size_t)q->draft_max * (size_t)V * sizeof *q->q))) continue;
        draft_call dc = {.seq = q->slot, .tokens = q->tokens, .n_tokens = q->n_tokens, .k = k, .lookup = q->lookup,
                         .cfg = &dcfg, .smp = &c->smp, .rng = &q->rng, .out = q->tokens + q->n_tokens,
                         .q = want_q ? q->q : NULL};
        wick_error e;
        const int got = d->ops->propose(d, &dc, &e); /* a drafter that fails drafts nothing */
        if (got <= 0) continue;
        /* blocks for the drafts, as far as the pool has them */
        const int have = kv_seq_blocks(kv, q->slot) + kv_blocks_available(kv);
        int n_draft = got;
        if (sched_blocks_for(q->n_tokens + n_draft) > have) n_draft = have * KV_BLOCK_SIZE - q->n_tokens;
        if (n_draft < 1) continue;
        wick_error re;
        if (kv_reserve(kv, q->slot, q->n_tokens + n_draft, &re) < 0) continue;
        q->n_draft = n_draft;
        rows_left -= n_draft;
        tok_left -= n_draft;
    }
}

/* A grammar request's verification: before row i, its matcher takes draft
 * i - 1 and masks what may follow (spec_verify.at_row). */
typedef struct grammar_verify {
    sched_req *q;
    int taken; /* drafts its matcher took */
} grammar_verify;

static void grammar_at_row(void *u, int i) {
    grammar_verify *g = u;
    sched_req *q = g->q;
    if (i > 0) {
        if (!wick_grammar_matcher_accept(q->gm, q->tokens[q->n_tokens + i - 1])) return; /* (never: the mask allowed it) */
        g->taken++;
    }
    req_grammar_mask(q); /* nothing allowed: the sampler then picks id 0, which req_emit refuses */
}

/* Keep the accepted run, drop the rest's KV, and stream the accepted tokens
 * and the one after them (each checked as a sampled token is: the first
 * that ends q ends it, and q's KV then holds what plain decoding's would). */
void spec_advance(wick_sched *s, sched_req *q, int row) {
    wick_context *c = s->c;
    const int n = q->n_tokens, k = q->n_draft, V = c->m->hp.n_vocab;
    drafter *d = s->drafters[q->spec_method];
    const float *rows = wick_logits(c, row);
    const double ts = c->profiling ? wick_now_ms() : 0;
    spec_verify v = {.cfg = &q->cfg, .rows = rows, .hist = q->tokens, .n_hist = n, .k = k,
                     .q = d->point_mass ? NULL : q->q, .pbuf = s->pbuf};
    grammar_verify gv = {.q = q};
    if (q->gm) v.at_row = grammar_at_row, v.u = &gv;
    int32_t next;
    const int j = spec_accept(&c->smp, &v, &q->rng, &next);
    if (q->gm) wick_grammar_matcher_rollback(q->gm, gv.taken); /* req_emit takes the accepted ones again */
    if (c->profiling) c->prof.ms[WICK_OP_SAMPLING] += wick_now_ms() - ts;
    q->n_draft = 0;
    q->acc = 0.8 * q->acc + j;
    q->rej = 0.8 * q->rej + (j < k);
    /* the KV keeps the last token and the accepted drafts */
    kv_truncate(&c->kv, q->slot, n + j);
    q->n_computed = n + j;
    if (d->ops->rollback) d->ops->rollback(d, q->slot, n + j);
    int e = 0, why = REQ_GO_ON;
    for (; e <= j && why == REQ_GO_ON; e++) why = req_emit(s, q, e < j ? q->tokens[n + e] : next, rows + (size_t)e * V);
    /* accepted drafts that were used: all, or those up to the token that ended q */
    const int used = e - 1 < j ? e : j;
    q->draft_tokens += k;
    q->accepted_tokens += used;
    q->spec_passes++;
    pthread_mutex_lock(&s->mu);
    s->st.spec_draft_tokens += (uint64_t)k;
    s->st.spec_accepted_tokens += (uint64_t)used;
    s->st.spec_passes++;
    pthread_mutex_unlock(&s->mu);
    if (why != REQ_GO_ON) {
        kv_truncate(&c->kv, q->slot, n + e - 1); /* what plain decoding's KV would hold */
        q->n_computed = n + e - 1;
        req_finish(s, q, why, NULL);
        return;
    }
    kv_commit(&c->kv, q->slot);
}
