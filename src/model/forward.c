/* forward.c — the transformer forward pass (see forward.h). Loops read like
 * the math; heavy lifting is in kernels/.
 *
 * Threading: matmuls and attention split their own work over the pool. The
 * small row ops (embedding, RMSNorm, bias, q/k norm, RoPE, K/V store, SiLU,
 * residual adds) are grouped into a few "row stages", each one pool hand-off
 * split over the batch's token rows; with one token (decode) a stage runs on
 * the calling thread, since a hand-off costs more than the work. Q/K/V and
 * gate/up are one matmul_multi hand-off each, so a decode layer costs six
 * hand-offs: QKV, attention, wo, gate+up, down, and none for the row ops.
 *
 * Profiling (o->prof non-NULL): every op is timed on the calling thread,
 * stages are not fused (so each op type gets its own time), and the totals
 * go to o->prof. */
#include "model/forward.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/error.h"
#include "kernels/attention.h"
#include "kernels/convert.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "model/moe.h"

#define ALIGN_UP(n) (((n) + 63) & ~(size_t)63)
/* Row stages with fewer tokens than this run on the calling thread. */
#define ROW_STAGE_MIN_TOKENS 4

int forward_scratch_init(forward_scratch *s, const wick_model *m, int max_tokens, int max_logits,
                         wick_error *err) {
    memset(s, 0, sizeof *s);
    const hparams *hp = &m->hp;
    size_t T = (size_t)max_tokens, L = (size_t)max_logits;
    size_t q_dim = (size_t)model_q_dim(m), kv_dim = (size_t)model_kv_dim(m);
    size_t wide = (size_t)hp->n_embd > q_dim ? (size_t)hp->n_embd : q_dim;
    size_t mm = 0;
    for (int il = 0; il < hp->n_layer; il++) {
        const layer_weights *w = &m->layers[il];
        const wick_tensor *mats[] = {w->wq, w->wk, w->wv, w->wo, w->w_gate, w->w_up, w->w_down};
        for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++) {
            if (!mats[i]) continue; /* a mixture-of-experts layer's FFN (moe_scratch) */
            size_t b = matmul_scratch_bytes(mats[i]->type, (int)mats[i]->ne[0], max_tokens);
            if (b > mm) mm = b;
        }
    }
    size_t bo = matmul_scratch_bytes(m->output->type, hp->n_embd, max_logits);
    if (bo > mm) mm = bo;
    const size_t half = (size_t)(hp->rot_dim / 2) * (size_t)model_n_rope_sets(m);
    /* Live for the whole pass: x, xb, the RoPE angles, the output's inputs and
     * the matmul scratch. The rest is one shared region, since its three
     * groups are never live at once: q, k, v and att (attention), hb and hb2
     * (feed-forward), and the logits (after the last layer, read by the
     * caller before the next pass). */
    size_t attn_sizes[] = {T * q_dim * 4, T * kv_dim * 4, T * kv_dim * 4, T * q_dim * 4};
    size_t ffn_sizes[] = {T * hp->n_ff * 4, T * hp->n_ff * 4};
    size_t attn_bytes = 0, ffn_bytes = 0;
    for (size_t i = 0; i < 4; i++) attn_bytes += ALIGN_UP(attn_sizes[i]);
    for (size_t i = 0; i < 2; i++) ffn_bytes += ALIGN_UP(ffn_sizes[i]);
    size_t shared = ALIGN_UP(L * hp->n_vocab * 4);
    if (attn_bytes > shared) shared = attn_bytes;
    if (ffn_bytes > shared) shared = ffn_bytes;
    size_t sizes[] = {T * hp->n_embd * 4, T * wide * 4, L * hp->n_embd * 4, mm, T * half * 4, T * half * 4, shared};
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) total += ALIGN_UP(sizes[i]);
    char *p = aligned_alloc(64, total ? total : 64);
    if (!p) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory allocating %zu MiB of activation scratch", total >> 20);
    s->block = p;
    void **slots[] = {(void **)&s->x, (void **)&s->xb, (void **)&s->out_in, &s->mm, (void **)&s->rope_cs,
                      (void **)&s->rope_sn, NULL};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (slots[i]) *slots[i] = p;
        if (i + 1 < sizeof sizes / sizeof sizes[0]) p += ALIGN_UP(sizes[i]);
    }
    /* p: the shared region */
    s->logits = (float *)p;
    float **attn[] = {&s->q, &s->k, &s->v, &s->att};
    char *r = p;
    for (size_t i = 0; i < 4; i++) {
        *attn[i] = (float *)r;
        r += ALIGN_UP(attn_sizes[i]);
    }
    s->hb = (float *)p;
    s->hb2 = (float *)(p + ALIGN_UP(ffn_sizes[0]));
    s->mm_bytes = mm;
    s->max_tokens = max_tokens;
    s->max_logits = max_logits;
    if (moe_scratch_init(&s->moe, m, max_tokens, err) < 0) {
        forward_scratch_free(s);
        return -1;
    }
    return 0;
}

