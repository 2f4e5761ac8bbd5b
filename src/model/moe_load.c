/* moe_load.c — binds a mixture-of-experts layer's tensors (see moe.h,
 * loader.h): the router, the experts as GGUF's 3-D stacks
 * (blk.N.ffn_{gate,up,down}_exps.weight, ne = {cols, rows, n_expert}) or as
 * one 2-D matrix per expert (HF's mlp.experts.E.*, Mixtral's
 * block_sparse_moe.experts.E.w1/w3/w2, GGUF's older blk.N.ffn_gate.E.weight),
 * and qwen2moe's shared expert with its gate vector. A stack is kept as one
 * 2-D matrix of n_expert × rows rows, so --dtype conversion and the R16
 * repack treat it whole; each expert then gets a view of its slice (no
 * copies), which the matmul kernels take as any other matrix. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "kernels/convert.h"
#include "model/loader.h"

/* t checked against the shape {ne0, ne1, ne2} (ne2 = 0: a 2-D matrix); an
 * aligned copy if needed. NULL with err on a mismatch. */
static const wick_tensor *check_matrix(loader *L, const char *name, const wick_tensor *t, int64_t ne0, int64_t ne1,
                                       int64_t ne2) {
    if (!dtype_supported(t->type)) {
        wick_fail_code(L->err, WICK_E_UNSUPPORTED, "tensor '%s' has unsupported type %s (%s)", name,
                       t->type < 0 ? "(unknown)" : dtype_name(t->type), L->path);
        return NULL;
    }
    const int dims = ne2 ? 3 : 2;
    if (t->n_dims != dims || t->ne[0] != ne0 || t->ne[1] != ne1 || (ne2 && t->ne[2] != ne2)) {
        if (ne2)
            wick_fail(L->err, "tensor '%s' has shape ne = {%lld, %lld, %lld} (%d dims), expected {%lld, %lld, %lld} (%s)",
                      name, (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2], t->n_dims, (long long)ne0,
                      (long long)ne1, (long long)ne2, L->path);
        else
            wick_fail(L->err, "tensor '%s' has shape [%lld, %lld] (%d dims), expected [%lld, %lld] (%s)", name,
                      (long long)t->ne[1], (long long)t->ne[0], t->n_dims, (long long)ne1, (long long)ne0, L->path);
        return NULL;
    }
    if (t->ne[0] % dtype_block_elems(t->type) != 0) {
        wick_fail(L->err, "tensor '%s' row length %lld is not a multiple of the %s block (%s)", name,
                  (long long)t->ne[0], dtype_name(t->type), L->path);
        return NULL;
    }
    return loader_aligned(L, t);
}

/* The tensor of a role by name; NULL (err set when required) if absent. */
static const wick_tensor *find_role(loader *L, tensor_role role, int il, int expert, bool required, char *name,
                                    int cap) {
    if (!moe_tensor_name(name, cap, L->m->arch, L->m->format, role, il, expert)) {
        if (required) wick_fail(L->err, "no tensor name for a %s expert role (%s)", L->m->arch->name, L->path);
        return NULL;
    }
    const wick_tensor *t = loader_find(L, name);
    if (!t && required) wick_fail(L->err, "missing tensor '%s' (%s)", name, L->path);
    return t;
}

static const wick_tensor *bind_matrix(loader *L, tensor_role role, int il, int expert, int64_t ne0, int64_t ne1) {
    char name[160];
    const wick_tensor *t = find_role(L, role, il, expert, true, name, sizeof name);
    return t ? check_matrix(L, name, t, ne0, ne1, 0) : NULL;
}

