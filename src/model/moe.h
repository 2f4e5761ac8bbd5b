/* moe.h — mixture-of-experts feed-forward layers (qwen2moe, qwen3moe,
 * Mixtral): their weights (bound by moe_load.c), the per-context scratch,
 * and the layer's forward step (moe.c).
 *
 * A MoE layer replaces the SwiGLU feed-forward: a router matrix gives each
 * token one logit per expert; the arch's gating (arch.h, moe_gating) turns
 * them into k experts and their weights; each chosen expert is a SwiGLU
 * (gate, up, down) of its own, and the token's output is the weighted sum of
 * its experts' outputs in rank order, plus (qwen2moe) a shared SwiGLU expert
 * scaled by sigmoid(shared_gate · x). */
#ifndef WICK_MODEL_MOE_H
#define WICK_MODEL_MOE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "core/threadpool.h"
#include "kernels/matmul.h"
#include "model/arch.h"
#include "wick.h"

enum { MOE_GATE = 0, MOE_UP = 1, MOE_DOWN = 2 };

typedef struct moe_weights {
    int n_expert, n_used, n_ff; /* experts, experts per token (k), an expert's hidden width */
    moe_gating gating;
    bool norm_topk;              /* MOE_SOFTMAX_TOPK: renormalize the k weights */
    const wick_tensor *router;   /* [n_expert rows, n_embd] */
    /* GGUF's 3-D stacks as 2-D matrices of n_expert × rows rows (NULL when
     * the file stores one matrix per expert); converted and repacked whole. */
    const wick_tensor *stack[3];
    const wick_tensor **experts[3]; /* [MOE_GATE/UP/DOWN][n_expert]: each expert's matrix (views into a stack) */
    wick_tensor *views;              /* [3 * n_expert] the stack slices behind experts[] */
    const wick_tensor *shared[3];    /* shared expert's gate, up, down; NULL = none */
    const float *shared_gate;        /* [n_embd] */
    int n_ff_shared;
} moe_weights;

/* Weight bytes one decode token reads in this layer: the router, k experts
 * (every expert has the same shapes and types) and the shared expert. */
size_t moe_decode_bytes(const moe_weights *mw);
/* Weight bytes of the layer's experts, router and shared expert, all of them. */
size_t moe_all_bytes(const moe_weights *mw);

/* Per-context buffers for the MoE layers, allocated once. A forward pass
 * routes its tokens in slices of at most max_tokens. */
typedef struct moe_scratch {
    const kernel_tuning *kt; /* the model's */
    int max_tokens, n_expert, k, n_embd, n_ff, n_ff_shared;
    float *logits;            /* [S][n_expert] router logits */
    int32_t *ids;             /* [S][k] chosen experts, best first */
    float *wts;               /* [S][k] their weights */
    float *shared_w;          /* [S] sigmoid(shared_gate · x) */
    int32_t *start, *fill;    /* [n_expert + 1], [n_expert]: each expert's rows in the sorted order */
    int32_t *row_of;          /* [S * k] sorted row of (token t, rank r) */
    int32_t *tok_of;          /* [S * k] token of sorted row */
    float *xg;                /* [S * k][n_embd] inputs of groups of two or more tokens */
    float *hg, *hg2;          /* [S * k][n_ff] gate / up outputs */
    float *yo;                /* [S * k][n_embd] expert outputs */
    float *hs, *hs2, *ys;     /* shared expert: [S][n_ff_shared] ×2, [S][n_embd] */
    mm_task *tasks;           /* [2 * n_expert + 2] */
    void *mm;                 /* matmul scratch */
    size_t mm_bytes;
    void *block;              /* the single allocation behind the above */
} moe_scratch;

/* NULL scratch (and 0) when the model has no MoE layer. */
int moe_scratch_init(moe_scratch **out, const struct wick_model *m, int max_tokens, wick_error *err);
void moe_scratch_free(moe_scratch *ms);

/* out[t] = the layer's output for the T rows of x (n_embd floats each);
 * out may be x itself. */
void moe_forward(const moe_weights *mw, moe_scratch *ms, wick_pool *pool, const float *x, float *out, int T);

/* Router output for one token: its k experts (best first, ties to the lower
 * index) and their weights under the gating. logits has n_expert values. */
void moe_route(moe_gating gating, bool norm_topk, const float *logits, int n_expert, int k, int32_t *ids,
               float *wts);

#endif