void forward_scratch_free(forward_scratch *s) {
    moe_scratch_free(s->moe);
    free(s->block);
    memset(s, 0, sizeof *s);
}

void forward_scratch_set_ctx(forward_scratch *s, const wick_model *m, int n_ctx) {
    s->rope_long = m->inv_freq_long && n_ctx > m->hp.rope_orig_ctx;
}

void forward_rope_angles(const wick_model *m, const forward_scratch *s, int set, int32_t pos, float *cs, float *sn) {
    const int half = m->hp.rot_dim / 2;
    const double mscale = forward_rope_mscale(m, set);
    if (mscale == 1.0) rope_angles(pos, forward_rope_freqs(m, s, set), 0, half, cs, sn);
    else rope_angles_scaled(pos, forward_rope_freqs(m, s, set), mscale, 0, half, cs, sn);
}

/* ---- row stages ---- */

/* In the order a fused stage applies them (and profiling runs them). */
enum {
    ST_EMBED = 1 << 0,    /* x[t] = embedding row of token t (× embd_scale); RoPE angles of its position */
    ST_POST_NORM = 1 << 1, /* xb[t] = rmsnorm(xb[t]) * post_w (Gemma's post-norms) */
    ST_RESID = 1 << 2,    /* x[t] += xb[t] (× resid_scale) */
    ST_NORM = 1 << 3,     /* xb[t] = rmsnorm(x[t]) * norm_w */
    ST_BIAS = 1 << 4,     /* q/k/v += biases */
    ST_QKNORM = 1 << 5,   /* per-head RMSNorm of q and k (Qwen3, Gemma 3) */
    ST_ROPE = 1 << 6,     /* rotate q and k */
    ST_STORE = 1 << 7,    /* write k/v rows into the KV cache */
    ST_GLU = 1 << 8,      /* hb = act(hb) * hb2 (SwiGLU / GeGLU) */
    ST_LAST = ST_GLU,
};

typedef struct stage_job {
    unsigned ops;
    const wick_model *m;
    const layer_weights *w;
    const float *norm_w, *post_w;
    kv_cache *kv;
    forward_scratch *s;
    const wick_batch *b;
    int il;
    const fwd_capture *capture; /* the call's K / V capture (NULL = none) */
} stage_job;

static void head_norm(const kernel_tuning *kt, float *x, const float *w, int n_heads, int head_dim, float eps) {
    for (int h = 0; h < n_heads; h++) rmsnorm(kt, x + (size_t)h * head_dim, x + (size_t)h * head_dim, w, head_dim, eps);
}

