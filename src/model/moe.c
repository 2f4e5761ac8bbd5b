/* moe.c — the mixture-of-experts feed-forward step (see moe.h): routing,
 * grouping a batch's tokens by expert, the experts' matmuls, and the
 * weighted sum.
 *
 * Per slice of T tokens: (1) router logits, one matmul; (2) each token's k
 * experts and weights (moe_route) and the shared expert's gate; (3) a
 * counting sort of the T·k (token, rank) pairs by expert, tokens ascending
 * within an expert, so each used expert's tokens are one contiguous run of
 * "sorted rows"; (4) the inputs of experts with two or more tokens gathered
 * into that order (an expert with one token reads the token's row where it
 * is: decode copies nothing); (5) every used expert's gate and up, and the
 * shared expert's, in one matmul_grouped hand-off; SiLU gating; every down
 * in a second hand-off; (6) out[t] = Σ_r w[t][r] · y[row_of(t, r)] in rank
 * order r = 0..k-1, then + shared_w[t] · ys[t].
 *
 * Exactness: a token's router logits, expert outputs and shared output are
 * matmul rows, which do not depend on the other rows of the call
 * (kernels/matmul.h); its sum runs in a fixed order over its own values. So
 * its output is the same bits whatever else is in the batch, however the
 * batch is sliced, and whatever the thread count.
 *
 * Decode reads only the chosen experts' weights; nothing allocates after
 * moe_scratch_init. */
#include "model/moe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "kernels/ops.h"
#include "model/model.h"

#define MOE_SLICE_TOKENS 256 /* tokens routed per slice (bounds the scratch) */
#define MOE_ROW_STAGE_MIN_TOKENS 4 /* row stages of fewer tokens run on the calling thread (as forward.c's) */
#define ALIGN64(n) (((n) + 63) & ~(size_t)63)

size_t moe_decode_bytes(const moe_weights *mw) {
    size_t b = mw->router->nbytes;
    for (int i = 0; i < 3; i++) {
        b += (size_t)mw->n_used * mw->experts[i][0]->nbytes;
        if (mw->shared[i]) b += mw->shared[i]->nbytes;
    }
    return b;
}

size_t moe_all_bytes(const moe_weights *mw) {
    size_t b = mw->router->nbytes;
    for (int i = 0; i < 3; i++) {
        for (int e = 0; e < mw->n_expert; e++) b += mw->experts[i][e]->nbytes;
        if (mw->shared[i]) b += mw->shared[i]->nbytes;
    }
    return b;
}

/* ---- scratch ---- */

static size_t grouped_bound(const wick_tensor *W, int rows, int blocks) {
    return W ? matmul_grouped_scratch_bound(W->type, (int)W->ne[0], rows, blocks) : 0;
}

