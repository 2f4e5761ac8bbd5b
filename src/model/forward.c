/* forward.c — the transformer forward pass (see forward.h). Loops read like
 * the math; heavy lifting is in kernels/. */
#include "model/forward.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "kernels/attention.h"
#include "kernels/convert.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"

#define ALIGN_UP(n) (((n) + 63) & ~(size_t)63)

int forward_scratch_init(forward_scratch *s, const wick_model *m, int max_tokens, int max_logits,
                         wick_error *err) {
    memset(s, 0, sizeof *s);
    const hparams *hp = &m->hp;
    size_t T = (size_t)max_tokens, L = (size_t)max_logits;
    size_t q_dim = (size_t)model_q_dim(m), kv_dim = (size_t)model_kv_dim(m);
    size_t wide = (size_t)hp->n_embd > q_dim ? (size_t)hp->n_embd : q_dim;
    size_t mm = 0;
    const layer_weights *w = &m->layers[0];
    const wick_tensor *mats[] = {w->wq, w->wk, w->wv, w->wo, w->w_gate, w->w_up, w->w_down};
    for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++) {
        size_t b = matmul_scratch_bytes(mats[i]->type, (int)mats[i]->ne[0], max_tokens);
        if (b > mm) mm = b;
    }
    size_t bo = matmul_scratch_bytes(m->output->type, hp->n_embd, max_logits);
    if (bo > mm) mm = bo;
    size_t sizes[] = {
        T * hp->n_embd * 4, T * wide * 4,      T * q_dim * 4,         T * kv_dim * 4,
        T * kv_dim * 4,     T * q_dim * 4,     T * hp->n_ff * 4,      T * hp->n_ff * 4,
        L * hp->n_embd * 4, L * hp->n_vocab * 4, mm,
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) total += ALIGN_UP(sizes[i]);
    char *p = aligned_alloc(64, total ? total : 64);
    if (!p) return wick_fail(err, "out of memory allocating %zu MiB of activation scratch", total >> 20);
    s->block = p;
    void **slots[] = {(void **)&s->x,  (void **)&s->xb,  (void **)&s->q,      (void **)&s->k,
                      (void **)&s->v,  (void **)&s->att, (void **)&s->hb,     (void **)&s->hb2,
                      (void **)&s->out_in, (void **)&s->logits, &s->mm};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        *slots[i] = p;
        p += ALIGN_UP(sizes[i]);
    }
    s->mm_bytes = mm;
    s->max_tokens = max_tokens;
    s->max_logits = max_logits;
    return 0;
}

void forward_scratch_free(forward_scratch *s) {
    free(s->block);
    memset(s, 0, sizeof *s);
}

static void add_bias(float *y, const float *b, int n_rows, int dim) {
    if (!b) return;
    for (int t = 0; t < n_rows; t++) vec_add(y + (size_t)t * dim, b, dim);
}

/* Per-head RMSNorm (Qwen3) of n_rows rows of n_heads heads. */
static void head_norm(float *x, const float *w, int n_rows, int n_heads, int head_dim, float eps) {
    for (int i = 0; i < n_rows * n_heads; i++) rmsnorm(x + (size_t)i * head_dim, x + (size_t)i * head_dim, w, head_dim, eps);
}

static void store_kv(kv_cache *kv, int il, const wick_batch *b, const float *k, const float *v,
                     int kv_dim) {
    for (int t = 0; t < b->n; t++) {
        memcpy(kv_k_row(kv, il, b->seq[t], b->pos[t]), k + (size_t)t * kv_dim, (size_t)kv_dim * 4);
        memcpy(kv_v_row(kv, il, b->seq[t], b->pos[t]), v + (size_t)t * kv_dim, (size_t)kv_dim * 4);
    }
}