static void stage_rows(const stage_job *j, int t0, int t1) {
    const wick_model *m = j->m;
    const kernel_tuning *kt = &m->tuning;
    const hparams *hp = &m->hp;
    forward_scratch *s = j->s;
    const wick_batch *b = j->b;
    const layer_weights *w = j->w;
    const int D = hp->n_embd, q_dim = model_q_dim(m), kv_dim = model_kv_dim(m), F = hp->n_ff;
    const int half = hp->rot_dim / 2, n_sets = model_n_rope_sets(m);
    /* this layer's RoPE set: Gemma 3's sliding layers use the local one */
    const int set = (j->ops & ST_ROPE) && hparams_layer_rope_local(hp, j->il) ? 1 : 0;
    for (int t = t0; t < t1; t++) {
        float *x = s->x + (size_t)t * D, *xb = s->xb + (size_t)t * D;
        float *q = s->q + (size_t)t * q_dim, *k = s->k + (size_t)t * kv_dim, *v = s->v + (size_t)t * kv_dim;
        float *cs = s->rope_cs + (size_t)t * half * n_sets, *sn = s->rope_sn + (size_t)t * half * n_sets;
        if (j->ops & ST_EMBED) {
            matmul_weight_row(m->tok_embd, b->tokens[t], x);
            if (hp->embd_scale != 1.0f) vec_scale(x, D, hp->embd_scale);
            for (int r = 0; r < n_sets; r++) /* for every layer */
                forward_rope_angles(m, s, r, b->rope_pos ? b->rope_pos[t] : b->pos[t], cs + r * half, sn + r * half);
        }
        if (j->ops & ST_POST_NORM) rmsnorm(kt, xb, xb, j->post_w, D, hp->rms_eps);
        if (j->ops & ST_RESID) {
            if (hp->resid_scale == 1.0f) vec_add(x, xb, D);
            else vec_add_scaled(x, xb, hp->resid_scale, D);
        }
        if (j->ops & ST_NORM) rmsnorm(kt, xb, x, j->norm_w, D, hp->rms_eps);
        if (j->ops & ST_BIAS) {
            if (w->bq) vec_add(q, w->bq, q_dim);
            if (w->bk) vec_add(k, w->bk, kv_dim);
            if (w->bv) vec_add(v, w->bv, kv_dim);
        }
        if (j->ops & ST_QKNORM) {
            if (w->q_norm) head_norm(kt, q, w->q_norm, hp->n_head, hp->head_dim, hp->rms_eps);
            if (w->k_norm) head_norm(kt, k, w->k_norm, hp->n_head_kv, hp->head_dim, hp->rms_eps);
        }
        if (j->ops & ST_ROPE) {
            const fwd_capture *cap = j->capture;
            if (cap && b->seq[t] == cap->seq && b->pos[t] >= cap->from)
                kv_store(j->kv, j->il, cap->dst, b->pos[t] - cap->from, k, v);
            rope_rotate(kt, q, hp->n_head, hp->head_dim, hp->rot_dim, 0, half, cs + set * half, sn + set * half, m->rope);
            rope_rotate(kt, k, hp->n_head_kv, hp->head_dim, hp->rot_dim, 0, half, cs + set * half, sn + set * half, m->rope);
        }
        if (j->ops & ST_STORE) {
            kv_store(j->kv, j->il, b->seq[t], b->pos[t], k, v);
        }
        if (j->ops & ST_GLU) {
            if (m->arch->act == FFN_GELU_TANH) gelu_mul(kt, s->hb + (size_t)t * F, s->hb2 + (size_t)t * F, F);
            else silu_mul(kt, s->hb + (size_t)t * F, s->hb2 + (size_t)t * F, F);
        }
    }
}

static void stage_task(void *arg, int ith, int nth) {
    const stage_job *j = arg;
    int64_t lo, hi;
    pool_split(j->b->n, ith, nth, 1, &lo, &hi);
    if (hi > lo) stage_rows(j, (int)lo, (int)hi);
}


/* The op type a stage's time is booked to when profiling (one op per stage then). */
static int stage_op(unsigned ops) {
    if (ops & ST_NORM || ops & ST_QKNORM || ops & ST_POST_NORM) return WICK_OP_NORM;
    if (ops & ST_ROPE) return WICK_OP_ROPE;
    return WICK_OP_ELEMENTWISE;
}