int moe_scratch_init(moe_scratch **out, const wick_model *m, int max_tokens, wick_error *err) {
    *out = NULL;
    const hparams *hp = &m->hp;
    const moe_weights *any = NULL;
    for (int il = 0; il < hp->n_layer && !any; il++) any = m->layers[il].moe;
    if (!any) return 0;
    moe_scratch *ms = calloc(1, sizeof *ms);
    if (!ms) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    const int S = max_tokens < MOE_SLICE_TOKENS ? max_tokens : MOE_SLICE_TOKENS;
    const int E = hp->n_expert, k = hp->n_expert_used, D = hp->n_embd, F = hp->n_ff_exp;
    const int Fs = any->shared[0] ? hp->n_ff_shexp : 0;
    const size_t SK = (size_t)S * k;
    /* matmul scratch: the router's, or either grouped hand-off's, of any layer */
    size_t mm = 0;
    for (int il = 0; il < hp->n_layer; il++) {
        const moe_weights *w = m->layers[il].moe;
        if (!w) continue;
        const int rows = (int)SK + S, blocks = (int)SK + 2;
        size_t r = matmul_scratch_bytes(w->router->type, D, S);
        size_t gu = grouped_bound(w->experts[MOE_GATE][0], rows, blocks) + grouped_bound(w->experts[MOE_UP][0], rows, blocks) +
                    grouped_bound(w->shared[MOE_GATE], S, 1) + grouped_bound(w->shared[MOE_UP], S, 1);
        size_t dn = grouped_bound(w->experts[MOE_DOWN][0], rows, blocks) + grouped_bound(w->shared[MOE_DOWN], S, 1);
        if (r > mm) mm = r;
        if (gu > mm) mm = gu;
        if (dn > mm) mm = dn;
    }
    const size_t sizes[] = {
        (size_t)S * E * 4, SK * 4, SK * 4, (size_t)S * 4, ((size_t)E + 1) * 4, (size_t)E * 4, SK * 4, SK * 4,
        SK * D * 4, SK * F * 4, SK * F * 4, SK * D * 4, (size_t)S * Fs * 4, (size_t)S * Fs * 4, (size_t)S * D * 4,
        ((size_t)2 * E + 2) * sizeof(mm_task), mm};
    void **slots[] = {(void **)&ms->logits, (void **)&ms->ids, (void **)&ms->wts, (void **)&ms->shared_w,
                      (void **)&ms->start, (void **)&ms->fill, (void **)&ms->row_of, (void **)&ms->tok_of,
                      (void **)&ms->xg, (void **)&ms->hg, (void **)&ms->hg2, (void **)&ms->yo, (void **)&ms->hs,
                      (void **)&ms->hs2, (void **)&ms->ys, (void **)&ms->tasks, &ms->mm};
    const size_t n_slots = sizeof sizes / sizeof sizes[0];
    _Static_assert(sizeof sizes / sizeof sizes[0] == sizeof slots / sizeof slots[0], "one slot per size");
    size_t total = 0;
    for (size_t i = 0; i < n_slots; i++) total += ALIGN64(sizes[i]);
    char *p = aligned_alloc(64, total);
    if (!p) {
        free(ms);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory allocating %zu MiB of mixture-of-experts scratch", total >> 20);
    }
    ms->block = p;
    for (size_t i = 0; i < n_slots; i++) {
        *slots[i] = p;
        p += ALIGN64(sizes[i]);
    }
    ms->mm_bytes = mm;
    ms->kt = &m->tuning;
    ms->max_tokens = S;
    ms->n_expert = E;
    ms->k = k;
    ms->n_embd = D;
    ms->n_ff = F;
    ms->n_ff_shared = Fs;
    *out = ms;
    return 0;
}

void moe_scratch_free(moe_scratch *ms) {
    if (!ms) return;
    free(ms->block);
    free(ms);
}

/* ---- routing ---- */

void moe_route(moe_gating gating, bool norm_topk, const float *logits, int n_expert, int k, int32_t *ids,
               float *wts) {
    /* top-k by logit (softmax is monotonic): best first, ties to the lower index */
    for (int r = 0; r < k; r++) {
        int best = -1;
        for (int e = 0; e < n_expert; e++) {
            bool taken = false;
            for (int q = 0; q < r && !taken; q++) taken = ids[q] == e;
            if (!taken && (best < 0 || logits[e] > logits[best])) best = e;
        }
        ids[r] = best;
    }
    if (gating == MOE_TOPK_SOFTMAX) { /* softmax over the k chosen logits */
        const float mx = logits[ids[0]];
        float sum = 0;
        for (int r = 0; r < k; r++) sum += wts[r] = expf(logits[ids[r]] - mx);
        for (int r = 0; r < k; r++) wts[r] /= sum;
        return;
    }
    /* softmax over all experts, the chosen ones' probabilities, maybe renormalized */
    float mx = logits[0];
    for (int e = 1; e < n_expert; e++)
        if (logits[e] > mx) mx = logits[e];
    float sum = 0;
    for (int e = 0; e < n_expert; e++) sum += expf(logits[e] - mx);
    float chosen = 0;
    for (int r = 0; r < k; r++) chosen += wts[r] = expf(logits[ids[r]] - mx) / sum;
    if (norm_topk)
        for (int r = 0; r < k; r++) wts[r] /= chosen;
}

