/* spans.c — span requests: layout, isolated computation into the span
 * cache, placement (see spans.h and wick.h, "span requests").
 *
 * Exactness: a span's stored rows are a function of (model, KV type,
 * anchor ids, span ids) alone: the isolated sequence A ++ S is an ordinary
 * prefill (the kernels are batch-invariant, so chunking and the anchor's
 * cached blocks change nothing), and K is captured after its norms, before
 * RoPE, in the cache's element type. Placement converts it back, rotates it
 * with the forward pass's own RoPE functions at the placed position and
 * stores it, so a span found in the cache and one computed now give the
 * same bits, and so does the span cache turned off. */
#include "engine/spans.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "kernels/convert.h"
#include "kernels/ops.h"
#include "model/model.h"

static int cmp_seg(const void *a, const void *b) {
    const span_seg *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    for (int i = 0; i < x->len; i++)
        if (x->tokens[i] != y->tokens[i]) return x->tokens[i] < y->tokens[i] ? -1 : 1;
    return 0;
}

static int check_ids(const wick_context *c, const int32_t *ids, int n, const char *what, int k, wick_error *err) {
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= c->m->hp.n_vocab)
            return k >= 0 ? wick_fail(err, "%s %d: token id %d out of range [0, %d)", what, k, ids[i], c->m->hp.n_vocab)
                          : wick_fail(err, "%s: token id %d out of range [0, %d)", what, ids[i], c->m->hp.n_vocab);
    return 0;
}

void span_plan_free(span_plan *p) {
    if (!p) return;
    for (int k = 0; k < p->n_spans; k++) free(p->spans[k].tokens);
    free(p->spans);
    free(p->anchor);
    free(p);
}