typedef struct fwd {
    const wick_model *m;
    kv_cache *kv;
    forward_scratch *s;
    wick_pool *pool;
    const wick_batch *b;
    const fwd_capture *capture;
    wick_profile *prof;
    double t;  /* profiling: time of the last mark */
} fwd;

static void mark(fwd *f, int op) {
    if (!f->prof) return;
    double t = wick_now_ms();
    f->prof->ms[op] += t - f->t;
    f->t = t;
}

/* Run the ops of a row stage: fused in one hand-off, or one by one when
 * profiling. A post_w adds ST_POST_NORM (the norm of xb before the residual add). */
static void stage(fwd *f, unsigned ops, const layer_weights *w, const float *norm_w, const float *post_w, int il) {
    if (post_w) ops |= ST_POST_NORM;
    stage_job j = {0, f->m, w, norm_w, post_w, f->kv, f->s, f->b, il, f->capture};
    wick_pool *pool = f->b->n >= ROW_STAGE_MIN_TOKENS ? f->pool : NULL;
    if (!f->prof) {
        j.ops = ops;
        pool_run(pool, stage_task, &j);
        return;
    }
    for (unsigned bit = 1; bit <= ST_LAST; bit <<= 1) {
        if (!(ops & bit)) continue;
        j.ops = bit;
        pool_run(pool, stage_task, &j);
        mark(f, stage_op(bit));
    }
}