/* ---- row stages (gather, SiLU, weighted sum), split over tokens or rows ---- */

typedef enum { RS_GATHER, RS_SILU, RS_SUM } row_op;

typedef struct row_job {
    row_op op;
    const moe_weights *mw;
    moe_scratch *ms;
    const float *x;
    float *out;
    int T, n_rows;
} row_job;

static void row_range(const row_job *j, int64_t lo, int64_t hi) {
    moe_scratch *ms = j->ms;
    const int D = ms->n_embd, F = ms->n_ff, k = ms->k, Fs = ms->n_ff_shared;
    switch (j->op) {
    case RS_GATHER: /* sorted rows [lo, hi) (those of one-token experts go unread) */
        for (int64_t r = lo; r < hi; r++) {
            const int t = ms->tok_of[r];
            memcpy(ms->xg + (size_t)r * D, j->x + (size_t)t * D, sizeof(float) * D);
        }
        break;
    case RS_SILU: /* sorted rows [lo, hi), then the shared expert's rows lo - n_rows.. */
        for (int64_t r = lo; r < hi; r++) {
            if (r < j->n_rows) silu_mul(ms->kt, ms->hg + (size_t)r * F, ms->hg2 + (size_t)r * F, F);
            else silu_mul(ms->kt, ms->hs + (size_t)(r - j->n_rows) * Fs, ms->hs2 + (size_t)(r - j->n_rows) * Fs, Fs);
        }
        break;
    case RS_SUM: /* tokens [lo, hi) */
        for (int64_t t = lo; t < hi; t++) {
            float *o = j->out + (size_t)t * D;
            const float *w = ms->wts + (size_t)t * k;
            const int32_t *rows = ms->row_of + (size_t)t * k;
            const float *y0 = ms->yo + (size_t)rows[0] * D;
            for (int i = 0; i < D; i++) o[i] = w[0] * y0[i];
            for (int r = 1; r < k; r++) {
                const float *y = ms->yo + (size_t)rows[r] * D;
                const float wr = w[r];
                for (int i = 0; i < D; i++) o[i] += wr * y[i];
            }
            if (j->mw->shared[0]) {
                const float *y = ms->ys + (size_t)t * D, ws = ms->shared_w[t];
                for (int i = 0; i < D; i++) o[i] += ws * y[i];
            }
        }
        break;
    }
}

static void row_task(void *arg, int ith, int nth) {
    const row_job *j = arg;
    const int64_t n = j->op == RS_SUM ? j->T : j->n_rows + (j->op == RS_SILU && j->mw->shared[0] ? j->T : 0);
    int64_t lo, hi;
    pool_split(n, ith, nth, 1, &lo, &hi);
    if (hi > lo) row_range(j, lo, hi);
}

static void row_stage(wick_pool *pool, row_job *j) {
    pool_run(j->T >= MOE_ROW_STAGE_MIN_TOKENS ? pool : NULL, row_task, j);
}

/* ---- the layer ---- */

static void add_task(moe_scratch *ms, int *nt, const wick_tensor *W, const float *x, int n, float *y, int ldy) {
    ms->tasks[(*nt)++] = (mm_task){.W = W, .x = x, .n = n, .y = y, .ldy = ldy};
}

/* The tasks in one hand-off; one matmul each should the scratch ever fall
 * short of what they need (moe_scratch_init sizes it for the worst case). */
static void run_tasks(moe_scratch *ms, wick_pool *pool, int nt) {
    if (matmul_grouped(ms->kt, pool, ms->tasks, nt, ms->mm, ms->mm_bytes) == 0) return;
    for (int i = 0; i < nt; i++)
        if (ms->tasks[i].n > 0)
            matmul(ms->kt, pool, ms->tasks[i].W, ms->tasks[i].x, ms->tasks[i].n, ms->tasks[i].y, ms->tasks[i].ldy, ms->mm);
}