int forward(const wick_model *m, kv_cache *kv, forward_scratch *s, wick_pool *pool,
            const wick_batch *b, wick_error *err) {
    const hparams *hp = &m->hp;
    const int T = b->n, D = hp->n_embd, q_dim = model_q_dim(m), kv_dim = model_kv_dim(m);
    if (T <= 0 || T > s->max_tokens)
        return wick_fail(err, "batch of %d tokens exceeds the context's batch capacity %d", T,
                         s->max_tokens);

    /* Embedding lookup. */
    size_t emb_row = dtype_row_bytes(m->tok_embd->type, D);
    for (int t = 0; t < T; t++)
        dequantize_row(m->tok_embd->type, (const char *)m->tok_embd->data + (size_t)b->tokens[t] * emb_row,
                       s->x + (size_t)t * D, D);

    attn_params ap = {
        .n_heads = hp->n_head,
        .n_kv_heads = hp->n_head_kv,
        .head_dim = hp->head_dim,
        .scale = 1.0f / sqrtf((float)hp->head_dim),
        .window = hp->sliding_window,
    };

    for (int il = 0; il < hp->n_layer; il++) {
        const layer_weights *w = &m->layers[il];
        /* Attention block. */
        for (int t = 0; t < T; t++) rmsnorm(s->xb + (size_t)t * D, s->x + (size_t)t * D, w->attn_norm, D, hp->rms_eps);
        matmul(pool, w->wq, s->xb, T, s->q, q_dim, s->mm);
        matmul(pool, w->wk, s->xb, T, s->k, kv_dim, s->mm);
        matmul(pool, w->wv, s->xb, T, s->v, kv_dim, s->mm);
        add_bias(s->q, w->bq, T, q_dim);
        add_bias(s->k, w->bk, T, kv_dim);
        add_bias(s->v, w->bv, T, kv_dim);
        if (w->q_norm) head_norm(s->q, w->q_norm, T, hp->n_head, hp->head_dim, hp->rms_eps);
        if (w->k_norm) head_norm(s->k, w->k_norm, T, hp->n_head_kv, hp->head_dim, hp->rms_eps);
        rope(s->q, T, q_dim, hp->n_head, hp->head_dim, hp->rot_dim, b->pos, m->inv_freq, m->rope);
        rope(s->k, T, kv_dim, hp->n_head_kv, hp->head_dim, hp->rot_dim, b->pos, m->inv_freq, m->rope);
        store_kv(kv, il, b, s->k, s->v, kv_dim);
        /* One attention call per run of tokens from the same sequence. */
        for (int t0 = 0; t0 < T;) {
            int t1 = t0 + 1;
            while (t1 < T && b->seq[t1] == b->seq[t0]) t1++;
            attn_kv view = kv_view(kv, il, b->seq[t0]);
            attention(pool, &ap, s->q + (size_t)t0 * q_dim, t1 - t0, b->pos + t0, &view,
                      s->att + (size_t)t0 * q_dim);
            t0 = t1;
        }
        matmul(pool, w->wo, s->att, T, s->xb, D, s->mm);
        for (int t = 0; t < T; t++) vec_add(s->x + (size_t)t * D, s->xb + (size_t)t * D, D);

        /* Feed-forward block (SwiGLU). */
        for (int t = 0; t < T; t++) rmsnorm(s->xb + (size_t)t * D, s->x + (size_t)t * D, w->ffn_norm, D, hp->rms_eps);
        matmul(pool, w->w_gate, s->xb, T, s->hb, hp->n_ff, s->mm);
        matmul(pool, w->w_up, s->xb, T, s->hb2, hp->n_ff, s->mm);
        silu_mul(s->hb, s->hb2, T * hp->n_ff);
        matmul(pool, w->w_down, s->hb, T, s->xb, D, s->mm);
        for (int t = 0; t < T; t++) vec_add(s->x + (size_t)t * D, s->xb + (size_t)t * D, D);
    }

    /* Record what the cache now holds. */
    for (int t = 0; t < T; t++) {
        int sq = b->seq[t];
        kv_seq_tokens(kv, sq)[b->pos[t]] = b->tokens[t];
        if (b->pos[t] + 1 > kv->len[sq]) kv->len[sq] = b->pos[t] + 1;
    }

    /* Final norm and logits only for the rows asked for. */
    int n_out = 0;
    for (int t = 0; t < T; t++) {
        bool want = b->want_logits ? b->want_logits[t] : (t == T - 1);
        if (!want) continue;
        if (n_out == s->max_logits)
            return wick_fail(err, "batch asks for more than %d logit rows", s->max_logits);
        rmsnorm(s->out_in + (size_t)n_out * D, s->x + (size_t)t * D, m->out_norm, D, hp->rms_eps);
        n_out++;
    }
    if (n_out) matmul(pool, m->output, s->out_in, n_out, s->logits, hp->n_vocab, s->mm);
    return n_out;
}