int forward(const wick_model *m, kv_cache *kv, forward_scratch *s, wick_pool *pool, const wick_batch *b,
            const fwd_opts *o, wick_error *err) {
    static const fwd_opts none = {0};
    if (!o) o = &none;
    const hparams *hp = &m->hp;
    const int T = b->n, D = hp->n_embd, q_dim = model_q_dim(m), kv_dim = model_kv_dim(m);
    if (T <= 0 || T > s->max_tokens)
        return wick_fail(err, "batch of %d tokens exceeds the context's batch capacity %d", T,
                         s->max_tokens);
    fwd f = {m, kv, s, pool, b, o->capture, o->prof, o->prof ? wick_now_ms() : 0};

    attn_params ap = {
        .n_heads = hp->n_head,
        .n_kv_heads = hp->n_head_kv,
        .head_dim = hp->head_dim,
        .scale = hp->attn_scale,
        .softcap = hp->attn_softcap,
    };

    /* Embedding lookup, fused with the first layer's attention norm. */
    stage(&f, ST_EMBED | ST_NORM, &m->layers[0], m->layers[0].attn_norm, NULL, 0);
    const int n_layer = o->n_layer > 0 && o->n_layer < hp->n_layer ? o->n_layer : hp->n_layer;
    for (int il = 0; il < n_layer; il++) {
        const layer_weights *w = &m->layers[il];
        ap.window = hparams_layer_window(hp, il);
        /* Attention block: xb = norm(x) is ready. */
        const wick_tensor *qkv[3] = {w->wq, w->wk, w->wv};
        float *const qkv_out[3] = {s->q, s->k, s->v};
        const int qkv_ld[3] = {q_dim, kv_dim, kv_dim};
        matmul_multi(&m->tuning, pool, qkv, 3, s->xb, T, qkv_out, qkv_ld, s->mm);
        mark(&f, WICK_OP_MATMUL);
        stage(&f, ST_BIAS | ST_QKNORM | ST_ROPE | ST_STORE, w, NULL, NULL, il);
        /* Each run of tokens from one sequence attends over its own KV view;
         * the runs share pool hand-offs (a decode step of many sequences
         * would otherwise pay one per sequence and layer). */
        for (int t0 = 0; t0 < T;) {
            attn_kv views[ATTN_MULTI_MAX];
            attn_run runs[ATTN_MULTI_MAX];
            int n_runs = 0;
            while (t0 < T && n_runs < ATTN_MULTI_MAX) {
                int t1 = t0 + 1;
                while (t1 < T && b->seq[t1] == b->seq[t0]) t1++;
                views[n_runs] = kv_view(kv, il, b->seq[t0]);
                runs[n_runs] = (attn_run){s->q + (size_t)t0 * q_dim, t1 - t0, b->pos + t0, &views[n_runs],
                                          s->att + (size_t)t0 * q_dim};
                n_runs++;
                t0 = t1;
            }
            attention_multi(&m->tuning, pool, &ap, runs, n_runs);
        }
        mark(&f, WICK_OP_ATTENTION);
        matmul(&m->tuning, pool, w->wo, s->att, T, s->xb, D, s->mm);
        mark(&f, WICK_OP_MATMUL);

        /* Feed-forward block: residual, then xb = norm(x); a gated FFN (SwiGLU or
         * GeGLU) or a mixture of experts (model/moe.h). */
        stage(&f, ST_RESID | ST_NORM, w, w->ffn_norm, w->attn_post_norm, il);
        if (w->moe) {
            moe_forward(w->moe, s->moe, pool, s->xb, s->xb, T);
            mark(&f, WICK_OP_MATMUL);
        } else {
            const wick_tensor *gu[2] = {w->w_gate, w->w_up};
            float *const gu_out[2] = {s->hb, s->hb2};
            const int gu_ld[2] = {hp->n_ff, hp->n_ff};
            matmul_multi(&m->tuning, pool, gu, 2, s->xb, T, gu_out, gu_ld, s->mm);
            mark(&f, WICK_OP_MATMUL);
            stage(&f, ST_GLU, w, NULL, NULL, il);
            matmul(&m->tuning, pool, w->w_down, s->hb, T, s->xb, D, s->mm);
            mark(&f, WICK_OP_MATMUL);
        }
        /* Residual, fused with the next layer's attention norm. */
        if (il + 1 < n_layer)
            stage(&f, ST_RESID | ST_NORM, &m->layers[il + 1], m->layers[il + 1].attn_norm, w->ffn_post_norm, il + 1);
        else stage(&f, ST_RESID, w, NULL, w->ffn_post_norm, il);
    }

    /* Record what the cache now holds. */
    for (int t = 0; t < T; t++) kv_record(kv, b->seq[t], b->pos[t], &b->tokens[t], 1);

    /* Final norm and logits only for the rows asked for. */
    int n_out = 0;
    for (int t = 0; t < T; t++) {
        bool want = b->want_logits ? b->want_logits[t] : (t == T - 1);
        if (!want) continue;
        if (n_out == s->max_logits)
            return wick_fail(err, "batch asks for more than %d logit rows", s->max_logits);
        rmsnorm(&m->tuning, s->out_in + (size_t)n_out * D, s->x + (size_t)t * D, m->out_norm, D, hp->rms_eps);
        n_out++;
    }
    mark(&f, WICK_OP_NORM);
    if (n_out) matmul(&m->tuning, pool, m->output, s->out_in, n_out, s->logits, hp->n_vocab, s->mm);
    mark(&f, WICK_OP_MATMUL);
    /* Granite divides the logits by logits_scaling, Gemma 2 soft-caps them. */
    if (hp->logit_scale != 1.0f || hp->final_softcap > 0.0f) {
        for (int r = 0; r < n_out; r++) {
            float *lg = s->logits + (size_t)r * hp->n_vocab;
            if (hp->logit_scale != 1.0f) vec_scale(lg, hp->n_vocab, hp->logit_scale);
            if (hp->final_softcap > 0.0f) softcap_row(&m->tuning, lg, hp->n_vocab, hp->final_softcap);
        }
        mark(&f, WICK_OP_ELEMENTWISE);
    }
    if (f.prof) {
        f.prof->n_forward++;
        f.prof->n_tokens += T;
    }
    return n_out;
}
