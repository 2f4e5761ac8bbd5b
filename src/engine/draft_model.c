/* draft_model.c — drafting with a model: a separate draft model of the same
 * vocabulary, or the target's own first N layers with its final norm and
 * output head (draft_layers.c). The drafter has its own KV cache (one
 * sequence per target slot, only the layers it runs) and activation
 * scratch, and runs on the target context's thread pool (never at the same
 * time as the target). Per call: the drafter's sequence keeps the longest
 * common prefix of what it holds and the target's tokens (whatever the
 * target rejected last time, or a slot taken by another request, is
 * dropped there), catches up on the rest in chunks, then decodes k tokens
 * one at a time, each picked by the request's sampler under its knobs
 * (greedy: the argmax; sampling: a draw from q = sampler_dist, which is
 * handed back for the acceptance rule). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "engine/draft.h"
#include "engine/spec_accept.h"
#include "model/forward.h"
#include "model/model.h"

typedef struct model_drafter {
    drafter base;
    const wick_model *m;
    kv_cache kv;
    forward_scratch fs;
    wick_pool *pool;
    int chunk;
    fwd_opts opts; /* n_layer: the layers it runs (all of a draft model) */
    int32_t *b_tok, *b_pos, *b_seq;
    bool *b_want;
} model_drafter;

/* Feed toks[0, n) to sequence seq; the last one's logits land in fs.logits. */
static int feed(model_drafter *d, int seq, const int32_t *toks, int n, wick_error *err) {
    for (int i = 0; i < n; i += d->chunk) {
        const int m = n - i < d->chunk ? n - i : d->chunk, at = kv_seq_len(&d->kv, seq);
        for (int t = 0; t < m; t++) {
            d->b_tok[t] = toks[i + t];
            d->b_pos[t] = at + t;
            d->b_seq[t] = seq;
            d->b_want[t] = i + t == n - 1;
        }
        if (kv_reserve(&d->kv, seq, at + m, err) < 0) return -1;
        const wick_batch b = {.n = m, .tokens = d->b_tok, .pos = d->b_pos, .seq = d->b_seq, .want_logits = d->b_want};
        if (forward(d->m, &d->kv, &d->fs, d->pool, &b, &d->opts, err) < 0) return -1;
    }
    return 0;
}

static int model_propose(drafter *base, const draft_call *c, wick_error *err) {
    model_drafter *d = (model_drafter *)base;
    const int seq = c->seq, n = c->n_tokens, V = d->m->hp.n_vocab;
    if (n < 1 || n + c->k > d->kv.tab.n_ctx) return 0;
    /* keep the common prefix, but at least the last token is fed again (its logits) */
    const int32_t *held = kv_seq_tokens(&d->kv, seq);
    const int lim = kv_seq_len(&d->kv, seq) < n - 1 ? kv_seq_len(&d->kv, seq) : n - 1;
    int l = 0;
    while (l < lim && held[l] == c->tokens[l]) l++;
    kv_truncate(&d->kv, seq, l);
    if (feed(d, seq, c->tokens + l, n - l, err) < 0) return -1;
    const bool greedy = spec_greedy(c->cfg->p);
    /* the drafts extend the history in place: c->out == c->tokens + n */
    for (int i = 0; i < c->k; i++) {
        int32_t t;
        if (greedy || !c->q) {
            t = sampler_sample(c->smp, c->cfg, d->fs.logits, c->tokens, n + i, c->rng);
        } else {
            float *q = c->q + (size_t)i * V;
            sampler_dist(c->smp, c->cfg, d->fs.logits, c->tokens, n + i, q);
            t = sampler_draw_dist(q, V, c->rng);
        }
        c->out[i] = t;
        if (i + 1 < c->k && feed(d, seq, &t, 1, err) < 0) return -1;
    }
    return c->k;
}

static void model_rollback(drafter *base, int seq, int n_keep) {
    model_drafter *d = (model_drafter *)base;
    kv_truncate(&d->kv, seq, n_keep);
}

static void model_free(drafter *base) {
    model_drafter *d = (model_drafter *)base;
    kv_cache_free(&d->kv);
    forward_scratch_free(&d->fs);
    free(d->b_tok), free(d->b_pos), free(d->b_seq), free(d->b_want);
    free(d);
}

static const drafter_ops MODEL_OPS = {model_propose, model_rollback, model_free};

drafter *draft_model_make(const wick_model *m, int n_layers, int n_seq, int n_ctx, int chunk, wick_pool *pool,
                          int kv_type, wick_error *err) {
    model_drafter *d = calloc(1, sizeof *d);
    if (!d) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    d->base.ops = &MODEL_OPS;
    d->m = m;
    d->pool = pool;
    d->chunk = chunk > 0 && chunk < 512 ? chunk : 512; /* catch-up chunks; its scratch is sized for one */
    const int L = n_layers > 0 && n_layers < m->hp.n_layer ? n_layers : m->hp.n_layer;
    const size_t C = (size_t)d->chunk;
    d->b_tok = malloc(C * sizeof *d->b_tok);
    d->b_pos = malloc(C * sizeof *d->b_pos);
    d->b_seq = malloc(C * sizeof *d->b_seq);
    d->b_want = malloc(C * sizeof *d->b_want);
    if (!d->b_tok || !d->b_pos || !d->b_seq || !d->b_want) {
        free(d->b_tok), free(d->b_pos), free(d->b_seq), free(d->b_want);
        free(d);
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    if (kv_cache_init_pool(&d->kv, L, m->hp.n_head_kv, m->hp.head_dim, n_ctx, n_seq, 0, kv_type, err) < 0) {
        free(d->b_tok), free(d->b_pos), free(d->b_seq), free(d->b_want);
        free(d);
        return NULL;
    }
    if (forward_scratch_init(&d->fs, m, d->chunk, 1, err) < 0) {
        kv_cache_free(&d->kv);
        free(d->b_tok), free(d->b_pos), free(d->b_seq), free(d->b_want);
        free(d);
        return NULL;
    }
    forward_scratch_set_ctx(&d->fs, m, n_ctx);
    d->opts.n_layer = L;
    return &d->base;
}

/* Same vocabulary: the same token count and every token's text. */
int draft_check_vocab(const wick_model *a, const wick_model *b, wick_error *err) {
    if (a->hp.n_vocab != b->hp.n_vocab)
        return wick_fail(err, "the draft model's vocabulary has %d tokens, the target's %d: they must be the same",
                         b->hp.n_vocab, a->hp.n_vocab);
    char pa[256], pb[256];
    for (int32_t id = 0; id < a->hp.n_vocab; id++) {
        const int la = wick_token_piece(a, id, pa, sizeof pa), lb = wick_token_piece(b, id, pb, sizeof pb);
        if (la != lb || (la > 0 && memcmp(pa, pb, (size_t)(la < (int)sizeof pa ? la : (int)sizeof pa)) != 0))
            return wick_fail(err, "the draft model's token %d differs from the target's: the vocabularies must be the same",
                             id);
    }
    return 0;
}

drafter *draft_model_new(const wick_model *target, const wick_model *draft, int n_seq, int n_ctx, int chunk,
                         wick_pool *pool, int kv_type, wick_error *err) {
    if (draft_check_vocab(target, draft, err) < 0) return NULL;
    return draft_model_make(draft, 0, n_seq, n_ctx, chunk, pool, kv_type, err);
}