/* A 3-D stack as a model-owned 2-D matrix of ne2 × ne1 rows. */
static const wick_tensor *flatten(loader *L, const wick_tensor *t) {
    wick_tensor *f = loader_own(L, malloc(sizeof *f));
    if (!f) {
        wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    *f = *t;
    f->n_dims = 2;
    f->ne[1] = t->ne[1] * t->ne[2];
    f->ne[2] = f->ne[3] = 1;
    return f;
}

/* The shared expert's gate: [n_embd] (GGUF) or [1, n_embd] (HF), as f32. */
static const float *bind_shared_gate(loader *L, int il, int64_t D) {
    char name[160];
    const wick_tensor *t = find_role(L, T_FFN_GATE_INP_SHEXP, il, 0, true, name, sizeof name);
    if (!t) return NULL;
    if (!dtype_supported(t->type) || t->ne[0] != D || t->ne[1] != 1 || t->ne[2] != 1 || t->n_dims > 2 ||
        D % dtype_block_elems(t->type) != 0) {
        wick_fail(L->err, "tensor '%s' must be a vector of %lld (%s)", name, (long long)D, L->path);
        return NULL;
    }
    float *v = loader_own(L, malloc((size_t)D * sizeof *v));
    if (!v) {
        wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    dequantize_row(t->type, t->data, v, D);
    return v;
}

int moe_bind_layer(loader *L, int il, layer_weights *w) {
    wick_model *m = L->m;
    const hparams *hp = &m->hp;
    const moe_desc *md = m->arch->moe;
    const int E = hp->n_expert, D = hp->n_embd, F = hp->n_ff_exp;
    moe_weights *mw = loader_own(L, calloc(1, sizeof *mw));
    const wick_tensor **ptrs = loader_own(L, calloc((size_t)3 * E, sizeof *ptrs));
    wick_tensor *views = loader_own(L, calloc((size_t)3 * E, sizeof *views));
    if (!mw || !ptrs || !views) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
    mw->n_expert = E;
    mw->n_used = hp->n_expert_used;
    mw->n_ff = F;
    mw->gating = md->gating;
    mw->norm_topk = hp->moe_norm_topk >= 0 ? hp->moe_norm_topk != 0 : md->norm_topk_gguf;
    mw->views = views;
    for (int i = 0; i < 3; i++) mw->experts[i] = ptrs + (size_t)i * E;
    if (!(mw->router = bind_matrix(L, T_FFN_GATE_INP, il, 0, D, E))) return -1;

    /* experts: GGUF stacks, else one matrix per expert */
    static const tensor_role STACKS[3] = {T_FFN_GATE_EXPS, T_FFN_UP_EXPS, T_FFN_DOWN_EXPS};
    static const tensor_role SINGLE[3] = {T_FFN_GATE_EXP, T_FFN_UP_EXP, T_FFN_DOWN_EXP};
    const int64_t cols[3] = {D, D, F}, rows[3] = {F, F, D};
    char name[160];
    bool stacked = m->format == FORMAT_GGUF &&
                   find_role(L, T_FFN_GATE_EXPS, il, 0, false, name, sizeof name) != NULL;
    for (int i = 0; i < 3; i++) {
        if (stacked) {
            const wick_tensor *t = find_role(L, STACKS[i], il, 0, true, name, sizeof name);
            if (!t || !(t = check_matrix(L, name, t, cols[i], rows[i], E)) || !(mw->stack[i] = flatten(L, t)))
                return -1;
        } else {
            for (int e = 0; e < E; e++)
                if (!(mw->experts[i][e] = bind_matrix(L, SINGLE[i], il, e, cols[i], rows[i]))) return -1;
        }
    }
    if (md->shared_expert) {
        const int Fs = hp->n_ff_shexp;
        if (!(mw->shared[MOE_GATE] = bind_matrix(L, T_FFN_GATE_SHEXP, il, 0, D, Fs)) ||
            !(mw->shared[MOE_UP] = bind_matrix(L, T_FFN_UP_SHEXP, il, 0, D, Fs)) ||
            !(mw->shared[MOE_DOWN] = bind_matrix(L, T_FFN_DOWN_SHEXP, il, 0, Fs, D)) ||
            !(mw->shared_gate = bind_shared_gate(L, il, D)))
            return -1;
        mw->n_ff_shared = Fs;
    }
    moe_finish_views(mw);
    w->moe = mw;
    return 0;
}

int moe_map_matrices(moe_weights *mw, bool with_router, moe_map_fn fn, void *ctx) {
    if (with_router && !(mw->router = fn(ctx, mw->router, mw->router->ne[1]))) return -1;
    for (int i = 0; i < 3; i++) {
        if (mw->stack[i]) {
            if (!(mw->stack[i] = fn(ctx, mw->stack[i], mw->stack[i]->ne[1] / mw->n_expert))) return -1;
        } else {
            for (int e = 0; e < mw->n_expert; e++)
                if (!(mw->experts[i][e] = fn(ctx, mw->experts[i][e], mw->experts[i][e]->ne[1]))) return -1;
        }
        if (mw->shared[i] && !(mw->shared[i] = fn(ctx, mw->shared[i], mw->shared[i]->ne[1]))) return -1;
    }
    moe_finish_views(mw);
    return 0;
}

void moe_finish_views(moe_weights *mw) {
    const int E = mw->n_expert;
    for (int i = 0; i < 3; i++) {
        const wick_tensor *s = mw->stack[i];
        if (!s) continue;
        const size_t bytes = s->nbytes / (size_t)E;
        for (int e = 0; e < E; e++) {
            wick_tensor *v = &mw->views[(size_t)i * E + e];
            *v = *s;
            v->ne[1] = s->ne[1] / E;
            v->data = (const char *)s->data + (size_t)e * bytes;
            v->nbytes = bytes;
            mw->experts[i][e] = v;
        }
    }
}