static void moe_slice(const moe_weights *mw, moe_scratch *ms, wick_pool *pool, const float *x, float *out, int T) {
    const int E = mw->n_expert, k = mw->n_used, D = ms->n_embd, F = mw->n_ff, Fs = mw->n_ff_shared;
    const int n_rows = T * k;
    /* (1) router logits; (2) routes and the shared gate */
    matmul(ms->kt, pool, mw->router, x, T, ms->logits, E, ms->mm);
    for (int t = 0; t < T; t++) {
        moe_route(mw->gating, mw->norm_topk, ms->logits + (size_t)t * E, E, k, ms->ids + (size_t)t * k,
                  ms->wts + (size_t)t * k);
        if (mw->shared_gate) {
            const float *xt = x + (size_t)t * D;
            float dot = 0;
            for (int i = 0; i < D; i++) dot += mw->shared_gate[i] * xt[i];
            ms->shared_w[t] = 1.0f / (1.0f + expf(-dot));
        }
    }
    /* (3) counting sort of (token, rank) by expert */
    memset(ms->fill, 0, sizeof(int32_t) * E);
    for (int i = 0; i < n_rows; i++) ms->fill[ms->ids[i]]++;
    ms->start[0] = 0;
    for (int e = 0; e < E; e++) ms->start[e + 1] = ms->start[e] + ms->fill[e];
    memset(ms->fill, 0, sizeof(int32_t) * E);
    for (int t = 0; t < T; t++)
        for (int r = 0; r < k; r++) {
            const int e = ms->ids[(size_t)t * k + r];
            const int row = ms->start[e] + ms->fill[e]++;
            ms->row_of[(size_t)t * k + r] = row;
            ms->tok_of[row] = t;
        }
    /* (4) gather the inputs of experts with two or more tokens */
    bool gather = false;
    for (int e = 0; e < E && !gather; e++) gather = ms->fill[e] >= 2;
    if (gather) {
        row_job g = {RS_GATHER, mw, ms, x, out, T, n_rows};
        row_stage(pool, &g);
    }
    /* (5) gate and up of every used expert (and the shared one), SiLU, down */
    int nt = 0;
    for (int e = 0; e < E; e++) {
        const int n = ms->fill[e], r0 = ms->start[e];
        if (!n) continue;
        const float *xe = n == 1 ? x + (size_t)ms->tok_of[r0] * D : ms->xg + (size_t)r0 * D;
        add_task(ms, &nt, mw->experts[MOE_GATE][e], xe, n, ms->hg + (size_t)r0 * F, F);
        add_task(ms, &nt, mw->experts[MOE_UP][e], xe, n, ms->hg2 + (size_t)r0 * F, F);
    }
    if (mw->shared[0]) {
        add_task(ms, &nt, mw->shared[MOE_GATE], x, T, ms->hs, Fs);
        add_task(ms, &nt, mw->shared[MOE_UP], x, T, ms->hs2, Fs);
    }
    run_tasks(ms, pool, nt);
    row_job si = {RS_SILU, mw, ms, x, out, T, n_rows};
    row_stage(pool, &si);
    nt = 0;
    for (int e = 0; e < E; e++) {
        const int n = ms->fill[e], r0 = ms->start[e];
        if (n) add_task(ms, &nt, mw->experts[MOE_DOWN][e], ms->hg + (size_t)r0 * F, n, ms->yo + (size_t)r0 * D, D);
    }
    if (mw->shared[0]) add_task(ms, &nt, mw->shared[MOE_DOWN], ms->hs, T, ms->ys, D);
    run_tasks(ms, pool, nt);
    /* (6) the weighted sum, in rank order */
    row_job sum = {RS_SUM, mw, ms, x, out, T, n_rows};
    row_stage(pool, &sum);
}

void moe_forward(const moe_weights *mw, moe_scratch *ms, wick_pool *pool, const float *x, float *out, int T) {
    for (int t0 = 0; t0 < T; t0 += ms->max_tokens) {
        const int n = T - t0 < ms->max_tokens ? T - t0 : ms->max_tokens;
        moe_slice(mw, ms, pool, x + (size_t)t0 * ms->n_embd, out + (size_t)t0 * ms->n_embd, n);
    }
}