span_plan *span_plan_new(const wick_context *c, const wick_spans *sp, const char *salt, int32_t *tokens,
                         int *n_tokens, wick_error *err) {
    if (sp->n_prefix < 0 || (sp->n_prefix > 0 && !sp->prefix) || sp->n_spans < 0 || (sp->n_spans > 0 && (!sp->spans || !sp->span_len))) {
        wick_fail(err, "incomplete span request");
        return NULL;
    }
    if (sp->n_suffix <= 0 || !sp->suffix) {
        wick_fail(err, "a span request needs a non-empty suffix (the question): its last token's logits give the first new token");
        return NULL;
    }
    if (sp->blend_first_k < 0) {
        wick_fail(err, "blend first_k must be 0 or more, not %d", sp->blend_first_k);
        return NULL;
    }
    if (sp->positions != WICK_POSITIONS_SEQUENTIAL && sp->positions != WICK_POSITIONS_SHARED) {
        wick_fail(err, "unknown span positions mode %d", (int)sp->positions);
        return NULL;
    }
    if (sp->anchor < WICK_ANCHOR_PREFIX || sp->anchor > WICK_ANCHOR_IDS ||
        (sp->anchor == WICK_ANCHOR_IDS && (sp->n_anchor_ids < 0 || (sp->n_anchor_ids > 0 && !sp->anchor_ids)))) {
        wick_fail(err, "unknown span anchor %d", (int)sp->anchor);
        return NULL;
    }
    long total = (long)sp->n_prefix + sp->n_suffix;
    for (int k = 0; k < sp->n_spans; k++) {
        if (sp->span_len[k] <= 0 || !sp->spans[k]) {
            wick_fail(err, "span %d is empty", k);
            return NULL;
        }
        total += sp->span_len[k];
    }
    if (total > c->n_ctx) {
        wick_fail_code(err, WICK_E_TOO_LONG, "prompt is %ld tokens (prefix, spans and suffix) but the context holds %d", total, c->n_ctx);
        return NULL;
    }
    if (check_ids(c, sp->prefix, sp->n_prefix, "prefix", -1, err) < 0 ||
        check_ids(c, sp->suffix, sp->n_suffix, "suffix", -1, err) < 0 ||
        (sp->anchor == WICK_ANCHOR_IDS && check_ids(c, sp->anchor_ids, sp->n_anchor_ids, "anchor", -1, err) < 0))
        return NULL;
    for (int k = 0; k < sp->n_spans; k++)
        if (check_ids(c, sp->spans[k], sp->span_len[k], "span", k, err) < 0) return NULL;

    span_plan *p = calloc(1, sizeof *p);
    if (!p || !(p->spans = calloc((size_t)(sp->n_spans ? sp->n_spans : 1), sizeof *p->spans))) {
        free(p);
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    p->n_prefix = sp->n_prefix;
    for (int k = 0; k < sp->n_spans; k++) {
        span_seg *g = &p->spans[p->n_spans];
        if (!(g->tokens = malloc((size_t)sp->span_len[k] * sizeof *g->tokens))) goto oom;
        memcpy(g->tokens, sp->spans[k], (size_t)sp->span_len[k] * sizeof *g->tokens);
        g->len = sp->span_len[k];
        p->n_spans++;
    }
    /* Shared positions: a canonical order, so the request's order of spans
     * does not change the sequence (nor, then, the result). */
    if (sp->positions == WICK_POSITIONS_SHARED) qsort(p->spans, (size_t)p->n_spans, sizeof *p->spans, cmp_seg);
    int slot = p->n_prefix, longest = 0;
    for (int k = 0; k < p->n_spans; k++) {
        span_seg *g = &p->spans[k];
        g->slot = slot;
        g->rope = sp->positions == WICK_POSITIONS_SHARED ? p->n_prefix : slot;
        g->blend = sp->blend_first_k < g->len ? sp->blend_first_k : g->len;
        slot += g->len;
        if (g->len > longest) longest = g->len;
    }
    p->q_slot = slot;
    p->q_rope = sp->positions == WICK_POSITIONS_SHARED ? p->n_prefix + longest : slot;
    /* the anchor */
    const int32_t *a = NULL;
    int na = 0;
    const int32_t bos = c->m->tok ? tok_bos(c->m->tok) : -1;
    switch (sp->anchor) {
    case WICK_ANCHOR_PREFIX: a = sp->prefix, na = sp->n_prefix; break;
    case WICK_ANCHOR_BOS: a = bos >= 0 ? &bos : NULL, na = bos >= 0 ? 1 : 0; break;
    case WICK_ANCHOR_NONE: break;
    case WICK_ANCHOR_IDS: a = sp->anchor_ids, na = sp->n_anchor_ids; break;
    }
    if (na > 0) {
        if (!(p->anchor = malloc((size_t)na * sizeof *p->anchor))) goto oom;
        memcpy(p->anchor, a, (size_t)na * sizeof *a);
    }
    p->n_anchor = na;
    if (na + longest > c->n_ctx) {
        wick_fail_code(err, WICK_E_TOO_LONG, "anchor (%d tokens) and the longest span (%d) do not fit the context of %d", na, longest, c->n_ctx);
        span_plan_free(p);
        return NULL;
    }
    p->anchor_root = kv_root(&c->kv, salt);
    p->store_root = kv_span_root(&c->kv, salt, p->anchor, p->n_anchor);
    /* the sequence's tokens */
    int n = 0;
    if (sp->n_prefix > 0) memcpy(tokens, sp->prefix, (size_t)sp->n_prefix * sizeof *tokens);
    n += sp->n_prefix;
    for (int k = 0; k < p->n_spans; k++) {
        memcpy(tokens + n, p->spans[k].tokens, (size_t)p->spans[k].len * sizeof *tokens);
        n += p->spans[k].len;
    }
    memcpy(tokens + n, sp->suffix, (size_t)sp->n_suffix * sizeof *tokens);
    *n_tokens = n + sp->n_suffix;
    return p;
oom:
    span_plan_free(p);
    wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    return NULL;
}

int32_t span_rope_pos(const span_plan *p, int slot) {
    if (slot < p->n_prefix) return slot;
    if (slot >= p->q_slot) return p->q_rope + (slot - p->q_slot);
    for (int k = 0; k < p->n_spans; k++) {
        const span_seg *g = &p->spans[k];
        if (slot < g->slot + g->len) return g->rope + (slot - g->slot);
    }
    return slot; /* not reached */
}

int span_next_placed(const span_plan *p, int from) {
    for (int k = 0; k < p->n_spans; k++) {
        const span_seg *g = &p->spans[k];
        if (g->blend < g->len && g->slot + g->blend >= from) return g->slot + g->blend;
    }
    return INT32_MAX;
}

int span_blocks_needed(const span_plan *p, int from) {
    int need = 0;
    for (int k = 0; k < p->n_spans; k++) {
        const span_seg *g = &p->spans[k];
        if (g->blend >= g->len || g->slot + g->blend < from) continue;
        const int b = (p->n_anchor + g->len + KV_BLOCK_SIZE - 1) / KV_BLOCK_SIZE + (g->len + KV_BLOCK_SIZE - 1) / KV_BLOCK_SIZE;
        if (b > need) need = b;
    }
    return need;
}

/* ---- computing a span in isolation ---- */

int span_job_start(wick_context *c, const span_plan *p, const span_seg *g, wick_error *err) {
    kv_cache *kv = &c->kv;
    const int iso = c->span_iso, pre = c->span_pre;
    kv_release(kv, pre, KV_NO_LIMIT, false);
    kv_release(kv, iso, KV_NO_LIMIT, false);
    if (kv->pc && !c->no_span_cache) kv_attach(kv, pre, p->store_root, g->tokens, 0, KV_NO_LIMIT); /* its chain's root, nothing held */
    kv_attach(kv, iso, p->anchor_root, p->anchor, p->n_anchor, KV_NO_LIMIT); /* the anchor's cached blocks */
    if (kv_reserve(kv, iso, p->n_anchor + g->len, err) < 0 || kv_reserve(kv, pre, g->len, err) < 0) {
        span_job_abort(c);
        wick_fail(err, "no KV blocks left to compute a span of %d tokens (raise the KV budget)", g->len);
        return SPAN_NO_BLOCKS;
    }
    return 0;
}

int32_t span_job_token(const span_plan *p, const span_seg *g, int i) {
    return i < p->n_anchor ? p->anchor[i] : g->tokens[i - p->n_anchor];
}

void span_job_abort(wick_context *c) {
    kv_cache *kv = &c->kv;
    kv_release(kv, c->span_iso, 0, false);
    kv_release(kv, c->span_pre, 0, false);
}

/* ---- placement ---- */

/* Rows [g->blend, g->len) of the span (held by sequence src) to slots g->slot + row
 * of seq: V copied, K converted to float, rotated by the forward pass's
 * rope_rotate with the angles of its placed position, and stored back. The
 * work is split by (layer, KV head): each unit streams its runs of K and V
 * rows in order. */
typedef struct place_job {
    wick_context *c;
    const span_seg *g;
    int src, seq;
    const float *cs, *sn; /* [rope sets][rows][rot_dim / 2]: angles of each placed row */
} place_job;

static void place_task(void *arg, int ith, int nth) {
    const place_job *j = arg;
    const wick_model *m = j->c->m;
    kv_cache *kv = &j->c->kv;
    const span_seg *g = j->g;
    const int hd = kv->pool.head_dim, half = m->hp.rot_dim / 2, rows = g->len - g->blend;
    const size_t row_bytes = (size_t)hd * kv->pool.elem_bytes;
    int64_t lo, hi;
    pool_split((int64_t)kv->pool.n_layer * kv->pool.n_kv_heads, ith, nth, 1, &lo, &hi);
    for (int64_t u = lo; u < hi; u++) {
        const int il = (int)(u / kv->pool.n_kv_heads), h = (int)(u % kv->pool.n_kv_heads);
        const attn_kv src = kv_view(kv, il, j->src), dst = kv_view(kv, il, j->seq);
        /* the layer's RoPE set, as the forward pass rotates it (Gemma 3's local layers) */
        const size_t set_off = hparams_layer_rope_local(&m->hp, il) ? (size_t)rows * half : 0;
        /* V: runs of rows contiguous in both sequences, one copy each */
        for (int r = 0; r < rows;) {
            const int row = g->blend + r, slot = g->slot + row;
            int n = KV_BLOCK_SIZE - row % KV_BLOCK_SIZE;
            if (KV_BLOCK_SIZE - slot % KV_BLOCK_SIZE < n) n = KV_BLOCK_SIZE - slot % KV_BLOCK_SIZE;
            if (rows - r < n) n = rows - r;
            memcpy((char *)attn_kv_at(&dst, dst.v, slot, h), attn_kv_at(&src, src.v, row, h), (size_t)n * row_bytes);
            r += n;
        }
        /* K: rotated row by row, straight into place */
        for (int r = 0; r < rows; r++) {
            const int row = g->blend + r, slot = g->slot + row;
            const char *ks = attn_kv_at(&src, src.k, row, h);
            char *kd = (char *)attn_kv_at(&dst, dst.k, slot, h);
            const float *cs = j->cs + set_off + (size_t)r * half, *sn = j->sn + set_off + (size_t)r * half;
            if (kv->pool.type == WICK_F16) {
                rope_rotate_f16(&m->tuning, (const uint16_t *)ks, (uint16_t *)kd, hd, m->hp.rot_dim, cs, sn, m->rope);
            } else {
                memcpy(kd, ks, row_bytes);
                rope_rotate(&m->tuning, (float *)kd, 1, hd, m->hp.rot_dim, 0, half, cs, sn, m->rope);
            }
        }
    }
}

/* Place g's stored rows (held by sequence src) into seq. */
static int place(wick_context *c, const span_seg *g, int src, int seq, wick_error *err) {
    const wick_model *m = c->m;
    const int half = m->hp.rot_dim / 2, rows = g->len - g->blend, n_sets = model_n_rope_sets(m);
    float *cs = malloc(sizeof(float) * (size_t)rows * (size_t)half * 2 * (size_t)n_sets);
    if (!cs) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    float *sn = cs + (size_t)rows * half * n_sets;
    for (int set = 0; set < n_sets; set++)
        for (int r = 0; r < rows; r++) {
            const size_t o = ((size_t)set * rows + r) * half;
            forward_rope_angles(m, &c->fs, set, g->rope + g->blend + r, cs + o, sn + o);
        }
    place_job j = {c, g, src, seq, cs, sn};
    pool_run(c->pool, place_task, &j);
    free(cs);
    return 0;
}

span_seg *span_at(span_plan *p, int frontier) {
    for (int k = 0; k < p->n_spans; k++)
        if (p->spans[k].slot + p->spans[k].blend == frontier && p->spans[k].blend < p->spans[k].len) return &p->spans[k];
    return NULL;
}

/* Place g from sequence src (c->span_pre or c->span_look) into seq, then
 * let src go (its rows enter the span cache unless it is off). Returns the
 * new frontier. */
static int place_and_release(wick_context *c, span_seg *g, int src, int seq, bool hit, int *hits, int *queries,
                             wick_error *err) {
    kv_cache *kv = &c->kv;
    const bool store = kv->pc && !c->no_span_cache;
    if (!g->counted) {
        g->counted = true;
        *queries += g->len - g->blend;
        if (hit) *hits += g->len - g->blend;
    }
    const int rc = place(c, g, src, seq, err);
    kv_release(kv, src, store && rc >= 0 ? KV_NO_LIMIT : 0, true); /* silent: the span's rows, not a prefix to announce */
    if (rc < 0) return -1;
    kv_record(kv, seq, g->slot + g->blend, g->tokens + g->blend, g->len - g->blend);
    return kv_seq_len(kv, seq);
}

int span_place_cached(wick_context *c, span_plan *p, span_seg *g, int seq, int *hits, int *queries, wick_error *err) {
    kv_cache *kv = &c->kv;
    if (kv_seq_len(kv, seq) != g->slot + g->blend) return wick_fail_code(err, WICK_E_INTERNAL, "internal: span placed at slot %d, not %d", kv_seq_len(kv, seq), g->slot + g->blend);
    if (!kv->pc || c->no_span_cache) return SPAN_MISS;
    const int look = c->span_look;
    const int have = kv_attach_read(kv, look, p->store_root, g->tokens, g->len, true); /* silent: a span's rows */
    if (have < g->len) {
        kv_release(kv, look, KV_NO_LIMIT, false); /* a partial match: the span is computed whole */
        return SPAN_MISS;
    }
    return place_and_release(c, g, look, seq, true, hits, queries, err);
}

int span_job_finish(wick_context *c, span_plan *p, span_seg *g, int seq, int *hits, int *queries, wick_error *err) {
    kv_cache *kv = &c->kv;
    const int iso = c->span_iso, pre = c->span_pre;
    kv_record(kv, pre, 0, g->tokens, g->len);
    /* Only the anchor is an ordinary prefix worth keeping. */
    kv_release(kv, iso, p->n_anchor, false);
    return place_and_release(c, g, pre, seq, false, hits, queries, err);
}
